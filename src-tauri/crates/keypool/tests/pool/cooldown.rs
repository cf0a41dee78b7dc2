//! Rate limits rest a key with exponential backoff; successes and sweeps end the rest.

use std::time::Duration;

use keypool::*;

use crate::support::*;

fn cooling_for(f: &Fixture, key: &str) -> Option<Duration> {
    f.status_of(key).cooling_until.map(|until| until.saturating_duration_since(f.now()))
}

#[test]
fn rate_limit_backoff_doubles_up_to_the_cap() {
    let f = Fixture::new(&[1, 1]);
    let mut seen = Vec::new();
    for _ in 0..6 {
        f.fail("A", 429, None);
        let rest = cooling_for(&f, "A").expect("a 429 puts the key in cooldown");
        seen.push(rest.as_secs());
        f.advance(rest); // the cooldown runs out, then the key is limited again
    }
    assert_eq!(seen, [60, 120, 240, 480, 900, 900], "min(60 s · 2^(n−1), 900 s) with n consecutive failures");
    assert_eq!(f.status_of("A").consecutive_errors, 6, "expiry does not reset the count; only a success does");
}

#[test]
fn status_529_cools_like_429() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 529, None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(60)), "Anthropic's overload is a rate limit too");
}

#[test]
fn announced_wait_is_used_when_given() {
    let f = Fixture::new(&[1, 1]);
    f.fail_with("A", 429, None, Some(secs(17)));
    assert_eq!(cooling_for(&f, "A"), Some(secs(17)), "the provider knows best when the key is free");
}

#[test]
fn announced_wait_is_bounded_by_cap() {
    let f = Fixture::new(&[1, 1]);
    f.fail_with("A", 429, None, Some(secs(86_400)));
    assert_eq!(cooling_for(&f, "A"), Some(secs(900)), "a day-long Retry-After must not park the key past the cap");
}

#[test]
fn configured_base_and_cap_are_used() {
    let config = PoolConfig { cooldown_base: secs(5), cooldown_cap: secs(12), ..PoolConfig::default() };
    let f = Fixture::build(config, keys(&[1, 1]), MapResolver::new());
    f.fail("A", 429, None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(5)), "the base comes from configuration");
    f.fail("A", 429, None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(10)), "doubled");
    f.fail("A", 429, None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(12)), "and capped by configuration");
}

#[test]
fn cooling_key_is_never_selected() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    assert_eq!(f.picks(4), "B B B B", "A is resting");
    f.advance(secs(59));
    assert_eq!(f.picks(2), "B B", "still resting one second before the end");
}

#[test]
fn cooling_key_returns_when_its_time_is_up_even_without_a_sweep() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.advance(secs(60));
    let picks = f.picks(4);
    assert!(picks.contains('A'), "expiry is detected on selection, the sweep is only housekeeping: {picks}");
}

#[test]
fn report_returns_next_key_and_rebinds_session() {
    let f = Fixture::new(&[1, 1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    let next = f.fail("A", 429, Some(&chat)).expect("B and C are available");
    assert_ne!(next.key_id.as_str(), "A", "the retry must go to another key");
    assert!(next.rebound, "the session moved");
    assert_eq!(f.pick_for(&chat).key_id, next.key_id, "the session is now bound to the retry's key");
}

#[test]
fn a_rate_limit_answers_until_when_the_key_rests() {
    let f = Fixture::new(&[1, 1, 1]);
    let a = KeyId::from("A");
    assert_eq!(
        f.report(&a, 429, None),
        Some(FailureOutcome::Cooled { until: f.now() + secs(60) }),
        "the first rate limit rests the key for the base cooldown, and says until when"
    );
    assert_eq!(
        f.report(&a, 529, Some(secs(5))),
        Some(FailureOutcome::Cooled { until: f.now() + secs(60) }),
        "a shorter announced wait never shortens a running cooldown"
    );
    assert_eq!(f.report(&a, 500, None), None, "a 500 is not the pool's business");
}

#[test]
fn report_returns_none_when_no_key_is_left() {
    let f = Fixture::new(&[1]);
    assert!(f.fail("A", 429, None).is_none(), "the only key is cooling: nothing to retry with");
}

#[test]
fn all_cooling_error_says_when_the_first_frees_up() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.fail_with("B", 429, None, Some(secs(30)));
    f.advance(secs(10));
    let err = f.try_pick().expect_err("both keys rest");
    match &err {
        PoolError::NoAvailableKey { reason: Unavailability::Blocked { keys, first_free_at }, .. } => {
            assert_eq!(*first_free_at, Some(T0 + secs(30)), "B, with the shorter announced wait, frees up first");
            let why: Vec<Blocker> = keys.iter().map(|k| k.why).collect();
            assert_eq!(
                why,
                [Blocker::Cooling { until: T0 + secs(60) }, Blocker::Cooling { until: T0 + secs(30) }],
                "each key says until when it rests"
            );
        }
        other => panic!("all keys cooling must say so, got {other:?}"),
    }
}

#[test]
fn sweep_removes_expired_cooldowns() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.fail_with("B", 429, None, Some(secs(600)));
    f.advance(secs(60));
    f.pool.sweep(f.now());
    let a = f.status_of("A");
    assert_eq!(a.cooling_until, None, "A's 60 s are over and the sweep ended its cooldown");
    assert_eq!(a.state, KeyState::Active, "so it shows as active");
    assert_eq!(f.status_of("B").state, KeyState::Cooling, "B's cooldown has not expired and must stay");
}

#[test]
fn sweep_interval_is_configuration() {
    let f = Fixture::new(&[1]);
    assert_eq!(f.pool.sweep_interval(), secs(30), "the documented default");
    let config = PoolConfig { sweep_interval: secs(5), ..PoolConfig::default() };
    let g = Fixture::build(config, keys(&[1]), MapResolver::new());
    assert_eq!(g.pool.sweep_interval(), secs(5), "the app schedules what the configuration says");
}

#[test]
fn success_clears_cooldown_and_failures() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.fail("A", 429, None);
    f.pool.report_answer(&KeyId::from("A"), None, &Announced::default()); // an in-flight request on A succeeded
    let a = f.status_of("A");
    assert_eq!(a.cooling_until, None, "a success proves the key works again");
    assert_eq!(a.consecutive_errors, 0, "and restarts the backoff");
    assert!(f.picks(2).contains('A'), "A is selectable at once");
    f.fail("A", 429, None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(60)), "the next rate limit starts again at the base");
}

#[test]
fn reset_cooldown_clears_cooldown_and_errors() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.fail("A", 429, None);
    f.pool.reset_cooldown(&KeyId::from("A"));
    let a = f.status_of("A");
    assert_eq!((a.state, a.consecutive_errors), (KeyState::Active, 0), "the user asked to use the key again");
    assert!(f.picks(2).contains('A'), "and it is selectable at once");
}

#[test]
fn other_statuses_change_nothing() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    f.pick_for(&chat);
    for status in [400, 404, 408, 500, 502, 503, 200] {
        assert!(f.fail("A", status, Some(&chat)).is_none(), "no failover for {status}");
    }
    let a = f.status_of("A");
    assert_eq!(a.state, KeyState::Active, "the key is fine");
    assert_eq!((a.failure_count, a.consecutive_errors, a.last_error), (0, 0, None), "nothing was recorded");
    assert!(f.store.disabled_keys().is_empty(), "nothing was disabled");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "the session keeps its key");
}

#[test]
fn cooldowns_survive_a_reload() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 429, None);
    f.pool.invalidate(&f.openai);
    assert_eq!(f.picks(3), "B B B", "an edit of another field must not end A's cooldown");
    assert_eq!(f.status_of("A").consecutive_errors, 1, "nor forget its failures");
}

/// Five requests of one burst, sent together and refused together, are one rate limit: the key
/// rests as announced (1 s), not 1 s, then 60, 120, 240, 480 s, which would send every request
/// waiting for it away (the Anthropic burst that failed 30 of 40 chats at once).
#[test]
fn refusals_of_one_burst_climb_one_step() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    let sent = f.now();
    f.advance(Duration::from_millis(300));
    for _ in 0..5 {
        f.report_sent(&a, 429, Some(secs(1)), Some(sent));
    }
    assert_eq!(cooling_for(&f, "A"), Some(secs(1)), "the burst rests the key as long as announced");
    assert_eq!(f.status_of("A").consecutive_errors, 1, "one step of the ladder");

    f.advance(secs(1));
    let after_rest = f.now();
    f.report_sent(&a, 429, Some(secs(1)), Some(after_rest));
    assert_eq!(
        cooling_for(&f, "A"),
        Some(secs(60)),
        "a request sent after the rest and refused again climbs: the announced wait was not honoured"
    );
}

#[test]
fn a_later_deadline_of_the_same_burst_wins() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    let sent = f.now();
    f.report_sent(&a, 429, Some(secs(1)), Some(sent));
    f.advance(Duration::from_millis(200));
    f.report_sent(&a, 429, Some(secs(5)), Some(sent));
    assert_eq!(cooling_for(&f, "A"), Some(secs(5)), "the burst's later deadline is kept");
    f.report_sent(&a, 429, Some(secs(1)), Some(sent));
    assert_eq!(cooling_for(&f, "A"), Some(secs(5)), "and an earlier one never shortens it");
    assert_eq!(f.status_of("A").consecutive_errors, 1, "still one step");
}

#[test]
fn a_burst_refusal_arriving_after_the_rest_ended_rests_the_key_again_without_climbing() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    let sent = f.now();
    f.report_sent(&a, 429, Some(secs(1)), Some(sent));
    f.advance(Duration::from_millis(1500));
    f.report_sent(&a, 429, Some(secs(1)), Some(sent));
    assert_eq!(cooling_for(&f, "A"), Some(secs(1)), "a slow answer of the burst: rest as announced again");
    assert_eq!(f.status_of("A").consecutive_errors, 1, "it was in flight during the rest, not sent after it");
}

#[test]
fn a_refusal_without_a_send_time_counts_as_a_new_one() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    f.report_sent(&a, 429, Some(secs(1)), None);
    f.report_sent(&a, 429, Some(secs(1)), None);
    assert_eq!(cooling_for(&f, "A"), Some(secs(60)), "unknown send times climb as before");
}
