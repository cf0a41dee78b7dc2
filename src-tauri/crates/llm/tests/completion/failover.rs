use crate::support::*;

#[tokio::test]
async fn rate_limit_cools_the_key_and_retries_at_once_on_the_next() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::status(429)]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers after a's 429: {:?}", outcome.end);
    assert_eq!(outcome.attempts, 2, "two requests went upstream");
    assert_eq!(failovers(&events), [("a".to_string(), 429)], "the page is told about the failover");
    assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + Duration::from_secs(60))), "60 s backoff");
}

#[tokio::test]
async fn announced_waits_set_the_cooldown() {
    let cases: [(&[(&str, &str)], Duration); 3] = [
        (&[("retry-after", "7")], Duration::from_secs(7)),
        (&[("retry-after-ms", "2500")], Duration::from_millis(2500)),
        (&[("x-ratelimit-reset-requests", "1m30s")], Duration::from_secs(90)),
    ];
    for (headers, wait) in cases {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status_with(429, headers)]);
        rig.ask("chat").await;
        assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + wait)), "{headers:?} sets the cooldown");
    }
}

#[tokio::test]
async fn anthropic_reset_header_sets_the_cooldown() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
    let reset = humantime_like(START + Duration::from_secs(42));
    rig.fake.script("key-a", [Reply::status_with(429, &[("anthropic-ratelimit-requests-reset", &reset)])]);
    rig.ask("chat").await;
    assert_eq!(rig.state_of("a"), (KeyState::Cooling, Some(START + Duration::from_secs(42))), "reset instant");
}

fn humantime_like(at: Timestamp) -> String {
    // RFC 3339 in UTC, as Anthropic sends it; Timestamp's Display is exactly that.
    at.to_string()
}

#[tokio::test]
async fn overloaded_529_cools_like_429() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::status(529)]);
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "529 cools the key");
}

#[tokio::test]
async fn auth_failures_disable_the_key_and_fail_over() {
    for status in [401, 403] {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script("key-a", [Reply::status(status)]);
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "{status}: b answers");
        assert_eq!(failovers(&events), [("a".to_string(), status)], "{status}: one failover");
        assert_eq!(*rig.keys.disabled.lock().unwrap(), [("id-a".to_string(), status)], "{status}: persisted once");
        assert_eq!(rig.state_of("a").0, KeyState::Disabled, "{status}: shown disabled");
        rig.ask("other").await;
        assert_eq!(rig.fake.keys_used().iter().filter(|k| *k == "key-a").count(), 1, "{status}: a is never used again");
    }
}

#[tokio::test]
async fn error_event_before_the_first_token_counts_as_the_matching_failure() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::StreamError {
            chunks_before: vec![],
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        }],
    );
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers after a's in-stream overload: {:?}", outcome.end);
    assert_eq!(failovers(&events), [("a".to_string(), 529)], "overloaded_error is a 529");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "and cools the key");

    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::StreamError {
            chunks_before: vec![],
            error_type: "authentication_error".into(),
            message: "bad key".into(),
        }],
    );
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers after a's in-stream auth error");
    assert_eq!(rig.state_of("a").0, KeyState::Disabled, "an in-stream auth error disables the key");
}

#[tokio::test]
async fn failure_after_text_ends_the_reply_without_repeating_it() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::Drop { chunks_before: vec!["Partial".into(), " answer".into()] }]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Interrupted(_)), "a cut-off reply is an interruption");
    assert_eq!(outcome.text, "Partial answer", "the text so far stands");
    assert_eq!(rig.fake.keys_used(), ["key-a"], "no retry, so no text is sent twice");
    assert!(failovers(&events).is_empty(), "no failover after text");

    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1), ("b", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::StreamError {
            chunks_before: vec!["Half".into()],
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        }],
    );
    let (outcome, _) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Interrupted(_)), "an error after text ends the reply");
    assert_eq!(outcome.text, "Half", "the text so far stands");
    assert_eq!(rig.fake.keys_used().len(), 1, "no retry after text");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "the pool still learns of the overload");
}

#[tokio::test]
async fn other_statuses_fail_without_touching_the_pool() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::status(500)]);
    let (outcome, _) = rig.ask("chat").await;
    match error_of(&outcome) {
        CompletionError::Provider(failure) => assert_eq!(failure.status, 500, "the status is reported"),
        other => panic!("expected a provider error, got {other:?}"),
    }
    assert_eq!(rig.fake.keys_used(), ["key-a"], "a 500 is not retried on another key");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "and changes nothing in the pool");
}

#[tokio::test]
async fn dropped_connection_before_text_is_a_network_error() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::Drop { chunks_before: vec![] }]);
    let (outcome, _) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Network(_)), "got {:?}", outcome.end);
}

#[tokio::test]
async fn each_key_is_tried_at_most_once_per_request() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 2), ("c", 1)]).await;
    for key in ["key-a", "key-b", "key-c"] {
        rig.fake.always(key, Reply::status(429));
    }
    let (outcome, events) = rig.ask("chat").await;
    assert_eq!(outcome.attempts, 3, "three keys, three attempts");
    let mut used = rig.fake.keys_used();
    used.sort();
    assert_eq!(used, ["key-a", "key-b", "key-c"], "each key exactly once");
    assert_eq!(failovers(&events).len(), 3, "each refusal is reported");
    assert_eq!(error_of(&outcome).code(), "no_available_key", "then no key is left");
}
