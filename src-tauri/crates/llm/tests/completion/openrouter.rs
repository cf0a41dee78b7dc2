//! OpenRouter, a kind of its own on OpenAI's wire: its model list is public, so a key is
//! verified at `GET /api/v1/key`, whose credit figures also say when a key is used up.

use keypool_fake_provider::openrouter::Credit;
use keypool_llm::ProbeProblem;

use crate::support::*;

#[tokio::test]
async fn a_chat_goes_to_openrouter_with_a_bearer_key_under_api_v1() {
    let rig = Rig::new(ProviderKind::Openrouter, &[("a", 1)]).await;
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "OpenRouter answers: {:?}", outcome.end);
    let seen = rig.fake.seen();
    assert_eq!(seen[0].path, "/api/v1/chat/completions", "OpenAI's wire under OpenRouter's base URL");
    assert_eq!(seen[0].key, "key-a", "the key as a bearer token");
}

/// OpenRouter lists its models to anyone: a revoked key's list still answers, so only its key
/// answer can tell a revoked key from a request the provider refused.
#[tokio::test]
async fn a_revoked_key_is_disabled_though_the_model_list_is_public() {
    let rig = Rig::new(ProviderKind::Openrouter, &[("a", 1), ("b", 1)]).await;
    rig.fake.always("key-a", Reply::InvalidKey);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 401)], "one failover");
    assert_eq!(*rig.keys.disabled.lock().unwrap(), [("id-a".to_string(), 401)], "the revoked key is disabled");
    let asked: Vec<String> = rig.fake.seen().iter().map(|s| s.path.clone()).collect();
    assert!(asked.iter().any(|p| p == "/api/v1/key"), "the key was asked about itself: {asked:?}");
    assert!(!asked.iter().any(|p| p.ends_with("models")), "not the public model list: {asked:?}");
}

#[tokio::test]
async fn a_refusal_of_the_request_leaves_a_valid_key_enabled() {
    let rig = Rig::new(ProviderKind::Openrouter, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::Status { status: 403, headers: vec![], message: "model not allowed".into() }]);
    rig.fake.lists_models_for("key-a");
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers what a refused: {:?}", outcome.end);
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "the key answered about itself: nothing disabled");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "a rests, as after a 429, and comes back by itself");
}

#[tokio::test]
async fn a_key_test_shows_its_credit_and_a_used_up_key_is_out_of_credit() {
    let rig = Rig::new(ProviderKind::Openrouter, &[("a", 1), ("b", 1)]).await;
    let endpoint = rig.request("x", true).endpoint;
    rig.fake.credit("key-a", Credit { limit: Some(100.0), usage: 25.5 });
    let tested = rig.service.test_key(&endpoint, &KeyId::new("id-a"), &Secret::new("key-a")).await;
    assert!(tested.probe.ok, "a key with credit left is fine: {:?}", tested.probe);
    let credit = tested.probe.credit.expect("OpenRouter says what the key may spend");
    assert_eq!(
        (credit.limit, credit.remaining, credit.usage),
        (Some(100.0), Some(74.5), 25.5),
        "as OpenRouter counts it"
    );
    assert!(rig.service.probe_credit(&endpoint, &Secret::new("key-a"), "fake-model").await, "credit left: usable");

    rig.fake.credit("key-b", Credit { limit: Some(10.0), usage: 10.0 });
    let spent = rig.service.test_key(&endpoint, &KeyId::new("id-b"), &Secret::new("key-b")).await;
    assert_eq!(spent.probe.problem, Some(ProbeProblem::OutOfCredit), "nothing left: {:?}", spent.probe);
    assert!(!spent.disabled, "a key out of credit is not disabled");
    assert_eq!(rig.state_of("b").0, KeyState::Exhausted, "the pool rests it as out of credit");
    assert!(!rig.service.probe_credit(&endpoint, &Secret::new("key-b"), "fake-model").await, "still spent");
    let unlimited = rig.service.probe(&endpoint, &Secret::new("key-c")).await;
    assert_eq!(unlimited.credit.map(|c| c.remaining), Some(None), "no limit: nothing to run out of");
}
