//! Quota groups: keys the provider counts together share one rate-limit state. A refusal on one
//! rests the whole group (all models, one model, or one model for the day), announced budgets
//! and their reservations are the group's, and a key without a group is a group of its own.

use keypool::*;

use crate::support::*;

const GPT: &str = "gpt-4o";

/// Keys A, B, C: A and B in group `project-1`, C on its own.
fn grouped() -> Fixture {
    let mut keys = keys(&[1, 1, 1]);
    keys[0].quota_group = Some("project-1".into());
    keys[1].quota_group = Some(" project-1 ".into());
    keys[2].quota_group = Some("  ".into());
    Fixture::build(PoolConfig::default(), keys, MapResolver::new())
}

impl Fixture {
    fn scoped(&self, scope: &str) -> Result<Selection, PoolError> {
        self.pool
            .select(SelectionRequest::new(&self.openai).needing(Demand { scope: Some(scope), tokens: 1 }), self.now())
    }

    fn refuse(&self, key: &str, scope: Option<&str>, kind: FailureKind) -> FailureOutcome {
        self.pool.status(&self.openai, self.now()).expect("keys load");
        let key = KeyId::from(key);
        let failure = Failure { provider: &self.openai, key: &key, status: 429, kind, scope, sent_at: None };
        self.pool.report_failure(failure, self.now()).expect("the report succeeds")
    }
}

fn rate_limit(quota: Option<Quota>) -> FailureKind {
    FailureKind::RateLimited { retry_after: None, announced: Announced::default(), quota }
}

#[test]
fn a_refusal_of_one_key_rests_its_whole_group() {
    let f = grouped();
    assert_eq!(f.refuse("A", None, rate_limit(None)), FailureOutcome::Cooled { until: T0 + secs(60) });
    assert_eq!(f.status_of("B").state, KeyState::Cooling, "B shares A's project: it rests too");
    assert_eq!(f.status_of("B").cooling_until, Some(T0 + secs(60)), "until the same time");
    assert_eq!(f.status_of("C").state, KeyState::Active, "C is a group of its own (a blank group is none)");
    assert_eq!(f.picks(3), "C C C", "only C serves while the group rests");
    assert_eq!(f.status_of("B").quota_group.as_deref(), Some("project-1"), "the status names the group, trimmed");
    assert_eq!(f.status_of("C").quota_group, None, "and no group for C");
    f.advance(secs(60));
    assert_eq!(f.picks(3), "A B C", "the group serves again when its rest ends");
}

#[test]
fn the_groups_ladder_is_one_not_one_per_key() {
    let f = grouped();
    let _ = f.refuse("A", None, rate_limit(None));
    f.advance(secs(60));
    assert_eq!(
        f.refuse("B", None, rate_limit(None)),
        FailureOutcome::Cooled { until: T0 + secs(60 + 120) },
        "B refused right after the group rested: the group's second refusal in a row"
    );
    f.pool.report_answer(&KeyId::from("B"), None, &Announced::default());
    assert_eq!(f.status_of("A").state, KeyState::Active, "an answer on any key of the group ends its rest");
    assert_eq!(f.status_of("A").consecutive_errors, 0, "and its streak");
}

#[test]
fn a_per_model_refusal_of_one_key_rests_that_model_on_the_group() {
    let f = grouped();
    let _ = f.refuse("A", Some(GPT), rate_limit(Some(Quota::PerMinute)));
    let picks: Vec<String> = (0..3).map(|_| f.scoped(GPT).unwrap().key_id.to_string()).collect();
    assert_eq!(picks, ["C", "C", "C"], "A and B share the refused quota for gpt-4o");
    assert!(f.scoped("gpt-4.1").is_ok(), "another model still uses the group");
    assert!(f.status_of("B").budgets.iter().any(|b| b.scope == GPT && b.cooling_until.is_some()), "B says so");
}

#[test]
fn a_days_quota_used_up_on_one_key_is_used_up_on_its_group() {
    let f = grouped();
    let FailureOutcome::UsedUpForTheDay { until } = f.refuse("B", Some(GPT), rate_limit(Some(Quota::PerDay))) else {
        panic!("a per-day quota uses the day up");
    };
    assert_eq!(until, pacific_day_end(T0), "until the Pacific day ends");
    assert_eq!(f.scoped(GPT).unwrap().key_id.as_str(), "C", "only the key of another project serves the model");
    let _ = f.refuse("C", Some(GPT), rate_limit(Some(Quota::PerDay)));
    let PoolError::NoAvailableKey { reason, .. } = f.scoped(GPT).unwrap_err() else { panic!("no key is left") };
    let whys: Vec<Blocker> = match &reason {
        Unavailability::Blocked { keys, .. } => keys.iter().map(|k| k.why).collect(),
        other => panic!("keys are blocked: {other:?}"),
    };
    assert_eq!(whys, [Blocker::UsedUpForTheDay { until }; 3], "every key says its day's quota is used up");
    assert!(reason.to_string().contains("used up the day's quota"), "and the message says so: {reason}");
}

impl Fixture {
    /// `key` answered that one request of gpt-4o is left, for 10 s.
    fn one_left_on(&self, key: &str) {
        self.pool.status(&self.openai, self.now()).expect("keys load");
        let window = Window { limit: Some(5), remaining: 1, reset_at: T0 + secs(10) };
        self.pool.report_answer(&KeyId::from(key), Some(GPT), &Announced { requests: Some(window), tokens: None });
    }

    /// The requests in flight counted against `key`'s group's gpt-4o budget.
    fn reserved_on(&self, key: &str) -> Option<u32> {
        self.status_of(key).budgets.iter().find(|b| b.scope == GPT).map(|b| b.reserved_requests)
    }
}

#[test]
fn announced_budgets_and_reservations_are_the_groups() {
    let f = grouped();
    f.one_left_on("A");
    assert_eq!(
        f.status_of("B").budgets.iter().find(|b| b.scope == GPT).and_then(|b| b.requests).map(|w| w.remaining),
        Some(1),
        "what A's answer announced is what B has left too: one budget"
    );
    let first = f.scoped(GPT).expect("the group's one request");
    assert_ne!(first.key_id.as_str(), "C", "the first pick is the group's (A)");
    let second = f.scoped(GPT).expect("C has a budget of its own");
    assert_eq!(second.key_id.as_str(), "C", "the group's last request is reserved, by either of its keys");
    assert_eq!(f.reserved_on("B"), Some(1), "B's status counts the request in flight on A");
    let not_c = [KeyId::from("C")];
    let group_only = || {
        let demand = Demand { scope: Some(GPT), tokens: 1 };
        f.pool.select(SelectionRequest::new(&f.openai).needing(demand).excluding(&not_c), f.now())
    };
    assert!(group_only().is_err(), "neither A nor B may take another request while A's is in flight");
    drop(first);
    assert!(group_only().is_ok(), "a group key serves again once the request on A ended");
}

#[test]
fn a_reservation_made_before_a_key_changed_group_is_given_back_to_that_group() {
    let f = grouped();
    f.one_left_on("B");
    let on_a = f.scoped(GPT).expect("A takes the group's last request");
    assert_eq!(on_a.key_id.as_str(), "A");
    // The user moves A to a project of its own while its request is in flight.
    let mut moved = entry("openai", "A", 1, 0);
    moved.quota_group = Some("project-2".into());
    f.store.remove("A");
    f.store.insert(moved);
    f.pool.invalidate(&f.openai);
    assert_eq!(f.status_of("A").quota_group.as_deref(), Some("project-2"), "the reload moved A");
    assert_eq!(f.reserved_on("B"), Some(1), "project-1 still counts the request A took from it");
    drop(on_a);
    assert_eq!(f.reserved_on("B"), Some(0), "when it ends, the reservation goes back to project-1, not held forever");
}

#[test]
fn auth_rejections_and_empty_accounts_stay_with_the_key() {
    let f = grouped();
    let a = KeyId::from("A");
    assert!(matches!(f.report(&a, 401, None), Some(FailureOutcome::Disabled { .. })), "A is disabled");
    assert_eq!(f.status_of("B").state, KeyState::Active, "B's own key is not A's: it still serves");
    let b = KeyId::from("B");
    f.pool.status(&f.openai, f.now()).unwrap();
    let failure = Failure {
        provider: &f.openai,
        key: &b,
        status: 402,
        kind: FailureKind::QuotaExhausted,
        scope: None,
        sent_at: None,
    };
    assert!(matches!(f.pool.report_failure(failure, f.now()).unwrap(), FailureOutcome::Exhausted { .. }));
    assert_eq!(f.status_of("C").state, KeyState::Active, "C is untouched");
    assert_eq!(f.picks(2), "C C", "A is off and B out of credit: C serves");
}
