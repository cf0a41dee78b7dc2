//! What the pool reads from, and writes to, the store: key entries, the loader and the disabler.

use std::error::Error;
use std::fmt;

use crate::{KeyId, ProviderId, Secret, Timestamp};

/// One API key as stored.
#[derive(Clone, Debug)]
pub struct KeyEntry {
    /// The key's id.
    pub id: KeyId,
    /// The provider the key belongs to.
    pub provider_id: ProviderId,
    /// A name for people ("prod #1"); shown in errors and status instead of the key.
    pub label: Option<String>,
    /// The raw value as stored: the key itself or a `$NAME` reference, resolved at use.
    pub api_key: Secret,
    /// Off keys are never selected.
    pub enabled: bool,
    /// Slots in the round-robin cycle, 1–100 (the store validates; the pool clamps to 1–100 so a
    /// stray 0 cannot starve a key or divide by zero).
    pub weight: u32,
    /// Display and cycle order, ascending; ties go by `created_at`, then by `id`.
    pub sort_order: i64,
    /// When the key was added; the second ordering criterion.
    pub created_at: Timestamp,
}

/// Reads a provider's keys from the store.
///
/// Synchronous and possibly slow (a database read): the pool calls it only without holding its
/// lock, once per provider until the next [`crate::KeyPool::invalidate`], and never on the
/// selection hot path.
pub trait KeyLoader: Send + Sync {
    /// All keys of `provider`, enabled or not, in any order.
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError>;
}

/// Persists "this key is disabled" after the provider rejected it.
///
/// Called without the pool's lock held, exactly once per rejection of a key (concurrent 401s
/// for the same key make one call). The pool refuses the key from the moment of the report,
/// whatever this returns.
pub trait KeyDisabler: Send + Sync {
    /// Marks `key` disabled in the store, recording `reason` and `at`.
    fn disable(
        &self,
        key: &KeyId,
        provider: &ProviderId,
        reason: DisableReason,
        at: Timestamp,
    ) -> Result<(), DisableError>;
}

/// Why the pool disabled a key.
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
            DisableReason::AuthRejected { status } => {
                write!(f, "the provider rejected the key (HTTP {status})")
            }
        }
    }
}

type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// The store could not read a provider's keys.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct LoadError(BoxError);

impl LoadError {
    /// Wraps the store's own error (or a message).
    pub fn new(source: impl Into<BoxError>) -> Self {
        LoadError(source.into())
    }
}

/// The store could not record a key as disabled.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DisableError(BoxError);

impl DisableError {
    /// Wraps the store's own error (or a message).
    pub fn new(source: impl Into<BoxError>) -> Self {
        DisableError(source.into())
    }
}
