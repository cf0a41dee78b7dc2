//! What the pool reads from the store: key entries and the loader.

use std::error::Error;

use crate::budget::UserLimits;
use crate::ids::{KeyId, ProviderId};
use crate::secret::Secret;
use crate::time::Timestamp;

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
    /// Limits the user set for providers that announce none.
    pub limits: UserLimits,
    /// The key's value could not be read (it is kept in a keychain that is not reachable): the
    /// key is never selected, and shows as unavailable, until a reload reads it.
    pub sealed: bool,
    /// The quota group the key shares its provider's rate limits with (a Gemini key's Google
    /// Cloud project, an OpenAI key's organization): keys of one group rest together and draw
    /// on one budget per model. `None` or blank: the key is a group of its own.
    pub quota_group: Option<String>,
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
