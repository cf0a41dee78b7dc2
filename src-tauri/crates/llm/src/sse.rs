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

/// An event grew past the limit before it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a streamed event is larger than {limit} bytes")]
pub struct EventTooLarge {
    pub limit: usize,
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
    name: String,
    data: String,
    /// The event being read has a `data:` line.
    has_data: bool,
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
            name: String::new(),
            data: String::new(),
            has_data: false,
            limit,
        }
    }

    /// Takes the next bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        // Consumed bytes go in bulk, once they are at least half of what is kept: each byte is
        // moved a bounded number of times.
        if self.event_start > 0 && self.event_start >= self.buf.len() / 2 {
            self.buf.drain(..self.event_start);
            self.line_start -= self.event_start;
            self.scanned -= self.event_start;
            self.event_start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, if the bytes so far hold one. `Err` once the event being read has
    /// grown past the limit (the stream should end there).
    pub fn next_event(&mut self) -> Result<Option<Event>, EventTooLarge> {
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
            let line = &self.buf[self.line_start..line_end];
            self.line_start = next_line;
            self.scanned = next_line;
            if line.is_empty() {
                let raw = self.buf[self.event_start..next_line].to_vec();
                self.event_start = next_line;
                let (name, data, has_data) =
                    (std::mem::take(&mut self.name), std::mem::take(&mut self.data), self.has_data);
                self.has_data = false;
                if has_data {
                    return Ok(Some(Event { name, data, raw }));
                }
                continue; // a blank line with no data dispatches nothing
            }
            let line = String::from_utf8_lossy(line);
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*line, ""),
            };
            match field {
                "" => {} // a comment
                "event" => self.name = value.to_owned(),
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                _ => {} // id, retry and unknown fields
            }
        }
    }

    /// The end of the line being read (exclusive) and where the next one starts, if it is
    /// complete. A CR at the very end of the bytes waits for the next byte: it may be a CRLF.
    fn line_end(&mut self) -> Option<(usize, usize)> {
        let from = self.scanned.max(self.line_start);
        let found = self.buf[from..].iter().position(|&b| b == b'\n' || b == b'\r');
        let Some(offset) = found else {
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
