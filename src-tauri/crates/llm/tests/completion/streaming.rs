use crate::support::*;

#[tokio::test]
async fn openai_reply_streams_in_pieces() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::text(&["Hel", "lo", "!"])]);
    let (outcome, events) = rig.ask("chat").await;
    assert!(finished(&outcome), "the reply completes: {:?}", outcome.end);
    assert_eq!(outcome.text, "Hello!", "the pieces join into the reply");
    let deltas: Vec<_> = events.iter().filter(|e| matches!(e, CompletionEvent::Delta { .. })).collect();
    assert_eq!(deltas.len(), 3, "each piece arrives as its own event");
    assert_eq!(outcome.key_label.as_deref(), Some("a"), "the answering key is named by its label");
    assert_eq!(rig.fake.seen()[0].path, "/v1/chat/completions", "OpenAI's path is used");
    assert!(rig.fake.seen()[0].stream, "the request asked for a stream");
}

#[tokio::test]
async fn anthropic_reply_streams_in_pieces() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::text(&["Bonjour", " !"])]);
    let (outcome, _) = rig.ask("chat").await;
    assert!(finished(&outcome), "the reply completes: {:?}", outcome.end);
    assert_eq!(outcome.text, "Bonjour !", "Anthropic's deltas join into the reply");
    assert_eq!(rig.fake.seen()[0].path, "/v1/messages", "Anthropic's path is used");
}

#[tokio::test]
async fn whole_reply_without_streaming() {
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        let rig = Rig::new(kind, &[("a", 1)]).await;
        rig.fake.script("key-a", [Reply::text(&["all ", "at once"])]);
        let (outcome, _) = rig.ask_with(rig.request("chat", false), &CancellationToken::new(), |_, _| {}).await;
        assert!(finished(&outcome), "{kind:?}: the reply completes: {:?}", outcome.end);
        assert_eq!(outcome.text, "all at once", "{kind:?}: the whole reply is read");
        assert!(!rig.fake.seen()[0].stream, "{kind:?}: no stream was asked for");
    }
}

#[tokio::test]
async fn success_clears_the_keys_failure_streak() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script("key-a", [Reply::status(429)]);
    rig.ask("one").await;
    rig.clock.advance(Duration::from_secs(61));
    let (outcome, _) = rig.ask("two").await;
    assert!(finished(&outcome), "the cooled-down key answers again");
    let status = rig.service.pool().status(&ProviderId::new("p"), rig.clock.now_ts()).unwrap();
    assert_eq!(status[0].consecutive_errors, 0, "a success clears the failure streak");
}
