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

use crate::conversation::{Conversation, Reply, Usage};
use crate::error::{Breakage, Failure, Meaning};
use crate::provider_clock::ClockSkew;

mod anthropic;
pub(crate) mod gemini;
mod openai_chat;
mod openai_responses;

pub use anthropic::{ANTHROPIC_VERSION, BILLING_BLOCK};

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
    /// Every format Keypool speaks.
    pub const ALL: [WireFormat; 4] = [
        WireFormat::OpenAiChat,
        WireFormat::AnthropicMessages,
        WireFormat::GeminiGenerate,
        WireFormat::OpenAiResponses,
    ];

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

/// A client's request read into the one conversation: of which model, streamed or not.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    /// The model the body names (Gemini names it in the path: empty here).
    pub model: String,
    pub stream: bool,
    pub conversation: Conversation,
}

/// Why a client's request cannot be carried into another dialect: said to the client in its own
/// dialect as a 400, never sent on as a silently different request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Untranslatable(pub String);

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

/// Writes a provider's stream, piece by piece, as a stream in a client's dialect (a translated
/// request's answer). It keeps what the dialect needs to say at the end: the calls made, the
/// usage, which block or item is open.
pub trait StreamWriter: Send {
    /// The bytes a piece of the provider's stream becomes for the client (none for some).
    fn piece(&mut self, piece: &StreamPiece, out: &mut Vec<u8>);
}

/// What every stream writer keeps: the usage so far and whether a tool was called.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) usage: Option<Usage>,
    pub(crate) called: bool,
}

impl Tally {
    /// Counts `piece` in; whether it was a count (nothing to write for it).
    pub(crate) fn count(&mut self, piece: &StreamPiece) -> bool {
        match piece {
            StreamPiece::Usage(usage) => {
                let output = self.usage.map_or(0, |u| u.output).max(usage.output);
                self.usage = Some(Usage { output, ..*usage });
                true
            }
            StreamPiece::OutputTokens(output) => {
                self.usage.get_or_insert_with(Usage::default).output = *output;
                true
            }
            StreamPiece::ToolCall { .. } => {
                self.called = true;
                false
            }
            _ => false,
        }
    }
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

    /// A client's request body in this format, read into the one conversation; what has no
    /// place in it (a vendor's server-side tools, a stored response's id, an image by URL) is
    /// refused with its reason.
    fn read_request(&self, body: &Value) -> Result<ClientRequest, Untranslatable>;

    // Answers.

    /// The text of a whole answer.
    fn reply_text(&self, body: &Value) -> Option<String>;

    /// A whole answer read as text, tool calls, its finish and its usage (none: not an answer).
    fn read_reply(&self, body: &Value) -> Option<Reply>;

    /// A whole answer of `model` written in this format, for a client that speaks it.
    fn write_reply(&self, reply: &Reply, model: &str) -> Value;

    /// A writer of `model`'s streamed answer in this format, for a client that speaks it.
    fn stream_writer(&self, model: &str) -> Box<dyn StreamWriter>;

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

    /// Words one of which an event's name or data holds, as written, whenever its
    /// [`Wire::stream_pieces`] are more than text and tool calls (a usage, the end, an error, a
    /// reply blocked): the member names and event types those are read from. See
    /// [`may_signal`], which the local API's relay asks before it reads an event.
    fn stream_signals(&self) -> &'static [&'static str];

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

/// Reading requests: what every format's reader shares.
pub(crate) mod read {
    use std::sync::Arc;

    use base64::Engine;
    use serde_json::Value;

    use super::Untranslatable;
    use crate::conversation::{Conversation, Part, Sampling, Tool};

    /// Bytes from standard base64.
    pub(crate) fn base64(data: &str) -> Result<Arc<[u8]>, Untranslatable> {
        base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Arc::from)
            .map_err(|_| Untranslatable("an image's data is not base64".into()))
    }

    /// An image given as a `data:` URL; one by `http(s)` URL is refused (its bytes are not here).
    pub(crate) fn image_url(url: &str) -> Result<Part, Untranslatable> {
        let Some(rest) = url.strip_prefix("data:") else {
            return Err(Untranslatable("images by URL cannot be carried to another provider: send them inline".into()));
        };
        let (media_type, data) =
            rest.split_once(";base64,").ok_or_else(|| Untranslatable("an image's data URL is not base64".into()))?;
        Ok(Part::Image { media_type: media_type.to_owned(), data: base64(data)? })
    }

    /// Text of a content that is a string, or parts with `text` members.
    pub(crate) fn text_of(content: &Value) -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
            _ => String::new(),
        }
    }

    /// A whole number member, if it is one.
    pub(crate) fn count(value: &Value) -> Option<u32> {
        value.as_u64().and_then(|n| u32::try_from(n).ok())
    }

    /// Stop sequences: one string or a list.
    pub(crate) fn stops(value: &Value) -> Vec<String> {
        match value {
            Value::String(stop) => vec![stop.clone()],
            Value::Array(stops) => stops.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        }
    }

    /// Sampling from its members' values.
    pub(crate) fn sampling(max_tokens: &Value, temperature: &Value, top_p: &Value, stop: &Value) -> Sampling {
        Sampling {
            max_tokens: count(max_tokens),
            temperature: temperature.as_f64(),
            top_p: top_p.as_f64(),
            stop: stops(stop),
        }
    }

    /// A function tool, named: its description and its arguments' schema.
    pub(crate) fn tool(name: &Value, description: &Value, parameters: &Value) -> Result<Tool, Untranslatable> {
        let name = name.as_str().ok_or_else(|| Untranslatable("a tool has no name".into()))?;
        Ok(Tool {
            name: name.to_owned(),
            description: description.as_str().map(str::to_owned),
            parameters: if parameters.is_null() { serde_json::json!({ "type": "object" }) } else { parameters.clone() },
        })
    }

    /// Tool results name their tool where the format did not say (OpenAI's and the Responses
    /// API's answer a call by its id alone): from the call they answer.
    pub(crate) fn name_results(mut conversation: Conversation) -> Conversation {
        let calls: Vec<(String, String)> = conversation
            .messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .filter_map(|p| match p {
                Part::ToolCall(call) => Some((call.id.clone(), call.name.clone())),
                _ => None,
            })
            .collect();
        for part in conversation.messages.iter_mut().flat_map(|m| m.parts.iter_mut()) {
            if let Part::ToolResult(result) = part {
                if result.name.is_empty() {
                    if let Some((_, name)) = calls.iter().find(|(id, _)| *id == result.call_id) {
                        result.name = name.clone();
                    }
                }
            }
        }
        conversation
    }
}

/// `base` and `path` joined by one slash.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// An OpenAI or Anthropic `usage` object, read by the members' names: deserialized straight from
/// a reply (no `Value` built, its map and its strings allocated, on the local API's hot path),
/// or taken from a `Value` ([`UsageObject::of_value`]). Deserialized from an object only:
/// serde's derived structs read an array too, as their fields in order, where a `Value` has no
/// members (a `usage` written `[11, {...}, 5]` was counted so). A member named twice keeps its
/// last value, as in a `Value`; one of another type fails the read, and the caller reads a
/// `Value` instead.
#[derive(Debug, Default)]
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

/// A member's name as it is read: which of these names it is (`None`: another), matched where
/// it lies in the body, never copied out (serde reads a `Cow<str>` key into a new `String`).
struct MemberOf(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for MemberOf {
    type Value = Option<&'static str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for MemberOf {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a member's name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().copied().find(|known| *known == name))
    }
}

#[derive(Debug, Default)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: Option<u64>,
}

impl<'de> Deserialize<'de> for PromptTokensDetails {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = PromptTokensDetails;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut details = PromptTokensDetails::default();
                while let Some(name) = map.next_key_seed(MemberOf(&["cached_tokens"]))? {
                    match name {
                        Some("cached_tokens") => details.cached_tokens = map.next_value()?,
                        _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                    }
                }
                Ok(details)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

impl<'de> Deserialize<'de> for UsageObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = UsageObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut usage = UsageObject::default();
                const MEMBERS: &[&str] = &[
                    "prompt_tokens",
                    "prompt_tokens_details",
                    "completion_tokens",
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                    "output_tokens",
                    "input_tokens_details",
                ];
                while let Some(name) = map.next_key_seed(MemberOf(MEMBERS))? {
                    match name {
                        Some("prompt_tokens") => usage.prompt_tokens = map.next_value()?,
                        Some("prompt_tokens_details") => usage.prompt_tokens_details = map.next_value()?,
                        Some("completion_tokens") => usage.completion_tokens = map.next_value()?,
                        Some("input_tokens") => usage.input_tokens = map.next_value()?,
                        Some("cache_read_input_tokens") => usage.cache_read_input_tokens = map.next_value()?,
                        Some("cache_creation_input_tokens") => usage.cache_creation_input_tokens = map.next_value()?,
                        Some("output_tokens") => usage.output_tokens = map.next_value()?,
                        Some("input_tokens_details") => usage.input_tokens_details = map.next_value()?,
                        _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                    }
                }
                Ok(usage)
            }
        }
        deserializer.deserialize_map(Members)
    }
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
    // An object (serde reads a struct from an array too, where a `Value` has no members).
    let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if let Some(head) = serde_json::from_slice::<Head>(body).ok().filter(|_| object) {
        // `"error": null` reads as none.
        return (head.error.is_some(), head.usage.as_ref().and_then(usage_of));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(reply) => (reply.get("error").is_some_and(|e| !e.is_null()), wire.usage_of_reply(&reply)),
        Err(_) => (false, None),
    }
}

/// Whether an SSE event (its `name` and `data`) may be more to `wire` than text and tool calls:
/// its name or data holds one of [`Wire::stream_signals`], or its data escapes a character as
/// `\u` (a member's name written so would hide a signal from a search of the text). When not,
/// its pieces are text and tool calls at most, and the local API's relay, once the first text has
/// come, passes it on unread: reading every event of a stream into a `Value` was a fifth of what
/// relaying it cost, and an answer's events are mostly text.
pub fn may_signal(wire: &dyn Wire, name: &str, data: &str) -> bool {
    use aho_corasick::{packed, AhoCorasick};
    use std::sync::LazyLock;
    /// A search for a few words at once: SIMD where the processor has it (about 13 ns for an
    /// event of 150 bytes; aho-corasick's automaton took 400), the automaton elsewhere.
    enum Finder {
        Packed(packed::Searcher),
        Automaton(AhoCorasick),
        /// Could not be built (never, for these few short words): every event is read.
        None,
    }
    static FINDERS: LazyLock<Vec<(WireFormat, Finder)>> = LazyLock::new(|| {
        let finder = |format: WireFormat| {
            let words: Vec<&str> = format.wire().stream_signals().iter().copied().chain(["\\u"]).collect();
            match packed::Searcher::new(&words) {
                Some(searcher) => Finder::Packed(searcher),
                None => AhoCorasick::new(&words).map_or(Finder::None, Finder::Automaton),
            }
        };
        WireFormat::ALL.iter().map(|&format| (format, finder(format))).collect()
    });
    let format = wire.format();
    let holds = |finder: &Finder, text: &str| match finder {
        Finder::Packed(searcher) => searcher.find(text).is_some(),
        Finder::Automaton(automaton) => automaton.is_match(text),
        Finder::None => true,
    };
    match FINDERS.iter().find(|(of, _)| *of == format) {
        Some((_, finder)) => holds(finder, name) || holds(finder, data),
        None => true,
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
pub fn error_message(body: &str) -> String {
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
    use std::sync::Arc;

    use super::*;
    use crate::conversation::{Message, Part, Role, Sampling, Tool, ToolCall, ToolResult};

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
            let mut writer = format.wire().stream_writer("m");
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
            let text: String = read
                .iter()
                .filter_map(|p| if let StreamPiece::Text(t) = p { Some(t.as_str()) } else { None })
                .collect();
            assert_eq!(text, "Hello", "{format:?}: the text: {}", String::from_utf8_lossy(&bytes));
            let names: Vec<&str> = read
                .iter()
                .filter_map(|p| if let StreamPiece::ToolCall { name, .. } = p { Some(name.as_str()) } else { None })
                .collect();
            assert_eq!(names, ["read"], "{format:?}: one call: {}", String::from_utf8_lossy(&bytes));
            let arguments: String = read
                .iter()
                .filter_map(
                    |p| if let StreamPiece::ToolArguments { json, .. } = p { Some(json.as_str()) } else { None },
                )
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
            assert_eq!(
                usage,
                Some(Usage { input: 120, cached: 100, output: 9 }),
                "{format:?}: the usage, cached included"
            );
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
                let body = format.wire().write_reply(&reply, "m");
                let read = format
                    .wire()
                    .read_reply(&body)
                    .unwrap_or_else(|| panic!("{format:?} reads its own answer: {body}"));
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
            let read =
                format.wire().read_request(&body).unwrap_or_else(|e| panic!("{format:?} reads its own body: {e}"));
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
            let mut writer = format.wire().stream_writer("m");
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
            [StreamPiece::Error(Failure {
                out_of_credit: true,
                ..Failure::new(429, "You exceeded your current quota")
            })],
            "inside a stream too"
        );
    }
}
