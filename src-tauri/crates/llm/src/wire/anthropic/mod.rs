//! Anthropic's Messages API (`POST v1/messages` under the host root). Keys go in `x-api-key`,
//! with the API version in `anthropic-version`; answers announce the key's windows in
//! `anthropic-ratelimit-*` headers with RFC 3339 resets on the provider's clock.

use bytes::Bytes;
use keypool::{Announced, Timestamp};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use super::read::{self, name_results};
use super::{
    error_answer, read_head, stream_error, ClientRequest, Delivery, ListedModel, Operation, Problem, StreamPiece,
    Untranslatable, UsageObject, Wire, WireFormat, WriteOptions,
};
use super::{AnswerId, StreamWriter};
use crate::conversation::{
    arguments_value, base64_of, file_text, CacheMarks, Conversation, Finish, Message, Part, Reply, Role, ToolCall,
    ToolResult, Usage,
};
use crate::provider_clock::ClockSkew;
use crate::rate_limit::{provider_instant, window_of};

mod events;

use events::EventWriter;

/// The first text of the system block Claude Code adds to each request (`x-anthropic-billing-header:
/// cc_version=…; cch=…;`), read by Anthropic alone.
pub const BILLING_BLOCK: &str = "x-anthropic-billing-header:";

/// The Anthropic API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

pub(crate) struct AnthropicMessages;

/// A message's id, as Anthropic writes them.
fn message_id(id: AnswerId) -> String {
    format!("msg_01{}", id.base62())
}

/// Anthropic's `usage` object: the input side (whole replies, `message_start`) and the output.
pub(crate) fn usage_of(usage: &UsageObject) -> Option<Usage> {
    let read = usage.cache_read_input_tokens.unwrap_or(0);
    let created = usage.cache_creation_input_tokens.unwrap_or(0);
    Some(Usage { input: usage.input_tokens? + read + created, cached: read, output: usage.output_tokens.unwrap_or(0) })
}

/// A turn's `content`: its text alone as a plain string; else its blocks, images as `image`
/// blocks with a base64 `source`.
pub(crate) fn content(message: &Message) -> Value {
    if let Some(text) = message.plain_text() {
        return Value::String(text.to_owned());
    }
    let blocks = message.parts.iter().map(|part| match part {
        Part::Text(text) => json!({ "type": "text", "text": text }),
        Part::File { name, text } => json!({ "type": "text", "text": file_text(name, text) }),
        Part::Image { media_type, data } => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": media_type, "data": base64_of(data) }
        }),
        Part::ToolCall(call) => {
            json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": arguments_value(&call.arguments) })
        }
        Part::ToolResult(result) => {
            let mut block = json!({ "type": "tool_result", "tool_use_id": result.call_id, "content": result.content });
            if result.is_error {
                block["is_error"] = Value::Bool(true);
            }
            block
        }
    });
    Value::Array(blocks.collect())
}

/// Anthropic's cache mark: the default five-minute cache.
fn ephemeral() -> Value {
    json!({ "type": "ephemeral" })
}

/// Where a request written for Anthropic marks its prompt to be cached (`cache_control`): after
/// the tools, after the system prompt, after these turns.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Breakpoints {
    pub(crate) tools: bool,
    pub(crate) system: bool,
    pub(crate) turns: Vec<usize>,
}

impl Breakpoints {
    /// The client's marks as it set them; where it set none, the places the next request's
    /// prompt repeats: the end of the tools and system prompt (the system prompt's mark caches
    /// the tools before it), the newest turn (read back by the next request), and the user turn
    /// before it (the last request's newest, read back now). Three at most, under Anthropic's
    /// four; no earlier turn is touched.
    pub(crate) fn of(conversation: &Conversation) -> Breakpoints {
        match &conversation.cache {
            CacheMarks::Client { tools, system, turns } => {
                Breakpoints { tools: *tools, system: *system, turns: turns.clone() }
            }
            CacheMarks::Unmarked => {
                let system = conversation.system.as_deref().is_some_and(|s| !s.is_empty());
                let tools = !system && !conversation.tools.is_empty();
                let mut turns = Vec::new();
                if let Some(newest) = conversation.messages.len().checked_sub(1) {
                    let messages = &conversation.messages[..newest];
                    if let Some(before) = messages.iter().rposition(|m| m.role == Role::User) {
                        turns.push(before);
                    }
                    turns.push(newest);
                }
                Breakpoints { tools, system, turns }
            }
        }
    }
}

/// Marks a turn's last block that can carry a mark (not an empty text: Anthropic refuses
/// that), writing a plain-text turn as one block.
fn mark_last_block(content: &mut Value) {
    if let Value::String(text) = content {
        if text.is_empty() {
            return;
        }
        *content = json!([{ "type": "text", "text": std::mem::take(text) }]);
    }
    let Value::Array(blocks) = content else { return };
    let markable = |b: &Value| b["type"] != "text" || b["text"].as_str().is_some_and(|t| !t.is_empty());
    if let Some(block) = blocks.iter_mut().rev().find(|b| markable(b)) {
        block["cache_control"] = ephemeral();
    }
}

/// A content block read into a part; thinking is dropped (its signature belongs to the provider
/// that wrote it), what has no place in the conversation is refused.
fn part_of(block: &Value) -> Result<Option<Part>, Untranslatable> {
    Ok(Some(match block["type"].as_str() {
        Some("text") => Part::Text(block["text"].as_str().unwrap_or_default().to_owned()),
        Some("image") => match block["source"]["type"].as_str() {
            Some("base64") => Part::Image {
                media_type: block["source"]["media_type"].as_str().unwrap_or("image/png").to_owned(),
                data: read::base64(block["source"]["data"].as_str().unwrap_or_default())?,
            },
            _ => {
                return Err(Untranslatable(
                    "images by URL cannot be carried to another provider: send them inline".into(),
                ))
            }
        },
        Some("tool_use") => Part::ToolCall(ToolCall {
            id: block["id"].as_str().unwrap_or_default().to_owned(),
            name: block["name"].as_str().unwrap_or_default().to_owned(),
            arguments: block["input"].to_string(),
        }),
        Some("tool_result") => Part::ToolResult(ToolResult {
            call_id: block["tool_use_id"].as_str().unwrap_or_default().to_owned(),
            name: String::new(),
            content: read::text_of(&block["content"]),
            is_error: block["is_error"].as_bool().unwrap_or(false),
        }),
        Some("thinking" | "redacted_thinking") => return Ok(None),
        other => return Err(Untranslatable(format!("a content block of type {other:?} cannot be carried"))),
    }))
}

/// A Messages body read into the conversation.
fn read(body: &Value) -> Result<ClientRequest, Untranslatable> {
    let mut messages = Vec::new();
    for message in body["messages"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let role = match message["role"].as_str() {
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        let parts = match &message["content"] {
            Value::String(text) => vec![Part::Text(text.clone())],
            Value::Array(blocks) => blocks.iter().filter_map(|b| part_of(b).transpose()).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        messages.push(Message { role, parts });
    }
    // Client tools; Anthropic's server tools (web search, code execution) run only at Anthropic
    // and are left out.
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .filter(|tool| matches!(tool["type"].as_str(), None | Some("custom")))
        .map(|tool| read::tool(&tool["name"], &tool["description"], &tool["input_schema"]))
        .collect::<Result<_, _>>()?;
    // Claude Code's billing block changes on every request; carried first into another
    // provider's prompt it would spoil that provider's prefix cache, and it bills nothing there.
    let system = match &body["system"] {
        Value::Array(blocks) => read::text_of(&Value::Array(
            blocks
                .iter()
                .filter(|b| !b["text"].as_str().is_some_and(|t| t.starts_with(BILLING_BLOCK)))
                .cloned()
                .collect(),
        )),
        other => read::text_of(other),
    };
    let conversation = Conversation {
        system: (!system.is_empty()).then_some(system),
        messages,
        tools,
        sampling: read::sampling(&body["max_tokens"], &body["temperature"], &body["top_p"], &body["stop_sequences"]),
        // An Anthropic client's marks matter only to Anthropic, where its request goes as it is.
        cache: CacheMarks::Unmarked,
    };
    Ok(ClientRequest {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        conversation: name_results(conversation),
    })
}

impl Wire for AnthropicMessages {
    fn format(&self) -> WireFormat {
        WireFormat::AnthropicMessages
    }

    fn path(&self, operation: Operation, _model: &str, _delivery: Delivery) -> Option<std::borrow::Cow<'static, str>> {
        match operation {
            Operation::Reply => Some("v1/messages".into()),
            Operation::CountTokens => Some("v1/messages/count_tokens".into()),
            Operation::Compact => None,
        }
    }

    fn models_path(&self) -> &'static str {
        "v1/models"
    }

    fn models_paging(&self) -> Option<(&'static str, &'static str)> {
        Some(("limit", "after_id"))
    }

    fn models_page(&self, page: &Value) -> Option<(Vec<String>, Option<String>)> {
        let listed = page["data"].as_array().or_else(|| page["models"].as_array())?;
        let ids = listed.iter().filter_map(|m| m["id"].as_str().or_else(|| m["name"].as_str()));
        let next = match (page["has_more"].as_bool(), page["last_id"].as_str()) {
            (Some(true), Some(last)) => Some(last.to_owned()),
            _ => None,
        };
        Some((ids.map(str::to_owned).collect(), next))
    }

    fn key_header(&self) -> (&'static str, &'static str) {
        ("x-api-key", "")
    }

    fn fixed_header(&self) -> Option<(&'static str, &'static str)> {
        Some(("anthropic-version", ANTHROPIC_VERSION))
    }

    fn write_request(&self, conversation: &Conversation, model: &str, options: WriteOptions) -> Value {
        let marks = Breakpoints::of(conversation);
        let turns: Vec<Value> = conversation
            .messages
            .iter()
            .enumerate()
            .map(|(at, message)| {
                let mut content = content(message);
                // A marked request writes every turn as blocks, so that a turn reads the same
                // when the next request marks it no more.
                if let (Value::String(text), false) = (&content, marks.turns.is_empty()) {
                    if !text.is_empty() {
                        content = json!([{ "type": "text", "text": text }]);
                    }
                }
                if marks.turns.contains(&at) {
                    mark_last_block(&mut content);
                }
                json!({ "role": message.role, "content": content })
            })
            .collect();
        let max_tokens = conversation.sampling.max_tokens.unwrap_or(options.max_tokens);
        let mut body = json!({ "model": model, "max_tokens": max_tokens, "messages": turns, "stream": options.stream });
        if let Some(system) = &conversation.system {
            body["system"] = if marks.system && !system.is_empty() {
                json!([{ "type": "text", "text": system, "cache_control": ephemeral() }])
            } else {
                Value::String(system.clone())
            };
        }
        if !conversation.tools.is_empty() {
            let tools = conversation.tools.iter().map(|tool| {
                let mut written = json!({ "name": tool.name, "input_schema": tool.parameters });
                if let Some(description) = &tool.description {
                    written["description"] = json!(description);
                }
                written
            });
            let mut tools: Vec<Value> = tools.collect();
            if let (true, Some(last)) = (marks.tools, tools.last_mut()) {
                last["cache_control"] = ephemeral();
            }
            body["tools"] = Value::Array(tools);
        }
        let sampling = &conversation.sampling;
        if let Some(temperature) = sampling.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(top_p) = sampling.top_p {
            body["top_p"] = json!(top_p);
        }
        if !sampling.stop.is_empty() {
            body["stop_sequences"] = json!(sampling.stop);
        }
        body
    }

    fn read_request(&self, body: &Value) -> Result<ClientRequest, Untranslatable> {
        read(body)
    }

    fn reply_text(&self, body: &Value) -> Option<String> {
        Some(
            body["content"]
                .as_array()?
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect(),
        )
    }

    fn read_reply(&self, body: &Value) -> Option<Reply> {
        let blocks = body["content"].as_array()?;
        let parts = blocks
            .iter()
            .filter_map(|block| match block["type"].as_str() {
                Some("text") => Some(Part::Text(block["text"].as_str().unwrap_or_default().to_owned())),
                Some("tool_use") => Some(Part::ToolCall(ToolCall {
                    id: block["id"].as_str().unwrap_or_default().to_owned(),
                    name: block["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: block["input"].to_string(),
                })),
                _ => None,
            })
            .collect();
        let finish = match body["stop_reason"].as_str() {
            Some("max_tokens") => Finish::Length,
            Some("tool_use") => Finish::ToolCalls,
            Some("refusal") => Finish::Refused,
            _ => Finish::Stop,
        };
        Some(Reply { parts, finish, usage: self.usage_of_reply(body) })
    }

    fn write_reply(&self, reply: &Reply, model: &str, id: AnswerId) -> Value {
        let content: Vec<Value> = reply
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(json!({ "type": "text", "text": text })),
                Part::ToolCall(call) => Some(json!({ "type": "tool_use", "id": call.id, "name": call.name,
                    "input": arguments_value(&call.arguments) })),
                _ => None,
            })
            .collect();
        let stop = match reply.finish {
            Finish::Stop => "end_turn",
            Finish::Length => "max_tokens",
            Finish::ToolCalls => "tool_use",
            Finish::Refused => "refusal",
        };
        let mut body = json!({ "id": message_id(id), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": null });
        if let Some(usage) = reply.usage {
            // Anthropic counts the cache apart: the prompt is input + cache reads + cache writes.
            body["usage"] = json!({ "input_tokens": usage.input.saturating_sub(usage.cached),
                "cache_read_input_tokens": usage.cached, "cache_creation_input_tokens": 0, "output_tokens": usage.output });
        }
        body
    }

    fn stream_writer(&self, model: &str, id: AnswerId) -> Box<dyn StreamWriter> {
        Box::new(EventWriter::new(model, message_id(id)))
    }

    fn usage_of_reply(&self, body: &Value) -> Option<Usage> {
        usage_of(&UsageObject::of_value(&body["usage"]))
    }

    fn read_reply_head(&self, body: &[u8]) -> (bool, Option<Usage>) {
        read_head(self, body, usage_of)
    }

    fn stream_pieces(&self, event: &str, data: &str) -> Vec<StreamPiece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return vec![if data.trim() == "[DONE]" { StreamPiece::Done } else { StreamPiece::Nothing }];
        };
        if let Some(error) = stream_error(event, &value) {
            return vec![error];
        }
        let index = || value["index"].as_u64().and_then(|i| u32::try_from(i).ok()).unwrap_or(0);
        vec![match value["type"].as_str().unwrap_or(event) {
            "content_block_start" if value["content_block"]["type"] == "tool_use" => {
                let block = &value["content_block"];
                StreamPiece::ToolCall {
                    index: index(),
                    id: block["id"].as_str().unwrap_or_default().to_owned(),
                    name: block["name"].as_str().unwrap_or_default().to_owned(),
                }
            }
            "content_block_delta" => match (value["delta"]["text"].as_str(), value["delta"]["partial_json"].as_str()) {
                (Some(text), _) if !text.is_empty() => StreamPiece::Text(text.to_owned()),
                (_, Some(json)) if !json.is_empty() => {
                    StreamPiece::ToolArguments { index: index(), json: json.to_owned() }
                }
                _ => StreamPiece::Nothing,
            },
            "message_start" => usage_of(&UsageObject::of_value(&value["message"]["usage"]))
                .map_or(StreamPiece::Nothing, StreamPiece::Usage),
            // The output so far; the input too where the delta carries it (the API does now, and
            // so do gateways that learn the input only at the end, as a translated stream does).
            "message_delta" if value["usage"]["input_tokens"].is_u64() => {
                usage_of(&UsageObject::of_value(&value["usage"])).map_or(StreamPiece::Nothing, StreamPiece::Usage)
            }
            "message_delta" => {
                value["usage"]["output_tokens"].as_u64().map_or(StreamPiece::Nothing, StreamPiece::OutputTokens)
            }
            "message_stop" => StreamPiece::Done,
            _ => StreamPiece::Nothing,
        }]
    }

    /// `[DONE]`; an `error` event or member; the events that carry the usage and the end (by
    /// their `type`, or their name when they have none).
    fn stream_signals(&self) -> &'static [&'static str] {
        &["[DONE]", "error", "message_start", "message_delta", "message_stop"]
    }

    fn write_event(&self, name: &str, data: &str) -> Vec<u8> {
        if name.is_empty() {
            format!("data: {data}\n\n").into_bytes()
        } else {
            format!("event: {name}\ndata: {data}\n\n").into_bytes()
        }
    }

    fn error_body(&self, problem: Problem, message: &str) -> Value {
        json!({ "type": "error", "error": { "type": problem.anthropic_type(), "message": message } })
    }

    fn model_list(&self, models: &[ListedModel]) -> Value {
        let data: Vec<_> = models
            .iter()
            .map(|m| json!({ "type": "model", "id": m.id, "display_name": m.id, "created_at": "1970-01-01T00:00:00Z" }))
            .collect();
        json!({
            "data": data,
            "has_more": false,
            "first_id": models.first().map(|m| &m.id),
            "last_id": models.last().map(|m| &m.id),
        })
    }

    fn broken_off(&self, stream: bool, message: &str) -> Bytes {
        let body = json!({ "type": "error", "error": { "type": "api_error", "message": message } });
        error_answer(self, stream, "error", &body)
    }

    fn announced_limits(&self, headers: &HeaderMap, now: Timestamp, skew: ClockSkew) -> Announced {
        let reset = |text: &str| Some(provider_instant(text, skew)?.max(now));
        let window =
            |[limit, remaining, reset_name]: [&str; 3]| window_of(headers, now, [limit, remaining, reset_name], &reset);
        Announced {
            requests: window([
                "anthropic-ratelimit-requests-limit",
                "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset",
            ]),
            tokens: window([
                "anthropic-ratelimit-input-tokens-limit",
                "anthropic-ratelimit-input-tokens-remaining",
                "anthropic-ratelimit-input-tokens-reset",
            ])
            .or_else(|| {
                window([
                    "anthropic-ratelimit-tokens-limit",
                    "anthropic-ratelimit-tokens-remaining",
                    "anthropic-ratelimit-tokens-reset",
                ])
            }),
        }
    }

    /// Anthropic limits each model class: the Opus models share one limit, the Sonnet models
    /// another, the Haiku models a third.
    fn scope(&self, model: &std::sync::Arc<str>) -> std::sync::Arc<str> {
        use std::sync::{Arc, LazyLock};
        /// The classes, made once.
        static CLASSES: LazyLock<[(&str, Arc<str>); 3]> =
            LazyLock::new(|| ["opus", "sonnet", "haiku"].map(|class| (class, Arc::from(format!("claude-{class}")))));
        let holds = |class: &str| {
            model.as_bytes().windows(class.len()).any(|window| window.eq_ignore_ascii_case(class.as_bytes()))
        };
        match CLASSES.iter().find(|(class, _)| holds(class)) {
            Some((_, scope)) => scope.clone(),
            None => model.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
