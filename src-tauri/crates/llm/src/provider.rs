//! The provider kinds: how a request is addressed, authenticated and shaped, and how a reply
//! (whole or streamed) is read.

use keypool::{ProviderId, Secret};

use crate::error::{Breakage, Failure};
use crate::parts::{self, Attachment};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// How a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI's Chat Completions API, and everything compatible with it (local servers, gateways).
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Google Gemini's native API (`generateContent`); the base URL is the host root.
    Gemini,
}

impl ProviderKind {
    pub fn parse(kind: &str) -> Option<Self> {
        match kind {
            "openai" => Some(ProviderKind::Openai),
            "anthropic" => Some(ProviderKind::Anthropic),
            "gemini" => Some(ProviderKind::Gemini),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
        }
    }
}

/// Where and how to reach a provider.
#[derive(Debug, Clone)]
pub struct ProviderEndpoint {
    pub id: ProviderId,
    /// The name people know it by, for messages (ids of added providers are UUIDs).
    pub name: String,
    pub kind: ProviderKind,
    /// e.g. `https://api.openai.com/v1`, `https://api.anthropic.com` or
    /// `https://generativelanguage.googleapis.com` (Gemini: the host root, `v1beta/…` is added).
    pub base_url: String,
    /// Used only while the provider's pool has no entries at all.
    pub provider_key: Option<Secret>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One turn of a conversation: its text, and (user turns) what is attached to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// Images and text files sent with the text, in the order they were attached.
    pub attachments: Vec<Attachment>,
}

impl ChatMessage {
    /// A turn of text alone.
    pub fn new(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage { role, content: content.into(), attachments: Vec::new() }
    }

    /// Whether any attachment is an image (a model that takes none refuses the request).
    pub fn has_images(&self) -> bool {
        self.attachments.iter().any(Attachment::is_image)
    }
}

/// The Anthropic API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

impl ProviderEndpoint {
    /// Where a reply of `model` is asked for, whole or streamed: one endpoint for OpenAI and
    /// Anthropic, a path per model and method for Gemini (`:generateContent`,
    /// `:streamGenerateContent?alt=sse`).
    pub fn completion_url(&self, model: &str, stream: bool) -> String {
        match self.kind {
            ProviderKind::Openai => join(&self.base_url, "chat/completions"),
            ProviderKind::Anthropic => join(&self.base_url, "v1/messages"),
            ProviderKind::Gemini => join(&self.base_url, &crate::gemini::generate_path(model, stream)),
        }
    }

    /// Where one of `model`'s methods is (Gemini: `v1beta/models/{model}:{method}`).
    pub(crate) fn model_method_url(&self, model: &str, method: &str) -> String {
        join(&self.base_url, &crate::gemini::model_path(model, method))
    }

    /// The cheapest authenticated request: listing models.
    pub fn models_url(&self) -> String {
        match self.kind {
            ProviderKind::Openai => join(&self.base_url, "models"),
            ProviderKind::Anthropic => join(&self.base_url, "v1/models"),
            ProviderKind::Gemini => join(&self.base_url, "v1beta/models"),
        }
    }

    /// Adds the key the way this kind expects it, as a sensitive header (kept out of debug
    /// output, and never re-sent on a redirect to another origin: the client follows none).
    pub fn authorize(&self, request: reqwest::RequestBuilder, key: &Secret) -> reqwest::RequestBuilder {
        self.authorize_with(request, Some(key))
    }

    /// Adds `key` as [`ProviderEndpoint::authorize`] does, or none as
    /// [`ProviderEndpoint::unauthorized`] does.
    pub fn authorize_with(&self, request: reqwest::RequestBuilder, key: Option<&Secret>) -> reqwest::RequestBuilder {
        let mut headers = reqwest::header::HeaderMap::new();
        self.authorize_headers(&mut headers, key);
        request.headers(headers)
    }

    /// A request with no key, the way this kind still expects its version header.
    pub fn unauthorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.authorize_with(request, None)
    }

    /// Puts `key` in `headers` the way this kind expects it (none: only the version header this
    /// kind still expects). A key that cannot be a header value is left out, and the provider
    /// refuses the request as one without a key.
    pub(crate) fn authorize_headers(&self, headers: &mut reqwest::header::HeaderMap, key: Option<&Secret>) {
        use reqwest::header::{HeaderName, HeaderValue, AUTHORIZATION};
        if self.kind == ProviderKind::Anthropic {
            headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
        }
        let Some(key) = key else { return };
        let (name, value) = match self.kind {
            ProviderKind::Openai => (AUTHORIZATION, HeaderValue::try_from(format!("Bearer {}", key.expose()))),
            ProviderKind::Anthropic => (HeaderName::from_static("x-api-key"), HeaderValue::from_str(key.expose())),
            // In a header, never in the URL (`?key=`): URLs end up in logs and proxies.
            ProviderKind::Gemini => (HeaderName::from_static("x-goog-api-key"), HeaderValue::from_str(key.expose())),
        };
        if let Ok(mut value) = value {
            value.set_sensitive(true);
            headers.insert(name, value);
        }
    }

    /// The request body. A streamed OpenAI-compatible request asks for the usage in a last chunk
    /// (`stream_options.include_usage`) unless `stream_usage` is false (a server refused the field).
    pub fn completion_body(&self, model: &str, messages: &[ChatMessage], max_tokens: u32, stream: bool) -> Value {
        self.completion_body_with(model, messages, max_tokens, stream, true)
    }

    pub(crate) fn completion_body_with(
        &self,
        model: &str,
        messages: &[ChatMessage],
        max_tokens: u32,
        stream: bool,
        stream_usage: bool,
    ) -> Value {
        let turns_of = |messages: &mut dyn Iterator<Item = &ChatMessage>| -> Vec<Value> {
            messages.map(|m| parts::turn(self.kind, m)).collect()
        };
        match self.kind {
            ProviderKind::Openai if stream && stream_usage => json!({
                "model": model, "messages": turns_of(&mut messages.iter()), "stream": true,
                "stream_options": { "include_usage": true }
            }),
            ProviderKind::Openai => {
                json!({ "model": model, "messages": turns_of(&mut messages.iter()), "stream": stream })
            }
            ProviderKind::Anthropic => {
                let system: Vec<&str> =
                    messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
                let turns = turns_of(&mut messages.iter().filter(|m| m.role != Role::System));
                let mut body = json!({ "model": model, "max_tokens": max_tokens, "messages": turns, "stream": stream });
                if !system.is_empty() {
                    body["system"] = Value::String(system.join("\n\n"));
                }
                body
            }
            ProviderKind::Gemini => crate::gemini::body(messages),
        }
    }

    /// The text of a whole (non-streamed) reply.
    pub fn reply_text(&self, body: &Value) -> Option<String> {
        match self.kind {
            ProviderKind::Openai => body["choices"][0]["message"]["content"].as_str().map(str::to_owned),
            ProviderKind::Anthropic => Some(
                body["content"]
                    .as_array()?
                    .iter()
                    .filter(|block| block["type"] == "text")
                    .filter_map(|block| block["text"].as_str())
                    .collect(),
            ),
            ProviderKind::Gemini => crate::gemini::text_of(body),
        }
    }

    /// How a whole reply ends when it is not a reply: blocked by the provider's filter (Gemini).
    pub(crate) fn blocked(&self, body: &Value) -> Option<Breakage> {
        match (self.kind, crate::gemini::ending_of(body)) {
            (ProviderKind::Gemini, Some(StreamPiece::Broken(broke))) => Some(broke),
            _ => None,
        }
    }
}

/// The tokens a reply used. `input` counts every prompt token, cached ones included (for
/// Anthropic: `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`); `cached`
/// those read from the prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

/// An OpenAI or Anthropic `usage` object, read by the members' names: deserialized straight from
/// a reply (no `Value` built, its map and its strings allocated, on the local API's hot path),
/// or taken from a `Value` ([`UsageObject::of_value`]).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct UsageObject {
    prompt_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptTokensDetails>,
    completion_tokens: Option<u64>,
    input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
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
        }
    }
}

impl Usage {
    /// OpenAI's `usage` object (whole replies and the last chunk of a stream).
    fn of_openai(usage: &UsageObject) -> Option<Usage> {
        Some(Usage {
            input: usage.prompt_tokens?,
            cached: usage.prompt_tokens_details.as_ref().and_then(|details| details.cached_tokens).unwrap_or(0),
            output: usage.completion_tokens.unwrap_or(0),
        })
    }

    /// Anthropic's `usage` object: the input side (whole replies, `message_start`) and the output.
    fn of_anthropic(usage: &UsageObject) -> Option<Usage> {
        let read = usage.cache_read_input_tokens.unwrap_or(0);
        let created = usage.cache_creation_input_tokens.unwrap_or(0);
        Some(Usage {
            input: usage.input_tokens? + read + created,
            cached: read,
            output: usage.output_tokens.unwrap_or(0),
        })
    }

    /// An OpenAI or Anthropic reply's `usage` object read (a Gemini reply's usage is not one
    /// object: see [`Usage::of_reply`]).
    pub(crate) fn of_usage(kind: ProviderKind, usage: &UsageObject) -> Option<Usage> {
        match kind {
            ProviderKind::Openai => Usage::of_openai(usage),
            ProviderKind::Anthropic => Usage::of_anthropic(usage),
            ProviderKind::Gemini => None,
        }
    }

    /// The usage of a whole reply, if it reports one.
    pub(crate) fn of_reply(kind: ProviderKind, body: &Value) -> Option<Usage> {
        match kind {
            ProviderKind::Openai | ProviderKind::Anthropic => {
                Usage::of_usage(kind, &UsageObject::of_value(&body["usage"]))
            }
            ProviderKind::Gemini => crate::gemini::usage_of_reply(body),
        }
    }
}

/// One event of a streamed reply, as a provider-neutral fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamPiece {
    Text(String),
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

/// Every piece of one SSE event (`event:` name and `data:` payload) of `kind`'s stream, in
/// order: a Gemini event carries its text, its usage and its end at once.
pub(crate) fn stream_pieces(kind: ProviderKind, event: &str, data: &str) -> Vec<StreamPiece> {
    match kind {
        ProviderKind::Gemini => crate::gemini::stream_pieces(data),
        _ => vec![parse_stream_event(kind, event, data)],
    }
}

/// What a refusal (`status`, its error `body`, the wait and the windows its headers announced)
/// means, in `kind`'s words.
pub(crate) fn refusal_of(
    kind: ProviderKind,
    status: u16,
    body: &str,
    retry_after: Option<std::time::Duration>,
    announced: keypool::Announced,
) -> Failure {
    match kind {
        ProviderKind::Gemini => Failure { announced, ..crate::gemini::refusal(status, body, retry_after) },
        ProviderKind::Openai | ProviderKind::Anthropic => Failure {
            status,
            message: error_message(body),
            retry_after,
            announced,
            out_of_credit: out_of_credit(status, body),
            meaning: None,
        },
    }
}

/// Reads one SSE event of an OpenAI or Anthropic stream (Gemini's: [`stream_pieces`]).
fn parse_stream_event(kind: ProviderKind, event: &str, data: &str) -> StreamPiece {
    if data.trim() == "[DONE]" {
        return StreamPiece::Done;
    }
    let Ok(value) = serde_json::from_str::<Value>(data) else {
        return StreamPiece::Nothing;
    };
    if event == "error" || value.get("error").is_some_and(|e| !e.is_null()) {
        let error = &value["error"];
        let message = error["message"].as_str().unwrap_or("the provider reported an error").to_owned();
        let status = status_of_error(error);
        let out_of_credit = says_out_of_credit(error, &message);
        return StreamPiece::Error(Failure { out_of_credit, ..Failure::new(status, message) });
    }
    match kind {
        ProviderKind::Openai => match value["choices"][0]["delta"]["content"].as_str() {
            Some(text) if !text.is_empty() => StreamPiece::Text(text.to_owned()),
            _ => match Usage::of_openai(&UsageObject::of_value(&value["usage"])) {
                Some(usage) => StreamPiece::Usage(usage),
                None => StreamPiece::Nothing,
            },
        },
        ProviderKind::Anthropic => match value["type"].as_str().unwrap_or(event) {
            "content_block_delta" => match value["delta"]["text"].as_str() {
                Some(text) if !text.is_empty() => StreamPiece::Text(text.to_owned()),
                _ => StreamPiece::Nothing,
            },
            "message_start" => Usage::of_anthropic(&UsageObject::of_value(&value["message"]["usage"]))
                .map_or(StreamPiece::Nothing, StreamPiece::Usage),
            "message_delta" => {
                value["usage"]["output_tokens"].as_u64().map_or(StreamPiece::Nothing, StreamPiece::OutputTokens)
            }
            "message_stop" => StreamPiece::Done,
            _ => StreamPiece::Nothing,
        },
        ProviderKind::Gemini => crate::gemini::stream_pieces(data).into_iter().next().unwrap_or(StreamPiece::Nothing),
    }
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

/// The provider's own words from an error body, if it has any; never more than a line.
pub(crate) fn error_message(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().or_else(|| v["message"].as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let line = message.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_delta_and_done() {
        let piece = parse_stream_event(ProviderKind::Openai, "", r#"{"choices":[{"delta":{"content":"Hi"}}]}"#);
        assert_eq!(piece, StreamPiece::Text("Hi".into()), "a delta's content is text");
        assert_eq!(parse_stream_event(ProviderKind::Openai, "", "[DONE]"), StreamPiece::Done, "[DONE] ends");
    }

    #[test]
    fn anthropic_overloaded_error_in_stream_is_529() {
        let data = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let piece = parse_stream_event(ProviderKind::Anthropic, "error", data);
        assert_eq!(piece, StreamPiece::Error(Failure::new(529, "Overloaded")), "overloaded is 529");
    }

    #[test]
    fn anthropic_text_delta_and_stop() {
        let data = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"yo"}}"#;
        assert_eq!(
            parse_stream_event(ProviderKind::Anthropic, "content_block_delta", data),
            StreamPiece::Text("yo".into())
        );
        assert_eq!(
            parse_stream_event(ProviderKind::Anthropic, "message_stop", r#"{"type":"message_stop"}"#),
            StreamPiece::Done
        );
    }

    #[test]
    fn openai_error_in_stream_maps_rate_limit() {
        let data = r#"{"error":{"message":"slow down","type":"rate_limit_exceeded","code":null}}"#;
        assert_eq!(
            parse_stream_event(ProviderKind::Openai, "", data),
            StreamPiece::Error(Failure::new(429, "slow down")),
            "a rate-limit error object counts as a 429"
        );
    }

    #[test]
    fn usage_is_read_in_both_providers_shapes() {
        let openai = serde_json::json!({ "usage": { "prompt_tokens": 11, "completion_tokens": 3,
            "prompt_tokens_details": { "cached_tokens": 5 } } });
        assert_eq!(Usage::of_reply(ProviderKind::Openai, &openai), Some(Usage { input: 11, cached: 5, output: 3 }));
        let anthropic = serde_json::json!({ "usage": { "input_tokens": 4, "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 2, "output_tokens": 3 } });
        assert_eq!(
            Usage::of_reply(ProviderKind::Anthropic, &anthropic),
            Some(Usage { input: 11, cached: 5, output: 3 }),
            "Anthropic's input excludes the cache: the total prompt is input + cache read + cache creation"
        );
        let last_chunk = r#"{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":5}}}"#;
        assert_eq!(
            parse_stream_event(ProviderKind::Openai, "", last_chunk),
            StreamPiece::Usage(Usage { input: 11, cached: 5, output: 2 }),
            "OpenAI's last chunk with include_usage"
        );
        let start = r#"{"type":"message_start","message":{"usage":{"input_tokens":6,"cache_read_input_tokens":5,"output_tokens":1}}}"#;
        assert_eq!(
            parse_stream_event(ProviderKind::Anthropic, "message_start", start),
            StreamPiece::Usage(Usage { input: 11, cached: 5, output: 1 })
        );
        let delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#;
        assert_eq!(parse_stream_event(ProviderKind::Anthropic, "message_delta", delta), StreamPiece::OutputTokens(7));
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
            parse_stream_event(ProviderKind::Openai, "", data),
            StreamPiece::Error(Failure { out_of_credit: true, ..Failure::new(429, "You exceeded your current quota") }),
            "inside a stream too"
        );
    }

    #[test]
    fn anthropic_body_moves_system_prompt_out_of_messages() {
        let endpoint = ProviderEndpoint {
            id: ProviderId::new("a"),
            name: "A".into(),
            kind: ProviderKind::Anthropic,
            base_url: "http://x/".into(),
            provider_key: None,
        };
        let messages = [ChatMessage::new(Role::System, "be brief"), ChatMessage::new(Role::User, "hi")];
        let body = endpoint.completion_body("claude", &messages, 64, true);
        assert_eq!(body["system"], "be brief", "the system prompt is a top-level field");
        assert_eq!(body["messages"].as_array().unwrap().len(), 1, "only turns remain in messages");
        assert_eq!(endpoint.completion_url("claude", true), "http://x/v1/messages", "the base URL is joined cleanly");
    }
}
