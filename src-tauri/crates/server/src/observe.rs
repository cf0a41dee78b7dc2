//! The server's one plug for observers: what the completion service records (every attempt, a
//! key disabled or enabled again) and what the members' book decides (a budget spent), told to
//! each observer (the metrics, the alerts) as it lies, without a copy of an attempt's record for
//! each. The members' book is charged by the store's services themselves.

use std::sync::Arc;

use keypool::{DisableReason, KeyId, ProviderId, Timestamp};
use keypool_api::service::{BookWatch, BudgetSpent};
use keypool_llm::{AttemptRecord, Recorder};

/// One observer of the server: each method is told one event, on the thread that made it, and
/// must only count or queue.
pub trait Observe: Send + Sync {
    fn attempted(&self, _record: &AttemptRecord) {}
    fn key_disabled(&self, _provider: &ProviderId, _key: &KeyId, _reason: DisableReason, _at: Timestamp) {}
    fn key_enabled(&self, _provider: &ProviderId, _key: &KeyId, _at: Timestamp) {}
    fn key_out_of_credit(&self, _provider: &ProviderId, _key: &KeyId, _at: Timestamp) {}
    fn key_expiring(&self, _provider: &ProviderId, _key: &KeyId, _expires_at: Timestamp, _now: Timestamp) {}
    fn key_window_used_up(&self, _provider: &ProviderId, _key: &KeyId, _until: Timestamp, _now: Timestamp) {}
    fn budget_spent(&self, _spent: &BudgetSpent) {}
}

/// Every observer: the completion service's recorder and the book's watch.
pub struct Observers(pub Vec<Arc<dyn Observe>>);

impl Recorder for Observers {
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp) {
        self.0.iter().for_each(|observer| observer.key_disabled(provider, key, reason, at));
    }

    fn attempt(&self, record: AttemptRecord) {
        self.0.iter().for_each(|observer| observer.attempted(&record));
    }

    fn key_enabled(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        self.0.iter().for_each(|observer| observer.key_enabled(provider, key, at));
    }

    fn key_out_of_credit(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        self.0.iter().for_each(|observer| observer.key_out_of_credit(provider, key, at));
    }

    fn key_expiring(&self, provider: &ProviderId, key: &KeyId, expires_at: Timestamp, now: Timestamp) {
        self.0.iter().for_each(|observer| observer.key_expiring(provider, key, expires_at, now));
    }

    fn key_window_used_up(&self, provider: &ProviderId, key: &KeyId, until: Timestamp, now: Timestamp) {
        self.0.iter().for_each(|observer| observer.key_window_used_up(provider, key, until, now));
    }
}

impl BookWatch for Observers {
    fn budget_spent(&self, spent: &BudgetSpent) {
        self.0.iter().for_each(|observer| observer.budget_spent(spent));
    }
}
