use crate::support::*;

#[tokio::test]
async fn is_used_while_the_pool_is_empty() {
    let mut rig = Rig::new(ProviderKind::Openai, &[]).await;
    rig.provider_key = Some(Secret::new("key-provider"));
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "the provider key answers");
    assert_eq!(rig.fake.keys_used(), ["key-provider"], "the provider-level key was sent");
    let attempts = rig.keys.attempts.lock().unwrap().clone();
    assert_eq!(attempts[0].key, SentWith::ProviderKey, "the ledger says so");
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

#[tokio::test]
async fn without_pool_or_provider_key_requests_go_without_a_key() {
    let rig = Rig::new(ProviderKind::Openai, &[]).await;
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "a server that needs no key answers: {:?}", outcome.end);
    assert_eq!(rig.fake.keys_used(), [""], "the request carried no key at all");
    assert!(
        events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { keyless: true, provider_level: false, .. })),
        "the page is told it goes without a key: {events:?}"
    );
    assert_eq!(outcome.key_label, None, "the reply names no key");
    let attempts = rig.keys.attempts.lock().unwrap().clone();
    assert_eq!(attempts.len(), 1, "the attempt is in the ledger");
    assert_eq!(attempts[0].key, SentWith::NoKey, "as sent without a key, not with the provider-level key");
}

#[tokio::test]
async fn anthropic_without_a_key_still_sends_its_version_header() {
    let rig = Rig::new(ProviderKind::Anthropic, &[]).await;
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "answered: {:?}", outcome.end);
    let seen = rig.fake.seen();
    let completion = seen.iter().find(|s| !s.path.ends_with("models")).expect("a completion was sent");
    assert_eq!(completion.key, "", "no key");
    assert_eq!(completion.anthropic_version.as_deref(), Some("2023-06-01"), "the version header goes all the same");
}
