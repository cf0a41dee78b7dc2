//! The sessions coding agents name, as the current packages send them: Claude Code's session in
//! `metadata.user_id` and its per-request billing block, which must not name a new conversation.

use keypool_llm::ProviderKind;

use crate::support::*;

/// A Claude Code request (2.1.328's shape), its session named only where the header says so.
fn claude_code_body(first_user: &str, cch: &str, session: Option<&str>) -> String {
    let mut body = json!({ "model": "claude-sonnet-4-6", "max_tokens": 64, "stream": true,
        "system": [
            { "type": "text", "text": format!("x-anthropic-billing-header: cc_version=2.1.328.593; cc_entrypoint=sdk-cli; cch={cch};") },
            { "type": "text", "text": "You are Claude Code.", "cache_control": { "type": "ephemeral" } }],
        "messages": [{ "role": "user", "content": first_user }] });
    if let Some(session) = session {
        let user_id = json!({ "device_id": "c3d4", "account_uuid": "", "session_id": session }).to_string();
        body["metadata"] = json!({ "user_id": user_id });
    }
    body.to_string()
}

async fn ask(api: &LocalApi, body: &str) -> u16 {
    let headers = [("x-api-key", TOKEN), ("anthropic-version", "2023-06-01")];
    api.post_raw("/v1/messages", body, &headers).await.0
}

#[tokio::test]
async fn claude_codes_session_in_its_metadata_keeps_a_compacted_conversation_on_its_key() {
    let api = LocalApi::of_kind(ProviderKind::Anthropic, None, &["a", "b"]).await;
    assert_eq!(ask(&api, &claude_code_body("fix the bug", "1a2b3", Some("session-1"))).await, 200);
    // After /compact the conversation starts with its summary: only the session says it is the same.
    assert_eq!(ask(&api, &claude_code_body("Summary: we fixed…", "4c5d6", Some("session-1"))).await, 200);
    assert_eq!(ask(&api, &claude_code_body("another task", "7e8f9", Some("session-2"))).await, 200);
    let used = api.fake.keys_used();
    assert_eq!(used[0], used[1], "one session, one key: {used:?}");
    assert_ne!(used[1], used[2], "another session is another conversation: {used:?}");
}

#[tokio::test]
async fn claude_codes_billing_nonce_does_not_move_a_conversation_to_another_key() {
    let api = LocalApi::of_kind(ProviderKind::Anthropic, None, &["a", "b"]).await;
    // No session id anywhere (an older client, or one that strips it): the conversation's start names it.
    let body = |cch: &str| claude_code_body("fix the bug", cch, None);
    for cch in ["1a2b3", "4c5d6", "7e8f9"] {
        assert_eq!(ask(&api, &body(cch)).await, 200);
    }
    let used = api.fake.keys_used();
    assert!(used.windows(2).all(|pair| pair[0] == pair[1]), "one conversation, one key: {used:?}");
}
