//! OpenAI's Chat Completions (`POST chat/completions`), which most gateways and local servers
//! speak too. Keys go in `Authorization: Bearer`; every answer announces the key's windows in
//! `x-ratelimit-*` headers with Go-style durations.

use bytes::Bytes;
use keypool::{Announced, Timestamp};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use super::read::{self, name_results};
use super::{
    error_answer, read_head, stream_error, ClientRequest, Delivery, ListedModel, Operation, Problem, StreamPiece,
    Untranslatable, UsageObject, Wire, WireFormat, WriteOptions,
};
use super::{AnswerId, StreamWriter, Tally};
use crate::conversation::{
    base64_of, file_text, CacheMarks, Conversation, Finish, Message, Part, Reply, Role, ToolCall, ToolResult, Usage,
};
use crate::provider_clock::ClockSkew;
use crate::rate_limit::{parse_go_duration, window_of};

mod chunk;

use chunk::{with_text, Chunk};

pub(crate) struct OpenAiChat;

/// OpenAI's `usage` object (whole replies and the last chunk of a stream).
pub(crate) fn usage_of(usage: &UsageObject) -> Option<Usage> {
    Some(Usage {
        input: usage.prompt_tokens?,
        cached: usage.prompt_tokens_details.as_ref().and_then(|details| details.cached_tokens).unwrap_or(0),
        output: usage.completion_tokens.unwrap_or(0),
    })
}

/// A stream chunk's pieces, read from the whole chunk as a `Value`: an `error` event or member
/// (the refusal it stands for), the tool calls of the first choice's delta, else its text, else
/// the chunk's usage.
fn pieces_of_value(event: &str, value: &Value) -> Vec<StreamPiece> {
    if let Some(error) = stream_error(event, value) {
        return vec![error];
    }
    let delta = &value["choices"][0]["delta"];
    if let Some(calls) = delta["tool_calls"].as_array() {
        let mut pieces = Vec::with_capacity(calls.len() * 2);
        for call in calls {
            let index = call["index"].as_u64().and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
            if let (Some(id), Some(name)) = (call["id"].as_str(), call["function"]["name"].as_str()) {
                pieces.push(StreamPiece::ToolCall { index, id: id.to_owned(), name: name.to_owned() });
            }
            if let Some(json) = call["function"]["arguments"].as_str().filter(|a| !a.is_empty()) {
                pieces.push(StreamPiece::ToolArguments { index, json: json.to_owned() });
            }
        }
        return pieces;
    }
    vec![match delta["content"].as_str() {
        Some(text) if !text.is_empty() => StreamPiece::Text(text.to_owned()),
        _ => match usage_of(&UsageObject::of_value(&value["usage"])) {
            Some(usage) => StreamPiece::Usage(usage),
            None => StreamPiece::Nothing,
        },
    }]
}

/// [`OpenAiChat::stream_pieces`] as it read every chunk, into a `Value`: what the chunk read by
/// name must give.
#[cfg(test)]
pub(crate) fn stream_pieces_of_value(event: &str, data: &str) -> Vec<StreamPiece> {
    if data.trim() == "[DONE]" {
        return vec![StreamPiece::Done];
    }
    match serde_json::from_str::<Value>(data) {
        Ok(value) => pieces_of_value(event, &value),
        Err(_) => vec![StreamPiece::Nothing],
    }
}

/// A turn's `content`: its text alone as a plain string; else its parts, files and text as text
/// parts, images as `image_url` parts with a data URL.
pub(crate) fn content(message: &Message) -> Value {
    if let Some(text) = message.plain_text() {
        return Value::String(text.to_owned());
    }
    let parts = message.parts.iter().filter_map(|part| match part {
        Part::Text(text) => Some(json!({ "type": "text", "text": text })),
        Part::File { name, text } => Some(json!({ "type": "text", "text": file_text(name, text) })),
        Part::Image { media_type, data } => Some(json!({
            "type": "image_url",
            "image_url": { "url": format!("data:{media_type};base64,{}", base64_of(data)) }
        })),
        Part::ToolCall(_) | Part::ToolResult(_) => None,
    });
    Value::Array(parts.collect())
}

/// The `messages` a turn becomes: tool results each as a `tool` message (before what else the
/// turn says), tool calls in the assistant message's `tool_calls`.
fn turns(message: &Message, out: &mut Vec<Value>) {
    let role = if message.role == Role::Assistant { "assistant" } else { "user" };
    let calls: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(json!({
                "id": call.id, "type": "function",
                "function": { "name": call.name, "arguments": call.arguments }
            })),
            _ => None,
        })
        .collect();
    for part in &message.parts {
        if let Part::ToolResult(result) = part {
            out.push(json!({ "role": "tool", "tool_call_id": result.call_id, "content": result.content }));
        }
    }
    let said = message.parts.iter().any(|p| !matches!(p, Part::ToolCall(_) | Part::ToolResult(_)));
    if calls.is_empty() {
        if said || message.parts.is_empty() {
            out.push(json!({ "role": role, "content": content(message) }));
        }
        return;
    }
    let text = if said { content(message) } else { Value::Null };
    out.push(json!({ "role": role, "content": text, "tool_calls": calls }));
}

/// A message's `content` as parts: a string is one text; an array's `text` and `image_url` parts.
fn parts_of(content: &Value) -> Result<Vec<Part>, Untranslatable> {
    match content {
        Value::Null => Ok(Vec::new()),
        Value::String(text) => Ok(vec![Part::Text(text.clone())]),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part["type"].as_str() {
                Some("text") => Ok(Part::Text(part["text"].as_str().unwrap_or_default().to_owned())),
                Some("image_url") => read::image_url(part["image_url"]["url"].as_str().unwrap_or_default()),
                other => Err(Untranslatable(format!("a message part of type {other:?} cannot be carried"))),
            })
            .collect(),
        _ => Err(Untranslatable("a message's content is neither text nor parts".into())),
    }
}

/// Whether a message (or any of its content parts) carries a `cache_control` mark, as clients
/// write them for Claude models behind an OpenAI-compatible API.
fn marked(message: &Value) -> bool {
    let parts = message["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    message.get("cache_control").is_some() || parts.iter().any(|part| part.get("cache_control").is_some())
}

/// A Chat Completions body read into the conversation.
fn read(body: &Value) -> Result<ClientRequest, Untranslatable> {
    let mut system = Vec::new();
    let mut messages = Vec::new();
    let (mut system_marked, mut turns_marked) = (false, Vec::new());
    for message in body["messages"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let role = message["role"].as_str().unwrap_or_default();
        if marked(message) {
            match role {
                "system" | "developer" => system_marked = true,
                _ => turns_marked.push(messages.len()),
            }
        }
        match role {
            "system" | "developer" => system.push(read::text_of(&message["content"])),
            "user" => messages.push(Message { role: Role::User, parts: parts_of(&message["content"])? }),
            "assistant" => {
                let mut parts = parts_of(&message["content"])?;
                for call in message["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    parts.push(Part::ToolCall(ToolCall {
                        id: call["id"].as_str().unwrap_or_default().to_owned(),
                        name: call["function"]["name"].as_str().unwrap_or_default().to_owned(),
                        arguments: call["function"]["arguments"].as_str().unwrap_or("{}").to_owned(),
                    }));
                }
                messages.push(Message { role: Role::Assistant, parts });
            }
            "tool" => messages.push(Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: message["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    name: String::new(),
                    content: read::text_of(&message["content"]),
                    is_error: false,
                })],
            }),
            other => return Err(Untranslatable(format!("a message of role {other:?} cannot be carried"))),
        }
    }
    // Function tools; any other kind is a provider's own and is left out.
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .filter(|tool| tool["type"] == "function")
        .map(|tool| {
            read::tool(&tool["function"]["name"], &tool["function"]["description"], &tool["function"]["parameters"])
        })
        .collect::<Result<_, _>>()?;
    let tools_marked =
        body["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t.get("cache_control").is_some()));
    let cache = if system_marked || tools_marked || !turns_marked.is_empty() {
        CacheMarks::Client { tools: tools_marked, system: system_marked, turns: turns_marked }
    } else {
        CacheMarks::Unmarked
    };
    let max =
        if body["max_completion_tokens"].is_null() { &body["max_tokens"] } else { &body["max_completion_tokens"] };
    let conversation = Conversation {
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        tools,
        sampling: read::sampling(max, &body["temperature"], &body["top_p"], &body["stop"]),
        cache,
    };
    Ok(ClientRequest {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        conversation: name_results(conversation),
    })
}

/// A chat completion's id, as OpenAI writes them.
fn completion_id(id: AnswerId) -> String {
    format!("chatcmpl-{}", id.base62())
}

/// Chat Completions chunks: text and tool calls as deltas, the finish and the usage last, then
/// `[DONE]`. A call's index is its place among the answer's calls.
struct ChunkWriter {
    model: String,
    id: String,
    created: i64,
    started: bool,
    tally: Tally,
    /// The provider's index of each call, in the order they came.
    calls: Vec<u32>,
}

impl ChunkWriter {
    fn chunk(&self, choices: Value, out: &mut Vec<u8>) {
        self.chunk_with(choices, None, out);
    }

    fn chunk_with(&self, choices: Value, usage: Option<Value>, out: &mut Vec<u8>) {
        let mut chunk = json!({ "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "choices": choices });
        if let Some(usage) = usage {
            chunk["usage"] = usage;
        }
        out.extend_from_slice(format!("data: {chunk}\n\n").as_bytes());
    }

    fn delta(&mut self, delta: Value, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            self.chunk(
                json!([{ "index": 0, "delta": { "role": "assistant", "content": "" }, "finish_reason": null }]),
                out,
            );
        }
        self.chunk(json!([{ "index": 0, "delta": delta, "finish_reason": null }]), out);
    }
}

impl StreamWriter for ChunkWriter {
    fn piece(&mut self, piece: &StreamPiece, out: &mut Vec<u8>) {
        if self.tally.count(piece) {
            return;
        }
        match piece {
            StreamPiece::Text(text) => self.delta(json!({ "content": text }), out),
            StreamPiece::ToolCall { index, id, name } => {
                self.calls.push(*index);
                let at = self.calls.len() - 1;
                let call =
                    json!({ "index": at, "id": id, "type": "function", "function": { "name": name, "arguments": "" } });
                self.delta(json!({ "tool_calls": [call] }), out);
            }
            StreamPiece::ToolArguments { index, json } => {
                let at = self.calls.iter().position(|i| i == index).unwrap_or(0);
                self.delta(json!({ "tool_calls": [{ "index": at, "function": { "arguments": json } }] }), out);
            }
            StreamPiece::Done | StreamPiece::Broken(_) => {
                let finish = if self.tally.called { "tool_calls" } else { "stop" };
                self.chunk(json!([{ "index": 0, "delta": {}, "finish_reason": finish }]), out);
                if let Some(usage) = self.tally.usage {
                    let usage = json!({ "prompt_tokens": usage.input, "completion_tokens": usage.output,
                        "total_tokens": usage.input + usage.output, "prompt_tokens_details": { "cached_tokens": usage.cached } });
                    // As OpenAI sends it with `include_usage`: a last chunk with no choices.
                    self.chunk_with(json!([]), Some(usage), out);
                }
                out.extend_from_slice(b"data: [DONE]\n\n");
            }
            StreamPiece::Error(failure) => {
                let error = json!({ "error": { "message": failure.message, "type": "server_error", "param": null, "code": null } });
                out.extend_from_slice(format!("data: {error}\n\n").as_bytes());
            }
            _ => {}
        }
    }
}

/// OpenAI's model list. It says who serves each model (`owned_by`, the provider's name), and
/// lists a model other providers list too once more per other provider, as `provider/model`,
/// the name that reaches it.
pub(crate) fn openai_model_list(models: &[ListedModel]) -> Value {
    let entry = |id: &str, provider: &str| json!({ "id": id, "object": "model", "created": 0, "owned_by": provider });
    let data: Vec<_> = models
        .iter()
        .flat_map(|m| {
            let others = m.others.iter().map(|other| entry(&format!("{other}/{}", m.id), other));
            std::iter::once(entry(&m.id, &m.provider)).chain(others)
        })
        .collect();
    json!({ "object": "list", "data": data })
}

/// OpenAI's error body.
pub(crate) fn openai_error(problem: Problem, message: &str) -> Value {
    let (kind, code) = problem.openai_type_and_code();
    json!({ "error": { "message": message, "type": kind, "param": null, "code": code } })
}

impl Wire for OpenAiChat {
    fn format(&self) -> WireFormat {
        WireFormat::OpenAiChat
    }

    fn path(&self, operation: Operation, _model: &str, _delivery: Delivery) -> Option<std::borrow::Cow<'static, str>> {
        (operation == Operation::Reply).then_some(std::borrow::Cow::Borrowed("chat/completions"))
    }

    fn models_path(&self) -> &'static str {
        "models"
    }

    fn models_page(&self, page: &Value) -> Option<(Vec<String>, Option<String>)> {
        let listed = page["data"].as_array().or_else(|| page["models"].as_array())?;
        let ids = listed.iter().filter_map(|m| m["id"].as_str().or_else(|| m["name"].as_str()));
        Some((ids.map(str::to_owned).collect(), None))
    }

    fn key_header(&self) -> (&'static str, &'static str) {
        ("authorization", "Bearer ")
    }

    fn write_request(&self, conversation: &Conversation, model: &str, options: WriteOptions) -> Value {
        let mut messages = Vec::with_capacity(conversation.messages.len() + 1);
        if let Some(system) = &conversation.system {
            messages.push(json!({ "role": "system", "content": system }));
        }
        for message in &conversation.messages {
            turns(message, &mut messages);
        }
        let mut body = json!({ "model": model, "messages": messages, "stream": options.stream });
        if options.stream && options.stream_usage {
            body["stream_options"] = json!({ "include_usage": true });
        }
        if !conversation.tools.is_empty() {
            let tools = conversation.tools.iter().map(|tool| {
                let mut function = json!({ "name": tool.name, "parameters": tool.parameters });
                if let Some(description) = &tool.description {
                    function["description"] = json!(description);
                }
                json!({ "type": "function", "function": function })
            });
            body["tools"] = Value::Array(tools.collect());
        }
        let sampling = &conversation.sampling;
        if let Some(max) = sampling.max_tokens {
            body["max_tokens"] = json!(max);
        }
        if let Some(temperature) = sampling.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(top_p) = sampling.top_p {
            body["top_p"] = json!(top_p);
        }
        if !sampling.stop.is_empty() {
            body["stop"] = json!(sampling.stop);
        }
        body
    }

    fn read_request(&self, body: &Value) -> Result<ClientRequest, Untranslatable> {
        read(body)
    }

    fn reply_text(&self, body: &Value) -> Option<String> {
        body["choices"][0]["message"]["content"].as_str().map(str::to_owned)
    }

    fn read_reply(&self, body: &Value) -> Option<Reply> {
        let choice = &body["choices"][0];
        let message = choice.get("message")?;
        let mut parts: Vec<Part> = message["content"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(|t| Part::Text(t.to_owned()))
            .into_iter()
            .collect();
        for call in message["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default() {
            parts.push(Part::ToolCall(ToolCall {
                id: call["id"].as_str().unwrap_or_default().to_owned(),
                name: call["function"]["name"].as_str().unwrap_or_default().to_owned(),
                arguments: call["function"]["arguments"].as_str().unwrap_or("{}").to_owned(),
            }));
        }
        let finish = match choice["finish_reason"].as_str() {
            Some("length") => Finish::Length,
            Some("tool_calls" | "function_call") => Finish::ToolCalls,
            Some("content_filter") => Finish::Refused,
            _ => Finish::Stop,
        };
        Some(Reply { parts, finish, usage: self.usage_of_reply(body) })
    }

    fn write_reply(&self, reply: &Reply, model: &str, id: AnswerId) -> Value {
        let text: String =
            reply.parts.iter().filter_map(|p| if let Part::Text(t) = p { Some(t.as_str()) } else { None }).collect();
        let calls: Vec<Value> = reply
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(call) => Some(json!({ "id": call.id, "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments } })),
                _ => None,
            })
            .collect();
        let mut message =
            json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) } });
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let finish = match reply.finish {
            Finish::Stop => "stop",
            Finish::Length => "length",
            Finish::ToolCalls => "tool_calls",
            Finish::Refused => "content_filter",
        };
        let mut body = json!({ "id": completion_id(id), "object": "chat.completion", "created": id.created_seconds(), "model": model,
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }] });
        if let Some(usage) = reply.usage {
            body["usage"] = json!({ "prompt_tokens": usage.input, "completion_tokens": usage.output,
                "total_tokens": usage.input + usage.output, "prompt_tokens_details": { "cached_tokens": usage.cached } });
        }
        body
    }

    fn stream_writer(&self, model: &str, id: AnswerId) -> Box<dyn StreamWriter> {
        Box::new(ChunkWriter {
            model: model.to_owned(),
            id: completion_id(id),
            created: id.created_seconds(),
            started: false,
            tally: Tally::default(),
            calls: Vec::new(),
        })
    }

    fn usage_of_reply(&self, body: &Value) -> Option<Usage> {
        usage_of(&UsageObject::of_value(&body["usage"]))
    }

    fn read_reply_head(&self, body: &[u8]) -> (bool, Option<Usage>) {
        read_head(self, body, usage_of)
    }

    fn stream_pieces(&self, event: &str, data: &str) -> Vec<StreamPiece> {
        let mut pieces = Vec::new();
        self.each_piece(event, data, &mut super::PieceMemo::default(), &mut |piece| pieces.push(piece.clone()));
        pieces
    }

    fn each_piece(&self, event: &str, data: &str, memo: &mut super::PieceMemo, piece: &mut dyn FnMut(&StreamPiece)) {
        if data.trim() == "[DONE]" {
            return piece(&StreamPiece::Done);
        }
        // The common chunk, skimmed; the rest read by name.
        if event != "error" {
            match super::skim::templated_text(data, &mut memo.chunk) {
                Ok(Some(text)) => return with_text(text, piece),
                Ok(None) => return piece(&StreamPiece::Nothing),
                Err(super::skim::Declined) => {}
            }
        }
        // An object (a struct is read from an array too, where a `Value`'s members are none).
        if event != "error" && data.trim_start().starts_with('{') {
            if let Ok(chunk) = serde_json::from_str::<Chunk>(data) {
                if chunk.pieces(piece) {
                    return;
                }
            }
        }
        match serde_json::from_str::<Value>(data) {
            Ok(value) => pieces_of_value(event, &value).iter().for_each(piece),
            Err(_) => piece(&StreamPiece::Nothing),
        }
    }

    /// `[DONE]`; an `error` event or member; the `usage` member.
    fn stream_signals(&self) -> &'static [&'static str] {
        &["[DONE]", "error", "usage"]
    }

    fn broken_off(&self, stream: bool, message: &str) -> Bytes {
        let body = json!({ "error": { "message": message, "type": "server_error", "param": null, "code": null } });
        error_answer(self, stream, "", &body)
    }

    fn error_body(&self, problem: Problem, message: &str) -> Value {
        openai_error(problem, message)
    }

    fn model_list(&self, models: &[ListedModel]) -> Value {
        openai_model_list(models)
    }

    fn announced_limits(&self, headers: &HeaderMap, now: Timestamp, _skew: ClockSkew) -> Announced {
        let reset = |text: &str| Some(now + parse_go_duration(text)?);
        let window = |limit, remaining, reset_name| window_of(headers, now, [limit, remaining, reset_name], &reset);
        Announced {
            requests: window(
                "x-ratelimit-limit-requests",
                "x-ratelimit-remaining-requests",
                "x-ratelimit-reset-requests",
            ),
            tokens: window("x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
        }
    }
}

#[cfg(test)]
mod tests;
