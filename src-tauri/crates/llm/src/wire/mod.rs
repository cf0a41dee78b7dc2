//! The wire formats: how a request is addressed, authenticated and written, how its answers
//! (whole or streamed) are read and written back, and what a refusal means to the pool. One
//! module per format behind one trait, [`Wire`]; the rest of the crate asks the trait, never
//! which format it is.
//!
//! Requests are written from one internal representation of a conversation
//! ([`crate::conversation`]); streamed answers are read into provider-neutral [`StreamPiece`]s.

use std::time::Duration;

use bytes::Bytes;
use keypool::{Announced, Secret, Timestamp};
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::Value;

use crate::conversation::{Conversation, Usage};
use crate::error::{Breakage, Failure, Meaning};
use crate::provider_clock::ClockSkew;

mod anthropic;
pub(crate) mod gemini;
mod openai_chat;
mod openai_responses;

pub use anthropic::ANTHROPIC_VERSION;

/// The wire formats Keypool speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// OpenAI's Chat Completions (`POST chat/completions` under a `…/v1` base URL).
    OpenAiChat,
    /// OpenAI's Responses API (`POST responses` under a `…/v1` base URL): Codex CLI's.
    OpenAiResponses,
    /// Anthropic's Messages API (`POST v1/messages` under the host root).
    AnthropicMessages,
    /// Google Gemini's `generateContent` (`POST v1beta/models/{model}:generateContent`).
    GeminiGenerate,
}

impl WireFormat {
    /// The format's reader and writer.
    pub fn wire(self) -> &'static dyn Wire {
        match self {
            WireFormat::OpenAiChat => &openai_chat::OpenAiChat,
            WireFormat::OpenAiResponses => &openai_responses::OpenAiResponses,
            WireFormat::AnthropicMessages => &anthropic::AnthropicMessages,
            WireFormat::GeminiGenerate => &gemini::GeminiGenerate,
        }
    }
}

/// How a request is written beyond its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Stream the answer.
    pub stream: bool,
    /// The bound on the answer's length where the format requires one (Anthropic).
    pub max_tokens: u32,
    /// Ask a streamed answer for its usage where the format needs asking (OpenAI's
    /// `stream_options.include_usage`; some compatible servers refuse the field).
    pub stream_usage: bool,
}

/// One event of a streamed answer, as a provider-neutral fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamPiece {
    Text(String),
    /// A tool call begins (its arguments follow as [`StreamPiece::ToolArguments`]); `index` tells
    /// calls of one answer apart.
    ToolCall {
        index: u32,
        id: String,
        name: String,
    },
    /// More of a tool call's arguments (JSON text, in pieces).
    ToolArguments {
        index: u32,
        json: String,
    },
    /// The reply is complete.
    Done,
    /// The provider reported an error inside the stream: the refusal it stands for, its status
    /// the HTTP status it corresponds to (e.g. 529 for Anthropic's `overloaded_error`).
    Error(Failure),
    /// The reply ended as no reply (Gemini: a prompt or reply blocked by its filter).
    Broken(Breakage),
    /// What the reply used so far: OpenAI's last chunk (the whole usage), Anthropic's
    /// `message_start` (the input side) and `message_delta` (the output count, cumulative).
    Usage(Usage),
    /// Anthropic's output count so far (`message_delta`), to combine with the input side.
    OutputTokens(u64),
    /// Anything else (pings, metadata).
    Nothing,
}

/// One wire format. Implementations are unit structs; [`WireFormat::wire`] hands them out.
pub trait Wire: Send + Sync {
    fn format(&self) -> WireFormat;

    // Addressing and keys.

    /// The path of a reply of `model` under the base URL, whole or streamed.
    fn reply_path(&self, model: &str, stream: bool) -> String;

    /// The path of the model list under the base URL.
    fn models_path(&self) -> &'static str;

    /// The query parameters that page the model list: the page size and the cursor.
    fn models_paging(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The models of one page of the list, and the next page's cursor.
    fn models_page(&self, page: &Value) -> Option<(Vec<String>, Option<String>)>;

    /// Puts `key` in `headers` where this format expects it, as a sensitive value (none: only
    /// the headers the format still expects). A key that cannot be a header value is left out,
    /// and the provider refuses the request as one without a key.
    fn authorize(&self, headers: &mut HeaderMap, key: Option<&Secret>);

    // Requests.

    /// The request body for `conversation` to `model`.
    fn write_request(&self, conversation: &Conversation, model: &str, options: WriteOptions) -> Value;

    // Answers.

    /// The text of a whole answer.
    fn reply_text(&self, body: &Value) -> Option<String>;

    /// How a whole answer ends when it is not a reply (blocked by a filter).
    fn blocked(&self, _body: &Value) -> Option<Breakage> {
        None
    }

    /// The usage a whole answer reports.
    fn usage_of_reply(&self, body: &Value) -> Option<Usage>;

    /// Whether a whole answer carries an error, and its usage, read as cheaply as the format
    /// allows (the local API's hot path).
    fn read_reply_head(&self, body: &[u8]) -> (bool, Option<Usage>) {
        match serde_json::from_slice::<Value>(body) {
            Ok(reply) => (reply.get("error").is_some_and(|e| !e.is_null()), self.usage_of_reply(&reply)),
            Err(_) => (false, None),
        }
    }

    /// Every piece of one SSE event (`event:` name and `data:` payload) of a stream, in order.
    fn stream_pieces(&self, event: &str, data: &str) -> Vec<StreamPiece>;

    /// One SSE event in this format's framing.
    fn write_event(&self, name: &str, data: &str) -> Vec<u8> {
        let _ = name;
        format!("data: {data}\n\n").into_bytes()
    }

    /// The end of an answer that broke off, in this format's words: an error event (`stream`),
    /// or an error body.
    fn broken_off(&self, stream: bool, message: &str) -> Bytes;

    // What refusals and answers mean to the pool.

    /// What a refusal (`status`, its error `body`, the wait and the windows its headers
    /// announced) means.
    fn refusal(&self, status: u16, body: &str, retry_after: Option<Duration>, announced: Announced) -> Failure {
        Failure {
            status,
            message: error_message(body),
            retry_after,
            announced,
            out_of_credit: out_of_credit(status, body),
            meaning: names_invalid_key(body).then_some(Meaning::KeyRefused),
        }
    }

    /// The windows an answer's headers announced, as absolute times from `now`.
    fn announced_limits(&self, headers: &HeaderMap, now: Timestamp, skew: ClockSkew) -> Announced;

    /// The rate-limit scope of a request to `model`: the provider limits each model apart,
    /// unless its format says otherwise.
    fn scope(&self, model: &str) -> String {
        model.to_owned()
    }
}

/// `base` and `path` joined by one slash.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// An OpenAI or Anthropic `usage` object, read by the members' names: deserialized straight from
/// a reply (no `Value` built, its map and its strings allocated, on the local API's hot path),
/// or taken from a `Value` ([`UsageObject::of_value`]).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct UsageObject {
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) prompt_tokens_details: Option<PromptTokensDetails>,
    pub(crate) completion_tokens: Option<u64>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) cache_read_input_tokens: Option<u64>,
    pub(crate) cache_creation_input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    /// The Responses API's cached input.
    pub(crate) input_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: Option<u64>,
}

impl UsageObject {
    /// The members of `usage` that are counts; anything else (missing, `null`, text, a negative
    /// or fractional number) is none. Deserialized, such a member fails the whole read instead.
    pub(crate) fn of_value(usage: &Value) -> UsageObject {
        let count = |name: &str| usage[name].as_u64();
        UsageObject {
            prompt_tokens: count("prompt_tokens"),
            prompt_tokens_details: Some(PromptTokensDetails {
                cached_tokens: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
            }),
            completion_tokens: count("completion_tokens"),
            input_tokens: count("input_tokens"),
            cache_read_input_tokens: count("cache_read_input_tokens"),
            cache_creation_input_tokens: count("cache_creation_input_tokens"),
            output_tokens: count("output_tokens"),
            input_tokens_details: Some(PromptTokensDetails {
                cached_tokens: usage["input_tokens_details"]["cached_tokens"].as_u64(),
            }),
        }
    }
}

/// Whether a whole answer carries an error, and its `usage` object read by `usage_of`: of an
/// OpenAI or Anthropic object only `error` (as raw text) and `usage` are read; a body read so
/// fails (not one object, a member of another type) is parsed whole by `wire`, as before.
pub(crate) fn read_head(
    wire: &dyn Wire,
    body: &[u8],
    usage_of: fn(&UsageObject) -> Option<Usage>,
) -> (bool, Option<Usage>) {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        error: Option<&'a serde_json::value::RawValue>,
        /// Read by name; a member of another type fails this read, and the reply is read as a
        /// `Value` below.
        #[serde(default)]
        usage: Option<UsageObject>,
    }
    if let Ok(head) = serde_json::from_slice::<Head>(body) {
        // `"error": null` reads as none.
        return (head.error.is_some(), head.usage.as_ref().and_then(usage_of));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(reply) => (reply.get("error").is_some_and(|e| !e.is_null()), wire.usage_of_reply(&reply)),
        Err(_) => (false, None),
    }
}

/// An error event of an OpenAI or Anthropic stream (an `error` event, or any event with an
/// `error` member), as the refusal it stands for.
pub(crate) fn stream_error(event: &str, value: &Value) -> Option<StreamPiece> {
    if event != "error" && value.get("error").is_none_or(|e| e.is_null()) {
        return None;
    }
    let error = &value["error"];
    let message = error["message"].as_str().unwrap_or("the provider reported an error").to_owned();
    let status = status_of_error(error);
    let out_of_credit = says_out_of_credit(error, &message);
    Some(StreamPiece::Error(Failure { out_of_credit, ..Failure::new(status, message) }))
}

/// Maps an error object found in a stream (either kind's shape) to the HTTP status it means.
fn status_of_error(error: &Value) -> u16 {
    let kind = error["type"].as_str().or_else(|| error["code"].as_str()).unwrap_or_default();
    if let Some(code) = error["code"].as_u64().or_else(|| error["status"].as_u64()) {
        if (400..600).contains(&code) {
            return code as u16;
        }
    }
    match kind {
        "overloaded_error" => 529,
        "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" | "requests" | "tokens" => 429,
        "authentication_error" | "invalid_api_key" => 401,
        "permission_error" => 403,
        _ => 500,
    }
}

/// Whether an error object says the account is out of credit rather than too fast: OpenAI's
/// `insufficient_quota` (a 429 that no waiting cures), Anthropic's "credit balance is too low".
fn says_out_of_credit(error: &Value, message: &str) -> bool {
    let named = |field: &str| error[field].as_str() == Some("insufficient_quota");
    named("code") || named("type") || message.to_ascii_lowercase().contains("credit balance is too low")
}

/// Whether an error answer means the key's account is out of credit: HTTP 402 (OpenRouter and
/// others), or a body that says so in either provider's words.
pub(crate) fn out_of_credit(status: u16, body: &str) -> bool {
    if status == 402 {
        return true;
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else { return false };
    let message = value["error"]["message"].as_str().unwrap_or_default();
    says_out_of_credit(&value["error"], message)
}

/// Whether an error body names the key as not valid (OpenAI's `code: invalid_api_key`, which
/// gateways send with a 403 too).
pub(crate) fn names_invalid_key(body: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(body) else { return false };
    let error = &value["error"];
    ["code", "type"].iter().any(|field| error[field].as_str() == Some("invalid_api_key"))
}

/// The provider's own words from an error body, if it has any; never more than a line.
pub(crate) fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().or_else(|| v["message"].as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let line = message.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

/// An error body (or, `stream`, an SSE event of it) in JSON.
pub(crate) fn error_answer(wire: &dyn Wire, stream: bool, name: &str, body: &Value) -> Bytes {
    let body = body.to_string();
    if stream {
        Bytes::from(wire.write_event(name, &body))
    } else {
        Bytes::from(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            [StreamPiece::Error(Failure {
                out_of_credit: true,
                ..Failure::new(429, "You exceeded your current quota")
            })],
            "inside a stream too"
        );
    }
}
