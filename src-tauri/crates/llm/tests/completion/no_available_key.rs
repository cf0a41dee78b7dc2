use crate::support::*;

#[tokio::test]
async fn all_cooling_says_when_the_first_frees_up() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.always("key-a", Reply::status_with(429, &[("retry-after", "30")]));
    rig.fake.always("key-b", Reply::status_with(429, &[("retry-after", "90")]));
    let (outcome, _) = rig.ask("chat").await;
    let message = error_of(&outcome).to_string();
    assert!(message.contains("cooling down"), "says the keys are cooling: {message}");
    assert!(message.contains("in 30 s"), "says when the first frees up: {message}");

    let (outcome, _) = rig.ask("chat").await;
    assert_eq!(outcome.attempts, 0, "while all cool, nothing is sent upstream");
    assert!(error_of(&outcome).to_string().contains("cooling"), "the pool says why");
}

#[tokio::test]
async fn all_disabled_names_the_keys_to_fix() {
    let rig = Rig::new(ProviderKind::Openai, &[("prod", 1), ("backup", 1)]).await;
    rig.fake.always("key-prod", Reply::status(401));
    rig.fake.always("key-backup", Reply::status(403));
    let (outcome, _) = rig.ask("chat").await;
    let message = error_of(&outcome).to_string();
    assert_eq!(error_of(&outcome).code(), "no_available_key", "the code is no_available_key");
    assert!(message.contains("disabled"), "says the keys are disabled: {message}");
    assert!(message.contains("prod") && message.contains("backup"), "names them: {message}");
}

#[tokio::test]
async fn cooling_and_disabled_mixed_says_both() {
    let rig = Rig::new(ProviderKind::Openai, &[("fast", 1), ("revoked", 1)]).await;
    rig.fake.always("key-fast", Reply::status_with(429, &[("retry-after", "20")]));
    rig.fake.always("key-revoked", Reply::status(401));
    let (outcome, _) = rig.ask("chat").await;
    let message = error_of(&outcome).to_string();
    assert!(message.contains("in 20 s"), "says when the cooling key frees up: {message}");
    assert!(message.contains("\"revoked\""), "and names the disabled key to fix: {message}");
}

#[tokio::test]
async fn empty_pool_without_provider_key_says_to_add_one() {
    let rig = Rig::new(ProviderKind::Openai, &[]).await;
    let (outcome, _) = rig.ask("chat").await;
    let message = error_of(&outcome).to_string();
    assert!(message.contains("no API keys"), "explains the empty pool: {message}");
    assert_eq!(outcome.attempts, 0, "nothing was sent");
}
