//! 401/403 disable a key for good: refused at once in memory, and answered once as an outcome
//! the caller persists.

use std::sync::mpsc;

use keypool::*;

use crate::support::*;

#[test]
fn auth_failure_disables_key_once_and_drops_cache() {
    let f = Fixture::new(&[1, 1]);
    f.pick();
    let loads = f.store.loads();
    let next = f.fail("A", 401, None).expect("B is still good");
    assert_eq!(next.key_id.as_str(), "B", "the retry goes to the other key");
    let disables = f.store.disables();
    assert_eq!(disables.len(), 1, "the caller is told to persist exactly once");
    assert_eq!(
        (disables[0].0.as_str(), disables[0].1.as_str(), disables[0].2, disables[0].3),
        ("A", "openai", DisableReason::AuthRejected { status: 401 }, f.now()),
        "with the key, provider, reason and time, for the UI to show why and when"
    );
    assert_eq!(
        f.store.loads(),
        loads + 1,
        "the persisted disable dropped the provider's cache, so the next selection reloaded"
    );
    f.fail("A", 401, None);
    assert_eq!(f.store.disables().len(), 1, "a late 401 for a key already off writes nothing more");
    assert_eq!(f.picks(3), "B B B", "A is never handed out again");
    assert_eq!(f.status_of("A").state, KeyState::Disabled, "and shows as disabled");
}

#[test]
fn status_403_disables_like_401() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 403, None);
    assert_eq!(
        f.store.disables().first().map(|d| d.2),
        Some(DisableReason::AuthRejected { status: 403 }),
        "403 is a permanent auth failure too, and the reason keeps the status"
    );
}

#[test]
fn auth_rejected_key_is_refused_even_if_persisting_fails() {
    let f = Fixture::new(&[1, 1]);
    f.store.fail_disables(true);
    f.fail("A", 401, None);
    assert_eq!(f.store.disables().len(), 1, "the caller tried to persist it");
    f.pool.invalidate(&f.openai); // the store still says A is enabled
    assert_eq!(f.picks(4), "B B B B", "a rejected key must not be retried just because the write failed");
    assert_eq!(f.status_of("A").state, KeyState::Disabled, "the status tells the truth the store missed");
}

#[test]
fn auth_rejected_key_is_refused_before_the_store_is_written() {
    let f = Fixture::new(&[1, 1]);
    let (seen, picks) = mpsc::channel();
    let openai = f.openai.clone();
    let now = f.now();
    f.store.on_disable(move |pool| {
        // Another session selects while the disable is being written.
        let got: Vec<String> =
            (0..4).map(|_| pool.select(SelectionRequest::new(&openai), now).unwrap().key_id.to_string()).collect();
        seen.send(got).unwrap();
    });
    f.fail("A", 401, None);
    assert_eq!(
        picks.recv().unwrap(),
        ["B", "B", "B", "B"],
        "between the report and the write, A must already be refused"
    );
}

#[test]
fn a_second_report_of_a_refused_key_changes_nothing() {
    let f = Fixture::new(&[1, 1]);
    let a = KeyId::from("A");
    assert_eq!(
        f.report(&a, 401, None),
        Some(FailureOutcome::Disabled { reason: DisableReason::AuthRejected { status: 401 } }),
        "the first rejection asks the caller to disable the key"
    );
    assert_eq!(
        f.report(&a, 403, None),
        Some(FailureOutcome::Unchanged),
        "the key is already off: nothing more to write"
    );
}

#[test]
fn a_stale_load_does_not_lift_the_refusal() {
    let f = Fixture::new(&[1, 1]);
    f.store.fail_disables(true); // the store keeps saying A is enabled
    f.fail("A", 401, None);
    for _ in 0..3 {
        f.pool.invalidate(&f.openai);
        assert_eq!(f.picks(2), "B B", "a reload that shows A enabled must not hand it out again");
    }
}

#[test]
fn user_can_enable_the_key_again_after_fixing_it() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 401, None);
    assert_eq!(f.picks(2), "B B", "disabled");
    f.toggle("A", true);
    assert!(f.picks(2).contains('A'), "the store recorded the disable, so its `enabled` is the truth again");
}

#[test]
fn clear_auth_block_lifts_the_refusal_when_the_store_missed_it() {
    let f = Fixture::new(&[1, 1]);
    f.store.fail_disables(true);
    f.fail("A", 401, None);
    f.pool.clear_auth_block(&KeyId::from("A"));
    f.pool.invalidate(&f.openai);
    assert!(f.picks(2).contains('A'), "the user vouched for the key by hand");
}

#[test]
fn all_disabled_error_lists_the_keys_to_fix() {
    let f = Fixture::new(&[1, 1]);
    f.fail("A", 401, None);
    assert!(f.fail("B", 403, None).is_none(), "nothing left to fail over to");
    let err = f.try_pick().expect_err("every key is disabled");
    match &err {
        PoolError::NoAvailableKey { reason: Unavailability::Blocked { keys, first_free_at }, .. } => {
            let why: Vec<(&str, Blocker)> = keys.iter().map(|k| (k.id.as_str(), k.why)).collect();
            assert_eq!(
                why,
                [("A", Blocker::Disabled { status: Some(401) }), ("B", Blocker::Disabled { status: Some(403) })],
                "the user must learn which keys to fix, and what the provider said"
            );
            assert_eq!(*first_free_at, None, "no disabled key frees up by itself");
        }
        other => panic!("all disabled must say so, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("label-A") && message.contains("label-B"), "named by label: {message}");
    assert!(!message.contains("sk-secret"), "never a secret in a message: {message}");
}
