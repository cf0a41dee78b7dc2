use crate::support::*;

#[tokio::test]
async fn a_chat_stays_on_its_key_and_chats_spread_by_weight() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    for _ in 0..3 {
        rig.ask("chat-1").await;
    }
    rig.ask("chat-2").await;
    assert_eq!(rig.fake.keys_used(), ["key-a", "key-a", "key-a", "key-b"], "chat-1 stays on a; chat-2 gets b");
}

#[tokio::test]
async fn a_chat_moves_when_its_key_is_rate_limited_and_stays_on_the_new_key() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.ask("chat").await;
    rig.fake.script("key-a", [Reply::status(429)]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "the second key answers");
    assert_eq!(outcome.key_label.as_deref(), Some("b"), "the chat failed over to b");
    let rebound = events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { rebound: true, .. }));
    assert!(rebound, "the move is flagged so the page can say the prompt cache was reset: {events:?}");
    rig.clock.advance(Duration::from_secs(120));
    rig.ask("chat").await;
    assert_eq!(rig.fake.keys_used().last().unwrap(), "key-b", "once moved, the chat stays on b");
}

#[tokio::test]
async fn released_chat_gets_a_fresh_selection() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.ask("chat").await;
    rig.service.pool().release_session(&SessionId::new("chat"));
    rig.ask("chat").await;
    assert_eq!(rig.fake.keys_used(), ["key-a", "key-b"], "after release the round-robin picks the next key");
}
