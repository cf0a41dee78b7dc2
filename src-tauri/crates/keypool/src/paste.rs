//! API keys out of any text a user pastes or picks (`.txt`, `.csv`, `.json`): what a bulk import
//! starts from. Pure: no I/O, no allocation of anything but the keys found.
//!
//! Two ways of reading, chosen by the caller for the whole text (never guessed from it: a text
//! with no key of the provider's shape must not fall back to taking every token, which would send
//! a `.env`'s other secrets to the provider):
//! - **By shape**, given the shapes of one provider kind (its row's `key_shapes`): OpenAI's `sk-…`
//!   and `sk-proj-…`, Anthropic's `sk-ant-…`, OpenRouter's `sk-or-…`, Gemini's `AIza…` (exactly 39
//!   characters). Every key of one of those shapes is taken, wherever it stands in a line (a CSV
//!   cell, a JSON string, after a label); several on a line are all taken. Keys of other shapes
//!   (another provider's, a `GITHUB_TOKEN`) are not.
//! - **One per line**, given no shape (the user chose it: a provider whose keys have no known
//!   shape): each non-empty line that is not a comment (`#`, `//`) gives its longest token of key
//!   characters that has a letter and a digit and at least [`MIN_KEY_CHARS`] characters;
//!   separators (`, ; | = :` tabs and spaces), quotes and labels around it are ignored, and so is
//!   a trailing comment. In an assignment (`NAME=value`, `NAME: value`, `export NAME="value"`,
//!   JSON's `"name": "value"`) only the value is read: a variable's name, however long, is never
//!   the key.
//!
//! A line that gives nothing but looks as if it held a key (a token of [`MIN_KEY_CHARS`] key
//! characters or more, or, reading one per line, anything at all) is reported by its number:
//! never by its text, which may be a secret of an unknown shape.
//!
//! Invariant: every key in [`Extracted::keys`] is different; the first occurrence is kept.

use std::collections::HashSet;

use crate::secret::Secret;

/// The shortest token taken as a key when no known shape matches (and the length from which a
/// line that gave nothing is reported as unrecognised).
pub const MIN_KEY_CHARS: usize = 16;

/// How the keys of one provider kind look: a prefix and a length, a token of key characters
/// (letters, digits, `-`, `_`) standing alone. The kinds' rows hold theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyShape {
    prefix: &'static str,
    min_len: usize,
    max_len: usize,
    /// Prefixes of other shapes that start with this one's (`sk-ant-` is not an OpenAI `sk-`).
    except: &'static [&'static str],
}

impl KeyShape {
    /// `prefix` and at least `min_tail` more key characters.
    pub const fn prefixed(prefix: &'static str, min_tail: usize) -> KeyShape {
        KeyShape { prefix, min_len: prefix.len() + min_tail, max_len: usize::MAX, except: &[] }
    }

    /// `prefix`, `len` characters in all.
    pub const fn exact(prefix: &'static str, len: usize) -> KeyShape {
        KeyShape { prefix, min_len: len, max_len: len, except: &[] }
    }

    /// The same shape, less tokens that start with one of `prefixes`.
    pub const fn except(self, prefixes: &'static [&'static str]) -> KeyShape {
        KeyShape { except: prefixes, ..self }
    }

    /// What every key of this shape starts with (`sk-`, `AIza`).
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// Whether `token` (a whole token) is a key of this shape.
    pub fn matches(&self, token: &str) -> bool {
        token.starts_with(self.prefix)
            && (self.min_len..=self.max_len).contains(&token.len())
            && token.chars().all(is_shape_char)
            && !self.except.iter().any(|other| token.starts_with(other))
    }
}

/// A key found, and the line (1-based) it was found on.
#[derive(Debug, Clone)]
pub struct FoundKey {
    /// The key as written.
    pub secret: Secret,
    /// Where it was first found.
    pub line: usize,
}

/// What a text holds.
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    /// Each distinct key once, in the order of the text.
    pub keys: Vec<FoundKey>,
    /// Keys found again after their first occurrence.
    pub duplicates: usize,
    /// Lines (1-based) that seem to hold a key but gave none.
    pub unrecognised_lines: Vec<usize>,
}

impl Extracted {
    /// Every occurrence found, duplicates included.
    pub fn found(&self) -> usize {
        self.keys.len() + self.duplicates
    }
}

/// The keys in `text`: those of `shapes`, or with no shape given, one per line (see the module's
/// documentation).
pub fn extract_keys(text: &str, shapes: &[KeyShape]) -> Extracted {
    let by_shape = !shapes.is_empty();
    let mut extracted = Extracted::default();
    let mut seen: HashSet<&str> = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let found: Vec<&str> = if by_shape {
            shaped_keys(line, shapes)
        } else {
            match line_key(line) {
                LineKey::Key(key) => vec![key],
                LineKey::Nothing => vec![],
                LineKey::Unrecognised => {
                    extracted.unrecognised_lines.push(number);
                    vec![]
                }
            }
        };
        if by_shape && found.is_empty() && longest_token(line).is_some_and(|t| t.len() >= MIN_KEY_CHARS) {
            extracted.unrecognised_lines.push(number);
        }
        for key in found {
            if seen.insert(key) {
                extracted.keys.push(FoundKey { secret: Secret::new(key), line: number });
            } else {
                extracted.duplicates += 1;
            }
        }
    }
    extracted
}

/// A character that can be part of a key of a known shape.
fn is_shape_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// A character that can be part of a key of an unknown shape (base64 and URL-safe alphabets).
fn is_key_char(c: char) -> bool {
    is_shape_char(c) || matches!(c, '.' | '~' | '+' | '/')
}

/// The keys of one of `shapes` in `line`, in order.
fn shaped_keys<'a>(line: &'a str, shapes: &[KeyShape]) -> Vec<&'a str> {
    let bytes = line.as_bytes();
    let mut keys = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let at_boundary = start == 0 || !is_shape_char(bytes[start - 1] as char);
        let rest = &line[start..];
        if at_boundary && shapes.iter().any(|shape| rest.starts_with(shape.prefix)) {
            let len = rest.find(|c: char| !is_shape_char(c)).unwrap_or(rest.len());
            let token = &rest[..len];
            if shapes.iter().any(|shape| shape.matches(token)) {
                keys.push(token);
            }
            start += len.max(1);
            continue;
        }
        // Move to the next character (keys are ASCII; other characters are skipped whole).
        start += rest.chars().next().map_or(1, char::len_utf8);
    }
    keys
}

enum LineKey<'a> {
    Key(&'a str),
    /// Empty, or a comment.
    Nothing,
    Unrecognised,
}

/// The key of a line read one per line.
fn line_key(line: &str) -> LineKey<'_> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
        return LineKey::Nothing;
    }
    let line = strip_trailing_comment(line);
    let line = assigned_value(line).unwrap_or(line);
    let best = tokens(line)
        .filter(|t| t.len() >= MIN_KEY_CHARS)
        .filter(|t| t.chars().any(|c| c.is_ascii_alphabetic()) && t.chars().any(|c| c.is_ascii_digit()))
        .max_by_key(|t| t.len());
    match best {
        Some(key) => LineKey::Key(key),
        None => LineKey::Unrecognised,
    }
}

/// The value of an assignment line (`NAME=value`, `NAME: value`, `export NAME="value"`,
/// `"name": "value",`): what follows the first `=` or `:` after a name, when a name (letters,
/// digits, `_ . -`, quoted or not) is all that comes before it and some key character after it.
/// `None`: not an assignment (a key ending in `==` is not one either).
fn assigned_value(line: &str) -> Option<&str> {
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    let at = line.find(['=', ':'])?;
    let name = line[..at].trim().trim_matches(|c| c == '"' || c == '\'');
    let value = &line[at + 1..];
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    (is_name && value.chars().any(is_key_char)).then_some(value)
}

/// `line` without a ` # …` or ` // …` comment at its end (one after whitespace: a `#` or `//`
/// inside a token belongs to it).
fn strip_trailing_comment(line: &str) -> &str {
    let mut end = line.len();
    for marker in [" #", "\t#", " //", "\t//"] {
        if let Some(at) = line.find(marker) {
            end = end.min(at);
        }
    }
    &line[..end]
}

/// The runs of key characters of `line`, with what a token cannot end in (a `.` or `/` of
/// punctuation) trimmed off.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !is_key_char(c)).map(|t| t.trim_matches(|c| matches!(c, '.' | '/'))).filter(|t| !t.is_empty())
}

fn longest_token(line: &str) -> Option<&str> {
    tokens(line).max_by_key(|t| t.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPENAI: &str = "sk-abcdefghijklmnopqrstuvwx1234";
    const PROJECT: &str = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123456789";
    const ANTHROPIC: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AAAA";
    const OPENROUTER: &str = "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const GEMINI: &str = "AIzaSyA1234567890abcdefghijklmnopqrstuv";
    /// A Gemini (Google API) key: `AIza` and 35 more, 39 in all.
    const GEMINI_LEN: usize = 39;

    /// Every kind's shape, as the kinds' rows give them (keypool-llm's `every_key_shape`).
    const SHAPES: [KeyShape; 4] = [
        KeyShape::prefixed("sk-", 20).except(&["sk-ant-", "sk-or-"]),
        KeyShape::prefixed("sk-ant-", 16),
        KeyShape::prefixed("sk-or-", 17),
        KeyShape::exact("AIza", 39),
    ];
    /// OpenAI's row alone.
    const OPENAI_ONLY: [KeyShape; 1] = [SHAPES[0]];

    fn extract_keys(text: &str) -> Extracted {
        super::extract_keys(text, &SHAPES)
    }

    fn keys(text: &str) -> Vec<String> {
        extract_keys(text).keys.iter().map(|k| k.secret.expose().to_owned()).collect()
    }

    #[test]
    fn the_gemini_constant_has_the_documented_length() {
        assert_eq!(GEMINI.len(), GEMINI_LEN, "the table's Gemini key must be a real-length one");
    }

    /// A row: what it is, a text, the shapes it is read by (none: one per line), the keys it must
    /// give (in order), and the lines it must report.
    type Row<'a> = (&'a str, String, &'a [KeyShape], Vec<&'a str>, Vec<usize>);

    #[test]
    fn texts_give_the_keys_they_hold() {
        let (all, lines): (&[KeyShape], &[KeyShape]) = (&SHAPES, &[]);
        let table: Vec<Row<'_>> = vec![
            ("one of each known shape", format!("{OPENAI}\n{PROJECT}\n{ANTHROPIC}\n{OPENROUTER}\n{GEMINI}\n"), all, vec![OPENAI, PROJECT, ANTHROPIC, OPENROUTER, GEMINI], vec![]),
            ("a CSV with a header and labels", format!("label,key,weight\nprod,{OPENAI},3\n\"staging\",\"{PROJECT}\",1\n"), all, vec![OPENAI, PROJECT], vec![]),
            ("a JSON document", format!("{{\n  \"keys\": [\n    \"{ANTHROPIC}\",\n    {{\"key\": \"{GEMINI}\"}}\n  ]\n}}\n"), all, vec![ANTHROPIC, GEMINI], vec![]),
            ("labels, quotes and comments around known shapes", format!("# my keys\nwork: '{OPENAI}' // the old one\nOPENAI_API_KEY={PROJECT}\n"), all, vec![OPENAI, PROJECT], vec![]),
            ("two keys on one line", format!("{OPENAI} {GEMINI}"), all, vec![OPENAI, GEMINI], vec![]),
            ("a line of garbage among shapes is reported, structure is not", format!("{OPENAI}\nnot-a-key-but-long-enough-0123\n}}\n\n"), all, vec![OPENAI], vec![2]),
            ("too short an sk- is no key", format!("sk-short\n{OPENAI}"), all, vec![OPENAI], vec![]),
            ("a Gemini key one character too long is no key", format!("{GEMINI}x\n{OPENAI}"), all, vec![OPENAI], vec![1]),
            ("a shape inside a longer word is no key", format!("xsk-abcdefghijklmnopqrstuvwx1234\n{GEMINI}"), all, vec![GEMINI], vec![1]),
            (
                "a .env read by OpenAI's shape: the other kinds' keys and a GitHub token are left, by line",
                format!("OPENAI_API_KEY={OPENAI}\nANTHROPIC_API_KEY={ANTHROPIC}\nGEMINI_API_KEY={GEMINI}\nGITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd\nDB_PASSWORD=hunter2\nOPENAI_PROJECT_KEY=\"{PROJECT}\"\n"),
                &OPENAI_ONLY, vec![OPENAI, PROJECT], vec![2, 3, 4],
            ),
            ("no key of the shape given is nothing, not a fallback to any token", "GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd\nabcd1234efgh5678ijkl\n".into(), &OPENAI_ONLY, vec![], vec![1, 2]),
            ("unknown shapes, one per line, with separators and comments", "# comment\n// another\n\n  abcd1234efgh5678ijkl  \nlabel-one, \"QWERTY0987654321zxcv\" # note\nfoo;bar;Zz9Yy8Xx7Ww6Vv5Uu4\n".into(), lines, vec!["abcd1234efgh5678ijkl", "QWERTY0987654321zxcv", "Zz9Yy8Xx7Ww6Vv5Uu4"], vec![]),
            ("one per line takes a known shape's line too, and any other token", format!("{OPENAI}\nGITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd\n"), lines, vec![OPENAI, "ghp_0123456789abcdefABCDEF0123456789abcd"], vec![]),
            ("a line with nothing key-like is unrecognised", "abcd1234efgh5678ijkl\nhello world\nshort1\n".into(), lines, vec!["abcd1234efgh5678ijkl"], vec![2, 3]),
            ("base64-like keys keep their characters", "key=ab+cd/ef12.34~gh56ij78\n".into(), lines, vec!["ab+cd/ef12.34~gh56ij78"], vec![]),
            (
                "an assignment gives its value, never the variable's name, however long",
                "export ANTHROPIC_API_KEY_2=\"sk-x9Y8z7W6\"\nMY_SERVICE_API_KEY_NUMBER_3: 'Ab12Cd34Ef56Gh78'\n  \"the_longest_json_name_of_all_2\": \"Zz9Yy8Xx7Ww6Vv5Uu4\",\nVERY_LONG_VARIABLE_NAME_2024=short1\nabcd1234efgh5678ijkl==\n".into(),
                lines, vec!["Ab12Cd34Ef56Gh78", "Zz9Yy8Xx7Ww6Vv5Uu4", "abcd1234efgh5678ijkl"], vec![1, 4],
            ),
            ("windows line ends", format!("{OPENAI}\r\n{GEMINI}\r\n"), all, vec![OPENAI, GEMINI], vec![]),
            ("nothing at all", "\n\n   \n".into(), all, vec![], vec![]),
            ("nothing at all, one per line", "\n\n   \n".into(), lines, vec![], vec![]),
        ];
        for (what, text, shapes, want, unrecognised) in table {
            let got = super::extract_keys(&text, shapes);
            let got_keys: Vec<String> = got.keys.iter().map(|k| k.secret.expose().to_owned()).collect();
            assert_eq!(got_keys, want, "{what}: the keys found, in order");
            assert_eq!(got.unrecognised_lines, unrecognised, "{what}: the lines reported as unrecognised");
        }
    }

    #[test]
    fn duplicates_within_a_paste_are_counted_and_dropped() {
        let text = format!("{OPENAI}\n{GEMINI}\n{OPENAI}\n\"{OPENAI}\"\n{GEMINI}");
        let got = extract_keys(&text);
        assert_eq!(keys(&text), vec![OPENAI, GEMINI], "each key once, in first-seen order");
        assert_eq!(got.duplicates, 3, "the three repeats are counted");
        assert_eq!(got.found(), 5, "found counts every occurrence");
        assert_eq!(got.keys[1].line, 2, "a key keeps the line of its first occurrence");
    }

    #[test]
    fn the_extracted_form_never_shows_a_key() {
        let got = extract_keys(&format!("{ANTHROPIC}\nnot-a-key-but-long-enough-0123"));
        let shown = format!("{got:?}");
        assert!(!shown.contains(ANTHROPIC), "Debug of what was extracted redacts the keys: {shown}");
        assert!(!shown.contains("not-a-key-but-long"), "an unrecognised line is named by number only");
    }

    #[test]
    fn non_ascii_text_around_keys_is_skipped() {
        assert_eq!(keys(&format!("ключ: {OPENAI} — 鍵")), vec![OPENAI], "multi-byte characters around a key");
    }
}
