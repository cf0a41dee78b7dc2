//! What the app tells its user without being asked when the pool loses keys: a key the provider
//! refused (and the pool disabled), a key out of credit, a provider left without a usable key.
//! Each once: a key when it dies (again after it was enabled and died again), a provider when it
//! runs out of usable keys (again only after one of them served, or one added since died). The shell shows each as a
//! desktop notification, worded by the UI; Settings → General switches them off. The last
//! [`RECENT`] are kept for the app to list too, switched off or not: a desktop without a
//! notification service shows none of them, and the list is where the user finds them then.
//!
//! Told on the request's task, by the completion service's records: a set's lookup for every
//! attempt, the pool's status only when a key died or the provider was unusable.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use keypool::{KeyId, KeyPool, KeyState, ProviderId, Timestamp};
use keypool_llm::{AttemptOutcome, AttemptRecord};
use keypool_store::{api_keys, providers, Database};

use super::EventSink;

/// A loss of keys to tell the user of (the payload of `pool:alert`). Names as the user knows them:
/// the provider's, and the key's label or masked preview (never the key).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PoolAlert {
    /// The provider refused the key (`status`: 401 or 403) and the pool disabled it.
    KeyDisabled { provider_id: String, provider: String, key: String, status: u16 },
    /// The provider said the key is out of credit.
    KeyOutOfCredit { provider_id: String, provider: String, key: String },
    /// Every key of the provider is disabled, out of credit or unreadable.
    ProviderUnusable { provider_id: String, provider: String },
    /// A coding plan's window of the key is used up: it rests until `resets_at` (milliseconds
    /// since the epoch), then serves again by itself.
    KeyWindowUsedUp { provider_id: String, provider: String, key: String, resets_at: i64 },
    /// The key expires within a week (`expires_at`, milliseconds since the epoch), or has.
    KeyExpiring { provider_id: String, provider: String, key: String, expires_at: i64 },
}

/// An alert as the app lists it: when it was told (milliseconds since the epoch), and what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RecentAlert {
    pub at: i64,
    pub alert: PoolAlert,
}

/// How many alerts the app lists, the newest first; older ones are forgotten.
pub const RECENT: usize = 50;

#[derive(Default)]
struct Told {
    /// Keys told out of credit, until they serve again.
    out_of_credit: HashSet<(ProviderId, KeyId)>,
    /// Providers told unusable, until one of their keys can serve again.
    unusable: HashSet<ProviderId>,
    /// Keys told to expire, with the expiry told (a key replaced by one that expires later is
    /// told again when it nears its own).
    expiring: HashSet<(ProviderId, KeyId, i64)>,
    /// Keys told their plan window is used up, with the reset told: each window once.
    windows: HashSet<(ProviderId, KeyId, i64)>,
}

pub struct PoolAlerts {
    db: Arc<Database>,
    pool: Arc<KeyPool>,
    events: Arc<dyn EventSink>,
    /// Something shows them (the app); a server has webhook alerts of its own.
    shown: bool,
    /// Settings → General: the user wants them (on unless switched off).
    on: AtomicBool,
    told: Mutex<Told>,
    /// The last [`RECENT`] told, the oldest first (kept this run only).
    recent: Mutex<VecDeque<RecentAlert>>,
}

impl PoolAlerts {
    /// The alerts told to `events`; with `shown` false (a server) they are not even looked for.
    pub(crate) fn new(db: Arc<Database>, pool: Arc<KeyPool>, events: Arc<dyn EventSink>, shown: bool) -> PoolAlerts {
        PoolAlerts {
            db,
            pool,
            events,
            shown,
            on: AtomicBool::new(true),
            told: Mutex::default(),
            recent: Mutex::default(),
        }
    }

    /// Tells the user from now on, or not.
    pub(crate) fn switch(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    /// The alerts told this run, the newest first (at most [`RECENT`]).
    pub fn recent(&self) -> Vec<RecentAlert> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner()).iter().rev().cloned().collect()
    }

    fn tell(&self, alert: PoolAlert, at: Timestamp) {
        {
            let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(RecentAlert { at: at.as_millis(), alert: alert.clone() });
        }
        if self.on.load(Ordering::Relaxed) {
            tracing::info!(?alert, "the user is told of a key lost");
            self.events.pool_alert(&alert);
        }
    }

    /// The provider's name, and the key's label or masked preview.
    fn names(&self, provider: &ProviderId, key: Option<&KeyId>) -> (String, String) {
        let Ok(conn) = self.db.lock() else { return (provider.to_string(), String::new()) };
        let name = providers::get_provider(&conn, provider.as_str()).ok().flatten().map(|p| p.name);
        let key = key.and_then(|key| api_keys::get_api_key(&conn, key.as_str()).ok().flatten());
        let key =
            key.map(|row| row.label.clone().filter(|l| !l.trim().is_empty()).unwrap_or_else(|| row.api_key.preview()));
        (name.unwrap_or_else(|| provider.to_string()), key.unwrap_or_default())
    }

    /// The pool disabled `key` of `provider`: told, and the provider checked.
    pub(crate) fn key_disabled(&self, provider: &ProviderId, key: &KeyId, status: u16, at: Timestamp) {
        if !self.shown {
            return;
        }
        let (name, label) = self.names(provider, Some(key));
        self.tell(PoolAlert::KeyDisabled { provider_id: provider.to_string(), provider: name, key: label, status }, at);
        // The key served until now: the provider had a usable key, whatever was told before.
        self.check_provider(provider, at, true);
    }

    /// After every attempt: keys newly out of credit are told; a provider told unusable is
    /// checked again until one of its keys can serve.
    pub(crate) fn attempt(&self, record: &AttemptRecord) {
        if !self.shown {
            return;
        }
        let was_unusable = self.told.lock().unwrap_or_else(|e| e.into_inner()).unusable.contains(&record.provider);
        if record.outcome == AttemptOutcome::QuotaExhausted {
            let newly = self.out_of_credit(&record.provider, record.at);
            self.check_provider(&record.provider, record.at, newly);
        } else if was_unusable {
            self.check_provider(&record.provider, record.at, false);
        }
    }

    /// A plan window of `key` is used up until `until`: told once for that reset.
    pub(crate) fn key_window_used_up(&self, provider: &ProviderId, key: &KeyId, until: Timestamp, now: Timestamp) {
        if !self.shown {
            return;
        }
        let new = {
            let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
            told.windows.retain(|(_, _, at)| *at > now.as_millis());
            told.windows.insert((provider.clone(), key.clone(), until.as_millis()))
        };
        if new {
            let (name, label) = self.names(provider, Some(key));
            let alert = PoolAlert::KeyWindowUsedUp {
                provider_id: provider.to_string(),
                provider: name,
                key: label,
                resets_at: until.as_millis(),
            };
            self.tell(alert, now);
        }
    }

    /// A key of `provider` expires at `at`, within a week: told once for that expiry.
    pub(crate) fn key_expiring(&self, provider: &ProviderId, key: &KeyId, at: Timestamp, now: Timestamp) {
        if !self.shown {
            return;
        }
        let new = self.told.lock().unwrap_or_else(|e| e.into_inner()).expiring.insert((
            provider.clone(),
            key.clone(),
            at.as_millis(),
        ));
        if new {
            let (name, label) = self.names(provider, Some(key));
            let alert = PoolAlert::KeyExpiring {
                provider_id: provider.to_string(),
                provider: name,
                key: label,
                expires_at: at.as_millis(),
            };
            self.tell(alert, now);
        }
    }

    /// A balance read rested a key of `provider` as out of credit: told as a request's 402 is.
    pub(crate) fn key_out_of_credit(&self, provider: &ProviderId, at: Timestamp) {
        if !self.shown {
            return;
        }
        let newly = self.out_of_credit(provider, at);
        self.check_provider(provider, at, newly);
    }

    /// Tells the keys newly out of credit; whether there was one.
    fn out_of_credit(&self, provider: &ProviderId, at: Timestamp) -> bool {
        let Ok(keys) = self.pool.status(provider, at) else { return false };
        let newly: Vec<KeyId> = {
            let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
            keys.iter()
                .filter(|k| k.state == KeyState::Exhausted)
                .filter(|k| told.out_of_credit.insert((provider.clone(), k.key_id.clone())))
                .map(|k| k.key_id.clone())
                .collect()
        };
        let any = !newly.is_empty();
        for key in newly {
            let (name, label) = self.names(provider, Some(&key));
            self.tell(PoolAlert::KeyOutOfCredit { provider_id: provider.to_string(), provider: name, key: label }, at);
        }
        any
    }

    /// Tells once that `provider` has no usable key (none active or cooling); forgets it, and its
    /// keys out of credit, once one can serve again, or when a key that served until now was
    /// just lost (`lost_a_usable_key`: one added since the last telling has died).
    fn check_provider(&self, provider: &ProviderId, at: Timestamp, lost_a_usable_key: bool) {
        let Ok(keys) = self.pool.status(provider, at) else { return };
        let usable = keys.is_empty() || keys.iter().any(|k| matches!(k.state, KeyState::Active | KeyState::Cooling));
        let newly = {
            let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
            if lost_a_usable_key {
                told.unusable.remove(provider);
            }
            told.out_of_credit.retain(|(of, id)| {
                of != provider || keys.iter().any(|k| &k.key_id == id && k.state == KeyState::Exhausted)
            });
            match usable {
                true => {
                    told.unusable.remove(provider);
                    false
                }
                false => told.unusable.insert(provider.clone()),
            }
        };
        if newly {
            let (name, _) = self.names(provider, None);
            self.tell(PoolAlert::ProviderUnusable { provider_id: provider.to_string(), provider: name }, at);
        }
    }
}
