use super::*;
use crate::conversation::{ToolCall, ToolResult};

#[test]
fn a_stream_is_read_from_its_named_events() {
    let wire = OpenAiResponses;
    let delta = r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","sequence_number":4}"#;
    assert_eq!(wire.stream_pieces("response.output_text.delta", delta), [StreamPiece::Text("Hi".into())]);
    let completed = r#"{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed",
        "usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":127}}}"#;
    assert_eq!(
        wire.stream_pieces("response.completed", completed),
        [StreamPiece::Usage(Usage { input: 120, cached: 100, output: 7 }), StreamPiece::Done],
        "the usage is in response.completed, the cached tokens among the input"
    );
    let call = r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"shell","arguments":""}}"#;
    assert_eq!(
        wire.stream_pieces("response.output_item.added", call),
        [StreamPiece::ToolCall { index: 1, id: "call_9".into(), name: "shell".into() }]
    );
    let error = r#"{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":2}"#;
    assert_eq!(
        wire.stream_pieces("error", error),
        [StreamPiece::Error(Failure::new(429, "Rate limit reached"))],
        "an error event is the refusal it names"
    );
}

#[test]
fn a_conversation_is_written_as_instructions_and_input_items() {
    let conversation = Conversation {
        system: Some("be brief".into()),
        messages: vec![
            Message { role: Role::User, parts: vec![Part::Text("list files".into())] },
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "shell".into(),
                    arguments: "{}".into(),
                })],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "call_1".into(),
                    name: "shell".into(),
                    content: "a.rs".into(),
                    is_error: false,
                })],
            },
        ],
        ..Conversation::default()
    };
    let body = OpenAiResponses.write_request(
        &conversation,
        "gpt-5",
        WriteOptions { stream: true, max_tokens: 1, stream_usage: true },
    );
    assert_eq!(body["instructions"], "be brief");
    assert_eq!(
        body["input"],
        json!([
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "list files" }] },
            { "type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{}" },
            { "type": "function_call_output", "call_id": "call_1", "output": "a.rs" },
        ])
    );
    let whole = json!({ "output": [{ "type": "reasoning" }, { "type": "message", "content": [{ "type": "output_text", "text": "done" }] }] });
    assert_eq!(OpenAiResponses.reply_text(&whole).as_deref(), Some("done"), "the message's text, not the reasoning");
}
