//! What a user turn carries besides its text: images and text files, and how each provider kind
//! wants them in a request (OpenAI's `image_url` parts with a data URL, Anthropic's `image` blocks
//! with a base64 `source`, Gemini's `inlineData` parts). A turn without attachments keeps its
//! plain-string shape, which every OpenAI-compatible server understands.
//!
//! The bytes are encoded only into the request body: [`Attachment`]'s `Debug` shows their length,
//! never the bytes, so no log line or error carries an image.

use std::fmt;
use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Value};

use crate::provider::{ChatMessage, ProviderKind};

/// One attachment of a user turn, as sent.
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

    /// A text file as the model reads it: its name, then its text, delimited.
    fn file_text(name: &str, text: &str) -> String {
        format!("<file name=\"{}\">\n{}\n</file>", name.replace('"', "'"), text.trim_end_matches('\n'))
    }
}

fn base64_of(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// A turn's `content` in the kind's shape: its text alone when it has no attachments; else the
/// attachments (files, then images, as Anthropic advises images before the question) followed
/// by its text, if any.
pub(crate) fn content(kind: ProviderKind, message: &ChatMessage) -> Value {
    if message.attachments.is_empty() {
        return match kind {
            ProviderKind::Gemini => json!([{ "text": message.content }]),
            _ => Value::String(message.content.clone()),
        };
    }
    let text_part = |text: &str| match kind {
        ProviderKind::Gemini => json!({ "text": text }),
        _ => json!({ "type": "text", "text": text }),
    };
    let ordered =
        message.attachments.iter().filter(|a| !a.is_image()).chain(message.attachments.iter().filter(|a| a.is_image()));
    let mut parts: Vec<Value> = ordered
        .map(|attachment| match attachment {
            Attachment::Text { name, text } => text_part(&Attachment::file_text(name, text)),
            Attachment::Image { media_type, data } => match kind {
                ProviderKind::Openai => json!({
                    "type": "image_url",
                    "image_url": { "url": format!("data:{media_type};base64,{}", base64_of(data)) }
                }),
                ProviderKind::Anthropic => json!({
                    "type": "image",
                    "source": { "type": "base64", "media_type": media_type, "data": base64_of(data) }
                }),
                ProviderKind::Gemini => json!({ "inlineData": { "mimeType": media_type, "data": base64_of(data) } }),
            },
        })
        .collect();
    // Anthropic refuses empty text blocks; an image alone is a whole question.
    if !message.content.trim().is_empty() {
        parts.push(text_part(&message.content));
    }
    Value::Array(parts)
}

/// A turn in the OpenAI or Anthropic `messages` list.
pub(crate) fn turn(kind: ProviderKind, message: &ChatMessage) -> Value {
    json!({ "role": message.role, "content": content(kind, message) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Role;

    fn asking() -> ChatMessage {
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
    fn each_kind_gets_its_own_image_shape() {
        let message = asking();
        assert_eq!(
            content(ProviderKind::Openai, &message),
            json!([
                { "type": "text", "text": "<file name=\"a.rs\">\nfn main() {}\n</file>" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw==" } },
                { "type": "text", "text": "What is this?" },
            ]),
            "OpenAI: a data URL in an image_url part, the question last"
        );
        assert_eq!(
            content(ProviderKind::Anthropic, &message)[1],
            json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw==" } }),
            "Anthropic: a base64 source"
        );
        assert_eq!(
            content(ProviderKind::Gemini, &message)[1],
            json!({ "inlineData": { "mimeType": "image/png", "data": "iVBORw==" } }),
            "Gemini: inlineData"
        );
    }

    #[test]
    fn a_turn_without_attachments_stays_a_string_and_an_image_alone_has_no_empty_text() {
        let plain = ChatMessage::new(Role::User, "hi");
        assert_eq!(content(ProviderKind::Openai, &plain), json!("hi"), "plain text stays a string");
        let mut image_only = asking();
        image_only.content = " ".into();
        let parts = content(ProviderKind::Anthropic, &image_only);
        assert_eq!(parts.as_array().unwrap().len(), 2, "no empty text block after the attachments");
    }

    #[test]
    fn debug_output_never_holds_the_bytes() {
        let shown = format!("{:?}", asking());
        assert!(shown.contains("Image(image/png, 4 bytes)"), "the length is shown: {shown}");
        assert!(!shown.contains("iVBOR") && !shown.contains("PNG\""), "not the bytes: {shown}");
    }
}
