//! What a key has left before the provider refuses it: the windows the provider announces on
//! every answer (requests and tokens, per model or model class), the requests in flight that
//! will spend them, and the limits the user set where a provider announces nothing.
//!
//! Admission is pure arithmetic on these numbers at a given `now`: a key is admitted for a
//! request when every window of the request's scope has room for it after the reservations of
//! the requests already in flight; otherwise the answer says when it frees up, if that is known.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use crate::announced::{Announced, Window};
use crate::request::Demand;
use crate::rest::Rest;
use crate::time::Timestamp;

/// Limits the user set for a key whose provider announces none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserLimits {
    /// At most this many requests in any 60 seconds.
    pub rpm: Option<u32>,
    /// At most this many requests in flight at once.
    pub max_concurrent: Option<u32>,
}

impl UserLimits {
    /// True when the user set no limit.
    pub fn is_empty(&self) -> bool {
        self.rpm.is_none() && self.max_concurrent.is_none()
    }
}

const MINUTE: Duration = Duration::from_secs(60);

/// The most scopes (models) a key keeps budgets for. Past it, the scopes with nothing left to
/// say (windows refilled, nothing in flight) go first, then those refilling soonest: a client
/// that asks for a new model name with every request cannot grow a key's state without end.
pub const MAX_SCOPES_PER_KEY: usize = 64;

/// Why a key cannot take a request right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// Free again at this time (a window refills, the minute of an rpm limit rolls over).
    Until(Timestamp),
    /// Every slot (or what a refilled window holds) is taken by requests in flight; free when
    /// one of them ends.
    Busy,
    /// The scope rests after refusals that named its per-minute quota, until then.
    Resting(Timestamp),
    /// The scope's quota for the day is used up, until then.
    ForTheDay(Timestamp),
}

/// The budgets of one scope of a quota group: what the provider announced, what its refusals
/// said, and what the requests in flight will spend.
#[derive(Clone, Debug)]
pub(crate) struct ScopeBudget {
    pub scope: Arc<str>,
    pub requests: Option<Window>,
    pub tokens: Option<Window>,
    /// Spent by a refusal that said so (a 429 with the windows at 0), until then.
    pub spent_until: Option<Timestamp>,
    /// Resting after refusals of this scope's per-minute quota (its own backoff ladder).
    pub rest: Rest,
    /// The scope's quota for the day is used up until then (the end of the quota's day).
    pub day_until: Option<Timestamp>,
    pub reserved_requests: u32,
    pub reserved_tokens: u64,
    /// What the other members of a team hold in flight on the scope, until it is told again.
    pub remote: RemoteHold,
}

/// Requests (and their estimated tokens) other members of a team hold in flight on a scope, as
/// last told, believed until `until` ([`crate::team::REMOTE_HOLD`] after the telling).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RemoteHold {
    pub requests: u32,
    pub tokens: u64,
    pub until: Timestamp,
}

impl RemoteHold {
    /// What is held at `now`: nothing once the telling is too old.
    fn at(&self, now: Timestamp) -> (u64, u64) {
        if self.until > now {
            (u64::from(self.requests), self.tokens)
        } else {
            (0, 0)
        }
    }
}

impl ScopeBudget {
    fn new(scope: &str) -> Self {
        ScopeBudget {
            scope: Arc::from(scope),
            requests: None,
            tokens: None,
            spent_until: None,
            rest: Rest::default(),
            day_until: None,
            reserved_requests: 0,
            reserved_tokens: 0,
            remote: RemoteHold::default(),
        }
    }

    /// Whether a request of `tokens` fits, after the reservations of the requests in flight.
    fn admits(&self, tokens: u64, now: Timestamp) -> Result<(), Blocked> {
        if let Some(until) = self.day_until.filter(|&until| until > now) {
            return Err(Blocked::ForTheDay(until));
        }
        if let Some(until) = self.rest.until(now) {
            return Err(Blocked::Resting(until));
        }
        if let Some(until) = self.spent_until.filter(|&until| until > now) {
            return Err(Blocked::Until(until));
        }
        // The team's requests in flight spend the same windows as this member's.
        let (remote_requests, remote_tokens) = self.remote.at(now);
        // Taken by requests in flight: free at the reset if it is ahead; past it, when one ends.
        let taken = |window: &Window| match window.reset_at > now {
            true => Blocked::Until(window.reset_at),
            false => Blocked::Busy,
        };
        if let Some(window) = self.requests {
            if window.left(now) <= u64::from(self.reserved_requests).saturating_add(remote_requests) {
                return Err(taken(&window));
            }
        }
        if let Some(window) = self.tokens {
            // A request larger than the whole window is judged against the window, not refused forever.
            let needed = tokens.min(window.limit.unwrap_or(u64::MAX));
            if window.left(now) < self.reserved_tokens.saturating_add(remote_tokens).saturating_add(needed) {
                return Err(taken(&window));
            }
        }
        Ok(())
    }
}

/// A quota group's budgets, scope by scope: every key of the group draws on them, so the
/// requests in flight on any of its keys count against what the group has left.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scopes {
    scopes: Vec<ScopeBudget>,
}

impl Scopes {
    /// Nothing here can refuse a request: the hot path skips the checks.
    pub fn is_empty(&self) -> bool {
        self.scopes.is_empty()
    }

    pub fn admits(&self, demand: &Demand<'_>, now: Timestamp) -> Result<(), Blocked> {
        match demand.scope.and_then(|scope| self.scope(scope)) {
            Some(budget) => budget.admits(u64::from(demand.tokens), now),
            None => Ok(()),
        }
    }

    /// Counts a hand-out's reservation at `now` in its scope.
    pub fn reserve(&mut self, demand: &Demand<'_>, now: Timestamp) {
        if let Some(scope) = demand.scope {
            let budget = self.scope_at(scope, now);
            budget.reserved_requests += 1;
            budget.reserved_tokens += u64::from(demand.tokens);
        }
    }

    /// Ends a hand-out's reservation (the request is over, however it ended).
    pub fn release(&mut self, scope: Option<&str>, tokens: u32) {
        if let Some(budget) = scope.and_then(|scope| self.scopes.iter_mut().find(|b| &*b.scope == scope)) {
            budget.reserved_requests = budget.reserved_requests.saturating_sub(1);
            budget.reserved_tokens = budget.reserved_tokens.saturating_sub(u64::from(tokens));
        }
    }

    /// Takes an answer's announced windows for `scope` as the new truth.
    pub fn record(&mut self, scope: &str, announced: &Announced) {
        if announced.is_empty() {
            return;
        }
        let budget = self.scope_mut(scope);
        budget.requests = Window::newest(budget.requests, announced.requests);
        budget.tokens = Window::newest(budget.tokens, announced.tokens);
    }

    /// A refusal at `now` said the scope is spent until `until`.
    pub fn spend(&mut self, scope: &str, until: Timestamp, now: Timestamp) {
        let budget = self.scope_at(scope, now);
        budget.spent_until = budget.spent_until.max(Some(until));
    }

    pub fn scopes(&self) -> &[ScopeBudget] {
        &self.scopes
    }

    /// The budget of `scope`, if the group keeps one.
    pub fn find(&self, scope: &str) -> Option<&ScopeBudget> {
        self.scope(scope)
    }

    pub fn scopes_mut(&mut self) -> &mut [ScopeBudget] {
        &mut self.scopes
    }

    fn scope(&self, scope: &str) -> Option<&ScopeBudget> {
        self.scopes.iter().find(|b| &*b.scope == scope)
    }

    /// The budget of `scope`, made room for at `now` if it is new (see [`MAX_SCOPES_PER_KEY`]).
    pub fn scope_at(&mut self, scope: &str, now: Timestamp) -> &mut ScopeBudget {
        if self.scopes.len() >= MAX_SCOPES_PER_KEY && !self.scopes.iter().any(|b| &*b.scope == scope) {
            self.make_room(now);
        }
        self.scope_mut(scope)
    }

    /// Drops the scopes that have nothing left to say at `now`; if none has, the one with nothing
    /// in flight that refills soonest.
    fn make_room(&mut self, now: Timestamp) {
        let until = |b: &ScopeBudget| {
            [
                b.spent_until,
                b.requests.map(|w| w.reset_at),
                b.tokens.map(|w| w.reset_at),
                b.rest.until(now),
                b.day_until,
                (b.remote.requests > 0).then_some(b.remote.until),
            ]
            .into_iter()
            .flatten()
            .max()
        };
        self.scopes.retain(|b| b.reserved_requests > 0 || until(b).is_some_and(|at| at > now));
        if self.scopes.len() >= MAX_SCOPES_PER_KEY {
            let soonest = self
                .scopes
                .iter()
                .enumerate()
                .filter(|(_, b)| b.reserved_requests == 0)
                .min_by_key(|(_, b)| until(b))
                .map(|(i, _)| i);
            if let Some(i) = soonest {
                self.scopes.swap_remove(i);
            }
        }
    }

    fn scope_mut(&mut self, scope: &str) -> &mut ScopeBudget {
        match self.scopes.iter().position(|b| &*b.scope == scope) {
            Some(i) => &mut self.scopes[i],
            None => {
                self.scopes.push(ScopeBudget::new(scope));
                self.scopes.last_mut().expect("just pushed")
            }
        }
    }
}

/// One key's own load, which the user's limits bound: its requests in flight and its hand-outs
/// of the last minute. Per key, whatever its group: the user set the limits on the key.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyLoad {
    in_flight: u32,
    /// Hand-outs of the last minute; kept only while an rpm limit is set.
    recent: VecDeque<Timestamp>,
}

impl KeyLoad {
    pub fn admits(&self, limits: &UserLimits, now: Timestamp) -> Result<(), Blocked> {
        if limits.max_concurrent.is_some_and(|max| self.in_flight >= max) {
            return Err(Blocked::Busy);
        }
        if let Some(rpm) = limits.rpm {
            let window_start = now - MINUTE;
            let recent: Vec<&Timestamp> = self.recent.iter().filter(|&&at| at > window_start).collect();
            if recent.len() >= rpm as usize {
                // Free when the oldest hand-out of the minute leaves it.
                let oldest = recent.len() - rpm as usize;
                return Err(Blocked::Until(*recent[oldest] + MINUTE));
            }
        }
        Ok(())
    }

    /// Counts a hand-out: a request in flight, a minute's use.
    pub fn reserve(&mut self, limits: &UserLimits, now: Timestamp) {
        self.in_flight += 1;
        if limits.rpm.is_some() {
            let window_start = now - MINUTE;
            while self.recent.front().is_some_and(|&at| at <= window_start) {
                self.recent.pop_front();
            }
            self.recent.push_back(now);
        }
    }

    pub fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Timestamp = Timestamp::from_millis(1_000_000);

    fn window(remaining: u64, reset_in_ms: i64) -> Window {
        Window { limit: Some(5), remaining, reset_at: Timestamp::from_millis(T0.as_millis() + reset_in_ms) }
    }

    fn demand(scope: &str) -> Demand<'_> {
        Demand { scope: Some(scope), tokens: 10 }
    }

    #[test]
    fn reservations_count_against_what_is_left() {
        let mut b = Scopes::default();
        b.record("gpt", &Announced { requests: Some(window(2, 2000)), tokens: None });
        assert_eq!(b.admits(&demand("gpt"), T0), Ok(()), "two left, none in flight");
        b.reserve(&demand("gpt"), T0);
        assert_eq!(b.admits(&demand("gpt"), T0), Ok(()), "one left after the reservation");
        b.reserve(&demand("gpt"), T0);
        assert_eq!(
            b.admits(&demand("gpt"), T0),
            Err(Blocked::Until(Timestamp::from_millis(T0.as_millis() + 2000))),
            "both taken by requests in flight: free at the reset"
        );
        assert_eq!(b.admits(&demand("other-model"), T0), Ok(()), "another model's window is its own");
        assert_eq!(
            b.admits(&demand("gpt"), Timestamp::from_millis(T0.as_millis() + 2000)),
            Ok(()),
            "after the reset the window is full again"
        );
        b.release(Some("gpt"), 10);
        assert_eq!(b.admits(&demand("gpt"), T0), Ok(()), "a finished request gives its reservation back");
    }

    #[test]
    fn a_late_answer_from_the_same_window_does_not_raise_what_is_left() {
        let mut b = Scopes::default();
        b.record("m", &Announced { requests: Some(window(2, 2000)), tokens: None });
        b.record("m", &Announced { requests: Some(window(3, 2010)), tokens: None });
        assert_eq!(b.scopes()[0].requests.map(|w| w.remaining), Some(2), "3 left is an older answer of this window");
        b.record("m", &Announced { requests: Some(window(4, 4000)), tokens: None });
        assert_eq!(b.scopes()[0].requests.map(|w| w.remaining), Some(4), "a later reset is a new, fuller window");
        b.record("m", &Announced { requests: Some(window(1, 4000)), tokens: None });
        assert_eq!(b.scopes()[0].requests.map(|w| w.remaining), Some(1), "within a window what is left shrinks");
        assert!(b.admits(&demand("m"), T0).is_ok(), "one left");
    }

    #[test]
    fn a_late_answer_from_the_window_before_does_not_make_the_new_one_look_full() {
        let mut b = Scopes::default();
        let later = |ms: i64| Timestamp::from_millis(T0.as_millis() + ms);
        // The window that ended at +2 s, then answers of the new one (ends at +4.5 s): 1 left.
        b.record("m", &Announced { requests: Some(window(0, 2000)), tokens: None });
        b.record("m", &Announced { requests: Some(window(1, 4500)), tokens: None });
        // A request of the old window answered only now, at +2.5 s.
        b.record("m", &Announced { requests: Some(window(0, 2000)), tokens: None });
        assert_eq!(b.scopes()[0].requests.map(|w| w.reset_at), Some(later(4500)), "the new window is kept");
        b.reserve(&demand("m"), later(2500));
        assert_eq!(
            b.admits(&demand("m"), later(2500)),
            Err(Blocked::Until(later(4500))),
            "its one request is taken: not a full window of 5"
        );
    }

    #[test]
    fn token_windows_need_room_for_the_estimate() {
        let mut b = Scopes::default();
        let tokens =
            Window { limit: Some(1000), remaining: 15, reset_at: Timestamp::from_millis(T0.as_millis() + 500) };
        b.record("m", &Announced { requests: None, tokens: Some(tokens) });
        assert_eq!(b.admits(&Demand { scope: Some("m"), tokens: 10 }, T0), Ok(()), "10 of 15 fit");
        assert!(b.admits(&Demand { scope: Some("m"), tokens: 20 }, T0).is_err(), "20 do not");
    }

    #[test]
    fn user_limits_hold_without_announcements() {
        let mut load = KeyLoad::default();
        let limits = UserLimits { rpm: Some(2), max_concurrent: Some(1) };
        load.reserve(&limits, T0);
        assert_eq!(load.admits(&limits, T0), Err(Blocked::Busy), "one in flight is the maximum");
        load.release();
        load.reserve(&limits, T0 + Duration::from_secs(1));
        load.release();
        assert_eq!(
            load.admits(&limits, T0 + Duration::from_secs(2)),
            Err(Blocked::Until(T0 + MINUTE)),
            "two this minute: free when the first leaves the minute"
        );
        assert_eq!(load.admits(&limits, T0 + MINUTE), Ok(()), "a minute later there is room again");
    }

    #[test]
    fn an_announcement_with_nothing_left_says_until_when() {
        let spent = Announced { requests: Some(window(0, 1500)), tokens: Some(window(4, 900)) };
        assert_eq!(spent.spent_until(0), Some(Timestamp::from_millis(T0.as_millis() + 1500)), "requests run out");
        assert_eq!(
            spent.spent_until(10),
            Some(Timestamp::from_millis(T0.as_millis() + 1500)),
            "the later reset governs"
        );
        assert_eq!(Announced { requests: Some(window(3, 100)), tokens: None }.spent_until(1), None, "room left");
    }
}
