use crate::support::*;

#[tokio::test]
async fn stop_ends_the_reply_with_the_text_so_far() {
    let rig = Rig::new(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::Hold { chunks_before: vec!["First words".into()], gate: "never".into(), chunks_after: vec![] }],
    );
    let cancel = CancellationToken::new();
    let (outcome, _) = rig
        .ask_with(rig.request("chat", true), &cancel, |event, cancel| {
            if matches!(event, CompletionEvent::Delta { .. }) {
                cancel.cancel();
            }
        })
        .await;
    assert!(matches!(outcome.end, StopReason::Cancelled), "the reply is stopped: {:?}", outcome.end);
    assert_eq!(outcome.text, "First words", "what was shown stands");
    assert_eq!(rig.state_of("a").0, KeyState::Active, "stopping is not the key's fault");
}

#[tokio::test]
async fn held_stream_finishes_when_released() {
    let rig = Rig::new(ProviderKind::Anthropic, &[("a", 1)]).await;
    rig.fake.script(
        "key-a",
        [Reply::Hold { chunks_before: vec!["wait".into()], gate: "g".into(), chunks_after: vec![" done".into()] }],
    );
    let fake = rig.fake.clone();
    let (outcome, _) = rig
        .ask_with(rig.request("chat", true), &CancellationToken::new(), move |event, _| {
            if matches!(event, CompletionEvent::Delta { .. }) {
                fake.release("g");
            }
        })
        .await;
    assert!(finished(&outcome), "the reply completes once released");
    assert_eq!(outcome.text, "wait done", "both halves arrive");
}
