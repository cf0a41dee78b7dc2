//! Nothing a provider sends can overwhelm a chat: an event that never ends, an answer too large
//! to hold, a provider that goes quiet, a key repeated in forms plain matching misses.

use keypool_llm::{Breakage, Interruption};

use crate::support::*;

#[tokio::test]
async fn a_stream_that_never_ends_an_event_is_cut_off_after_a_mebibyte() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let rig = Rig::new(kind, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::Flood { bytes: 50 * 1024 * 1024 }]);
        let (outcome, _) = rig.ask("chat").await;
        assert!(
            matches!(error_of(&outcome), CompletionError::Network(Breakage::TooLarge)),
            "{kind:?}: too large, not held: {:?}",
            outcome.end
        );
        assert_eq!(rig.fake.keys_used(), ["key-a"], "{kind:?}: the request's fault, not the key's: no failover");
        assert!(
            rig.fake.flooded() < 24 * 1024 * 1024,
            "{kind:?}: the service stopped reading after about 1 MiB (the rest of what it sent filled socket buffers); the provider sent {} bytes",
            rig.fake.flooded()
        );
        assert_eq!(rig.state_of("a").0, KeyState::Active, "{kind:?}: the pool is untouched");
    }
}

/// A stream of small events without end (a runaway model, a hostile server) is read to at most
/// what a whole answer may be, then ends with an error; the text so far stands.
#[tokio::test]
async fn a_streamed_reply_past_the_most_an_answer_may_be_is_cut_off() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::Endless { piece: "x".repeat(16 * 1024) }]);
    // A failure bound: before the cap, the chat read for ever.
    let asked = tokio::time::timeout(Duration::from_secs(120), rig.ask("chat")).await;
    let (outcome, _) = asked.expect("the stream is cut off, not read for ever");
    assert!(
        matches!(error_of(&outcome), CompletionError::Interrupted(Interruption::Broken(Breakage::TooLarge))),
        "too large, after the text shown: {:?}",
        outcome.end
    );
    assert!(error_of(&outcome).to_string().contains("too large"), "in words: {}", error_of(&outcome));
    assert!(outcome.text.len() <= keypool_llm::MAX_WHOLE_ANSWER, "no more text than an answer: {}", outcome.text.len());
    assert!(outcome.text.len() > keypool_llm::MAX_WHOLE_ANSWER / 2, "the text so far stands");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "the pool is untouched");
}

#[tokio::test]
async fn a_whole_answer_too_large_to_hold_is_refused() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::Flood { bytes: 40 * 1024 * 1024 }]);
    let (outcome, _) = rig.ask_with(rig.request("chat", false), &CancellationToken::new(), |_, _| {}).await;
    assert!(
        matches!(error_of(&outcome), CompletionError::Network(Breakage::TooLarge)),
        "40 MB taken whole is more than a reply: {:?}",
        outcome.end
    );
}

#[tokio::test]
async fn a_provider_that_goes_quiet_times_out() {
    let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::Hold { chunks_before: vec!["Half".into()], gate: "never".into(), chunks_after: vec![] }],
    );
    let (outcome, _) = rig
        .ask_with(rig.request("chat", true), &CancellationToken::new(), |event, _| {
            if matches!(event, CompletionEvent::Delta { .. }) {
                deadlines.pass(); // the provider goes quiet after its first piece, past the deadline
            }
        })
        .await;
    assert!(
        matches!(error_of(&outcome), CompletionError::Interrupted(Interruption::Broken(Breakage::Timeout))),
        "quiet past the idle deadline after some text: {:?}",
        outcome.end
    );
    assert_eq!(outcome.text, "Half", "the text so far stands");

    let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1)]).await;
    deadlines.pass();
    let (outcome, _) = rig.ask("chat").await;
    assert!(
        matches!(error_of(&outcome), CompletionError::Network(Breakage::Timeout)),
        "no answer within the first-byte deadline: {:?}",
        outcome.end
    );
}

#[tokio::test]
async fn a_key_in_the_forms_gateways_repeat_it_is_masked() {
    for form in ["{key_json_escaped}", "{key_urlencoded_lower}", "{key_base64}"] {
        let rig = Rig::new(ProviderKind::Openai, &[("escapedleakyleaky", 1), ("good", 1)]).await;
        let key = "key-escapedleakyleaky";
        rig.fake.always(
            key,
            Reply::Status { status: 401, headers: vec![], message: format!("Incorrect API key provided: {form}.") },
        );
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "{form}: the good key answers");
        let failover = failovers(&events);
        assert_eq!(failover.len(), 1, "{form}: one failover");
        let message = events
            .iter()
            .find_map(|e| match e {
                CompletionEvent::Failover { message, .. } => Some(message.clone()),
                _ => None,
            })
            .unwrap();
        assert!(message.starts_with("Incorrect API key provided: "), "{form}: the provider's words stay: {message}");
        assert!(!message.contains("escapedleakyl"), "{form}: no run of the key is left: {message}");
        let encoded_middle = match form {
            "{key_base64}" => {
                use base64::Engine;
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"));
                encoded[8..20].to_owned()
            }
            "{key_urlencoded_lower}" => "escapedleakyl".to_owned(),
            _ => "escapedleakyl".to_owned(),
        };
        assert!(!message.contains(&encoded_middle), "{form}: not in its encoded form either: {message}");
    }
}
