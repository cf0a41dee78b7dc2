//! What can go wrong when asking the pool for a key. No variant ever carries a secret.

use std::fmt;
use std::time::Duration;

use crate::{KeyId, LoadError, ProviderId, Timestamp};

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
        cause: crate::ResolveError,
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
    /// Every key is disabled, by hand or after the provider rejected it: these are the ones to fix.
    AllDisabled {
        /// Every key of the provider, with its label.
        keys: Vec<(KeyId, Option<String>)>,
    },
    /// Every enabled key is cooling down after rate limits.
    AllCooling {
        /// When the first of them is free again.
        first_free_at: Timestamp,
        /// How long that is from the time of the request.
        wait: Duration,
    },
    /// Keys are available, but the request already tried every one of them.
    AllExcluded,
}

impl fmt::Display for Unavailability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailability::NoKeys => f.write_str("the provider has no API keys in its pool"),
            Unavailability::AllDisabled { keys } => {
                f.write_str("every key is disabled; enable or fix one of: ")?;
                for (i, (id, label)) in keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", KeyName(id, label.as_deref()))?;
                }
                Ok(())
            }
            Unavailability::AllCooling { first_free_at, wait } => write!(
                f,
                "every enabled key is cooling down after rate limits; the first is free again in {} s (at {first_free_at})",
                wait.as_millis().div_ceil(1000)
            ),
            Unavailability::AllExcluded => {
                f.write_str("every available key was already tried for this request")
            }
        }
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
