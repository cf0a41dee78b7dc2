//! What keys have left, read from their providers in the background:
//! - prepaid keys' balances (DeepSeek, Moonshot, SiliconFlow, OpenRouter): every
//!   [`BALANCE_EVERY`], and by hand from a row's Test;
//! - coding plans' windows (Z.ai, MiniMax): every [`WINDOWS_EVERY`], and a minute after a key
//!   began to rest (a used-up window's refusal), so its reset is known.
//!
//! Each reading is kept (`key_balances`, `key_windows`) for the key's row, after a restart too,
//! and for `keypool-server keys list`. A reading moves the key (keypool-llm's `read_balance`,
//! `read_windows`): nothing left rests it (out of credit, or until the window's reset), a top-up
//! brings it back. A read never sits on a request's path; keypool-llm reads a key at most once a
//! minute.

use std::collections::HashMap;
use std::time::Duration;

use keypool::{KeyId, KeyState, ProviderId, Secret};
use keypool_llm::{BalanceFound, BalanceReading, KindRow, ProviderEndpoint, WindowReading};
use keypool_store::balances::{self, BalanceRow, WindowsRow};
use keypool_store::{api_keys, providers};

use super::Keys;
use crate::service::error::Result;
use crate::service::providers::endpoint_of;

/// How often each key's balance is read in the background: a top-up is seen within this.
pub const BALANCE_EVERY: Duration = Duration::from_secs(10 * 60);

/// How often each plan key's windows are read in the background.
pub const WINDOWS_EVERY: Duration = Duration::from_secs(5 * 60);

/// How soon a resting plan key's windows are read again (its window's reset is learned).
const WINDOWS_WHILE_RESTING: Duration = Duration::from_secs(60);

/// The enabled keys of one provider due for a read, with its endpoint.
struct Due {
    endpoint: ProviderEndpoint,
    provider_id: String,
    keys: Vec<(KeyId, Secret)>,
}

impl Keys {
    /// Reads the balance of every enabled key whose provider answers balance reads and whose last
    /// reading is older than [`BALANCE_EVERY`] (or that has none), keeps each reading, and tells
    /// the UI of each provider whose keys were read.
    pub async fn read_balances(&self) -> Result<()> {
        let due = self.due(
            |row| row.balance.is_some(),
            |conn, provider| {
                Ok(balances::of_provider(conn, provider)?.into_iter().map(|b| (b.key_id, b.read_at)).collect())
            },
            |_, age| age >= BALANCE_EVERY,
        )?;
        for Due { endpoint, provider_id, keys } in due {
            tracing::info!(provider = %provider_id, keys = keys.len(), "reading the keys' balances");
            for (key, secret) in keys {
                self.read_balance_of(&endpoint, &key, &secret).await?;
            }
            self.writes.tell(&provider_id);
        }
        Ok(())
    }

    /// Reads the windows of every enabled key of a coding plan that answers window reads, whose
    /// last reading is older than [`WINDOWS_EVERY`] (a minute, while the key rests), keeps each
    /// reading, and tells the UI of each provider whose keys were read.
    pub async fn read_windows(&self) -> Result<()> {
        let due = self.due(
            |row| row.windows.is_some(),
            |conn, provider| {
                Ok(balances::windows_of_provider(conn, provider)?.into_iter().map(|w| (w.key_id, w.read_at)).collect())
            },
            |resting, age| age >= if resting { WINDOWS_WHILE_RESTING } else { WINDOWS_EVERY },
        )?;
        for Due { endpoint, provider_id, keys } in due {
            tracing::info!(provider = %provider_id, keys = keys.len(), "reading the keys' plan windows");
            for (key, secret) in keys {
                if let Some(reading) = self.completions.read_windows(&endpoint, &key, &secret).await {
                    balances::put_windows(&*self.db.lock()?, &windows_row(&key, &reading))?;
                }
            }
            self.writes.tell(&provider_id);
        }
        Ok(())
    }

    /// The enabled keys of providers whose kind `reads`, whose last reading (`last`: each key's
    /// time of it) is as old as `due` says (given whether the key rests now), or that have none.
    fn due(
        &self,
        reads: impl Fn(&KindRow) -> bool,
        last: impl Fn(&keypool_store::rusqlite::Connection, &str) -> Result<HashMap<String, i64>>,
        due: impl Fn(bool, Duration) -> bool,
    ) -> Result<Vec<Due>> {
        let now = self.clock.now();
        let found = {
            let conn = self.db.lock()?;
            let mut found = Vec::new();
            for provider in providers::list_providers(&conn)? {
                let Some(kind) = keypool_llm::ProviderKind::parse(&provider.kind) else { continue };
                if !reads(kind.row()) {
                    continue;
                }
                let read = last(&conn, &provider.id)?;
                let enabled: Vec<String> = api_keys::list_api_keys(&conn, &provider.id)?
                    .into_iter()
                    .filter(|k| k.enabled)
                    .map(|k| k.id)
                    .collect();
                if !enabled.is_empty() {
                    found.push((endpoint_of(&provider, &self.writes.vault)?, provider.id, read, enabled));
                }
            }
            found
        };
        let mut due_now = Vec::new();
        for (endpoint, provider_id, read, enabled) in found {
            let pool = ProviderId::new(provider_id.as_str());
            let resting: Vec<KeyId> = self
                .pool
                .status(&pool, now)?
                .into_iter()
                .filter(|k| k.state == KeyState::Cooling)
                .map(|k| k.key_id)
                .collect();
            let keys: Vec<(KeyId, Secret)> = self
                .pool
                .secrets_by_key(&pool)?
                .into_iter()
                .filter(|(key, _)| enabled.iter().any(|id| id == key.as_str()))
                .filter(|(key, _)| {
                    read.get(key.as_str()).is_none_or(|&at| {
                        let age = Duration::from_millis(u64::try_from(now.as_millis() - at).unwrap_or(0));
                        due(resting.contains(key), age)
                    })
                })
                .collect();
            if !keys.is_empty() {
                due_now.push(Due { endpoint, provider_id, keys });
            }
        }
        Ok(due_now)
    }

    /// Tells of the keys that expire within a week (or have), where their kind's keys say when
    /// (short-term Bedrock keys): a desktop alert once per expiry, a server's webhook.
    pub fn check_expiries(&self) -> Result<()> {
        let providers = providers::list_providers(&*self.db.lock()?)?;
        for provider in providers {
            let Some(kind) = keypool_llm::ProviderKind::parse(&provider.kind) else { continue };
            if kind.row().key_expiry.is_none() {
                continue;
            }
            let endpoint = endpoint_of(&provider, &self.writes.vault)?;
            self.completions.tell_expiring(&endpoint);
        }
        Ok(())
    }

    /// The last balance readings of `provider_id`'s keys (none for a provider that reads none).
    pub fn balances(&self, provider_id: &str) -> Result<Vec<BalanceRow>> {
        Ok(balances::of_provider(&*self.db.lock()?, provider_id)?)
    }

    /// The last window readings of `provider_id`'s keys (none for a provider that reads none).
    pub fn windows(&self, provider_id: &str) -> Result<Vec<WindowsRow>> {
        Ok(balances::windows_of_provider(&*self.db.lock()?, provider_id)?)
    }

    /// Reads `key`'s balance (none where its kind reads none) and keeps the reading.
    pub(super) async fn read_balance_of(
        &self,
        endpoint: &ProviderEndpoint,
        key: &KeyId,
        secret: &Secret,
    ) -> Result<Option<BalanceReading>> {
        let Some(reading) = self.completions.read_balance(endpoint, key, secret).await else { return Ok(None) };
        balances::put(&*self.db.lock()?, &row_of(key, &reading))?;
        Ok(Some(reading))
    }
}

fn row_of(key: &KeyId, reading: &BalanceReading) -> BalanceRow {
    let base = BalanceRow {
        key_id: key.to_string(),
        read_at: reading.at.as_millis(),
        amount: None,
        usable: true,
        problem: None,
        status: None,
    };
    match &reading.found {
        Ok(BalanceFound::Left(balance)) => BalanceRow {
            amount: Some((balance.amount, balance.currency.clone())),
            usable: balance.usable,
            status: Some(200),
            ..base
        },
        Ok(BalanceFound::Unlimited) => BalanceRow { status: Some(200), ..base },
        Err(problem) => BalanceRow { problem: Some(problem.message.clone()), status: problem.status, ..base },
    }
}

fn windows_row(key: &KeyId, reading: &WindowReading) -> WindowsRow {
    let (windows, problem, status) = match &reading.found {
        Ok(windows) => (serde_json::to_string(windows).unwrap_or_else(|_| "[]".into()), None, Some(200)),
        Err(problem) => ("[]".into(), Some(problem.message.clone()), problem.status),
    };
    WindowsRow { key_id: key.to_string(), read_at: reading.at.as_millis(), windows, problem, status }
}
