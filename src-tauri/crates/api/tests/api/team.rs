//! Settings → Team below the window: the team joined and left while the app runs, against a real
//! `redis-server` of each test's own (`TestRedis`), with the keychain in memory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use keypool_fake_provider::{FakeProvider, Reply};
use keypool_keychain::{Keychain, MemoryKeychain};
use keypool_team::test_redis::TestRedis;
use serde_json::{json, Value};

use crate::chat::{fake_provider, new_chat};
use crate::support::Harness;

const SECRET: &str = "4b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c";
const OTHER_SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// How long a member may take to reach the team's Redis (or hear of a change) in these tests.
const BOUND: Duration = Duration::from_secs(20);

/// Polls `done` until it holds (waiting for an event: a connect, a message on the channel),
/// bounded by [`BOUND`].
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {BOUND:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn status(h: &Harness) -> Value {
    h.ok("team:getStatus", json!({}))
}

async fn connect(h: &Harness, args: Value) -> Result<Value, keypool_api::ipc::IpcError> {
    h.call_async("team:connect", args).await
}

fn keychained() -> (Harness, Arc<MemoryKeychain>) {
    let keychain = MemoryKeychain::new();
    (Harness::with_keychain(keychain.clone() as Arc<dyn Keychain>), keychain)
}

fn key_state(h: &Harness, provider: &str, label: &str) -> String {
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    let id = keys.as_array().unwrap().iter().find(|k| k["label"] == label).unwrap()["id"].clone();
    let pool = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let key = pool["keys"].as_array().unwrap().iter().find(|k| k["id"] == id).unwrap().clone();
    key["state"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_joined_at_runtime_shares_a_cooldown_and_leaving_it_stops_the_member() {
    let redis = TestRedis::start();
    let fake = FakeProvider::start().await;
    let (a, _) = keychained();
    let (b, _) = keychained();
    let provider_a = fake_provider(&a, &fake, "openai", &["x", "y"]);
    let provider_b = fake_provider(&b, &fake, "openai", &["x", "y"]);
    assert_eq!(status(&a)["state"], "off", "no team before Settings → Team joins one");
    assert!(a.ctx.completions().unwrap().team().is_none(), "the completion path has no team yet");

    for h in [&a, &b] {
        let joined = connect(h, json!({ "redisUrl": redis.url(), "team": "crew", "secret": SECRET })).await.unwrap();
        assert!(
            ["connecting", "connected"].contains(&joined["state"].as_str().unwrap()),
            "connect answers the member starting: {joined}"
        );
    }
    assert!(a.ctx.completions().unwrap().team().is_some(), "the completion path sees the team joined");
    until("both members connected", || [&a, &b].iter().all(|h| status(h)["state"] == "connected")).await;
    until("A sees two members", || status(&a)["members"] == 2).await;

    // x refuses A's next request: A fails over to y, and B learns that x rests.
    fake.script("key-x", [Reply::status_with(429, &[("retry-after", "30")])]);
    fake.always("key-y", Reply::text(&["from y"]));
    let chat = new_chat(&a, &provider_a);
    let mut x_first = false;
    // A's rotation may start on y: send until x has been refused once.
    for i in 0..4 {
        a.send(&chat, Some(&format!("hello {i}")), |_| {}).await.unwrap();
        if key_state(&a, &provider_a, "x") == "cooling" {
            x_first = true;
            break;
        }
    }
    assert!(x_first, "A's rotation reached x, which the provider refused with a 429");
    until("B rests x as A does", || key_state(&b, &provider_b, "x") == "cooling").await;
    assert!(status(&b)["lastChangeAt"].is_i64(), "B says when it last heard of a change: {}", status(&b));

    // B leaves: its completion path no longer has a team, and A stops counting it.
    let left = b.call_async("team:disconnect", json!({})).await.unwrap();
    assert_eq!(left["state"], "off", "disconnect leaves the team: {left}");
    assert!(b.ctx.completions().unwrap().team().is_none(), "B's completion path has no team after leaving");
    assert_eq!(left["team"], "crew", "the team's name is kept to connect again");
    // Members count as seen for a minute; past it only those still beating count.
    a.clock.advance(Duration::from_secs(61));
    b.clock.advance(Duration::from_secs(61));
    until("A counts itself alone once B stopped beating", || status(&a)["members"] == 1).await;
    assert_eq!(status(&a)["state"], "connected", "A stays with the team");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_secret_and_the_urls_password_live_in_the_keychain_never_in_the_database_or_an_answer() {
    let redis = TestRedis::start();
    let password = "pw-Redis-PASSWORD-0123456789";
    let reply = redis.command(&["CONFIG", "SET", "requirepass", password]);
    assert!(reply.starts_with(b"+OK"), "the test Redis now wants a password: {}", String::from_utf8_lossy(&reply));
    let (h, keychain) = keychained();
    let url = format!("redis://:{password}@127.0.0.1:{}", redis.port());
    connect(&h, json!({ "redisUrl": url, "team": "crew", "secret": SECRET })).await.unwrap();
    until("connected with the password", || status(&h)["state"] == "connected").await;

    assert_eq!(keychain.peek("team:secret").as_deref(), Some(SECRET), "the secret is in the keychain");
    assert_eq!(keychain.peek("team:redisPassword").as_deref(), Some(password), "so is the URL's password");
    let shown = status(&h);
    assert_eq!(shown["redisUrl"], format!("redis://127.0.0.1:{}", redis.port()), "the URL is shown without it");
    assert_eq!((shown["hasPassword"].clone(), shown["secret"].clone()), (json!(true), json!("keychain")));
    let (db, wal) = h.file_bytes();
    for (name, bytes) in [("the database", &db), ("its WAL", &wal)] {
        for secret in [SECRET, password] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "{name} holds a team secret");
        }
    }
    // A wrong secret is refused before anything is stored: its error holds neither secret.
    let error = connect(&h, json!({ "redisUrl": url, "team": "crew", "secret": "zz" })).await.unwrap_err();
    let transcript = h.transcript_text();
    for secret in [SECRET, password] {
        assert!(!transcript.contains(secret), "no answer or error holds a team secret: {error:?}");
    }
    // Reconnecting with the URL as shown keeps the password from the keychain.
    h.call_async("team:disconnect", json!({})).await.unwrap();
    connect(&h, json!({ "redisUrl": shown["redisUrl"], "team": "crew" })).await.unwrap();
    until("connected again with the kept secret and password", || status(&h)["state"] == "connected").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_that_was_on_is_joined_again_at_start_and_one_left_is_not() {
    let redis = TestRedis::start();
    let (h, _) = keychained();
    connect(&h, json!({ "redisUrl": redis.url(), "team": "crew", "secret": SECRET })).await.unwrap();
    until("connected", || status(&h)["state"] == "connected").await;

    let h = h.reopen();
    assert_eq!(status(&h)["state"], "off", "a new start has not joined yet");
    let started = h.ctx.team().unwrap().start_if_enabled().await.unwrap();
    assert_ne!(started.phase, keypool_api::service::TeamPhase::Off, "the start joins the team that was on");
    until("connected again after the restart", || status(&h)["state"] == "connected").await;
    assert!(h.ctx.completions().unwrap().team().is_some(), "the completion path has the team again");

    h.call_async("team:disconnect", json!({})).await.unwrap();
    let h = h.reopen();
    h.ctx.team().unwrap().start_if_enabled().await.unwrap();
    assert_eq!(status(&h)["state"], "off", "a team left stays left after a restart");
    assert!(h.ctx.completions().unwrap().team().is_none(), "and the completion path has none");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_a_code_and_changes_nothing() {
    let redis = TestRedis::start();
    let (h, keychain) = keychained();
    let missing = connect(&h, json!({ "redisUrl": redis.url(), "team": "crew" })).await.unwrap_err();
    assert_eq!(missing.issues.as_ref().unwrap()[0].path, "secret", "no secret kept: one is needed");
    assert_eq!(missing.issues.as_ref().unwrap()[0].code.name(), "required", "{missing:?}");

    connect(&h, json!({ "redisUrl": redis.url(), "team": "crew", "secret": SECRET })).await.unwrap();
    until("connected", || status(&h)["state"] == "connected").await;
    let before = (h.snapshot(), keychain.peek("team:secret"));
    let cases = [
        (
            json!({ "redisUrl": "http://127.0.0.1:6379", "team": "crew", "secret": OTHER_SECRET }),
            "redisUrl",
            "bad_redis_url",
        ),
        (json!({ "redisUrl": "redis://", "team": "crew", "secret": OTHER_SECRET }), "redisUrl", "bad_redis_url"),
        (json!({ "redisUrl": redis.url(), "team": "two words", "secret": OTHER_SECRET }), "team", "bad_team_name"),
        (json!({ "redisUrl": redis.url(), "team": "x".repeat(65), "secret": OTHER_SECRET }), "team", "bad_team_name"),
        (json!({ "redisUrl": redis.url(), "team": "crew", "secret": "abc" }), "secret", "bad_team_secret"),
        (json!({ "redisUrl": redis.url(), "team": "crew", "secret": "g".repeat(64) }), "secret", "bad_team_secret"),
        (json!({ "redisUrl": redis.url(), "team": "crew", "extra": 1 }), "extra", "unknown_field"),
    ];
    for (args, path, code) in cases {
        let error = connect(&h, args.clone()).await.unwrap_err();
        let issue = &error.issues.as_ref().unwrap_or_else(|| panic!("{args}: issues in {error:?}"))[0];
        assert_eq!((issue.path.as_str(), issue.code.name().as_str()), (path, code), "{args} is refused as {code}");
    }
    assert_eq!((h.snapshot(), keychain.peek("team:secret")), before, "no refused connect stored anything");
    let after = status(&h);
    assert_eq!((after["state"].clone(), after["team"].clone()), (json!("connected"), json!("crew")), "still in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_keychain_the_secret_is_held_for_this_run_only() {
    let redis = TestRedis::start();
    let h = Harness::new();
    connect(&h, json!({ "redisUrl": redis.url(), "team": "crew", "secret": SECRET })).await.unwrap();
    until("connected", || status(&h)["state"] == "connected").await;
    assert_eq!(status(&h)["secret"], "memory", "no keychain: the secret is only in memory");
    let (db, wal) = h.file_bytes();
    assert!(![db, wal].iter().any(|b| b.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())), "never in SQLite");

    let h = h.reopen();
    h.ctx.team().unwrap().start_if_enabled().await.unwrap();
    let after = status(&h);
    assert_eq!((after["state"].clone(), after["reason"].clone()), (json!("disconnected"), json!("secretMissing")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_nobody_answers_at_is_connecting_then_unreachable() {
    let mut redis = TestRedis::start();
    let url = redis.url();
    redis.kill();
    let (h, _) = keychained();
    let joined = connect(&h, json!({ "redisUrl": url, "team": "crew", "secret": SECRET })).await.unwrap();
    assert_eq!(joined["state"], "connecting", "just joined: connecting");
    h.clock.advance(keypool_api::service::CONNECTING_GRACE);
    let later = status(&h);
    assert_eq!((later["state"].clone(), later["reason"].clone()), (json!("disconnected"), json!("unreachable")));
}
