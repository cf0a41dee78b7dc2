//! Two servers of one team over a redis-server of the test's own: what one learns the other
//! knows, and neither depends on Redis to serve.

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
        for _ in 0..400 {
            if server.healthy().await["team"] == "connected" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(server.healthy().await["team"], "connected", "each server joins the team:\n{}", server.log());
    }
    Pair { redis, fake, a, b, _dir: dir }
}

#[tokio::test]
async fn a_429_seen_by_one_server_makes_the_other_skip_the_key() {
    let p = pair(&["x", "y"]).await;
    assert_eq!(p.b.ask("warm").await.0, 200, "B serves");
    p.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "120")])]);
    let with_x = |p: &Pair| p.fake.keys_used().iter().filter(|k| **k == key("x")).count();
    let x_before = with_x(&p);
    let mut turn = 0;
    while with_x(&p) == x_before {
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
        for _ in 0..600 {
            if server.healthy().await["team"] == "disconnected" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(server.healthy().await["team"], "disconnected", "/healthz says so");
    }
    p.redis.restart();
    for server in [&p.a, &p.b] {
        for _ in 0..1000 {
            if server.healthy().await["team"] == "connected" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(server.healthy().await["team"], "connected", "and joins again once Redis is back");
    }
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
