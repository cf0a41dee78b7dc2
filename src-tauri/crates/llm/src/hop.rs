//! Loops: a provider or route that sends a request back to the Keypool it came from (a custom
//! base URL pointing at the local API, two servers pointing at each other).
//!
//! Every request a Keypool endpoint (the local API, `keypool-server`) relays upstream carries a
//! mark in [`HOP_HEADER`], after the marks of the Keypools it passed already. The endpoint knows
//! its own marks and refuses a request that carries one. (The app's own chats carry none: a chat
//! may well go through the local API once.) A mark is a random-looking number and a keyed hash of it, both new for every request: a
//! provider sees no identifier that ties the pool's keys (or accounts) together.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header that carries the marks of the Keypools a request passed, oldest first, separated
/// by commas.
pub const HOP_HEADER: &str = "x-keypool-hop";

/// The most Keypools a request may pass: beyond, it is refused as a loop whosever the marks are.
pub const MAX_HOPS: usize = 8;

/// One process's marks: two keys drawn once (for the number and its hash), and a count.
#[derive(Debug)]
pub struct HopMarks {
    numbers: RandomState,
    hashes: RandomState,
    count: AtomicU64,
}

impl Default for HopMarks {
    fn default() -> Self {
        HopMarks { numbers: RandomState::new(), hashes: RandomState::new(), count: AtomicU64::new(0) }
    }
}

impl HopMarks {
    /// A new mark: 32 hexadecimal digits.
    pub fn next(&self) -> String {
        String::from_utf8_lossy(&self.next_mark()).into_owned()
    }

    /// [`HopMarks::next`], its digits in place (no allocation for the request's hot path).
    fn next_mark(&self) -> [u8; 32] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let number = self.numbers.hash_one(self.count.fetch_add(1, Ordering::Relaxed));
        let hash = self.hashes.hash_one(number);
        let mut mark = [0u8; 32];
        for (at, digit) in mark.iter_mut().enumerate() {
            let (half, shift) = if at < 16 { (number, 60 - 4 * at) } else { (hash, 60 - 4 * (at - 16)) };
            *digit = DIGITS[((half >> shift) & 0xf) as usize];
        }
        mark
    }

    /// Whether `mark` is one of this process's.
    pub fn is_own(&self, mark: &str) -> bool {
        let mark = mark.trim();
        if mark.len() != 32 || !mark.bytes().all(|b| b.is_ascii_hexdigit()) {
            return false;
        }
        match (u64::from_str_radix(&mark[..16], 16), u64::from_str_radix(&mark[16..], 16)) {
            (Ok(number), Ok(hash)) => self.hashes.hash_one(number) == hash,
            _ => false,
        }
    }

    /// What the marks a request came with (`came`: its [`HOP_HEADER`]) say: it came back, it
    /// passed too many Keypools, or it may go on, carrying this header value.
    pub fn pass(&self, came: Option<&str>) -> Hop {
        let marks: Vec<&str> =
            came.into_iter().flat_map(|v| v.split(',')).map(str::trim).filter(|m| !m.is_empty()).collect();
        if marks.iter().any(|mark| self.is_own(mark)) {
            return Hop::Returned;
        }
        if marks.len() >= MAX_HOPS {
            return Hop::TooMany(marks.len());
        }
        let mine = self.next_mark();
        Hop::Onward(match came {
            Some(came) if !marks.is_empty() => {
                HopHeader::After(format!("{}, {}", came.trim(), String::from_utf8_lossy(&mine)))
            }
            _ => HopHeader::First(mine),
        })
    }
}

/// The [`HOP_HEADER`] a request goes on with: this Keypool's mark alone, or after the marks it
/// came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HopHeader {
    First([u8; 32]),
    After(String),
}

impl HopHeader {
    pub fn as_str(&self) -> &str {
        match self {
            // Hexadecimal digits: always text.
            HopHeader::First(mark) => std::str::from_utf8(mark).unwrap_or_default(),
            HopHeader::After(marks) => marks,
        }
    }
}

/// What a request's marks say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// It carries a mark of this Keypool: it came back.
    Returned,
    /// It passed this many Keypools already.
    TooMany(usize),
    /// It goes on with this [`HOP_HEADER`].
    Onward(HopHeader),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keypool_knows_its_own_marks_and_no_one_elses() {
        let (mine, theirs) = (HopMarks::default(), HopMarks::default());
        let marks: Vec<String> = (0..1000).map(|_| mine.next()).collect();
        assert!(marks.iter().all(|m| m.len() == 32 && mine.is_own(m)));
        assert!(marks.iter().all(|m| !theirs.is_own(m)), "another process's are not");
        let distinct: std::collections::HashSet<_> = marks.iter().collect();
        assert_eq!(distinct.len(), marks.len(), "a new mark for every request");
        // No two marks share their halves: nothing a provider could tie requests together by.
        let halves: std::collections::HashSet<_> = marks.iter().map(|m| &m[..16]).collect();
        assert_eq!(halves.len(), marks.len());
        let changed = format!("{}{}", &marks[0][..31], if marks[0].ends_with('0') { '1' } else { '0' });
        for forged in ["", "zz", &marks[0][..31], &changed, "+000000000000000000000000000000f"] {
            assert!(!mine.is_own(forged), "{forged:?}");
        }
    }

    #[test]
    fn a_request_goes_on_with_its_marks_and_one_more_until_it_comes_back() {
        let (desktop, server) = (HopMarks::default(), HopMarks::default());
        let Hop::Onward(first) = desktop.pass(None) else { panic!("a first hop goes on") };
        let first = first.as_str().to_owned();
        assert!(desktop.is_own(&first), "{first}");
        let Hop::Onward(second) = server.pass(Some(&first)) else { panic!("through another Keypool") };
        let second = second.as_str().to_owned();
        assert!(second.starts_with(&first) && second.split(',').count() == 2, "{second}");
        assert_eq!(desktop.pass(Some(&second)), Hop::Returned, "back at the desktop");
        assert_eq!(server.pass(Some(&second)), Hop::Returned);
        let long = (0..MAX_HOPS).map(|_| HopMarks::default().next()).collect::<Vec<_>>().join(", ");
        assert_eq!(desktop.pass(Some(&long)), Hop::TooMany(MAX_HOPS));
        assert!(matches!(desktop.pass(Some(" , ")), Hop::Onward(HopHeader::First(_))), "an empty list is none");
    }
}
