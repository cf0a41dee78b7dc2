//! # keypool: the API key pool
//!
//! A user holds several API keys for one LLM provider. The pool decides, for every request,
//! which key to send, and learns from the answers.
//!
//! ## The model
//!
//! * **Keys** come from the store through a [`KeyLoader`], once per provider, and are cached
//!   until [`KeyPool::invalidate`] (every write to the store calls it). A key is *available*
//!   when it is enabled, not rejected by the provider, and not cooling down.
//! * **Selection** ([`KeyPool::select`]) runs a per-provider [`SelectionStrategy`] over the
//!   available keys in display order. The default, [`SmoothWeightedRoundRobin`] (nginx's), gives
//!   each key its weight's share of every `Σ weights` picks, interleaved (weights 5,1,1 give
//!   A A B A C A A …); [`WeightedRoundRobin`] (runs: 3,1,2 give A A A B C C A …) is the
//!   alternative, chosen in [`PoolConfig::strategy`].
//! * **Quota groups**: keys the provider counts together (one Google Cloud project's Gemini
//!   keys, one OpenAI organization's) name the same [`KeyEntry::quota_group`]; they share one
//!   rate-limit state: a refusal on one rests the whole group, and announced budgets and their
//!   reservations are the group's. A key with no group is a group of its own.
//! * **Affinity**: a chat session keeps the key it was first given, so the provider's prompt
//!   cache stays warm, and is re-bound by a new selection only when that key stops being
//!   available, is excluded by the request, or the session moves to another provider.
//! * **Reports**: [`KeyPool::report_failure`] with a rate limit rests the key's group for
//!   `min(base · 2^(n−1), cap)` (n = failures in a row) or the announced wait, or only the
//!   request's model when the refusal names its quota: per minute for the announced wait, per day
//!   until the quota's day ends ([`pacific_day_end`]); an auth rejection refuses the key at once. Either way it answers a [`FailureOutcome`] (cooled until T,
//!   disabled for reason R, unchanged) and the caller acts: persists a disable, tells the user,
//!   selects again for the retry. [`KeyPool::report_success`] clears the key's backoff.
//! * **Teams**: pools of several members (desktops, server replicas) share what they learn
//!   through a layer above the pool: [`KeyPool::facts`] reads out what the pool knows about a key
//!   after a lesson, [`KeyPool::merge`] takes what another member learned ([`RemoteFact`]), bounded
//!   by this pool's own caps ([`team`]), and [`KeyPool::merge_binding`] moves a session to the
//!   key another member bound it to.
//! * **Secrets** are a [`Secret`] that prints `<redacted>`; `$NAME` values are resolved from the
//!   environment at use by a [`SecretResolver`]; [`preview`] masks a key for display.
//!
//! ## Invariants
//!
//! * Never hands out a key that is disabled, rejected, or cooling at the `now` of the call.
//! * Pure with respect to time and I/O: every method that needs the time takes `now`
//!   ([`Timestamp`]; [`Clock`] and [`ManualClock`] are for callers and tests), the loader and the
//!   resolver are called with no lock held, and the pool writes nothing: it answers outcomes.
//! * A selection on a warm cache costs a few hash lookups and an O(log n) binary search; the
//!   O(n) work happens only when the set of available keys changes.
//!
//! ```
//! use std::sync::Arc;
//! use keypool::*;
//!
//! struct Store;
//! impl KeyLoader for Store {
//!     fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
//!         Ok(["a", "b"].into_iter().map(|id| KeyEntry {
//!             id: KeyId::from(id), provider_id: provider.clone(), label: None,
//!             api_key: Secret::from(format!("sk-{id}")), enabled: true, weight: 1,
//!             sort_order: 0, created_at: Timestamp::EPOCH, limits: UserLimits::default(), sealed: false,
//!             quota_group: None,
//!         }).collect())
//!     }
//! }
//!
//! let pool = KeyPool::new(PoolConfig::default(), Arc::new(Store), Arc::new(EnvResolver));
//! let (openai, chat) = (ProviderId::from("openai"), SessionId::from("chat-1"));
//! let now = Timestamp::from_millis(1_700_000_000_000);
//!
//! let first = pool.select(SelectionRequest::new(&openai).for_session(&chat), now)?;
//! assert_eq!(first.key_id.as_str(), "a", "the first selection takes slot 0");
//! let kind = FailureKind::RateLimited { retry_after: None, announced: Announced::default(), quota: None };
//! let refused = Failure { provider: &openai, key: &first.key_id, status: 429, kind, scope: None, sent_at: Some(now) };
//! let outcome = pool.report_failure(refused, now)?;
//! assert_eq!(outcome, FailureOutcome::Cooled { until: now + std::time::Duration::from_secs(60) });
//! let tried = [first.key_id.clone()];
//! let next = pool.select(SelectionRequest::new(&openai).for_session(&chat).excluding(&tried), now)?;
//! assert_eq!(next.key_id.as_str(), "b", "the session fails over to the other key");
//! assert!(next.rebound, "and is told its prompt cache starts cold");
//! # Ok::<(), PoolError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod announced;
mod budget;
mod config;
mod entry;
mod error;
mod glob;
mod group;
mod hash;
mod ids;
mod key;
pub mod paste;
mod pool;
mod provider;
mod quota_day;
mod request;
mod rest;
mod secret;
mod status;
mod strategy;
pub mod team;
mod time;

pub use announced::{Announced, Window};
pub use budget::{UserLimits, MAX_SCOPES_PER_KEY};
pub use config::{PoolConfig, StrategyKind, MAX_PLAN_WINDOW, MIN_REST};
pub use entry::{KeyEntry, KeyLoader, LoadError};
pub use error::{BlockedKey, Blocker, PoolError, Unavailability};
pub use glob::glob_matches;
pub use ids::{KeyId, ProviderId, SessionId};
pub use paste::{extract_keys, Extracted, FoundKey, KeyShape};
pub use pool::{KeyPool, Lease, Selection};
pub use quota_day::pacific_day_end;
pub use request::{Demand, DisableReason, Failure, FailureKind, FailureOutcome, Quota, SelectionRequest};
pub use secret::{preview, EnvResolver, MapResolver, ResolveError, Secret, SecretResolver};
pub use status::{BudgetStatus, KeyError, KeyState, KeyStatus};
pub use strategy::{SelectionStrategy, SmoothWeightedRoundRobin, WeightedRoundRobin};
pub use team::{KeyFacts, LoadedKey, Merged, RemoteFact, Resting, ScopeFacts};
pub use time::{Clock, ManualClock, Timestamp};

// The pool is shared across threads and async tasks behind an `Arc`.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<KeyPool>();
};
