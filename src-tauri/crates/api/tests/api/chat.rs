//! Chats end to end below Tauri: a real database, the real completion service, the fake
//! provider on loopback.

use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::support::Harness;

/// A provider "Fake" of `kind` pointing at the fake, with keys `key-<label>` labelled `<label>`.
pub(crate) fn fake_provider(h: &Harness, fake: &FakeProvider, kind: &str, labels: &[&str]) -> String {
    let base_url = if kind == "openai" { format!("{}/v1", fake.url()) } else { fake.url() };
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake", "kind": kind, "baseUrl": base_url, "models": ["fake-model"], "defaultModel": "fake-model" }),
    );
    let id = provider["id"].as_str().unwrap().to_owned();
    for label in labels {
        h.ok("llmConfig:addApiKey", json!({ "providerId": id, "apiKey": format!("key-{label}"), "label": label }));
    }
    id
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

pub(crate) fn new_chat(h: &Harness, provider: &str) -> String {
    h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_streams_a_reply_that_is_saved_with_its_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "anthropic", &["main"]);
    fake.script("key-main", [Reply::text(&["Hi", " there"])]);
    let chat = new_chat(&h, &provider);

    let (message, events) = h.send(&chat, Some("Hello, who are you?"), |_| {}).await.unwrap();
    assert_eq!(types(&events), ["userMessage", "keySelected", "delta", "delta", "finished"], "the event sequence");
    assert_eq!(message["content"], "Hi there", "the reply is the streamed text");
    assert_eq!(message["status"], "complete", "and complete");
    assert_eq!(message["keyLabel"], "main", "it says which key answered");
    assert_eq!(message["providerKey"], false, "a pool key, not the provider key");

    let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
    let roles: Vec<_> = messages.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant"], "both messages are saved in order");
    let chats = h.ok("chat:list", json!({}));
    assert_eq!(chats[0]["title"], "Hello, who are you?", "the first message names the chat");

    fake.script("key-main", [Reply::text(&["Again"])]);
    h.send(&chat, Some("And now?"), |_| {}).await.unwrap();
    assert_eq!(fake.seen().last().unwrap().messages, 3, "the history goes with the next request");
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_is_reported_and_a_revoked_key_is_disabled_in_settings() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    let chat = new_chat(&h, &provider);
    h.events.take();
    // Revoked: refused whatever it asks, its model list included (which the pool asks before
    // disabling it).
    fake.always("key-a", Reply::status(401));

    let (message, events) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(message["keyLabel"], "b", "the reply came from b");
    let failover = events.iter().find(|e| e["type"] == "failover").expect("a failover event");
    assert_eq!(failover["status"], 401, "with the status");
    assert_eq!(failover["reason"], "auth_rejected", "and the reason");
    assert!(events.iter().any(|e| e["type"] == "keySelected" && e["rebound"] == true), "the move is flagged");

    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    assert_eq!(keys[0]["enabled"], false, "a is disabled in the store");
    assert_eq!(keys[0]["disabledReason"], "HTTP 401", "with why");
    assert!(h.events.take().contains(&provider), "and the settings page is told");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_available_key_is_saved_as_the_replys_error() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a"]);
    fake.always("key-a", Reply::status_with(429, &[("retry-after", "45")]));
    let chat = new_chat(&h, &provider);
    let (message, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(message["status"], "error", "the reply failed");
    assert_eq!(message["errorCode"], "no_available_key", "because no key is left");
    let error = message["error"].as_str().unwrap();
    assert!(error.contains("T08:00:45"), "and says when a key frees up: {error}");
    assert!(error.starts_with("Fake:"), "and names the provider as the user does, not by its id: {error}");
    assert_eq!(message["keyLabel"], serde_json::Value::Null, "no key answered it");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_replaces_the_failed_reply() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a"]);
    fake.script("key-a", [Reply::status(500), Reply::text(&["second time lucky"])]);
    let chat = new_chat(&h, &provider);
    let (failed, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(failed["status"], "error", "the 500 fails the reply");
    assert_eq!(failed["errorCode"], "provider", "as a provider error");

    let (retried, events) = h.send(&chat, None, |_| {}).await.unwrap();
    assert!(!types(&events).contains(&"userMessage"), "a retry adds no user message");
    assert_eq!(retried["content"], "second time lucky", "the retry answers");
    let messages = h.ok("chat:getMessages", json!({ "chatId": chat }));
    let statuses: Vec<_> = messages.as_array().unwrap().iter().map(|m| m["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["complete", "complete"], "the failed reply was replaced, not kept beside");
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_keeps_the_text_so_far() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a"]);
    fake.script(
        "key-a",
        [Reply::Hold { chunks_before: vec!["Thinking".into()], gate: "never".into(), chunks_after: vec![] }],
    );
    let chat = new_chat(&h, &provider);
    let chats = h.ctx.chats().unwrap();
    let chat_id = chat.clone();
    let (message, _) = h
        .send(&chat, Some("hi"), |event| {
            if event["type"] == "delta" {
                chats.stop(&chat_id).unwrap();
            }
        })
        .await
        .unwrap();
    assert_eq!(message["status"], "stopped", "the reply is marked stopped");
    assert_eq!(message["content"], "Thinking", "with the text so far");
    let stopped = h.ok("chat:stop", json!({ "chatId": chat }));
    assert_eq!(stopped["stopped"], false, "nothing is running any more");
}

#[tokio::test(flavor = "multi_thread")]
async fn leaving_a_chat_keeps_its_key_and_deleting_it_releases_it() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    let chat = new_chat(&h, &provider);
    h.send(&chat, Some("one"), |_| {}).await.unwrap();
    h.send(&chat, Some("two"), |_| {}).await.unwrap();
    assert_eq!(fake.keys_used(), ["key-a", "key-a"], "the chat sticks to its key");
    h.ok("chat:close", json!({ "id": chat }));
    let other = new_chat(&h, &provider);
    h.send(&other, Some("meanwhile"), |_| {}).await.unwrap();
    h.send(&chat, Some("three"), |_| {}).await.unwrap();
    assert_eq!(fake.keys_used()[3], "key-a", "back in the chat after another one, it is still on its key");

    assert_eq!(h.ok("chat:delete", json!({ "id": chat })), json!({ "id": chat }));
    let err = h.err("chat:getMessages", json!({ "chatId": chat }));
    assert_eq!(err.code, ErrorCode::NotFound, "the chat and its messages are gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_keeps_each_chat_on_its_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    let first = new_chat(&h, &provider);
    let second = new_chat(&h, &provider);
    h.send(&first, Some("one"), |_| {}).await.unwrap();
    h.send(&second, Some("one"), |_| {}).await.unwrap();
    assert_eq!(fake.keys_used(), ["key-a", "key-b"], "the two chats spread over the keys");
    let h = h.reopen();
    h.send(&second, Some("two"), |_| {}).await.unwrap();
    h.send(&first, Some("two"), |_| {}).await.unwrap();
    assert_eq!(fake.keys_used()[2..], ["key-b", "key-a"], "after a restart each chat is back on its own key");
    let (reply, events) = h.send(&second, Some("three"), |_| {}).await.unwrap();
    assert_eq!(reply["keyLabel"], "b", "and stays there");
    assert!(events.iter().all(|e| e["rebound"] != true), "no prompt-cache-reset notice: the cache is still warm");
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_level_key_answers_while_the_pool_is_empty() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &[]);
    h.ok("llmConfig:updateProvider", json!({ "id": provider, "apiKey": "key-provider" }));
    let chat = new_chat(&h, &provider);
    let (message, events) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(message["status"], "complete", "the provider key answered: {message}");
    assert_eq!(fake.keys_used(), ["key-provider"], "the provider-level key was sent");
    assert!(events.iter().any(|e| e["providerLevel"] == true), "the page is told which key");
    assert_eq!(message["providerKey"], true, "and the saved reply says so");
    let saved = h.ok("chat:getMessages", json!({ "chatId": chat }));
    assert_eq!(saved[1]["providerKey"], true, "also after a reload");
}

#[tokio::test(flavor = "multi_thread")]
async fn test_api_key_probes_without_moving_chats_and_disables_a_refused_key() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &["a", "b"]);
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    let b = keys[1]["id"].clone();
    let chat = new_chat(&h, &provider);
    h.send(&chat, Some("one"), |_| {}).await.unwrap();

    let ok = h.call_async("llmConfig:testApiKey", json!({ "id": b })).await.unwrap();
    assert_eq!(ok["ok"], true, "a working key tests fine: {ok}");
    assert!(ok["latencyMs"].is_u64(), "with its latency");
    // A 401, not a 403: a 403 on the model list proves nothing (a key restricted by scope).
    fake.script("key-b", [Reply::status(401)]);
    let refused = h.call_async("llmConfig:testApiKey", json!({ "id": b })).await.unwrap();
    assert_eq!(
        (refused["ok"].clone(), refused["status"].clone()),
        (json!(false), json!(401)),
        "the refusal: {refused}"
    );
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    assert_eq!(keys[1]["enabled"], false, "refused as the key's, it is disabled, as a chat's refusal would");
    assert_eq!(keys[1]["disabledReason"], "HTTP 401", "with the status");

    h.send(&chat, Some("two"), |_| {}).await.unwrap();
    assert_eq!(fake.keys_used(), ["key-a", "key-a"], "the chat kept its key");
    let err = h.call_async("llmConfig:testApiKey", json!({ "id": "ghost" })).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "unknown key");
}

#[tokio::test(flavor = "multi_thread")]
async fn sending_is_validated_and_refused_for_unknown_chats() {
    let h = Harness::new();
    let err = h.send("ghost", Some("hi"), |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "unknown chat");
    let err = h.err("chat:create", json!({ "providerId": "ghost" }));
    assert_eq!(err.code, ErrorCode::NotFound, "unknown provider");
    let chat = new_chat(&h, "openai");
    let err = h.send(&chat, None, |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Validation, "a retry with nothing to answer is invalid");
    let err = h.err("chat:update", json!({ "id": chat }));
    assert_eq!(err.code, ErrorCode::Validation, "an update must change something");
    let renamed = h.ok("chat:update", json!({ "id": chat, "title": "Renamed" }));
    assert_eq!(renamed["title"], "Renamed", "rename works");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_appears_in_chat_events_results_or_errors() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &[]);
    for secret in ["sk-chat-secret-AAAAAAAAAAAA1111", "sk-chat-secret-BBBBBBBBBBBB2222"] {
        h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": secret }));
        fake.always(secret, Reply::status(401));
    }
    let chat = new_chat(&h, &provider);
    let (message, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(message["errorCode"], "no_available_key", "both keys were revoked");
    h.ok("chat:getMessages", json!({ "chatId": chat }));
    let text = h.transcript_text();
    for tail in ["AAAAAAAAAAAA1111", "BBBBBBBBBBBB2222", "AAAAAAAA", "BBBBBBBB"] {
        assert!(!text.contains(tail), "a secret leaked:\n{text}");
    }
}
