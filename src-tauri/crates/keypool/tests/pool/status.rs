//! Per-key state and statistics for the status view.

use keypool::*;

use crate::support::*;

#[test]
fn status_lists_keys_in_display_order_with_state() {
    let mut keys = keys(&[1, 1, 1]);
    keys.reverse(); // the store returns them in any order
    keys[0].enabled = false; // C
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    f.fail("B", 429, None);
    let status = f.pool.status(&f.openai, f.now()).expect("loads");
    let rows: Vec<(&str, KeyState)> = status.iter().map(|s| (s.key_id.as_str(), s.state)).collect();
    assert_eq!(
        rows,
        [("A", KeyState::Active), ("B", KeyState::Cooling), ("C", KeyState::Disabled)],
        "display order (sortOrder), each with its state"
    );
    assert_eq!(status[1].cooling_until, Some(T0 + secs(60)), "a cooling key says until when");
    assert_eq!(status[0].cooling_until, None, "an active key has no cooldown");
}

#[test]
fn status_counts_hand_outs_and_failures() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    f.pick_for(&chat); // A
    f.advance(secs(5));
    f.pick_for(&chat); // A again, bound
    f.fail("A", 429, Some(&chat)); // B handed out by the report
    f.fail("B", 500, Some(&chat)); // changes nothing
    let (a, b) = (f.status_of("A"), f.status_of("B"));
    assert_eq!(a.request_count, 2, "every hand-out counts, bound or new");
    assert_eq!(a.last_used_at, Some(T0 + secs(5)), "the time of the last hand-out");
    assert_eq!(a.failure_count, 1, "one 429");
    assert_eq!(a.consecutive_errors, 1, "in a row");
    assert_eq!(a.last_error, Some(KeyError::RateLimited { status: 429 }), "what happened");
    assert_eq!(a.last_error_at, Some(T0 + secs(5)), "and when");
    assert_eq!((b.request_count, b.failure_count), (1, 0), "B served the retry; a 500 is not a pool failure");
}

#[test]
fn status_of_unknown_provider_is_empty() {
    let f = Fixture::new(&[1]);
    let status = f.pool.status(&ProviderId::from("nobody"), f.now()).expect("loads nothing");
    assert!(status.is_empty(), "a provider without keys has an empty pool");
}
