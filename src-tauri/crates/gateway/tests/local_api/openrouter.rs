//! An OpenRouter provider behind the local API: OpenAI's dialect, relayed to `/api/v1`, a
//! revoked key disabled through OpenRouter's own key check.

use keypool_fake_provider::Reply;
use keypool_llm::ProviderKind;

use crate::support::*;

#[tokio::test]
async fn an_openai_client_is_relayed_to_openrouter_and_a_revoked_key_is_left_behind() {
    let api = LocalApi::of_kind(ProviderKind::Openrouter, None, &["a", "b"]).await;
    api.fake.always("key-a", Reply::InvalidKey);
    for stream in [false, true] {
        let answer = api.chat(&chat_body("openai/gpt-5", stream), &[]).await;
        assert_eq!(answer.status().as_u16(), 200, "answered (stream: {stream})");
        let text = answer.text().await.unwrap();
        assert!(text.contains("fake provider"), "the provider's answer comes back (stream: {stream}): {text}");
    }
    let seen = api.fake.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    assert!(paths.contains(&"/api/v1/chat/completions"), "relayed under OpenRouter's base URL: {paths:?}");
    assert!(paths.contains(&"/api/v1/key"), "the refused key was checked at its own answer: {paths:?}");
    let a_used = seen.iter().filter(|s| s.key == "key-a" && s.path.ends_with("completions")).count();
    assert_eq!(a_used, 1, "the revoked key was tried once, then disabled: {paths:?}");
}
