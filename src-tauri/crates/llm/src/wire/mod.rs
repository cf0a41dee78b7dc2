//! The wire formats: how a request is addressed, authenticated and written, how its answers
//! (whole or streamed) are read and written back, and what a refusal means to the pool. One
//! module per format behind one trait, [`Wire`]; the rest of the crate asks the trait, never
//! which format it is.
//!
//! Requests are written from one internal representation of a conversation
//! ([`crate::conversation`]); streamed answers are read into provider-neutral [`StreamPiece`]s.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use keypool::{Announced, Secret, Timestamp};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::conversation::{Conversation, Reply, Usage};
use crate::error::{Breakage, Failure, Meaning};
use crate::provider_clock::ClockSkew;

mod address;
mod anthropic;
pub(crate) mod gemini;
mod openai_chat;
mod openai_responses;
mod peek;
mod problem;
pub(crate) mod read;
mod refusal;
mod skim;
mod translate;
mod usage;

pub use address::{Address, Delivery, Dialect, Operation};
pub use peek::{with_model, BoundState, ConversationName, Peek};
pub use problem::{ListedModel, Problem};
pub use translate::{translate, AnswerId, AnswerIds, Translated, Translation};

pub(crate) use refusal::{error_answer, names_invalid_key, out_of_credit, plan_window, stream_error};
pub use refusal::{error_message, may_signal};
pub(crate) use usage::{read_head, UsageObject};

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

    /// The dialect it is spoken in.
    pub fn dialect(self) -> Dialect {
        match self {
            WireFormat::OpenAiChat | WireFormat::OpenAiResponses => Dialect::OpenAi,
            WireFormat::AnthropicMessages => Dialect::Anthropic,
            WireFormat::GeminiGenerate => Dialect::Gemini,
        }
    }

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

/// What a format's reader remembers of one stream's events (see [`Wire::each_piece`]).
#[derive(Debug, Default)]
pub struct PieceMemo {
    pub(crate) chunk: skim::Template,
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

    /// The path under the base URL where `operation` is asked of `model`, its answer delivered
    /// as `delivery`; `None` when the format has no such operation.
    fn path(&self, operation: Operation, model: &str, delivery: Delivery) -> Option<Cow<'static, str>>;

    /// The path of a reply of `model` under the base URL, whole or streamed.
    fn reply_path(&self, model: &str, stream: bool) -> String {
        let delivery = if stream { Delivery::Events } else { Delivery::Whole };
        self.path(Operation::Reply, model, delivery).unwrap_or_default().into_owned()
    }

    /// What a request to the local API's `…/models/{action}` path asks, for a format that names
    /// the model in its paths (Gemini's `{model}:{method}`): the model, the operation, how the
    /// answer comes (`query`: the request's query). `None`: not an action of this format.
    fn action<'a>(&self, action: &'a str, query: Option<&str>) -> Option<(&'a str, Operation, Delivery)> {
        let _ = (action, query);
        None
    }

    /// What is read of a client's request body: its model, stream and conversation.
    fn peek<'a>(&self, body: &'a [u8]) -> Result<Peek<'a>, String> {
        Peek::of(self.format(), body)
    }

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
    fn authorize(&self, headers: &mut HeaderMap, key: Option<&Secret>) {
        if let Some((name, value)) = self.fixed_header() {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let Some(key) = key else { return };
        let (name, prefix) = self.key_header();
        if let Ok(mut value) = HeaderValue::try_from(format!("{prefix}{}", key.expose())) {
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static(name), value);
        }
    }

    /// Where this format puts a key: its header's name (lower case) and the prefix of its value.
    fn key_header(&self) -> (&'static str, &'static str);

    /// A header every request of this format carries, whatever its key (Anthropic's version).
    fn fixed_header(&self) -> Option<(&'static str, &'static str)> {
        None
    }

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

    /// A whole answer of `model` written in this format, called `id`, for a client that speaks it.
    fn write_reply(&self, reply: &Reply, model: &str, id: AnswerId) -> Value;

    /// A writer of `model`'s streamed answer in this format, every event of it called `id`, for a
    /// client that speaks it.
    fn stream_writer(&self, model: &str, id: AnswerId) -> Box<dyn StreamWriter>;

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

    /// [`Wire::stream_pieces`], each lent to `piece` as it is read (no list made for them, a
    /// text's buffer used again, and what one stream's events share remembered in `memo`: the
    /// relay reads its events so).
    fn each_piece(&self, event: &str, data: &str, memo: &mut PieceMemo, piece: &mut dyn FnMut(&StreamPiece)) {
        let _ = memo;
        self.stream_pieces(event, data).iter().for_each(piece);
    }

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

    /// An error Keypool answers a client of this format, in the shape its SDKs read (so they
    /// raise their usual exception types).
    fn error_body(&self, problem: Problem, message: &str) -> Value;

    /// The models an endpoint serves, as this format lists them.
    fn model_list(&self, models: &[ListedModel]) -> Value;

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
            meaning: names_invalid_key(body).then_some(Meaning::KeyRefused).or_else(|| {
                plan_window(body).map(|until| Meaning::RateLimit(Some(keypool::Quota::PlanWindow { until })))
            }),
        }
    }

    /// The windows an answer's headers announced, as absolute times from `now`.
    fn announced_limits(&self, headers: &HeaderMap, now: Timestamp, skew: ClockSkew) -> Announced;

    /// The rate-limit scope of a request to `model`: the provider limits each model apart,
    /// unless its format says otherwise.
    fn scope(&self, model: &Arc<str>) -> Arc<str> {
        model.clone()
    }
}

/// `base` and `path` joined by one slash.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests;
