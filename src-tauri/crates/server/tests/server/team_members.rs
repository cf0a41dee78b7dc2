//! Members of a team's endpoint: two `keypool-server` replicas over a redis-server of the test's
//! own count each member's limits once for the team (never once per replica), carry a revoke from
//! one replica's config to the other within a second, and keep serving on shares of each limit
//! while Redis is away, its spend reaching Redis again when it is back.

use std::time::{Duration, Instant};

use keypool_team::test_redis::TestRedis;
use keypool_team::TeamSecret;

use crate::members::member_entry;
use crate::support::*;

struct Pair {
    redis: TestRedis,
    fake: FakeProvider,
    a: Server,
    b: Server,
    tokens: Vec<String>,
    dir: tempfile::TempDir,
}

/// Two replicas of one team, each with the same config: the fake provider's key and a member
/// per `(name, limits)`, whose tokens are returned in order.
async fn pair(members: &[(&str, &str)]) -> Pair {
    let redis = TestRedis::start();
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut text = config(&fake.url(), &["x"]);
    let mut tokens = Vec::new();
    for (name, limits) in members {
        let (entry, token) = member_entry(dir.path(), name, limits);
        text.push_str(&entry);
        tokens.push(token);
    }
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, TeamSecret::generate().to_hex()).unwrap();
    let team = ["--redis", &redis.url(), "--team", "blue", "--team-secret-file", secret.to_str().unwrap()];
    let a = Server::start(&dir.path().join("a"), &text, &team);
    let b = Server::start(&dir.path().join("b"), &text, &team);
    let pair = Pair { redis, fake, a, b, tokens, dir };
    for server in [&pair.a, &pair.b] {
        team_becomes(server, "connected").await;
    }
    // Each has seen the other: a share of a limit while Redis is away is counted on two.
    until("each replica has seen the other's heartbeat", || {
        [&pair.a, &pair.b].iter().all(|s| s.log().contains("team: connected"))
    })
    .await;
    for server in [&pair.a, &pair.b] {
        members_seen_become(server, 2).await;
    }
    pair
}

/// Waits until `server` counts `count` team members seen (its `keypool_team_members`, the count
/// a limit is shared by while Redis is away).
async fn members_seen_become(server: &Server, count: u64) {
    metric_reaches(server, "keypool_team_members", count as f64, "team members seen").await;
}

async fn team_becomes(server: &Server, state: &str) {
    for _ in 0..1500 {
        if server.healthy().await["team"] == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the team never became {state}:\n{}", server.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_members_rate_budget_and_in_flight_are_the_teams_not_each_replicas() {
    let p = pair(&[
        ("bob", "requests_per_minute = 2"),
        ("carol", "budget_tokens = 20\nbudget_period = \"day\""),
        ("dave", "max_in_flight = 1"),
    ])
    .await;
    let (bob, carol, dave) = (&p.tokens[0], &p.tokens[1], &p.tokens[2]);

    assert_eq!(p.a.ask_as(bob, "bob-1").await.0, 200, "bob's first, through A");
    assert_eq!(p.a.ask_as(bob, "bob-2").await.0, 200, "bob's second, through A");
    let (status, headers, body) = p.b.ask_as(bob, "bob-3").await;
    assert_eq!(status, 429, "bob's third in the minute is refused on B, though B never served him: {body}");
    assert!(headers.contains_key("retry-after") && body.contains("2 requests per minute"), "{body}");

    assert_eq!(p.a.ask_as(carol, "carol-1").await.0, 200);
    assert_eq!(p.a.ask_as(carol, "carol-2").await.0, 200, "under 20 tokens still");
    let (status, headers, body) = p.b.ask_as(carol, "carol-3").await;
    assert_eq!(status, 403, "carol's budget, spent through A, is spent on B: {body}");
    assert_eq!(headers["x-keypool-limit"], "budget");

    p.fake.script(
        &key("x"),
        [Reply::Hold { chunks_before: vec![], gate: "dave".into(), chunks_after: vec!["end".into()] }],
    );
    let upstream_before = p.fake.keys_used().len();
    let held = {
        let (url, token) = (p.a.url("/v1/chat/completions"), dave.clone());
        tokio::spawn(async move {
            let body = json!({ "model": MODEL, "stream": true, "messages": [{ "role": "user", "content": "slow" }] });
            let response = client().post(url).bearer_auth(token).json(&body).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        })
    };
    until("dave's request is upstream", || p.fake.keys_used().len() > upstream_before).await;
    let (status, _, body) = p.b.ask_as(dave, "dave-2").await;
    assert_eq!(status, 429, "dave may have one request in flight in the whole team: {body}");
    assert!(body.contains("1 requests in flight"), "{body}");
    p.fake.release("dave");
    assert_eq!(held.await.unwrap().0, 200, "the held request ends");
    let mut admitted = false;
    for turn in 0..100 {
        if p.b.ask_as(dave, &format!("dave-after-{turn}")).await.0 == 200 {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(admitted, "once it ended, dave is served on B");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoke_through_one_replicas_config_reaches_the_other_within_a_second() {
    let p = pair(&[("erin", "")]).await;
    let erin = &p.tokens[0];
    assert_eq!(p.b.ask_as(erin, "erin-1").await.0, 200, "erin is served on B");
    let config = std::fs::read_to_string(&p.a.config).unwrap();
    let revoked = config.replace(
        &format!("name = \"erin\"\ntoken_file = \"{}\"\n", p.dir.path().join("erin.token").display()),
        &format!("name = \"erin\"\ntoken_file = \"{}\"\nenabled = false\n", p.dir.path().join("erin.token").display()),
    );
    assert_ne!(config, revoked, "the test turns erin off in A's config");
    p.a.rewrite(&revoked);
    p.a.signal("HUP");
    p.a.logged("SIGHUP: members applied").await;
    let applied = Instant::now();
    let mut took = None;
    for turn in 0..300 {
        if p.b.ask_as(erin, &format!("erin-{turn}")).await.0 == 403 {
            took = Some(applied.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let took = took.unwrap_or_else(|| panic!("B never refused erin:\n{}", p.b.log()));
    assert!(took < Duration::from_secs(1), "B refuses erin within a second of A's reload: {took:?}");
    eprintln!("revoke through A's config refused on B after {took:?}");

    // B's own config still says erin is on; re-reading it changes nothing it had not changed.
    p.b.signal("HUP");
    p.b.logged("SIGHUP: members applied").await;
    // Two reads of the team's definitions on each replica since: what B wrote, were it wrong, has
    // reached both.
    for server in [&p.a, &p.b] {
        let reads =
            metric(server, "keypool_team_definition_reads_total").await.expect("a team replica counts its reads");
        metric_reaches(server, "keypool_team_definition_reads_total", reads + 2.0, "reads of the definitions").await;
    }
    let (status, _, body) = p.b.ask_as(erin, "erin-after").await;
    assert_eq!(status, 403, "an unchanged config does not overrule the newer revoke: {body}");
    assert_eq!(p.a.ask_as(erin, "erin-a").await.0, 403, "nor on A");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_redis_away_each_replica_serves_a_share_and_its_spend_reaches_redis_again() {
    let mut p = pair(&[("bob", "requests_per_minute = 2"), ("carol", "budget_tokens = 12")]).await;
    let (bob, carol) = (p.tokens[0].clone(), p.tokens[1].clone());
    p.redis.kill();
    for server in [&p.a, &p.b] {
        team_becomes(server, "disconnected").await;
    }
    let ready = client().get(p.a.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status().as_u16(), 503, "a replica whose team is away is not ready (it still serves)");
    let why: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(why["why"], "the team is disconnected");
    for (name, server) in [("A", &p.a), ("B", &p.b)] {
        assert_eq!(server.ask_as(&bob, &format!("bob-{name}-1")).await.0, 200, "{name} serves bob alone");
        let (status, _, body) = server.ask_as(&bob, &format!("bob-{name}-2")).await;
        assert_eq!(status, 429, "{name} allows bob half of his 2 a minute while it cannot count with B: {body}");
    }
    assert_eq!(p.a.ask_as(&carol, "carol-a-1").await.0, 200, "carol's first, through A, while Redis is away");
    let (status, _, body) = p.a.ask_as(&carol, "carol-a-2").await;
    assert_eq!(status, 403, "A counts B as having spent as much: 2 × 13 of 12 tokens: {body}");

    p.redis.restart();
    for server in [&p.a, &p.b] {
        team_becomes(server, "connected").await;
    }
    assert_eq!(client().get(p.a.url("/readyz")).send().await.unwrap().status().as_u16(), 200, "ready again");
    // The new Redis starts empty: A tells it its share of carol's budget again.
    let mut refused = false;
    for turn in 0..200 {
        let (status, _, _) = p.b.ask_as(&carol, &format!("carol-b-{turn}")).await;
        if status == 403 {
            refused = true;
            break;
        }
        assert_eq!(turn, 0, "B may serve carol once before A's share arrives (B's own spend then counts too)");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "A's spend while Redis was away reached it: B refuses carol\n{}", p.b.log());
}
