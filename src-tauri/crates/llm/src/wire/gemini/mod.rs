//! Google Gemini's native API (`generativelanguage.googleapis.com`): how a request is addressed
//! and shaped, how its answers (whole, streamed as SSE, or streamed as one JSON array) are read,
//! and what its refusals mean to the pool.
//!
//! Gemini sends no rate-limit headers; its refusals say what they mean in the JSON error body:
//! `error.status` and `error.details[]` (`google.rpc.QuotaFailure` names the quota hit, per
//! minute or per day; `google.rpc.RetryInfo` the wait; `google.rpc.ErrorInfo` an invalid key).
//! Its 429 message mentions "billing" even for a per-minute limit: that text never means "out of
//! credit" here.

use std::time::Duration;

use bytes::Bytes;
use keypool::{Announced, Quota, Timestamp};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

use super::read::{self, name_results};
use super::{
    error_answer, error_message, ClientRequest, Delivery, ListedModel, Operation, Problem, StreamPiece, Untranslatable,
    Wire, WireFormat, WriteOptions,
};
use super::{AnswerId, StreamWriter, Tally};
use crate::conversation::{
    arguments_value, base64_of, file_text, CacheMarks, Conversation, Finish, Message, Part, Reply, Role, ToolCall,
    ToolResult, Usage,
};
use crate::error::{Breakage, Failure, Meaning};
use crate::provider_clock::ClockSkew;

pub(crate) struct GeminiGenerate;

/// The path of a model's method under the base URL: `v1beta/models/{model}:{method}`, the model
/// percent-encoded as one path segment, a `models/` prefix dropped.
pub(crate) fn model_path(model: &str, method: &str) -> String {
    let model = model.strip_prefix("models/").unwrap_or(model);
    let segment = percent_encoding::utf8_percent_encode(model, SEGMENT);
    format!("v1beta/models/{segment}:{method}")
}

/// What may not stand as itself in one path segment.
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The path of a reply: `:generateContent`, or streamed as SSE `:streamGenerateContent?alt=sse`.
pub(crate) fn generate_path(model: &str, stream: bool) -> String {
    if stream {
        format!("{}?alt=sse", model_path(model, "streamGenerateContent"))
    } else {
        model_path(model, "generateContent")
    }
}

/// A turn's `parts`: text (files named), images as `inlineData`, tool calls as `functionCall`
/// and their results as `functionResponse`.
pub(crate) fn parts(message: &Message) -> Value {
    let parts = message.parts.iter().map(|part| match part {
        Part::Text(text) => json!({ "text": text }),
        Part::File { name, text } => json!({ "text": file_text(name, text) }),
        Part::Image { media_type, data } => {
            json!({ "inlineData": { "mimeType": media_type, "data": base64_of(data) } })
        }
        Part::ToolCall(call) => {
            json!({ "functionCall": { "name": call.name, "args": arguments_value(&call.arguments) } })
        }
        Part::ToolResult(result) => {
            json!({ "functionResponse": { "name": result.name, "response": { "content": result.content } } })
        }
    });
    Value::Array(parts.collect())
}

/// The request body: the system prompt as `systemInstruction`, the turns as `contents` with the
/// roles `user` and `model`. No `maxOutputTokens` unless asked for: a thinking model spends its
/// thoughts from it, and a low bound would cut replies short.
fn body(conversation: &Conversation) -> Value {
    let contents: Vec<Value> = conversation
        .messages
        .iter()
        .map(|m| {
            let role = if m.role == Role::Assistant { "model" } else { "user" };
            json!({ "role": role, "parts": parts(m) })
        })
        .collect();
    let mut body = json!({ "contents": contents });
    if let Some(system) = &conversation.system {
        body["systemInstruction"] = json!({ "parts": [{ "text": system }] });
    }
    if !conversation.tools.is_empty() {
        let declarations = conversation.tools.iter().map(|tool| {
            let mut declared = json!({ "name": tool.name, "parameters": tool.parameters });
            if let Some(description) = &tool.description {
                declared["description"] = json!(description);
            }
            declared
        });
        body["tools"] = json!([{ "functionDeclarations": declarations.collect::<Vec<_>>() }]);
    }
    let sampling = &conversation.sampling;
    let mut config = serde_json::Map::new();
    if let Some(max) = sampling.max_tokens {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(temperature) = sampling.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = sampling.top_p {
        config.insert("topP".into(), json!(top_p));
    }
    if !sampling.stop.is_empty() {
        config.insert("stopSequences".into(), json!(sampling.stop));
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    body
}

/// A `generateContent` body read into the conversation (its model is in the path). A call's
/// name stands for its id: Gemini answers a call by name.
fn read(body: &Value) -> Result<ClientRequest, Untranslatable> {
    let mut messages = Vec::new();
    for content in body["contents"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let role = if content["role"] == "model" { Role::Assistant } else { Role::User };
        let mut parts = Vec::new();
        for part in content["parts"].as_array().map(Vec::as_slice).unwrap_or_default() {
            if part["thought"] == true {
                continue;
            }
            if let Some(text) = part["text"].as_str() {
                parts.push(Part::Text(text.to_owned()));
            } else if let Some(data) = part.get("inlineData") {
                let media_type = data["mimeType"].as_str().unwrap_or("image/png").to_owned();
                parts.push(Part::Image { media_type, data: read::base64(data["data"].as_str().unwrap_or_default())? });
            } else if let Some(call) = part.get("functionCall") {
                let name = call["name"].as_str().unwrap_or_default().to_owned();
                parts.push(Part::ToolCall(ToolCall { id: name.clone(), name, arguments: call["args"].to_string() }));
            } else if let Some(answer) = part.get("functionResponse") {
                let name = answer["name"].as_str().unwrap_or_default().to_owned();
                let response = &answer["response"];
                let content = response["content"].as_str().map_or_else(|| response.to_string(), str::to_owned);
                parts.push(Part::ToolResult(ToolResult { call_id: name.clone(), name, content, is_error: false }));
            } else {
                return Err(Untranslatable(
                    "a Gemini part of this kind cannot be carried (files, code execution)".into(),
                ));
            }
        }
        messages.push(Message { role, parts });
    }
    let mut tools = Vec::new();
    for tool in body["tools"].as_array().map(Vec::as_slice).unwrap_or_default() {
        // Google's own tools (search, code execution) run only at Google and are left out.
        let Some(declarations) = tool["functionDeclarations"].as_array() else { continue };
        for declared in declarations {
            tools.push(read::tool(&declared["name"], &declared["description"], &declared["parameters"])?);
        }
    }
    let system = read::text_of(&body["systemInstruction"]["parts"]);
    let config = &body["generationConfig"];
    let conversation = Conversation {
        system: (!system.is_empty()).then_some(system),
        messages,
        tools,
        sampling: read::sampling(
            &config["maxOutputTokens"],
            &config["temperature"],
            &config["topP"],
            &config["stopSequences"],
        ),
        // Gemini's clients cache by a cached content's name, not by marks.
        cache: CacheMarks::Unmarked,
    };
    Ok(ClientRequest { model: String::new(), stream: false, conversation: name_results(conversation) })
}

/// The text of a GenerateContentResponse: its first candidate's parts, thoughts left out.
pub(crate) fn text_of(response: &Value) -> Option<String> {
    let parts = response["candidates"][0]["content"]["parts"].as_array()?;
    Some(parts.iter().filter(|p| p["thought"] != true).filter_map(|p| p["text"].as_str()).collect())
}

/// `usageMetadata`: the prompt counts its cached tokens (`promptTokenCount` includes
/// `cachedContentTokenCount`); the output is the candidates' tokens plus the thoughts'.
pub(crate) fn usage_of(response: &Value) -> Option<Usage> {
    let usage = &response["usageMetadata"];
    Some(Usage {
        input: usage["promptTokenCount"].as_u64()?,
        cached: usage["cachedContentTokenCount"].as_u64().unwrap_or(0),
        output: usage["candidatesTokenCount"].as_u64().unwrap_or(0) + usage["thoughtsTokenCount"].as_u64().unwrap_or(0),
    })
}

/// The usage of a whole answer: one GenerateContentResponse, or the JSON array a stream without
/// `alt=sse` is (its last element that reports one: the counts are cumulative).
pub(crate) fn usage_of_reply(body: &Value) -> Option<Usage> {
    match body.as_array() {
        Some(responses) => responses.iter().rev().find_map(usage_of),
        None => usage_of(body),
    }
}

/// Finish reasons that mean the reply was stopped by a filter, not finished.
const BLOCKED: [&str; 6] = ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"];

/// How a GenerateContentResponse ends the reply, if it does: blocked (the prompt by
/// `promptFeedback.blockReason`, the reply by a filter's `finishReason`), or finished.
pub(crate) fn ending_of(response: &Value) -> Option<StreamPiece> {
    if response["promptFeedback"]["blockReason"].is_string() {
        return Some(StreamPiece::Broken(Breakage::PromptBlocked));
    }
    let reason = response["candidates"][0]["finishReason"].as_str()?;
    if BLOCKED.contains(&reason) {
        Some(StreamPiece::Broken(Breakage::ReplyBlocked))
    } else {
        Some(StreamPiece::Done)
    }
}

/// The pieces of one streamed GenerateContentResponse (an SSE event's data), in order: an error
/// object ends the attempt as the refusal it describes; else its text, its usage so far, and its
/// end if it has one.
pub(crate) fn stream_pieces(data: &str) -> Vec<StreamPiece> {
    let Ok(response) = serde_json::from_str::<Value>(data) else { return vec![StreamPiece::Nothing] };
    if response.get("error").is_some_and(|e| !e.is_null()) {
        let status = response["error"]["code"].as_u64().and_then(|c| u16::try_from(c).ok()).unwrap_or(500);
        return vec![StreamPiece::Error(refusal(status, data, None))];
    }
    let mut pieces = Vec::with_capacity(3);
    if let Some(text) = text_of(&response).filter(|t| !t.is_empty()) {
        pieces.push(StreamPiece::Text(text));
    }
    // A call comes whole in one part; its name stands for its id.
    let calls = response["candidates"][0]["content"]["parts"].as_array().into_iter().flatten();
    for (index, call) in calls.filter_map(|p| p.get("functionCall")).enumerate() {
        let name = call["name"].as_str().unwrap_or_default().to_owned();
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        pieces.push(StreamPiece::ToolCall { index, id: name.clone(), name });
        pieces.push(StreamPiece::ToolArguments { index, json: call["args"].to_string() });
    }
    if let Some(usage) = usage_of(&response) {
        pieces.push(StreamPiece::Usage(usage));
    }
    pieces.extend(ending_of(&response));
    pieces
}

/// What a Gemini refusal (`status`, its error `body`) means, as a [`Failure`]:
///
/// | answer | meaning |
/// |---|---|
/// | 429 naming a per-minute quota | the model rests for `RetryInfo.retryDelay` (the ladder without one) |
/// | 429 naming a per-day quota | the model is used up for the day, whatever the delay |
/// | 429 naming no quota | a rate limit, with the ladder |
/// | 400 `ErrorInfo.reason: API_KEY_INVALID` | the key is refused, as a 401 |
/// | any other 400 | the request's fault: no pool action |
/// | 403 | the key is refused |
/// | 500, 503 | overloaded, as Anthropic's 529: a brief rest and failover |
///
/// `retry_after` is the wait its headers announced, if any; `RetryInfo` wins over it.
pub(crate) fn refusal(status: u16, body: &str, retry_after: Option<Duration>) -> Failure {
    let error: Value = serde_json::from_str::<Value>(body).map(|v| v["error"].clone()).unwrap_or(Value::Null);
    let details: &[Value] = error["details"].as_array().map_or(&[], Vec::as_slice);
    let of_type = |name: &'static str| {
        details.iter().filter(move |d| {
            d["@type"].as_str().and_then(|t| t.strip_suffix(name)).is_some_and(|rest| rest.ends_with("google.rpc."))
        })
    };
    let retry_after =
        of_type("RetryInfo").find_map(|d| d["retryDelay"].as_str().and_then(protobuf_duration)).or(retry_after);
    let quota_ids: Vec<&str> = of_type("QuotaFailure")
        .flat_map(|d| d["violations"].as_array().map_or(&[][..], Vec::as_slice))
        .filter_map(|v| v["quotaId"].as_str())
        .collect();
    let reason = of_type("ErrorInfo").find_map(|d| d["reason"].as_str());
    let meaning = match status {
        429 => {
            // A day's quota outlasts a minute's: when both are named, the day decides.
            let quota = if quota_ids.iter().any(|id| id.contains("PerDay")) {
                Some(Quota::PerDay)
            } else if quota_ids.iter().any(|id| id.contains("PerMinute")) {
                Some(Quota::PerMinute)
            } else {
                None
            };
            Some(Meaning::RateLimit(quota))
        }
        400 if reason == Some("API_KEY_INVALID") => Some(Meaning::KeyRefused),
        500 | 503 => Some(Meaning::RateLimit(None)),
        _ => None,
    };
    Failure { retry_after, meaning, ..Failure::new(status, error_message(body)) }
}

/// A protobuf `Duration` in JSON: seconds with an `s`, e.g. `"37s"`, `"37.800s"`, `"0s"`.
fn protobuf_duration(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The models of one page of `GET v1beta/models` that can generate content, without their
/// `models/` prefix, and the next page's token.
pub(crate) fn models_page(page: &Value) -> Option<(Vec<String>, Option<String>)> {
    let models = page["models"].as_array()?;
    let ids = models
        .iter()
        .filter(|m| {
            m["supportedGenerationMethods"]
                .as_array()
                .is_some_and(|methods| methods.iter().any(|method| method == "generateContent"))
        })
        .filter_map(|m| m["name"].as_str())
        .map(|name| name.strip_prefix("models/").unwrap_or(name).to_owned())
        .collect();
    let next = page["nextPageToken"].as_str().filter(|t| !t.is_empty()).map(str::to_owned);
    Some((ids, next))
}

/// `streamGenerateContent?alt=sse` events: each a GenerateContentResponse. Text goes as it
/// comes; a call goes whole (Gemini has no argument deltas), once its arguments are complete:
/// when the next call starts or the answer ends.
struct ResponseWriter {
    model: String,
    /// The answer's `responseId`, in each of its chunks.
    id: String,
    tally: Tally,
    /// Calls whose arguments are still arriving: name and arguments so far.
    pending: Vec<(u32, String, String)>,
}

impl ResponseWriter {
    fn send(&self, parts: Vec<Value>, finish: Option<&str>, out: &mut Vec<u8>) {
        let mut candidate = json!({ "content": { "role": "model", "parts": parts }, "index": 0 });
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        let mut response = json!({ "candidates": [candidate], "modelVersion": self.model, "responseId": self.id });
        if let (Some(usage), Some(_)) = (self.tally.usage, finish) {
            response["usageMetadata"] = json!({ "promptTokenCount": usage.input, "cachedContentTokenCount": usage.cached,
                "candidatesTokenCount": usage.output, "totalTokenCount": usage.input + usage.output });
        }
        out.extend_from_slice(format!("data: {response}\r\n\r\n").as_bytes());
    }

    fn calls(&mut self) -> Vec<Value> {
        self.pending
            .drain(..)
            .map(
                |(_, name, arguments)| json!({ "functionCall": { "name": name, "args": arguments_value(&arguments) } }),
            )
            .collect()
    }
}

impl StreamWriter for ResponseWriter {
    fn piece(&mut self, piece: &StreamPiece, out: &mut Vec<u8>) {
        if self.tally.count(piece) {
            return;
        }
        match piece {
            StreamPiece::Text(text) => self.send(vec![json!({ "text": text })], None, out),
            StreamPiece::ToolCall { index, name, .. } => {
                let done = self.calls();
                if !done.is_empty() {
                    self.send(done, None, out);
                }
                self.pending.push((*index, name.clone(), String::new()));
            }
            StreamPiece::ToolArguments { index, json } => {
                if let Some(call) = self.pending.iter_mut().find(|(i, ..)| i == index) {
                    call.2.push_str(json);
                }
            }
            StreamPiece::Done | StreamPiece::Broken(_) => {
                let parts = self.calls();
                self.send(parts, Some("STOP"), out);
            }
            StreamPiece::Error(failure) => {
                let error =
                    json!({ "error": { "code": failure.status, "message": failure.message, "status": "UNAVAILABLE" } });
                out.extend_from_slice(format!("data: {error}\r\n\r\n").as_bytes());
            }
            _ => {}
        }
    }
}

impl Wire for GeminiGenerate {
    fn format(&self) -> WireFormat {
        WireFormat::GeminiGenerate
    }

    fn path(&self, operation: Operation, model: &str, delivery: Delivery) -> Option<std::borrow::Cow<'static, str>> {
        match (operation, delivery) {
            (Operation::Reply, Delivery::Whole) => Some(model_path(model, "generateContent").into()),
            (Operation::Reply, Delivery::Events) => Some(generate_path(model, true).into()),
            (Operation::Reply, Delivery::Array) => Some(model_path(model, "streamGenerateContent").into()),
            (Operation::CountTokens, _) => Some(model_path(model, "countTokens").into()),
            (Operation::Compact, _) => None,
        }
    }

    /// `{model}:{method}` (a `models/` prefix, as some clients write it, dropped):
    /// `generateContent`, `streamGenerateContent` (events with `alt=sse`, one JSON array
    /// without), `countTokens`.
    fn action<'a>(&self, action: &'a str, query: Option<&str>) -> Option<(&'a str, Operation, Delivery)> {
        let (model, method) = action.rsplit_once(':')?;
        let model = model.strip_prefix("models/").unwrap_or(model);
        if model.is_empty() {
            return None;
        }
        let sse = query.is_some_and(|q| q.split('&').any(|pair| pair == "alt=sse"));
        let (operation, delivery) = match method {
            "generateContent" => (Operation::Reply, Delivery::Whole),
            "streamGenerateContent" if sse => (Operation::Reply, Delivery::Events),
            "streamGenerateContent" => (Operation::Reply, Delivery::Array),
            "countTokens" => (Operation::CountTokens, Delivery::Whole),
            _ => return None,
        };
        Some((model, operation, delivery))
    }

    fn models_path(&self) -> &'static str {
        "v1beta/models"
    }

    fn models_paging(&self) -> Option<(&'static str, &'static str)> {
        Some(("pageSize", "pageToken"))
    }

    fn models_page(&self, page: &Value) -> Option<(Vec<String>, Option<String>)> {
        models_page(page)
    }

    /// In a header, never in the URL (`?key=`): URLs end up in logs and proxies.
    fn key_header(&self) -> (&'static str, &'static str) {
        ("x-goog-api-key", "")
    }

    fn write_request(&self, conversation: &Conversation, _model: &str, _options: WriteOptions) -> Value {
        body(conversation)
    }

    fn read_request(&self, body: &Value) -> Result<ClientRequest, Untranslatable> {
        read(body)
    }

    fn reply_text(&self, body: &Value) -> Option<String> {
        text_of(body)
    }

    fn blocked(&self, body: &Value) -> Option<Breakage> {
        match ending_of(body) {
            Some(StreamPiece::Broken(broke)) => Some(broke),
            _ => None,
        }
    }

    fn read_reply(&self, body: &Value) -> Option<Reply> {
        let candidate = &body["candidates"][0];
        let given = candidate["content"]["parts"].as_array()?;
        let parts: Vec<Part> = given
            .iter()
            .filter(|p| p["thought"] != true)
            .filter_map(|p| {
                if let Some(text) = p["text"].as_str() {
                    return Some(Part::Text(text.to_owned()));
                }
                let call = p.get("functionCall")?;
                let name = call["name"].as_str().unwrap_or_default().to_owned();
                Some(Part::ToolCall(ToolCall { id: name.clone(), name, arguments: call["args"].to_string() }))
            })
            .collect();
        let calls = parts.iter().any(|p| matches!(p, Part::ToolCall(_)));
        let finish = match candidate["finishReason"].as_str() {
            Some("MAX_TOKENS") => Finish::Length,
            Some(reason) if BLOCKED.contains(&reason) => Finish::Refused,
            // Gemini says STOP after calling a function too.
            _ if calls => Finish::ToolCalls,
            _ => Finish::Stop,
        };
        Some(Reply { parts, finish, usage: usage_of(body) })
    }

    fn write_reply(&self, reply: &Reply, model: &str, id: AnswerId) -> Value {
        let parts: Vec<Value> = reply
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(json!({ "text": text })),
                Part::ToolCall(call) => {
                    Some(json!({ "functionCall": { "name": call.name, "args": arguments_value(&call.arguments) } }))
                }
                _ => None,
            })
            .collect();
        let finish = match reply.finish {
            Finish::Stop | Finish::ToolCalls => "STOP",
            Finish::Length => "MAX_TOKENS",
            Finish::Refused => "SAFETY",
        };
        let mut body = json!({ "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": finish,
            "index": 0 }], "modelVersion": model, "responseId": id.base62() });
        if let Some(usage) = reply.usage {
            body["usageMetadata"] = json!({ "promptTokenCount": usage.input, "cachedContentTokenCount": usage.cached,
                "candidatesTokenCount": usage.output, "totalTokenCount": usage.input + usage.output });
        }
        body
    }

    fn stream_writer(&self, model: &str, id: AnswerId) -> Box<dyn StreamWriter> {
        Box::new(ResponseWriter {
            model: model.to_owned(),
            id: id.base62(),
            tally: Tally::default(),
            pending: Vec::new(),
        })
    }

    fn usage_of_reply(&self, body: &Value) -> Option<Usage> {
        usage_of_reply(body)
    }

    fn stream_pieces(&self, _event: &str, data: &str) -> Vec<StreamPiece> {
        stream_pieces(data)
    }

    /// An `error` member; `usageMetadata`; a finish or a block.
    fn stream_signals(&self) -> &'static [&'static str] {
        &["error", "usageMetadata", "finishReason", "blockReason"]
    }

    fn error_body(&self, problem: Problem, message: &str) -> Value {
        json!({ "error": { "code": problem.status(), "message": message, "status": problem.google_status() } })
    }

    fn model_list(&self, models: &[ListedModel]) -> Value {
        let models: Vec<_> = models
            .iter()
            .map(|m| {
                json!({ "name": format!("models/{}", m.id), "displayName": m.id,
                    "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"] })
            })
            .collect();
        json!({ "models": models })
    }

    fn broken_off(&self, stream: bool, message: &str) -> Bytes {
        let body = json!({ "error": { "code": 502, "message": message, "status": "UNAVAILABLE" } });
        error_answer(self, stream, "", &body)
    }

    fn refusal(&self, status: u16, body: &str, retry_after: Option<Duration>, announced: Announced) -> Failure {
        Failure { announced, ..refusal(status, body, retry_after) }
    }

    /// Gemini announces no windows: its refusals say what was hit.
    fn announced_limits(&self, _headers: &HeaderMap, _now: Timestamp, _skew: ClockSkew) -> Announced {
        Announced::default()
    }

    /// Gemini's quotas are per model; `models/x` and `x` are one model.
    fn scope(&self, model: &std::sync::Arc<str>) -> std::sync::Arc<str> {
        match model.strip_prefix("models/") {
            Some(bare) => bare.into(),
            None => model.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
