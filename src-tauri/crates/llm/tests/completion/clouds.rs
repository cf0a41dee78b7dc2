//! The clouds' and vendors' limit signals, as their refusals carry them: Azure's `retry-after-ms`
//! and its `-1` headers (unknown, not nothing left), Groq's resets written as durations, Bedrock's
//! `ThrottlingException`. Each key rests as its provider said, and the chat goes on another.

use crate::support::*;

fn cooling_for(rig: &Rig, label: &str) -> Option<i64> {
    let (state, until) = rig.state_of(label);
    assert_eq!(state, KeyState::Cooling, "{label} rests");
    until.map(|until| until.as_millis() - rig.clock.now_ts().as_millis())
}

#[tokio::test]
async fn azure_s_retry_after_ms_is_the_rest_and_its_minus_ones_are_unknown() {
    let rig = Rig::new(ProviderKind::Azure, &[("a", 1), ("b", 1)]).await;
    let unknown =
        [("x-ratelimit-limit-tokens", "-1"), ("x-ratelimit-remaining-tokens", "-1"), ("x-ratelimit-reset-tokens", "0")];
    let mut refusal = vec![("retry-after-ms", "2500"), ("retry-after", "3")];
    refusal.extend(unknown);
    rig.fake.script("key-a", [Reply::status_with(429, &refusal)]);
    let (outcome, events) = rig.ask("one").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 429)]);
    assert_eq!(cooling_for(&rig, "a"), Some(2500), "the milliseconds Azure announced, not its whole seconds");
}

#[tokio::test]
async fn groq_s_resets_written_as_durations_rest_the_key_as_long() {
    let rig = Rig::new(ProviderKind::Groq, &[("a", 1), ("b", 1)]).await;
    let headers = [
        ("x-ratelimit-limit-requests", "14400"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-reset-requests", "2m59.56s"),
        ("x-ratelimit-limit-tokens", "6000"),
        ("x-ratelimit-remaining-tokens", "5990"),
        ("x-ratelimit-reset-tokens", "100ms"),
    ];
    rig.fake.script("key-a", [Reply::status_with(429, &headers)]);
    let (outcome, _) = rig.ask("one").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    let rest = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
    let a = rest.iter().find(|k| k.label.as_deref() == Some("a")).unwrap();
    let until = a.budgets.iter().filter_map(|b| b.cooling_until.or(b.requests.map(|r| r.reset_at))).max();
    let resting = a.cooling_until.or(until).map(|u| u.as_millis() - rig.clock.now_ts().as_millis());
    assert!(
        resting.is_some_and(|ms| (179_000..=181_000).contains(&ms)),
        "the requests window's reset, 2m59.56s: {resting:?} ({a:?})"
    );
}

#[tokio::test]
async fn bedrock_s_throttling_rests_the_key_and_the_chat_goes_on() {
    let rig = Rig::new(ProviderKind::Bedrock, &[("a", 1), ("b", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::Status {
            status: 429,
            headers: vec![],
            message: "ThrottlingException: Too many tokens, please wait before trying again.".into(),
        }],
    );
    let (outcome, events) = rig.ask("one").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 429)]);
    assert!(cooling_for(&rig, "a").is_some_and(|ms| ms > 0), "a rests on the backoff ladder");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "throttling disables nothing");
}
