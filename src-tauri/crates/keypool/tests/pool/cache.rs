//! Keys are loaded once per provider and cached until a write invalidates them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use keypool::*;

use crate::support::*;

#[test]
fn loader_not_called_on_warm_cache() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    f.pick();
    f.pick_for(&chat);
    assert_eq!(f.store.loads(), 1, "the first selection loads");
    for _ in 0..50 {
        f.pick();
        f.pick_for(&chat);
    }
    f.fail("A", 429, None);
    f.pool.report_answer(&KeyId::from("A"), None, &Announced::default());
    f.pool.sweep(f.now());
    assert_eq!(f.store.loads(), 1, "selections, rate limits and sweeps never go to the store");
}

#[test]
fn invalidate_makes_next_selection_reload() {
    let f = Fixture::new(&[1, 1]);
    assert_eq!(f.picks(2), "A B", "two keys");
    f.store.insert(entry("openai", "C", 1, 2));
    assert_eq!(f.picks(3), "A B A", "without invalidation the cache stands");
    f.pool.invalidate(&f.openai);
    assert_eq!(f.picks(3), "B C A", "the next selection reloads and sees C: B, whose turn it was, then C, then A");
    assert_eq!(f.store.loads(), 2, "exactly one reload");
}

#[test]
fn invalidating_another_provider_keeps_this_cache() {
    let f = Fixture::new(&[1]);
    f.pick();
    f.pool.invalidate(&ProviderId::from("anthropic"));
    f.pick();
    assert_eq!(f.store.loads(), 1, "caches are per provider");
}

#[test]
fn load_racing_with_invalidation_is_not_installed() {
    let f = Fixture::new(&[1, 1]);
    let raced = Arc::new(AtomicBool::new(false));
    let (store, openai, once) = (f.store.clone(), f.openai.clone(), raced.clone());
    f.store.on_load(move |pool| {
        // The first load has read its rows; now a write lands (B switched off) and invalidates.
        if !once.swap(true, Ordering::SeqCst) {
            store.set_enabled("B", false);
            pool.invalidate(&openai);
        }
    });
    assert_eq!(f.picks(3), "A A A", "the stale rows (B on) must not be installed over the write");
    assert_eq!(f.store.loads(), 2, "the pool loaded again after the invalidation");
}

#[test]
fn load_error_is_reported_and_retried_next_time() {
    let f = Fixture::new(&[1]);
    f.store.fail_loads(true);
    let err = f.try_pick().expect_err("the store failed");
    assert!(matches!(err, PoolError::Load { .. }), "a load failure is its own error: {err:?}");
    assert!(
        std::error::Error::source(&err).is_some_and(|s| s.to_string() == "database is locked"),
        "with the store's error as its source"
    );
    f.store.fail_loads(false);
    assert_eq!(f.pick(), "A", "nothing bad was cached; the next selection loads again");
}

#[test]
fn loader_is_called_without_the_pool_lock() {
    let f = Fixture::new(&[1]);
    let (verdict, verdicts) = mpsc::channel();
    let pool = Arc::downgrade(&f.pool);
    f.store.on_load(move |_| {
        let _ = verdict.send(pool_usable_from_another_thread(&pool));
    });
    f.pick();
    assert!(verdicts.recv().unwrap(), "the pool was usable during the load, so no lock was held across the I/O");
}
