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
