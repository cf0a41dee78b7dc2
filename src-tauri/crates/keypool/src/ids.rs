//! Identifiers of keys, providers and chat sessions.
//!
//! Each is an `Arc<str>` newtype: cloning one into a binding or a [`crate::Selection`] is a
//! reference-count increment, not an allocation, and the types keep a key id from being passed
//! where a session id is expected.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Eq, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        /// Pointer first: ids handed out by the pool share their allocation with the pool's own
        /// copy, so most comparisons (every hash-map probe on the hot path) are one compare.
        /// `Arc`'s own pointer shortcut does not apply to `str`.
        impl PartialEq for $name {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
            }
        }

        /// Hashes the text, consistent with `eq`.
        impl Hash for $name {
            #[inline]
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.0.hash(state)
            }
        }

        impl $name {
            /// A new identifier holding `id`.
            pub fn new(id: impl Into<Arc<str>>) -> Self {
                $name(id.into())
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.into())
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id.into())
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

id_type!(
    /// The id of one API key entry (a UUID in the store).
    KeyId
);
id_type!(
    /// The id of an LLM provider (OpenAI-compatible endpoint, Anthropic, …).
    ProviderId
);
id_type!(
    /// The id of a chat session, the unit of key affinity.
    SessionId
);
