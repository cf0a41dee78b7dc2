//! `[alerts]`: a webhook receiver of the test's own sees a key disabled through two replicas of
//! a team once, signed with the secret, with no key in it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{KeyInit, Mac};
use keypool_team::test_redis::TestRedis;
use keypool_team::TeamSecret;

use crate::support::*;

/// What the receiver was sent: each delivery's headers and body.
type Received = Arc<Mutex<Vec<(axum::http::HeaderMap, String)>>>;

/// A webhook receiver on a free loopback port: its URL and what it receives.
async fn receiver() -> (String, Received) {
    let received: Received = Arc::default();
    let kept = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push((headers, body));
                "thanks"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_disabled_through_two_replicas_is_one_signed_alert_without_the_key() {
    let redis = TestRedis::start();
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver().await;
    let hook_secret = dir.path().join("hook.secret");
    std::fs::write(&hook_secret, "the-hook-secret-of-this-test\n").unwrap();
    let alerts = format!("[alerts]\nwebhook_url = \"{url}\"\nwebhook_secret_file = \"{}\"\n", hook_secret.display());
    let text = format!("{}{alerts}", config(&fake.url(), &["x", "y"]));
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, TeamSecret::generate().to_hex()).unwrap();
    let team = ["--redis", &redis.url(), "--team", "blue", "--team-secret-file", secret.to_str().unwrap()];
    let a = Server::start(&dir.path().join("a"), &text, &team);
    let b = Server::start(&dir.path().join("b"), &text, &team);
    for server in [&a, &b] {
        for _ in 0..1500 {
            if server.healthy().await["team"] == "connected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    // x is revoked at the provider: each replica meets the 401 (or hears of the other's) and
    // disables it; both try to tell the webhook.
    fake.always(&key("x"), Reply::InvalidKey);
    for turn in 0..4 {
        assert_eq!(a.ask(&format!("a-{turn}")).await.0, 200, "A fails over to y");
        assert_eq!(b.ask(&format!("b-{turn}")).await.0, 200, "B fails over to y");
    }
    for _ in 0..1000 {
        if !received.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!received.lock().unwrap().is_empty(), "the alert arrives:\nA:\n{}\nB:\n{}", a.log(), b.log());
    // Each replica has dealt with its event (delivered it, or found the other claimed it): no
    // second delivery is on its way.
    for server in [&a, &b] {
        wait_until_handled(server, "key_disabled", 1.0).await;
    }

    let received = received.lock().unwrap().clone();
    let disabled: Vec<&(axum::http::HeaderMap, String)> =
        received.iter().filter(|(headers, _)| headers["x-keypool-event"] == "key_disabled").collect();
    assert_eq!(disabled.len(), 1, "one alert for the team, not one per replica: {received:?}");
    let (headers, body) = disabled[0];
    let event: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!((event["event"].as_str(), event["provider"].as_str()), (Some("key_disabled"), Some("fake")), "{body}");
    assert_eq!((event["key"]["label"].as_str(), event["status"].as_u64()), (Some("x"), Some(401)), "{body}");
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"the-hook-secret-of-this-test").unwrap();
    mac.update(body.as_bytes());
    let expected: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(headers["x-keypool-signature"], format!("sha256={expected}").as_str(), "signed with the secret");
    for (_, body) in &received {
        assert!(!body.contains(&key("x")[..12]) && !body.contains(&key("y")[..12]), "no key in an alert: {body}");
    }
    assert!(
        !received.iter().any(|(headers, _)| headers["x-keypool-event"] == "provider_unusable"),
        "y still serves: the provider is not said to be unusable"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spent_budget_is_told_once_for_its_period() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    let (url, received) = receiver().await;
    let (carol, carol_token) =
        crate::members::member_entry(dir.path(), "carol", "budget_tokens = 10\nbudget_period = \"week\"");
    let text = format!("{}{carol}[alerts]\nwebhook_url = \"{url}\"\n", config(&fake.url(), &["x"]));
    let server = Server::start(dir.path(), &text, &[]);
    server.healthy().await;
    assert_eq!(server.ask_as(&carol_token, "first").await.0, 200, "under the budget: 14 tokens used");
    for turn in 0..3 {
        assert_eq!(server.ask_as(&carol_token, &format!("refused-{turn}")).await.0, 403, "spent");
    }
    // Each refusal told the alerts; all three dealt with, one delivered.
    wait_until_handled(&server, "member_budget_spent", 3.0).await;
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 1, "three refusals, one alert: {received:?}");
    let (headers, body) = &received[0];
    assert!(!headers.contains_key("x-keypool-signature"), "no secret, no signature");
    let event: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(event["event"], "member_budget_spent", "{body}");
    assert_eq!((event["member"].as_str(), event["used"].as_f64()), (Some("carol"), Some(14.0)), "{body}");
    assert_eq!(event["budget"], json!({ "tokens": 10.0, "period": event["budget"]["period"] }), "{body}");
    assert!(event["budget"]["period"].as_str().unwrap().starts_with("week:"), "{body}");
    assert!(!body.contains(&carol_token[10..30]), "no token in an alert");
}

/// Waits until `server` has dealt with `count` events of `kind` (delivered or claimed).
async fn wait_until_handled(server: &Server, kind: &str, count: f64) {
    let of = |outcome: &str| format!("keypool_alerts_total{{event=\"{kind}\",outcome=\"{outcome}\"}}");
    for _ in 0..1500 {
        let delivered = metric(server, &of("delivered")).await.unwrap_or(0.0);
        let claimed = metric(server, &of("claimed")).await.unwrap_or(0.0);
        if delivered + claimed >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server never dealt with {count} {kind} alerts:\n{}", server.log());
}
