//! The local API's Gemini dialect over real HTTP, against the fake provider: the local token in
//! `x-goog-api-key` or `?key=`, the three methods (streams with and without `alt=sse`), the model
//! list, errors in Google's shape, failover before the first byte, and the ledger.

use keypool_fake_provider::gemini::PER_MINUTE_QUOTA;
use keypool_llm::ProviderKind;

use crate::support::*;

const BODY: &str =
    r#"{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;

/// The local API over a Gemini provider serving `fake-model`, with keys `key-a` and `key-b`.
async fn rig() -> Rig {
    Rig(LocalApi::of_kind(ProviderKind::Gemini, Some(&["fake-model"]), &["a", "b"]).await)
}

struct Rig(LocalApi);

impl std::ops::Deref for Rig {
    type Target = LocalApi;
    fn deref(&self) -> &LocalApi {
        &self.0
    }
}

impl Rig {
    async fn post(&self, path: &str, token_header: bool) -> (u16, String, Option<String>) {
        let headers: &[(&str, &str)] = if token_header { &[("x-goog-api-key", TOKEN)] } else { &[] };
        self.post_raw(path, BODY, headers).await
    }
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test]
async fn generate_content_goes_through_the_pool_with_a_pooled_key() {
    let rig = rig().await;
    let (status, body, _) = rig.post("/v1beta/models/fake-model:generateContent", true).await;
    assert_eq!(status, 200, "answered: {body}");
    let reply = json(&body);
    assert_eq!(
        reply["candidates"][0]["content"]["parts"][0]["text"], "Hello from the fake provider.",
        "the provider's answer as it came"
    );
    let seen = &rig.fake.seen()[0];
    assert_eq!(seen.key, "key-a", "upstream got a pooled key, not the local token");
    assert_eq!(seen.body, BODY, "the body went upstream byte for byte");
    assert_eq!(seen.path, "/v1beta/models/fake-model:generateContent");
    let usage = rig.attempts()[0].usage;
    assert_eq!(usage.map(|u| (u.input, u.cached)), Some((11, 5)), "the ledger read the usage");
}

#[tokio::test]
async fn a_streamed_answer_comes_as_sse_with_alt_sse_and_as_one_json_array_without() {
    let rig = rig().await;
    let (status, body, _) =
        rig.post(&format!("/v1beta/models/fake-model:streamGenerateContent?alt=sse&key={TOKEN}"), false).await;
    assert_eq!(status, 200, "the ?key= token passes: {body}");
    let events: Vec<Value> = body.split("\r\n\r\n").filter_map(|e| e.strip_prefix("data: ")).map(json).collect();
    assert_eq!(events.len(), 4, "three pieces and the finish: {body}");
    assert_eq!(events[3]["candidates"][0]["finishReason"], "STOP");
    let (status, body, _) = rig.post("/v1beta/models/fake-model:streamGenerateContent", true).await;
    assert_eq!(status, 200);
    let array = json(&body);
    assert_eq!(array.as_array().map(Vec::len), Some(4), "one JSON array of the same four responses: {body}");
    assert_eq!(rig.fake.seen()[1].path, "/v1beta/models/fake-model:streamGenerateContent", "asked upstream as such");
    let attempts = rig.attempts();
    assert!(
        attempts.iter().all(|a| a.usage.is_some_and(|u| u.output == 3 + 2)),
        "both streams' usage reached the ledger: {attempts:?}"
    );
}

#[tokio::test]
async fn count_tokens_and_the_model_list_speak_gemini() {
    let rig = rig().await;
    let (status, body, _) = rig.post("/v1beta/models/fake-model:countTokens", true).await;
    assert_eq!(status, 200, "{body}");
    assert!(json(&body)["totalTokens"].as_u64().is_some(), "Google's count: {body}");
    assert_eq!(rig.fake.seen()[0].path, "/v1beta/models/fake-model:countTokens", "relayed to the model's method");
    let models = rig.get_json("/v1beta/models", &[("x-goog-api-key", TOKEN)]).await;
    let model = &models["models"][0];
    assert_eq!(model["name"], "models/fake-model", "Google's list format: {models}");
    let methods = model["supportedGenerationMethods"].as_array().unwrap();
    assert!(methods.iter().any(|m| m == "generateContent"), "a client filtering by method keeps it");
}

#[tokio::test]
async fn googles_stable_version_v1_is_served_as_v1beta_is() {
    // `@google/genai` calls `/v1/...` unless told `apiVersion`; the model list shares its path
    // with OpenAI's and Anthropic's, and Google's way of sending the token says which is meant.
    let rig = rig().await;
    let (status, body, _) = rig.post("/v1/models/fake-model:generateContent", true).await;
    assert_eq!(status, 200, "answered: {body}");
    assert_eq!(json(&body)["candidates"][0]["content"]["parts"][0]["text"], "Hello from the fake provider.");
    let (status, body, _) =
        rig.post(&format!("/v1/models/fake-model:streamGenerateContent?alt=sse&key={TOKEN}"), false).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("data: "), "SSE, as asked: {body}");
    let paths: Vec<String> = rig.fake.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        ["/v1beta/models/fake-model:generateContent", "/v1beta/models/fake-model:streamGenerateContent"],
        "upstream they go to v1beta, which serves every v1 request"
    );
    let google = rig.get_json("/v1/models", &[("x-goog-api-key", TOKEN)]).await;
    assert_eq!(google["models"][0]["name"], "models/fake-model", "Google's list for Google's header: {google}");
    let by_query = rig.get_json(&format!("/v1/models?key={TOKEN}"), &[]).await;
    assert_eq!(by_query["models"][0]["name"], "models/fake-model", "and for ?key=: {by_query}");
    let bearer = format!("Bearer {TOKEN}");
    let openai = rig.get_json("/v1/models", &[("authorization", bearer.as_str())]).await;
    assert_eq!(
        openai["data"],
        json("[]"),
        "an OpenAI client gets OpenAI's list, of OpenAI-compatible models: {openai}"
    );
    let (status, body, _) = rig.post("/v1/models/fake-model:embedContent", true).await;
    assert_eq!(
        (status, json(&body)["error"]["status"].as_str()),
        (404, Some("NOT_FOUND")),
        "a method not served: {body}"
    );
}

#[tokio::test]
async fn errors_are_in_googles_shape() {
    let rig = rig().await;
    let (status, body, _) = rig.post("/v1beta/models/fake-model:generateContent", false).await;
    assert_eq!(status, 401, "no token");
    assert_eq!(json(&body)["error"]["status"], "UNAUTHENTICATED", "{body}");
    let (status, body, _) = rig.post("/v1beta/models/other-model:generateContent", true).await;
    assert_eq!(status, 404, "unknown model");
    assert_eq!(json(&body)["error"]["code"], 404, "{body}");
    let (status, body, _) = rig.post("/v1beta/models/fake-model:embedContent", true).await;
    assert_eq!((status, json(&body)["error"]["status"].as_str()), (404, Some("NOT_FOUND")), "a method not served");
    assert!(rig.fake.seen().is_empty(), "nothing went upstream");
}

#[tokio::test]
async fn a_refused_key_fails_over_before_the_first_byte() {
    let rig = rig().await;
    let refusal = Reply::QuotaRefused { quota_id: PER_MINUTE_QUOTA.into(), retry_delay: Some("30s".into()) };
    rig.fake.script("key-a", [refusal]);
    let (status, body, _) = rig.post("/v1beta/models/fake-model:generateContent", true).await;
    assert_eq!(status, 200, "b answered; the client never saw a's 429: {body}");
    assert_eq!(rig.fake.keys_used(), ["key-a", "key-b"], "a refused, b answered");
}

#[tokio::test]
async fn every_key_resting_is_a_429_in_googles_words_with_when_to_come_back() {
    let rig = rig().await;
    for key in ["key-a", "key-b"] {
        rig.fake
            .always(key, Reply::QuotaRefused { quota_id: PER_MINUTE_QUOTA.into(), retry_delay: Some("300s".into()) });
    }
    let (status, body, retry_after) = rig.post("/v1beta/models/fake-model:generateContent", true).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(json(&body)["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
    assert_eq!(retry_after.as_deref(), Some("300"), "when the first key's model is free again");
}
