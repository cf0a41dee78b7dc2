//! Keys go only where the user sent them: a provider or gateway that repeats a key in its
//! errors gets it masked before the text goes anywhere, and a redirect to another origin is
//! never followed with a key.

use crate::support::*;

/// Every run of 12 characters of `value`: none may appear in what leaves the service.
fn runs(value: &str) -> Vec<&str> {
    (0..=value.len().saturating_sub(12)).map(|i| &value[i..i + 12]).collect()
}

fn assert_no_key(text: &str, keys: &[&str]) {
    for key in keys {
        for run in runs(key) {
            assert!(!text.contains(run), "a run of {key} leaked ({run}) into: {text}");
        }
    }
}

#[tokio::test]
async fn a_key_repeated_in_errors_is_masked_in_events_and_the_outcome() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let labels = [("echo401leakyleaky", 1), ("echostreamleaky01", 1)];
        let rig = Rig::new(kind, &labels).await;
        let (a, b) = ("key-echo401leakyleaky", "key-echostreamleaky01");
        rig.fake.always(
            a,
            Reply::Status {
                status: 401,
                headers: vec![],
                message: "Incorrect API key provided: {key}. Also known as {key_urlencoded}.".into(),
            },
        );
        rig.fake.always(
            b,
            Reply::StreamError {
                chunks_before: vec![],
                error_type: "rate_limit_error".into(),
                message: "key {key} is over its limit".into(),
            },
        );
        let (outcome, events) = rig.ask("chat").await;
        assert_eq!(
            failovers(&events).len(),
            2,
            "{kind:?}: both echoing keys were refused and failed over: {events:?} {:?}",
            outcome.end
        );
        // The rig's labels are the keys without `key-`: take them out, they are not upstream text.
        let everything = format!("{events:?} {:?} {}", outcome.end, outcome.text)
            .replace("echo401leakyleaky", "LABEL-A")
            .replace("echostreamleaky01", "LABEL-B");
        assert_no_key(&everything, &[a, b]);
        let failover_text = format!("{events:?}");
        assert!(
            failover_text.contains("Incorrect API key provided: key…eaky."),
            "{kind:?}: masked as the preview: {failover_text}"
        );
        assert_eq!(error_of(&outcome).code(), "no_available_key", "{kind:?}: no key was left");
    }
}

#[tokio::test]
async fn the_key_test_masks_a_repeated_key_too() {
    let rig = Rig::new(ProviderKind::Openai, &[("probeprobeprobe01", 1)]).await;
    let key = "key-probeprobeprobe01";
    rig.fake.always(key, Reply::Status { status: 401, headers: vec![], message: "bad key {key}".into() });
    let result = rig.service.probe(&rig.request("x", false).endpoint, &Secret::from(key)).await;
    assert_eq!(result.status, Some(401), "the refusal is reported");
    assert_no_key(&result.message, &[key]);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_and_not_held_against_the_key() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        for status in [301, 302, 307, 308] {
            let rig = Rig::new(kind, &[("moved", 1)]).await;
            let elsewhere = FakeProvider::start().await;
            rig.fake.always("key-moved", Reply::Redirect { status, to: elsewhere.url() });
            let (outcome, _) = rig.ask("chat").await;
            let message = error_of(&outcome).to_string();
            assert!(message.contains("redirected to another origin"), "{kind:?} {status}: said plainly: {message}");
            assert_eq!(error_of(&outcome).code(), "provider", "{kind:?} {status}: a provider error");
            assert!(
                elsewhere.seen().is_empty(),
                "{kind:?} {status}: nothing reached the other origin: {:?}",
                elsewhere.seen()
            );
            assert_eq!(rig.state_of("moved").0, KeyState::Active, "{kind:?} {status}: the key is not blamed");

            let probe = rig.service.probe(&rig.request("x", false).endpoint, &Secret::from("key-moved")).await;
            assert!(
                !probe.ok && probe.message.contains("another origin"),
                "{kind:?} {status}: the key test says so too"
            );
            assert!(elsewhere.seen().is_empty(), "{kind:?} {status}: the key test sent nothing there either");
        }
    }
}
