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

/// A 401 that the key's model list confirms. (A 403 did too before a 403 on the list proved
/// nothing: see `verification.rs`.)
#[tokio::test]
async fn auth_failures_disable_the_key_and_fail_over() {
    for status in [401] {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        // A revoked key is refused whatever it asks, its model list included.
        rig.fake.always("key-a", Reply::status(status));
        let (outcome, events) = rig.ask("chat").await;
        assert!(finished(&outcome), "{status}: b answers");
        assert_eq!(failovers(&events), [("a".to_string(), status)], "{status}: one failover");
        assert_eq!(*rig.keys.disabled.lock().unwrap(), [("id-a".to_string(), status)], "{status}: persisted once");
        assert_eq!(rig.state_of("a").0, KeyState::Disabled, "{status}: shown disabled");
        rig.ask("other").await;
        assert_eq!(rig.fake.keys_used().iter().filter(|k| *k == "key-a").count(), 1, "{status}: a is never used again");
    }
}

/// A 403 (or 401) that belongs to the request, not the key (a model the organisation may not
/// use, a scope, moderation): the key still lists its models, so it stays enabled, and the
/// request is not tried on the other keys, which would refuse it the same way.
#[tokio::test]
async fn a_refusal_the_key_survives_is_the_requests_and_disables_nothing() {
    for status in [401] {
        let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        rig.fake.script(
            "key-a",
            [Reply::Status { status, headers: vec![], message: "this organisation may not use this model".into() }],
        );
        let (outcome, events) = rig.ask("chat").await;
        match error_of(&outcome) {
            CompletionError::Provider(failure) => {
                assert_eq!(failure.status, status, "{status}: the provider's refusal goes back");
                assert_eq!(failure.message, "this organisation may not use this model", "{status}: in its words");
            }
            other => panic!("{status}: expected the provider's refusal, got {other:?}"),
        }
        assert!(failovers(&events).is_empty(), "{status}: no failover");
        assert_eq!(rig.fake.keys_used(), ["key-a"], "{status}: b was not tried");
        assert!(rig.keys.disabled.lock().unwrap().is_empty(), "{status}: nothing disabled");
        assert_eq!(rig.state_of("a").0, KeyState::Active, "{status}: a stays active");
        let models = rig.fake.seen().iter().filter(|s| s.path.ends_with("models") && s.key == "key-a").count();
        assert_eq!(models, 1, "{status}: the key was asked once, for its models");
    }
}

/// A 403 the key's check does not explain is asked of another key: when that one answers, the
/// refusal was the key's, which rests (never disabled); when a second key refuses it too, the
/// request is refused as the provider said it and no key rests.
#[tokio::test]
async fn a_403_another_key_answers_rests_the_refused_key_and_one_two_keys_refuse_rests_none() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.always(
        "key-a",
        Reply::Status { status: 403, headers: vec![], message: "this organisation may not use this model".into() },
    );
    for session in ["chat-1", "chat-2", "chat-3"] {
        let (outcome, _) = rig.ask(session).await;
        assert!(finished(&outcome), "{session}: answered by b: {:?}", outcome.end);
    }
    let used = rig.fake.keys_used();
    assert_eq!(used.iter().filter(|k| *k == "key-a").count(), 1, "a refused once, then rested: {used:?}");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "nothing disabled on a 403");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "a rests");
    assert_eq!(rig.state_of("b").0, KeyState::Active);

    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    for key in ["key-a", "key-b"] {
        rig.fake.always(key, Reply::Status { status: 403, headers: vec![], message: "flagged request".into() });
    }
    let (outcome, events) = rig.ask("chat").await;
    match error_of(&outcome) {
        CompletionError::Provider(failure) => {
            assert_eq!((failure.status, failure.message.as_str()), (403, "flagged request"))
        }
        other => panic!("expected the provider's 403, got {other:?}"),
    }
    assert!(failovers(&events).is_empty(), "no key was failed over for its own sake");
    assert_eq!(rig.fake.keys_used().len(), 2, "asked of two keys, no more");
    for label in ["a", "b"] {
        assert_eq!(rig.state_of(label).0, KeyState::Active, "{label}: the request's refusal rests no key");
    }

    // One key alone: its 403 goes back as it came.
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.always("key-a", Reply::Status { status: 403, headers: vec![], message: "flagged request".into() });
    let (outcome, _) = rig.ask("chat").await;
    assert!(matches!(error_of(&outcome), CompletionError::Provider(f) if f.status == 403), "{:?}", outcome.end);
    assert_eq!(rig.state_of("a").0, KeyState::Active);
}

/// Many requests refused together with one key: one verification, which all of them share.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_refusals_of_one_key_share_one_verification() {
    let rig = std::sync::Arc::new(Rig::new(ProviderKind::Openai, &[("a", 1)]).await);
    rig.fake.always("key-a", Reply::status(403));
    rig.fake.lists_models_for("key-a");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let rig = rig.clone();
        tasks.push(tokio::spawn(async move { rig.ask(&format!("chat-{i}")).await.0 }));
    }
    for task in tasks {
        let outcome = task.await.unwrap();
        assert_eq!(error_of(&outcome).code(), "provider", "each request gets the provider's refusal");
    }
    let models = rig.fake.seen().iter().filter(|s| s.path.ends_with("models")).count();
    assert!(models < 8, "verifications were shared, not one per refusal: {models}");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "and the key stays");
}

/// A refused key whose model list cannot say either way (the server lists none) rests instead
/// of being disabled, and the request moves to another key.
#[tokio::test]
async fn a_refusal_that_cannot_be_verified_rests_the_key() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    rig.fake.script("key-a", [Reply::status(401), Reply::status(404)]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "b answers: {:?}", outcome.end);
    assert_eq!(failovers(&events).len(), 1, "a failed over");
    assert!(rig.keys.disabled.lock().unwrap().is_empty(), "not disabled on an unverified refusal");
    assert_eq!(rig.state_of("a").0, KeyState::Cooling, "it rests");
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
    rig.fake.always("key-a", Reply::status(401)); // and refused when asked again
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
