use crate::support::*;

#[tokio::test]
async fn probe_reports_ok_or_the_providers_refusal_without_touching_bindings() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.ask("chat").await;
    let endpoint = rig.request("x", true).endpoint;
    let ok = rig.service.probe(&endpoint, &Secret::new("key-b")).await;
    assert!(ok.ok, "a working key probes fine: {ok:?}");
    rig.fake.script("key-b", [Reply::status(401)]);
    let refused = rig.service.probe(&endpoint, &Secret::new("key-b")).await;
    assert_eq!((refused.ok, refused.status), (false, Some(401)), "the refusal is reported: {refused:?}");
    assert!(refused.message.contains("401"), "with the provider's message: {refused:?}");
    assert_eq!(rig.state_of("b").0, KeyState::Active, "a probe changes nothing in the pool");
    rig.ask("chat").await;
    let used: HashMap<_, usize> = rig.fake.keys_used().into_iter().fold(HashMap::new(), |mut m, k| {
        *m.entry(k).or_default() += 1;
        m
    });
    assert_eq!(used.get("key-a"), Some(&2), "the chat stays on its key after probes");
}

/// A provider that never answers a model list (or a key check) holds no list, Test or import
/// past the chat's deadline for an answer to begin.
#[tokio::test]
async fn a_model_list_or_key_check_that_never_answers_ends_at_the_deadline() {
    use keypool_llm::{Breakage, KeyVerdict, ProbeProblem};
    let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1)]).await;
    let hold = || Reply::Hold { chunks_before: vec![], gate: "never".into(), chunks_after: vec![] };
    rig.fake.script("key-a", [hold(), hold(), hold()]);
    let endpoint = rig.request("x", true).endpoint;
    deadlines.pass();
    // A failure bound: before the deadline, each of these waited for ever.
    let bound = Duration::from_secs(30);
    let listed = tokio::time::timeout(bound, rig.service.list_models(&endpoint, Some(&Secret::new("key-a")))).await;
    let listed = listed.expect("the model list ends at the deadline");
    assert_eq!(listed.unwrap_err().problem, ProbeProblem::Unreachable(Breakage::Timeout), "it timed out");
    let (id, key) = (KeyId::new("id-a"), Secret::new("key-a"));
    let tested = tokio::time::timeout(bound, rig.service.test_key(&endpoint, &id, &key)).await;
    let tested = tested.expect("a Test ends at the deadline");
    assert!(!tested.disabled, "a key that could not be asked is not disabled");
    let checked = tokio::time::timeout(bound, rig.service.check_key(&endpoint, &Secret::new("key-a"))).await;
    assert_eq!(checked.expect("an import's check ends at the deadline"), KeyVerdict::Unchecked { status: None });
    assert_eq!(rig.state_of("a").0, KeyState::Active, "the pool is untouched");
}
