//! Property tests: the weighted shares, the availability invariant under any interleaving, and
//! the backoff formula, each checked against an independent model.

use std::time::Duration;

use keypool::*;
use proptest::prelude::*;

use crate::support::*;

fn index_of(key: &KeyId) -> usize {
    usize::from(key.as_str().as_bytes()[0] - b'A')
}

/// The documented formula, written out independently of `PoolConfig::cooldown_for`: the ladder
/// without an announced wait; with one, the wait (at least 1 s) the first time, and the larger of
/// the wait and the previous ladder step when refused again right after.
fn expected_cooldown(n: u32, announced: Option<Duration>) -> Duration {
    let cap = Duration::from_secs(900);
    let ladder = |n: u32| Duration::from_secs(60u64.saturating_mul(1u64 << (n - 1).min(40)));
    match announced {
        Some(wait) if n == 1 => wait.max(Duration::from_secs(1)).min(cap),
        Some(wait) => wait.max(Duration::from_secs(1)).max(ladder(n - 1)).min(cap),
        None => ladder(n).min(cap),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_window_of_total_weight_picks_each_key_weight_times(
        weights in prop::collection::vec(1u32..=100, 1..=8),
    ) {
        let f = Fixture::new(&weights);
        let total: usize = weights.iter().map(|&w| w as usize).sum();
        let seq: Vec<usize> = (0..2 * total)
            .map(|_| index_of(&f.try_pick().expect("no failures, keys available").key_id))
            .collect();
        let mut counts = vec![0u32; weights.len()];
        for &k in &seq[..total] {
            counts[k] += 1;
        }
        for start in 0..=total {
            prop_assert_eq!(
                &counts, &weights,
                "window starting at pick {} must give each key exactly its weight", start
            );
            if start < total {
                counts[seq[start]] -= 1;
                counts[seq[start + total]] += 1;
            }
        }
    }

    #[test]
    fn cooldown_durations_follow_the_formula(
        steps in prop::collection::vec((0u64..2_000, prop::option::of(0u64..3_000)), 1..16),
    ) {
        let f = Fixture::new(&[1, 1]);
        let mut until: Option<Timestamp> = None;
        for (n, (gap, announced)) in steps.into_iter().enumerate() {
            f.advance(secs(gap));
            let announced = announced.map(secs);
            f.fail_with("A", 429, None, announced);
            let n = n as u32 + 1;
            // A running cooldown is never shortened by a later, shorter announced wait.
            until = until.max(Some(f.now() + expected_cooldown(n, announced)));
            let status = f.status_of("A");
            prop_assert_eq!(status.consecutive_errors, n, "each 429 in a row counts");
            prop_assert_eq!(
                status.cooling_until, until.filter(|&u| u > f.now()),
                "failure {} must rest the key for min(60 s·2^(n−1), 900 s) or the bounded announced wait", n
            );
        }
    }

    #[test]
    fn no_selection_ever_returns_a_disabled_or_cooling_key(
        n_keys in 1usize..=6,
        weights in prop::collection::vec(1u32..=5, 6),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let f = Fixture::new(&weights[..n_keys]);
        let mut model = Model { enabled: vec![true; n_keys], errors: vec![0; n_keys], until: vec![None; n_keys], disables: 0 };
        for op in ops {
            let now = f.now();
            match op {
                Op::Select { session } => {
                    let session = session.map(|s| SessionId::from(format!("s{s}")));
                    let mut req = SelectionRequest::new(&f.openai);
                    if let Some(s) = &session {
                        req = req.for_session(s);
                    }
                    model.check(f.pool.select(req, now).ok(), None, now)?;
                }
                Op::RateLimit { key, wait } => {
                    let k = key % n_keys;
                    model.errors[k] += 1;
                    let wait = wait.map(|w| secs(u64::from(w)));
                    model.until[k] = model.until[k].max(Some(now + expected_cooldown(model.errors[k], wait)));
                    let next = f.fail_with(&name(k), 429, Some(&SessionId::from("s0")), wait);
                    model.check(next, Some(k), now)?;
                }
                Op::Auth { key, status } => {
                    let k = key % n_keys;
                    if model.enabled[k] {
                        model.disables += 1;
                    }
                    model.enabled[k] = false;
                    let next = f.fail(&name(k), status, Some(&SessionId::from("s1")));
                    model.check(next, Some(k), now)?;
                }
                Op::Toggle { key, enabled } => {
                    let k = key % n_keys;
                    model.enabled[k] = enabled;
                    f.toggle(&name(k), enabled);
                }
                Op::Advance { secs: s } => f.advance(secs(u64::from(s))),
                Op::Success { key } => {
                    let k = key % n_keys;
                    model.errors[k] = 0;
                    model.until[k] = None;
                    f.pool.report_answer(&KeyId::from(name(k)), None, &Announced::default());
                }
                Op::Sweep => {
                    for until in &mut model.until {
                        if until.is_some_and(|u| u <= now) {
                            *until = None;
                        }
                    }
                    f.pool.sweep(now);
                }
                Op::Release { session } => f.pool.release_session(&SessionId::from(format!("s{session}"))),
            }
            let now = f.now();
            for (k, status) in f.pool.status(&f.openai, now).expect("loads").iter().enumerate() {
                let cooling = model.until[k].filter(|&u| u > now);
                let state = if !model.enabled[k] {
                    KeyState::Disabled
                } else if cooling.is_some() {
                    KeyState::Cooling
                } else {
                    KeyState::Active
                };
                prop_assert_eq!(status.state, state, "key {} state", k);
                prop_assert_eq!(status.cooling_until, cooling, "key {} cooldown", k);
                prop_assert_eq!(status.consecutive_errors, model.errors[k], "key {} failures in a row", k);
            }
        }
        prop_assert_eq!(f.store.disables().len(), model.disables, "one disable per 401/403 on an enabled key");
    }
}

#[derive(Clone, Debug)]
enum Op {
    Select { session: Option<u8> },
    RateLimit { key: usize, wait: Option<u16> },
    Auth { key: usize, status: u16 },
    Toggle { key: usize, enabled: bool },
    Advance { secs: u16 },
    Success { key: usize },
    Sweep,
    Release { session: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::option::of(0u8..4).prop_map(|session| Op::Select { session }),
        3 => (0usize..6, prop::option::weighted(0.2, 0u16..1_200)).prop_map(|(key, wait)| Op::RateLimit { key, wait }),
        1 => (0usize..6, prop_oneof![Just(401u16), Just(403u16)]).prop_map(|(key, status)| Op::Auth { key, status }),
        1 => (0usize..6, any::<bool>()).prop_map(|(key, enabled)| Op::Toggle { key, enabled }),
        3 => (0u16..400).prop_map(|secs| Op::Advance { secs }),
        1 => (0usize..6).prop_map(|key| Op::Success { key }),
        1 => Just(Op::Sweep),
        1 => (0u8..4).prop_map(|session| Op::Release { session }),
    ]
}

/// What the store and the documented rules say each key's state is.
struct Model {
    enabled: Vec<bool>,
    errors: Vec<u32>,
    until: Vec<Option<Timestamp>>,
    disables: usize,
}

impl Model {
    fn available(&self, k: usize, now: Timestamp) -> bool {
        self.enabled[k] && self.until[k].is_none_or(|u| u <= now)
    }

    /// A selection must be an available key other than `failed`; none only if there is none.
    fn check(&self, got: Option<Selection>, failed: Option<usize>, now: Timestamp) -> Result<(), TestCaseError> {
        match got {
            Some(s) => {
                let k = index_of(&s.key_id);
                prop_assert!(self.available(k, now), "handed out key {} while disabled or cooling", k);
                prop_assert!(Some(k) != failed, "the failed key {} was handed out as its own retry", k);
            }
            None => {
                let any = (0..self.enabled.len()).any(|k| Some(k) != failed && self.available(k, now));
                // After a non-failover status (none here) None would be normal; for these ops it
                // means the pool found nothing, which must agree with the model.
                prop_assert!(!any, "a key was available but the pool returned none");
            }
        }
        Ok(())
    }
}
