//! The common OpenAI stream chunk, read without a parser: text at `choices[0].delta.content`
//! and nothing that says more (no `usage`, `error` or `tool_calls`, no escape anywhere). A
//! translated stream reads every event, and a chunk is mostly members nobody needs (`id`,
//! `object`, `created`, `model`), which this walks past at the speed of a byte search.
//!
//! Invariant: it answers only for text that is valid JSON and means exactly what a `Value` read
//! of it means; anything else (an escape, a member of interest named twice or of another type,
//! deep nesting, bad syntax) is declined, and the chunk is read as before.

/// What a declined chunk is: read another way.
pub(crate) struct Declined;

/// The text of `data` (a chunk whose first choice's delta has a non-empty `content` string),
/// `Ok(None)` for one that has none and no usage either; `Err(Declined)` for anything else.
#[cfg(test)]
pub(crate) fn chunk_text(data: &str) -> Result<Option<&str>, Declined> {
    chunk_text_at(data).map(|found| found.map(|(start, end)| &data[start..end]))
}

/// [`chunk_text`], as where the text lies in `data`.
fn chunk_text_at(data: &str) -> Result<Option<(usize, usize)>, Declined> {
    let bytes = data.as_bytes();
    if memchr::memchr(b'\\', bytes).is_some() {
        return Err(Declined);
    }
    let mut skim = Skim { text: data, bytes, at: 0 };
    let mut text = None;
    let mut seen_choices = false;
    skim.object(|skim, key| match key {
        "choices" if !seen_choices => {
            seen_choices = true;
            text = skim.choices()?;
            Ok(())
        }
        "choices" | "usage" | "error" => Err(Declined),
        _ => skim.value(0),
    })?;
    skim.space();
    if skim.at != bytes.len() {
        return Err(Declined);
    }
    Ok(text.map(|text: &str| {
        let start = text.as_ptr() as usize - data.as_ptr() as usize;
        (start, start + text.len())
    }))
}

/// What a stream's last skimmed chunk looked like around its text: most chunks of one stream are
/// the same but for their text (one id, one time, one model), and a chunk that is, is read by
/// comparing it with the last one.
#[derive(Debug, Default)]
pub(crate) struct Template {
    before: String,
    after: String,
}

/// The text of `data` as [`chunk_text`] reads it, through `template`: a chunk that is the
/// template's (its text aside) is not walked again; one that is skimmed becomes the template.
///
/// Sound because the template was a whole valid chunk whose text was a string without quotes,
/// backslashes or control characters: put any other such string in its place and the chunk stays
/// valid and means the same, but for its text.
pub(crate) fn templated_text<'a>(data: &'a str, template: &mut Template) -> Result<Option<&'a str>, Declined> {
    let fits = !template.before.is_empty()
        && data.len() > template.before.len() + template.after.len()
        && data.starts_with(&template.before)
        && data.ends_with(&template.after);
    if fits {
        let text = &data[template.before.len()..data.len() - template.after.len()];
        if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            return Ok(Some(text));
        }
    }
    match chunk_text_at(data)? {
        Some((start, end)) => {
            template.before.clear();
            template.before.push_str(&data[..start]);
            template.after.clear();
            template.after.push_str(&data[end..]);
            Ok(Some(&data[start..end]))
        }
        None => Ok(None),
    }
}

/// Deeper than this is declined (serde_json refuses past 128).
const MAX_DEPTH: usize = 64;

struct Skim<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Skim<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), Declined> {
        self.space();
        match self.peek() == Some(byte) {
            true => {
                self.at += 1;
                Ok(())
            }
            false => Err(Declined),
        }
    }

    /// A string (no escapes: there are none in the text), as it is written.
    fn string(&mut self) -> Result<&'a str, Declined> {
        self.expect(b'"')?;
        let start = self.at;
        // Byte by byte: a chunk's strings are short, shorter than a vector search pays for.
        let mut end = start;
        loop {
            match *self.bytes.get(end).ok_or(Declined)? {
                b'"' => break,
                // A raw control character is no JSON.
                0..0x20 => return Err(Declined),
                _ => end += 1,
            }
        }
        self.at = end + 1;
        // Between two quotes, which are whole characters: a part of the text.
        self.text.get(start..end).ok_or(Declined)
    }

    /// An object's members, each key handed to `member`, which reads its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Result<(), Declined>) -> Result<(), Declined> {
        self.expect(b'{')?;
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            member(self, key)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Declined),
            }
            self.space();
        }
    }

    /// Any value, checked and skipped.
    fn value(&mut self, depth: usize) -> Result<(), Declined> {
        if depth > MAX_DEPTH {
            return Err(Declined);
        }
        self.space();
        match self.peek().ok_or(Declined)? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|skim, _| skim.value(depth + 1)),
            b'[' => self.array(|skim, _| skim.value(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Declined),
        }
    }

    /// An array's items, each handed to `item` with its place.
    fn array(&mut self, mut item: impl FnMut(&mut Self, usize) -> Result<(), Declined>) -> Result<(), Declined> {
        self.expect(b'[')?;
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        let mut place = 0;
        loop {
            item(self, place)?;
            place += 1;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Declined),
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Declined> {
        match self.bytes[self.at..].starts_with(word) {
            true => {
                self.at += word.len();
                Ok(())
            }
            false => Err(Declined),
        }
    }

    /// A number as JSON writes one, without an exponent: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`.
    fn number(&mut self) -> Result<(), Declined> {
        let digits = |skim: &mut Self| {
            let start = skim.at;
            while skim.peek().is_some_and(|b| b.is_ascii_digit()) {
                skim.at += 1;
            }
            skim.at - start
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => drop(digits(self)),
            _ => return Err(Declined),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(Declined);
            }
        }
        // An exponent may put a number out of a double's range, which a parser refuses.
        if matches!(self.peek(), Some(b'e' | b'E')) {
            return Err(Declined);
        }
        Ok(())
    }

    /// `choices`: the first choice's delta's text; other choices checked and skipped.
    fn choices(&mut self) -> Result<Option<&'a str>, Declined> {
        self.space();
        if self.peek() != Some(b'[') {
            return Err(Declined);
        }
        let mut text = None;
        self.array(|skim, place| match place {
            0 => {
                text = skim.choice()?;
                Ok(())
            }
            _ => skim.value(1),
        })?;
        Ok(text)
    }

    /// A choice: its `delta`'s `content`, when it is a non-empty string.
    fn choice(&mut self) -> Result<Option<&'a str>, Declined> {
        self.space();
        if self.peek() != Some(b'{') {
            return Err(Declined);
        }
        let (mut text, mut seen_delta) = (None, false);
        self.object(|skim, key| match key {
            "delta" if !seen_delta => {
                seen_delta = true;
                text = skim.delta()?;
                Ok(())
            }
            "delta" => Err(Declined),
            _ => skim.value(2),
        })?;
        Ok(text)
    }

    fn delta(&mut self) -> Result<Option<&'a str>, Declined> {
        self.space();
        if self.peek() != Some(b'{') {
            return Err(Declined);
        }
        let (mut text, mut seen_content) = (None, false);
        self.object(|skim, key| match key {
            "content" if !seen_content => {
                seen_content = true;
                skim.space();
                match skim.peek() {
                    Some(b'"') => text = Some(skim.string()?).filter(|t| !t.is_empty()),
                    Some(b'n') => skim.literal(b"null")?,
                    _ => return Err(Declined),
                }
                Ok(())
            }
            "content" | "tool_calls" => Err(Declined),
            _ => skim.value(3),
        })?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_chunk_is_read_and_anything_else_declined() {
        fn text(data: &str) -> Option<Option<&str>> {
            chunk_text(data).ok()
        }
        let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}"#;
        assert_eq!(text(chunk), Some(Some(" word")), "the text");
        let role = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
        assert_eq!(text(role), Some(None), "an empty text is none");
        for declined in [
            r#"{"choices":[{"delta":{"content":"a\nb"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}"#,
            r#"{"choices":[{"delta":{"content":"a"}}],"choices":[]}"#,
            r#"{"error":null,"choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[]}}]}"#,
            r#"{"choices":[{"delta":{"content":5}}]}"#,
            r#"{"choices":[{"delta":null}]}"#,
            r#"{"choices":[null]}"#,
            r#"{"choices":[{"delta":{"content":"a"}}]} x"#,
            r#"{"choices":[{"delta":{"content":"a"}}],}"#,
            r#"{"n":01,"choices":[]}"#,
            r#"{"n":1e999,"choices":[]}"#,
            r#"[{"choices":[]}]"#,
        ] {
            assert!(chunk_text(declined).is_err(), "{declined}");
        }
    }

    #[test]
    fn a_chunk_like_the_last_is_read_by_its_template() {
        let mut template = Template::default();
        let chunk = |text: &str| {
            format!(r#"{{"id":"c","choices":[{{"index":0,"delta":{{"content":"{text}"}},"finish_reason":null}}]}}"#)
        };
        assert_eq!(templated_text(&chunk("Hello"), &mut template).ok(), Some(Some("Hello")), "skimmed");
        assert!(template.before.ends_with(r#""content":""#), "the template is made: {template:?}");
        assert_eq!(templated_text(&chunk(" word"), &mut template).ok(), Some(Some(" word")), "by the template");
        assert!(templated_text(&chunk(r#"a"b"#), &mut template).is_err(), "an escape is read another way");
        let other = r#"{"id":"d","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}"#;
        assert_eq!(templated_text(other, &mut template).ok(), Some(Some("x")), "another chunk: skimmed again");
        assert!(template.before.contains(r#""id":"d""#), "and made the template");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(20_000))]

        /// A chunk with a few of its bytes replaced, removed or added: whatever is not declined
        /// reads as a `Value` read of it does.
        #[test]
        fn what_is_not_declined_reads_as_a_value_does(
            edits in proptest::collection::vec((0usize..200, 0u8..3, proptest::sample::select(
                &b"{}[]\":,0123456789.-+eE nulltrufas\\x "[..])), 0..4),
        ) {
            use crate::wire::StreamPiece;
            let mut bytes = br#"{"id":"c","created":10,"choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}],"x":[1,{"y":true}]}"#.to_vec();
            for (at, how, byte) in edits {
                let at = at % (bytes.len() + 1);
                match how {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 if at < bytes.len() => drop(bytes.remove(at)),
                    _ => bytes.insert(at, byte),
                }
            }
            let Ok(data) = std::str::from_utf8(&bytes) else { return Ok(()) };
            if let Ok(text) = chunk_text(data) {
                let skimmed = match text {
                    Some(text) => StreamPiece::Text(text.to_owned()),
                    None => StreamPiece::Nothing,
                };
                proptest::prop_assert_eq!(
                    vec![skimmed], crate::wire::openai_chat::stream_pieces_of_value("", data), "{}", data
                );
            }
        }
    }
}
