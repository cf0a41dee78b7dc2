//! OpenAI's Responses API (`POST responses` under a `…/v1` base URL), which Codex CLI speaks.
//! Keys and rate-limit headers as for Chat Completions; requests carry `instructions` and `input`
//! items; streams are named events (`response.output_text.delta`, `response.completed` with the
//! usage, `error`, `response.failed`).

use bytes::Bytes;
use keypool::{Announced, Timestamp};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use super::openai_chat::OpenAiChat;
use super::openai_chat::{openai_error, openai_model_list};
use super::read::{self, name_results};
use super::{
    error_answer, read_head, ClientRequest, Delivery, ListedModel, Operation, Problem, StreamPiece, Untranslatable,
    UsageObject, Wire, WireFormat, WriteOptions,
};
use super::{AnswerId, StreamWriter, Tally};
use crate::conversation::{
    base64_of, file_text, CacheMarks, Conversation, Finish, Message, Part, Reply, Role, ToolCall, ToolResult, Usage,
};
use crate::error::Failure;
use crate::provider_clock::ClockSkew;

pub(crate) struct OpenAiResponses;

/// A Responses `usage` object: `input_tokens` counts every prompt token (cached ones included,
/// `input_tokens_details.cached_tokens`), `output_tokens` the reasoning tokens too.
pub(crate) fn usage_of(usage: &UsageObject) -> Option<Usage> {
    Some(Usage {
        input: usage.input_tokens?,
        cached: usage.input_tokens_details.as_ref().and_then(|details| details.cached_tokens).unwrap_or(0),
        output: usage.output_tokens.unwrap_or(0),
    })
}

/// A turn's `input` items: its message (text, files, images), its tool calls and results.
fn items(message: &Message, out: &mut Vec<Value>) {
    let assistant = message.role == Role::Assistant;
    let text_type = if assistant { "output_text" } else { "input_text" };
    let content: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text(text) => Some(json!({ "type": text_type, "text": text })),
            Part::File { name, text } => Some(json!({ "type": text_type, "text": file_text(name, text) })),
            Part::Image { media_type, data } => Some(json!({
                "type": "input_image", "image_url": format!("data:{media_type};base64,{}", base64_of(data))
            })),
            Part::ToolCall(_) | Part::ToolResult(_) => None,
        })
        .collect();
    if !content.is_empty() {
        let role = if assistant { "assistant" } else { "user" };
        out.push(json!({ "type": "message", "role": role, "content": content }));
    }
    for part in &message.parts {
        match part {
            Part::ToolCall(call) => out.push(json!({
                "type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments
            })),
            Part::ToolResult(result) => {
                out.push(json!({ "type": "function_call_output", "call_id": result.call_id, "output": result.content }))
            }
            _ => {}
        }
    }
}

/// The refusal an `error` event or a failed response names (`code`, `message`).
fn failure_of(error: &Value) -> Failure {
    let message = error["message"].as_str().unwrap_or("the provider reported an error").to_owned();
    let code = error["code"].as_str().or_else(|| error["type"].as_str()).unwrap_or_default();
    let status = match code {
        "rate_limit_exceeded" | "insufficient_quota" => 429,
        "invalid_api_key" => 401,
        "server_is_overloaded" | "slow_down" => 503,
        _ => 500,
    };
    Failure { out_of_credit: code == "insufficient_quota", ..Failure::new(status, message) }
}

/// A message item's content: a string, or `input_text`/`output_text`/`input_image` parts.
fn parts_of(content: &Value) -> Result<Vec<Part>, Untranslatable> {
    match content {
        Value::String(text) => Ok(vec![Part::Text(text.clone())]),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part["type"].as_str() {
                Some("input_text" | "output_text") => {
                    Ok(Part::Text(part["text"].as_str().unwrap_or_default().to_owned()))
                }
                Some("input_image") => read::image_url(part["image_url"].as_str().unwrap_or_default()),
                other => Err(Untranslatable(format!("an input part of type {other:?} cannot be carried"))),
            })
            .collect(),
        _ => Ok(Vec::new()),
    }
}

/// A Responses body read into the conversation. A stored response (`previous_response_id`)
/// lives at OpenAI, in one organisation: it cannot be carried.
fn read(body: &Value) -> Result<ClientRequest, Untranslatable> {
    if body["previous_response_id"].is_string() {
        return Err(Untranslatable("a stored response (previous_response_id) exists only at OpenAI".into()));
    }
    let mut system: Vec<String> = body["instructions"].as_str().map(str::to_owned).into_iter().collect();
    let mut messages: Vec<Message> = Vec::new();
    let items = match &body["input"] {
        Value::String(text) => vec![json!({ "type": "message", "role": "user", "content": text })],
        Value::Array(items) => items.clone(),
        _ => Vec::new(),
    };
    for item in &items {
        let (role, part) = match item["type"].as_str().unwrap_or("message") {
            "message" => {
                match item["role"].as_str().unwrap_or("user") {
                    "system" | "developer" => system.push(read::text_of(&item["content"])),
                    "assistant" => messages.push(Message { role: Role::Assistant, parts: parts_of(&item["content"])? }),
                    _ => messages.push(Message { role: Role::User, parts: parts_of(&item["content"])? }),
                }
                continue;
            }
            "function_call" => (
                Role::Assistant,
                Part::ToolCall(ToolCall {
                    id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                    name: item["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: item["arguments"].as_str().unwrap_or("{}").to_owned(),
                }),
            ),
            "function_call_output" => (
                Role::User,
                Part::ToolResult(ToolResult {
                    call_id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                    name: String::new(),
                    content: read::text_of(&item["output"]),
                    is_error: false,
                }),
            ),
            // Reasoning is the provider's own (encrypted for another organisation).
            "reasoning" => continue,
            other => return Err(Untranslatable(format!("an input item of type {other:?} cannot be carried"))),
        };
        // A turn's calls join its assistant message (after its text); its results one user message.
        let results_only = |m: &Message| m.parts.iter().all(|p| matches!(p, Part::ToolResult(_)));
        match messages.last_mut() {
            Some(last) if last.role == role && (role == Role::Assistant || results_only(last)) => last.parts.push(part),
            _ => messages.push(Message { role, parts: vec![part] }),
        }
    }
    // Function tools, those grouped in a namespace (Codex's) among them; OpenAI's own tools
    // (web search, file search) run only at OpenAI and are left out.
    let mut tools = Vec::new();
    for tool in body["tools"].as_array().map(Vec::as_slice).unwrap_or_default() {
        match tool["type"].as_str() {
            Some("function") => tools.push(read::tool(&tool["name"], &tool["description"], &tool["parameters"])?),
            Some("namespace") => {
                for inner in tool["tools"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    if inner["type"] == "function" {
                        tools.push(read::tool(&inner["name"], &inner["description"], &inner["parameters"])?);
                    }
                }
            }
            _ => {}
        }
    }
    let conversation = Conversation {
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages,
        tools,
        sampling: read::sampling(&body["max_output_tokens"], &body["temperature"], &body["top_p"], &Value::Null),
        // The Responses API caches without marks; its clients send none.
        cache: CacheMarks::Unmarked,
    };
    Ok(ClientRequest {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        conversation: name_results(conversation),
    })
}

/// The id of a translated answer's message item at `at` in its output (`hex`: the answer's id).
fn message_id(hex: &str, at: usize) -> String {
    format!("msg_{hex}{at:02x}")
}

/// Responses API events, numbered: `response.created` and `response.in_progress`; per output
/// item `response.output_item.added`, its deltas and its `…done` events; then
/// `response.completed` with the whole output and the usage.
struct ItemWriter {
    model: String,
    /// The answer's id, in hexadecimal.
    hex: String,
    created: i64,
    sequence: u64,
    started: bool,
    tally: Tally,
    /// The finished output items.
    output: Vec<Value>,
    /// The item open now: a message's text so far, or a call (provider index, id, name, arguments).
    open: Option<Open>,
}

enum Open {
    Message(String),
    Call { index: u32, id: String, name: String, arguments: String },
}

impl ItemWriter {
    fn event(&mut self, mut data: Value, out: &mut Vec<u8>) {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        out.extend_from_slice(format!("event: {name}\ndata: {data}\n\n").as_bytes());
    }

    fn response(&self, status: &str) -> Value {
        let usage = self.tally.usage.map(|usage| {
            json!({ "input_tokens": usage.input, "input_tokens_details": { "cached_tokens": usage.cached },
                "output_tokens": usage.output, "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": usage.input + usage.output })
        });
        json!({ "id": format!("resp_{}", self.hex), "object": "response", "created_at": self.created, "status": status,
            "model": self.model, "output": self.output, "usage": usage })
    }

    /// The id of the output item at `at`.
    fn item_id(&self, at: usize) -> String {
        message_id(&self.hex, at)
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let response = self.response("in_progress");
            self.event(json!({ "type": "response.created", "response": response }), out);
            let response = self.response("in_progress");
            self.event(json!({ "type": "response.in_progress", "response": response }), out);
        }
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        let at = self.output.len();
        match self.open.take() {
            Some(Open::Message(text)) => {
                self.event(
                    json!({ "type": "response.output_text.done", "item_id": self.item_id(at), "output_index": at,
                    "content_index": 0, "text": text }),
                    out,
                );
                let item = json!({ "type": "message", "id": self.item_id(at), "status": "completed", "role": "assistant",
                    "content": [{ "type": "output_text", "text": text, "annotations": [] }] });
                self.event(json!({ "type": "response.output_item.done", "output_index": at, "item": item }), out);
                self.output.push(item);
            }
            Some(Open::Call { id, name, arguments, .. }) => {
                self.event(
                    json!({ "type": "response.function_call_arguments.done", "item_id": format!("fc_{id}"),
                    "output_index": at, "arguments": arguments }),
                    out,
                );
                let item = json!({ "type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
                    "arguments": arguments, "status": "completed" });
                self.event(json!({ "type": "response.output_item.done", "output_index": at, "item": item }), out);
                self.output.push(item);
            }
            None => {}
        }
    }
}

impl StreamWriter for ItemWriter {
    fn piece(&mut self, piece: &StreamPiece, out: &mut Vec<u8>) {
        if self.tally.count(piece) {
            return;
        }
        let at = self.output.len();
        match piece {
            StreamPiece::Text(text) => {
                self.start(out);
                if !matches!(self.open, Some(Open::Message(_))) {
                    self.close(out);
                    let at = self.output.len();
                    self.event(
                        json!({ "type": "response.output_item.added", "output_index": at, "item": { "type": "message",
                        "id": self.item_id(at), "status": "in_progress", "role": "assistant", "content": [] } }),
                        out,
                    );
                    self.event(
                        json!({ "type": "response.content_part.added", "item_id": self.item_id(at), "output_index": at,
                        "content_index": 0, "part": { "type": "output_text", "text": "", "annotations": [] } }),
                        out,
                    );
                    self.open = Some(Open::Message(String::new()));
                }
                if let Some(Open::Message(so_far)) = &mut self.open {
                    so_far.push_str(text);
                }
                let at = self.output.len();
                self.event(
                    json!({ "type": "response.output_text.delta", "item_id": self.item_id(at), "output_index": at,
                    "content_index": 0, "delta": text }),
                    out,
                );
            }
            StreamPiece::ToolCall { index, id, name } => {
                self.start(out);
                self.close(out);
                let at = self.output.len();
                self.event(json!({ "type": "response.output_item.added", "output_index": at, "item": { "type": "function_call",
                    "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": "", "status": "in_progress" } }), out);
                self.open =
                    Some(Open::Call { index: *index, id: id.clone(), name: name.clone(), arguments: String::new() });
            }
            StreamPiece::ToolArguments { index, json } => {
                if let Some(Open::Call { index: open, id, arguments, .. }) = &mut self.open {
                    if open == index {
                        arguments.push_str(json);
                        let item_id = format!("fc_{id}");
                        self.event(
                            json!({ "type": "response.function_call_arguments.delta", "item_id": item_id,
                            "output_index": at, "delta": json }),
                            out,
                        );
                    }
                }
            }
            StreamPiece::Done | StreamPiece::Broken(_) => {
                self.start(out);
                self.close(out);
                let response = self.response("completed");
                self.event(json!({ "type": "response.completed", "response": response }), out);
            }
            StreamPiece::Error(failure) => {
                let code = if failure.status == 429 { "rate_limit_exceeded" } else { "server_error" };
                self.event(json!({ "type": "error", "code": code, "message": failure.message, "param": null }), out);
            }
            _ => {}
        }
    }
}

impl Wire for OpenAiResponses {
    fn format(&self) -> WireFormat {
        WireFormat::OpenAiResponses
    }

    fn path(&self, operation: Operation, _model: &str, _delivery: Delivery) -> Option<std::borrow::Cow<'static, str>> {
        match operation {
            Operation::Reply => Some(std::borrow::Cow::Borrowed("responses")),
            Operation::Compact => Some(std::borrow::Cow::Borrowed("responses/compact")),
            Operation::CountTokens => None,
        }
    }

    fn models_path(&self) -> &'static str {
        OpenAiChat.models_path()
    }

    fn models_page(&self, page: &Value) -> Option<(Vec<String>, Option<String>)> {
        OpenAiChat.models_page(page)
    }

    fn key_header(&self) -> (&'static str, &'static str) {
        OpenAiChat.key_header()
    }

    fn write_request(&self, conversation: &Conversation, model: &str, options: WriteOptions) -> Value {
        let mut input = Vec::with_capacity(conversation.messages.len());
        for message in &conversation.messages {
            items(message, &mut input);
        }
        let mut body = json!({ "model": model, "input": input, "stream": options.stream, "store": false });
        if let Some(system) = &conversation.system {
            body["instructions"] = json!(system);
        }
        if !conversation.tools.is_empty() {
            let tools = conversation.tools.iter().map(|tool| {
                let mut written = json!({ "type": "function", "name": tool.name, "parameters": tool.parameters });
                if let Some(description) = &tool.description {
                    written["description"] = json!(description);
                }
                written
            });
            body["tools"] = Value::Array(tools.collect());
        }
        let sampling = &conversation.sampling;
        if let Some(max) = sampling.max_tokens {
            body["max_output_tokens"] = json!(max);
        }
        if let Some(temperature) = sampling.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(top_p) = sampling.top_p {
            body["top_p"] = json!(top_p);
        }
        body
    }

    fn read_request(&self, body: &Value) -> Result<ClientRequest, Untranslatable> {
        read(body)
    }

    fn reply_text(&self, body: &Value) -> Option<String> {
        let output = body["output"].as_array()?;
        let texts = output
            .iter()
            .filter(|item| item["type"] == "message")
            .flat_map(|item| item["content"].as_array().into_iter().flatten())
            .filter(|part| part["type"] == "output_text")
            .filter_map(|part| part["text"].as_str());
        Some(texts.collect())
    }

    fn read_reply(&self, body: &Value) -> Option<Reply> {
        let output = body["output"].as_array()?;
        let mut parts = Vec::new();
        for item in output {
            match item["type"].as_str() {
                Some("message") => {
                    let content = item["content"].as_array().map(Vec::as_slice).unwrap_or_default();
                    let texts =
                        content.iter().filter(|p| p["type"] == "output_text").filter_map(|p| p["text"].as_str());
                    parts.extend(texts.map(|t| Part::Text(t.to_owned())));
                }
                Some("function_call") => parts.push(Part::ToolCall(ToolCall {
                    id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                    name: item["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: item["arguments"].as_str().unwrap_or("{}").to_owned(),
                })),
                _ => {}
            }
        }
        let finish = match (body["status"].as_str(), body["incomplete_details"]["reason"].as_str()) {
            (Some("incomplete"), Some("content_filter")) => Finish::Refused,
            (Some("incomplete"), _) => Finish::Length,
            _ if parts.iter().any(|p| matches!(p, Part::ToolCall(_))) => Finish::ToolCalls,
            _ => Finish::Stop,
        };
        Some(Reply { parts, finish, usage: self.usage_of_reply(body) })
    }

    fn write_reply(&self, reply: &Reply, model: &str, id: AnswerId) -> Value {
        let hex = id.hex();
        let mut output = Vec::new();
        for part in &reply.parts {
            match part {
                Part::Text(text) => output
                    .push(json!({ "type": "message", "id": message_id(&hex, output.len()), "status": "completed",
                    "role": "assistant", "content": [{ "type": "output_text", "text": text, "annotations": [] }] })),
                Part::ToolCall(call) => output.push(json!({ "type": "function_call", "id": format!("fc_{}", call.id),
                    "call_id": call.id, "name": call.name, "arguments": call.arguments, "status": "completed" })),
                _ => {}
            }
        }
        let (status, incomplete) = match reply.finish {
            Finish::Length => ("incomplete", json!({ "reason": "max_output_tokens" })),
            Finish::Refused => ("incomplete", json!({ "reason": "content_filter" })),
            Finish::Stop | Finish::ToolCalls => ("completed", Value::Null),
        };
        let usage = reply.usage.map(|usage| {
            json!({ "input_tokens": usage.input, "input_tokens_details": { "cached_tokens": usage.cached },
                "output_tokens": usage.output, "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": usage.input + usage.output })
        });
        json!({ "id": format!("resp_{hex}"), "object": "response", "created_at": id.created_seconds(), "status": status,
            "model": model, "output": output, "incomplete_details": incomplete, "usage": usage })
    }

    fn stream_writer(&self, model: &str, id: AnswerId) -> Box<dyn StreamWriter> {
        Box::new(ItemWriter {
            model: model.to_owned(),
            hex: id.hex(),
            created: id.created_seconds(),
            sequence: 0,
            started: false,
            tally: Tally::default(),
            output: Vec::new(),
            open: None,
        })
    }

    fn usage_of_reply(&self, body: &Value) -> Option<Usage> {
        usage_of(&UsageObject::of_value(&body["usage"]))
    }

    fn read_reply_head(&self, body: &[u8]) -> (bool, Option<Usage>) {
        read_head(self, body, usage_of)
    }

    fn stream_pieces(&self, event: &str, data: &str) -> Vec<StreamPiece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return vec![StreamPiece::Nothing];
        };
        let index = || value["output_index"].as_u64().and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
        match value["type"].as_str().unwrap_or(event) {
            "response.output_text.delta" => match value["delta"].as_str() {
                Some(text) if !text.is_empty() => vec![StreamPiece::Text(text.to_owned())],
                _ => vec![StreamPiece::Nothing],
            },
            "response.output_item.added" if value["item"]["type"] == "function_call" => {
                let item = &value["item"];
                vec![StreamPiece::ToolCall {
                    index: index(),
                    id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                    name: item["name"].as_str().unwrap_or_default().to_owned(),
                }]
            }
            "response.function_call_arguments.delta" => match value["delta"].as_str() {
                Some(json) if !json.is_empty() => {
                    vec![StreamPiece::ToolArguments { index: index(), json: json.to_owned() }]
                }
                _ => vec![StreamPiece::Nothing],
            },
            "response.completed" | "response.incomplete" => {
                let usage = usage_of(&UsageObject::of_value(&value["response"]["usage"]));
                usage.map(StreamPiece::Usage).into_iter().chain([StreamPiece::Done]).collect()
            }
            "response.failed" => vec![StreamPiece::Error(failure_of(&value["response"]["error"]))],
            "error" => vec![StreamPiece::Error(failure_of(value.get("error").unwrap_or(&value)))],
            _ => vec![StreamPiece::Nothing],
        }
    }

    /// The events that carry the usage, the end or an error (by their `type`, or their name when
    /// they have none).
    fn stream_signals(&self) -> &'static [&'static str] {
        &["error", "response.completed", "response.incomplete", "response.failed"]
    }

    fn write_event(&self, name: &str, data: &str) -> Vec<u8> {
        if name.is_empty() {
            format!("data: {data}\n\n").into_bytes()
        } else {
            format!("event: {name}\ndata: {data}\n\n").into_bytes()
        }
    }

    fn error_body(&self, problem: Problem, message: &str) -> Value {
        openai_error(problem, message)
    }

    fn model_list(&self, models: &[ListedModel]) -> Value {
        openai_model_list(models)
    }

    fn broken_off(&self, stream: bool, message: &str) -> Bytes {
        if stream {
            let event = json!({ "type": "error", "code": "server_error", "message": message, "param": null });
            return error_answer(self, true, "error", &event);
        }
        OpenAiChat.broken_off(false, message)
    }

    fn announced_limits(&self, headers: &HeaderMap, now: Timestamp, skew: ClockSkew) -> Announced {
        OpenAiChat.announced_limits(headers, now, skew)
    }
}

#[cfg(test)]
mod tests;
