//! Reading requests: what every format's reader shares.

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

/// Text borrowed from the body where it holds no escapes. serde borrows a `Cow<str>` member only
/// when it is one itself: inside an `Option` it is always copied out (an allocation per request
/// for a model's name), so optional text is an `Option` of this.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Text<'a>(#[serde(borrow)] pub std::borrow::Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}
