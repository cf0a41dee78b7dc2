use super::*;
use crate::conversation::tests::asking;
use crate::error::Failure;

fn parse_stream_event(event: &str, data: &str) -> StreamPiece {
    AnthropicMessages.stream_pieces(event, data).into_iter().next().unwrap()
}

#[test]
fn deltas_are_written_as_their_values_were() {
    let mut writer = AnthropicMessages.stream_writer("m");
    let mut out = Vec::new();
    writer.piece(&StreamPiece::Text("caf\u{e9} \"quoted\"\n".into()), &mut out);
    writer.piece(&StreamPiece::ToolCall { index: 0, id: "c".into(), name: "read".into() }, &mut out);
    writer.piece(&StreamPiece::ToolArguments { index: 0, json: r#"{"path":"#.into() }, &mut out);
    let text = json!({ "type": "content_block_delta", "index": 0,
        "delta": { "type": "text_delta", "text": "caf\u{e9} \"quoted\"\n" } });
    let arguments = json!({ "type": "content_block_delta", "index": 1,
        "delta": { "type": "input_json_delta", "partial_json": r#"{"path":"# } });
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(&format!("event: content_block_delta\ndata: {text}\n\n")), "the text's: {out}");
    assert!(out.contains(&format!("event: content_block_delta\ndata: {arguments}\n\n")), "the call's: {out}");
}

#[test]
fn claude_codes_billing_block_is_not_carried_to_another_provider() {
    let body = json!({ "model": "m", "max_tokens": 8, "messages": [{ "role": "user", "content": "hi" }],
        "system": [{ "type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.593; cch=1a2b3;" },
            { "type": "text", "text": "You are Claude Code." }] });
    let request = AnthropicMessages.read_request(&body).unwrap();
    assert_eq!(request.conversation.system.as_deref(), Some("You are Claude Code."), "the prompt, without the nonce");
}

#[test]
fn anthropic_overloaded_error_in_stream_is_529() {
    let data = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let piece = parse_stream_event("error", data);
    assert_eq!(piece, StreamPiece::Error(Failure::new(529, "Overloaded")), "overloaded is 529");
}

#[test]
fn anthropic_text_delta_and_stop() {
    let data = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"yo"}}"#;
    assert_eq!(parse_stream_event("content_block_delta", data), StreamPiece::Text("yo".into()));
    assert_eq!(parse_stream_event("message_stop", r#"{"type":"message_stop"}"#), StreamPiece::Done);
}

#[test]
fn usage_is_read_whole_and_from_the_stream() {
    let anthropic = serde_json::json!({ "usage": { "input_tokens": 4, "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 2, "output_tokens": 3 } });
    assert_eq!(
        AnthropicMessages.usage_of_reply(&anthropic),
        Some(Usage { input: 11, cached: 5, output: 3 }),
        "Anthropic's input excludes the cache: the total prompt is input + cache read + cache creation"
    );
    let start = r#"{"type":"message_start","message":{"usage":{"input_tokens":6,"cache_read_input_tokens":5,"output_tokens":1}}}"#;
    assert_eq!(
        parse_stream_event("message_start", start),
        StreamPiece::Usage(Usage { input: 11, cached: 5, output: 1 })
    );
    let delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#;
    assert_eq!(parse_stream_event("message_delta", delta), StreamPiece::OutputTokens(7));
}

#[test]
fn an_image_is_a_base64_block_and_an_image_alone_has_no_empty_text() {
    let message = Conversation::of_chat(&[asking()]).messages.remove(0);
    assert_eq!(
        content(&message)[1],
        json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw==" } }),
        "Anthropic: a base64 source"
    );
    let mut image_only = asking();
    image_only.content = " ".into();
    let message = Conversation::of_chat(&[image_only]).messages.remove(0);
    assert_eq!(content(&message).as_array().unwrap().len(), 2, "no empty text block after the attachments");
}

#[test]
fn streamed_tool_calls_are_read() {
    let start = r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#;
    assert_eq!(
        parse_stream_event("content_block_start", start),
        StreamPiece::ToolCall { index: 1, id: "toolu_1".into(), name: "read".into() }
    );
    let delta =
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\""}}"#;
    assert_eq!(
        parse_stream_event("content_block_delta", delta),
        StreamPiece::ToolArguments { index: 1, json: "{\"path\"".into() }
    );
}
