//! Two servers of one team over a redis-server of the test's own: what one learns the other
//! knows, and neither depends on Redis to serve.

use std::sync::Arc;

use keypool_fake_provider::RateLimit;
use keypool_team::test_redis::TestRedis;
use keypool_team::TeamSecret;

use crate::support::*;

struct Pair {
    redis: TestRedis,
    fake: FakeProvider,
    a: Server,
    b: Server,
    _dir: tempfile::TempDir,
}

async fn pair(labels: &[&str]) -> Pair {
    let redis = TestRedis::start();
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, TeamSecret::generate().to_hex()).unwrap();
    let team = ["--redis", &redis.url(), "--team", "blue", "--team-secret-file", secret.to_str().unwrap()];
    let a = Server::start(&dir.path().join("a"), &config(&fake.url(), labels), &team);
    let b = Server::start(&dir.path().join("b"), &config(&fake.url(), labels), &team);
    for server in [&a, &b] {
        team_becomes(server, "connected", "each server joins the team").await;
    }
    Pair { redis, fake, a, b, _dir: dir }
}

/// Waits (up to 10 s) until `server`'s `/healthz` gives its team as `state`; `why` says what that
/// shows when it does not.
async fn team_becomes(server: &Server, state: &str, why: &str) {
    for _ in 0..1000 {
        if server.healthy().await["team"] == state {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.healthy().await["team"], state, "{why}:\n{}", server.log());
}

#[tokio::test]
async fn a_429_seen_by_one_server_makes_the_other_skip_the_key() {
    let p = pair(&["x", "y"]).await;
    assert_eq!(p.b.ask("warm").await.0, 200, "B serves");
    a_429_on_a_makes_b_skip_the_key(&p).await;
}

/// A's request on x gets a 429; B's next requests all go to y.
async fn a_429_on_a_makes_b_skip_the_key(p: &Pair) {
    p.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "120")])]);
    let with_x = |p: &Pair| p.fake.keys_used().iter().filter(|k| **k == key("x")).count();
    let x_before = with_x(p);
    let mut turn = 0;
    while with_x(p) == x_before {
        assert!(turn < 4, "A's rotation reaches x within a few requests");
        assert_eq!(p.a.ask(&format!("a-{turn}")).await.0, 200, "A fails over and answers");
        turn += 1;
    }
    // B applies A's rest of x (the group hash's `rest` field; a key without a quota group is its
    // own group); the requests after it must not touch x.
    until("B applies the rest A published", || {
        p.b.log().lines().any(|l| {
            l.contains("applied another member's change") && l.contains("redis_key=g:") && l.contains("\"rest\"")
        })
    })
    .await;
    let before = p.fake.keys_used().len();
    for i in 0..4 {
        assert_eq!(p.b.ask(&format!("b-{i}")).await.0, 200, "B serves");
    }
    let b_used = p.fake.keys_used().split_off(before);
    assert!(b_used.iter().all(|k| *k == key("y")), "B skipped the key A was refused on: {b_used:?}");
}

#[tokio::test]
async fn with_redis_gone_both_serve_and_say_disconnected_then_join_again() {
    let mut p = pair(&["x", "y"]).await;
    p.redis.kill();
    for server in [&p.a, &p.b] {
        for i in 0..3 {
            assert_eq!(server.ask(&format!("alone-{i}")).await.0, 200, "no request fails because Redis is gone");
        }
    }
    for server in [&p.a, &p.b] {
        team_becomes(server, "disconnected", "/healthz says so").await;
    }
    p.redis.restart();
    for server in [&p.a, &p.b] {
        team_becomes(server, "connected", "and joins again once Redis is back").await;
    }
}

/// Asks `server` without pause, a conversation per request, until `after` requests have been
/// answered since `killed` was set; every status and body.
async fn ask_on(
    server: &Server,
    lane: &str,
    killed: &std::sync::atomic::AtomicBool,
    after: usize,
) -> Vec<(u16, String)> {
    let mut answers = Vec::new();
    let mut since_kill = 0;
    while since_kill < after {
        let was_killed = killed.load(std::sync::atomic::Ordering::SeqCst);
        answers.push(server.ask(&format!("{lane}-{}", answers.len())).await);
        if was_killed {
            since_kill += 1;
        }
        tokio::task::yield_now().await;
    }
    answers
}

#[tokio::test]
async fn redis_killed_mid_burst_fails_no_request_and_the_servers_share_state_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut p = pair(&["x", "y"]).await;
    let killed = AtomicBool::new(false);
    let (redis, a, b, fake) = (&mut p.redis, &p.a, &p.b, &p.fake);
    let kill_mid_burst = async {
        until("the burst is under way", || fake.seen().len() >= 12).await;
        redis.kill();
        killed.store(true, Ordering::SeqCst);
    };
    let (_, on_a, on_b) = tokio::join!(kill_mid_burst, ask_on(a, "a", &killed, 12), ask_on(b, "b", &killed, 12));
    for (status, body) in on_a.iter().chain(&on_b) {
        assert_eq!(*status, 200, "no request fails because Redis went away in the middle of the burst: {body}");
    }
    assert!(on_a.len() + on_b.len() >= 12 + 24, "the burst went on before and after the kill");

    p.redis.restart();
    both_connected(&p).await;
    // The new Redis starts empty: what A learns now must reach B through it.
    a_429_on_a_makes_b_skip_the_key(&p).await;
}

#[tokio::test]
async fn a_key_rejected_on_one_server_is_disabled_on_the_other() {
    let p = pair(&["x", "y"]).await;
    assert_eq!(p.b.ask("warm").await.0, 200, "B serves");
    // Revoked: completions and the model list (A's verification) are refused.
    p.fake.always(&key("x"), Reply::status(401));
    let with_x = |p: &Pair| p.fake.keys_used().iter().filter(|k| **k == key("x")).count();
    let mut turn = 0;
    while !p.a.log().contains("API key disabled after the provider rejected it") {
        assert!(turn < 4, "A's rotation reaches x and disables it within a few requests:\n{}", p.a.log());
        assert_eq!(p.a.ask(&format!("a-{turn}")).await.0, 200, "A fails over and answers");
        turn += 1;
    }
    p.b.logged("another member's provider rejected the key; disabling it").await;
    let x_before = with_x(&p);
    for i in 0..4 {
        assert_eq!(p.b.ask(&format!("b-{i}")).await.0, 200, "B serves on y");
    }
    assert_eq!(with_x(&p), x_before, "B never tried the key A found revoked");
}

#[tokio::test]
async fn a_team_that_cannot_be_joined_stops_the_start() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, TeamSecret::generate().to_hex()).unwrap();
    let team =
        ["--redis", "redis://127.0.0.1:1", "--team", "no spaces{}", "--team-secret-file", secret.to_str().unwrap()];
    let server = Server::start(dir.path(), &config(&fake.url(), &["x"]), &team);
    assert_eq!(server.exited().await, Some(1), "a bad team name stops the start rather than serving alone");
    assert!(server.log().contains("the team cannot be joined"), "and says why:\n{}", server.log());
}

/// Waits until `server` applied a change another member published on a hash of `family`
/// (`s:` a scope, `g:` a group, `b:` a binding) that names `field`.
async fn applied(server: &Server, family: &str, field: &str) {
    let (family, field) = (format!("redis_key={family}"), format!("\"{field}\""));
    until(&format!("the server applies another member's {field} on {family}"), || {
        server
            .log()
            .lines()
            .any(|l| l.contains("applied another member's change") && l.contains(&family) && l.contains(&field))
    })
    .await;
}

/// Waits until both servers say they are with the team again.
async fn both_connected(p: &Pair) {
    for server in [&p.a, &p.b] {
        team_becomes(server, "connected", "the server is with the team").await;
    }
}

#[tokio::test]
async fn a_burst_through_both_servers_at_twice_the_window_is_never_refused() {
    let p = Arc::new(pair(&["x"]).await);
    assert_eq!(p.b.ask("b-warm").await.0, 200, "B serves (and knows its key)");
    p.fake.limit(&key("x"), RateLimit { requests: 4, window_ms: 1_000 });
    assert_eq!(p.a.ask("announce").await.0, 200, "A's answer announces the window");
    applied(&p.b, "s:", "rq").await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let p = p.clone();
            tokio::spawn(async move {
                let server = if i % 2 == 0 { &p.a } else { &p.b };
                server.ask(&format!("burst-{i}")).await
            })
        })
        .collect();
    for task in tasks {
        let (status, body) = task.await.expect("the request's task ends");
        assert_eq!(status, 200, "every request of the burst is answered: {body}");
    }
    assert_eq!(
        p.fake.refused(),
        0,
        "and the provider refused none: each server counted the other's requests in flight against the window"
    );
}

/// The key that served the last request the fake saw.
fn last_key(p: &Pair) -> String {
    p.fake.keys_used().last().cloned().expect("the fake saw a request")
}

#[tokio::test]
async fn one_conversation_alternating_between_the_servers_stays_on_one_key() {
    let p = pair(&["x", "y", "z"]).await;
    // B's rotation moves on, so a conversation new to B would start on another key than on A.
    assert_eq!(p.b.ask("another").await.0, 200, "B serves another conversation first");
    let mut served = Vec::new();
    for turn in 0..6 {
        let server = if turn % 2 == 0 { &p.a } else { &p.b };
        assert_eq!(server.ask("the-conversation").await.0, 200, "turn {turn} is answered");
        served.push(last_key(&p));
    }
    assert!(served.iter().all(|k| *k == served[0]), "every turn went to one key, whichever server: {served:?}");
}

#[tokio::test]
async fn garbage_over_every_team_key_leaves_both_servers_serving() {
    let p = pair(&["x", "y"]).await;
    assert_eq!(p.b.ask("warm-up").await.0, 200, "B serves first");
    p.fake.limit(&key("y"), RateLimit { requests: 50, window_ms: 60_000 });
    p.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "1")])]);
    for i in 0..4 {
        let server = if i % 2 == 0 { &p.a } else { &p.b };
        assert_eq!(server.ask(&format!("before-{i}")).await.0, 200, "the team works before the garbage");
    }
    until("the team's state is in Redis", || {
        let keys = p.redis.team_keys();
        [":g:", ":s:", ":b:", ":members"].iter().all(|family| keys.iter().any(|k| k.contains(family)))
    })
    .await;
    let joins = |s: &Server| s.log().matches("team: connected").count();
    let before = (joins(&p.a), joins(&p.b));
    p.redis.garble("blue");
    until("both servers reconnected and read the garbage back", || joins(&p.a) > before.0 && joins(&p.b) > before.1)
        .await;
    both_connected(&p).await;
    let used_before = p.fake.keys_used().len();
    for i in 0..8 {
        let server = if i % 2 == 0 { &p.a } else { &p.b };
        let (status, body) = server.ask(&format!("after-{i}")).await;
        assert_eq!(status, 200, "both servers serve through the garbage: {body}");
    }
    // Among the garbage: a forged rejection and a forged rest years long, which neither server
    // believes (x may still rest after its own 429, for its second).
    let after = p.fake.keys_used().split_off(used_before);
    assert!(after.contains(&key("y")), "no forged value keeps y out: {after:?}");
    for server in [&p.a, &p.b] {
        assert!(server.running(), "the server is still running:\n{}", server.log());
    }
}

#[tokio::test]
async fn a_dump_of_every_redis_value_holds_no_run_of_any_key() {
    let labels = ["x", "y", "z", "w"];
    let p = pair(&labels).await;
    assert_eq!(p.b.ask("warm-up").await.0, 200, "B serves first");
    p.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
    p.fake.always(&key("y"), Reply::status(401));
    p.fake.script(&key("z"), [Reply::QuotaExceeded]);
    p.fake.limit(&key("w"), RateLimit { requests: 50, window_ms: 60_000 });
    for i in 0..8 {
        let server = if i % 2 == 0 { &p.a } else { &p.b };
        assert_eq!(server.ask(&format!("turn-{i}")).await.0, 200, "every request is answered");
    }
    // What each kind of lesson writes has reached the other server, so it is in Redis.
    for (family, field) in [("g:", "rest"), ("k:", "auth"), ("k:", "credit"), ("s:", "rq")] {
        let seen = |s: &Server| {
            s.log().lines().any(|l| {
                l.contains("applied another member's change")
                    && l.contains(&format!("redis_key={family}"))
                    && l.contains(&format!("\"{field}\""))
            })
        };
        until(&format!("a server applied the other's {field}"), || seen(&p.a) || seen(&p.b)).await;
    }
    let dump = p.redis.dump();
    let text = String::from_utf8_lossy(&dump);
    assert!(text.contains("{keypool:blue}:members"), "the dump holds the team's state");
    for label in labels {
        let value = key(label);
        for start in 0..=value.len() - 12 {
            let run = &value[start..start + 12];
            assert!(!text.contains(run), "a 12-character run of key {label} ({run:?}) reached Redis");
        }
    }
}
