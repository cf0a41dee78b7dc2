//! The one write path for keys and providers.
//!
//! Invariant: every write to the keys (add, update, delete, toggle, reorder, and the disable the
//! pool asks for after a provider rejected a key) goes through [`WritePath::apply`], which
//! commits one transaction and then, in one place, drops the pool's cache for the provider it
//! touched and tells the UI.
//!
//! Each committed write gets the next generation, counted while the database is still held, so
//! generations follow the order of the commits; so does each change of the pool's memory the UI
//! is told of ([`WritePath::tell`]). The UI is told the provider and the generation, and a
//! command answers the generation of its change with its value ([`Written`]): a view that shows
//! a change's answer knows the event that echoes it, and reads again only for the others.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use keypool::{DisableReason, KeyId, KeyPool, ProviderId, Timestamp};
use keypool_store::api_keys;
use keypool_store::rusqlite::Transaction;
use keypool_store::Database;

use super::{EventSink, Vault};
use crate::service::error::Result;

/// The result of a write: its value, and the provider whose keys it changed.
pub(crate) struct Changed<T> {
    pub provider_id: String,
    pub value: T,
}

/// What a committed write (or a change of the pool's memory) answers: its value, and the
/// generation it got, which the `llmConfig:changed` it caused carries too. The value is a struct:
/// its fields and `generation` are the answer's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct Written<T> {
    #[serde(flatten)]
    pub value: T,
    pub generation: u64,
}

impl<T> Written<T> {
    /// The same write, answering `f` of its value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Written<U> {
        Written { value: f(self.value), generation: self.generation }
    }
}

pub(crate) struct WritePath {
    pub db: Arc<Database>,
    pub pool: Arc<KeyPool>,
    pub events: Arc<dyn EventSink>,
    /// Where key values are kept at rest.
    pub vault: Arc<Vault>,
    /// Counts the committed writes and the changes of the pool's memory told: the last one's
    /// generation. Readers of providers and keys know by it when what they hold is stale, and the
    /// UI which events it has applied.
    pub generation: AtomicU64,
}

impl WritePath {
    pub(crate) fn apply<T>(&self, change: impl FnOnce(&Transaction<'_>) -> Result<Changed<T>>) -> Result<Written<T>> {
        let (Changed { provider_id, value }, generation) = {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            let changed = change(&tx)?;
            tx.commit()?;
            (changed, self.generation.fetch_add(1, Ordering::AcqRel) + 1)
        };
        self.pool.invalidate(&ProviderId::new(provider_id.as_str()));
        tracing::debug!(provider = %provider_id, generation, "API keys changed");
        self.events.llm_config_changed(&provider_id, generation);
        Ok(Written { value, generation })
    }

    /// Tells the UI of a change of the pool's memory alone (a cooldown ended, a key back from out
    /// of credit): nothing to commit, but the change gets the next generation all the same.
    pub(crate) fn tell(&self, provider_id: &str) -> u64 {
        let generation = {
            let _held = self.db.lock();
            self.generation.fetch_add(1, Ordering::AcqRel) + 1
        };
        self.events.llm_config_changed(provider_id, generation);
        generation
    }

    /// Persists a disable the pool decided on. The pool already refuses the key in memory, so a
    /// failed write is logged, not fatal: the key stays refused until the user enables it again.
    pub(crate) fn disable_key(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp) {
        let reason_text = format!("HTTP {}", reason.status());
        let written = self.apply(|tx| {
            api_keys::disable_api_key(tx, key.as_str(), &reason_text, at.as_millis())?;
            Ok(Changed { provider_id: provider.as_str().to_owned(), value: () })
        });
        match written.map(|written| written.value) {
            Ok(()) => {
                tracing::warn!(%key, %provider, status = reason.status(), "API key disabled after the provider rejected it")
            }
            Err(error) => tracing::error!(
                %key, %provider, %reason, %error,
                "could not record the key as disabled; the pool keeps refusing it"
            ),
        }
    }

    /// A member of the team enabled `key` again, stamped `at`: enabled here too if the store
    /// disabled it because a provider rejected it (`HTTP …`); a key the user switched off stays
    /// off. `at` is kept as when the key was last enabled again (the later stamp wins).
    pub(crate) fn enable_rejected_key(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        let written = self.apply(|tx| {
            api_keys::record_enabled_at(tx, key.as_str(), at.as_millis())?;
            let row = api_keys::get_api_key(tx, key.as_str())?;
            let rejected = row.is_some_and(|row| {
                !row.enabled && row.disabled_reason.as_deref().is_some_and(|r| r.starts_with("HTTP "))
            });
            if rejected {
                let patch = api_keys::ApiKeyPatch { enabled: Some(true), ..Default::default() };
                api_keys::update_api_key(tx, key.as_str(), &patch, at.as_millis())?;
            }
            Ok(Changed { provider_id: provider.as_str().to_owned(), value: rejected })
        });
        match written.map(|written| written.value) {
            Ok(true) => tracing::info!(%key, %provider, "API key enabled again by another member of the team"),
            Ok(false) => {}
            Err(error) => tracing::error!(%key, %provider, %error, "could not record the key as enabled again"),
        }
    }

    /// After a write that removed or replaced a secret: no copy of the old value is left in the
    /// database file or its WAL.
    /// After a key was removed or replaced: the WAL is emptied and the backup copies beside the
    /// database are cleared of it, so its value survives nowhere on disk.
    pub(crate) fn forget_removed_secrets(&self) {
        if let Err(error) = self.db.forget_removed_content() {
            tracing::warn!(%error, "could not checkpoint the WAL after removing a key; old pages stay until the next checkpoint");
        }
        if let Err(error) = self.vault.scrub_backups(&self.db) {
            tracing::warn!(%error, "could not clear a removed key from the backup copies; they are cleared at the next start");
        }
    }
}
