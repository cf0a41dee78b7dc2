//! One representation of a conversation that every wire format writes its requests from: the
//! system prompt, the turns (text, images, files, tool calls and their results), the tools on
//! offer and the sampling options. A chat's turns ([`ChatMessage`]) become one with
//! [`Conversation::of_chat`]; translating a client's request between dialects reads it into one.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// What a user turn of a chat carries besides its text. The bytes are encoded only into the
/// request body: its `Debug` shows their length, never the bytes, so no log line or error carries
/// an image.
#[derive(Clone, PartialEq, Eq)]
pub enum Attachment {
    /// An image, already at the size to send (`media_type`: `image/png`, `image/jpeg`, …).
    Image { media_type: String, data: Arc<[u8]> },
    /// A text file: sent as a text part that names it.
    Text { name: String, text: String },
}

impl fmt::Debug for Attachment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attachment::Image { media_type, data } => write!(f, "Image({media_type}, {} bytes)", data.len()),
            Attachment::Text { name, text } => write!(f, "Text({name:?}, {} bytes)", text.len()),
        }
    }
}

impl Attachment {
    pub fn is_image(&self) -> bool {
        matches!(self, Attachment::Image { .. })
    }
}

/// One turn of a chat: its text, and (user turns) what is attached to it.
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

/// The tokens a reply used. `input` counts every prompt token, cached ones included (for
/// Anthropic: `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`); `cached`
/// those read from the prompt cache ("cached 5 of 11 input tokens"). The UI reads it as a
/// message's `MessageUsage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "MessageUsage"))]
pub struct Usage {
    #[serde(rename = "inputTokens")]
    pub input: u64,
    #[serde(rename = "cachedTokens")]
    pub cached: u64,
    #[serde(rename = "outputTokens")]
    pub output: u64,
}

/// A conversation as a request carries it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The system prompt, if any (several of a chat's are joined by a blank line).
    pub system: Option<String>,
    /// The turns, oldest first; none is [`Role::System`].
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<Tool>,
    pub sampling: Sampling,
    /// Where the prompt is to be cached up to.
    pub cache: CacheMarks,
}

/// Where a provider that caches only where it is told (Anthropic's `cache_control`
/// breakpoints) is to cache the prompt up to. Its prefix is the tools, then the system prompt,
/// then the turns: a mark caches all before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheMarks {
    /// The client marked nothing: the writer marks where the prefix stays the same from one
    /// request to the next.
    #[default]
    Unmarked,
    /// The client's own marks (as OpenAI-format clients write them for Claude models), carried
    /// as they are: after the tools, after the system prompt, after these turns (indexes into
    /// [`Conversation::messages`]).
    Client { tools: bool, system: bool, turns: Vec<usize> },
}

/// One turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

/// A piece of a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    /// A text file, named: written as a text part that names it.
    File {
        name: String,
        text: String,
    },
    /// An image, already at the size to send (`media_type`: `image/png`, `image/jpeg`, …).
    Image {
        media_type: String,
        data: Arc<[u8]>,
    },
    /// The model calls a tool (assistant turns).
    ToolCall(ToolCall),
    /// What a tool answered (user turns).
    ToolResult(ToolResult),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, which its result names (Gemini has none: the name stands in).
    pub id: String,
    pub name: String,
    /// The arguments, as JSON text (streamed formats send them in pieces).
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call answered.
    pub call_id: String,
    /// The tool's name (Gemini answers a call by name).
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// A tool on offer.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// The arguments' JSON schema.
    pub parameters: Value,
}

/// How the answer is sampled; what is not set is the provider's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampling {
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub stop: Vec<String>,
}

/// A whole answer: what the model said (text and tool calls), why it stopped, what it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Text and tool calls, in order.
    pub parts: Vec<Part>,
    pub finish: Finish,
    pub usage: Option<Usage>,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// It was done.
    Stop,
    /// The bound on the answer's length.
    Length,
    /// It called tools and waits for their results.
    ToolCalls,
    /// A filter stopped it.
    Refused,
}

impl Conversation {
    /// A chat's turns: its system turns become the system prompt; a user turn's attachments
    /// come first (files, then images, as Anthropic advises images before the question), then its
    /// text if it has any.
    pub fn of_chat(messages: &[ChatMessage]) -> Conversation {
        let system: Vec<&str> =
            messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
        let turns =
            messages.iter().filter(|m| m.role != Role::System).map(|m| Message { role: m.role, parts: parts_of(m) });
        Conversation {
            system: (!system.is_empty()).then(|| system.join("\n\n")),
            messages: turns.collect(),
            ..Conversation::default()
        }
    }
}

/// A chat turn's parts: its text alone without attachments; else its files, its images, and its
/// text unless it is blank (Anthropic refuses empty text blocks; an image alone is a question).
fn parts_of(message: &ChatMessage) -> Vec<Part> {
    if message.attachments.is_empty() {
        return vec![Part::Text(message.content.clone())];
    }
    let files = message.attachments.iter().filter_map(|a| match a {
        Attachment::Text { name, text } => Some(Part::File { name: name.clone(), text: text.clone() }),
        Attachment::Image { .. } => None,
    });
    let images = message.attachments.iter().filter_map(|a| match a {
        Attachment::Image { media_type, data } => {
            Some(Part::Image { media_type: media_type.clone(), data: data.clone() })
        }
        Attachment::Text { .. } => None,
    });
    let mut parts: Vec<Part> = files.chain(images).collect();
    if !message.content.trim().is_empty() {
        parts.push(Part::Text(message.content.clone()));
    }
    parts
}

impl Message {
    /// The turn's only part when it is text: written as a plain string, which every
    /// OpenAI-compatible server understands.
    pub(crate) fn plain_text(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Text(text)] => Some(text),
            _ => None,
        }
    }
}

/// A text file as the model reads it: its name, then its text, delimited.
pub(crate) fn file_text(name: &str, text: &str) -> String {
    format!("<file name=\"{}\">\n{}\n</file>", name.replace('"', "'"), text.trim_end_matches('\n'))
}

/// Bytes as standard base64.
pub(crate) fn base64_of(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// A tool call's arguments as a JSON value (Anthropic and Gemini want an object): the text
/// parsed, or an empty object when it is not JSON.
pub(crate) fn arguments_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::Object(Default::default()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A question with an image and a text file attached.
    pub(crate) fn asking() -> ChatMessage {
        ChatMessage {
            role: Role::User,
            content: "What is this?".into(),
            attachments: vec![
                Attachment::Image { media_type: "image/png".into(), data: Arc::from(&b"\x89PNG"[..]) },
                Attachment::Text { name: "a.rs".into(), text: "fn main() {}\n".into() },
            ],
        }
    }

    #[test]
    fn debug_output_never_holds_the_bytes() {
        let shown = format!("{:?}", asking());
        assert!(shown.contains("Image(image/png, 4 bytes)"), "the length is shown: {shown}");
        assert!(!shown.contains("iVBOR") && !shown.contains("PNG\""), "not the bytes: {shown}");
    }
}
