//! The user is told when the pool loses keys (`pool:alert`, shown as a desktop notification):
//! a key refused, a key out of credit, a provider left without a usable key; each once, and not
//! at all once Settings switch it off.

use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::chat::{fake_provider, new_chat};
use crate::support::Harness;

fn alert(kind: &str, provider: &str, fields: Value) -> Value {
    let mut alert = json!({ "kind": kind, "providerId": provider, "provider": "Fake" });
    alert.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    json!({ "alert": alert })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_refused_and_a_provider_without_keys_are_told_once_each() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    let chat = new_chat(&h, &provider);
    fake.always("key-a", Reply::status(401));
    fake.always("key-b", Reply::text(&["fine"]));
    h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(
        h.events.take_alerts(),
        [alert("keyDisabled", &provider, json!({ "key": "a", "status": 401 }))],
        "a died, b answered: the provider still has a key"
    );

    fake.always("key-b", Reply::status(401));
    let (failed, _) = h.send(&chat, Some("again"), |_| {}).await.unwrap();
    assert_eq!(failed["status"], "error");
    assert_eq!(
        h.events.take_alerts(),
        [
            alert("keyDisabled", &provider, json!({ "key": "b", "status": 401 })),
            alert("providerUnusable", &provider, json!({})),
        ],
        "the last key died: the provider has none left, told once"
    );
    h.send(&chat, Some("and again"), |_| {}).await.unwrap();
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "nothing new to tell");

    // A key added to the unusable provider that dies too: a new loss, told again.
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "key-c", "label": "c" }));
    fake.always("key-c", Reply::status(401));
    h.send(&new_chat(&h, &provider), Some("c?"), |_| {}).await.unwrap();
    assert_eq!(
        h.events.take_alerts(),
        [
            alert("keyDisabled", &provider, json!({ "key": "c", "status": 401 })),
            alert("providerUnusable", &provider, json!({})),
        ],
        "the provider had a usable key again, and lost it"
    );

    // b comes back and serves; when it dies again, both are told again.
    let b = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }))[1]["id"].clone();
    h.ok("llmConfig:toggleApiKey", json!({ "id": b, "enabled": true }));
    fake.always("key-b", Reply::text(&["back"]));
    h.send(&chat, Some("back?"), |_| {}).await.unwrap();
    fake.always("key-b", Reply::status(401));
    h.send(&chat, Some("gone?"), |_| {}).await.unwrap();
    assert_eq!(
        h.events.take_alerts(),
        [
            alert("keyDisabled", &provider, json!({ "key": "b", "status": 401 })),
            alert("providerUnusable", &provider, json!({})),
        ],
        "a key enabled again and dead again is a new loss"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_out_of_credit_is_told_once_and_the_switch_silences_everything() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b", "c"]);
    fake.always("key-a", Reply::QuotaExceeded);
    fake.always("key-b", Reply::text(&["fine"]));
    fake.always("key-c", Reply::text(&["fine"]));
    // New chats take the keys in turn: a is met, then passed over while out of credit.
    for text in ["one", "two", "three", "four", "five", "six"] {
        h.send(&new_chat(&h, &provider), Some(text), |_| {}).await.unwrap();
    }
    assert!(fake.seen().iter().any(|s| s.key == "key-a"), "a was asked");
    assert_eq!(
        h.events.take_alerts(),
        [alert("keyOutOfCredit", &provider, json!({ "key": "a" }))],
        "out of credit, told once; the provider has b and c"
    );

    h.ok("settings:update", json!({ "notifyKeysLost": false }));
    assert_eq!(h.ok("settings:get", json!({}))["notifyKeysLost"], false);
    h.events.take_alerts();
    fake.always("key-b", Reply::status(401));
    fake.always("key-c", Reply::status(401));
    let (failed, _) = h.send(&new_chat(&h, &provider), Some("seven"), |_| {}).await.unwrap();
    assert_eq!(failed["status"], "error", "every key is gone");
    h.ok("app:notify", json!({ "title": "Keypool", "body": "a key of Fake was refused" }));
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "switched off: neither told nor shown");

    h.ok("settings:update", json!({ "notifyKeysLost": true }));
    h.ok("app:notify", json!({ "title": "Keypool", "body": "a key of Fake was refused" }));
    assert_eq!(
        h.events.take_alerts(),
        [json!({ "notification": { "title": "Keypool", "body": "a key of Fake was refused" } })],
        "switched on: shown"
    );
    let error = h.err("app:notify", json!({ "title": " ", "body": "x" }));
    assert_eq!(error.issues.unwrap()[0].code.name(), "blank", "a notification has a title");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_lists_the_keys_lost_switched_off_or_not_and_says_when_nothing_shows_notifications() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    assert_eq!(
        h.ok("app:getAlerts", json!({})),
        json!({ "notifications": { "state": "available" }, "recent": [] }),
        "nothing lost yet, and the desktop shows notifications"
    );

    h.ok("settings:update", json!({ "notifyKeysLost": false }));
    fake.always("key-a", Reply::status(401));
    fake.always("key-b", Reply::status(401));
    h.send(&new_chat(&h, &provider), Some("hi"), |_| {}).await.unwrap();
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "switched off: no desktop notification");
    let listed = h.ok("app:getAlerts", json!({}));
    let recent: Vec<&str> =
        listed["recent"].as_array().unwrap().iter().map(|r| r["alert"]["kind"].as_str().unwrap()).collect();
    assert_eq!(
        recent,
        ["providerUnusable", "keyDisabled", "keyDisabled"],
        "the app still lists every loss, the newest first: {listed}"
    );
    assert!(listed["recent"][0]["at"].as_i64().unwrap() > 0, "each with when it was told");

    // A test notification is shown whatever the switch says: the user asked for it.
    let shown = h.ok("app:testNotification", json!({ "title": "Keypool", "body": "a test" }));
    assert_eq!(shown, json!({ "state": "available" }));
    assert_eq!(
        h.events.take_alerts(),
        [json!({ "notification": { "title": "Keypool", "body": "a test" } })],
        "the test is shown although alerts are switched off"
    );

    h.events.notifications_fail("org.freedesktop.Notifications was not provided by any .service files");
    let none = h.ok("app:testNotification", json!({ "title": "Keypool", "body": "a test" }));
    assert_eq!(none["state"], "unavailable", "no notification service: the app says so");
    assert!(none["detail"].as_str().unwrap().contains("org.freedesktop.Notifications"), "with the system's words");
    assert_eq!(h.events.take_alerts(), Vec::<Value>::new(), "and shows nothing");
    assert_eq!(h.ok("app:getAlerts", json!({}))["notifications"]["state"], "unavailable", "the banner's state too");
}
