//! The API key pools: the keys as stored, and the pool that reads them.

mod readings;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use keypool::{
    Clock, KeyEntry, KeyId, KeyLoader, KeyPool, KeyState, KeyStatus, LoadError, ProviderId, Secret, Timestamp,
    UserLimits,
};
use keypool_llm::{CompletionService, ProbeProblem, ProbeResult, ProviderKind};
use keypool_store::api_keys::{self, ApiKeyPatch, ApiKeyRow, NewApiKey};
use keypool_store::balances::{BalanceRow, WindowsRow};
use keypool_store::{providers, usage, Database};

use super::providers::{endpoint_of, require_provider};
use super::vault::key_account;
use super::write_path::{Changed, WritePath, Written};
use super::Vault;
use crate::service::error::{Conflict, Result, ServiceError};
use crate::service::problem::Rule;

/// A key to add, validated and normalized by the caller.
pub struct NewKey {
    pub provider_id: String,
    pub label: Option<String>,
    pub api_key: Secret,
    pub enabled: bool,
    pub weight: u32,
    pub limits: UserLimits,
    /// Trimmed, not empty; `None`: a group of its own.
    pub quota_group: Option<String>,
}

/// A pool key as the services show it: its value never, only a masked preview.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub id: String,
    pub provider_id: String,
    pub label: Option<String>,
    /// `sk-…9f3a`, or a `$NAME` reference as written.
    #[serde(rename = "apiKeyPreview")]
    pub preview: String,
    /// The key is a `$NAME` reference to an environment variable.
    pub is_env_ref: bool,
    pub enabled: bool,
    /// Within `LIMITS.weight`.
    pub weight: u32,
    pub sort_order: i64,
    /// Why the pool switched the key off (`HTTP 401`); `None` when the user did, or it is on.
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The user's limit of requests per minute; `None`: none.
    pub rpm_limit: Option<u32>,
    /// The user's limit of requests at once; `None`: none.
    pub max_concurrent: Option<u32>,
    /// The quota group it shares its provider's limits with; `None`: a group of its own.
    pub quota_group: Option<String>,
}

impl From<ApiKeyRow> for ApiKey {
    fn from(row: ApiKeyRow) -> Self {
        ApiKey {
            preview: row.api_key.preview(),
            is_env_ref: row.api_key.env_var().is_some(),
            id: row.id,
            provider_id: row.provider_id,
            label: row.label,
            enabled: row.enabled,
            weight: row.weight,
            sort_order: row.sort_order,
            disabled_reason: row.disabled_reason,
            disabled_at: row.disabled_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
            rpm_limit: row.rpm_limit,
            max_concurrent: row.max_concurrent,
            quota_group: row.quota_group,
        }
    }
}

/// What to change in a key; `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct KeyPatch {
    /// `Some(None)` removes the label.
    pub label: Option<Option<String>>,
    /// A new value (or `$NAME`), kept where the vault decides.
    pub api_key: Option<Secret>,
    pub enabled: Option<bool>,
    pub weight: Option<u32>,
    /// Both of the user's limits, replaced.
    pub limits: Option<UserLimits>,
    /// `Some(None)`: a group of its own.
    pub quota_group: Option<Option<String>>,
}

/// The pool's view of a provider's keys, at the service clock's `now`.
pub struct PoolStatus {
    pub now: Timestamp,
    pub keys: Vec<KeyStatus>,
    /// Beside each key: the environment variable a `$NAME` key refers to when it has no usable
    /// value (the key is skipped until it has one).
    pub unset_vars: Vec<Option<String>>,
    /// Beside each key: its last balance reading, where its provider answers balance reads.
    pub balances: Vec<Option<BalanceRow>>,
    /// Beside each key: its last plan-window reading, where its provider answers window reads.
    pub windows: Vec<Option<WindowsRow>>,
    /// Beside each key: when it expires, where its kind's keys say (short-term Bedrock keys).
    pub expiries: Vec<Option<Timestamp>>,
}

#[derive(Clone)]
pub struct Keys {
    db: Arc<Database>,
    pool: Arc<KeyPool>,
    writes: Arc<WritePath>,
    clock: Arc<dyn Clock>,
    completions: CompletionService,
}

/// Reads a provider's keys for the pool (on a cache miss only): the rows from the database,
/// the values of keys kept in the keychain from the vault (once per run).
pub(crate) struct StoreLoader {
    pub db: Arc<Database>,
    pub vault: Arc<Vault>,
}

impl KeyLoader for StoreLoader {
    /// The provider's keys, each in its quota group: the one the user named, or the one its
    /// kind puts it in (OpenRouter's keys share their account's limits).
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        let (rows, kind) = {
            let conn = self.db.lock().map_err(LoadError::new)?;
            let rows = api_keys::list_api_keys(&conn, provider.as_str()).map_err(LoadError::new)?;
            let kind = providers::get_provider(&conn, provider.as_str()).map_err(LoadError::new)?;
            (rows, kind.and_then(|p| ProviderKind::parse(&p.kind)))
        };
        let entry = |row| {
            let mut entry = entry_of(row, &self.vault);
            if let Some(kind) = kind {
                entry.quota_group = kind.row().quota_group_of(entry.quota_group.take());
            }
            entry
        };
        Ok(rows.into_iter().map(entry).collect())
    }
}

fn entry_of(row: ApiKeyRow, vault: &Vault) -> KeyEntry {
    let (api_key, sealed) = match vault.reveal(&key_account(&row.id), &row.api_key) {
        Ok(secret) => (secret, false),
        Err(error) => {
            tracing::warn!(key = %row.id, %error, "a key's value cannot be read; it is unavailable until it can");
            (Secret::new(""), true)
        }
    };
    KeyEntry {
        id: KeyId::new(row.id),
        provider_id: ProviderId::new(row.provider_id),
        label: row.label,
        api_key,
        sealed,
        enabled: row.enabled,
        weight: row.weight,
        sort_order: row.sort_order,
        created_at: Timestamp::from_millis(row.created_at),
        limits: UserLimits { rpm: row.rpm_limit, max_concurrent: row.max_concurrent },
        quota_group: row.quota_group,
    }
}

impl Keys {
    pub(crate) fn new(
        db: Arc<Database>,
        writes: Arc<WritePath>,
        clock: Arc<dyn Clock>,
        completions: CompletionService,
    ) -> Self {
        Keys { db, pool: writes.pool.clone(), writes, clock, completions }
    }

    pub fn pool(&self) -> &Arc<KeyPool> {
        &self.pool
    }

    /// A provider's keys in display order.
    pub fn list(&self, provider_id: &str) -> Result<Vec<ApiKey>> {
        let conn = self.db.lock()?;
        require_provider(&conn, provider_id)?;
        Ok(api_keys::list_api_keys(&conn, provider_id)?.into_iter().map(ApiKey::from).collect())
    }

    /// Adds a key; its value goes to the keychain when one is reachable.
    pub fn add(&self, new: NewKey) -> Result<Written<ApiKey>> {
        let now = self.clock.now().as_millis();
        let id = uuid::Uuid::new_v4().to_string();
        let vault = &self.writes.vault;
        let added = self.writes.apply(|tx| {
            require_provider(tx, &new.provider_id)?;
            self.refuse_duplicate(tx, &new.provider_id, &new.api_key, None)?;
            let stored = vault.keep(&key_account(&id), &new.api_key);
            let new_key = NewApiKey {
                id: id.clone(),
                provider_id: new.provider_id.clone(),
                label: new.label,
                api_key: stored,
                enabled: new.enabled,
                weight: new.weight,
                rpm_limit: new.limits.rpm,
                max_concurrent: new.limits.max_concurrent,
                quota_group: new.quota_group,
            };
            let row = api_keys::insert_api_key(tx, &new_key, now)?;
            Ok(Changed { provider_id: new.provider_id, value: ApiKey::from(row) })
        });
        if added.is_err() {
            vault.forget(&key_account(&id));
        }
        added
    }

    /// A key of `provider_id` (other than `except`) already holds `secret`: compared in the
    /// database, and with the values of the keys kept in the keychain.
    fn refuse_duplicate(
        &self,
        conn: &keypool_store::rusqlite::Connection,
        provider_id: &str,
        secret: &Secret,
        except: Option<&str>,
    ) -> Result<()> {
        match self.holder_of(conn, provider_id, secret, except)? {
            Some(_) => Err(ServiceError::Conflict(Conflict::DuplicateKey)),
            None => Ok(()),
        }
    }

    /// The key of `provider_id` (other than `except`) that holds `secret`, by its id: compared in
    /// the database, and with the values of the keys kept in the keychain.
    fn holder_of(
        &self,
        conn: &keypool_store::rusqlite::Connection,
        provider_id: &str,
        secret: &Secret,
        except: Option<&str>,
    ) -> Result<Option<String>> {
        if let Some(id) = api_keys::find_duplicate(conn, provider_id, secret, except)? {
            return Ok(Some(id));
        }
        for row in api_keys::list_api_keys(conn, provider_id)? {
            if !row.api_key.in_keychain() || Some(row.id.as_str()) == except {
                continue;
            }
            let same = self
                .writes
                .vault
                .reveal(&key_account(&row.id), &row.api_key)
                .is_ok_and(|v| v.expose() == secret.expose());
            if same {
                return Ok(Some(row.id));
            }
        }
        Ok(None)
    }

    /// The key of `provider_id` that holds `secret`, if one does (a server's config file names
    /// its keys by value).
    pub fn find_by_value(&self, provider_id: &str, secret: &Secret) -> Result<Option<ApiKey>> {
        let conn = self.db.lock()?;
        require_provider(&conn, provider_id)?;
        match self.holder_of(&conn, provider_id, secret, None)? {
            Some(id) => Ok(Some(ApiKey::from(require_key(&conn, &id)?))),
            None => Ok(None),
        }
    }

    /// Applies `patch` in one transaction; enabling a key clears why it was disabled and lifts
    /// the pool's refusal. A new value is kept where the vault decides (the keychain entry is
    /// overwritten, or removed when the new value is a `$NAME`).
    pub fn update(&self, id: &str, patch: KeyPatch) -> Result<Written<ApiKey>> {
        let now = self.clock.now().as_millis();
        let enabling = patch.enabled == Some(true);
        let replaces_secret = patch.api_key.is_some();
        let vault = &self.writes.vault;
        let mut was_in_keychain = false;
        let written = self.writes.apply(|tx| {
            let current = require_key(tx, id)?;
            was_in_keychain = current.api_key.in_keychain();
            let mut stored = ApiKeyPatch {
                label: patch.label,
                api_key: None,
                enabled: patch.enabled,
                weight: patch.weight,
                quota_group: patch.quota_group,
            };
            if let Some(secret) = &patch.api_key {
                self.refuse_duplicate(tx, &current.provider_id, secret, Some(id))?;
                stored.api_key = Some(vault.keep(&key_account(id), secret));
            }
            let mut row = api_keys::update_api_key(tx, id, &stored, now)?.ok_or_else(|| key_not_found(id))?;
            if let Some(limits) = patch.limits {
                row = api_keys::set_limits(tx, id, limits.rpm, limits.max_concurrent, now)?
                    .ok_or_else(|| key_not_found(id))?;
            }
            Ok(Changed { provider_id: row.provider_id.clone(), value: row })
        })?;
        if replaces_secret {
            if was_in_keychain && !written.value.api_key.in_keychain() {
                vault.forget(&key_account(id));
            }
            self.writes.forget_removed_secrets();
        }
        if enabling {
            // The pool lifts its refusal, and so does every member of a team.
            self.completions.key_enabled(&KeyId::new(id));
        }
        Ok(written.map(ApiKey::from))
    }

    /// Puts the key in the quota group `group` (keys of one account that share its limits), or
    /// in none.
    pub fn set_quota_group(&self, id: &str, group: Option<&str>) -> Result<Written<ApiKey>> {
        let now = self.clock.now().as_millis();
        self.writes.apply(|tx| {
            let row = api_keys::set_quota_group(tx, id, group, now)?.ok_or_else(|| key_not_found(id))?;
            Ok(Changed { provider_id: row.provider_id.clone(), value: ApiKey::from(row) })
        })
    }

    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<Written<ApiKey>> {
        self.update(id, KeyPatch { enabled: Some(enabled), ..KeyPatch::default() })
    }

    /// Sets the user's limits of a key, replacing both (`None`: no limit).
    pub fn set_limits(&self, id: &str, limits: UserLimits) -> Result<Written<ApiKey>> {
        let now = self.clock.now().as_millis();
        self.writes.apply(|tx| {
            let row = api_keys::set_limits(tx, id, limits.rpm, limits.max_concurrent, now)?
                .ok_or_else(|| key_not_found(id))?;
            Ok(Changed { provider_id: row.provider_id.clone(), value: ApiKey::from(row) })
        })
    }

    /// Deletes a key, its keychain entry with it.
    pub fn delete(&self, id: &str) -> Result<Written<()>> {
        let written = self.writes.apply(|tx| {
            let provider_id = api_keys::delete_api_key(tx, id)?.ok_or_else(|| key_not_found(id))?;
            Ok(Changed { provider_id, value: () })
        })?;
        self.writes.vault.forget(&key_account(id));
        self.writes.forget_removed_secrets();
        Ok(written)
    }

    /// Sets the display (and cycle) order: `ids` must list each of the provider's keys once.
    pub fn reorder(&self, provider_id: &str, ids: &[String]) -> Result<Written<Vec<ApiKey>>> {
        let now = self.clock.now().as_millis();
        self.writes.apply(|tx| {
            require_provider(tx, provider_id)?;
            let existing: HashSet<String> =
                api_keys::list_api_keys(tx, provider_id)?.into_iter().map(|row| row.id).collect();
            let given: HashSet<&String> = ids.iter().collect();
            if given.len() != ids.len() || ids.len() != existing.len() || !ids.iter().all(|id| existing.contains(id)) {
                return Err(ServiceError::invalid("ids", Rule::IdsMismatch { count: existing.len() }));
            }
            api_keys::reorder_api_keys(tx, provider_id, ids, now)?;
            let keys = api_keys::list_api_keys(tx, provider_id)?.into_iter().map(ApiKey::from).collect();
            Ok(Changed { provider_id: provider_id.to_owned(), value: keys })
        })
    }

    /// The pool's view of a provider's keys. A key's last use is the later of the pool's (this
    /// run) and the usage ledger's (every run before), so a restart does not forget it.
    pub fn pool_status(&self, provider_id: &str) -> Result<PoolStatus> {
        let (used, mut read, mut windows, kind) = {
            let conn = self.db.lock()?;
            require_provider(&conn, provider_id)?;
            let kind = providers::get_provider(&conn, provider_id)?.and_then(|row| ProviderKind::parse(&row.kind));
            let read: HashMap<String, BalanceRow> = keypool_store::balances::of_provider(&conn, provider_id)?
                .into_iter()
                .map(|b| (b.key_id.clone(), b))
                .collect();
            let windows: HashMap<String, WindowsRow> =
                keypool_store::balances::windows_of_provider(&conn, provider_id)?
                    .into_iter()
                    .map(|w| (w.key_id.clone(), w))
                    .collect();
            (usage::last_attempts(&conn, provider_id)?, read, windows, kind)
        };
        let now = self.clock.now();
        let provider = ProviderId::new(provider_id);
        let mut keys = self.pool.status(&provider, now)?;
        for key in &mut keys {
            if let Some(at) = used.get(key.key_id.as_str()).map(|at| Timestamp::from_millis(*at)) {
                key.last_used_at = Some(key.last_used_at.map_or(at, |seen| seen.max(at)));
            }
        }
        // Read outside the pool's lock: resolving reads the environment.
        let secrets = self.pool.secrets(&provider)?;
        let unset_vars = secrets.iter().map(|s| self.completions.unresolved_var(s)).collect();
        let expiries = match kind.filter(|kind| kind.row().key_expiry.is_some()) {
            Some(kind) => secrets.iter().map(|s| self.completions.key_expiry(kind, s)).collect(),
            None => vec![None; keys.len()],
        };
        let balances = keys.iter().map(|key| read.remove(key.key_id.as_str())).collect();
        let windows = keys.iter().map(|key| windows.remove(key.key_id.as_str())).collect();
        Ok(PoolStatus { now, keys, unset_vars, balances, windows, expiries })
    }

    /// Ends a key's cooldown by hand. Not a database write, but the UI is told all the same,
    /// under a generation of its own.
    pub fn reset_cooldown(&self, id: &str) -> Result<Written<()>> {
        let row = require_key(&*self.db.lock()?, id)?;
        self.pool.reset_cooldown(&KeyId::new(id));
        Ok(Written { value: (), generation: self.writes.tell(&row.provider_id) })
    }

    /// Tests one pool key against its provider; no chat's binding changes. The test moves the
    /// key as a chat would: refused as the key's, with the question the pool verifies a chat's
    /// 401/403 with (its kind's: the model list, or OpenRouter's key answer), it is disabled. Out of credit, the test is a credit check
    /// (a one-token reply, as the background probes do), and a key that has credit again
    /// returns to rotation now.
    pub async fn test(&self, id: &str) -> Result<ProbeResult> {
        let (endpoint, key, provider) = {
            let conn = self.db.lock()?;
            let key = require_key(&conn, id)?;
            let provider = providers::get_provider(&conn, &key.provider_id)?
                .ok_or_else(|| ServiceError::not_found("provider", &key.provider_id))?;
            let value = self.writes.vault.reveal(&key_account(id), &key.api_key).map_err(ServiceError::Keychain)?;
            (endpoint_of(&provider, &self.writes.vault)?, value, provider)
        };
        let key_id = KeyId::new(id);
        let probe = self.completions.test_key(&endpoint, &key_id, &key).await.probe;
        if probe.ok {
            // Where the provider answers balance reads, the balance says whether the key has
            // credit (and moves it): no one-token reply is needed.
            if let Some(reading) = self.read_balance_of(&endpoint, &key_id, &key).await? {
                self.writes.tell(&provider.id);
                if let Ok(keypool_llm::BalanceFound::Left(balance)) = &reading.found {
                    if !balance.usable {
                        return Ok(ProbeResult {
                            ok: false,
                            problem: Some(ProbeProblem::OutOfCredit),
                            message: "the key's balance is used up".into(),
                            ..probe
                        });
                    }
                }
                return Ok(probe);
            }
        }
        let exhausted = self
            .pool
            .status(&endpoint.id, self.clock.now())?
            .iter()
            .any(|status| status.key_id == key_id && status.state == KeyState::Exhausted);
        let model = provider.default_model.clone().or_else(|| provider.models.first().cloned());
        if let (true, true, Some(model)) = (probe.ok, exhausted, model) {
            let usable = self.completions.probe_credit(&endpoint, &key, &model).await;
            tracing::info!(key = %key_id, usable, "checked an out-of-credit key by hand");
            self.completions.probed(&key_id, usable);
            self.writes.tell(&provider.id);
            if !usable {
                return Ok(ProbeResult {
                    ok: false,
                    status: Some(402),
                    problem: Some(ProbeProblem::OutOfCredit),
                    message: "the key is still out of credit".into(),
                    ..probe
                });
            }
        }
        Ok(probe)
    }
}

impl Keys {
    /// Probes the out-of-credit keys that are due (every provider's), returning the usable ones
    /// to rotation; the UI is told of each provider whose keys came back.
    pub async fn probe_exhausted(&self) -> Result<()> {
        let providers = providers::list_providers(&*self.db.lock()?)?;
        for provider in providers {
            let id = ProviderId::new(provider.id.as_str());
            if ProviderKind::parse(&provider.kind).is_some_and(|kind| kind.row().balance.is_some()) {
                // Their balance reads bring them back (`read_balances`).
                continue;
            }
            let due = self.pool.due_probes(&id, self.clock.now())?;
            let Some(model) = provider.default_model.clone().or_else(|| provider.models.first().cloned()) else {
                continue;
            };
            if due.is_empty() {
                continue;
            }
            let endpoint = endpoint_of(&provider, &self.writes.vault)?;
            let mut returned = false;
            for (key, raw) in due {
                let usable = self.completions.probe_credit(&endpoint, &raw, &model).await;
                tracing::info!(%key, provider = %id, usable, "probed an out-of-credit key");
                self.completions.probed(&key, usable);
                returned |= usable;
            }
            if returned {
                self.writes.tell(&provider.id);
            }
        }
        Ok(())
    }
}

fn require_key(conn: &keypool_store::rusqlite::Connection, id: &str) -> Result<ApiKeyRow> {
    api_keys::get_api_key(conn, id)?.ok_or_else(|| key_not_found(id))
}

fn key_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("API key", id)
}
