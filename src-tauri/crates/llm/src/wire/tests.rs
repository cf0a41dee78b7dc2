use std::sync::Arc;

use super::*;
use crate::conversation::{Message, Part, Role, Sampling, Tool, ToolCall, ToolResult};

/// The name the tests give an answer they write.
pub(crate) const ANSWER: AnswerId = AnswerId { number: 7, created: Timestamp::EPOCH };

/// Every id a written answer (a whole one, or one stream event's data) names itself by, with
/// the time it says it was made (in seconds; none where the format says none).
fn answer_names(format: WireFormat, value: &Value) -> (Vec<String>, Option<i64>) {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let (mut ids, created) = match format {
        WireFormat::OpenAiChat => (vec![text(&value["id"])], value["created"].as_i64()),
        WireFormat::OpenAiResponses => {
            let response = if value["response"].is_object() { &value["response"] } else { value };
            let items = response["output"].as_array().into_iter().flatten().chain([&value["item"]]);
            let message_items = items.filter(|i| i["type"] == "message").map(|i| text(&i["id"]));
            let mut ids = vec![text(&response["id"]), text(&value["item_id"])];
            ids.extend(message_items);
            (ids, response["created_at"].as_i64())
        }
        WireFormat::AnthropicMessages => {
            let message = if value["message"].is_object() { &value["message"] } else { value };
            (vec![text(&message["id"])], None)
        }
        WireFormat::GeminiGenerate => (vec![text(&value["responseId"])], None),
    };
    ids.retain(Option::is_some);
    (ids.into_iter().flatten().collect(), created)
}

#[test]
fn every_translated_answer_is_named_apart_in_its_formats_own_form_with_its_time() {
    let ids = AnswerIds::new(0x5eed);
    let now = Timestamp::from_millis(1_780_000_123_456);
    let reply = Reply { parts: vec![Part::Text("hi".into())], finish: crate::conversation::Finish::Stop, usage: None };
    let pieces = [StreamPiece::Text("a".into()), StreamPiece::Text("b".into()), StreamPiece::Done];
    let prefixes = [
        (WireFormat::OpenAiChat, "chatcmpl-"),
        (WireFormat::OpenAiResponses, "resp_"),
        (WireFormat::AnthropicMessages, "msg_01"),
        (WireFormat::GeminiGenerate, ""),
    ];
    let mut seen = std::collections::HashSet::new();
    for (format, prefix) in prefixes {
        for _ in 0..2 {
            let body = format.wire().write_reply(&reply, "m", ids.next(now));
            let (names, created) = answer_names(format, &body);
            assert!(!names.is_empty(), "{format:?} names its answer: {body}");
            assert!(names[0].starts_with(prefix) && names[0].len() > prefix.len() + 16, "{format:?}: {}", names[0]);
            assert!(seen.insert(names[0].clone()), "{format:?}: {} was given before", names[0]);
            if let Some(created) = created {
                assert_eq!(created, 1_780_000_123, "{format:?}: created when it was made");
            }
        }
        // A stream: one name in every event, another than the next stream's.
        let mut streams = Vec::new();
        for _ in 0..2 {
            let mut writer = format.wire().stream_writer("m", ids.next(now));
            let mut bytes = Vec::new();
            pieces.iter().for_each(|piece| writer.piece(piece, &mut bytes));
            let mut decoder = crate::sse::Decoder::default();
            decoder.push(&bytes);
            let mut names = std::collections::BTreeSet::new();
            while let Ok(Some(event)) = decoder.next_event() {
                let Ok(data) = serde_json::from_str::<Value>(&event.data) else { continue };
                let (ids, created) = answer_names(format, &data);
                names.extend(ids.into_iter().filter(|id| !id.starts_with("msg_") || prefix == "msg_01"));
                if let Some(created) = created {
                    assert_eq!(created, 1_780_000_123, "{format:?}: created when it was made");
                }
            }
            assert_eq!(names.len(), 1, "{format:?}: one name in every event of a stream: {names:?}");
            streams.push(names);
        }
        assert_ne!(streams[0], streams[1], "{format:?}: two streams, two names");
    }
}

#[test]
fn answer_ids_of_two_seeds_or_two_counts_never_meet() {
    let now = Timestamp::EPOCH;
    let (a, b) = (AnswerIds::new(1), AnswerIds::new(2));
    let mut seen = std::collections::HashSet::new();
    for _ in 0..10_000 {
        assert!(seen.insert(a.next(now).base62()));
        assert!(seen.insert(b.next(now).base62()));
    }
    assert_eq!(AnswerId { number: u128::MAX, created: now }.base62().len(), 22);
    assert_ne!(AnswerIds::random().next(now), AnswerIds::random().next(now), "two runs draw two seeds");
}

/// A conversation with everything the formats carry: a system prompt, text, an image, a tool
/// on offer, its call and its result, sampling. Gemini names a call by its tool: `id` is
/// the tool's name there.
fn everything(call_id: &str) -> Conversation {
    Conversation {
        system: Some("be brief".into()),
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    Part::Image { media_type: "image/png".into(), data: Arc::from(&b"\x89PNG"[..]) },
                    Part::Text("what is in a.rs?".into()),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text("reading it".into()),
                    Part::ToolCall(ToolCall {
                        id: call_id.into(),
                        name: "read".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                    }),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: call_id.into(),
                    name: "read".into(),
                    content: "fn main() {}".into(),
                    is_error: false,
                })],
            },
            Message { role: Role::Assistant, parts: vec![Part::Text("an empty main".into())] },
        ],
        tools: vec![Tool {
            name: "read".into(),
            description: Some("reads a file".into()),
            parameters: serde_json::json!({ "type": "object", "properties": { "path": { "type": "string" } } }),
        }],
        sampling: Sampling { max_tokens: Some(512), temperature: Some(0.5), top_p: None, stop: vec![] },
        cache: crate::conversation::CacheMarks::Unmarked,
    }
}

/// Each format's stream writer writes what its own stream reader reads back: the text, a tool
/// call with its arguments in pieces, the usage, the end.
#[test]
fn every_format_reads_back_the_streams_it_writes() {
    use crate::sse::Decoder;
    let provider = [
        StreamPiece::Usage(Usage { input: 120, cached: 100, output: 0 }),
        StreamPiece::Text("Hel".into()),
        StreamPiece::Text("lo".into()),
        StreamPiece::ToolCall { index: 1, id: "read".into(), name: "read".into() },
        StreamPiece::ToolArguments { index: 1, json: r#"{"pa"#.into() },
        StreamPiece::ToolArguments { index: 1, json: r#"th":1}"#.into() },
        StreamPiece::OutputTokens(9),
        StreamPiece::Done,
    ];
    for format in WireFormat::ALL {
        let mut writer = format.wire().stream_writer("m", ANSWER);
        let mut bytes = Vec::new();
        for piece in &provider {
            writer.piece(piece, &mut bytes);
        }
        let mut decoder = Decoder::default();
        decoder.push(&bytes);
        let mut read = Vec::new();
        while let Ok(Some(event)) = decoder.next_event() {
            read.extend(format.wire().stream_pieces(&event.name, &event.data));
        }
        let text: String =
            read.iter().filter_map(|p| if let StreamPiece::Text(t) = p { Some(t.as_str()) } else { None }).collect();
        assert_eq!(text, "Hello", "{format:?}: the text: {}", String::from_utf8_lossy(&bytes));
        let names: Vec<&str> = read
            .iter()
            .filter_map(|p| if let StreamPiece::ToolCall { name, .. } = p { Some(name.as_str()) } else { None })
            .collect();
        assert_eq!(names, ["read"], "{format:?}: one call: {}", String::from_utf8_lossy(&bytes));
        let arguments: String = read
            .iter()
            .filter_map(|p| if let StreamPiece::ToolArguments { json, .. } = p { Some(json.as_str()) } else { None })
            .collect();
        let arguments: Value =
            serde_json::from_str(&arguments).unwrap_or_else(|e| panic!("{format:?}: arguments {arguments}: {e}"));
        assert_eq!(arguments, serde_json::json!({ "path": 1 }), "{format:?}: its arguments whole");
        let mut usage = None;
        for piece in &read {
            match piece {
                StreamPiece::Usage(u) => usage = Some(*u),
                StreamPiece::OutputTokens(o) => usage.get_or_insert_with(Usage::default).output = *o,
                _ => {}
            }
        }
        assert_eq!(usage, Some(Usage { input: 120, cached: 100, output: 9 }), "{format:?}: the usage, cached included");
        assert_eq!(read.iter().filter(|p| **p == StreamPiece::Done).count(), 1, "{format:?}: one end, last");
    }
}

/// Each format reads back the answers it writes: text, tool calls, the finish, the usage.
#[test]
fn every_format_reads_back_the_answers_it_writes() {
    use crate::conversation::{Finish, Reply};
    for format in WireFormat::ALL {
        let id = if format == WireFormat::GeminiGenerate { "read" } else { "call_1" };
        let replies = [
            Reply {
                parts: vec![Part::Text("done".into())],
                finish: Finish::Stop,
                usage: Some(Usage { input: 120, cached: 100, output: 7 }),
            },
            Reply {
                parts: vec![
                    Part::Text("reading".into()),
                    Part::ToolCall(ToolCall {
                        id: id.into(),
                        name: "read".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                    }),
                ],
                finish: Finish::ToolCalls,
                usage: Some(Usage { input: 12, cached: 0, output: 9 }),
            },
            Reply { parts: vec![Part::Text("cut".into())], finish: Finish::Length, usage: None },
        ];
        for reply in replies {
            let body = format.wire().write_reply(&reply, "m", ANSWER);
            let read =
                format.wire().read_reply(&body).unwrap_or_else(|| panic!("{format:?} reads its own answer: {body}"));
            assert_eq!(read, reply, "{format:?}: the answer survives the trip: {body}");
            let text: String = reply
                .parts
                .iter()
                .filter_map(|p| if let Part::Text(t) = p { Some(t.as_str()) } else { None })
                .collect();
            assert_eq!(
                format.wire().reply_text(&body).as_deref(),
                Some(text.as_str()),
                "{format:?}: its text as the chat reads it"
            );
        }
    }
}

/// Each format reads back what it writes: the conversation survives the trip through its
/// dialect, and so it survives one dialect's reading and another's writing.
#[test]
fn every_format_reads_back_what_it_writes() {
    let options = WriteOptions { stream: true, max_tokens: 512, stream_usage: true };
    for format in WireFormat::ALL {
        let id = if format == WireFormat::GeminiGenerate { "read" } else { "call_1" };
        let sent = everything(id);
        let body = format.wire().write_request(&sent, "m", options);
        let read = format.wire().read_request(&body).unwrap_or_else(|e| panic!("{format:?} reads its own body: {e}"));
        assert_eq!(read.conversation, sent, "{format:?}: the conversation survives the trip: {body}");
        if format != WireFormat::GeminiGenerate {
            assert_eq!((read.model.as_str(), read.stream), ("m", true), "{format:?}: model and streaming");
        }
    }
}

#[test]
fn an_anthropic_agents_request_is_written_for_an_openai_pool() {
    let claude_code = serde_json::json!({
        "model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": true,
        "system": [{ "type": "text", "text": "You are Claude Code." }],
        "tools": [{ "name": "Read", "description": "Reads a file", "input_schema": { "type": "object" } }],
        "messages": [
            { "role": "user", "content": "read a.rs" },
            { "role": "assistant", "content": [
                { "type": "thinking", "thinking": "…", "signature": "sig" },
                { "type": "tool_use", "id": "toolu_1", "name": "Read", "input": { "file_path": "a.rs" } }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}" }] }
        ]
    });
    let read = WireFormat::AnthropicMessages.wire().read_request(&claude_code).unwrap();
    let options = WriteOptions { stream: true, max_tokens: 1024, stream_usage: true };
    let body = WireFormat::OpenAiChat.wire().write_request(&read.conversation, "gpt-5", options);
    assert_eq!(body["messages"][0], serde_json::json!({ "role": "system", "content": "You are Claude Code." }));
    assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["name"], "Read", "the call, its thinking dropped");
    assert_eq!(
        body["messages"][3],
        serde_json::json!({ "role": "tool", "tool_call_id": "toolu_1", "content": "fn main() {}" })
    );
    assert_eq!(body["tools"][0]["function"]["name"], "Read");
    assert_eq!(body["max_tokens"], 1024, "the client's bound goes with it");
}

#[test]
fn what_has_no_place_in_another_dialect_is_refused_or_left_out() {
    let server_tool = serde_json::json!({ "model": "c", "max_tokens": 1, "messages": [],
        "tools": [{ "type": "web_search_20250305", "name": "web_search" }, { "name": "Read", "input_schema": {} }] });
    let read = WireFormat::AnthropicMessages.wire().read_request(&server_tool).unwrap();
    let names: Vec<&str> = read.conversation.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Read"], "a server tool runs only at its vendor: left out, the client's own kept");
    let codex = serde_json::json!({ "model": "g", "input": "hi", "tools": [
        { "type": "function", "name": "exec_command", "parameters": {} },
        { "type": "namespace", "name": "multi_agent_v1", "tools": [{ "type": "function", "name": "spawn_agent", "parameters": {} }] },
        { "type": "web_search" }] });
    let read = WireFormat::OpenAiResponses.wire().read_request(&codex).unwrap();
    let names: Vec<&str> = read.conversation.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["exec_command", "spawn_agent"], "a namespace's tools flattened, web search left out");
    let stored = serde_json::json!({ "model": "g", "input": "more", "previous_response_id": "resp_1" });
    assert!(WireFormat::OpenAiResponses.wire().read_request(&stored).is_err(), "a stored response stays at OpenAI");
    let by_url = serde_json::json!({ "model": "g", "messages": [{ "role": "user", "content": [
        { "type": "image_url", "image_url": { "url": "https://example.com/a.png" } }] }] });
    assert!(WireFormat::OpenAiChat.wire().read_request(&by_url).is_err(), "an image by URL is not here to send");
}

/// JSON a few levels deep made of the member names and values every format's stream reader
/// looks for, so that events of any shape reach each reader's every branch.
fn stream_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..200).prop_map(Value::from),
        prop::sample::select(&SIGNALS_AND_TYPES[..]).prop_map(|s| Value::String(s.to_owned())),
        "[a-z ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(&NAMES[..]).prop_map(str::to_owned), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Event types and values the readers match on.
const SIGNALS_AND_TYPES: [&str; 21] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "tool_use",
    "response.output_text.delta",
    "response.output_item.added",
    "function_call",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "response.created",
    "error",
    "STOP",
    "SAFETY",
    "[DONE]",
    "ping",
    "hi",
    "",
];

/// Events of every format as their providers write them (the stream writers' own, errors,
/// usage, blocks), each with its name.
fn written_events() -> Vec<(String, String)> {
    use crate::sse::Decoder;
    let pieces = [
        StreamPiece::Usage(Usage { input: 120, cached: 100, output: 0 }),
        StreamPiece::Text("Hel".into()),
        StreamPiece::ToolCall { index: 1, id: "read".into(), name: "read".into() },
        StreamPiece::ToolArguments { index: 1, json: r#"{"pa"#.into() },
        StreamPiece::OutputTokens(9),
        StreamPiece::Done,
    ];
    let mut bytes = Vec::new();
    for format in WireFormat::ALL {
        let mut writer = format.wire().stream_writer("m", ANSWER);
        pieces.iter().for_each(|piece| writer.piece(piece, &mut bytes));
        bytes.extend_from_slice(&format.wire().broken_off(true, "broke"));
    }
    let more = [
        ("", r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":38}}"#),
        ("", r#"{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}}"#),
        ("", r#"{"error":{"message":"sk-1","type":"rate_limit_error","code":429}}"#),
        ("error", r#"{"type":"error","error":{"type":"overloaded_error","message":"no"}}"#),
        ("message_start", r#"{"message":{"usage":{"input_tokens":7,"cache_read_input_tokens":100}}}"#),
        ("message_delta", r#"{"usage":{"output_tokens":9}}"#),
        ("message_stop", "{}"),
        ("", r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"no"}}}"#),
        ("", r#"{"type":"response.incomplete","response":{"usage":{"input_tokens":1,"output_tokens":2}}}"#),
        ("", r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#),
        ("", r#"{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"SAFETY"}]}"#),
        ("", r#"{"candidates":[],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}"#),
        ("", r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#),
    ];
    let mut decoder = Decoder::default();
    decoder.push(&bytes);
    let mut events: Vec<(String, String)> = more.iter().map(|(n, d)| ((*n).to_owned(), (*d).to_owned())).collect();
    while let Ok(Some(event)) = decoder.next_event() {
        events.push((event.name, event.data));
    }
    events
}

/// A provider's event with a few of its members removed, renamed or given other values, and
/// perhaps another name: shapes near the ones the readers know, where a signal may be lost.
fn edited_events() -> impl proptest::strategy::Strategy<Value = (String, String)> {
    use proptest::prelude::*;
    let edit = (any::<usize>(), 0u8..3, prop::sample::select(&NAMES[..]), stream_json());
    (
        prop::sample::select(written_events()),
        prop::collection::vec(edit, 0..4),
        prop::option::of(prop::sample::select(&SIGNALS_AND_TYPES[..])),
    )
        .prop_map(|((name, data), edits, renamed)| {
            let Ok(mut value) = serde_json::from_str::<Value>(&data) else { return (name, data) };
            for (at, how, new_name, new_value) in edits {
                edit_member(&mut value, at, how, new_name, new_value);
            }
            (renamed.map_or(name, str::to_owned), value.to_string())
        })
}

/// Removes (`how` 0), renames (1) or replaces (2) the `at`th member of `value`, counted depth
/// first, if it has that many.
fn edit_member(value: &mut Value, at: usize, how: u8, new_name: &str, new_value: Value) {
    fn count(value: &Value) -> usize {
        match value {
            Value::Object(members) => members.values().map(|v| 1 + count(v)).sum(),
            Value::Array(items) => items.iter().map(count).sum(),
            _ => 0,
        }
    }
    let total = count(value);
    if total == 0 {
        return;
    }
    let mut target = at % total;
    fn visit(
        value: &mut Value,
        target: &mut usize,
        edit: &mut dyn FnMut(&mut serde_json::Map<String, Value>, String),
    ) -> bool {
        match value {
            Value::Object(members) => {
                let names: Vec<String> = members.keys().cloned().collect();
                for name in names {
                    if *target == 0 {
                        edit(members, name);
                        return true;
                    }
                    *target -= 1;
                    if visit(members.get_mut(&name).expect("a member just listed"), target, edit) {
                        return true;
                    }
                }
                false
            }
            Value::Array(items) => items.iter_mut().any(|item| visit(item, target, edit)),
            _ => false,
        }
    }
    let mut new_value = Some(new_value);
    visit(value, &mut target, &mut |members, name| match how {
        0 => {
            members.remove(&name);
        }
        1 => {
            if let Some(moved) = members.remove(&name) {
                members.insert(new_name.to_owned(), moved);
            }
        }
        _ => {
            members.insert(name, new_value.take().unwrap_or(Value::Null));
        }
    });
}

/// The member names the readers look for.
const NAMES: [&str; 45] = [
    "error",
    "message",
    "type",
    "code",
    "status",
    "choices",
    "delta",
    "content",
    "text",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "input_tokens",
    "output_tokens",
    "prompt_tokens_details",
    "cached_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "input_tokens_details",
    "tool_calls",
    "function",
    "arguments",
    "name",
    "id",
    "index",
    "content_block",
    "partial_json",
    "candidates",
    "parts",
    "thought",
    "functionCall",
    "args",
    "usageMetadata",
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "finishReason",
    "promptFeedback",
    "blockReason",
    "response",
    "item",
    "call_id",
    "output_index",
    "x",
];

/// An event's data: JSON of any shape, a provider's event edited, or text that is not JSON.
fn stream_data() -> impl proptest::strategy::Strategy<Value = (String, String)> {
    use proptest::prelude::*;
    prop_oneof![
        (prop::sample::select(&SIGNALS_AND_TYPES[..]), stream_json())
            .prop_map(|(name, value)| (name.to_owned(), value.to_string())),
        edited_events(),
        (
            prop::sample::select(&SIGNALS_AND_TYPES[..]),
            prop::sample::select(&[" [DONE] ", "[DONE]", "", "not json", "{"][..])
        )
            .prop_map(|(name, data)| (name.to_owned(), data.to_owned())),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// An event none of whose words is one of its format's signals is text and tool calls at
    /// most: what the relay passes on unread after the first text can tell it nothing more.
    #[test]
    fn an_event_without_a_signal_is_only_text_and_tool_calls(event in stream_data()) {
        let (name, data) = (event.0.as_str(), event.1.as_str());
        for format in WireFormat::ALL {
            let wire = format.wire();
            if may_signal(wire, name, data) {
                continue;
            }
            for piece in wire.stream_pieces(name, data) {
                let quiet = matches!(
                    piece,
                    StreamPiece::Text(_) | StreamPiece::ToolCall { .. } | StreamPiece::ToolArguments { .. } | StreamPiece::Nothing
                );
                proptest::prop_assert!(quiet, "{format:?}: {name:?} {data} gave {piece:?} with no signal");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// An OpenAI chunk read by name gives the pieces it gave read whole into a `Value`.
    #[test]
    fn a_chunk_read_by_name_reads_as_it_did_whole(event in stream_data()) {
        let (name, data) = (event.0.as_str(), event.1.as_str());
        proptest::prop_assert_eq!(
            WireFormat::OpenAiChat.wire().stream_pieces(name, data),
            openai_chat::stream_pieces_of_value(name, data),
            "{:?} {}", name, data
        );
    }
}

#[test]
fn odd_chunks_read_by_name_read_as_they_did_whole() {
    let chunks = [
        r#"{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}"#,
        r#"{"error":null,"choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"error":null,"error":{"message":"no"}}"#,
        r#"[null,[{"delta":{"content":"hi"}}]]"#,
        r#"{"choices":[null,{"delta":{"content":"x"}}]}"#,
        r#"{"choices":{"0":{"delta":{"content":"x"}}}}"#,
        r#"{"choices":[{"delta":{"content":5}}],"usage":{"prompt_tokens":3}}"#,
        r#"{"choices":[{"delta":{"content":"","tool_calls":{"a":1}}}],"usage":{"prompt_tokens":3,"prompt_tokens":4}}"#,
        r#"{"choices":[{"delta":{"content":"caf\u00e9 \"x\"\n"}}]}"#,
        r#"{"\u0063hoices":[{"delta":{"content":"hidden"}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c","function":{"name":"read","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":-1,"prompt_tokens_details":{"cached_tokens":"x"}}}"#,
        r#"{"choices":[],"usage":"none"}"#,
        r#"  {"choices":[{"delta":{"content":"sp"}}]}  "#,
        r#"{"choices":[],"usage":[11,{"cached_tokens":3},5]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":11,"prompt_tokens_details":[4]}}"#,
        r#"{"choices":[{"delta":null}]}"#,
    ];
    for data in chunks {
        for name in ["", "error", "message"] {
            assert_eq!(
                WireFormat::OpenAiChat.wire().stream_pieces(name, data),
                openai_chat::stream_pieces_of_value(name, data),
                "{name:?} {data}"
            );
        }
    }
}

#[test]
fn every_signal_and_escape_is_found_where_it_is_written() {
    for format in WireFormat::ALL {
        let wire = format.wire();
        for signal in wire.stream_signals() {
            assert!(may_signal(wire, "", &format!(r#"{{"{signal}":1}}"#)), "{format:?}: {signal} in the data");
            assert!(may_signal(wire, signal, "{}"), "{format:?}: {signal} as the name");
        }
        assert!(may_signal(wire, "", r#"{"\u0075sage":{"prompt_tokens":1}}"#), "{format:?}: a name escaped");
        let text = r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#;
        assert!(!may_signal(wire, "", text), "{format:?}: a text delta is read only for the first text");
    }
}

#[test]
fn out_of_credit_in_either_providers_words() {
    let openai = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    assert!(out_of_credit(429, openai), "OpenAI's insufficient_quota is no rate limit");
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}"#;
    assert!(out_of_credit(400, anthropic), "Anthropic's credit balance message");
    assert!(out_of_credit(402, "Payment Required"), "402 is out of credit whatever the body");
    let limited = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    assert!(!out_of_credit(429, limited), "a plain rate limit is not");
    let data = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":null}}"#;
    assert_eq!(
        WireFormat::OpenAiChat.wire().stream_pieces("", data),
        [StreamPiece::Error(Failure { out_of_credit: true, ..Failure::new(429, "You exceeded your current quota") })],
        "inside a stream too"
    );
}

#[test]
fn a_coding_plan_s_used_up_window_rests_the_key_until_the_reset_it_names() {
    use super::refusal::plan_window;
    let at = |text: &str| keypool::Timestamp::from_millis(text.parse::<jiff::Timestamp>().unwrap().as_millisecond());
    // Zhipu's Anthropic-compatible endpoint, its weekly window: Beijing time, no zone written.
    let weekly = r#"{"type":"error","error":{"type":"rate_limit_error","code":"1310","message":"[1310][Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-07-14 07:49:08]"}}"#;
    assert_eq!(
        plan_window(weekly),
        Some(at("2026-07-13T23:49:08Z")),
        "07:49:08 in Beijing is 23:49:08 UTC the day before"
    );
    // Its OpenAI-compatible one, the 5-hour window.
    let five = r#"{"error":{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-09-09 05:38:28"}}"#;
    assert_eq!(plan_window(five), Some(at("2026-09-08T21:38:28Z")));
    let zoned = r#"{"error":{"code":1316,"message":"5-hour usage limit reached. Resets at 2026-08-07T05:00:00Z"}}"#;
    assert_eq!(plan_window(zoned), Some(at("2026-08-07T05:00:00Z")), "a code as a number, an instant with its zone");
    for not in [
        r#"{"error":{"code":"1308","message":"Usage limit reached for 5 hour."}}"#,
        r#"{"error":{"type":"rate_limit_error","message":"Rate limit reached for requests. Please try again in 20s"}}"#,
        r#"{"error":{"code":"1310","message":"Your limit will reset at soon"}}"#,
        "<html>Too Many Requests</html>",
    ] {
        assert_eq!(plan_window(not), None, "{not}");
    }
    let failure = WireFormat::AnthropicMessages.wire().refusal(429, weekly, None, keypool::Announced::default());
    assert!(
        matches!(
            failure.pool_kind(),
            Some(keypool::FailureKind::RateLimited { quota: Some(keypool::Quota::PlanWindow { .. }), .. })
        ),
        "a plan window to the pool: {failure:?}"
    );
}
