//! What pools of one team share: the facts a pool reads out about a key to tell the others
//! ([`KeyFacts`]), and the facts another member learned that a pool merges in ([`RemoteFact`]).
//!
//! The pool does no I/O for a team either: the layer that talks to the other members (the
//! `keypool-team` crate, over Redis) reads facts out after a lesson and merges what arrives.
//! Merging is where a remote member is believed only as far as this pool's own rules go:
//!
//! * a later deadline wins, an earlier one changes nothing, and none lasts longer than this pool
//!   would rest on its own: a rest or a spent window at most [`crate::PoolConfig::cooldown_cap`]
//!   from `now`, an out-of-credit key's next probe at most [`crate::PoolConfig::probe_cap`], a
//!   model's daily quota at most until the quota's day ends ([`crate::pacific_day_end`]);
//! * a deadline already past, a window already refilled, a disable for a status that is not 401
//!   or 403, is nothing; counts are bounded ([`MAX_REMOTE_STREAK`], [`MAX_REMOTE_RESERVED`]);
//! * other members' reservations are held for [`REMOTE_HOLD`] unless told again, so a member that
//!   vanished does not hold a window's room for longer.

use std::sync::Arc;
use std::time::Duration;

use crate::announced::{Announced, Window};
use crate::ids::{KeyId, ProviderId};
use crate::request::DisableReason;
use crate::secret::Secret;
use crate::time::Timestamp;

/// The most refusals in a row a remote rest is believed to count: past the fifth the ladder is at
/// its cap anyway.
pub const MAX_REMOTE_STREAK: u32 = 32;

/// The most requests (and, times [`MAX_TOKENS_PER_REQUEST`], tokens) other members are believed
/// to hold reserved on one scope of one group.
pub const MAX_REMOTE_RESERVED: u32 = 100_000;

/// The most tokens one reserved request is believed to hold, for bounding a remote token count.
pub const MAX_TOKENS_PER_REQUEST: u64 = 10_000_000;

/// How long other members' reservations count unless they are told again.
pub const REMOTE_HOLD: Duration = Duration::from_secs(60);

/// A rest after refusals as members share it: until when, after how many refusals in a row, and
/// when its step of the backoff began (requests sent before then belong to the refused burst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resting {
    /// When it ends.
    pub until: Timestamp,
    /// Refusals in a row that led to it.
    pub streak: u32,
    /// When its step of the ladder began.
    pub began_at: Option<Timestamp>,
}

/// What the pool knows about a key and one scope (model) of its quota group at a given `now`:
/// what a member tells the others after a lesson. Deadlines are said only while they are ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyFacts {
    /// The provider the key belongs to.
    pub provider: ProviderId,
    /// The key's quota group, as the user named it (`None`: its own).
    pub quota_group: Option<Arc<str>>,
    /// The group rests (all models).
    pub resting: Option<Resting>,
    /// The scope asked about, when the group keeps anything for it.
    pub scope: Option<ScopeFacts>,
    /// Out of credit, probed again at `.0` after `.1` failed probes.
    pub out_of_credit: Option<(Timestamp, u32)>,
    /// The provider rejected the key.
    pub refused: Option<DisableReason>,
}

/// One scope of a quota group, as [`KeyFacts`] tell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeFacts {
    /// The model or model class.
    pub scope: Arc<str>,
    /// The requests window last announced. Once its reset has passed it still says the
    /// window's size, which admission goes by until the next announcement.
    pub requests: Option<Window>,
    /// The tokens window, likewise.
    pub tokens: Option<Window>,
    /// A refusal said the scope is spent until then.
    pub spent_until: Option<Timestamp>,
    /// The scope rests after refusals of its per-minute quota.
    pub resting: Option<Resting>,
    /// The scope's quota for the day is used up until then.
    pub used_up_until: Option<Timestamp>,
}

/// What another member of the team learned about a key, for [`crate::KeyPool::merge`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteFact<'a> {
    /// The key's group rests (all models).
    Resting(Resting),
    /// The group's `scope` rests after refusals of its per-minute quota.
    ScopeResting {
        /// The model or model class.
        scope: &'a str,
        /// The rest.
        resting: Resting,
    },
    /// The windows the provider announced for the group's `scope`.
    Windows {
        /// The model or model class.
        scope: &'a str,
        /// The windows.
        announced: Announced,
    },
    /// A refusal said the group's `scope` is spent until `until`.
    Spent {
        /// The model or model class.
        scope: &'a str,
        /// When its windows refill.
        until: Timestamp,
    },
    /// The group's `scope` used up its quota for the day, until `until`.
    UsedUpForTheDay {
        /// The model or model class.
        scope: &'a str,
        /// When the day's quota is whole again.
        until: Timestamp,
    },
    /// The other members together hold this many requests (and estimated tokens) in flight on the
    /// group's `scope`: the whole count, replacing what was merged before.
    Reserved {
        /// The model or model class.
        scope: &'a str,
        /// Requests in flight on the other members.
        requests: u64,
        /// Their estimated input tokens.
        tokens: u64,
    },
    /// The key is out of credit, probed again at `probe_at` after `probes` failed probes.
    OutOfCredit {
        /// When its next probe is due.
        probe_at: Timestamp,
        /// Failed probes so far.
        probes: u32,
    },
    /// A probe found the out-of-credit key usable again.
    Replenished,
    /// The provider rejected the key (a verified 401 or 403).
    Disabled {
        /// Why.
        reason: DisableReason,
    },
    /// A member enabled the key again by hand: the rejection is lifted.
    Enabled,
}

/// What merging a [`RemoteFact`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a disable must be persisted, an enable passed to the store"]
pub enum Merged {
    /// Nothing: the fact was no news, out of bounds, or about a key the pool does not have.
    Unchanged,
    /// The pool's view of the key changed (requests waiting for a key may look again).
    Changed,
    /// The key is refused from now on: the caller persists the disable, as for a
    /// [`crate::FailureOutcome::Disabled`].
    Disabled {
        /// Why.
        reason: DisableReason,
    },
    /// The key was refused, or is off in the store: the caller asks the store to enable it again
    /// (if the store switched it off because the provider rejected it).
    Enabled,
}

/// A key the pool has loaded, for the layer that names keys to a team.
#[derive(Clone, Debug)]
pub struct LoadedKey {
    /// Its provider.
    pub provider: ProviderId,
    /// The key.
    pub key: KeyId,
    /// Its stored value (`$NAME` unresolved).
    pub secret: Secret,
    /// Its quota group as the user named it, trimmed (`None`: its own).
    pub quota_group: Option<Arc<str>>,
    /// Its value could not be read at load.
    pub sealed: bool,
}

/// The deadline of another member as this pool believes it: no later than `cap` from `now`, and
/// `None` when it is already past.
pub(crate) fn bounded(until: Timestamp, cap: Duration, now: Timestamp) -> Option<Timestamp> {
    let until = until.min(now + cap);
    (until > now).then_some(until)
}

/// A remote window as this pool believes it: refilled windows are nothing, resets are at most
/// `cap` ahead.
pub(crate) fn bounded_window(window: Option<Window>, cap: Duration, now: Timestamp) -> Option<Window> {
    let window = window?;
    let reset_at = bounded(window.reset_at, cap, now)?;
    Some(Window { reset_at, ..window })
}
