//! The app's preferences, kept in the database and applied where they take effect.

use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, KeyPool};
use keypool_store::{settings, Database};

use super::Result;

/// The longest a request may wait for a key to free up, as the user may set it.
pub const MAX_WAIT_LIMIT_SECONDS: u32 = 120;

const MAX_WAIT: &str = "pool.maxWaitSeconds";

/// Every preference, with its current value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppSettings {
    /// How long a chat waits for a key to free up when all are spent, cooling or busy.
    pub max_wait_seconds: u32,
}

/// The preferences to change; `None` keeps one.
#[derive(Debug, Clone, Copy, Default)]
pub struct SettingsPatch {
    pub max_wait_seconds: Option<u32>,
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
        let default_wait = u32::try_from(self.pool.config().max_wait.as_secs()).unwrap_or(MAX_WAIT_LIMIT_SECONDS);
        let max_wait_seconds = settings::get(&conn, MAX_WAIT)?
            .and_then(|json| serde_json::from_str::<u32>(&json).ok())
            .map_or(default_wait, |s| s.min(MAX_WAIT_LIMIT_SECONDS));
        Ok(AppSettings { max_wait_seconds })
    }

    pub fn update(&self, patch: SettingsPatch) -> Result<AppSettings> {
        let now = self.clock.now().as_millis();
        {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            if let Some(seconds) = patch.max_wait_seconds {
                settings::set(&tx, MAX_WAIT, &seconds.to_string(), now)?;
            }
            tx.commit()?;
        }
        let current = self.get()?;
        self.apply(current);
        Ok(current)
    }

    fn apply(&self, settings: AppSettings) {
        self.pool.set_max_wait(Duration::from_secs(u64::from(settings.max_wait_seconds)));
    }
}
