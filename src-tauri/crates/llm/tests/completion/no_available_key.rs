//! When no key can take a request, the error says why, key by key: which rest and until when,
//! which are disabled (and after what), and the last answer. The UI words it from this.

use crate::support::*;

/// A `no_available_key` outcome's keys with what stops each, when the first frees up, and the
/// last answer.
type Blocked = (Vec<(String, Blocker)>, Option<Timestamp>, Option<(u16, String)>);

fn blocked(outcome: &CompletionOutcome) -> Blocked {
    match error_of(outcome) {
        CompletionError::NoAvailableKey(NoKey {
            why: NoKeyReason::Blocked(Unavailability::Blocked { keys, first_free_at }),
            last,
            ..
        }) => (keys.iter().map(|k| (k.name.clone(), k.why)).collect(), *first_free_at, last.clone()),
        other => panic!("expected no_available_key with blocked keys, got {other:?}"),
    }
}

#[tokio::test]
async fn all_cooling_says_when_each_frees_up() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.always("key-a", Reply::status_with(429, &[("retry-after", "30")]));
    rig.fake.always("key-b", Reply::status_with(429, &[("retry-after", "90")]));
    let (outcome, _) = rig.ask("chat").await;
    let (keys, first_free_at, last) = blocked(&outcome);
    assert_eq!(
        keys,
        [
            ("a".into(), Blocker::Cooling { until: START + Duration::from_secs(30) }),
            ("b".into(), Blocker::Cooling { until: START + Duration::from_secs(90) })
        ],
        "each key with until when it rests"
    );
    assert_eq!(first_free_at, Some(START + Duration::from_secs(30)), "the first frees up in 30 s");
    assert_eq!(last.map(|(status, _)| status), Some(429), "and the last answer");
    assert!(error_of(&outcome).to_string().contains("resting"), "the English fallback says so too");

    let (outcome, _) = rig.ask("chat").await;
    assert_eq!(outcome.attempts, 0, "while all cool longer than the wait allowed, nothing is sent upstream");
    assert_eq!(error_of(&outcome).code(), "no_available_key", "the pool says why");
}

#[tokio::test]
async fn all_disabled_names_the_keys_to_fix() {
    let rig = Rig::new(ProviderKind::Openai, &[("prod", 1), ("backup", 1)]).await;
    rig.fake.always("key-prod", Reply::status(401));
    // A 403 no longer disables (it proves nothing of the key): both are refused as invalid.
    rig.fake.always("key-backup", Reply::InvalidKey);
    let (outcome, _) = rig.ask("chat").await;
    assert_eq!(error_of(&outcome).code(), "no_available_key", "the code is no_available_key");
    let (keys, first_free_at, _) = blocked(&outcome);
    assert_eq!(
        keys,
        [
            ("prod".into(), Blocker::Disabled { status: Some(401) }),
            ("backup".into(), Blocker::Disabled { status: Some(401) })
        ],
        "names them, with what the provider answered"
    );
    assert_eq!(first_free_at, None, "none frees up by itself");
}

#[tokio::test]
async fn cooling_and_disabled_mixed_says_both() {
    let rig = Rig::new(ProviderKind::Openai, &[("fast", 1), ("revoked", 1)]).await;
    // Longer than the request may wait (20 s): it fails now rather than wait.
    rig.fake.always("key-fast", Reply::status_with(429, &[("retry-after", "30")]));
    rig.fake.always("key-revoked", Reply::status(401));
    let (outcome, _) = rig.ask("chat").await;
    let (keys, _, _) = blocked(&outcome);
    assert_eq!(
        keys,
        [
            ("fast".into(), Blocker::Cooling { until: START + Duration::from_secs(30) }),
            ("revoked".into(), Blocker::Disabled { status: Some(401) })
        ],
        "when the cooling key frees up, and which to fix"
    );
}

#[tokio::test]
async fn empty_pool_without_provider_key_says_to_add_one_when_the_provider_wants_a_key() {
    let rig = Rig::new(ProviderKind::Openai, &[]).await;
    // The request goes without a key (local servers need none); this provider wants one.
    rig.fake.always("", Reply::status(401));
    let (outcome, _) = rig.ask("chat").await;
    let error = error_of(&outcome);
    assert!(
        matches!(error, CompletionError::NoAvailableKey(NoKey { why: NoKeyReason::Empty, last: Some((401, _)), .. })),
        "explains the empty pool, with what the provider said: {:?}",
        outcome.end
    );
    assert!(error.to_string().contains("no API keys"), "in the fallback words too: {error}");
    assert_eq!(outcome.attempts, 1, "one request was sent, without a key");
    assert_eq!(outcome.key_label, None, "a request without a key names none");
}

#[tokio::test]
async fn a_provider_elsewhere_with_no_key_at_all_is_not_asked() {
    // OpenAI with no key: before, the request went without one and, offline, ended as "could
    // not connect", where the user needs to hear that the provider has no key.
    let rig = Rig::new(ProviderKind::Openai, &[]).await;
    let mut request = rig.request("chat", true);
    request.endpoint.name = "OpenAI".into();
    request.endpoint.base_url = "https://api.openai.invalid/v1".into();
    let (outcome, events) = rig.ask_with(request, &CancellationToken::new(), |_, _| {}).await;
    let error = error_of(&outcome);
    assert!(
        matches!(error, CompletionError::NoAvailableKey(NoKey { why: NoKeyReason::Empty, last: None, .. })),
        "the empty pool is the reason, with no answer to quote: {:?}",
        outcome.end
    );
    assert_eq!(error.code(), "no_available_key", "the code the UI words");
    assert!(error.to_string().starts_with("OpenAI has no API keys"), "named in the fallback words: {error}");
    assert_eq!(outcome.attempts, 0, "nothing was sent");
    assert!(
        !events.iter().any(|e| matches!(e, CompletionEvent::KeySelected { .. })),
        "no key, not even none, was selected: {events:?}"
    );
    assert!(rig.keys.attempts.lock().unwrap().is_empty(), "and no attempt is in the ledger");
}
