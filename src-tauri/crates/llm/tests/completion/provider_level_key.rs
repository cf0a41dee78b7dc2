use crate::support::*;

#[tokio::test]
async fn is_used_while_the_pool_is_empty() {
    let mut rig = Rig::new(ProviderKind::Openai, &[]).await;
    rig.provider_key = Some(Secret::new("key-provider"));
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "the provider key answers");
    assert_eq!(rig.fake.keys_used(), ["key-provider"], "the provider-level key was sent");
    assert!(
        events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { provider_level: true, .. })),
        "the page is told it is the provider key"
    );
}

#[tokio::test]
async fn is_not_used_when_the_pool_has_entries() {
    let mut rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.provider_key = Some(Secret::new("key-provider"));
    rig.fake.always("key-a", Reply::status(429));
    let (outcome, _) = rig.ask("chat").await;
    assert_eq!(rig.fake.keys_used(), ["key-a"], "the pool takes priority, even when all its keys cool");
    assert_eq!(error_of(&outcome).code(), "no_available_key", "and its reason is reported");
}
