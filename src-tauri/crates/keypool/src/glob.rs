//! The one glob over model names that routes and member rules share: `*` matches any run of
//! characters (none included), `?` exactly one character, anything else itself.
//!
//! Invariant: a match costs at most O(|pattern| · |text|), never more, whatever either holds.
//! The pattern is cut at its stars into literal pieces; the first must start the text, the last
//! must end it, and each piece between is taken where it first fits, left to right. Taking the
//! leftmost place is never wrong (it leaves the most text to the pieces after it), so nothing
//! is ever tried twice: no backtracking, no recursion. A backtracking matcher takes exponential
//! time on patterns such as thirty `*a` against a long run of `a`s that ends in `b`.

/// Whether `text` matches `pattern` (see the module's doc).
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let text = text.as_bytes();
    let Some((head, tail)) = pattern.split_once('*') else {
        return prefix(pattern.as_bytes(), text) == Some(text.len());
    };
    let Some(mut at) = prefix(head.as_bytes(), text) else { return false };
    let (middle, last) = tail.rsplit_once('*').unwrap_or(("", tail));
    let Some(last_starts) = suffix(last.as_bytes(), text, at) else { return false };
    let between = &text[..last_starts];
    for piece in middle.split('*').filter(|piece| !piece.is_empty()) {
        match leftmost(piece.as_bytes(), between, at) {
            Some(end) => at = end,
            None => return false,
        }
    }
    true
}

/// A UTF-8 continuation byte: inside a character, never at its start.
fn continues(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Where `piece` (no stars) ends when it starts `text`; `None` when it does not.
fn prefix(piece: &[u8], text: &[u8]) -> Option<usize> {
    let mut at = 0;
    for &wanted in piece {
        let &byte = text.get(at)?;
        if wanted == b'?' {
            at += 1;
            while text.get(at).copied().is_some_and(continues) {
                at += 1;
            }
        } else if byte == wanted {
            at += 1;
        } else {
            return None;
        }
    }
    Some(at)
}

/// Where `piece` (no stars) starts when it ends `text`, not before `floor`; `None` when it does
/// not end it there.
fn suffix(piece: &[u8], text: &[u8], floor: usize) -> Option<usize> {
    let mut at = text.len();
    for &wanted in piece.iter().rev() {
        if at == floor {
            return None;
        }
        at -= 1;
        if wanted == b'?' {
            while at > floor && continues(text[at]) {
                at -= 1;
            }
            if continues(text[at]) {
                return None;
            }
        } else if text[at] != wanted {
            return None;
        }
    }
    Some(at)
}

/// Where `piece` (no stars) ends at its leftmost place in `text` from `from` on.
fn leftmost(piece: &[u8], text: &[u8], from: usize) -> Option<usize> {
    (from..text.len())
        .filter(|&start| !continues(text[start]))
        .find_map(|start| prefix(piece, &text[start..]).map(|length| start + length))
}

#[cfg(test)]
mod tests {
    use super::glob_matches as m;

    /// The matcher the routes had: recursive, exponential on hostile input, right on small ones.
    fn reference(pattern: &[char], text: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('*', rest)) => (0..=text.len()).any(|skip| reference(rest, &text[skip..])),
            Some(('?', rest)) => !text.is_empty() && reference(rest, &text[1..]),
            Some((c, rest)) => text.first() == Some(c) && reference(rest, &text[1..]),
        }
    }

    #[test]
    fn globs_match_the_names_they_say() {
        assert!(m("claude-*", "claude-sonnet-4-5") && !m("claude-*", "gpt-5"), "a prefix");
        assert!(m("*-mini", "gpt-5-mini") && !m("*-mini", "gpt-5-mini-2"), "a suffix");
        assert!(m("gpt-?", "gpt-5") && !m("gpt-?", "gpt-55") && !m("gpt-?", "gpt-"), "one character");
        assert!(m("exact", "exact") && !m("exact", "exactly") && !m("exact", "exac"), "no star: the whole name");
        assert!(m("*", "") && m("*", "anything") && m("", "") && !m("", "x"), "the empty cases");
        assert!(m("a*b*c", "aXbYc") && m("a*b*c", "abc") && !m("a*b*c", "acb"), "pieces in order");
        assert!(m("a*a", "aa") && !m("a*a", "a"), "the first and the last piece never share a character");
        assert!(m("*o*o*", "foo") && !m("*o*o*", "fo"), "a piece is taken once");
        assert!(m("gpt-?", "gpt-é") && m("?", "日") && !m("??", "日"), "`?` is a character, not a byte");
        assert!(m("*é", "café") && m("caf?", "café") && !m("caf??", "café"), "from the end too");
    }

    #[test]
    fn a_hostile_pattern_is_answered_in_linear_time() {
        // Thirty `*a` against ten thousand `a`s and a `b`: a backtracking matcher tries
        // C(10 000, 30) ways before it gives up; this one looks at each piece's places once.
        let pattern = "*a".repeat(30);
        let text = format!("{}b", "a".repeat(10_000));
        assert!(!m(&pattern, &text), "the text ends in b, the pattern in a");
        let text = "a".repeat(10_000);
        assert!(m(&pattern, &text), "and without the b it matches");
        let pattern = format!("{}b", "*a".repeat(30));
        assert!(m(&pattern, &format!("{}b", "a".repeat(10_000))), "a last piece of its own");
        assert!(!m(&format!("{pattern}*c"), &format!("{}b", "a".repeat(10_000))), "and one that is not there");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(4000))]

        /// Whatever the pattern and the text, the matcher agrees with the recursive one.
        #[test]
        fn agrees_with_the_recursive_matcher(pattern in "[ab*?é]{0,8}", text in "[abé]{0,10}") {
            let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
            proptest::prop_assert_eq!(m(&pattern, &text), reference(&p, &t), "{:?} against {:?}", pattern, text);
        }
    }
}
