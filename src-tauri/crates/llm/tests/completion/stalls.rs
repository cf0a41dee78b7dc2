//! A relayed stream that sends no event: past its first-event deadline, with nothing sent to the
//! client, another key answers, whether the provider sent keep-alive comments or nothing; one
//! that goes quiet after it began ends with an error event in the client's words. Time is the
//! rig's clock, moved by the test.

use std::time::Duration;

use futures_util::StreamExt;
use keypool_llm::wire::{Address, Delivery, Operation, WireFormat};
use keypool_llm::{Deadlines as Limits, ForwardRequest, ForwardedBody};

use crate::support::*;

/// A Chat Completions stream relayed as it came, on any key of the rig's pool.
fn streamed(rig: &Rig) -> ForwardRequest {
    let body =
        serde_json::json!({ "model": "fake-model", "stream": true, "messages": [{ "role": "user", "content": "hi" }] });
    ForwardRequest {
        endpoint: rig.request("agent", true).endpoint,
        address: Address { format: WireFormat::OpenAiChat, operation: Operation::Reply, delivery: Delivery::Events },
        model: "fake-model".into(),
        session: keypool::SessionId::new("agent"),
        body: serde_json::to_vec(&body).unwrap().into(),
        headers: Vec::new(),
        hop: None,
        source: "test".into(),
        member: None,
        bound: None,
        answer_in: None,
    }
}

/// The whole answer's text as the client got it.
async fn read_all(body: ForwardedBody) -> String {
    let bytes = match body {
        ForwardedBody::Whole(bytes) => bytes.to_vec(),
        ForwardedBody::Stream(mut stream) => {
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk.expect("the stream goes on"));
            }
            bytes
        }
    };
    String::from_utf8(bytes).unwrap()
}

/// Waits (a bounded number of turns, no time) until the fake has seen `count` requests.
async fn seen(rig: &Rig, count: usize) {
    for _ in 0..10_000 {
        if rig.fake.seen().len() >= count {
            return;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("the fake saw {} requests, not {count}", rig.fake.seen().len());
}

/// The other key of the rig's two.
fn other(key: &str) -> &'static str {
    if key == "key-a" {
        "key-b"
    } else {
        "key-a"
    }
}

#[tokio::test]
async fn a_stream_with_no_event_by_its_deadline_goes_to_another_key_keep_alives_or_not() {
    let first_event = Limits::default().first_event;
    assert!(first_event < Duration::from_secs(60) && first_event < Limits::default().first_byte);
    for comments in [0, 3] {
        let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
        let held = Reply::KeepAlive { comments, gate: "never".into(), chunks: vec![] };
        rig.fake.always("key-a", held.clone());
        rig.fake.always("key-b", held);
        let service = rig.service.clone();
        let request = streamed(&rig);
        let forwarded = tokio::spawn(async move { service.forward(request).await });
        seen(&rig, 1).await;
        let stalled = rig.fake.seen()[0].key.clone();
        rig.fake.always(other(&stalled), Reply::text(&["from ", "the other"]));
        // A second short of the deadline: still waiting; then past it.
        deadlines.advance(first_event - Duration::from_secs(1));
        tokio::task::yield_now().await;
        assert_eq!(rig.fake.seen().len(), 1, "{comments} comments: waited for its first event");
        deadlines.advance(Duration::from_secs(1));
        let answer = forwarded.await.unwrap().expect("answered by the other key");
        assert_eq!(answer.status, 200);
        let text = read_all(answer.body).await;
        assert!(text.contains("the other") && !text.contains("keep-alive"), "only the other key's answer: {text}");
        let keys: Vec<String> = rig.fake.seen().iter().map(|s| s.key.clone()).collect();
        assert_eq!(keys, [stalled.clone(), other(&stalled).to_owned()], "{comments} comments");
    }
}

#[tokio::test]
async fn when_every_key_stalls_the_request_fails_saying_so() {
    let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1), ("b", 1)]).await;
    for key in ["key-a", "key-b"] {
        rig.fake.always(key, Reply::KeepAlive { comments: 1, gate: "never".into(), chunks: vec![] });
    }
    let service = rig.service.clone();
    let request = streamed(&rig);
    let forwarded = tokio::spawn(async move { service.forward(request).await });
    for count in 1..=2 {
        seen(&rig, count).await;
        deadlines.advance(Limits::default().first_event);
    }
    let error = forwarded.await.unwrap().err().expect("no key answered");
    assert!(error.to_string().contains("sent no event within 45 s"), "says why: {error}");
}

#[tokio::test]
async fn a_stream_that_goes_quiet_after_it_began_ends_with_an_error_event() {
    let (rig, deadlines) = Rig::with_deadlines(ProviderKind::Openai, &[("a", 1)]).await;
    rig.fake.always(
        "key-a",
        Reply::Hold { chunks_before: vec!["Half".into()], gate: "never".into(), chunks_after: vec![] },
    );
    let answer = rig.service.forward(streamed(&rig)).await.expect("it began");
    let ForwardedBody::Stream(mut stream) = answer.body else { panic!("a stream") };
    let first = stream.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Half"), "its first event reached the client");
    deadlines.pass();
    let mut rest = Vec::new();
    while let Some(chunk) = stream.next().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    let rest = String::from_utf8(rest).unwrap();
    assert!(
        rest.starts_with("data: {\"error\"") && rest.contains("broke off"),
        "an error event, in OpenAI's words: {rest}"
    );
}
