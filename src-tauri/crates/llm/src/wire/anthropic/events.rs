//! Anthropic's stream events, written from the pieces of any provider's stream (a translated
//! request's answer).

use serde_json::json;

use super::super::{StreamPiece, StreamWriter, Tally};

/// Messages stream events: `message_start`, a content block per text run and per tool call
/// (`content_block_start`, its deltas, `content_block_stop`), then `message_delta` with the stop
/// reason and the usage, and `message_stop`.
pub(super) struct EventWriter {
    model: String,
    id: String,
    started: bool,
    tally: Tally,
    /// The block open now: its index, and the provider's index of the call it is (none: text).
    open: Option<(u32, Option<u32>)>,
    next_block: u32,
}

/// A `content_block_delta` event's data, its members in the order of their names (as its
/// `Value` wrote them): written straight from the text, where a `Value` built for each of a
/// translated stream's deltas was a tenth of what relaying it cost.
#[derive(serde::Serialize)]
struct BlockDelta<'a> {
    delta: Delta<'a>,
    index: u32,
    r#type: &'static str,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum Delta<'a> {
    Text { text: &'a str, r#type: &'static str },
    Json { partial_json: &'a str, r#type: &'static str },
}

impl EventWriter {
    pub(super) fn new(model: &str, id: String) -> EventWriter {
        EventWriter { model: model.to_owned(), id, started: false, tally: Tally::default(), open: None, next_block: 0 }
    }

    fn event(name: &str, data: &impl serde::Serialize, out: &mut Vec<u8>) {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\ndata: ");
        // Into a `Vec`, of a `Value` or a struct of text and numbers: it cannot fail.
        let _ = serde_json::to_writer(&mut *out, data);
        out.extend_from_slice(b"\n\n");
    }

    fn delta(index: u32, delta: Delta<'_>, out: &mut Vec<u8>) {
        // A text delta, the event of nearly every piece, written as its serialization would be.
        if let Delta::Text { text, r#type: "text_delta" } = delta {
            out.extend_from_slice(b"event: content_block_delta\ndata: {\"delta\":{\"text\":");
            json_string(text, out);
            out.extend_from_slice(b",\"type\":\"text_delta\"},\"index\":");
            out.extend_from_slice(itoa_u32(index, &mut [0; 10]));
            out.extend_from_slice(b",\"type\":\"content_block_delta\"}\n\n");
            return;
        }
        Self::event("content_block_delta", &BlockDelta { delta, index, r#type: "content_block_delta" }, out);
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let message = MessageOut {
                content: [],
                id: &self.id,
                model: &self.model,
                role: "assistant",
                stop_reason: None,
                stop_sequence: None,
                r#type: "message",
                usage: self.usage(),
            };
            Self::event("message_start", &MessageStart { message, r#type: "message_start" }, out);
        }
    }

    /// The usage so far in Anthropic's terms (the cache counted apart).
    fn usage(&self) -> UsageOut {
        let usage = self.tally.usage.unwrap_or_default();
        UsageOut {
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: usage.cached,
            input_tokens: usage.input.saturating_sub(usage.cached),
            output_tokens: usage.output,
        }
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        if let Some((index, _)) = self.open.take() {
            Self::event("content_block_stop", &Indexed { index, r#type: "content_block_stop" }, out);
        }
    }

    fn open(&mut self, block: Block<'_>, call: Option<u32>, out: &mut Vec<u8>) -> u32 {
        self.close(out);
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some((index, call));
        Self::event(
            "content_block_start",
            &BlockStart { content_block: block, index, r#type: "content_block_start" },
            out,
        );
        index
    }
}

/// `text` as a JSON string, as serde_json writes it: copied as it is when nothing in it needs an
/// escape (the common case), else escaped by serde_json.
fn json_string(text: &str, out: &mut Vec<u8>) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        // Into a `Vec`: it cannot fail.
        let _ = serde_json::to_writer(&mut *out, text);
    }
}

/// `n` in decimal, in `buffer`.
fn itoa_u32(mut n: u32, buffer: &mut [u8; 10]) -> &[u8] {
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buffer[at..];
        }
    }
}

// The events' data, written straight from these (as a `Value` wrote them: members in the order
// of their names); a `Value` tree per event was most of what writing a translated stream cost.

#[derive(serde::Serialize)]
struct UsageOut {
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(serde::Serialize)]
struct MessageOut<'a> {
    content: [(); 0],
    id: &'a str,
    model: &'a str,
    role: &'static str,
    stop_reason: Option<&'static str>,
    stop_sequence: Option<&'static str>,
    r#type: &'static str,
    usage: UsageOut,
}

#[derive(serde::Serialize)]
struct MessageStart<'a> {
    message: MessageOut<'a>,
    r#type: &'static str,
}

#[derive(serde::Serialize)]
struct Indexed {
    index: u32,
    r#type: &'static str,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum Block<'a> {
    Text { text: &'static str, r#type: &'static str },
    ToolUse { id: &'a str, input: Empty, name: &'a str, r#type: &'static str },
}

/// `{}`.
#[derive(serde::Serialize)]
struct Empty {}

#[derive(serde::Serialize)]
struct BlockStart<'a> {
    content_block: Block<'a>,
    index: u32,
    r#type: &'static str,
}

#[derive(serde::Serialize)]
struct Stop {
    stop_reason: &'static str,
    stop_sequence: Option<&'static str>,
}

#[derive(serde::Serialize)]
struct Typed {
    r#type: &'static str,
}

#[derive(serde::Serialize)]
struct MessageDelta {
    delta: Stop,
    r#type: &'static str,
    usage: UsageOut,
}

impl StreamWriter for EventWriter {
    fn piece(&mut self, piece: &StreamPiece, out: &mut Vec<u8>) {
        if self.tally.count(piece) {
            return;
        }
        match piece {
            StreamPiece::Text(text) => {
                self.start(out);
                let index = match self.open {
                    Some((index, None)) => index,
                    _ => self.open(Block::Text { text: "", r#type: "text" }, None, out),
                };
                Self::delta(index, Delta::Text { text, r#type: "text_delta" }, out);
            }
            StreamPiece::ToolCall { index, id, name } => {
                self.start(out);
                let block = Block::ToolUse { id, input: Empty {}, name, r#type: "tool_use" };
                self.open(block, Some(*index), out);
            }
            StreamPiece::ToolArguments { json, .. } => {
                if let Some((block, Some(_))) = self.open {
                    Self::delta(block, Delta::Json { partial_json: json, r#type: "input_json_delta" }, out);
                }
            }
            StreamPiece::Done | StreamPiece::Broken(_) => {
                self.start(out);
                self.close(out);
                let stop = if self.tally.called { "tool_use" } else { "end_turn" };
                let delta = MessageDelta {
                    delta: Stop { stop_reason: stop, stop_sequence: None },
                    r#type: "message_delta",
                    usage: self.usage(),
                };
                Self::event("message_delta", &delta, out);
                Self::event("message_stop", &Typed { r#type: "message_stop" }, out);
            }
            StreamPiece::Error(failure) => {
                let kind = match failure.status {
                    429 => "rate_limit_error",
                    529 | 503 => "overloaded_error",
                    _ => "api_error",
                };
                let error = json!({ "type": "error", "error": { "type": kind, "message": failure.message } });
                Self::event("error", &error, out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_delta_is_written_as_its_serialization_is() {
        for text in ["", " word", "caf\u{e9}", "a\"b", "back\\slash", "line\nbreak", "\u{7f}\u{1}", "日本"] {
            for index in [0, 7, 12, 4_000_000_000] {
                let mut fast = Vec::new();
                EventWriter::delta(index, Delta::Text { text, r#type: "text_delta" }, &mut fast);
                let mut slow = Vec::new();
                let data = BlockDelta {
                    delta: Delta::Text { text, r#type: "text_delta" },
                    index,
                    r#type: "content_block_delta",
                };
                EventWriter::event("content_block_delta", &data, &mut slow);
                assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(slow).unwrap(), "{text:?} at {index}");
            }
        }
    }
}
