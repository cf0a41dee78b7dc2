use keypool::{Announced, FailureKind};

use super::*;
use crate::conversation::tests::asking;
use crate::conversation::ChatMessage;

/// A 429 as Google sends it, naming `quota_id` and `delay`.
fn quota_429(quota_id: &str, delay: &str) -> String {
    json!({ "error": { "code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": "You exceeded your current quota, please check your plan and billing details. Please retry in 37.8s.",
        "details": [
            { "@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": quota_id,
                "quotaDimensions": { "location": "global", "model": "gemini-2.0-flash" }, "quotaValue": "15" }] },
            { "@type": "type.googleapis.com/google.rpc.Help", "links": [] },
            { "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay }] } })
    .to_string()
}

#[test]
fn each_refusal_means_what_the_table_says() {
    let per_minute = [
        ("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "37s", 37_000, "requests: RetryInfo's delay"),
        ("GenerateContentInputTokensPerModelPerMinute-FreeTier", "2.500s", 2_500, "input tokens, fractions read"),
    ];
    for (quota_id, delay, ms, why) in per_minute {
        let minute = refusal(429, &quota_429(quota_id, delay), None);
        let retry_after = Some(Duration::from_millis(ms));
        let rest =
            FailureKind::RateLimited { retry_after, announced: Announced::default(), quota: Some(Quota::PerMinute) };
        assert_eq!(minute.pool_kind(), Some(rest), "a per-minute quota rests the model: {why}");
        assert!(!minute.out_of_credit, "the billing words of a 429 never mean out of credit");
    }
    let day = refusal(429, &quota_429("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "0s"), None);
    assert!(
        matches!(day.pool_kind(), Some(FailureKind::RateLimited { quota: Some(Quota::PerDay), .. })),
        "a per-day quota, whatever its 0s delay"
    );
    let bare = r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}"#;
    assert_eq!(
        refusal(429, bare, None).pool_kind(),
        Some(FailureKind::RateLimited { retry_after: None, announced: Announced::default(), quota: None }),
        "no QuotaFailure: a rate limit on the ladder"
    );
    let invalid = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
        "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#;
    let invalid = refusal(400, invalid, None);
    assert_eq!(invalid.pool_kind(), Some(FailureKind::AuthRejected), "an invalid key is refused like a 401");
    assert_eq!(invalid.message, "API key not valid. Please pass a valid API key.", "in Google's words");
    let bad = r#"{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}"#;
    assert_eq!(refusal(400, bad, None).pool_kind(), None, "any other 400 is the request's fault");
    let denied = r#"{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}"#;
    assert_eq!(refusal(403, denied, None).pool_kind(), Some(FailureKind::AuthRejected), "403 as for the others");
    for status in [500, 503] {
        let overloaded = r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#;
        assert!(
            matches!(refusal(status, overloaded, None).pool_kind(), Some(FailureKind::RateLimited { quota: None, .. })),
            "{status} rests the key briefly, as Anthropic's 529"
        );
    }
    assert_eq!(refusal(404, "not json", None).pool_kind(), None, "a 404 is nothing to the pool");
}

#[test]
fn a_stream_event_carries_text_usage_and_its_end_at_once() {
    let last = r#"{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP"}],
        "usageMetadata":{"promptTokenCount":11,"cachedContentTokenCount":5,"candidatesTokenCount":2,"thoughtsTokenCount":3}}"#;
    assert_eq!(
        stream_pieces(last),
        [
            StreamPiece::Text("lo".into()),
            StreamPiece::Usage(Usage { input: 11, cached: 5, output: 5 }),
            StreamPiece::Done
        ],
        "output counts the thoughts; the prompt includes the cached tokens"
    );
    let thought = r#"{"candidates":[{"content":{"parts":[{"text":"hmm","thought":true},{"text":"Hi"}]}}]}"#;
    assert_eq!(stream_pieces(thought), [StreamPiece::Text("Hi".into())], "thoughts are not the reply");
    let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}"#;
    assert_eq!(
        stream_pieces(blocked),
        [StreamPiece::Usage(Usage { input: 4, cached: 0, output: 0 }), StreamPiece::Broken(Breakage::PromptBlocked)],
        "a blocked prompt ends the attempt as blocked"
    );
    let stopped = r#"{"candidates":[{"content":{"parts":[{"text":"par"}]},"finishReason":"SAFETY"}]}"#;
    assert_eq!(
        stream_pieces(stopped),
        [StreamPiece::Text("par".into()), StreamPiece::Broken(Breakage::ReplyBlocked)],
        "a reply stopped by the safety filter ends as blocked, its text so far kept"
    );
    let error = quota_429("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "7s");
    let pieces = stream_pieces(&error);
    let [StreamPiece::Error(failure)] = pieces.as_slice() else {
        panic!("an error object is one refusal: {pieces:?}");
    };
    assert_eq!(failure.status, 429, "its code is its status");
    assert!(matches!(failure.pool_kind(), Some(FailureKind::RateLimited { quota: Some(Quota::PerMinute), .. })));
}

#[test]
fn requests_are_addressed_and_shaped_as_google_documents() {
    assert_eq!(generate_path("gemini-2.0-flash", false), "v1beta/models/gemini-2.0-flash:generateContent");
    assert_eq!(
        generate_path("models/gemini-2.0-flash", true),
        "v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
        "a models/ prefix is dropped; streams ask for SSE"
    );
    assert_eq!(model_path("a/b?c", "countTokens"), "v1beta/models/a%2Fb%3Fc:countTokens", "one path segment");
    let messages = [
        ChatMessage::new(Role::System, "be brief"),
        ChatMessage::new(Role::User, "hi"),
        ChatMessage::new(Role::Assistant, "hello"),
    ];
    assert_eq!(
        body(&Conversation::of_chat(&messages)),
        json!({ "systemInstruction": { "parts": [{ "text": "be brief" }] },
                "contents": [{ "role": "user", "parts": [{ "text": "hi" }] },
                             { "role": "model", "parts": [{ "text": "hello" }] }] }),
        "the system prompt apart, the assistant as `model`"
    );
}

#[test]
fn model_pages_keep_only_models_that_generate_content() {
    let page = json!({ "models": [
        { "name": "models/gemini-2.0-flash", "supportedGenerationMethods": ["generateContent", "countTokens"] },
        { "name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"] }],
        "nextPageToken": "p2" });
    assert_eq!(models_page(&page), Some((vec!["gemini-2.0-flash".into()], Some("p2".into()))), "embedders left out");
    let last = json!({ "models": [], "nextPageToken": "" });
    assert_eq!(models_page(&last), Some((vec![], None)), "an empty token is the last page");
}

#[test]
fn an_image_is_inline_data() {
    let message = Conversation::of_chat(&[asking()]).messages.remove(0);
    assert_eq!(
        parts(&message)[1],
        json!({ "inlineData": { "mimeType": "image/png", "data": "iVBORw==" } }),
        "Gemini: inlineData"
    );
}
