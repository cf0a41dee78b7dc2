//! Quotas a refusal names (Gemini's `QuotaFailure`): a per-minute quota rests only the
//! request's model, for the announced wait or up the model's own ladder; a per-day quota uses the
//! model up until midnight in Los Angeles, across both daylight-saving changes, and the model
//! comes back then by itself, with no probe.

use std::time::Duration;

use keypool::*;

use crate::support::*;

const FLASH: &str = "gemini-2.0-flash";
const PRO: &str = "gemini-2.5-pro";

/// An instant written in RFC 3339.
fn at(text: &str) -> Timestamp {
    let parsed = humantime::parse_rfc3339(text).expect("an RFC 3339 instant");
    Timestamp::from_millis(parsed.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64)
}

impl Fixture {
    fn gemini_select(&self, scope: &str) -> Result<Selection, PoolError> {
        let demand = Demand { scope: Some(scope), tokens: 10 };
        self.pool.select(SelectionRequest::new(&self.openai).needing(demand), self.now())
    }

    /// A 429 of `key` for `scope` naming `quota`, with Gemini's `retryDelay` when given.
    fn quota_refusal(&self, key: &str, scope: &str, quota: Quota, retry_after: Option<Duration>) -> FailureOutcome {
        self.pool.status(&self.openai, self.now()).expect("keys load");
        let key = KeyId::from(key);
        let kind = FailureKind::RateLimited { retry_after, announced: Announced::default(), quota: Some(quota) };
        let failure =
            Failure { provider: &self.openai, key: &key, status: 429, kind, scope: Some(scope), sent_at: None };
        self.pool.report_failure(failure, self.now()).expect("the report succeeds")
    }

    fn blocker_of(&self, scope: &str) -> Vec<Blocker> {
        match self.gemini_select(scope) {
            Err(PoolError::NoAvailableKey { reason: Unavailability::Blocked { keys, .. }, .. }) => {
                keys.into_iter().map(|k| k.why).collect()
            }
            other => panic!("no key should serve {scope}: {other:?}"),
        }
    }
}

#[test]
fn a_per_minute_quota_rests_only_that_model_for_the_announced_wait() {
    let f = Fixture::new(&[1]);
    let outcome = f.quota_refusal("A", FLASH, Quota::PerMinute, Some(secs(37)));
    assert_eq!(outcome, FailureOutcome::ScopeCooled { until: T0 + secs(37) }, "Gemini's retryDelay is the rest");
    assert_eq!(f.blocker_of(FLASH), [Blocker::Cooling { until: T0 + secs(37) }], "flash rests on the key");
    assert_eq!(f.gemini_select(PRO).expect("another model").key_id.as_str(), "A", "pro still uses the key");
    let status = f.status_of("A");
    assert_eq!(status.state, KeyState::Active, "the key itself is not cooling");
    let flash = status.budgets.iter().find(|b| b.scope == FLASH).expect("flash has a budget row");
    assert_eq!(flash.cooling_until, Some(T0 + secs(37)), "the status says which model rests, and until when");
    f.advance(secs(37));
    assert!(f.gemini_select(FLASH).is_ok(), "after the wait flash serves again");
}

#[test]
fn a_per_minute_quota_without_a_delay_climbs_the_models_own_ladder() {
    let f = Fixture::new(&[1]);
    assert_eq!(
        f.quota_refusal("A", FLASH, Quota::PerMinute, None),
        FailureOutcome::ScopeCooled { until: T0 + secs(60) },
        "no retryDelay: the ladder's first step"
    );
    f.advance(secs(60));
    assert_eq!(
        f.quota_refusal("A", FLASH, Quota::PerMinute, None),
        FailureOutcome::ScopeCooled { until: T0 + secs(60 + 120) },
        "refused again after resting: the next step"
    );
    assert_eq!(
        f.quota_refusal("A", PRO, Quota::PerMinute, None),
        FailureOutcome::ScopeCooled { until: T0 + secs(60 + 60) },
        "another model's ladder is its own"
    );
    assert_eq!(f.status_of("A").consecutive_errors, 0, "the key's own ladder did not move");
}

#[test]
fn a_per_day_quota_ignores_its_zero_delay_and_ends_at_los_angeles_midnight() {
    // 15:00 in Los Angeles on a summer day (PDT, UTC-7).
    let f = Fixture::new(&[1]);
    f.clock.set(at("2026-07-15T22:00:00Z"));
    let midnight = at("2026-07-16T07:00:00Z");
    assert_eq!(
        f.quota_refusal("A", FLASH, Quota::PerDay, Some(Duration::ZERO)),
        FailureOutcome::UsedUpForTheDay { until: midnight },
        "a day's quota is used up until the day ends, whatever retryDelay says"
    );
    assert_eq!(f.blocker_of(FLASH), [Blocker::UsedUpForTheDay { until: midnight }], "said as the day's quota");
    assert!(f.gemini_select(PRO).is_ok(), "another model's day is its own");
    let status = f.status_of("A");
    let flash = status.budgets.iter().find(|b| b.scope == FLASH).expect("flash has a budget row");
    assert_eq!(flash.used_up_until, Some(midnight), "the status says which model is used up, and until when");
    assert_eq!(status.state, KeyState::Active, "the key is not out of credit: nothing to probe");
    assert!(f.pool.due_probes(&f.openai, midnight).unwrap().is_empty(), "no probe is scheduled");
}

/// The day the refusal came in, when it is whole again, and why.
fn across_a_clock_change(refused_at: &str, whole_at: &str, why: &str) {
    let f = Fixture::new(&[1]);
    f.clock.set(at(refused_at));
    let until = at(whole_at);
    assert_eq!(f.quota_refusal("A", FLASH, Quota::PerDay, None), FailureOutcome::UsedUpForTheDay { until }, "{why}");
    f.clock.set(Timestamp::from_millis(until.as_millis() - 1));
    f.pool.sweep(f.now());
    assert_eq!(
        f.blocker_of(FLASH),
        [Blocker::UsedUpForTheDay { until }],
        "a millisecond before: still used up ({why})"
    );
    f.clock.set(until);
    assert_eq!(
        f.gemini_select(FLASH).expect("the new day's quota").key_id.as_str(),
        "A",
        "at midnight the model serves again by itself ({why})"
    );
    f.pool.sweep(f.now());
    let status = f.status_of("A");
    assert!(status.budgets.iter().all(|b| b.used_up_until.is_none()), "and the status no longer says used up");
}

#[test]
fn the_day_the_clocks_go_forward_ends_at_pdt_midnight() {
    // 2026-03-08 is 23 hours long in Los Angeles: it starts at 08:00 UTC (PST) and ends at 07:00 UTC (PDT).
    across_a_clock_change("2026-03-08T09:30:00Z", "2026-03-09T07:00:00Z", "refused at 01:30 PST, before the change");
    across_a_clock_change("2026-03-08T20:00:00Z", "2026-03-09T07:00:00Z", "refused at 13:00 PDT, after the change");
    across_a_clock_change("2026-03-08T07:30:00Z", "2026-03-08T08:00:00Z", "refused at 23:30 PST the evening before");
}

#[test]
fn the_day_the_clocks_go_back_ends_at_pst_midnight() {
    // 2026-11-01 is 25 hours long in Los Angeles: it starts at 07:00 UTC (PDT) and ends at 08:00 UTC (PST).
    across_a_clock_change("2026-11-01T08:30:00Z", "2026-11-02T08:00:00Z", "refused at 01:30 PDT, the first 01:30");
    across_a_clock_change("2026-11-01T09:30:00Z", "2026-11-02T08:00:00Z", "refused at 01:30 PST, the second 01:30");
    across_a_clock_change("2026-11-02T07:30:00Z", "2026-11-02T08:00:00Z", "refused at 23:30 PST that evening");
}

#[test]
fn a_user_reset_brings_a_used_up_model_back() {
    let f = Fixture::new(&[1]);
    let _ = f.quota_refusal("A", FLASH, Quota::PerDay, None);
    f.pool.reset_cooldown(&KeyId::from("A"));
    assert!(f.gemini_select(FLASH).is_ok(), "the user vouched for the key: it is tried again");
}

#[test]
fn a_plan_window_used_up_rests_the_whole_key_until_its_reset_past_the_cooldown_cap() {
    let f = Fixture::new(&[1, 1]);
    f.clock.set(at("2026-08-07T00:00:00Z"));
    let reset = at("2026-08-07T05:00:00Z");
    assert_eq!(
        f.quota_refusal("A", FLASH, Quota::PlanWindow { until: reset }, Some(Duration::from_secs(60))),
        FailureOutcome::Cooled { until: reset },
        "the window's reset, not the announced minute nor the 15-minute cap"
    );
    for scope in [FLASH, PRO] {
        assert_eq!(f.gemini_select(scope).unwrap().key_id.as_str(), "B", "every model goes to B meanwhile");
    }
    let status = f.status_of("A");
    assert_eq!((status.state, status.cooling_until), (KeyState::Cooling, Some(reset)), "resting, not disabled");
    f.clock.set(Timestamp::from_millis(reset.as_millis() - 1));
    f.pool.sweep(f.now());
    assert_eq!(f.status_of("A").state, KeyState::Cooling, "a millisecond before: still resting");
    f.clock.set(reset);
    f.pool.sweep(f.now());
    assert_eq!(f.status_of("A").state, KeyState::Active, "back by itself on time");

    let weekly = at("2026-08-14T07:49:08Z");
    let _ = f.quota_refusal("A", FLASH, Quota::PlanWindow { until: weekly }, None);
    let _ = f.quota_refusal("A", FLASH, Quota::PlanWindow { until: at("2026-08-07T06:00:00Z") }, None);
    assert_eq!(f.status_of("A").cooling_until, Some(weekly), "a nearer reset does not shorten a longer window");
    f.pool.reset_cooldown(&KeyId::from("A"));
    assert_eq!(f.status_of("A").state, KeyState::Active, "the user vouched for the key");

    let _ = f.quota_refusal("A", FLASH, Quota::PlanWindow { until: at("2030-01-01T00:00:00Z") }, None);
    let furthest = Timestamp::from_millis(f.now().as_millis() + keypool::MAX_PLAN_WINDOW.as_millis() as i64);
    assert_eq!(
        f.status_of("A").cooling_until,
        Some(furthest),
        "a reset years ahead is believed no further than a month"
    );
    f.pool.reset_cooldown(&KeyId::from("A"));
    let _ = f.quota_refusal("A", FLASH, Quota::PlanWindow { until: at("2020-01-01T00:00:00Z") }, None);
    assert!(f.status_of("A").cooling_until.is_some_and(|u| u > f.now()), "a reset in the past rests a moment, no less");
}
