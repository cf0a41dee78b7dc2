//! Redaction of upstream text: a provider or a gateway in front of it may repeat a key in an
//! error ("Incorrect API key provided: sk-…"). Every text that came from upstream passes through
//! a [`Redactor`] before it goes anywhere (events, results, the database, logs).
//!
//! Invariant: after [`Redactor::redact`], no run of [`MIN_RUN`] or more characters of any of the
//! redactor's secrets is left in the text, whether written plainly or percent-encoded; each such
//! run is replaced by its secret's masked preview. A shorter secret is replaced where it appears
//! whole. The masked form a provider prints (`sk-…abcd`) is shorter than a run and stays.

use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};
use keypool::Secret;

/// The shortest run of a secret that is treated as the secret.
pub const MIN_RUN: usize = 12;

/// Replaces any run of its secrets in a text with their previews.
pub struct Redactor {
    matcher: Option<AhoCorasick>,
    /// For each pattern, the secret it belongs to.
    owners: Vec<usize>,
    previews: Vec<String>,
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
        let mut patterns: Vec<String> = Vec::new();
        let mut owners = Vec::new();
        let mut previews: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (secret, name) in secrets {
            let value = secret.expose().to_owned();
            if value.is_empty() || !seen.insert(value.clone()) {
                continue;
            }
            let owner = previews.len();
            previews.push(name);
            for forms in [percent_encoded(&value), value] {
                for pattern in runs(&forms) {
                    patterns.push(pattern);
                    owners.push(owner);
                }
            }
        }
        let matcher = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .expect("literal patterns always build")
        });
        Redactor { matcher, owners, previews }
    }

    /// `text` with every run of a secret replaced by that secret's preview.
    pub fn redact(&self, text: &str) -> String {
        let Some(matcher) = &self.matcher else { return text.to_owned() };
        // Overlapping matches of the runs of one secret cover the whole stretch of it in the text.
        let mut covered: Vec<(Range<usize>, usize)> = Vec::new();
        for found in matcher.find_overlapping_iter(text) {
            let owner = self.owners[found.pattern().as_usize()];
            match covered.last_mut() {
                Some((range, last)) if *last == owner && found.start() <= range.end => {
                    range.end = range.end.max(found.end());
                }
                _ => covered.push((found.range(), owner)),
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, owner) in covered {
            if range.start < at {
                // Two secrets overlap in the text: the earlier replacement already covers this start.
                if range.end <= at {
                    continue;
                }
                out.push_str(&self.previews[owner]);
                at = range.end;
                continue;
            }
            out.push_str(&text[at..range.start]);
            out.push_str(&self.previews[owner]);
            at = range.end;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// Every run of [`MIN_RUN`] characters of `value`, or `value` itself when it is shorter.
fn runs(value: &str) -> Vec<String> {
    let chars: Vec<(usize, char)> = value.char_indices().collect();
    if chars.len() <= MIN_RUN {
        return vec![value.to_owned()];
    }
    (0..=chars.len() - MIN_RUN)
        .map(|i| {
            let start = chars[i].0;
            let end = chars.get(i + MIN_RUN).map_or(value.len(), |&(at, _)| at);
            value[start..end].to_owned()
        })
        .collect()
}

/// `value` as it would appear in a URL or a form: every byte outside the unreserved set escaped.
fn percent_encoded(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
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
    }

    #[test]
    fn percent_encoded_keys_are_masked_too() {
        let key = "abc+def/ghi=jkl+mno/pqr=stu";
        let encoded = percent_encoded(key);
        let out = redact(&[key], &format!("GET /v1/models?key={encoded} failed"));
        assert!(!out.contains("ghi%3Djkl%2Bmno"), "the encoded form is masked: {out}");
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
    fn nothing_to_redact_is_the_text_itself() {
        assert_eq!(redact(&[], "plain"), "plain", "no secrets, no change");
        assert_eq!(redact(&[KEY], "rate limited"), "rate limited", "no key in the text");
    }
}
