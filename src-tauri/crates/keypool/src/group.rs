//! Quota groups: keys whose provider counts their requests together (a Google Cloud project's
//! Gemini keys, an OpenAI organization's keys) share one rate-limit state, so one refusal rests
//! the whole group instead of costing one refused request per key of it.
//!
//! A group holds what the provider's limits taught: the rest after rate limits that named no
//! model (all models), and per scope (model or model class) the announced windows, the
//! reservations of the requests in flight on any of its keys, a per-minute quota's rest and a
//! daily quota's end. What belongs to one key stays on the key: whether it is refused or out of
//! credit, the user's limits and its statistics. A key with no group is a group of its own.

use std::sync::Arc;

use crate::announced::Announced;
use crate::budget::{RemoteHold, Scopes};
use crate::config::{PoolConfig, MAX_PLAN_WINDOW, MIN_REST};
use crate::ids::KeyId;
use crate::quota_day::pacific_day_end;
use crate::request::{FailureOutcome, Quota};
use crate::rest::Rest;
use crate::team::{
    bounded, bounded_window, RemoteFact, ScopeFacts, MAX_REMOTE_RESERVED, MAX_TOKENS_PER_REQUEST, REMOTE_HOLD,
};
use crate::time::Timestamp;

/// Who a group is, stable across reloads: its name, or the key alone in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum GroupId {
    /// The group the user named (the key's `quota_group`).
    Named(Arc<str>),
    /// A key with no group.
    Own(KeyId),
}

impl GroupId {
    /// The group of a key with `quota_group` (blank: its own).
    pub fn of(key: &KeyId, quota_group: Option<&str>) -> GroupId {
        match quota_group.map(str::trim).filter(|g| !g.is_empty()) {
            Some(name) => GroupId::Named(Arc::from(name)),
            None => GroupId::Own(key.clone()),
        }
    }
}

/// What the pool learned about a group at run time; carried across reloads by its [`GroupId`].
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupHealth {
    /// Resting after rate limits that named no scope's quota: no key of the group serves.
    pub rest: Rest,
    pub scopes: Scopes,
    /// A plan's window is used up until then: no key of the group serves (not capped as a
    /// rest is; not shared with a team, whose members learn it from their own refusals).
    pub window_until: Option<Timestamp>,
}

/// One group of a provider's keys.
pub(crate) struct QuotaGroup {
    pub id: GroupId,
    pub health: GroupHealth,
}

/// What a rate limit names: its scope, the wait it announced, the windows it announced, which of
/// the scope's quotas it hit, and when the refused request was sent.
pub(crate) struct RateLimit<'a> {
    pub scope: Option<&'a str>,
    pub retry_after: Option<std::time::Duration>,
    pub announced: Announced,
    pub quota: Option<Quota>,
    pub sent_at: Option<Timestamp>,
}

impl GroupHealth {
    /// Until when no key of the group serves: its rest, or a plan window used up.
    pub fn resting_until(&self, now: Timestamp) -> Option<Timestamp> {
        let window = self.window_until.filter(|&until| until > now);
        match (self.rest.until(now), window) {
            (Some(rest), Some(window)) => Some(rest.max(window)),
            (rest, window) => rest.or(window),
        }
    }

    /// An answer for `scope`: the group's rest and the scope's end with their streaks, and the
    /// windows it announced become what the group has left. A daily quota stays used up: an
    /// answer to a request sent before the refusal says nothing about the day. Returns whether
    /// availability may have changed.
    pub fn answered(&mut self, scope: Option<&str>, announced: &Announced) -> bool {
        let mut changed = self.rest.answered();
        if let Some(scope) = scope {
            self.scopes.record(scope, announced);
            if let Some(budget) = self.scopes.scopes_mut().iter_mut().find(|b| &*b.scope == scope) {
                changed |= budget.rest.answered();
            }
        }
        changed
    }

    /// A rate limit refused a request of the group: what rests, and until when.
    ///
    /// * A quota per day of the request's scope: the scope is used up until the quota's day
    ///   ends (`day_end`), whatever wait was announced (Gemini says `0s`); it comes back then by
    ///   itself.
    /// * A quota per minute of the scope: only the scope rests, for the announced wait, on its
    ///   own ladder when none was announced.
    /// * Windows that show the scope spent: the scope waits for their reset.
    /// * Anything else: the whole group rests, on the group's ladder.
    pub fn rate_limited(
        &mut self,
        limit: RateLimit<'_>,
        day_end: impl FnOnce(Timestamp) -> Timestamp,
        config: &PoolConfig,
        now: Timestamp,
    ) -> FailureOutcome {
        let RateLimit { scope, retry_after, announced, quota, sent_at } = limit;
        if let Some(Quota::PlanWindow { until }) = quota {
            let until = until.clamp(now + MIN_REST, now + MAX_PLAN_WINDOW);
            self.window_until = self.window_until.filter(|&own| own > now).max(Some(until));
            return FailureOutcome::Cooled { until: self.resting_until(now).unwrap_or(until) };
        }
        if let Some(scope) = scope {
            self.scopes.record(scope, &announced);
            match quota {
                Some(Quota::PerDay) => {
                    let until = day_end(now);
                    let budget = self.scopes.scope_at(scope, now);
                    budget.day_until = budget.day_until.max(Some(until));
                    return FailureOutcome::UsedUpForTheDay { until };
                }
                Some(Quota::PerMinute) => {
                    let until = self.scopes.scope_at(scope, now).rest.refused(retry_after, sent_at, config, now);
                    return FailureOutcome::ScopeCooled { until };
                }
                Some(Quota::PlanWindow { .. }) | None => {}
            }
            // The windows say which limit was hit: that scope's budget, not the whole group.
            if let Some(until) = announced.spent_until(0).filter(|&until| until > now) {
                let until = until.max(now + MIN_REST);
                self.scopes.spend(scope, until, now);
                return FailureOutcome::Spent { until };
            }
        }
        FailureOutcome::Cooled { until: self.rest.refused(retry_after, sent_at, config, now) }
    }

    /// Ends the rests that are over by `now`; returns whether the group's own rest ended.
    pub fn expire(&mut self, now: Timestamp) -> bool {
        for budget in self.scopes.scopes_mut() {
            budget.rest.expire(now);
            if budget.day_until.is_some_and(|until| until <= now) {
                budget.day_until = None;
            }
        }
        let window_ended = self.window_until.is_some_and(|until| until <= now);
        if window_ended {
            self.window_until = None;
        }
        self.rest.expire(now) | window_ended
    }

    /// A user action: every rest ends, and every daily quota is believed whole again.
    pub fn reset(&mut self) {
        self.rest.reset();
        self.window_until = None;
        for budget in self.scopes.scopes_mut() {
            budget.rest.reset();
            budget.day_until = None;
        }
    }

    /// What the group keeps for `scope` at `now`, as a team shares it: the windows as last
    /// announced, and the deadlines still ahead.
    pub fn facts(&self, scope: &str, now: Timestamp) -> Option<ScopeFacts> {
        let budget = self.scopes.find(scope)?;
        let later = |at: Option<Timestamp>| at.filter(|&at| at > now);
        Some(ScopeFacts {
            scope: budget.scope.clone(),
            requests: budget.requests,
            tokens: budget.tokens,
            spent_until: later(budget.spent_until),
            resting: budget.rest.shared(now),
            used_up_until: later(budget.day_until),
        })
    }

    /// Merges what another member learned about the group, within this pool's bounds (see
    /// [`crate::team`]); returns whether anything changed. Facts about the key alone are the
    /// key's ([`crate::key::PoolKey::merge`]) and change nothing here.
    pub fn merge(&mut self, fact: RemoteFact<'_>, config: &PoolConfig, now: Timestamp) -> bool {
        let cap = config.cooldown_cap;
        match fact {
            RemoteFact::Resting(resting) => self.rest.merge(resting, cap, now),
            RemoteFact::ScopeResting { scope, resting } => {
                self.scopes.scope_at(scope, now).rest.merge(resting, cap, now)
            }
            RemoteFact::Windows { scope, announced } => {
                let announced = Announced {
                    requests: bounded_window(announced.requests, cap, now),
                    tokens: bounded_window(announced.tokens, cap, now),
                };
                if announced.is_empty() {
                    return false;
                }
                let before = self.scopes.find(scope).map(|b| (b.requests, b.tokens));
                // Made room for first: remote scopes are bounded like the pool's own.
                self.scopes.scope_at(scope, now);
                self.scopes.record(scope, &announced);
                self.scopes.find(scope).map(|b| (b.requests, b.tokens)) != before
            }
            RemoteFact::Spent { scope, until } => {
                let Some(until) = bounded(until, cap, now) else { return false };
                let budget = self.scopes.scope_at(scope, now);
                let later = budget.spent_until.is_none_or(|own| own < until);
                if later {
                    budget.spent_until = Some(until);
                }
                later
            }
            RemoteFact::UsedUpForTheDay { scope, until } => {
                let day_end = pacific_day_end(now);
                let Some(until) = bounded(until, day_end.saturating_duration_since(now), now) else { return false };
                let budget = self.scopes.scope_at(scope, now);
                let later = budget.day_until.is_none_or(|own| own < until);
                if later {
                    budget.day_until = Some(until);
                }
                later
            }
            RemoteFact::Reserved { scope, requests, tokens } => {
                let requests = u32::try_from(requests).unwrap_or(u32::MAX).min(MAX_REMOTE_RESERVED);
                let tokens = tokens.min(u64::from(requests) * MAX_TOKENS_PER_REQUEST);
                if requests == 0 && self.scopes.find(scope).is_none() {
                    return false;
                }
                let held = RemoteHold { requests, tokens, until: now + REMOTE_HOLD };
                let budget = self.scopes.scope_at(scope, now);
                let changed = (budget.remote.requests, budget.remote.tokens) != (requests, tokens);
                budget.remote = held;
                changed
            }
            RemoteFact::OutOfCredit { .. }
            | RemoteFact::Replenished
            | RemoteFact::Disabled { .. }
            | RemoteFact::Enabled => false,
        }
    }
}
