//! What a provider announces on an answer about the limits of the key that served it: its
//! windows of requests and tokens, each with what is left and when it refills. Reports carry
//! them in, teams share them, the status view shows them; the budgets count against them.

use std::time::Duration;

use crate::time::Timestamp;

/// One window a provider announced: how much of a unit (requests or tokens) is left, of how
/// much, and when it refills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The window's size, when announced.
    pub limit: Option<u64>,
    /// What is left of it, as of the answer that announced it.
    pub remaining: u64,
    /// When it is full again.
    pub reset_at: Timestamp,
}

/// How far apart two announcements of one window's reset may be: a reset given as a duration
/// ("in 1.2 s") lands a little later with each answer's network delay.
const SAME_RESET: Duration = Duration::from_millis(250);

impl Window {
    /// The window to keep when `announced` arrives while `known` is kept. Answers to concurrent
    /// requests arrive in any order: within one window what is left only shrinks, so a larger
    /// remainder for the same reset is an older answer arriving late, and is not believed; nor is
    /// an earlier reset, an answer of the window before arriving after the new one's (believing it
    /// would count the new window as full). A later reset is a new window.
    pub fn newest(known: Option<Window>, announced: Option<Window>) -> Option<Window> {
        match (known, announced) {
            (Some(known), Some(announced))
                if announced.reset_at + SAME_RESET < known.reset_at
                    || (announced.remaining > known.remaining && announced.reset_at <= known.reset_at + SAME_RESET) =>
            {
                Some(known)
            }
            (known, announced) => announced.or(known),
        }
    }

    /// What is left at `now`: the announced remainder until the reset, the whole window after it
    /// (as much as is known of it).
    pub(crate) fn left(&self, now: Timestamp) -> u64 {
        if self.reset_at > now {
            self.remaining
        } else {
            self.limit.unwrap_or(u64::MAX)
        }
    }
}

/// What an answer announced about the limits of the key that served it, for the request's scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Announced {
    /// The requests window.
    pub requests: Option<Window>,
    /// The (input) tokens window: the most restrictive one the provider announced.
    pub tokens: Option<Window>,
}

impl Announced {
    /// True when nothing was announced (no headers, or only "unknown" values).
    pub fn is_empty(&self) -> bool {
        self.requests.is_none() && self.tokens.is_none()
    }

    /// When a window the announcement shows spent (nothing left for `tokens` more) refills: the
    /// latest such reset, since every spent window must refill before the key can serve.
    pub fn spent_until(&self, tokens: u64) -> Option<Timestamp> {
        let requests = self.requests.filter(|w| w.remaining == 0).map(|w| w.reset_at);
        let tokens = self
            .tokens
            .filter(|w| w.remaining == 0 || w.remaining < tokens.min(w.limit.unwrap_or(u64::MAX)))
            .map(|w| w.reset_at);
        requests.max(tokens)
    }
}
