//! Where a request goes and how its answer comes: the format it is written in, what it asks
//! (a reply, its tokens counted, a conversation compacted), and whether the answer streams.
//! The format writes the path itself ([`super::Wire::path`]); nothing else names an endpoint.

use super::WireFormat;

/// The API families clients speak. A provider of a client's family answers it as-is; one of
/// another family is asked in its own words and its answer translated. The UI names it a
/// `ClientApi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ClientApi"))]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// OpenAI's Chat Completions and Responses APIs.
    OpenAi,
    Anthropic,
    /// Google Gemini's native API (`/v1beta/models/…`, or `/v1/models/…` as `@google/genai`
    /// calls it).
    Gemini,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 3] = [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini];

    /// Its name in metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    /// The dialect a wire format is spoken in: a route's provider answers in it.
    pub fn of_wire(format: WireFormat) -> Dialect {
        format.dialect()
    }

    /// The format its errors and model lists are written in.
    pub fn format(self) -> WireFormat {
        match self {
            Dialect::OpenAi => WireFormat::OpenAiChat,
            Dialect::Anthropic => WireFormat::AnthropicMessages,
            Dialect::Gemini => WireFormat::GeminiGenerate,
        }
    }
}

/// What a request asks of its format's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// A reply to a conversation: the one operation every format has, and the only one
    /// translated between formats.
    Reply,
    /// The conversation's tokens counted (Anthropic's `count_tokens`, Gemini's `countTokens`).
    CountTokens,
    /// A conversation compacted (the Responses API's `responses/compact`, Codex's `/compact`).
    Compact,
}

/// How an answer comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// One body.
    Whole,
    /// Server-sent events, read event by event (for the usage, the end, errors).
    Events,
    /// One JSON array written as it is made (Gemini's `streamGenerateContent` without
    /// `alt=sse`): passed on as it comes, read whole at its end for the usage.
    Array,
}

/// A request's address: its format, what it asks, how its answer comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    pub format: WireFormat,
    pub operation: Operation,
    pub delivery: Delivery,
}

impl Address {
    /// A reply in `format`, streamed as events or whole.
    pub fn reply(format: WireFormat, stream: bool) -> Address {
        let delivery = if stream { Delivery::Events } else { Delivery::Whole };
        Address { format, operation: Operation::Reply, delivery }
    }

    /// Whether the answer is a stream of events.
    pub fn events(self) -> bool {
        self.delivery == Delivery::Events
    }

    /// The same request in `format` (a translated one: a reply, delivered the same way; an
    /// array stream becomes events, the one way every format streams).
    pub fn in_format(self, format: WireFormat) -> Address {
        let delivery = match self.delivery {
            Delivery::Array => Delivery::Events,
            delivery => delivery,
        };
        Address { format, delivery, ..self }
    }
}
