//! Every upstream attempt is recorded for the ledger, with the usage the provider reported:
//! 11 prompt tokens (5 of them cached) per reply from the fake, in both shapes, streamed or whole.

use crate::support::*;

#[tokio::test]
async fn usage_is_read_in_both_shapes_streamed_and_whole() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        for stream in [true, false] {
            let rig = Rig::new(kind, &[("a", 1)]).await;
            rig.fake.script("key-a", [Reply::text(&["one", " two", " three"])]);
            let (outcome, _) = rig.ask_with(rig.request("chat", stream), &CancellationToken::new(), |_, _| {}).await;
            assert!(finished(&outcome), "{kind:?} stream={stream}: answered");
            let expected = Usage { input: 11, cached: 5, output: 3 };
            assert_eq!(outcome.usage, Some(expected), "{kind:?} stream={stream}: the reply's usage, input normalized");
            let attempts = rig.keys.attempts.lock().unwrap().clone();
            assert_eq!(attempts.len(), 1, "{kind:?} stream={stream}: one attempt");
            let record = &attempts[0];
            assert_eq!(
                (record.outcome, record.status, record.usage, record.key.pool_key().map(|k| k.as_str())),
                (AttemptOutcome::Ok, Some(200), Some(expected), Some("id-a")),
                "{kind:?} stream={stream}: recorded with its key, status and usage"
            );
            assert_eq!((&*record.model, record.session.as_str(), &*record.source), ("fake-model", "chat", "chat"));
            assert_eq!(record.at, START, "{kind:?} stream={stream}: sent at the service's clock");
            assert!(record.first_token_ms.is_some(), "{kind:?} stream={stream}: time to first token");
        }
    }
}

#[tokio::test]
async fn refused_attempts_are_recorded_with_their_outcome() {
    let rig = Rig::new(ProviderKind::Openai, &[("limited", 1), ("revoked", 1), ("broke", 1), ("good", 1)]).await;
    rig.fake.always("key-limited", Reply::status(429));
    rig.fake.always("key-revoked", Reply::status(401));
    rig.fake.always("key-broke", Reply::QuotaExceeded);
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "the good key answers");
    let mut outcomes: Vec<(String, AttemptOutcome, Option<u16>)> = rig
        .keys
        .attempts
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.key.pool_key().unwrap().to_string(), r.outcome, r.status))
        .collect();
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        outcomes,
        [
            ("id-broke".into(), AttemptOutcome::QuotaExhausted, Some(429)),
            ("id-good".into(), AttemptOutcome::Ok, Some(200)),
            ("id-limited".into(), AttemptOutcome::RateLimited, Some(429)),
            ("id-revoked".into(), AttemptOutcome::AuthRejected, Some(401)),
        ],
        "one record per attempt, each with how it ended"
    );
}

#[tokio::test]
async fn a_server_that_refuses_stream_options_still_streams_and_is_remembered() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.reject_stream_options(true);
    let (first, _) = rig.ask("chat").await;
    assert!(finished(&first), "the reply comes although the server refused the usage request: {:?}", first.end);
    assert_eq!(first.usage, None, "such a server reports no usage in streams");
    assert_eq!(first.attempts, 2, "asked once with stream_options, once without");
    let (second, _) = rig.ask("chat").await;
    assert_eq!(second.attempts, 1, "remembered: the next request goes without it");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "and the refusal was not held against the key");
}
