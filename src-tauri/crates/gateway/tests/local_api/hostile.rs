//! Nothing a provider sends can overwhelm the relay or get a key to the client.

use crate::support::*;

/// Every run of 12 characters of `key`: none may reach the client.
fn assert_no_key(text: &str, key: &str) {
    for i in 0..=key.len() - 12 {
        assert!(!text.contains(&key[i..i + 12]), "a run of {key} reached the client: {text}");
    }
}

#[tokio::test]
async fn a_stream_that_never_ends_an_event_ends_with_an_error_event() {
    let api = LocalApi::start(&["a"]).await;
    api.fake.script("key-a", [Reply::Flood { bytes: 50 * 1024 * 1024 }]);
    let answer = api.chat(&chat_body("m", true), &[]).await;
    assert_eq!(answer.status(), 200, "the stream had begun");
    let body = answer.bytes().await.expect("the answer ends");
    let text = String::from_utf8_lossy(&body);
    assert!(body.len() < 2 * 1024 * 1024, "the event was not passed on as it grew: {} bytes", body.len());
    assert!(
        text.contains("too large"),
        "the client is told why, in its dialect: {}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(
        api.fake.flooded() < 24 * 1024 * 1024,
        "reading stopped after about 1 MiB (the rest filled socket buffers), not at 50 MB: {} bytes",
        api.fake.flooded()
    );
}

#[tokio::test]
async fn a_key_written_with_json_escapes_never_reaches_the_client() {
    let api = LocalApi::start(&["escapedleakyleaky"]).await;
    let key = "key-escapedleakyleaky";
    api.fake.script(
        key,
        [Reply::Status { status: 400, headers: vec![], message: "bad request for {key_json_escaped}".into() }],
    );
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 400, "a 400 goes back as it came");
    let body: Value = answer.json().await.expect("still JSON");
    let message = body["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert_no_key(&message, key);
    assert!(message.starts_with("bad request for "), "the provider's words stay: {message}");

    api.fake.script(
        key,
        [Reply::StreamError {
            chunks_before: vec!["Hi".into()],
            error_type: "server_error".into(),
            message: "upstream key {key_json_escaped} and {key_base64} failed".into(),
        }],
    );
    let answer = api.chat(&chat_body("m", true), &[]).await;
    let text = answer.text().await.unwrap();
    let decoded: String = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .map(|event| event.to_string())
        .collect();
    assert!(decoded.contains("failed"), "the error event is passed on: {text}");
    assert_no_key(&decoded, key);
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"));
    assert!(!decoded.contains(&encoded[8..20]), "nor its base64: {decoded}");
    assert!(text.contains("\"content\":\"Hi\""), "the text before it went as it came: {text}");
}

/// A local API client's request that the provider refuses with 403 while the key still lists its
/// models (a prompt-injected agent asking for a model the organisation may not use): one other
/// key is asked, and when it refuses too the refusal goes back as it came; no key is disabled or
/// rests.
#[tokio::test]
async fn a_forbidden_request_disables_no_key_and_goes_back_as_it_came() {
    let api = LocalApi::start(&["a", "b"]).await;
    for key in ["key-a", "key-b"] {
        api.fake.always(key, Reply::Status { status: 403, headers: vec![], message: "model not allowed".into() });
        api.fake.lists_models_for(key);
    }
    for round in 0..3 {
        let answer = api.chat(&chat_body("forbidden-model", false), &[("x-keypool-session", "agent")]).await;
        assert_eq!(answer.status(), 403, "round {round}: the provider's 403 as it came");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["error"]["message"], "model not allowed", "round {round}: in its words");
    }
    let completions: Vec<String> =
        api.fake.seen().into_iter().filter(|s| !s.path.ends_with("models")).map(|s| s.key).collect();
    assert_eq!(completions.len(), 6, "two keys a round, no third attempt: {completions:?}");
    for pair in completions.chunks(2) {
        assert_ne!(pair[0], pair[1], "each round asked both keys once: {completions:?}");
    }
    api.fake.always("key-a", Reply::text(&["fine"]));
    let answer = api.chat(&chat_body("allowed-model", false), &[("x-keypool-session", "agent")]).await;
    assert_eq!(answer.status(), 200, "a's still enabled and answers the next request");
}
