//! What a key has left: announced windows skip a spent key until its reset, requests in flight
//! reserve what they will spend, a per-model 429 spends only that model, out-of-credit keys
//! leave rotation until a probe brings them back, and the user's own limits hold.

use std::time::Duration;

use keypool::*;

use crate::support::*;

const GPT: &str = "gpt-4o";

fn window(remaining: u64, limit: u64, reset_in: Duration) -> Window {
    Window { limit: Some(limit), remaining, reset_at: T0 + reset_in }
}

fn requests_left(remaining: u64, reset_in: Duration) -> Announced {
    Announced { requests: Some(window(remaining, 5, reset_in)), tokens: None }
}

impl Fixture {
    fn select_for(&self, scope: &str, tokens: u32) -> Result<Selection, PoolError> {
        let demand = Demand { scope: Some(scope), tokens };
        self.pool.select(SelectionRequest::new(&self.openai).needing(demand), self.now())
    }

    /// An answer from `key`: as in the app, the pool has its keys loaded by then.
    fn answered(&self, key: &str, scope: &str, announced: Announced) {
        self.pool.status(&self.openai, self.now()).expect("keys load");
        self.pool.report_answer(&KeyId::from(key), Some(scope), &announced);
    }
}

fn id(selection: &Selection) -> &str {
    selection.key_id.as_str()
}

#[test]
fn a_key_with_nothing_left_is_skipped_until_its_reset() {
    let f = Fixture::new(&[1, 1]);
    f.answered("A", GPT, requests_left(0, secs(2)));
    let picks: Vec<String> = (0..4).map(|_| id(&f.select_for(GPT, 10).unwrap()).to_owned()).collect();
    assert_eq!(picks, ["B", "B", "B", "B"], "A announced nothing left for this model: only B serves it");
    assert_eq!(f.status_of("A").state, KeyState::Active, "A is not cooling: it was never refused");
    f.advance(secs(2));
    let picks: Vec<String> = (0..4).map(|_| id(&f.select_for(GPT, 10).unwrap()).to_owned()).collect();
    assert!(picks.contains(&"A".to_owned()), "after the reset A serves again: {picks:?}");
}

#[test]
fn another_model_still_uses_a_key_spent_for_one() {
    let f = Fixture::new(&[1]);
    f.answered("A", GPT, requests_left(0, secs(30)));
    assert!(f.select_for(GPT, 1).is_err(), "nothing left for gpt-4o");
    assert_eq!(id(&f.select_for("gpt-4.1", 1).unwrap()), "A", "its own window for another model");
}

#[test]
fn requests_in_flight_reserve_what_is_left() {
    let f = Fixture::new(&[1, 1]);
    f.answered("A", GPT, requests_left(1, secs(10)));
    f.answered("B", GPT, requests_left(1, secs(10)));
    let first = f.select_for(GPT, 5).unwrap();
    let second = f.select_for(GPT, 5).unwrap();
    assert_ne!(id(&first), id(&second), "one request left on each: two concurrent requests take both keys");
    let err = f.select_for(GPT, 5).expect_err("both last requests are reserved");
    let PoolError::NoAvailableKey { reason, .. } = err else { panic!("no key, got {err:?}") };
    assert_eq!(
        reason,
        Unavailability::Blocked {
            keys: vec![
                BlockedKey {
                    id: KeyId::from("A"),
                    name: "label-A".into(),
                    why: Blocker::Spent { until: T0 + secs(10) },
                    tried: false,
                },
                BlockedKey {
                    id: KeyId::from("B"),
                    name: "label-B".into(),
                    why: Blocker::Spent { until: T0 + secs(10) },
                    tried: false,
                },
            ],
            first_free_at: Some(T0 + secs(10)),
        },
        "each key says when its window refills"
    );
    assert_eq!(f.status_of("A").budgets[0].reserved_requests, 1, "the status shows the reservation");
    drop(first);
    assert!(f.select_for(GPT, 5).is_ok(), "a request that ended gives its reservation back");
}

#[test]
fn token_windows_need_room_for_the_estimated_input() {
    let f = Fixture::new(&[1, 1]);
    let tokens = Announced { requests: None, tokens: Some(window(500, 10_000, secs(6))) };
    f.answered("A", GPT, tokens);
    f.answered("B", GPT, Announced { requests: None, tokens: Some(window(10_000, 10_000, secs(6))) });
    let picks: Vec<String> = (0..3).map(|_| id(&f.select_for(GPT, 2_000).unwrap()).to_owned()).collect();
    assert!(!picks.contains(&"A".to_owned()), "2 000 estimated tokens do not fit in A's 500: {picks:?}");
}

#[test]
fn a_per_model_429_spends_that_model_and_keeps_the_ladder_for_the_rest() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    let spent =
        FailureKind::RateLimited { retry_after: Some(secs(3)), announced: requests_left(0, secs(3)), quota: None };
    let failure = Failure { provider: &f.openai, key: &a, status: 429, kind: spent, scope: Some(GPT), sent_at: None };
    assert_eq!(
        f.pool.report_failure(failure, f.now()).unwrap(),
        FailureOutcome::Spent { until: T0 + secs(3) },
        "the headers say gpt-4o's window is spent: only that model rests"
    );
    assert_eq!(f.status_of("A").state, KeyState::Active, "the key itself is not cooling");
    assert_eq!(f.status_of("A").consecutive_errors, 0, "and it did not climb the ladder");
    assert_eq!(id(&f.select_for("gpt-4.1", 1).unwrap()), "A", "another model still uses it");

    let plain = FailureKind::RateLimited { retry_after: None, announced: Announced::default(), quota: None };
    let failure = Failure { provider: &f.openai, key: &a, status: 429, kind: plain, scope: Some(GPT), sent_at: None };
    assert_eq!(
        f.pool.report_failure(failure, f.now()).unwrap(),
        FailureOutcome::Cooled { until: T0 + secs(60) },
        "a 429 that says nothing about its windows cools the whole key, as before"
    );
}

#[test]
fn an_out_of_credit_key_leaves_rotation_until_a_probe_succeeds() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    let failure = Failure {
        provider: &f.openai,
        key: &a,
        status: 429,
        kind: FailureKind::QuotaExhausted,
        scope: Some(GPT),
        sent_at: None,
    };
    assert_eq!(
        f.pool.report_failure(failure, f.now()).unwrap(),
        FailureOutcome::Exhausted { probe_at: T0 + secs(15 * 60) },
        "out of credit: probed again in 15 minutes"
    );
    let status = f.status_of("A");
    assert_eq!(
        (status.state, status.last_error),
        (KeyState::Exhausted, Some(KeyError::QuotaExhausted { status: 429 }))
    );
    assert_eq!(status.cooling_until, None, "not on the cooldown ladder");
    assert_eq!(f.picks(4), "B B B B", "out of rotation");
    assert!(f.pool.due_probes(&f.openai, f.now()).unwrap().is_empty(), "no probe before its time");

    f.advance(secs(15 * 60));
    let due: Vec<KeyId> = f.pool.due_probes(&f.openai, f.now()).unwrap().into_iter().map(|(id, _)| id).collect();
    assert_eq!(due, std::slice::from_ref(&a), "due after 15 minutes");
    f.pool.report_probe(&a, false, f.now());
    assert_eq!(f.status_of("A").next_probe_at, Some(f.now() + secs(30 * 60)), "still out of credit: 30 minutes");
    f.advance(secs(30 * 60));
    f.pool.report_probe(&a, true, f.now());
    assert_eq!(f.status_of("A").state, KeyState::Active, "a successful probe brings it back by itself");
    assert!(f.picks(4).contains('A'), "into rotation");
}

#[test]
fn the_users_limits_hold_where_a_provider_announces_nothing() {
    let mut keys = keys(&[1]);
    keys[0].limits = UserLimits { rpm: Some(3), max_concurrent: Some(2) };
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    let one = f.try_pick_selection();
    let two = f.try_pick_selection();
    let PoolError::NoAvailableKey { reason, .. } =
        f.pool.select(SelectionRequest::new(&f.openai), f.now()).unwrap_err()
    else {
        panic!("two in flight is the maximum")
    };
    assert!(reason.busy(), "busy, free when a request ends: {reason:?}");
    drop((one, two));
    let _three = f.try_pick_selection();
    let err = f.pool.select(SelectionRequest::new(&f.openai), f.now()).unwrap_err();
    let PoolError::NoAvailableKey { reason: Unavailability::Blocked { first_free_at, .. }, .. } = err else {
        panic!("three this minute is the maximum, got {err:?}")
    };
    assert_eq!(first_free_at, Some(T0 + secs(60)), "free when the first request leaves the minute");
}

impl Fixture {
    fn try_pick_selection(&self) -> Selection {
        self.pool.select(SelectionRequest::new(&self.openai), self.now()).expect("a key is available")
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Answer { key: usize, remaining: u64, reset_ms: u64 },
        Select { keep: bool },
        Finish { which: usize },
        Advance { ms: u64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => (0usize..3, 0u64..4, 0u64..3_000).prop_map(|(key, remaining, reset_ms)| Op::Answer { key, remaining, reset_ms }),
            4 => any::<bool>().prop_map(|keep| Op::Select { keep }),
            2 => (0usize..8).prop_map(|which| Op::Finish { which }),
            1 => (0u64..1_500).prop_map(|ms| Op::Advance { ms }),
        ]
    }

    /// What the test knows of each key: its last announced window and its requests in flight.
    #[derive(Default, Clone)]
    struct Model {
        window: Option<(u64, Timestamp)>,
        in_flight: u32,
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// A key with nothing left is never handed out before its reset, counting the requests in
        /// flight; reservations match the leases held and never go negative.
        #[test]
        fn a_spent_key_is_never_selected_before_its_reset(ops in prop::collection::vec(op(), 1..60)) {
            let f = Fixture::new(&[1, 1, 1]);
            f.pool.status(&f.openai, f.now()).unwrap();
            let mut model = vec![Model::default(); 3];
            let mut held: Vec<(usize, Selection)> = Vec::new();
            for op in ops {
                let now = f.now();
                match op {
                    Op::Answer { key, remaining, reset_ms } => {
                        let reset_at = now + Duration::from_millis(reset_ms);
                        let announced = Announced { requests: Some(Window { limit: Some(5), remaining, reset_at }), tokens: None };
                        f.pool.report_answer(&KeyId::from(name(key)), Some(GPT), &announced);
                        // A larger remainder for (about) the same reset, or an earlier reset, is a
                        // late answer, not believed.
                        let same_reset = Duration::from_millis(250);
                        let late = model[key].window.is_some_and(|(known, known_reset)| {
                            reset_at + same_reset < known_reset || (remaining > known && reset_at <= known_reset + same_reset)
                        });
                        if !late {
                            model[key].window = Some((remaining, reset_at));
                        }
                    }
                    Op::Select { keep } => {
                        if let Ok(selection) = f.select_for(GPT, 1) {
                            let k = usize::from(selection.key_id.as_str().as_bytes()[0] - b'A');
                            if let Some((remaining, reset_at)) = model[k].window {
                                // Before the reset what was announced is left; after it, the whole window.
                                let left = if reset_at > now { remaining } else { 5 };
                                prop_assert!(
                                    left > u64::from(model[k].in_flight),
                                    "{} handed out with {} left and {} in flight (reset {:?})", name(k), left, model[k].in_flight, reset_at
                                );
                            }
                            model[k].in_flight += 1;
                            if keep {
                                held.push((k, selection));
                            } else {
                                model[k].in_flight -= 1;
                            }
                        }
                    }
                    Op::Finish { which } if !held.is_empty() => {
                        let (k, selection) = held.remove(which % held.len());
                        prop_assert!(selection.lease_held(), "a request with a model holds a lease");
                        drop(selection);
                        model[k].in_flight -= 1;
                    }
                    Op::Finish { .. } => {}
                    Op::Advance { ms } => f.advance(Duration::from_millis(ms)),
                }
                for (k, m) in model.iter().enumerate() {
                    let reserved = f.status_of(&name(k)).budgets.first().map_or(0, |b| b.reserved_requests);
                    prop_assert_eq!(reserved, m.in_flight, "{}'s reservations match its requests in flight", name(k));
                }
            }
        }
    }

    trait LeaseHeld {
        fn lease_held(&self) -> bool;
    }

    impl LeaseHeld for Selection {
        fn lease_held(&self) -> bool {
            format!("{:?}", self.lease) != "Lease { held: None }"
        }
    }
}
