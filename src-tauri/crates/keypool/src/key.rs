//! One key in the pool and what the pool learned about it: the per-key state machine.
//!
//! ```text
//!            rate limit (429/529)                      auth rejection (401/403)
//!   Active ─────────────────────────▶ Cooling   Active|Cooling ──────────────────▶ Refused
//!     ▲  ◀── success, expiry, reset ──┘            (until the store says disabled,
//!     │                                             or the user enables it again)
//!     │        out of credit (402, insufficient_quota)
//!     └─ probe ok ── Exhausted ◀──────────────────── Active|Cooling
//! ```
//! `enabled = false` in the store is Disabled whatever the rest says. Besides its state, a key
//! has budgets (what the provider announced it has left, per model) that admit or refuse each
//! request without changing the state.

use std::sync::Arc;

use crate::budget::{Announced, Blocked, Budgets, Demand, UserLimits};
use crate::error::Blocker;
use crate::status::BudgetStatus;
use crate::{DisableReason, Failure, FailureKind, FailureOutcome, KeyEntry, KeyError, KeyId, KeyState, KeyStatus};
use crate::{PoolConfig, Secret, Timestamp};

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
    /// The value could not be read at load (see [`KeyEntry::sealed`]).
    pub sealed: bool,
    pub weight: u32,
    pub limits: UserLimits,
    /// Enabled, not refused, not exhausted, not cooling, as of the provider's last rebuild.
    pub available: bool,
    pub health: Health,
}

/// What the pool learned about a key at run time; carried across reloads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Health {
    cooling_until: Option<Timestamp>,
    consecutive_errors: u32,
    /// When the current step of the backoff began: the refusal that started the current rest.
    /// Requests sent before it were in flight together with the one refused then.
    rest_began_at: Option<Timestamp>,
    last_error: Option<KeyError>,
    last_error_at: Option<Timestamp>,
    last_used_at: Option<Timestamp>,
    request_count: u64,
    failure_count: u64,
    /// The provider rejected the key. The pool refuses it from the report on, before the store
    /// records the disable, and until a load shows the store did (or the user enables it again).
    refused: bool,
    exhausted: Option<Exhaustion>,
    pub budgets: Budgets,
}

/// An out-of-credit key: when it is probed next, and how many probes failed so far.
#[derive(Clone, Copy, Debug)]
struct Exhaustion {
    next_probe_at: Timestamp,
    probes: u32,
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
            sealed: entry.sealed,
            weight: entry.weight.clamp(1, 100),
            limits: entry.limits,
            available: false,
            health,
        }
    }

    /// Enabled, readable, not refused and not out of credit: available unless cooling.
    pub fn usable(&self) -> bool {
        self.enabled && !self.sealed && !self.health.refused && self.health.exhausted.is_none()
    }

    /// The end of a cooldown still running at `now`.
    pub fn cooling_until(&self, now: Timestamp) -> Option<Timestamp> {
        self.health.cooling_until.filter(|&until| until > now)
    }

    /// Whether the key's budgets and the user's limits admit `demand` at `now`.
    pub fn admits(&self, demand: &Demand<'_>, now: Timestamp) -> Result<(), Blocked> {
        if self.health.budgets.is_idle(&self.limits) {
            return Ok(());
        }
        self.health.budgets.admits(&self.limits, demand, now)
    }

    /// Whether a hand-out must reserve anything: a user limit, or a scope whose windows the
    /// answers announce. A request with a scope reserves even before any window is known, so the
    /// first answer's window is measured against every request already in flight.
    pub fn needs_lease(&self, demand: &Demand<'_>) -> bool {
        !self.limits.is_empty() || demand.scope.is_some()
    }

    /// What stops the key from serving `demand` at `now`, if anything; `tried`: this request
    /// already used it (said only when nothing else stops it, which says more).
    pub fn blocker(&self, demand: &Demand<'_>, tried: bool, now: Timestamp) -> Option<Blocker> {
        if !self.enabled || self.health.refused {
            let status = match self.health.last_error {
                Some(KeyError::AuthRejected { status }) => Some(status),
                _ => None,
            };
            return Some(Blocker::Disabled { status });
        }
        if self.sealed {
            return Some(Blocker::Unavailable);
        }
        if let Some(exhausted) = self.health.exhausted {
            return Some(Blocker::Exhausted { next_probe_at: exhausted.next_probe_at });
        }
        if let Some(until) = self.cooling_until(now) {
            return Some(Blocker::Cooling { until });
        }
        match self.admits(demand, now) {
            Err(Blocked::Busy) => Some(Blocker::Busy),
            Err(Blocked::Until(until)) => Some(Blocker::Spent { until }),
            Ok(()) => tried.then_some(Blocker::Tried),
        }
    }

    pub fn record_hand_out(&mut self, demand: &Demand<'_>, reserve: bool, now: Timestamp) {
        self.health.request_count += 1;
        self.health.last_used_at = Some(now);
        if reserve {
            self.health.budgets.reserve(&self.limits, demand, now);
        }
    }

    /// An answer ends the cooldown and the streak and brings the windows it announced.
    /// Returns whether availability may have changed.
    pub fn record_answer(&mut self, scope: Option<&str>, announced: &Announced) -> bool {
        self.health.consecutive_errors = 0;
        self.health.rest_began_at = None;
        if let Some(scope) = scope {
            self.health.budgets.record(scope, announced);
        }
        self.health.cooling_until.take().is_some()
    }

    pub fn record_failure(&mut self, failure: &Failure<'_>, config: &PoolConfig, now: Timestamp) -> FailureOutcome {
        let Failure { kind, status, scope, sent_at, .. } = *failure;
        let health = &mut self.health;
        health.failure_count += 1;
        health.last_error_at = Some(now);
        match kind {
            FailureKind::RateLimited { retry_after, announced } => {
                health.last_error = Some(KeyError::RateLimited { status });
                if let Some(scope) = scope {
                    health.budgets.record(scope, &announced);
                    // The windows say which limit was hit: that model's budget, not the whole key.
                    if let Some(until) = announced.spent_until(0).filter(|&until| until > now) {
                        let until = until.max(now + crate::config::MIN_REST);
                        health.budgets.spend(scope, until, now);
                        return FailureOutcome::Spent { until };
                    }
                }
                // Five requests of one burst refused together are one rate limit, not five in a
                // row: a refusal of a request sent before the current rest began does not climb
                // the ladder (it would rest the key far past what the provider asked, and every
                // request waiting for it would give up). A later deadline it announces still wins.
                // Sent at the very instant the rest began is sent before it: a resting key is not
                // handed out, and a rest lasts at least MIN_REST.
                let same_burst = sent_at.zip(health.rest_began_at).is_some_and(|(sent, began)| sent <= began);
                if !same_burst {
                    health.consecutive_errors = health.consecutive_errors.saturating_add(1);
                    health.rest_began_at = Some(now);
                }
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
            FailureKind::QuotaExhausted => {
                health.last_error = Some(KeyError::QuotaExhausted { status });
                if let Some(exhausted) = health.exhausted {
                    return FailureOutcome::Exhausted { probe_at: exhausted.next_probe_at };
                }
                let probe_at = now + config.probe_interval(1);
                health.exhausted = Some(Exhaustion { next_probe_at: probe_at, probes: 0 });
                FailureOutcome::Exhausted { probe_at }
            }
        }
    }

    /// Whether an out-of-credit key is due for a probe at `now`.
    pub fn probe_due(&self, now: Timestamp) -> bool {
        self.enabled && self.health.exhausted.is_some_and(|e| e.next_probe_at <= now)
    }

    /// A background probe answered: usable again (`true`), or still out of credit, probed again
    /// after a doubled interval. Returns whether availability changed.
    pub fn record_probe(&mut self, usable: bool, config: &PoolConfig, now: Timestamp) -> bool {
        let Some(exhausted) = self.health.exhausted else { return false };
        if usable {
            self.health.exhausted = None;
            self.health.consecutive_errors = 0;
            return true;
        }
        let probes = exhausted.probes + 1;
        let next_probe_at = now + config.probe_interval(probes + 1);
        self.health.exhausted = Some(Exhaustion { next_probe_at, probes });
        false
    }

    pub fn record_unresolved(&mut self, var: String, now: Timestamp) {
        self.health.last_error = Some(KeyError::UnresolvedEnv { var });
        self.health.last_error_at = Some(now);
    }

    pub fn release(&mut self, scope: Option<&str>, tokens: u32) {
        self.health.budgets.release(scope, tokens);
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
        self.health.rest_began_at = None;
    }

    /// The user vouched for the key; returns whether it was refused.
    pub fn lift_refusal(&mut self) -> bool {
        std::mem::take(&mut self.health.refused)
    }

    pub fn status(&self, now: Timestamp) -> KeyStatus {
        let h = &self.health;
        let cooling_until = self.cooling_until(now);
        let state = if !self.enabled || h.refused {
            KeyState::Disabled
        } else if self.sealed {
            KeyState::Unavailable
        } else if h.exhausted.is_some() {
            KeyState::Exhausted
        } else if cooling_until.is_some() {
            KeyState::Cooling
        } else {
            KeyState::Active
        };
        let current = |w: Option<crate::Window>| w.filter(|w| w.reset_at > now);
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
            budgets: h
                .budgets
                .scopes()
                .iter()
                .map(|b| BudgetStatus {
                    scope: b.scope.to_string(),
                    requests: current(b.requests),
                    tokens: current(b.tokens),
                    reserved_requests: b.reserved_requests,
                })
                .collect(),
            in_flight: h.budgets.in_flight(),
            next_probe_at: h.exhausted.map(|e| e.next_probe_at),
        }
    }
}
