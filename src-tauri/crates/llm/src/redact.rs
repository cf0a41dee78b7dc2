//! Redaction of upstream text: a provider or a gateway in front of it may repeat a key in an
//! error ("Incorrect API key provided: sk-…"), plainly or in the forms keys travel in. Every text
//! that came from upstream passes through a [`Redactor`] before it goes anywhere (events,
//! results, the database, logs, local API clients).
//!
//! Invariant: after [`Redactor::redact`], no run of [`MIN_RUN`] or more bytes of any of the
//! redactor's secrets is left in the text in any of these forms: as written; percent-encoded
//! (every byte outside letters and digits, or in `encodeURIComponent`'s style, with upper- or
//! lower-case hex); base64 (standard or URL-safe, at any alignment within a longer encoding).
//! Each such run is replaced by its secret's masked preview. A shorter secret is replaced where it
//! appears whole. The masked form a provider prints (`sk-…abcd`) is shorter than a run and stays.
//! [`Redactor::redact_json`] also finds keys written with JSON escapes (`\u0073\u006b…`), which
//! are plain only once decoded.
//!
//! Cost: the secrets' forms are indexed by 8-byte windows taken every 5 bytes (any run of 12
//! bytes holds one), in a sorted table behind a bit filter, so redacting is one filter probe per
//! byte of text (and a binary search on a hit), whatever the number of keys, and the index takes
//! about 16 bytes per 5 bytes of each form.

use std::collections::HashSet;
use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine;
use keypool::Secret;

/// The shortest run of a secret that is treated as the secret.
pub const MIN_RUN: usize = 12;

/// The indexed windows' length, and how far apart they start: a run of [`MIN_RUN`] bytes starting
/// anywhere in a form holds a window starting at a multiple of [`STEP`].
const WINDOW: usize = 8;
const STEP: usize = MIN_RUN - WINDOW + 1;

/// Replaces any run of its secrets in a text with their previews.
pub struct Redactor {
    /// Every form of every secret of at least [`MIN_RUN`] bytes.
    forms: Vec<Form>,
    /// `(window, form, offset)` for each indexed window, sorted by window.
    windows: Vec<(u64, u32, u32)>,
    /// One bit per hash of a window in `windows`: most positions of a text are ruled out here.
    filter: Vec<u64>,
    /// Secrets shorter than a run, matched whole.
    short: Option<(AhoCorasick, Vec<usize>)>,
    previews: Vec<String>,
    /// The secrets' values, for [`Redactor::covers`].
    values: HashSet<String>,
}

struct Form {
    bytes: Vec<u8>,
    owner: usize,
}

impl Redactor {
    /// A redactor for `secrets` (values to send, already resolved from `$NAME`), each replaced
    /// by its own preview.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        Self::with_names(secrets.into_iter().map(|secret| (secret.clone(), secret.preview())))
    }

    /// A redactor for `(value, name)` pairs: each value is replaced by its name (a `$NAME`
    /// reference's value by `$NAME`, never by a preview of what it resolved to). The first pair
    /// of a value wins.
    pub fn with_names(secrets: impl IntoIterator<Item = (Secret, String)>) -> Self {
        let mut forms: Vec<Form> = Vec::new();
        let mut short: Vec<String> = Vec::new();
        let mut short_owners = Vec::new();
        let mut previews: Vec<String> = Vec::new();
        let mut values = HashSet::new();
        for (secret, name) in secrets {
            let value = secret.expose();
            if value.is_empty() || !values.insert(value.to_owned()) {
                continue;
            }
            let owner = previews.len();
            previews.push(name);
            if value.len() < MIN_RUN {
                short.push(value.to_owned());
                short_owners.push(owner);
                continue;
            }
            let mut seen: HashSet<Vec<u8>> = HashSet::new();
            for bytes in forms_of(value.as_bytes()) {
                if bytes.len() >= MIN_RUN && seen.insert(bytes.clone()) {
                    forms.push(Form { bytes, owner });
                }
            }
        }
        let mut windows = Vec::new();
        for (index, form) in forms.iter().enumerate() {
            for offset in (0..=form.bytes.len() - WINDOW).step_by(STEP) {
                windows.push((window_at(&form.bytes, offset), index as u32, offset as u32));
            }
        }
        windows.sort_unstable();
        let bits = (windows.len() * 16).next_power_of_two().max(1024);
        let mut filter = vec![0u64; bits / 64];
        for &(window, _, _) in &windows {
            let bit = filter_bit(window, bits);
            filter[bit / 64] |= 1 << (bit % 64);
        }
        let short = (!short.is_empty()).then(|| {
            let matcher = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&short)
                .expect("literal patterns always build");
            (matcher, short_owners)
        });
        Redactor { forms, windows, filter, short, previews, values }
    }

    /// Whether `secret` is one of the redactor's.
    pub fn covers(&self, secret: &Secret) -> bool {
        self.values.contains(secret.expose())
    }

    /// `text` with every run of a secret replaced by that secret's preview.
    pub fn redact(&self, text: &str) -> String {
        let covered = self.find(text.as_bytes());
        if covered.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, owner) in covered {
            let start = floor_char_boundary(text, range.start.max(at));
            let end = ceil_char_boundary(text, range.end);
            if end <= at {
                continue;
            }
            out.push_str(&text[at..start.max(at)]);
            out.push_str(&self.previews[owner]);
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// [`Redactor::redact`], and for a JSON text also every string in it once decoded: a key
    /// written with escapes (`\u0073k-…`) is caught too. A JSON text that held a key that way is
    /// written again (its spacing may change); any other text comes back as `redact` gives it.
    pub fn redact_json(&self, text: &str) -> String {
        let plain = self.redact(text);
        if !plain.contains('\\') {
            return plain;
        }
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&plain) else { return plain };
        if self.redact_strings(&mut value) {
            value.to_string()
        } else {
            plain
        }
    }

    /// Redacts every string (and member name) of `value` in place; whether any changed.
    fn redact_strings(&self, value: &mut serde_json::Value) -> bool {
        use serde_json::Value;
        match value {
            Value::String(text) => {
                let redacted = self.redact(text);
                let changed = redacted != *text;
                *text = redacted;
                changed
            }
            Value::Array(items) => {
                // Every item, not only up to the first that changed.
                let mut changed = false;
                for item in items {
                    changed |= self.redact_strings(item);
                }
                changed
            }
            Value::Object(members) => {
                let mut changed = false;
                let renamed: serde_json::Map<String, Value> = std::mem::take(members)
                    .into_iter()
                    .map(|(name, mut item)| {
                        changed |= self.redact_strings(&mut item);
                        let redacted = self.redact(&name);
                        changed |= redacted != name;
                        (redacted, item)
                    })
                    .collect();
                *members = renamed;
                changed
            }
            _ => false,
        }
    }

    /// The stretches of `text` that are runs of a secret, in order, each with its secret;
    /// overlapping stretches of one secret are one.
    fn find(&self, text: &[u8]) -> Vec<(Range<usize>, usize)> {
        let mut found: Vec<(Range<usize>, usize)> = Vec::new();
        let bits = self.filter.len() * 64;
        if !self.windows.is_empty() && text.len() >= WINDOW {
            for at in 0..=text.len() - WINDOW {
                let window = window_at(text, at);
                let bit = filter_bit(window, bits);
                if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
                    continue;
                }
                let first = self.windows.partition_point(|&(w, _, _)| w < window);
                for &(_, form, offset) in self.windows[first..].iter().take_while(|&&(w, _, _)| w == window) {
                    let form = &self.forms[form as usize];
                    let offset = offset as usize;
                    let before = (1..=at.min(offset)).take_while(|&k| text[at - k] == form.bytes[offset - k]).count();
                    let after = (0..(text.len() - at - WINDOW).min(form.bytes.len() - offset - WINDOW))
                        .take_while(|&k| text[at + WINDOW + k] == form.bytes[offset + WINDOW + k])
                        .count();
                    if before + WINDOW + after >= MIN_RUN {
                        found.push((at - before..at + WINDOW + after, form.owner));
                    }
                }
            }
        }
        if let Some((matcher, owners)) = &self.short {
            found.extend(matcher.find_iter(text).map(|m| (m.range(), owners[m.pattern().as_usize()])));
        }
        found.sort_by_key(|(range, _)| (range.start, std::cmp::Reverse(range.end)));
        let mut merged: Vec<(Range<usize>, usize)> = Vec::with_capacity(found.len());
        for (range, owner) in found {
            match merged.last_mut() {
                Some((last, last_owner))
                    if range.start <= last.end && (*last_owner == owner || range.end <= last.end) =>
                {
                    last.end = last.end.max(range.end);
                }
                _ => merged.push((range, owner)),
            }
        }
        merged
    }
}

/// The forms a secret travels in: as written, percent-encoded (every byte outside letters and
/// digits, or `encodeURIComponent`'s set; hex in upper or lower case), and base64 (standard and
/// URL-safe) as it appears inside a longer encoding at each of the three alignments.
fn forms_of(value: &[u8]) -> Vec<Vec<u8>> {
    let mut forms = vec![value.to_vec()];
    for set in [percent_encoding::NON_ALPHANUMERIC, COMPONENT] {
        let upper = percent_encoding::percent_encode(value, set).to_string();
        forms.push(lower_hex(&upper).into_bytes());
        forms.push(upper.into_bytes());
    }
    for engine in [&base64::engine::general_purpose::STANDARD_NO_PAD, &base64::engine::general_purpose::URL_SAFE_NO_PAD]
    {
        for shift in 0..3 {
            // `shift` bytes of something else before the secret: the characters that encode only
            // the secret's bytes are the ones after the first ⌈4·shift/3⌉ and before the last,
            // which may mix in what follows it.
            let mut shifted = vec![0u8; shift];
            shifted.extend_from_slice(value);
            let encoded = engine.encode(&shifted);
            let start = (4 * shift).div_ceil(3);
            let end = encoded.len() - usize::from((shifted.len() % 3) != 0);
            if start < end {
                forms.push(encoded.as_bytes()[start..end].to_vec());
            }
        }
    }
    forms
}

/// What `encodeURIComponent` leaves as it is: letters, digits and `-_.!~*'()`.
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// `%2D` written `%2d`: the hex digits of every escape in lower case.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = &rest[at..(at + 3).min(rest.len())];
        out.push_str(&escape.to_ascii_lowercase());
        rest = &rest[at + escape.len()..];
    }
    out.push_str(rest);
    out
}

fn window_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + WINDOW].try_into().expect("a window is 8 bytes"))
}

fn filter_bit(window: u64, bits: usize) -> usize {
    (window.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (bits - 1)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at.min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234";

    fn redact(secrets: &[&str], text: &str) -> String {
        let secrets: Vec<Secret> = secrets.iter().map(|s| Secret::from(*s)).collect();
        Redactor::new(&secrets).redact(text)
    }

    #[test]
    fn a_repeated_key_becomes_its_preview() {
        let out = redact(&[KEY], &format!("Incorrect API key provided: {KEY}. You can find your key at …"));
        assert_eq!(out, "Incorrect API key provided: sk-proj-…1234. You can find your key at …", "the key is masked");
    }

    #[test]
    fn any_run_of_twelve_characters_is_masked() {
        let part = &KEY[5..30];
        let out = redact(&[KEY], &format!("key ending {part} is wrong"));
        assert!(!out.contains(&KEY[10..22]), "no 12-character run is left: {out}");
        assert!(out.contains("sk-proj-…1234"), "the run is replaced by the preview: {out}");
        let short = &KEY[20..31];
        assert_eq!(redact(&[KEY], short), short, "an 11-character piece is not the key");
        for start in 0..KEY.len() - MIN_RUN {
            let run = &KEY[start..start + MIN_RUN];
            let out = redact(&[KEY], &format!("<{run}>"));
            assert!(!out.contains(run), "the run at {start} is masked: {out}");
        }
    }

    #[test]
    fn percent_encoded_keys_are_masked_too() {
        let key = "abc+def/ghi=jkl+mno/pqr=stu";
        let encoded = percent_encoding::utf8_percent_encode(key, percent_encoding::NON_ALPHANUMERIC).to_string();
        let out = redact(&[key], &format!("GET /v1/models?key={encoded} failed"));
        assert!(!out.contains("ghi%3Djkl%2Bmno"), "the encoded form is masked: {out}");
        let lower = lower_hex(&encoded);
        assert!(!redact(&[key], &lower).contains("ghi%3djkl%2bmno"), "in lower-case hex too");
        let component = percent_encoding::utf8_percent_encode(KEY, COMPONENT).to_string();
        assert_eq!(redact(&[KEY], &format!("q={component}")), "q=sk-proj-…1234", "encodeURIComponent's style");
        let dashed = percent_encoding::utf8_percent_encode(KEY, percent_encoding::NON_ALPHANUMERIC).to_string();
        assert!(dashed.contains("%2D"), "every dash escaped: {dashed}");
        assert_eq!(redact(&[KEY], &lower_hex(&dashed)), "sk-proj-…1234", "and every byte escaped, lower case");
    }

    #[test]
    fn base64_forms_are_masked_at_any_alignment() {
        for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE_NO_PAD] {
            for prefix in ["", "u", "us", "user:"] {
                let encoded = engine.encode(format!("{prefix}{KEY}"));
                let out = redact(&[KEY], &format!("Authorization: Basic {encoded}"));
                let middle = &encoded[encoded.len() / 2 - 6..encoded.len() / 2 + 6];
                assert!(!out.contains(middle), "prefix {prefix:?}: the encoding is masked: {out}");
            }
        }
    }

    #[test]
    fn json_escaped_keys_are_masked_once_decoded() {
        let escaped: String = KEY.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        let body = format!(r#"{{"error":{{"message":"bad key {escaped}","type":"invalid"}}}}"#);
        let secrets = [Secret::from(KEY)];
        let redactor = Redactor::new(&secrets);
        assert_eq!(redactor.redact(&body), body, "as written the escapes hide it from plain matching");
        let out = redactor.redact_json(&body);
        let decoded: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        assert_eq!(decoded["error"]["message"], "bad key sk-proj-…1234", "decoded, it is masked");
        assert_eq!(
            redactor.redact_json(r#"{"a":"\u00e9t\u00e9"}"#),
            r#"{"a":"\u00e9t\u00e9"}"#,
            "nothing to mask: as written"
        );
    }

    #[test]
    fn the_providers_masked_form_stays() {
        let text = "Incorrect API key provided: sk-proj-********************1234";
        assert_eq!(redact(&[KEY], text), text, "a masked key is not a secret");
    }

    #[test]
    fn every_secret_of_the_pool_is_masked() {
        let other = "sk-ant-api03-OTHEROTHEROTHEROTHER-9876";
        let out = redact(&[KEY, other], &format!("{other} and {KEY}"));
        assert_eq!(out, "sk-ant-…9876 and sk-proj-…1234", "each secret by its own preview");
    }

    #[test]
    fn short_secrets_are_masked_where_they_appear_whole() {
        let preview = Secret::from("abc123").preview();
        assert_eq!(redact(&["abc123"], "the key abc123 failed"), format!("the key {preview} failed"), "masked whole");
        assert_eq!(redact(&["abc123"], "abc12"), "abc12", "not a piece of it");
    }

    #[test]
    fn text_around_non_ascii_stays_valid() {
        let out = redact(&[KEY], &format!("é{KEY}ü"));
        assert_eq!(out, "ésk-proj-…1234ü", "the characters around the key are kept whole");
    }

    #[test]
    fn nothing_to_redact_is_the_text_itself() {
        assert_eq!(redact(&[], "plain"), "plain", "no secrets, no change");
        assert_eq!(redact(&[KEY], "rate limited"), "rate limited", "no key in the text");
    }

    proptest::proptest! {
        /// Whatever text surrounds it, a key of the pool in any of its forms never survives.
        #[test]
        fn no_form_of_a_key_survives(
            before in "[ -~]{0,40}", after in "[ -~]{0,40}", key in "[A-Za-z0-9_\\-+/=]{12,60}", form in 0usize..12
        ) {
            let forms = forms_of(key.as_bytes());
            let form = String::from_utf8(forms[form % forms.len()].clone()).unwrap();
            proptest::prop_assume!(form.len() >= MIN_RUN);
            let out = redact(&[&key], &format!("{before}{form}{after}"));
            let middle = &form[form.len() / 2 - MIN_RUN / 2..form.len() / 2 + MIN_RUN / 2];
            proptest::prop_assert!(!out.contains(middle), "{out}");
        }
    }
}
