//! The key store service behind the `llmConfig:*` commands, and the pool wired to it.
//!
//! Invariant: every write to the keys (add, update, delete, toggle, reorder, and the pool's own
//! auth-disable) goes through [`WritePath::apply`], which commits one transaction and then, in
//! one place, drops the pool's cache for the provider it touched and tells the UI.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use keypool::{
    Clock, DisableError, DisableReason, KeyDisabler, KeyEntry, KeyId, KeyLoader, KeyPool, LoadError, PoolConfig,
    PoolError, ProviderId, Secret, SecretResolver, Timestamp,
};
use keypool_store::api_keys::{self, ApiKeyPatch, ApiKeyRow, NewApiKey};
use keypool_store::providers::{self, NewProvider, ProviderPatch};
use keypool_store::rusqlite::Transaction;
use keypool_store::{Database, StoreError};

use super::dto::{ApiKeyDto, DeletedDto, DeletedProviderDto, PoolStatusDto, ProviderDto};
use crate::error::Issue;

/// Tells the UI that a provider's keys changed (the shell emits `llmConfig:changed`).
pub trait EventSink: Send + Sync {
    fn llm_config_changed(&self, provider_id: &str);
}

/// Why a key-store operation failed. Messages never contain a stored secret.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{what} {id:?} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("the arguments are invalid")]
    Invalid(Vec<Issue>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pool(#[from] PoolError),
}

impl ServiceError {
    pub(crate) fn not_found(what: &'static str, id: &str) -> Self {
        ServiceError::NotFound { what, id: id.to_owned() }
    }
}

impl From<keypool_store::rusqlite::Error> for ServiceError {
    fn from(error: keypool_store::rusqlite::Error) -> Self {
        ServiceError::Store(StoreError::from(error))
    }
}

type Result<T, E = ServiceError> = std::result::Result<T, E>;

/// The result of a write: its value, and the provider whose keys it changed.
pub(crate) struct Changed<T> {
    provider_id: String,
    value: T,
}

/// The one write path for keys. See the module documentation.
pub(crate) struct WritePath {
    db: Arc<Database>,
    pool: Weak<KeyPool>,
    events: Arc<dyn EventSink>,
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
        if let Some(pool) = self.pool.upgrade() {
            pool.invalidate(&ProviderId::new(provider_id.as_str()));
        }
        tracing::debug!(provider = %provider_id, "API keys changed");
        self.events.llm_config_changed(&provider_id);
        Ok(value)
    }
}

/// Reads a provider's keys for the pool (on a cache miss only).
struct StoreLoader {
    db: Arc<Database>,
}

impl KeyLoader for StoreLoader {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        let conn = self.db.lock().map_err(LoadError::new)?;
        let rows = api_keys::list_api_keys(&conn, provider.as_str()).map_err(LoadError::new)?;
        Ok(rows.into_iter().map(entry_of).collect())
    }
}

fn entry_of(row: ApiKeyRow) -> KeyEntry {
    KeyEntry {
        id: KeyId::new(row.id),
        provider_id: ProviderId::new(row.provider_id),
        label: row.label,
        api_key: row.api_key,
        enabled: row.enabled,
        weight: row.weight,
        sort_order: row.sort_order,
        created_at: Timestamp::from_millis(row.created_at),
    }
}

/// Persists the pool's auth-disable through the write path.
struct StoreDisabler {
    writes: Arc<WritePath>,
}

impl KeyDisabler for StoreDisabler {
    fn disable(&self, key: &KeyId, provider: &ProviderId, reason: DisableReason, at: Timestamp) -> Result<(), DisableError> {
        let reason_text = format!("HTTP {}", reason.status());
        self.writes
            .apply(|tx| {
                api_keys::disable_api_key(tx, key.as_str(), &reason_text, at.as_millis())?;
                Ok(Changed { provider_id: provider.as_str().to_owned(), value: () })
            })
            .map_err(DisableError::new)?;
        tracing::warn!(key = %key, provider = %provider, status = reason.status(), "API key disabled after the provider rejected it");
        Ok(())
    }
}

/// A key to add, validated and normalized by the command layer.
pub struct AddApiKey {
    pub provider_id: String,
    pub label: Option<String>,
    pub api_key: Secret,
    pub enabled: bool,
    pub weight: u32,
}

/// The API key store and the pool that reads from it.
pub struct LlmConfig {
    db: Arc<Database>,
    pool: Arc<KeyPool>,
    writes: Arc<WritePath>,
    clock: Arc<dyn Clock>,
}

impl LlmConfig {
    pub fn new(
        db: Arc<Database>,
        config: PoolConfig,
        resolver: Arc<dyn SecretResolver>,
        events: Arc<dyn EventSink>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let mut writes = None;
        // The pool's disabler writes through the write path, which invalidates the pool: a cycle,
        // closed with a weak reference from the write path to the pool.
        let pool = Arc::new_cyclic(|pool: &Weak<KeyPool>| {
            let path = Arc::new(WritePath { db: db.clone(), pool: pool.clone(), events });
            writes = Some(path.clone());
            KeyPool::new(
                config,
                Arc::new(StoreLoader { db: db.clone() }),
                Arc::new(StoreDisabler { writes: path }),
                resolver,
            )
        });
        let writes = writes.expect("new_cyclic ran the constructor");
        LlmConfig { db, pool, writes, clock }
    }

    pub fn pool(&self) -> &Arc<KeyPool> {
        &self.pool
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub fn providers(&self) -> Result<Vec<ProviderDto>> {
        Ok(providers::list_providers(&*self.db.lock()?)?.into_iter().map(ProviderDto::from).collect())
    }

    pub fn add_provider(&self, mut new: NewProvider) -> Result<ProviderDto> {
        let now = self.now().as_millis();
        new.id = uuid::Uuid::new_v4().to_string();
        check_default_model(new.default_model.as_deref(), &new.models)?;
        self.writes.apply(|tx| {
            let row = providers::insert_provider(tx, &new, now)?;
            Ok(Changed { provider_id: row.id.clone(), value: ProviderDto::from(row) })
        })
    }

    pub fn update_provider(&self, id: &str, patch: ProviderPatch) -> Result<ProviderDto> {
        let now = self.now().as_millis();
        self.writes.apply(|tx| {
            let current = providers::get_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
            let models = patch.models.as_ref().unwrap_or(&current.models);
            let default_model = match &patch.default_model {
                Some(model) => model.as_deref(),
                None => current.default_model.as_deref(),
            };
            if patch.models.is_some() || patch.default_model.is_some() {
                check_default_model(default_model, models)?;
            }
            let row = providers::update_provider(tx, id, &patch, now)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: row.id.clone(), value: ProviderDto::from(row) })
        })
    }

    /// Deletes a provider with its pool keys; its chats stay, detached from it.
    pub fn delete_provider(&self, id: &str) -> Result<DeletedProviderDto> {
        self.writes.apply(|tx| {
            let deleted_keys = providers::delete_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: id.to_owned(), value: DeletedProviderDto { id: id.to_owned(), deleted_keys } })
        })
    }

    pub fn api_keys(&self, provider_id: &str) -> Result<Vec<ApiKeyDto>> {
        let conn = self.db.lock()?;
        require_provider(&conn, provider_id)?;
        Ok(api_keys::list_api_keys(&conn, provider_id)?.into_iter().map(ApiKeyDto::from).collect())
    }

    pub fn add_api_key(&self, new: AddApiKey) -> Result<ApiKeyDto> {
        let now = self.now().as_millis();
        self.writes.apply(|tx| {
            require_provider(tx, &new.provider_id)?;
            if api_keys::find_duplicate(tx, &new.provider_id, &new.api_key, None)?.is_some() {
                return Err(ServiceError::Conflict("this API key is already in the provider's pool".into()));
            }
            let row = api_keys::insert_api_key(
                tx,
                &NewApiKey {
                    id: uuid::Uuid::new_v4().to_string(),
                    provider_id: new.provider_id.clone(),
                    label: new.label,
                    api_key: new.api_key,
                    enabled: new.enabled,
                    weight: new.weight,
                },
                now,
            )?;
            Ok(Changed { provider_id: new.provider_id, value: ApiKeyDto::from(row) })
        })
    }

    pub fn update_api_key(&self, id: &str, patch: ApiKeyPatch) -> Result<ApiKeyDto> {
        let now = self.now().as_millis();
        let enabling = patch.enabled == Some(true);
        let dto = self.writes.apply(|tx| {
            let current = require_key(tx, id)?;
            if let Some(secret) = &patch.api_key {
                if api_keys::find_duplicate(tx, &current.provider_id, secret, Some(id))?.is_some() {
                    return Err(ServiceError::Conflict("this API key is already in the provider's pool".into()));
                }
            }
            let row = api_keys::update_api_key(tx, id, &patch, now)?.ok_or_else(|| key_not_found(id))?;
            Ok(Changed { provider_id: row.provider_id.clone(), value: ApiKeyDto::from(row) })
        })?;
        if enabling {
            self.pool.clear_auth_block(&KeyId::new(id));
        }
        Ok(dto)
    }

    pub fn toggle_api_key(&self, id: &str, enabled: bool) -> Result<ApiKeyDto> {
        self.update_api_key(id, ApiKeyPatch { enabled: Some(enabled), ..ApiKeyPatch::default() })
    }

    pub fn delete_api_key(&self, id: &str) -> Result<DeletedDto> {
        self.writes.apply(|tx| {
            let provider_id = api_keys::delete_api_key(tx, id)?.ok_or_else(|| key_not_found(id))?;
            Ok(Changed { provider_id, value: DeletedDto { id: id.to_owned() } })
        })
    }

    /// Sets the display (and cycle) order: `ids` must list each of the provider's keys once.
    pub fn reorder_api_keys(&self, provider_id: &str, ids: &[String]) -> Result<Vec<ApiKeyDto>> {
        let now = self.now().as_millis();
        self.writes.apply(|tx| {
            require_provider(tx, provider_id)?;
            let existing: HashSet<String> =
                api_keys::list_api_keys(tx, provider_id)?.into_iter().map(|row| row.id).collect();
            let given: HashSet<&String> = ids.iter().collect();
            if given.len() != ids.len() || ids.len() != existing.len() || !ids.iter().all(|id| existing.contains(id)) {
                return Err(ServiceError::Invalid(vec![Issue {
                    path: "ids".into(),
                    message: format!("must list each of the provider's {} keys exactly once", existing.len()),
                }]));
            }
            api_keys::reorder_api_keys(tx, provider_id, ids, now)?;
            let rows = api_keys::list_api_keys(tx, provider_id)?;
            Ok(Changed { provider_id: provider_id.to_owned(), value: rows.into_iter().map(ApiKeyDto::from).collect() })
        })
    }

    pub fn pool_status(&self, provider_id: &str) -> Result<PoolStatusDto> {
        require_provider(&*self.db.lock()?, provider_id)?;
        let now = self.now();
        let keys = self.pool.status(&ProviderId::new(provider_id), now)?;
        Ok(PoolStatusDto {
            provider_id: provider_id.to_owned(),
            now: now.as_millis(),
            keys: keys.into_iter().map(Into::into).collect(),
        })
    }

    /// Ends a key's cooldown by hand. Not a database write, but the UI is told all the same.
    pub fn reset_cooldown(&self, id: &str) -> Result<DeletedDto> {
        let row = require_key(&*self.db.lock()?, id)?;
        self.pool.reset_cooldown(&KeyId::new(id));
        self.writes.events.llm_config_changed(&row.provider_id);
        Ok(DeletedDto { id: id.to_owned() })
    }
}

fn require_provider(conn: &keypool_store::rusqlite::Connection, provider_id: &str) -> Result<()> {
    if api_keys::provider_exists(conn, provider_id)? {
        Ok(())
    } else {
        Err(provider_not_found(provider_id))
    }
}

fn provider_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("provider", id)
}

/// A default model must be one of the provider's models (when it lists any).
fn check_default_model(default_model: Option<&str>, models: &[String]) -> Result<()> {
    match default_model {
        Some(model) if !models.is_empty() && !models.iter().any(|m| m == model) => Err(ServiceError::Invalid(vec![Issue {
            path: "defaultModel".into(),
            message: "must be one of the provider's models".into(),
        }])),
        _ => Ok(()),
    }
}

fn require_key(conn: &keypool_store::rusqlite::Connection, id: &str) -> Result<ApiKeyRow> {
    api_keys::get_api_key(conn, id)?.ok_or_else(|| key_not_found(id))
}

fn key_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("API key", id)
}
