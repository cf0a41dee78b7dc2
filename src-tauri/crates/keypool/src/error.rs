//! What can go wrong when asking the pool for a key. No variant ever carries a secret.

use std::fmt;

use crate::entry::LoadError;
use crate::ids::{KeyId, ProviderId};
use crate::secret::ResolveError;
use crate::time::Timestamp;

/// Why the pool could not hand out a key.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// No key of the provider can serve this request; `reason` says what the user can do.
    #[error("no API key available for provider {provider}: {reason}")]
    NoAvailableKey {
        /// The provider asked for.
        provider: ProviderId,
        /// Why, precisely enough for a useful message.
        reason: Unavailability,
    },
    /// The chosen key is a `$NAME` reference whose variable has no usable value. The key is not
    /// handed out; the caller may exclude `key_id` and select again.
    #[error("API key {} refers to ${var}, which has no usable value: {cause}", KeyName(key_id, label.as_deref()))]
    UnresolvedEnv {
        /// The key at fault.
        key_id: KeyId,
        /// Its label, so the message names it the way the user does.
        label: Option<String>,
        /// The environment variable, without `$`.
        var: String,
        /// Unset, empty or not Unicode.
        cause: ResolveError,
    },
    /// The store could not load the provider's keys.
    #[error("could not load the API keys of provider {provider}")]
    Load {
        /// The provider whose keys were being loaded.
        provider: ProviderId,
        /// The store's error.
        #[source]
        source: LoadError,
    },
}

/// Why no key was available, in the terms a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailability {
    /// The provider has no keys in the pool (the app may fall back to the provider-level key).
    NoKeys,
    /// Every key is resting, spent, taken, refused or already tried: why, key by key, in display
    /// order.
    Blocked {
        /// Each key with what stops it.
        keys: Vec<BlockedKey>,
        /// The earliest time a key frees up by itself (a cooldown ends, a window refills);
        /// `None` when none will without the user, or only a request in flight ending can free one.
        first_free_at: Option<Timestamp>,
    },
}

/// One key that cannot serve a request, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedKey {
    /// The key.
    pub id: KeyId,
    /// How people know it: its label, or its masked preview (`$NAME` as written).
    pub name: String,
    /// What stops it.
    pub why: Blocker,
    /// This request already tried it: it does not free up for this request, whatever `why`.
    pub tried: bool,
}

/// What stops a key from serving a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocker {
    /// This request already tried it.
    Tried,
    /// Resting after rate limits, until then.
    Cooling {
        /// When the cooldown ends.
        until: Timestamp,
    },
    /// Its announced budget (or the user's per-minute limit) for this request's model is used up
    /// until then.
    Spent {
        /// When the window refills.
        until: Timestamp,
    },
    /// As many of its requests are in flight as it may have at once.
    Busy,
    /// Off: switched off by hand (`status: None`) or refused by the provider with `status`.
    Disabled {
        /// The HTTP status of the refusal that disabled it, if that is why.
        status: Option<u16>,
    },
    /// Its value cannot be read now: it is kept in a keychain that is not reachable.
    Unavailable,
    /// Its quota group's quota for this request's model is used up for the day, until then
    /// (the end of the quota's day); it comes back by itself.
    UsedUpForTheDay {
        /// When the day's quota is whole again.
        until: Timestamp,
    },
    /// Out of credit; it is tried again in the background at `next_probe_at`.
    Exhausted {
        /// When the next probe runs.
        next_probe_at: Timestamp,
    },
}

impl Unavailability {
    /// Whether every key is one the request already tried (others may be free for another one).
    pub fn all_tried(&self) -> bool {
        matches!(self, Unavailability::Blocked { keys, .. } if keys.iter().all(|k| k.tried))
    }

    /// Whether some key the request has not tried waits only for a request in flight to end.
    pub fn busy(&self) -> bool {
        matches!(self, Unavailability::Blocked { keys, .. } if keys.iter().any(|k| !k.tried && k.why == Blocker::Busy))
    }

    /// When the request should try again if it may wait until `deadline`: the first time a key
    /// it has not tried frees up by itself, if that is no later than the deadline. `None`: give
    /// up now.
    pub fn retry_at(&self, deadline: Timestamp) -> Option<Timestamp> {
        let Unavailability::Blocked { keys, .. } = self else { return None };
        keys.iter()
            .filter(|k| !k.tried)
            .filter_map(|k| match k.why {
                Blocker::Cooling { until } | Blocker::Spent { until } | Blocker::UsedUpForTheDay { until } => {
                    Some(until)
                }
                _ => None,
            })
            .min()
            .filter(|&at| at <= deadline)
    }
}

impl fmt::Display for Unavailability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Unavailability::Blocked { keys, first_free_at } = self else {
            return f.write_str("the provider has no API keys in its pool");
        };
        let count = |pred: fn(&Blocker) -> bool| keys.iter().filter(|k| pred(&k.why)).count();
        let resting = count(|b| matches!(b, Blocker::Cooling { .. } | Blocker::Spent { .. } | Blocker::Busy));
        let off: Vec<&str> =
            keys.iter().filter(|k| matches!(k.why, Blocker::Disabled { .. })).map(|k| k.name.as_str()).collect();
        let exhausted = count(|b| matches!(b, Blocker::Exhausted { .. }));
        let day_ends: Vec<Timestamp> = keys
            .iter()
            .filter_map(|k| match k.why {
                Blocker::UsedUpForTheDay { until } => Some(until),
                _ => None,
            })
            .collect();
        let tried = count(|b| matches!(b, Blocker::Tried));
        let mut parts = Vec::new();
        if resting > 0 {
            let when = first_free_at.map(|at| format!(" (the first is free again at {at})")).unwrap_or_default();
            parts.push(format!("{resting} resting after rate limits or busy{when}"));
        }
        if !off.is_empty() {
            parts.push(format!("{} disabled (enable or fix: {})", off.len(), off.join(", ")));
        }
        if let Some(first) = day_ends.iter().min() {
            parts.push(format!("{} used up the day's quota for this model (until {first})", day_ends.len()));
        }
        if exhausted > 0 {
            parts.push(format!("{exhausted} out of credit"));
        }
        let sealed = count(|b| matches!(b, Blocker::Unavailable));
        if sealed > 0 {
            parts.push(format!("{sealed} unavailable: the keychain is not reachable"));
        }
        if tried > 0 {
            parts.push(format!("{tried} already tried for this request"));
        }
        write!(f, "no key can take the request: {}", parts.join("; "))
    }
}

/// A key as a person knows it: `"prod" (id 1234…)`, or just its id when it has no label.
pub(crate) struct KeyName<'a>(pub &'a KeyId, pub Option<&'a str>);

impl fmt::Display for KeyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(label) => write!(f, "{label:?} (id {})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}
