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
//! `enabled = false` in the store is Disabled whatever the rest says. Cooling belongs to the
//! key's quota group ([`crate::group`]): a key cools when its group does. Besides its state, a
//! key draws on its group's budgets (what the provider announced the group has left, per model;
//! a model resting or used up for the day) and its own user limits, which admit or refuse each
//! request without changing the state.

use std::sync::Arc;

use crate::announced::Window;
use crate::budget::{Blocked, KeyLoad, UserLimits};
use crate::config::PoolConfig;
use crate::entry::KeyEntry;
use crate::error::Blocker;
use crate::group::{GroupHealth, RateLimit};
use crate::ids::{KeyId, ProviderId};
use crate::quota_day::pacific_day_end;
use crate::request::{Demand, DisableReason, Failure, FailureKind, FailureOutcome};
use crate::secret::Secret;
use crate::status::{BudgetStatus, KeyError, KeyState, KeyStatus};
use crate::team::{KeyFacts, Merged, RemoteFact, MAX_REMOTE_STREAK};
use crate::time::Timestamp;

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
    /// The quota group as the user named it (`None`: the key is a group of its own).
    pub quota_group: Option<Arc<str>>,
    /// The position of the key's group in the provider's groups, valid until the next install.
    pub group: usize,
    /// Enabled, not refused, not exhausted, its group not cooling, as of the provider's last
    /// rebuild.
    pub available: bool,
    pub health: Health,
}

/// What the pool learned about a key at run time; carried across reloads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Health {
    last_error: Option<KeyError>,
    last_error_at: Option<Timestamp>,
    last_used_at: Option<Timestamp>,
    request_count: u64,
    failure_count: u64,
    /// The provider rejected the key. The pool refuses it from the report on, before the store
    /// records the disable, and until a load shows the store did (or the user enables it again).
    refused: bool,
    exhausted: Option<Exhaustion>,
    /// Its requests in flight and of the last minute, for the user's limits.
    load: KeyLoad,
}

/// An out-of-credit key: when it is probed next, and how many probes failed so far.
#[derive(Clone, Copy, Debug)]
struct Exhaustion {
    next_probe_at: Timestamp,
    probes: u32,
}

impl PoolKey {
    pub fn new(entry: KeyEntry, group: usize, mut health: Health) -> PoolKey {
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
            quota_group: entry.quota_group.as_deref().map(str::trim).filter(|g| !g.is_empty()).map(Arc::from),
            group,
            available: false,
            health,
        }
    }

    /// Enabled, readable, not refused and not out of credit: available unless its group cools.
    pub fn usable(&self) -> bool {
        self.enabled && !self.sealed && !self.health.refused && self.health.exhausted.is_none()
    }

    /// Whether the key's own limits and its group's budgets admit `demand` at `now`.
    pub fn admits(&self, group: &GroupHealth, demand: &Demand<'_>, now: Timestamp) -> Result<(), Blocked> {
        if self.limits.is_empty() && group.scopes.is_empty() {
            return Ok(());
        }
        self.health.load.admits(&self.limits, now)?;
        group.scopes.admits(demand, now)
    }

    /// Whether a hand-out must reserve anything: a user limit, or a scope whose windows the
    /// answers announce. A request with a scope reserves even before any window is known, so the
    /// first answer's window is measured against every request already in flight.
    pub fn needs_lease(&self, demand: &Demand<'_>) -> bool {
        !self.limits.is_empty() || demand.scope.is_some()
    }

    /// What stops the key from serving `demand` at `now`, if anything; `tried`: this request
    /// already used it (said only when nothing else stops it, which says more).
    pub fn blocker(&self, group: &GroupHealth, demand: &Demand<'_>, tried: bool, now: Timestamp) -> Option<Blocker> {
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
        if let Some(until) = group.resting_until(now) {
            return Some(Blocker::Cooling { until });
        }
        match self.admits(group, demand, now) {
            Err(Blocked::Busy) => Some(Blocker::Busy),
            Err(Blocked::Until(until)) => Some(Blocker::Spent { until }),
            Err(Blocked::Resting(until)) => Some(Blocker::Cooling { until }),
            Err(Blocked::ForTheDay(until)) => Some(Blocker::UsedUpForTheDay { until }),
            Ok(()) => tried.then_some(Blocker::Tried),
        }
    }

    /// Counts a hand-out; `reserve`: the request reserves the key's load and its group's scope
    /// until its lease ends.
    pub fn record_hand_out(&mut self, group: &mut GroupHealth, demand: &Demand<'_>, reserve: bool, now: Timestamp) {
        self.health.request_count += 1;
        self.health.last_used_at = Some(now);
        if reserve {
            self.health.load.reserve(&self.limits, now);
            group.scopes.reserve(demand, now);
        }
    }

    /// A refusal of the key: a rate limit rests its group (or the group's scope), an auth
    /// rejection or an empty account stops the key alone.
    pub fn record_failure(
        &mut self,
        failure: &Failure<'_>,
        group: &mut GroupHealth,
        config: &PoolConfig,
        now: Timestamp,
    ) -> FailureOutcome {
        let Failure { kind, status, scope, sent_at, .. } = *failure;
        let health = &mut self.health;
        health.failure_count += 1;
        health.last_error_at = Some(now);
        match kind {
            FailureKind::RateLimited { retry_after, announced, quota } => {
                health.last_error = Some(KeyError::RateLimited { status });
                let limit = RateLimit { scope, retry_after, announced, quota, sent_at };
                group.rate_limited(limit, pacific_day_end, config, now)
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

    /// Ends a hand-out's reservation of the key's load (its group's scope is released apart).
    pub fn release(&mut self) {
        self.health.load.release();
    }

    /// The user vouched for the key; returns whether it was refused.
    pub fn lift_refusal(&mut self) -> bool {
        std::mem::take(&mut self.health.refused)
    }

    /// What the pool knows about the key and `scope` of its group at `now`, for a team.
    pub fn facts(&self, provider: &ProviderId, group: &GroupHealth, scope: Option<&str>, now: Timestamp) -> KeyFacts {
        let refused = match (self.health.refused, &self.health.last_error) {
            (true, Some(KeyError::AuthRejected { status })) => Some(DisableReason::AuthRejected { status: *status }),
            _ => None,
        };
        KeyFacts {
            provider: provider.clone(),
            quota_group: self.quota_group.clone(),
            resting: group.rest.shared(now),
            scope: scope.and_then(|scope| group.facts(scope, now)),
            out_of_credit: self.health.exhausted.map(|e| (e.next_probe_at, e.probes)),
            refused,
        }
    }

    /// Merges what another member learned about the key (or its group), within this pool's
    /// bounds (see [`crate::team`]).
    pub fn merge(
        &mut self,
        fact: RemoteFact<'_>,
        group: &mut GroupHealth,
        config: &PoolConfig,
        now: Timestamp,
    ) -> Merged {
        let health = &mut self.health;
        match fact {
            RemoteFact::OutOfCredit { probe_at, probes } => {
                if !self.enabled {
                    return Merged::Unchanged;
                }
                // Due no later than this pool would probe after the ladder's longest step.
                let probe_at = probe_at.min(now + config.probe_cap);
                let probes = probes.min(MAX_REMOTE_STREAK);
                match &mut health.exhausted {
                    Some(own) if own.next_probe_at >= probe_at => return Merged::Unchanged,
                    Some(own) => {
                        own.next_probe_at = probe_at;
                        own.probes = own.probes.max(probes);
                    }
                    None => health.exhausted = Some(Exhaustion { next_probe_at: probe_at, probes }),
                }
                Merged::Changed
            }
            RemoteFact::Replenished => match health.exhausted.take() {
                Some(_) => Merged::Changed,
                None => Merged::Unchanged,
            },
            RemoteFact::Disabled { reason: DisableReason::AuthRejected { status } } => {
                if !matches!(status, 401 | 403) || !self.enabled || health.refused {
                    return Merged::Unchanged;
                }
                health.refused = true;
                health.last_error = Some(KeyError::AuthRejected { status });
                health.last_error_at = Some(now);
                Merged::Disabled { reason: DisableReason::AuthRejected { status } }
            }
            RemoteFact::Enabled => {
                if std::mem::take(&mut health.refused) || !self.enabled {
                    Merged::Enabled
                } else {
                    Merged::Unchanged
                }
            }
            fact => match group.merge(fact, config, now) {
                true => Merged::Changed,
                false => Merged::Unchanged,
            },
        }
    }

    pub fn status(&self, group: &GroupHealth, now: Timestamp) -> KeyStatus {
        let h = &self.health;
        let cooling_until = group.resting_until(now);
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
        let current = |w: Option<Window>| w.filter(|w| w.reset_at > now);
        KeyStatus {
            key_id: self.id.clone(),
            label: self.label.as_deref().map(str::to_owned),
            weight: self.weight,
            quota_group: self.quota_group.as_deref().map(str::to_owned),
            state,
            cooling_until,
            consecutive_errors: group.rest.streak(),
            last_error: h.last_error.clone(),
            last_error_at: h.last_error_at,
            last_used_at: h.last_used_at,
            request_count: h.request_count,
            failure_count: h.failure_count,
            budgets: group
                .scopes
                .scopes()
                .iter()
                .map(|b| BudgetStatus {
                    scope: b.scope.to_string(),
                    requests: current(b.requests),
                    tokens: current(b.tokens),
                    reserved_requests: b.reserved_requests,
                    cooling_until: b.rest.until(now),
                    used_up_until: b.day_until.filter(|&until| until > now),
                })
                .collect(),
            in_flight: h.load.in_flight(),
            next_probe_at: h.exhausted.map(|e| e.next_probe_at),
        }
    }
}
