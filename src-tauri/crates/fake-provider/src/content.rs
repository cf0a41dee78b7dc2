//! What a user turn carries, read the way each dialect's documentation shapes it: OpenAI's
//! `content` parts (`text`, `image_url` with a base64 `data:` URL), Anthropic's content blocks
//! (`text`, `image` with a `base64` source), Gemini's parts (`text`, `inlineData`). A part in any
//! other shape (another dialect's, say) is refused with a 400, as the real APIs refuse it, so a
//! test that gets a reply knows the request was shaped right.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Dialect;

/// One image the fake received, decoded.
/// Its fields are snake_case on the wire, as [`crate::Seen`]'s are.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SeenImage {
    /// The part's shape as it arrived: `image_url`, `image` or `inlineData`.
    pub shape: String,
    pub media_type: String,
    /// The decoded image's length in bytes.
    pub bytes: usize,
    /// Its first bytes, hex (enough to tell a PNG from a JPEG by signature).
    pub head: String,
}

/// The text and images of one turn's content, or why its shape is wrong.
pub(crate) struct Read {
    pub text: String,
    pub images: Vec<SeenImage>,
}

fn image(shape: &str, media_type: &str, data: &str) -> Result<SeenImage, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|error| format!("{shape}: the data is not base64 ({error})"))?;
    if !media_type.starts_with("image/") {
        return Err(format!("{shape}: {media_type:?} is not an image type"));
    }
    Ok(SeenImage {
        shape: shape.to_owned(),
        media_type: media_type.to_owned(),
        bytes: bytes.len(),
        head: bytes.iter().take(8).map(|b| format!("{b:02x}")).collect(),
    })
}

/// Reads one turn's content (OpenAI and Anthropic: `content`, a string or parts; Gemini: `parts`).
pub(crate) fn read(dialect: Dialect, content: &Value) -> Result<Read, String> {
    if let Some(text) = content.as_str() {
        return Ok(Read { text: text.to_owned(), images: Vec::new() });
    }
    let Some(parts) = content.as_array() else {
        return Err("content is neither text nor a list of parts".into());
    };
    let mut read = Read { text: String::new(), images: Vec::new() };
    for part in parts {
        match dialect {
            Dialect::Openai => match part["type"].as_str() {
                Some("text") => read.text.push_str(part["text"].as_str().ok_or("a text part without text")?),
                Some("image_url") => {
                    let url = part["image_url"]["url"].as_str().ok_or("an image_url part without image_url.url")?;
                    let rest = url.strip_prefix("data:").ok_or("image_url.url is not a data: URL")?;
                    let (media_type, data) = rest.split_once(";base64,").ok_or("the data: URL is not base64")?;
                    read.images.push(image("image_url", media_type, data)?);
                }
                // Documented parts the fake does not read (they still go upstream untouched).
                Some("input_audio" | "file" | "refusal") => {}
                other => return Err(format!("unsupported content part type {other:?}")),
            },
            Dialect::Anthropic => match part["type"].as_str() {
                Some("text") => {
                    let text = part["text"].as_str().ok_or("a text block without text")?;
                    if text.is_empty() {
                        return Err("text content blocks must be non-empty".into());
                    }
                    read.text.push_str(text);
                }
                Some("image") => {
                    let source = &part["source"];
                    if source["type"] != "base64" {
                        return Err("image.source.type must be base64".into());
                    }
                    let media_type = source["media_type"].as_str().ok_or("image.source without media_type")?;
                    let data = source["data"].as_str().ok_or("image.source without data")?;
                    read.images.push(image("image", media_type, data)?);
                }
                // Documented blocks the fake does not read: tool use and results, documents,
                // thinking, search results.
                Some(
                    "tool_use"
                    | "tool_result"
                    | "document"
                    | "thinking"
                    | "redacted_thinking"
                    | "search_result"
                    | "server_tool_use"
                    | "web_search_tool_result"
                    | "container_upload",
                ) => {}
                other => return Err(format!("unsupported content block type {other:?}")),
            },
            Dialect::Gemini => {
                if let Some(text) = part["text"].as_str() {
                    read.text.push_str(text);
                } else if let Some(inline) = part.get("inlineData") {
                    let media_type = inline["mimeType"].as_str().ok_or("inlineData without mimeType")?;
                    let data = inline["data"].as_str().ok_or("inlineData without data")?;
                    read.images.push(image("inlineData", media_type, data)?);
                } else if ["functionCall", "functionResponse", "fileData", "executableCode", "codeExecutionResult"]
                    .iter()
                    .any(|name| part.get(*name).is_some())
                {
                    // Documented parts the fake does not read.
                } else {
                    return Err(format!("unsupported part {part}"));
                }
            }
        }
    }
    Ok(read)
}

/// What a model that takes no images answers, in the dialect's words.
pub(crate) fn no_images_message(dialect: Dialect, model: &str) -> String {
    match dialect {
        Dialect::Openai => format!("Invalid content type. image_url is only supported by certain models ({model})."),
        Dialect::Anthropic => format!("{model} does not support image input."),
        Dialect::Gemini => format!("Model {model} does not support image input."),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documented_blocks_it_does_not_read_pass_and_unknown_ones_are_refused() {
        let tools = json!([
            { "type": "tool_result", "tool_use_id": "toolu_1", "content": "a cat" },
            { "type": "text", "text": "and then?" }
        ]);
        let read = read(Dialect::Anthropic, &tools).expect("a tool result is a documented Anthropic block");
        assert_eq!(read.text, "and then?", "the text beside it is still read");
        let gemini = json!([{ "functionResponse": { "name": "lookup", "response": {} } }]);
        assert!(read_ok(Dialect::Gemini, &gemini), "a function response is a documented Gemini part");
        assert!(!read_ok(Dialect::Anthropic, &json!([{ "type": "picture" }])), "a made-up block is refused");
        assert!(!read_ok(Dialect::Openai, &json!([{ "type": "image" }])), "Anthropic's shape is refused from OpenAI");
    }

    fn read_ok(dialect: Dialect, content: &serde_json::Value) -> bool {
        read(dialect, content).is_ok()
    }
}
