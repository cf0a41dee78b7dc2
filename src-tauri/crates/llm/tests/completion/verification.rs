//! When a refusal disables a key: only when the refusal and the question the kind verifies keys
//! with (its model list, or its key answer) agree that the key is not valid. A 403 on the
//! question proves nothing, and an answer shows the key fine only where the question refuses a
//! key that cannot be valid, which each provider is asked once.

use keypool_fake_provider::NEVER_ISSUED;
use keypool_llm::NO_SUCH_KEY;

use crate::support::*;

/// How many times the fake was asked for its model list with `key`.
fn listed_with(rig: &Rig, key: &str) -> usize {
    rig.fake.seen().iter().filter(|s| s.path.ends_with("models") && s.key == key).count()
}

/// OpenAI's restricted keys without the Models permission are refused the model list (403) and
/// still chat: one request the provider refuses with a 403 (a model the project may not use)
/// must not read as every key being bad.
#[tokio::test]
async fn a_restricted_keys_403_on_a_refused_request_leaves_every_key_enabled() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1), ("c", 1)]).await;
    for label in ["a", "b", "c"] {
        let key = format!("key-{label}");
        rig.fake.restricted(&key);
        rig.fake.always(
            &key,
            Reply::Status { status: 403, headers: vec![], message: "this project may not use this model".into() },
        );
    }
    for session in ["chat-1", "chat-2", "chat-3"] {
        let (outcome, events) = rig.ask(session).await;
        match error_of(&outcome) {
            CompletionError::Provider(failure) => assert_eq!(failure.status, 403, "the provider's refusal goes back"),
            other => panic!("expected the provider's 403, got {other:?}"),
        }
        assert!(failovers(&events).is_empty(), "{session}: two keys refusing it: the request's, no key failed over");
    }
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "a 403 on the model list proves nothing: none disabled");
    for label in ["a", "b", "c"] {
        assert_eq!(rig.state_of(label).0, KeyState::Active, "{label} stays active, not even resting");
    }
}

/// A revoked key (401) whose model list the key's scope hides (403): nothing confirms the key is
/// invalid, so it rests and the request fails over, instead of being disabled.
#[tokio::test]
async fn a_401_with_the_model_list_refused_403_rests_the_key_and_fails_over() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.restricted("key-a");
    rig.fake.script("key-a", [Reply::InvalidKey]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 401)], "one failover");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "a 403 on the list does not confirm the 401");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "a rests");
}

/// Where the model list answers any key (a public list, a gateway's page), its answer says
/// nothing of a revoked key: the 401 rests the key and the request fails over, where it used to
/// be taken as the request's own refusal and fail with no failover.
#[tokio::test]
async fn a_revoked_key_behind_a_public_model_list_rests_and_the_request_fails_over() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.public_models(true);
    rig.fake.always("key-a", Reply::InvalidKey);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 401)], "one failover");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "nothing confirms the 401: not disabled");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "a rests");
    assert_eq!(listed_with(&rig, NO_SUCH_KEY), 1, "the list was asked once with a key that cannot be valid");
}

/// Where the question fails (404, 5xx, 429), each request's 403 used to rest the key and fail
/// over to the next: one refused request rested every key in turn.
#[tokio::test]
async fn a_403_whose_question_fails_rests_no_key() {
    for failing in [404, 500, 429] {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1), ("c", 1)]).await;
        for label in ["a", "b", "c"] {
            rig.fake.script(&format!("key-{label}"), [Reply::status(403), Reply::status(failing)]);
        }
        let (outcome, events) = rig.ask("chat").await;
        assert_eq!(error_of(&outcome).code(), "provider", "{failing}: the 403 goes back: {:?}", outcome.end);
        assert!(failovers(&events).is_empty(), "{failing}: not failed over");
        for label in ["a", "b", "c"] {
            assert_eq!(rig.state_of(label).0, KeyState::Active, "{failing}: {label} stays active");
        }
    }
}

/// A 401 is disabled only when the question refuses the key as invalid too; the question is
/// asked with a key that cannot be valid once per provider, whichever key was refused.
#[tokio::test]
async fn whether_a_question_checks_keys_is_learned_once_per_provider() {
    assert!(NO_SUCH_KEY.starts_with(NEVER_ISSUED), "the fake refuses the key Keypool learns with");
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1), ("c", 1)]).await;
    for label in ["a", "b", "c"] {
        let key = format!("key-{label}");
        rig.fake.lists_models_for(&key);
        rig.fake.always(&key, Reply::status(403));
    }
    for session in ["chat-1", "chat-2", "chat-3", "chat-4"] {
        rig.ask(session).await;
    }
    let refused: std::collections::HashSet<String> = rig.fake.keys_used().into_iter().collect();
    assert!(refused.len() >= 2, "several keys were refused and verified: {refused:?}");
    assert_eq!(listed_with(&rig, NO_SUCH_KEY), 1, "learned once for the provider");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "keys that list their models stay");
}

/// A 403 that names the key as invalid (`invalid_api_key`, as gateways send it) is an
/// authentication failure like a 401; a plain 403 is not.
#[test]
fn only_a_refusal_that_says_the_key_is_invalid_is_an_authentication_failure() {
    let wire = ProviderKind::Openai.wire();
    let refusal = |status: u16, code: &str| {
        let body = format!(r#"{{"error":{{"message":"no","type":"invalid_request_error","code":"{code}"}}}}"#);
        wire.refusal(status, &body, None, Default::default())
    };
    assert!(refusal(401, "whatever").says_key_invalid(), "a 401");
    assert!(refusal(403, "invalid_api_key").says_key_invalid(), "a 403 naming the key invalid");
    assert!(!refusal(403, "model_not_found").says_key_invalid(), "a plain 403 says only what this key may not do");
    assert!(!refusal(429, "rate_limit_exceeded").says_key_invalid(), "a rate limit");
}
