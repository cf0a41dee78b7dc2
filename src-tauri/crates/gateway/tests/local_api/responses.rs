//! OpenAI's Responses API (Codex CLI's) through the local API: relayed as it is, whole and
//! streamed, with the pool's affinity, failover before the first byte, redaction of error events
//! and the ledger's usage from `response.completed`.

use keypool_fake_provider::Reply;
use keypool_llm::{AttemptOutcome, ProviderKind, Usage};

use crate::support::*;

fn responses_body(text: &str, stream: bool) -> String {
    json!({ "model": "gpt-5", "instructions": "you are a coding agent", "stream": stream, "store": false,
        "input": [{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] }],
        "prompt_cache_key": "019aa5f0-codex-session" })
    .to_string()
}

async fn ask(api: &LocalApi, body: &str, session: &str) -> (u16, String) {
    let auth = format!("Bearer {TOKEN}");
    let headers = [("authorization", auth.as_str()), ("session-id", session)];
    let (status, text, _) = api.post_raw("/v1/responses", body, &headers).await;
    (status, text)
}

#[tokio::test]
async fn a_responses_request_is_relayed_as_it_is_and_its_usage_reaches_the_ledger() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    let body = responses_body("fix the bug", false);
    let (status, text) = ask(&api, &body, "s-1").await;
    assert_eq!(status, 200, "answered: {text}");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["object"], "response", "the provider's Responses object comes back: {text}");
    let seen = api.fake.seen();
    assert_eq!(seen[0].path, "/v1/responses", "to the provider's Responses API");
    assert_eq!(seen[0].body, body, "byte for byte");

    let (status, text) = ask(&api, &responses_body("fix the bug", true), "s-1").await;
    assert_eq!(status, 200);
    assert!(text.contains("event: response.output_text.delta"), "the events pass as they came: {text}");
    assert!(text.contains("event: response.completed"), "to the end: {text}");
    let usages: Vec<Option<Usage>> = api.attempts().iter().map(|a| a.usage).collect();
    let expected = Some(Usage { input: 11, cached: 5, output: 3 });
    assert_eq!(
        usages,
        [Some(Usage { input: 11, cached: 5, output: 3 }), expected],
        "whole and streamed, cached included"
    );
    assert!(api.attempts().iter().all(|a| a.outcome == AttemptOutcome::Ok));
}

#[tokio::test]
async fn a_codex_session_stays_on_one_key_and_a_refused_key_is_skipped_before_the_first_byte() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a", "b"]).await;
    for turn in ["first", "second", "third"] {
        let (status, _) = ask(&api, &responses_body(turn, true), "session-x").await;
        assert_eq!(status, 200, "turn {turn}");
    }
    let used = api.fake.keys_used();
    assert!(used.windows(2).all(|pair| pair[0] == pair[1]), "one session, one key (its cache stays warm): {used:?}");

    let staying = used[0].clone();
    api.fake.script(&staying, [Reply::status_with(429, &[("retry-after", "30")])]);
    let (status, text) = ask(&api, &responses_body("fourth", true), "session-x").await;
    assert_eq!(status, 200, "the other key answers: {text}");
    let used = api.fake.keys_used();
    assert_ne!(used.last(), Some(&staying), "failed over to the other key: {used:?}");
}

#[tokio::test]
async fn an_error_event_in_a_responses_stream_has_every_key_masked() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["escapedleakyleaky"]).await;
    let key = "key-escapedleakyleaky";
    api.fake.script(
        key,
        [Reply::StreamError {
            chunks_before: vec!["partial".into()],
            error_type: "server_error".into(),
            message: "upstream broke for {key}".into(),
        }],
    );
    let (status, text) = ask(&api, &responses_body("hi", true), "s-2").await;
    assert_eq!(status, 200, "the stream had begun");
    assert!(text.contains("event: error"), "the error event passes: {text}");
    assert!(!text.contains(key), "never the key: {text}");
    assert!(text.contains("upstream broke for"), "the provider's words stay: {text}");
}

#[tokio::test]
async fn a_provider_without_a_responses_api_answers_through_its_chat_completions_from_then_on() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a"]).await;
    api.fake.without_responses(true);
    let (status, text) = ask(&api, &responses_body("fix the bug", true), "s-1").await;
    assert_eq!(status, 200, "answered: {text}");
    assert!(text.contains("event: response.output_text.delta"), "in the Responses API's events: {text}");
    assert!(text.contains("Hello from the fake provider."), "{text}");
    assert!(text.contains("event: response.completed"), "to its end: {text}");
    let paths: Vec<String> = api.fake.seen().iter().map(|s| s.path.clone()).collect();
    assert_eq!(paths, ["/v1/responses", "/v1/chat/completions"], "asked as it came, then translated");

    let (status, text) = ask(&api, &responses_body("and again", false), "s-1").await;
    assert_eq!(status, 200, "answered: {text}");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["object"], "response", "a Responses object: {text}");
    let paths: Vec<String> = api.fake.seen().iter().map(|s| s.path.clone()).collect();
    assert_eq!(paths[2..], ["/v1/chat/completions"], "remembered: straight to its chat completions");
}

/// A Responses request continuing a stored response (`previous_response_id`), in a session of
/// its own.
fn continuing(text: &str, previous: &str) -> String {
    json!({ "model": "gpt-5", "stream": true, "previous_response_id": previous,
        "input": [{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] }] })
    .to_string()
}

#[tokio::test]
async fn a_stored_response_is_continued_on_the_key_that_made_it() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a", "b"]).await;
    let (status, _) = ask(&api, &responses_body("first", true), "s-1").await;
    assert_eq!(status, 200);
    let maker = api.fake.keys_used()[0].clone();
    // Another session would go to the other key (round robin): the stored response decides.
    for session in ["s-2", "s-3", "s-4"] {
        let (status, text) = ask(&api, &continuing("more", "resp_fake"), session).await;
        assert_eq!(status, 200, "answered: {text}");
    }
    let used = api.fake.keys_used();
    assert!(used.iter().all(|key| *key == maker), "every continuation on the key that made the response: {used:?}");
}

#[tokio::test]
async fn a_stored_response_fails_over_only_within_its_organisation() {
    // Keys without a quota group are each their own organisation.
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a", "b"]).await;
    assert_eq!(ask(&api, &responses_body("first", false), "s-1").await.0, 200);
    let maker = api.fake.keys_used()[0].clone();
    api.fake.script(&maker, [Reply::status_with(429, &[("retry-after", "30")])]);
    let (status, text) = ask(&api, &continuing("more", "resp_fake"), "s-2").await;
    assert_eq!(status, 429, "the client hears its organisation's key is resting, in its dialect: {text}");
    assert!(text.contains("error"), "an OpenAI error: {text}");
    let used = api.fake.keys_used();
    assert!(used.iter().all(|key| *key == maker), "no other organisation's key was asked: {used:?}");

    // Two keys of one organisation (one quota group; a 429 rests both, as they share the quota):
    // when the key is refused as not valid, its sibling answers.
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a@org", "b@org", "c"]).await;
    assert_eq!(ask(&api, &responses_body("first", false), "s-1").await.0, 200);
    let maker = api.fake.keys_used()[0].clone();
    // The refusal, and the model list its check asks.
    api.fake.script(&maker, [Reply::InvalidKey, Reply::InvalidKey]);
    let (status, text) = ask(&api, &continuing("more", "resp_fake"), "s-2").await;
    assert_eq!(status, 200, "answered within the organisation: {text}");
    assert_ne!(maker, "key-c", "the first session took a key of the organisation (the pool's first)");
    let sibling = if maker == "key-a" { "key-b" } else { "key-a" };
    assert_eq!(api.fake.keys_used().last().map(String::as_str), Some(sibling), "its sibling, never key-c");
}

#[tokio::test]
async fn encrypted_reasoning_keeps_a_codex_session_within_its_organisation() {
    let api = LocalApi::of_kind(ProviderKind::Openai, None, &["a", "b"]).await;
    assert_eq!(ask(&api, &responses_body("first", true), "codex-1").await.0, 200);
    let bound = api.fake.keys_used()[0].clone();
    api.fake.script(&bound, [Reply::status_with(429, &[("retry-after", "30")])]);
    // Codex with store=false sends its earlier reasoning back, encrypted for one organisation.
    let body = json!({ "model": "gpt-5", "stream": true, "store": false, "prompt_cache_key": "codex-1",
        "input": [
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "first" }] },
            { "type": "reasoning", "summary": [], "encrypted_content": "gAAAAABo-opaque" },
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "second" }] }] })
    .to_string();
    let (status, _) = ask(&api, &body, "codex-1").await;
    assert_eq!(status, 429, "not sent to another organisation, where the reasoning cannot be read");
    let used = api.fake.keys_used();
    assert!(used.iter().all(|key| *key == bound), "{used:?}");
}
