//! What callers ask of the pool and what it answers: selection requests with what they need of a
//! key's budgets, and failure reports with the outcome the caller acts on (persists, emits,
//! retries). The selection handed out holds a lease on the pool's state, so it is the pool's.

use std::fmt;
use std::time::Duration;

use crate::announced::Announced;
use crate::ids::{KeyId, ProviderId, SessionId};
use crate::time::Timestamp;

/// What to select a key for.
#[derive(Clone, Copy, Debug)]
pub struct SelectionRequest<'a> {
    /// The provider the request goes to.
    pub provider: &'a ProviderId,
    /// The chat session, for affinity; `None` for a one-off request.
    pub session: Option<&'a SessionId>,
    /// Keys this request already tried (each key is tried at most once per request).
    pub exclude: &'a [KeyId],
    /// What the request needs from a key's budgets (its model's windows, its tokens).
    pub demand: Demand<'a>,
    /// The key the session had before (a chat remembers it across restarts): used when the
    /// session has no live binding and the key can serve.
    pub preferred: Option<&'a KeyId>,
}

impl<'a> SelectionRequest<'a> {
    /// A request for `provider` with no session, nothing excluded and no budget to check.
    pub fn new(provider: &'a ProviderId) -> Self {
        SelectionRequest { provider, session: None, exclude: &[], demand: Demand::default(), preferred: None }
    }

    /// The same request, going back to `key` if the session has no live binding.
    pub fn preferring(self, key: Option<&'a KeyId>) -> Self {
        SelectionRequest { preferred: key, ..self }
    }

    /// The same request, needing `demand` from a key's budgets.
    pub fn needing(self, demand: Demand<'a>) -> Self {
        SelectionRequest { demand, ..self }
    }

    /// The same request on behalf of `session`.
    pub fn for_session(self, session: &'a SessionId) -> Self {
        SelectionRequest { session: Some(session), ..self }
    }

    /// The same request, skipping `keys`.
    pub fn excluding(self, keys: &'a [KeyId]) -> Self {
        SelectionRequest { exclude: keys, ..self }
    }
}

/// What a request needs from a key's budgets.
#[derive(Clone, Copy, Debug, Default)]
pub struct Demand<'a> {
    /// The rate-limit scope: the model (OpenAI limits each model separately) or the model class
    /// (Anthropic's Opus, Sonnet, Haiku). `None`: the request touches no announced budget.
    pub scope: Option<&'a str>,
    /// Its estimated input tokens.
    pub tokens: u32,
}

/// A refused request, as reported by the layer that sent it.
#[derive(Clone, Copy, Debug)]
pub struct Failure<'a> {
    /// The provider the request went to.
    pub provider: &'a ProviderId,
    /// The key it used.
    pub key: &'a KeyId,
    /// The HTTP status the provider answered (or the status an error inside a stream stands for).
    pub status: u16,
    /// What the refusal means to the pool.
    pub kind: FailureKind,
    /// The request's rate-limit scope (its model or model class), when it had one.
    pub scope: Option<&'a str>,
    /// When the refused request was sent, if known. A refusal of a request that was already in
    /// flight when the key's current rest began belongs to the burst that rest answers: it does
    /// not climb the backoff ladder (`None`: counted as a new refusal, as after a rest).
    pub sent_at: Option<Timestamp>,
}

/// A quota of the request's scope that a refusal names as the one it hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quota {
    /// A per-minute quota (Gemini's `...PerMinute...` quota ids): the scope rests for the
    /// announced wait, or up its own backoff ladder.
    PerMinute,
    /// A per-day quota (Gemini's `...PerDay...`): the scope is used up until the quota's day ends
    /// (midnight Pacific time, see [`crate::pacific_day_end`]), whatever wait was announced, and
    /// comes back by itself then.
    PerDay,
    /// A plan's window (a coding plan's 5-hour or weekly window) is used up until `until`, for
    /// the whole key, whatever the scope: the key's group rests until then, past the cooldown
    /// cap (at most [`crate::MAX_PLAN_WINDOW`] ahead), and comes back by itself on time.
    PlanWindow {
        /// When the window is whole again.
        until: Timestamp,
    },
}

/// The refusals the pool acts on. Every other answer is the request's business, not the key's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// Too many requests (429) or the provider is overloaded (529): rest the key's quota group,
    /// or only the request's scope when the refusal says which of its limits was hit (`quota`,
    /// or `announced` windows showing that budget spent).
    RateLimited {
        /// The wait the provider announced (`Retry-After`, Gemini's `RetryInfo`), if any.
        retry_after: Option<Duration>,
        /// The windows the refusal announced, if any.
        announced: Announced,
        /// Which of the scope's quotas the refusal names (Gemini's `QuotaFailure`), if it does.
        quota: Option<Quota>,
    },
    /// The key is revoked, wrong or not allowed (401, 403): refuse it for good.
    AuthRejected,
    /// The key's account is out of credit (OpenAI `insufficient_quota`, HTTP 402, Anthropic's
    /// "credit balance is too low"): out of rotation until a background probe succeeds.
    QuotaExhausted,
}

impl FailureKind {
    /// The product's rule for a bare HTTP status: 429 and 529 are rate limits, 401 and 403 auth
    /// rejections, 402 out of credit; `None` for everything else.
    pub fn of_status(status: u16, retry_after: Option<Duration>) -> Option<FailureKind> {
        match status {
            429 | 529 => Some(FailureKind::RateLimited { retry_after, announced: Announced::default(), quota: None }),
            401 | 403 => Some(FailureKind::AuthRejected),
            402 => Some(FailureKind::QuotaExhausted),
            _ => None,
        }
    }
}

/// What a failure report did to the key. The pool has already acted in memory; the caller
/// persists what must outlive the process and tells the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a disable must be persisted by the caller"]
pub enum FailureOutcome {
    /// The key's quota group rests until `until` (the backoff, or the announced wait bounded by
    /// the cap): no key of the group serves until then.
    Cooled {
        /// When the key is available again.
        until: Timestamp,
    },
    /// Only the key's budget for the request's scope is spent, until `until`; other models
    /// still use the key.
    Spent {
        /// When the scope's windows refill.
        until: Timestamp,
    },
    /// Only the request's scope rests (its per-minute quota was hit), until `until`, on every
    /// key of the group; other models still use them.
    ScopeCooled {
        /// When the scope is available again.
        until: Timestamp,
    },
    /// The request's scope has used up its quota for the day on every key of the group, until
    /// the quota's day ends; other models still use the keys.
    UsedUpForTheDay {
        /// When the day's quota is whole again.
        until: Timestamp,
    },
    /// The key is out of credit: out of rotation, probed again in the background at `probe_at`.
    Exhausted {
        /// When the first probe runs.
        probe_at: Timestamp,
    },
    /// The key is refused from now on and must be disabled in the store, with `reason`. Returned
    /// once per rejection: concurrent reports of the same key get [`FailureOutcome::Unchanged`].
    Disabled {
        /// Why, for the store and the UI.
        reason: DisableReason,
    },
    /// Nothing changed: the key was already refused, or is no longer in the pool.
    Unchanged,
}

/// Why the pool refused a key for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisableReason {
    /// The provider answered 401 or 403: the key is revoked, wrong, or lacks permission.
    AuthRejected {
        /// The HTTP status (401 or 403).
        status: u16,
    },
}

impl DisableReason {
    /// The HTTP status behind the decision.
    pub fn status(self) -> u16 {
        match self {
            DisableReason::AuthRejected { status } => status,
        }
    }
}

impl fmt::Display for DisableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisableReason::AuthRejected { status } => write!(f, "the provider rejected the key (HTTP {status})"),
        }
    }
}
