//! What prepaid keys have left: each key of a provider that answers balance reads (DeepSeek,
//! Moonshot, SiliconFlow, OpenRouter) is read in the background every [`BALANCE_EVERY`], and by
//! hand from its row's Test; each reading is kept (`key_balances`) for the row, after a restart
//! too, and for `keypool-server keys list`. The reading moves the key (keypool-llm's
//! `read_balance`): nothing left rests it as out of credit, a top-up brings it back.

use std::time::Duration;

use keypool::{KeyId, Secret};
use keypool_llm::{BalanceFound, BalanceReading, ProviderEndpoint};
use keypool_store::balances::{self, BalanceRow};
use keypool_store::{api_keys, providers};

use super::Keys;
use crate::service::error::Result;
use crate::service::providers::endpoint_of;

/// How often each key's balance is read in the background: a top-up is seen within this.
pub const BALANCE_EVERY: Duration = Duration::from_secs(10 * 60);

impl Keys {
    /// Reads the balance of every enabled key whose provider answers balance reads and whose last
    /// reading is older than [`BALANCE_EVERY`] (or that has none), keeps each reading, and tells
    /// the UI of each provider whose keys were read.
    pub async fn read_balances(&self) -> Result<()> {
        let now = self.clock.now().as_millis();
        let due = {
            let conn = self.db.lock()?;
            let mut due = Vec::new();
            for provider in providers::list_providers(&conn)? {
                let Some(kind) = keypool_llm::ProviderKind::parse(&provider.kind) else { continue };
                if kind.row().balance.is_none() {
                    continue;
                }
                let read: std::collections::HashMap<String, i64> =
                    balances::of_provider(&conn, &provider.id)?.into_iter().map(|b| (b.key_id, b.read_at)).collect();
                let keys: Vec<String> = api_keys::list_api_keys(&conn, &provider.id)?
                    .into_iter()
                    .filter(|key| key.enabled)
                    .filter(|key| read.get(&key.id).is_none_or(|at| now - at >= BALANCE_EVERY.as_millis() as i64))
                    .map(|key| key.id)
                    .collect();
                if !keys.is_empty() {
                    due.push((endpoint_of(&provider, &self.writes.vault)?, provider.id, keys));
                }
            }
            due
        };
        for (endpoint, provider_id, keys) in due {
            let stored = self.pool.secrets_by_key(&endpoint.id)?;
            tracing::info!(provider = %provider_id, keys = keys.len(), "reading the keys' balances");
            for key in keys {
                let Some(secret) = stored.iter().find(|(id, _)| id.as_str() == key).map(|(_, s)| s.clone()) else {
                    continue;
                };
                self.read_balance_of(&endpoint, &KeyId::new(key), &secret).await?;
            }
            self.writes.tell(&provider_id);
        }
        Ok(())
    }

    /// The last balance readings of `provider_id`'s keys (none for a provider that reads none).
    pub fn balances(&self, provider_id: &str) -> Result<Vec<BalanceRow>> {
        Ok(balances::of_provider(&*self.db.lock()?, provider_id)?)
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
