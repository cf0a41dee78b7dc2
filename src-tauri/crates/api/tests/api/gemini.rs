//! Google Gemini through the commands, against the fake provider speaking Gemini: the built-in
//! provider, a chat that streams and reports its usage to the reply and the ledger, the model
//! list, quota groups set and changed by `addApiKey`/`updateApiKey`, and what the pool shows of
//! each refusal: a model resting for a per-minute quota, a model used up for the day until
//! midnight in Los Angeles, an invalid key disabled with its reason, a safety block in its own
//! words.

use std::time::Duration;

use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::gemini::{PER_DAY_QUOTA, PER_MINUTE_QUOTA, THOUGHT_TOKENS};
use keypool_fake_provider::{FakeProvider, Reply, CACHED_TOKENS, INPUT_TOKENS};
use serde_json::{json, Value};

use crate::support::{Harness, START};

const MODEL: &str = "gemini-fake";

/// A Gemini provider on the fake serving `MODEL`, with keys `key-<label>` in the quota groups
/// given (`None`: a group of its own).
fn gemini_provider(h: &Harness, fake: &FakeProvider, keys: &[(&str, Option<&str>)]) -> String {
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake Gemini", "kind": "gemini", "baseUrl": fake.url(), "models": [MODEL] }),
    );
    let provider = provider["id"].as_str().unwrap().to_owned();
    for (label, group) in keys {
        let mut args = json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label });
        if let Some(group) = group {
            args["quotaGroup"] = json!(group);
        }
        h.ok("llmConfig:addApiKey", args);
    }
    provider
}

fn new_chat(h: &Harness, provider: &str) -> String {
    h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned()
}

fn quota(quota_id: &str, retry_delay: &str) -> Reply {
    Reply::QuotaRefused { quota_id: quota_id.into(), retry_delay: Some(retry_delay.into()) }
}

/// The pool's row for the key labelled `label`.
fn status_of(h: &Harness, provider: &str, label: &str) -> Value {
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    status["keys"].as_array().unwrap().iter().find(|k| k["label"] == label).cloned().expect("the key's row")
}

fn budget_of(key: &Value, scope: &str) -> Value {
    key["budgets"].as_array().unwrap().iter().find(|b| b["scope"] == scope).cloned().unwrap_or(Value::Null)
}

#[test]
fn google_gemini_is_built_in_at_the_host_root_with_current_models() {
    let h = Harness::new();
    let providers = h.ok("llmConfig:getProviders", json!({}));
    let gemini = providers.as_array().unwrap().iter().find(|p| p["id"] == "gemini").expect("a built-in Gemini");
    assert_eq!(gemini["name"], "Google Gemini");
    assert_eq!(gemini["kind"], "gemini");
    assert_eq!(gemini["baseUrl"], "https://generativelanguage.googleapis.com", "the host root: Keypool adds /v1beta");
    assert_eq!(gemini["builtin"], true);
    assert_eq!(gemini["defaultModel"], "gemini-2.5-flash", "one of its models: {gemini}");
    assert_eq!(h.ok("llmConfig:getApiKeys", json!({ "providerId": "gemini" })), json!([]), "an empty pool");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gemini_chat_streams_and_its_usage_reaches_the_reply_and_the_ledger() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", None)]);
    let chat = new_chat(&h, &provider);
    let (reply, events) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["status"], "complete", "{reply}");
    assert_eq!(reply["content"], "Hello from the fake provider.");
    let deltas = events.iter().filter(|e| e["type"] == "delta").count();
    assert_eq!(deltas, 3, "streamed piece by piece: {events:?}");
    let output = 3 + THOUGHT_TOKENS;
    assert_eq!(
        reply["usage"],
        json!({ "inputTokens": INPUT_TOKENS, "cachedTokens": CACHED_TOKENS, "outputTokens": output }),
        "the reply's usage: the prompt with its cached tokens, the output with the thoughts"
    );
    let summary = h.ok("usage:getSummary", json!({ "providerId": provider }));
    let totals = &summary["totals"];
    assert_eq!(
        [&totals["requests"], &totals["inputTokens"], &totals["cachedTokens"], &totals["outputTokens"]],
        [&json!(1), &json!(INPUT_TOKENS), &json!(CACHED_TOKENS), &json!(output)],
        "the ledger counts it as for the other kinds: {summary}"
    );
    assert_eq!(fake.seen()[0].path, format!("/v1beta/models/{MODEL}:streamGenerateContent"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gemini_providers_models_are_listed_without_their_prefix() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.models(&["gemini-2.5-flash", "gemini-2.5-pro"]);
    let provider = gemini_provider(&h, &fake, &[("a", None)]);
    let listed = h.call_async("llmConfig:listModels", json!({ "providerId": provider })).await.unwrap();
    assert_eq!(listed["models"], json!(["gemini-2.5-flash", "gemini-2.5-pro"]), "{listed}");
}

#[test]
fn a_quota_group_is_added_trimmed_changed_and_cleared_within_its_bound() {
    let h = Harness::new();
    let key = h.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0001", "quotaGroup": "  project-7  " }),
    );
    assert_eq!(key["quotaGroup"], "project-7", "trimmed: {key}");
    let id = key["id"].as_str().unwrap().to_owned();
    let plain = h.ok("llmConfig:addApiKey", json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0002" }));
    assert_eq!(plain["quotaGroup"], Value::Null, "no group: a group of its own");
    let blank = h.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0003", "quotaGroup": " " }),
    );
    assert_eq!(blank["quotaGroup"], Value::Null, "a blank group is none");

    let before = h.snapshot();
    let longest = "é".repeat(64);
    for args in [
        json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0004", "quotaGroup": format!("{longest}x") }),
        json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0004", "quotaGroup": 7 }),
        json!({ "providerId": "gemini", "apiKey": "AIza-fake-group-0004", "quotaGroup": null }),
    ] {
        let err = h.err("llmConfig:addApiKey", args.clone());
        assert_eq!(err.code, ErrorCode::Validation, "{args}");
        assert!(
            err.issues.unwrap_or_default().iter().any(|i| i.path == "quotaGroup"),
            "{args}: an issue at quotaGroup"
        );
    }
    let err = h.err("llmConfig:updateApiKey", json!({ "id": id, "quotaGroup": format!("{longest}x") }));
    assert_eq!(err.code, ErrorCode::Validation, "65 characters are too many to change to, too");
    assert_eq!(h.snapshot(), before, "nothing was written");

    let moved = h.ok("llmConfig:updateApiKey", json!({ "id": id, "quotaGroup": longest }));
    assert_eq!(moved["quotaGroup"].as_str().unwrap().chars().count(), 64, "64 characters (not bytes) are allowed");
    let cleared = h.ok("llmConfig:updateApiKey", json!({ "id": id, "quotaGroup": "" }));
    assert_eq!(cleared["quotaGroup"], Value::Null, "\"\" puts it in a group of its own");
    let listed = h.ok("llmConfig:getApiKeys", json!({ "providerId": "gemini" }));
    assert_eq!(listed[0]["quotaGroup"], Value::Null, "as stored");
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_of_one_group_rest_together_and_a_key_moved_out_serves_again() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", Some("project-1")), ("b", Some("project-1"))]);
    h.ok("settings:update", json!({ "maxWaitSeconds": 0 }));
    // The project's per-minute quota is spent: whichever key asks first is refused.
    fake.script("key-a", [quota(PER_MINUTE_QUOTA, "40s")]);
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["status"], "error", "the group's one refusal rests both keys: {reply}");
    assert_eq!(fake.seen().len(), 1, "one refused request for the project, not one per key");
    for label in ["a", "b"] {
        let key = status_of(&h, &provider, label);
        assert_eq!(key["quotaGroup"], "project-1", "the pool shows the group: {key}");
        let until = budget_of(&key, MODEL)["coolingUntil"].clone();
        assert_eq!(until, json!(START.as_millis() + 40_000), "{label}'s model rests with its group: {key}");
    }

    let b = status_of(&h, &provider, "b")["id"].as_str().unwrap().to_owned();
    h.ok("llmConfig:updateApiKey", json!({ "id": b, "quotaGroup": "" }));
    assert_eq!(budget_of(&status_of(&h, &provider, "b"), MODEL)["coolingUntil"], Value::Null, "b left the group");
    let (reply, _) = h.send(&chat, None, |_| {}).await.unwrap();
    assert_eq!((reply["status"].as_str(), reply["keyLabel"].as_str()), (Some("complete"), Some("b")), "{reply}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_per_minute_quota_rests_the_model_and_not_the_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", None), ("b", None)]);
    fake.script("key-a", [quota(PER_MINUTE_QUOTA, "37s")]);
    let chat = new_chat(&h, &provider);
    let (reply, events) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!((reply["status"].as_str(), reply["keyLabel"].as_str()), (Some("complete"), Some("b")), "{reply}");
    let failover = events.iter().find(|e| e["type"] == "failover").expect("a failover event");
    assert_eq!((failover["status"].as_u64(), failover["reason"].as_str()), (Some(429), Some("rate_limited")));
    let a = status_of(&h, &provider, "a");
    assert_eq!(a["state"], "active", "the key is not cooling: its other models serve: {a}");
    let model = budget_of(&a, MODEL);
    assert_eq!(model["coolingUntil"], json!(START.as_millis() + 37_000), "the model rests for RetryInfo's delay");
    assert_eq!(model["usedUpUntil"], Value::Null, "a per-minute quota is not the day's");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_per_day_quota_uses_the_model_up_until_midnight_in_los_angeles() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", None)]);
    // START is midnight in Los Angeles (08:00 UTC, January): three hours into that day, it ends
    // 21 hours later, whatever the refusal's "0s" says.
    h.clock.advance(Duration::from_secs(3 * 3600));
    let day_end = START.as_millis() + 24 * 3_600_000;
    fake.always("key-a", quota(PER_DAY_QUOTA, "0s"));
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    let details = &reply["errorDetails"];
    assert_eq!(details["kind"], "allBlocked", "{reply}");
    let a = &details["keys"][0];
    assert_eq!((a["state"].as_str(), &a["until"]), (Some("used_up"), &json!(day_end)), "its own state: {a}");
    let key = status_of(&h, &provider, "a");
    assert_eq!(key["state"], "active", "the key is not disabled nor cooling: {key}");
    assert_eq!(budget_of(&key, MODEL)["usedUpUntil"], json!(day_end), "the model's day is used up until then");

    h.clock.advance(Duration::from_millis((day_end - START.as_millis()) as u64 - 3 * 3_600_000));
    assert_eq!(budget_of(&status_of(&h, &provider, "a"), MODEL)["usedUpUntil"], Value::Null, "a new day: back");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_key_refused_again_for_its_models_is_disabled_with_its_reason() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", None), ("b", None)]);
    fake.always("key-a", Reply::InvalidKey);
    let chat = new_chat(&h, &provider);
    let (reply, events) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!((reply["status"].as_str(), reply["keyLabel"].as_str()), (Some("complete"), Some("b")), "{reply}");
    let failover = events.iter().find(|e| e["type"] == "failover").expect("a failover event");
    assert_eq!((failover["status"].as_u64(), failover["reason"].as_str()), (Some(400), Some("auth_rejected")));
    let listed = fake.seen().iter().filter(|s| s.key == "key-a" && s.path.ends_with("/models")).count();
    assert_eq!(listed, 1, "the pool asked a's model list before disabling it");
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    assert_eq!((keys[0]["enabled"].as_bool(), keys[0]["disabledReason"].as_str()), (Some(false), Some("HTTP 400")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_safety_block_is_said_as_such() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = gemini_provider(&h, &fake, &[("a", None)]);
    fake.script("key-a", [Reply::Blocked { chunks_before: vec![], prompt: true }]);
    fake.script("key-a", [Reply::Blocked { chunks_before: vec!["Par".into()], prompt: false }]);
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["errorDetails"], json!({ "kind": "unreachable", "breakage": "prompt_blocked" }), "{reply}");
    let (reply, _) = h.send(&chat, None, |_| {}).await.unwrap();
    assert_eq!(reply["content"], "Par", "the text so far stands");
    assert_eq!(reply["errorDetails"], json!({ "kind": "interrupted", "breakage": "reply_blocked" }), "{reply}");
}
