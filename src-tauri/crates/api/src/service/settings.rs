//! The app's preferences, kept in the database and applied where they take effect.

use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, KeyPool};
use keypool_store::{settings, Database};

use super::Result;

/// The longest a request may wait for a key to free up, as the user may set it.
pub const MAX_WAIT_LIMIT_SECONDS: u32 = 120;
/// How long usage history is kept by default.
pub const DEFAULT_RETENTION_DAYS: u32 = 180;

const MAX_WAIT: &str = "pool.maxWaitSeconds";
const BINDING_IDLE: &str = "pool.bindingIdleMinutes";
const RETENTION: &str = "usage.retentionDays";

/// Every preference, with its current value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppSettings {
    /// How long a chat waits for a key to free up when all are spent, cooling or busy.
    pub max_wait_seconds: u32,
    /// How long a chat keeps its key without a message (about the providers' prompt cache life).
    pub binding_idle_minutes: u32,
    /// How long usage history is kept.
    pub usage_retention_days: u32,
}

/// The preferences to change; `None` keeps one.
#[derive(Debug, Clone, Copy, Default)]
pub struct SettingsPatch {
    pub max_wait_seconds: Option<u32>,
    pub binding_idle_minutes: Option<u32>,
    pub usage_retention_days: Option<u32>,
}

pub struct Settings {
    db: Arc<Database>,
    pool: Arc<KeyPool>,
    clock: Arc<dyn Clock>,
}

impl Settings {
    /// The settings over `db`; the stored ones take effect at once (the defaults, if they
    /// cannot be read).
    pub(crate) fn open(db: Arc<Database>, pool: Arc<KeyPool>, clock: Arc<dyn Clock>) -> Self {
        let settings = Settings { db, pool, clock };
        match settings.get() {
            Ok(stored) => settings.apply(stored),
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
        })
    }

    pub fn update(&self, patch: SettingsPatch) -> Result<AppSettings> {
        let now = self.clock.now().as_millis();
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
            tx.commit()?;
        }
        let current = self.get()?;
        self.apply(current);
        Ok(current)
    }

    fn apply(&self, settings: AppSettings) {
        self.pool.set_max_wait(Duration::from_secs(u64::from(settings.max_wait_seconds)));
        self.pool.set_binding_idle(Duration::from_secs(u64::from(settings.binding_idle_minutes) * 60));
    }
}
