//! Prepaid keys through the app: a DeepSeek provider's keys have their balances read in the
//! background (the fake answers as DeepSeek's `GET /user/balance` does), each reading kept and
//! shown in the pool's status; a key with nothing left rests as out of credit (told once), the
//! chats go to the others, and a top-up brings it back at the next read; a bad answer leaves the
//! key usable with the reason shown; a key's Test reads its balance too.

use std::time::Duration;

use keypool_fake_provider::vendors::VendorBalance;
use keypool_fake_provider::FakeProvider;
use serde_json::{json, Value};

use crate::chat::new_chat;
use crate::support::Harness;

fn deepseek(h: &Harness, fake: &FakeProvider, labels: &[&str]) -> String {
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "DeepSeek", "kind": "deepseek", "baseUrl": fake.url(), "models": ["deepseek-chat"], "defaultModel": "deepseek-chat" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for label in labels {
        h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label }),
        );
    }
    provider
}

/// Each key's label, state and balance, in the pool's status.
fn keys(h: &Harness, provider: &str) -> Vec<(String, String, Value)> {
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    status["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (k["label"].as_str().unwrap().to_owned(), k["state"].as_str().unwrap().to_owned(), k["balance"].clone())
        })
        .collect()
}

fn reads(fake: &FakeProvider) -> usize {
    fake.seen().iter().filter(|s| s.path == "/user/balance").count()
}

async fn read_balances(h: &Harness) {
    h.ctx.keys().unwrap().read_balances().await.expect("the balances are read");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_key_rests_until_a_top_up_is_read_and_every_reading_is_shown() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = deepseek(&h, &fake, &["a", "b"]);
    fake.balance("key-a", VendorBalance::of(0.0, "USD"));
    fake.balance("key-b", VendorBalance::of(5.25, "CNY"));
    read_balances(&h).await;
    let read_at = keypool::Clock::now(&*h.clock).as_millis();
    assert_eq!(
        keys(&h, &provider),
        [
            (
                "a".into(),
                "exhausted".into(),
                json!({ "readAt": read_at, "amount": 0.0, "currency": "USD", "usable": false, "problem": null, "status": 200 })
            ),
            (
                "b".into(),
                "active".into(),
                json!({ "readAt": read_at, "amount": 5.25, "currency": "CNY", "usable": true, "problem": null, "status": 200 })
            ),
        ],
        "a has nothing left and rests; b's balance in its own currency"
    );
    let alerts = h.events.take_alerts();
    assert_eq!(alerts.len(), 1, "a told once: {alerts:?}");
    assert_eq!(alerts[0]["alert"]["kind"], "keyOutOfCredit");
    assert_eq!(alerts[0]["alert"]["key"], "a");

    for text in ["one", "two", "three"] {
        let (reply, _) = h.send(&new_chat(&h, &provider), Some(text), |_| {}).await.unwrap();
        assert_eq!(reply["status"], "complete", "{reply}");
    }
    let chats: Vec<String> =
        fake.seen().iter().filter(|s| s.path.ends_with("chat/completions")).map(|s| s.key.clone()).collect();
    assert_eq!(chats, ["key-b"; 3], "every chat on b while a rests");

    let before = reads(&fake);
    read_balances(&h).await;
    assert_eq!(reads(&fake), before, "read again only after ten minutes");

    fake.balance("key-a", VendorBalance::of(20.0, "USD"));
    h.clock.advance(Duration::from_secs(10 * 60));
    read_balances(&h).await;
    let now = keys(&h, &provider);
    assert_eq!(
        (now[0].1.as_str(), &now[0].2["amount"]),
        ("active", &json!(20.0)),
        "the top-up brought a back by itself"
    );
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "nothing lost to tell");

    let h = h.reopen();
    assert_eq!(keys(&h, &provider)[0].2["amount"], 20.0, "the last reading is kept across a restart");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_answer_leaves_the_key_usable_and_says_why_and_a_test_reads_the_balance() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = deepseek(&h, &fake, &["a"]);
    fake.balance(
        "key-a",
        VendorBalance { raw: Some("<html>maintenance</html>".into()), ..VendorBalance::of(0.0, "USD") },
    );
    read_balances(&h).await;
    let (_, state, balance) = keys(&h, &provider).remove(0);
    assert_eq!(state, "active", "an unreadable answer rests nothing");
    assert_eq!(balance["problem"], "unreadable balance: not JSON");
    assert_eq!(balance["amount"], Value::Null);

    fake.balance("key-a", VendorBalance::of(0.0, "USD"));
    h.clock.advance(Duration::from_secs(61));
    let id = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }))[0]["id"].clone();
    let tested = h.call_async("llmConfig:testApiKey", json!({ "id": id })).await.unwrap();
    assert_eq!(tested["ok"], false, "{tested}");
    assert_eq!(tested["problem"]["kind"], "outOfCredit", "{tested}");
    assert_eq!(keys(&h, &provider)[0].1, "exhausted", "the test's read rested it");

    fake.balance("key-a", VendorBalance::of(1.0, "USD"));
    let again = h.call_async("llmConfig:testApiKey", json!({ "id": id })).await.unwrap();
    assert_eq!(again["ok"], false, "within a minute of the last read the reading stands: {again}");
    h.clock.advance(Duration::from_secs(61));
    let topped = h.call_async("llmConfig:testApiKey", json!({ "id": id })).await.unwrap();
    assert_eq!(topped["ok"], true, "{topped}");
    assert_eq!(keys(&h, &provider)[0].1, "active", "a test after a top-up brings the key back");
    assert!(fake.seen().iter().all(|s| !s.path.contains("chat")), "no one-token reply was needed: the balance says it");
}

/// A Z.ai GLM Coding Plan provider: its keys' windows are read in the background and shown; the
/// key whose 5-hour window is used up rests until the reset, the other serves.
#[tokio::test(flavor = "multi_thread")]
async fn a_coding_plan_s_windows_are_read_shown_and_a_used_up_key_rests_until_its_reset() {
    use keypool_fake_provider::plans::PlanWindows;
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "GLM", "kind": "zai", "baseUrl": fake.url(), "models": ["glm-4.7"], "defaultModel": "glm-4.7" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for label in ["spent", "fresh"] {
        h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label }),
        );
    }
    let now = keypool::Clock::now(&*h.clock).as_millis();
    let reset = now + 2 * 3_600_000;
    fake.windows(
        "key-spent",
        PlanWindows { five_hours_used: 1.0, five_hours_reset: Some(reset), week_used: 0.4, ..Default::default() },
    );
    fake.windows("key-fresh", PlanWindows { five_hours_used: 0.32, week_used: 0.6, ..Default::default() });
    h.events.take_alerts();
    h.ctx.keys().unwrap().read_windows().await.unwrap();
    let alerts = h.events.take_alerts();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (&alerts[0]["alert"]["kind"], &alerts[0]["alert"]["key"], &alerts[0]["alert"]["resetsAt"]),
        (&json!("keyWindowUsedUp"), &json!("spent"), &json!(reset)),
        "the used-up window told, with its reset"
    );

    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let keys = status["keys"].as_array().unwrap();
    assert_eq!(
        (keys[0]["state"].as_str(), keys[0]["coolingUntil"].as_i64()),
        (Some("cooling"), Some(reset)),
        "rests until the reset"
    );
    let windows = &keys[1]["windows"]["windows"];
    assert_eq!(windows[0]["span"], json!({ "count": 5, "unit": "hour" }), "{windows}");
    assert_eq!(windows[0]["used"], 0.32);
    assert_eq!(windows[1]["span"], json!({ "count": 1, "unit": "week" }));
    assert_eq!(keys[0]["windows"]["windows"][0]["resetsAt"], reset);

    let (reply, _) = h.send(&new_chat(&h, &provider), Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["keyLabel"], "fresh", "{reply}");
    let before = fake.seen().len();
    h.ctx.keys().unwrap().read_windows().await.unwrap();
    assert_eq!(fake.seen().len(), before, "read again only after a minute while resting, five otherwise");
    h.clock.advance(Duration::from_secs(61));
    h.ctx.keys().unwrap().read_windows().await.unwrap();
    let asked: Vec<String> = fake.seen()[before..].iter().map(|s| s.key.clone()).collect();
    assert_eq!(asked, ["key-spent"], "the resting key is read again after a minute, the other not yet");
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "the same window is told once");
}

/// A short-term Bedrock key says when it expires: its row shows it, and within a week of it the
/// user is told once (a key that expires later is not).
#[tokio::test(flavor = "multi_thread")]
async fn a_short_term_bedrock_key_that_expires_within_a_week_is_told_once() {
    use base64::Engine;
    let h = Harness::new();
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Bedrock", "kind": "bedrock", "baseUrl": "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let now = keypool::Clock::now(&*h.clock).as_millis();
    let signed = jiff::Timestamp::from_millisecond(now).unwrap().strftime("%Y%m%dT%H%M%SZ").to_string();
    let key = |expires: u64| {
        let url = format!(
            "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Date={signed}&X-Amz-Expires={expires}&Version=1"
        );
        format!("bedrock-api-key-{}", base64::engine::general_purpose::STANDARD.encode(url))
    };
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": key(43_200), "label": "today" }));
    h.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": provider, "apiKey": "ABSKQmVkcm9ja0FQSUtleS1hYmM6ZGVm", "label": "long-term" }),
    );
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let expiries: Vec<Value> = status["keys"].as_array().unwrap().iter().map(|k| k["expiresAt"].clone()).collect();
    assert_eq!(
        expiries,
        [json!(now + 43_200_000), Value::Null],
        "the short-term key says when; the long-term one does not"
    );

    h.events.take_alerts();
    h.ctx.keys().unwrap().check_expiries().unwrap();
    let alerts = h.events.take_alerts();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(
        (&alerts[0]["alert"]["kind"], &alerts[0]["alert"]["key"], &alerts[0]["alert"]["expiresAt"]),
        (&json!("keyExpiring"), &json!("today"), &json!(now + 43_200_000))
    );
    h.clock.advance(Duration::from_secs(60));
    h.ctx.keys().unwrap().check_expiries().unwrap();
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "told once");
    let listed = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider })).to_string();
    assert!(!listed.contains("bedrock-api-key-"), "the key is masked where it is listed");
}
