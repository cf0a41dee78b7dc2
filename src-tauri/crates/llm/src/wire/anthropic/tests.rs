use super::*;
use crate::conversation::tests::asking;
use crate::error::Failure;

fn parse_stream_event(event: &str, data: &str) -> StreamPiece {
    AnthropicMessages.stream_pieces(event, data).into_iter().next().unwrap()
}

#[test]
fn deltas_are_written_as_their_values_were() {
    let mut writer = AnthropicMessages.stream_writer("m", crate::wire::tests::ANSWER);
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

/// Where a written request carries `cache_control`: "tools", "system", or "turn N".
fn marked_places(body: &Value) -> Vec<String> {
    let mut places = Vec::new();
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    places.extend(tools.iter().filter(|t| t.get("cache_control").is_some()).map(|_| "tools".to_owned()));
    let system = body["system"].as_array().map(Vec::as_slice).unwrap_or_default();
    places.extend(system.iter().filter(|b| b.get("cache_control").is_some()).map(|_| "system".to_owned()));
    for (at, turn) in body["messages"].as_array().unwrap().iter().enumerate() {
        let blocks = turn["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        for (index, block) in blocks.iter().enumerate() {
            if block.get("cache_control").is_some() {
                assert_eq!(index, blocks.len() - 1, "the mark is on the turn's last block: {turn}");
                assert_eq!(block["cache_control"], json!({ "type": "ephemeral" }));
                places.push(format!("turn {at}"));
            }
        }
    }
    places
}

fn options() -> WriteOptions {
    WriteOptions { stream: true, max_tokens: 1024, stream_usage: true }
}

/// A Chat Completions request as Codex-like clients send it: no marks anywhere.
fn unmarked_chat(turns: usize) -> Value {
    let mut messages = vec![json!({ "role": "system", "content": "You are a coding agent." })];
    for turn in 0..turns {
        messages.push(json!({ "role": "user", "content": format!("step {turn}") }));
        messages.push(json!({ "role": "assistant", "content": format!("did {turn}") }));
    }
    messages.push(json!({ "role": "user", "content": "next" }));
    json!({ "model": "gpt-5", "messages": messages, "tools": [
        { "type": "function", "function": { "name": "read", "parameters": { "type": "object" } } },
        { "type": "function", "function": { "name": "write", "parameters": { "type": "object" } } }] })
}

#[test]
fn an_unmarked_request_is_cached_after_its_system_prompt_and_its_two_newest_user_turns() {
    let read = WireFormat::OpenAiChat.wire().read_request(&unmarked_chat(3)).unwrap();
    let body = AnthropicMessages.write_request(&read.conversation, "claude-sonnet-4-6", options());
    // 7 turns: step 0, did 0, … did 2, next: the newest is 6, the user turn before it 4.
    assert_eq!(marked_places(&body), ["system", "turn 4", "turn 6"], "{body}");
    assert_eq!(body["system"][0]["text"], "You are a coding agent.");
    // The next request (one more exchange) marks its own newest, and the last one's again.
    let read = WireFormat::OpenAiChat.wire().read_request(&unmarked_chat(4)).unwrap();
    let next = AnthropicMessages.write_request(&read.conversation, "claude-sonnet-4-6", options());
    assert_eq!(marked_places(&next), ["system", "turn 6", "turn 8"]);
    // The earlier turns are written as they were: the prefix the cache holds is the same.
    for at in 0..4 {
        assert_eq!(body["messages"][at], next["messages"][at], "turn {at} unchanged");
    }
}

#[test]
fn without_a_system_prompt_the_tools_are_marked_and_a_lone_turn_once() {
    let mut chat = unmarked_chat(0);
    chat["messages"].as_array_mut().unwrap().remove(0);
    let read = WireFormat::OpenAiChat.wire().read_request(&chat).unwrap();
    let body = AnthropicMessages.write_request(&read.conversation, "m", options());
    assert_eq!(marked_places(&body), ["tools", "turn 0"]);
    assert!(body["tools"][0].get("cache_control").is_none(), "only the last tool: {body}");
}

#[test]
fn a_clients_own_marks_are_carried_as_they_are_and_nothing_is_added() {
    let chat = json!({ "model": "m", "messages": [
        { "role": "system", "content": [{ "type": "text", "text": "rules", "cache_control": { "type": "ephemeral" } }] },
        { "role": "user", "content": [{ "type": "text", "text": "long document", "cache_control": { "type": "ephemeral" } }] },
        { "role": "assistant", "content": "ok" },
        { "role": "user", "content": "question" }] });
    let read = WireFormat::OpenAiChat.wire().read_request(&chat).unwrap();
    let body = AnthropicMessages.write_request(&read.conversation, "m", options());
    assert_eq!(marked_places(&body), ["system", "turn 0"], "{body}");
}

#[test]
fn an_empty_text_block_is_never_marked() {
    let conversation = Conversation {
        messages: vec![Message { role: Role::User, parts: vec![Part::Text("look".into()), Part::Text(String::new())] }],
        ..Conversation::default()
    };
    let body = AnthropicMessages.write_request(&conversation, "m", options());
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], json!({ "type": "ephemeral" }), "{body}");
    assert!(body["messages"][0]["content"][1].get("cache_control").is_none());
    let empty = Conversation { messages: vec![Message { role: Role::User, parts: vec![] }], ..Conversation::default() };
    assert!(marked_places(&AnthropicMessages.write_request(&empty, "m", options())).is_empty());
}
