use crate::support::*;

#[tokio::test]
async fn unset_variable_is_skipped_for_the_next_key() {
    let rig = Rig::with_env(ProviderKind::Openai, &[("$MISSING", 1), ("b", 1)], MapResolver::new()).await;
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(rig.fake.keys_used(), ["key-b"], "nothing is sent with an unresolved key");
}

#[tokio::test]
async fn set_variable_is_sent_resolved() {
    let env = MapResolver::new().with("TEAM", "key-from-env");
    let rig = Rig::with_env(ProviderKind::Openai, &[("$TEAM", 1)], env).await;
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "the env key answers");
    assert_eq!(rig.fake.keys_used(), ["key-from-env"], "the variable's value is sent");
}
