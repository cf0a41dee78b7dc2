//! Weighted round-robin order, the strategy seam, exclusions, and why nothing was available.

use keypool::*;

use crate::support::*;

#[test]
fn first_selection_takes_slot_zero() {
    let f = Fixture::new(&[1, 1, 1]);
    assert_eq!(f.pick(), "A", "slot 0 belongs to the first key in display order (SPEC, not the seed's +1)");
}

#[test]
fn weights_3_1_2_give_a_a_a_b_c_c_then_again() {
    let f = Fixture::new(&[3, 1, 2]);
    assert_eq!(f.picks(8), "A A A B C C A A", "each key takes `weight` consecutive slots of the cycle");
}

#[test]
fn weights_3_2_1_give_a_a_a_b_b_c() {
    let f = Fixture::new(&[3, 2, 1]);
    assert_eq!(f.picks(6), "A A A B B C", "the documented example");
}

#[test]
fn equal_weights_rotate_strictly() {
    let f = Fixture::new(&[1, 1, 1]);
    assert_eq!(f.picks(7), "A B C A B C A", "equal weights are plain round-robin");
}

#[test]
fn order_is_sort_order_then_creation_then_id() {
    let mut keys = vec![
        entry("openai", "z-late", 1, 0),
        entry("openai", "y-early", 1, 0),
        entry("openai", "b-same-time", 1, 0),
        entry("openai", "a-same-time", 1, 0),
        entry("openai", "first-by-sort", 1, -1),
    ];
    keys[0].created_at = T0 + secs(20);
    keys[1].created_at = T0 + secs(10);
    keys[2].created_at = T0 + secs(30);
    keys[3].created_at = T0 + secs(30);
    keys[4].created_at = T0 + secs(99);
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    assert_eq!(
        f.picks(5),
        "first-by-sort y-early z-late a-same-time b-same-time",
        "sortOrder first, then creation time, then id as the final tiebreak"
    );
}

#[test]
fn disabled_keys_are_never_selected() {
    let mut keys = keys(&[1, 1, 1]);
    keys[1].enabled = false;
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    assert_eq!(f.picks(4), "A C A C", "B is off in the store, so the cycle is A, C");
}

#[test]
fn out_of_range_weights_are_clamped() {
    let f = Fixture::new(&[0, 1]);
    assert_eq!(f.picks(4), "A B A B", "a weight of 0 counts as 1 so the key is neither starved nor a division by zero");
}

#[test]
fn excluded_keys_are_skipped() {
    let f = Fixture::new(&[1, 1, 1]);
    let tried = [KeyId::from("A")];
    let s =
        f.pool.select(SelectionRequest::new(&f.openai).excluding(&tried), f.now()).expect("B and C are still untried");
    assert_eq!(s.key_id.as_str(), "B", "A owns slot 0 but this request already tried it");
}

#[test]
fn all_excluded_says_so() {
    let f = Fixture::new(&[1, 1]);
    let tried = [KeyId::from("A"), KeyId::from("B")];
    let err =
        f.pool.select(SelectionRequest::new(&f.openai).excluding(&tried), f.now()).expect_err("every key was tried");
    assert!(
        matches!(&err, PoolError::NoAvailableKey { reason, .. } if reason.all_tried()),
        "the reason must say the request ran out of untried keys, not that keys are broken: {err:?}"
    );
}

#[test]
fn no_keys_says_so() {
    let f = Fixture::new(&[]);
    let err = f.try_pick().expect_err("the pool is empty");
    assert!(
        matches!(err, PoolError::NoAvailableKey { reason: Unavailability::NoKeys, .. }),
        "an empty pool is its own reason (the app falls back to the provider-level key): {err:?}"
    );
}

#[test]
fn keys_of_another_provider_are_not_mixed_in() {
    let mut keys = keys(&[1]);
    keys.push(entry("anthropic", "X", 1, 0));
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    assert_eq!(f.picks(3), "A A A", "X belongs to anthropic");
    let anthropic = ProviderId::from("anthropic");
    let s = f.pool.select(SelectionRequest::new(&anthropic), f.now()).expect("X is available");
    assert_eq!(s.key_id.as_str(), "X", "providers have separate pools");
}

#[test]
fn smooth_wrr_5_1_1_gives_a_a_b_a_c_a_a() {
    let config = PoolConfig { strategy: StrategyKind::SmoothWeightedRoundRobin, ..PoolConfig::default() };
    let f = Fixture::build(config, keys(&[5, 1, 1]), MapResolver::new());
    assert_eq!(f.picks(7), "A A B A C A A", "nginx's sequence, chosen by configuration through the same seam");
}

#[test]
fn strategy_counter_survives_set_changes() {
    let f = Fixture::new(&[1, 1, 1]);
    assert_eq!(f.picks(2), "A B", "first two slots");
    f.fail("C", 429, None);
    assert_eq!(
        f.picks(2),
        "B A",
        "with C cooling the cycle is A B; the counter went on (2 picks + the report's 1), so slot 3 % 2 = 1"
    );
}

#[test]
fn a_key_listed_twice_by_the_loader_is_used_once() {
    let mut keys = keys(&[1, 1]);
    keys.push(entry("openai", "A", 5, 9));
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    assert_eq!(f.picks(4), "A B A B", "the first listing (in display order) wins; the duplicate adds no slots");
    assert_eq!(f.pool.status(&f.openai, f.now()).unwrap().len(), 2, "and no second status row");
}
