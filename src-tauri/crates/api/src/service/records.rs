//! Where the completion service's records go: the disables the pool decides on to the store's
//! one write path, every upstream attempt to the usage ledger.

use std::sync::Arc;

use keypool::{DisableReason, KeyId, ProviderId, Timestamp};
use keypool_llm::{AttemptRecord, Recorder};

use super::ledger::Ledger;
use super::members::MemberBook;
use super::write_path::WritePath;
use super::PoolAlerts;

pub(crate) struct Records {
    pub writes: Arc<WritePath>,
    pub ledger: Ledger,
    /// Told of everything after the store (a server's members, metrics and alerts).
    pub tap: Option<Arc<dyn Recorder>>,
    /// The user's, of keys lost.
    pub alerts: Arc<PoolAlerts>,
    /// Charged with what each member's (each named token's) answers used.
    pub book: MemberBook,
}

impl Recorder for Records {
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp) {
        self.writes.disable_key(provider, key, reason, at);
        self.alerts.key_disabled(provider, key, reason.status(), at);
        if let Some(tap) = &self.tap {
            tap.key_disabled(provider, key, reason, at);
        }
    }

    fn key_window_used_up(&self, provider: &ProviderId, key: &KeyId, until: Timestamp, now: Timestamp) {
        self.alerts.key_window_used_up(provider, key, until, now);
        if let Some(tap) = &self.tap {
            tap.key_window_used_up(provider, key, until, now);
        }
    }

    fn key_expiring(&self, provider: &ProviderId, key: &KeyId, expires_at: Timestamp, now: Timestamp) {
        self.alerts.key_expiring(provider, key, expires_at, now);
        if let Some(tap) = &self.tap {
            tap.key_expiring(provider, key, expires_at, now);
        }
    }

    fn key_out_of_credit(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        self.alerts.key_out_of_credit(provider, at);
        if let Some(tap) = &self.tap {
            tap.key_out_of_credit(provider, key, at);
        }
    }

    fn key_enabled(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        self.writes.enable_rejected_key(provider, key, at);
        if let Some(tap) = &self.tap {
            tap.key_enabled(provider, key, at);
        }
    }

    fn enabled_at(&self, key: &KeyId) -> Option<Timestamp> {
        let conn = self.writes.db.lock().ok()?;
        match keypool_store::api_keys::enabled_at(&conn, key.as_str()) {
            Ok(stamp) => stamp.map(Timestamp::from_millis),
            Err(error) => {
                tracing::warn!(%key, %error, "when the key was last enabled again could not be read");
                None
            }
        }
    }

    fn attempt(&self, record: AttemptRecord) {
        self.ledger.record(&record);
        self.alerts.attempt(&record);
        if record.member.is_some() {
            self.book.charged(&record);
        }
        if let Some(tap) = &self.tap {
            tap.attempt(record);
        }
    }
}
