//! The one write path for keys and providers.
//!
//! Invariant: every write to the keys (add, update, delete, toggle, reorder, and the disable the
//! pool asks for after a provider rejected a key) goes through [`WritePath::apply`], which
//! commits one transaction and then, in one place, drops the pool's cache for the provider it
//! touched and tells the UI.

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

pub(crate) struct WritePath {
    pub db: Arc<Database>,
    pub pool: Arc<KeyPool>,
    pub events: Arc<dyn EventSink>,
    /// Where key values are kept at rest.
    pub vault: Arc<Vault>,
    /// Counts the writes, so readers of providers and keys know when what they hold is stale.
    pub generation: AtomicU64,
}

impl WritePath {
    pub(crate) fn apply<T>(&self, change: impl FnOnce(&Transaction<'_>) -> Result<Changed<T>>) -> Result<T> {
        let Changed { provider_id, value } = {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            let changed = change(&tx)?;
            tx.commit()?;
            changed
        };
        self.generation.fetch_add(1, Ordering::Release);
        self.pool.invalidate(&ProviderId::new(provider_id.as_str()));
        tracing::debug!(provider = %provider_id, "API keys changed");
        self.events.llm_config_changed(&provider_id);
        Ok(value)
    }

    /// Persists a disable the pool decided on. The pool already refuses the key in memory, so a
    /// failed write is logged, not fatal: the key stays refused until the user enables it again.
    pub(crate) fn disable_key(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp) {
        let reason_text = format!("HTTP {}", reason.status());
        let written = self.apply(|tx| {
            api_keys::disable_api_key(tx, key.as_str(), &reason_text, at.as_millis())?;
            Ok(Changed { provider_id: provider.as_str().to_owned(), value: () })
        });
        match written {
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
        match written {
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
