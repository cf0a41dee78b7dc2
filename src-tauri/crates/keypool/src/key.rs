//! One key in the pool and what the pool learned about it: the per-key state machine.
//!
//! ```text
//!             rate limit (429/529)              auth rejection (401/403)
//!   Active ───────────────────────▶ Cooling    Active|Cooling ──────────▶ Refused
//!     ▲                                │          (until the store says disabled,
//!     └──── success, expiry, reset ────┘           or the user enables it again)
//! ```
//! `enabled = false` in the store is Disabled whatever the rest says.

use std::sync::Arc;

use crate::{DisableReason, FailureOutcome, KeyEntry, KeyError, KeyId, KeyState, KeyStatus, PoolConfig, Secret};
use crate::{FailureKind, Timestamp};

pub(crate) struct PoolKey {
    pub id: KeyId,
    pub label: Option<Arc<str>>,
    /// How people know the key: its label, or the preview of the stored value (`$NAME` as
    /// written), never anything derived from a resolved value.
    pub name: Arc<str>,
    pub secret: Secret,
    /// `secret` is a `$NAME` reference, decided once at load rather than on every hand-out.
    pub env_ref: bool,
    pub enabled: bool,
    pub weight: u32,
    /// Enabled, not refused, not cooling, as of the provider's last rebuild.
    pub available: bool,
    pub health: Health,
}

/// What the pool learned about a key at run time; carried across reloads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Health {
    cooling_until: Option<Timestamp>,
    consecutive_errors: u32,
    last_error: Option<KeyError>,
    last_error_at: Option<Timestamp>,
    last_used_at: Option<Timestamp>,
    request_count: u64,
    failure_count: u64,
    /// The provider rejected the key. The pool refuses it from the report on, before the store
    /// records the disable, and until a load shows the store did (or the user enables it again).
    refused: bool,
}

impl PoolKey {
    pub fn new(entry: KeyEntry, mut health: Health) -> PoolKey {
        if !entry.enabled {
            // The store has recorded the disable (or the user switched the key off): it is the truth now.
            health.refused = false;
        }
        PoolKey {
            env_ref: entry.api_key.env_var().is_some(),
            name: Arc::from(entry.label.clone().unwrap_or_else(|| entry.api_key.preview())),
            id: entry.id,
            label: entry.label.map(Arc::from),
            secret: entry.api_key,
            enabled: entry.enabled,
            weight: entry.weight.clamp(1, 100),
            available: false,
            health,
        }
    }

    /// Enabled and not refused: available unless cooling.
    pub fn usable(&self) -> bool {
        self.enabled && !self.health.refused
    }

    /// The end of a cooldown still running at `now`.
    pub fn cooling_until(&self, now: Timestamp) -> Option<Timestamp> {
        self.health.cooling_until.filter(|&until| until > now)
    }

    /// When a cooldown ends, running or not (the sweep clears expired ones).
    pub fn cooldown_end(&self) -> Option<Timestamp> {
        self.health.cooling_until
    }

    pub fn record_hand_out(&mut self, now: Timestamp) {
        self.health.request_count += 1;
        self.health.last_used_at = Some(now);
    }

    /// A success ends the cooldown and the streak. Returns whether availability may have changed.
    pub fn record_success(&mut self) -> bool {
        self.health.consecutive_errors = 0;
        self.health.cooling_until.take().is_some()
    }

    pub fn record_failure(
        &mut self,
        kind: FailureKind,
        status: u16,
        config: &PoolConfig,
        now: Timestamp,
    ) -> FailureOutcome {
        let health = &mut self.health;
        health.failure_count += 1;
        health.last_error_at = Some(now);
        match kind {
            FailureKind::RateLimited { retry_after } => {
                health.last_error = Some(KeyError::RateLimited { status });
                health.consecutive_errors = health.consecutive_errors.saturating_add(1);
                let rest = config.cooldown_for(health.consecutive_errors, retry_after);
                // Never shorten a running cooldown (an announced short wait after a long backoff).
                let until = health.cooling_until.max(Some(now + rest)).unwrap_or(now + rest);
                health.cooling_until = Some(until);
                FailureOutcome::Cooled { until }
            }
            FailureKind::AuthRejected => {
                health.last_error = Some(KeyError::AuthRejected { status });
                // Concurrent 401s for one key: the first refuses it and asks for the disable, the
                // others find it refused. A key already off needs no second write.
                if !self.enabled || health.refused {
                    return FailureOutcome::Unchanged;
                }
                health.refused = true;
                FailureOutcome::Disabled { reason: DisableReason::AuthRejected { status } }
            }
        }
    }

    pub fn record_unresolved(&mut self, var: String, now: Timestamp) {
        self.health.last_error = Some(KeyError::UnresolvedEnv { var });
        self.health.last_error_at = Some(now);
    }

    /// Ends an expired cooldown; returns whether there was one.
    pub fn expire_cooldown(&mut self, now: Timestamp) -> bool {
        let expired = self.health.cooling_until.is_some_and(|until| until <= now);
        if expired {
            self.health.cooling_until = None;
        }
        expired
    }

    /// A user action: the cooldown ends and the streak with it.
    pub fn reset_cooldown(&mut self) {
        self.health.cooling_until = None;
        self.health.consecutive_errors = 0;
    }

    /// The user vouched for the key; returns whether it was refused.
    pub fn lift_refusal(&mut self) -> bool {
        std::mem::take(&mut self.health.refused)
    }

    pub fn status(&self, now: Timestamp) -> KeyStatus {
        let h = &self.health;
        let cooling_until = self.cooling_until(now);
        let state = if !self.usable() {
            KeyState::Disabled
        } else if cooling_until.is_some() {
            KeyState::Cooling
        } else {
            KeyState::Active
        };
        KeyStatus {
            key_id: self.id.clone(),
            label: self.label.as_deref().map(str::to_owned),
            weight: self.weight,
            state,
            cooling_until,
            consecutive_errors: h.consecutive_errors,
            last_error: h.last_error.clone(),
            last_error_at: h.last_error_at,
            last_used_at: h.last_used_at,
            request_count: h.request_count,
            failure_count: h.failure_count,
        }
    }
}
