//! The wire round trip through the relay: a client's request of one format, translated for a
//! provider of another, answered by the fake in the provider's words, and read back by the
//! client's own format from what the relay wrote (whole and streamed; text, a tool call, the
//! usage, the end), for every pair of formats the local API translates.

use futures_util::StreamExt;
use keypool_llm::sse::Decoder;
use keypool_llm::wire::{translate, Address, AnswerId, Delivery, Operation, StreamPiece, WireFormat};
use keypool_llm::{ForwardRequest, ForwardedBody};

use crate::support::*;

/// A client's request in `format`: a user turn, streamed or not (Gemini says so in its path).
fn client_body(format: WireFormat, stream: bool) -> Vec<u8> {
    let body = match format {
        WireFormat::OpenAiChat => serde_json::json!({ "model": "client-model", "stream": stream,
            "messages": [{ "role": "user", "content": "hi" }] }),
        WireFormat::OpenAiResponses => serde_json::json!({ "model": "client-model", "stream": stream, "input": "hi" }),
        WireFormat::AnthropicMessages => serde_json::json!({ "model": "client-model", "stream": stream,
            "max_tokens": 64, "messages": [{ "role": "user", "content": "hi" }] }),
        WireFormat::GeminiGenerate => {
            serde_json::json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }] })
        }
    };
    serde_json::to_vec(&body).unwrap()
}

/// What the client's format reads of an answer's bytes: its text, its tool calls' names, whether
/// it ended once, and its usage.
struct Read {
    text: String,
    calls: Vec<String>,
    ends: usize,
    usage: Option<Usage>,
}

fn read_stream(client: WireFormat, bytes: &[u8]) -> Read {
    let mut decoder = Decoder::default();
    decoder.push(bytes);
    let mut read = Read { text: String::new(), calls: Vec::new(), ends: 0, usage: None };
    while let Ok(Some(event)) = decoder.next_event() {
        for piece in client.wire().stream_pieces(&event.name, &event.data) {
            match piece {
                StreamPiece::Text(text) => read.text.push_str(&text),
                StreamPiece::ToolCall { name, .. } => read.calls.push(name),
                StreamPiece::Done => read.ends += 1,
                StreamPiece::Usage(usage) => read.usage = Some(usage),
                StreamPiece::OutputTokens(output) => read.usage.get_or_insert_with(Usage::default).output = output,
                _ => {}
            }
        }
    }
    read
}

/// Every translated pair: each client format to each provider kind of another dialect, and
/// the Responses API to an OpenAI chat provider.
fn pairs() -> Vec<(WireFormat, ProviderKind)> {
    let kinds = [ProviderKind::Openai, ProviderKind::Anthropic, ProviderKind::Gemini];
    let mut pairs = Vec::new();
    for client in WireFormat::ALL {
        for kind in kinds {
            let provider = kind.row().wire;
            if provider.dialect() != client.dialect() || client == WireFormat::OpenAiResponses {
                pairs.push((client, kind));
            }
        }
    }
    pairs
}

async fn relay(rig: &Rig, client: WireFormat, stream: bool) -> (u16, Vec<u8>) {
    let provider = rig.kind.row().wire;
    let delivery = if stream { Delivery::Events } else { Delivery::Whole };
    let address = Address { format: client, operation: Operation::Reply, delivery };
    let id = AnswerId { number: 42, created: keypool::Timestamp::from_millis(1_780_000_000_000) };
    let translated = translate(address, provider, "Fake", "fake-model", &client_body(client, stream), id)
        .unwrap_or_else(|e| panic!("{client:?} → {provider:?}: {e}"));
    let endpoint = rig.request("s", stream).endpoint;
    let request = ForwardRequest {
        endpoint,
        address: translated.address,
        model: "fake-model".into(),
        session: SessionId::new("s"),
        body: translated.body,
        headers: Vec::new(),
        hop: None,
        source: "test".into(),
        member: None,
        bound: None,
        answer_in: Some(translated.answer_in),
    };
    let forwarded = rig.service.forward(request).await.expect("an answer");
    let body = match forwarded.body {
        ForwardedBody::Whole(bytes) => bytes.to_vec(),
        ForwardedBody::Stream(mut stream) => {
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk.expect("the stream goes on"));
            }
            bytes
        }
    };
    (forwarded.status, body)
}

#[tokio::test]
async fn every_translated_pair_is_read_back_in_the_clients_words() {
    for (client, kind) in pairs() {
        let rig = Rig::new(kind, &[("a", 1)]).await;
        let pair = format!("{client:?} client, {kind:?} provider");
        // Streamed: text, then a tool call.
        rig.fake.script("key-a", [Reply::text(&["Hel", "lo"])]);
        let (status, bytes) = relay(&rig, client, true).await;
        assert_eq!(status, 200, "{pair}: {}", String::from_utf8_lossy(&bytes));
        let read = read_stream(client, &bytes);
        assert_eq!(read.text, "Hello", "{pair}: the text: {}", String::from_utf8_lossy(&bytes));
        assert_eq!(read.ends, 1, "{pair}: one end: {}", String::from_utf8_lossy(&bytes));
        assert!(read.usage.is_some_and(|u| u.input > 0), "{pair}: the usage: {}", String::from_utf8_lossy(&bytes));
        rig.fake.script("key-a", [Reply::ToolCall { name: "read".into(), arguments: r#"{"path":"a"}"#.into() }]);
        let (_, bytes) = relay(&rig, client, true).await;
        let read = read_stream(client, &bytes);
        assert_eq!(read.calls, ["read"], "{pair}: the tool call: {}", String::from_utf8_lossy(&bytes));
        // Whole.
        rig.fake.script("key-a", [Reply::text(&["Hel", "lo"])]);
        let (status, bytes) = relay(&rig, client, false).await;
        assert_eq!(status, 200, "{pair}: {}", String::from_utf8_lossy(&bytes));
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("a JSON answer");
        let reply = client.wire().read_reply(&value).unwrap_or_else(|| panic!("{pair}: an answer: {value}"));
        assert_eq!(client.wire().reply_text(&value).as_deref(), Some("Hello"), "{pair}: {value}");
        assert!(reply.usage.is_some(), "{pair}: the usage: {value}");
        // A refusal, in the client's error shape.
        rig.fake.script("key-a", [Reply::Status { status: 400, headers: vec![], message: "no such model".into() }]);
        let (status, bytes) = relay(&rig, client, false).await;
        assert_eq!(status, 400, "{pair}");
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("a JSON error");
        let message = &value["error"]["message"];
        assert!(
            message.as_str().is_some_and(|m| m.contains("no such model")),
            "{pair}: in the provider's words: {value}"
        );
        if client == WireFormat::AnthropicMessages {
            assert_eq!(value["type"], "error", "{pair}: Anthropic's shape: {value}");
        }
    }
}
