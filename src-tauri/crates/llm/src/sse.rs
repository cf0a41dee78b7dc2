//! Server-sent events read from a byte stream, bounded: the one reader of provider streams, for
//! the chat (which parses each event) and the local API's relay (which passes each event on as it
//! came, or rewritten when it must be).
//!
//! Invariants: every byte is scanned once (a line's end is searched only in bytes not scanned
//! yet, and consumed bytes are dropped in bulk), so reading is linear in the bytes received; and
//! no event, finished or not, holds more than the decoder's limit: a provider that streams without
//! ending an event gets [`EventTooLarge`] after that many bytes, not all of Keypool's memory.
//!
//! The format is the WHATWG one: lines end with LF, CRLF or CR; `event:` names the event, `data:`
//! lines are joined with LF, lines starting with `:` are comments, and a blank line ends the event.
//!
//! An event is lent ([`Decoder::next`]): its name, its data and its bytes are read where they lie
//! in the decoder's buffer, copied only when its data has several lines or a line is not UTF-8.
//! The relay reads forty events of a streamed answer; an allocation for each of their three parts
//! was a tenth of what relaying it cost.

use std::ops::Range;

/// The most one event may hold, however it is split across reads.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its `event:` name, empty when it has none.
    pub name: String,
    /// Its `data:` lines, joined with LF.
    pub data: String,
    /// The event's bytes exactly as they came, its blank line included (for passing it on).
    pub raw: Vec<u8>,
}

/// One event, lent by the decoder until it is asked for the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// Its `event:` name, empty when it has none.
    pub name: &'a str,
    /// Its `data:` lines, joined with LF.
    pub data: &'a str,
    /// The event's bytes exactly as they came, its blank line included (for passing it on).
    pub raw: &'a [u8],
}

impl EventRef<'_> {
    pub fn to_owned(&self) -> Event {
        Event { name: self.name.to_owned(), data: self.data.to_owned(), raw: self.raw.to_vec() }
    }
}

/// An event grew past the limit before it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a streamed event is larger than {limit} bytes")]
pub struct EventTooLarge {
    pub limit: usize,
}

/// Where a field of the event being read is: nowhere yet, a line's value in the buffer, or text
/// of the decoder's own (lines joined, or made valid UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Unset,
    InBuffer(Range<usize>),
    Copied,
}

/// The text of `field`: in `buf`, or `copied`.
fn field_text<'a>(buf: &'a [u8], field: Field, copied: &'a str) -> &'a str {
    match field {
        Field::Unset => "",
        Field::Copied => copied,
        // Checked as it was read.
        Field::InBuffer(range) => std::str::from_utf8(&buf[range]).unwrap_or_default(),
    }
}

/// Turns bytes, as they arrive, into events.
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Where the event being read starts in `buf`; bytes before it are consumed.
    event_start: usize,
    /// Where the line being read starts.
    line_start: usize,
    /// Bytes before this were scanned for a line end.
    scanned: usize,
    name: Field,
    data: Field,
    /// The name's text when it is [`Field::Copied`].
    name_text: String,
    /// The data's text when it is [`Field::Copied`].
    data_text: String,
    limit: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::with_limit(MAX_EVENT_BYTES)
    }
}

impl Decoder {
    /// A decoder whose events may hold at most `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            event_start: 0,
            line_start: 0,
            scanned: 0,
            name: Field::Unset,
            data: Field::Unset,
            name_text: String::new(),
            data_text: String::new(),
            limit,
        }
    }

    /// Takes the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        // Consumed bytes go in bulk, once they are at least half of what is kept: each byte is
        // moved a bounded number of times.
        if self.event_start > 0 && self.event_start >= self.buf.len() / 2 {
            let consumed = self.event_start;
            self.buf.drain(..consumed);
            self.line_start -= consumed;
            self.scanned -= consumed;
            self.event_start = 0;
            for field in [&mut self.name, &mut self.data] {
                if let Field::InBuffer(range) = field {
                    *range = range.start - consumed..range.end - consumed;
                }
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, if the bytes so far hold one. `Err` once the event being read has
    /// grown past the limit (the stream should end there).
    pub fn next_event(&mut self) -> Result<Option<Event>, EventTooLarge> {
        Ok(self.next()?.map(|event| event.to_owned()))
    }

    /// [`Decoder::next_event`], lent: the event as it lies in the decoder, until the next call.
    #[allow(clippy::should_implement_trait)] // a lending iterator, which `Iterator` cannot be
    pub fn next(&mut self) -> Result<Option<EventRef<'_>>, EventTooLarge> {
        loop {
            let Some((line_end, next_line)) = self.line_end() else {
                if self.buf.len() - self.event_start > self.limit {
                    return Err(EventTooLarge { limit: self.limit });
                }
                return Ok(None);
            };
            if next_line - self.event_start > self.limit {
                return Err(EventTooLarge { limit: self.limit });
            }
            let line = self.line_start..line_end;
            self.line_start = next_line;
            self.scanned = next_line;
            if line.is_empty() {
                let raw = self.event_start..next_line;
                self.event_start = next_line;
                let name = std::mem::replace(&mut self.name, Field::Unset);
                let data = std::mem::replace(&mut self.data, Field::Unset);
                if data == Field::Unset {
                    continue; // a blank line with no data dispatches nothing
                }
                let buf = &self.buf;
                let event = EventRef {
                    name: field_text(buf, name, &self.name_text),
                    data: field_text(buf, data, &self.data_text),
                    raw: &buf[raw],
                };
                return Ok(Some(event));
            }
            // The field is what comes before the first colon (a colon is never part of a
            // character that is not UTF-8, so the bytes split as the text would).
            let bytes = &self.buf[line.clone()];
            let (field, value) = match bytes.iter().position(|&b| b == b':') {
                Some(colon) => {
                    let space = usize::from(bytes.get(colon + 1) == Some(&b' '));
                    (&bytes[..colon], line.start + colon + 1 + space..line.end)
                }
                None => (bytes, line.end..line.end),
            };
            match field {
                b"event" => self.set_name(value),
                b"data" => self.add_data(value),
                _ => {} // a comment (an empty field), id, retry and unknown fields
            }
        }
    }

    /// The event's name is the value at `value` (the last `event:` line's).
    fn set_name(&mut self, value: Range<usize>) {
        self.name = match std::str::from_utf8(&self.buf[value.clone()]) {
            Ok(_) => Field::InBuffer(value),
            Err(_) => {
                self.name_text.clear();
                self.name_text.push_str(&String::from_utf8_lossy(&self.buf[value]));
                Field::Copied
            }
        };
    }

    /// The event's data gets the line whose value is at `value`: the first in place, the next
    /// ones joined to it with LF in the decoder's own text.
    fn add_data(&mut self, value: Range<usize>) {
        let utf8 = std::str::from_utf8(&self.buf[value.clone()]).is_ok();
        match std::mem::replace(&mut self.data, Field::Copied) {
            Field::Unset if utf8 => self.data = Field::InBuffer(value),
            Field::Unset => {
                self.data_text.clear();
                self.data_text.push_str(&String::from_utf8_lossy(&self.buf[value]));
            }
            first => {
                if let Field::InBuffer(first) = first {
                    self.data_text.clear();
                    // Checked as it was read.
                    self.data_text.push_str(std::str::from_utf8(&self.buf[first]).unwrap_or_default());
                }
                self.data_text.push('\n');
                self.data_text.push_str(&String::from_utf8_lossy(&self.buf[value]));
            }
        }
    }

    /// The end of the line being read (exclusive) and where the next one starts, if it is
    /// complete. A CR at the very end of the bytes waits for the next byte: it may be a CRLF.
    fn line_end(&mut self) -> Option<(usize, usize)> {
        let from = self.scanned.max(self.line_start);
        let Some(offset) = memchr::memchr2(b'\n', b'\r', &self.buf[from..]) else {
            self.scanned = self.buf.len();
            return None;
        };
        let at = from + offset;
        match self.buf[at] {
            b'\n' => Some((at, at + 1)),
            _ if at + 1 == self.buf.len() => {
                self.scanned = at;
                None
            }
            _ if self.buf[at + 1] == b'\n' => Some((at, at + 2)),
            _ => Some((at, at + 1)),
        }
    }

    /// Whether the bytes so far hold a complete event (or one past the limit), without taking it:
    /// what a relay waits for before it calls a stream started. Comments are no event.
    pub fn holds_event(&self) -> bool {
        if self.buf.len() - self.event_start > self.limit {
            return true;
        }
        // The lines not read yet: a blank one after a `data` field ends an event.
        let mut data = self.data != Field::Unset;
        let mut at = self.line_start;
        while let Some(offset) = memchr::memchr2(b'\n', b'\r', &self.buf[at..]) {
            let end = at + offset;
            // A CR at the very end may be half of a CRLF: the decoder waits for the next byte.
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                return false;
            }
            let line = &self.buf[at..end];
            if line.is_empty() && data {
                return true;
            }
            if line.is_empty() {
                data = false;
            } else if line.starts_with(b"data") && matches!(line.get(4), None | Some(b':')) {
                data = true;
            }
            at = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') { end + 2 } else { end + 1 };
        }
        false
    }

    /// How many bytes the decoder holds that no event it lent took yet.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.event_start
    }

    /// What is left when the stream ends: the bytes of an event that never ended.
    pub fn unfinished(&self) -> &[u8] {
        &self.buf[self.event_start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk);
            while let Some(event) = decoder.next_event().expect("small events") {
                out.push((event.name, event.data));
            }
        }
        out
    }

    #[test]
    fn events_end_at_a_blank_line_in_any_line_ending() {
        let expected = vec![(String::new(), "a".to_owned()), ("x".to_owned(), "b\nc".to_owned())];
        assert_eq!(events(&[b"data: a\n\nevent: x\ndata: b\ndata: c\n\n"]), expected, "LF");
        assert_eq!(events(&[b"data: a\r\n\r\nevent: x\r\ndata: b\r\ndata: c\r\n\r\n"]), expected, "CRLF");
        // A CR at the very end waits for the next byte (it may start a CRLF): the next event's.
        assert_eq!(events(&[b"data: a\r\revent: x\rdata: b\rdata: c\r\r", b"data: next"]), expected, "CR");
    }

    #[test]
    fn an_event_split_anywhere_reads_the_same() {
        let whole: &[u8] = b": comment\nevent: message_start\r\ndata: {\"x\":1}\r\n\r\ndata:[DONE]\n\n";
        let expected = events(&[whole]);
        assert_eq!(expected.len(), 2, "two events: {expected:?}");
        for cut in 0..whole.len() {
            assert_eq!(events(&[&whole[..cut], &whole[cut..]]), expected, "split at {cut}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&bytes), expected, "one byte at a time");
    }

    #[test]
    fn the_raw_bytes_are_the_event_as_it_came() {
        let mut decoder = Decoder::default();
        decoder.push(b"event: ping\ndata: {}\n\ndata: next");
        let event = decoder.next_event().unwrap().unwrap();
        assert_eq!(event.raw, b"event: ping\ndata: {}\n\n", "blank line included, nothing of the next");
        assert_eq!(decoder.next_event(), Ok(None), "the next is not complete");
        assert_eq!(decoder.unfinished(), b"data: next", "and is what is left");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_read_with_replacement_characters() {
        let mut decoder = Decoder::default();
        decoder.push(b"event: a\xffb\ndata: x\xfey\ndata: z\n\nevent: e\ndata: \xff\n\n");
        let event = decoder.next().unwrap().unwrap();
        assert_eq!((event.name, event.data), ("a\u{fffd}b", "x\u{fffd}y\nz"), "as text, lines joined");
        let event = decoder.next().unwrap().unwrap();
        assert_eq!((event.name, event.data), ("e", "\u{fffd}"), "the next event's own, nothing of the last");
    }

    #[test]
    fn holds_event_says_whether_next_would_give_one_at_every_split() {
        let streams: [&[u8]; 5] = [
            b": keep-alive\n\n: keep-alive\n\ndata: {\"a\":1}\n\n",
            b"event: message_start\r\ndata: {}\r\n\r\nevent: ping\r\ndata: {}\r\n\r\n",
            b"id: 1\rretry: 5\rdata\r\r",
            b"\n\n\ndata: one\ndata: two\n\n",
            b": only a comment\n\n",
        ];
        for stream in streams {
            for split in 0..=stream.len() {
                let mut decoder = Decoder::default();
                decoder.push(&stream[..split]);
                let holds = decoder.holds_event();
                let gives = matches!(decoder.next(), Ok(Some(_)));
                assert_eq!(holds, gives, "{:?} cut at {split}", String::from_utf8_lossy(stream));
            }
        }
        // After a first event was taken, the next one is looked for from there.
        let mut decoder = Decoder::default();
        decoder.push(b"data: 1\n\n: keep-alive\n\n");
        assert!(decoder.next().unwrap().is_some());
        assert!(!decoder.holds_event(), "comments are no event");
    }

    #[test]
    fn an_event_past_the_limit_is_refused_before_it_ends() {
        let mut decoder = Decoder::with_limit(64);
        decoder.push(b"data: ");
        for _ in 0..10 {
            decoder.push(&[b'x'; 16]);
            if decoder.next_event().is_err() {
                return;
            }
        }
        panic!("160 bytes without an end passed a 64-byte limit");
    }

    #[test]
    fn many_small_events_stay_within_the_limit_together() {
        let mut decoder = Decoder::with_limit(64);
        let mut count = 0;
        for _ in 0..1000 {
            decoder.push(b"data: hello\n\n");
            while decoder.next_event().expect("each event is small").is_some() {
                count += 1;
            }
        }
        assert_eq!(count, 1000, "the limit is per event, not per stream");
        assert!(decoder.buf.len() < 64, "consumed bytes are dropped: {} kept", decoder.buf.len());
    }

    proptest::proptest! {
        /// Arbitrary bytes in arbitrary pieces: no panic, and nothing held past the limit.
        #[test]
        fn arbitrary_bytes_never_panic_or_grow_past_the_limit(
            pieces in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..200), 0..40)
        ) {
            let mut decoder = Decoder::with_limit(256);
            for piece in &pieces {
                decoder.push(piece);
                loop {
                    match decoder.next_event() {
                        Ok(Some(event)) => proptest::prop_assert!(event.raw.len() <= 256),
                        Ok(None) => break,
                        Err(_) => return Ok(()),
                    }
                }
                proptest::prop_assert!(decoder.unfinished().len() <= 256 + piece.len());
            }
        }
    }
}
