//! Smooth weighted round-robin order, the strategy seam, exclusions, and why nothing was available.

use keypool::*;

use crate::support::*;

#[test]
fn first_selection_takes_slot_zero() {
    let f = Fixture::new(&[1, 1, 1]);
    assert_eq!(f.pick(), "A", "slot 0 belongs to the first key in display order (SPEC, not the seed's +1)");
}

#[test]
fn weights_3_1_2_give_a_c_a_b_c_a_then_again() {
    let f = Fixture::new(&[3, 1, 2]);
    assert_eq!(f.picks(8), "A C A B C A A C", "each key gets its weight's share of every 6 picks, interleaved");
}

#[test]
fn weights_3_2_1_give_a_b_a_c_b_a() {
    let f = Fixture::new(&[3, 2, 1]);
    assert_eq!(f.picks(6), "A B A C B A", "nginx's order for 3,2,1: no key serves two chats in a row here");
}

#[test]
fn a_heavy_key_listed_second_serves_first_and_a_light_one_soon() {
    // Issue 45: weights 5 then 100 gave the weight-5 key the first 5 chats in a row.
    let f = Fixture::new(&[5, 100]);
    let picks = f.picks(21);
    assert!(
        picks.starts_with("B B B B B B B B B B A B"),
        "the weight-100 key serves first, the weight-5 one on the 11th: {picks}"
    );
    assert_eq!(picks.matches('A').count(), 1, "one turn in 21 picks, its share of 5 in 105: {picks}");
}

#[test]
fn an_answer_announcing_budgets_does_not_start_the_order_over() {
    // Every answer with rate-limit headers rebuilds the available set; the order must go on.
    let f = Fixture::new(&[1, 1, 1]);
    let announced = Announced {
        requests: Some(Window { limit: Some(100), remaining: 99, reset_at: f.now() + secs(60) }),
        tokens: None,
    };
    let mut picks = Vec::new();
    for _ in 0..6 {
        let s = f.pool.select(SelectionRequest::new(&f.openai), f.now()).expect("keys are free");
        picks.push(s.key_id.to_string());
        f.pool.report_answer(&s.key_id, None, &announced);
    }
    assert_eq!(picks.join(" "), "A B C A B C", "equal weights still rotate while each answer rebuilds the set");
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
        "with C cooling A and B alternate; the report's retry went to A (whose turn it was), so B, then A"
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
