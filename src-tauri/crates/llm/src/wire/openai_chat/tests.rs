use super::*;
use crate::conversation::tests::asking;
use crate::conversation::{ChatMessage, ToolCall, ToolResult};
use crate::error::Failure;

fn parse_stream_event(event: &str, data: &str) -> StreamPiece {
    OpenAiChat.stream_pieces(event, data).into_iter().next().unwrap()
}

fn message(chat: &ChatMessage) -> Message {
    Conversation::of_chat(std::slice::from_ref(chat)).messages.remove(0)
}

#[test]
fn openai_delta_and_done() {
    let piece = parse_stream_event("", r#"{"choices":[{"delta":{"content":"Hi"}}]}"#);
    assert_eq!(piece, StreamPiece::Text("Hi".into()), "a delta's content is text");
    assert_eq!(parse_stream_event("", "[DONE]"), StreamPiece::Done, "[DONE] ends");
}

#[test]
fn openai_error_in_stream_maps_rate_limit() {
    let data = r#"{"error":{"message":"slow down","type":"rate_limit_exceeded","code":null}}"#;
    assert_eq!(
        parse_stream_event("", data),
        StreamPiece::Error(Failure::new(429, "slow down")),
        "a rate-limit error object counts as a 429"
    );
}

#[test]
fn usage_is_read_whole_and_from_the_last_chunk() {
    let openai = serde_json::json!({ "usage": { "prompt_tokens": 11, "completion_tokens": 3,
        "prompt_tokens_details": { "cached_tokens": 5 } } });
    assert_eq!(OpenAiChat.usage_of_reply(&openai), Some(Usage { input: 11, cached: 5, output: 3 }));
    let last_chunk = r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":5}}}"#;
    assert_eq!(
        parse_stream_event("", last_chunk),
        StreamPiece::Usage(Usage { input: 11, cached: 5, output: 2 }),
        "OpenAI's last chunk with include_usage"
    );
}

#[test]
fn an_image_is_a_data_url_part_and_plain_text_stays_a_string() {
    assert_eq!(
        content(&message(&asking())),
        json!([
            { "type": "text", "text": "<file name=\"a.rs\">\nfn main() {}\n</file>" },
            { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw==" } },
            { "type": "text", "text": "What is this?" },
        ]),
        "OpenAI: a data URL in an image_url part, the question last"
    );
    let plain = ChatMessage::new(Role::User, "hi");
    assert_eq!(content(&message(&plain)), json!("hi"), "plain text stays a string");
}

#[test]
fn tool_calls_and_results_are_written_and_streamed_calls_read() {
    let conversation = Conversation {
        messages: vec![
            Message { role: Role::User, parts: vec![Part::Text("read a.rs".into())] },
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read".into(),
                    arguments: r#"{"path":"a.rs"}"#.into(),
                })],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "call_1".into(),
                    name: "read".into(),
                    content: "fn main() {}".into(),
                    is_error: false,
                })],
            },
        ],
        ..Conversation::default()
    };
    let options = WriteOptions { stream: false, max_tokens: 64, stream_usage: false };
    let body = OpenAiChat.write_request(&conversation, "gpt", options);
    assert_eq!(
        body["messages"],
        json!([
            { "role": "user", "content": "read a.rs" },
            { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function",
                "function": { "name": "read", "arguments": "{\"path\":\"a.rs\"}" } }] },
            { "role": "tool", "tool_call_id": "call_1", "content": "fn main() {}" },
        ]),
        "a call in the assistant's tool_calls, its result a tool message"
    );
    let start = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}}]}"#;
    assert_eq!(
        OpenAiChat.stream_pieces("", start),
        [StreamPiece::ToolCall { index: 0, id: "call_1".into(), name: "read".into() }]
    );
    let more = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#;
    assert_eq!(OpenAiChat.stream_pieces("", more), [StreamPiece::ToolArguments { index: 0, json: "{\"pa".into() }]);
}
