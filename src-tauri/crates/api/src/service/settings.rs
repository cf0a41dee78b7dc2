//! The app's preferences, kept in the database and applied where they take effect.

use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, KeyPool};
use keypool_llm::{CompletionService, ProxyChoice};
use keypool_store::{settings, Database};

use super::PoolAlerts;
use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

/// The longest a request may wait for a key to free up, as the user may set it.
pub const MAX_WAIT_LIMIT_SECONDS: u32 = 120;
/// How long usage history is kept by default.
pub const DEFAULT_RETENTION_DAYS: u32 = 180;

const MAX_WAIT: &str = "pool.maxWaitSeconds";
const BINDING_IDLE: &str = "pool.bindingIdleMinutes";
const RETENTION: &str = "usage.retentionDays";
const PROXY: &str = "http.proxy";
const NOTIFY: &str = "notifications.keysLost";

/// Which proxy provider requests go through: none unless the user chose one.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "mode", content = "url", rename_all = "lowercase")]
pub enum Proxy {
    #[default]
    None,
    /// The system's (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`).
    System,
    /// This address (`http://` or `https://` with a host).
    Url(String),
}

impl Proxy {
    fn choice(&self) -> ProxyChoice {
        match self {
            Proxy::None => ProxyChoice::None,
            Proxy::System => ProxyChoice::System,
            Proxy::Url(url) => ProxyChoice::Url(url.clone()),
        }
    }
}

/// Every preference, with its current value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSettings {
    /// How long a chat waits for a key to free up when all are spent, cooling or busy.
    pub max_wait_seconds: u32,
    /// How long a chat keeps its key without a message (about the providers' prompt cache life).
    pub binding_idle_minutes: u32,
    /// How long usage history is kept.
    pub usage_retention_days: u32,
    /// Which proxy provider requests go through (never for this machine).
    pub proxy: Proxy,
    /// A desktop notification when a key dies or a provider has no usable key left.
    pub notify_keys_lost: bool,
}

/// The preferences to change; `None` keeps one.
#[derive(Debug, Clone, Default)]
pub struct SettingsPatch {
    pub max_wait_seconds: Option<u32>,
    pub binding_idle_minutes: Option<u32>,
    pub usage_retention_days: Option<u32>,
    pub proxy: Option<Proxy>,
    pub notify_keys_lost: Option<bool>,
}

pub struct Settings {
    db: Arc<Database>,
    pool: Arc<KeyPool>,
    completions: CompletionService,
    clock: Arc<dyn Clock>,
    alerts: Arc<PoolAlerts>,
}

impl Settings {
    /// The settings over `db`; the stored ones take effect at once (the defaults, if they
    /// cannot be read).
    pub(crate) fn open(
        db: Arc<Database>,
        pool: Arc<KeyPool>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
        alerts: Arc<PoolAlerts>,
    ) -> Self {
        let settings = Settings { db, pool, completions, clock, alerts };
        match settings.get() {
            Ok(stored) => settings.apply(&stored),
            Err(error) => tracing::warn!(%error, "could not read the settings; the defaults apply"),
        }
        settings
    }

    pub fn get(&self) -> Result<AppSettings> {
        let conn = self.db.lock()?;
        let stored = |key: &str, default: u32| -> Result<u32> {
            Ok(settings::get(&conn, key)?.and_then(|json| serde_json::from_str::<u32>(&json).ok()).unwrap_or(default))
        };
        let config = self.pool.config();
        Ok(AppSettings {
            max_wait_seconds: stored(MAX_WAIT, u32::try_from(config.max_wait.as_secs()).unwrap_or(20))?
                .min(MAX_WAIT_LIMIT_SECONDS),
            binding_idle_minutes: stored(
                BINDING_IDLE,
                u32::try_from(config.binding_idle.as_secs() / 60).unwrap_or(60),
            )?,
            usage_retention_days: stored(RETENTION, DEFAULT_RETENTION_DAYS)?,
            proxy: settings::get(&conn, PROXY)?.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default(),
            notify_keys_lost: settings::get(&conn, NOTIFY)?
                .and_then(|json| serde_json::from_str::<bool>(&json).ok())
                .unwrap_or(true),
        })
    }

    /// Changes what `patch` gives. A proxy address that cannot be used is refused, and nothing
    /// changes.
    pub fn update(&self, patch: SettingsPatch) -> Result<AppSettings> {
        let now = self.clock.now().as_millis();
        if let Some(proxy) = &patch.proxy {
            // Tried first: a proxy the HTTP client refuses is refused here, before anything is kept.
            if let Err(error) = self.completions.check_proxy(&proxy.choice()) {
                return Err(ServiceError::invalid("proxy", Rule::BadProxy { reason: error.0 }));
            }
        }
        {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            for (key, value) in [
                (MAX_WAIT, patch.max_wait_seconds),
                (BINDING_IDLE, patch.binding_idle_minutes),
                (RETENTION, patch.usage_retention_days),
            ] {
                if let Some(value) = value {
                    settings::set(&tx, key, &value.to_string(), now)?;
                }
            }
            if let Some(notify) = patch.notify_keys_lost {
                settings::set(&tx, NOTIFY, &notify.to_string(), now)?;
            }
            if let Some(proxy) = &patch.proxy {
                settings::set(&tx, PROXY, &serde_json::to_string(proxy).expect("a proxy serializes"), now)?;
            }
            tx.commit()?;
        }
        let current = self.get()?;
        self.apply(&current);
        Ok(current)
    }

    fn apply(&self, settings: &AppSettings) {
        self.alerts.switch(settings.notify_keys_lost);
        self.pool.set_max_wait(Duration::from_secs(u64::from(settings.max_wait_seconds)));
        self.pool.set_binding_idle(Duration::from_secs(u64::from(settings.binding_idle_minutes) * 60));
        if let Err(error) = self.completions.set_proxy(&settings.proxy.choice()) {
            tracing::warn!(%error, "the stored proxy is not usable; provider requests go without one");
        }
    }
}
