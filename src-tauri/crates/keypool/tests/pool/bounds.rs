//! What clients control cannot grow the pool's state without end: session ids and model names
//! are theirs to invent, one per request if they like.

use std::time::Duration;

use keypool::*;

use crate::support::*;

fn window(remaining: u64, reset_at: Timestamp) -> Announced {
    Announced { requests: Some(Window { limit: Some(100), remaining, reset_at }), tokens: None }
}

/// 100 000 requests, each with a new session id and a new model name, every answer announcing a
/// window: the bindings stay at the cap and each key's budgets at theirs.
#[test]
fn state_stays_flat_under_random_sessions_and_models() {
    let f = Fixture::new(&[1, 1, 1]);
    for i in 0..100_000u32 {
        let session = SessionId::from(format!("session-{i:08x}"));
        let model = format!("model-{:08x}", i.wrapping_mul(2_654_435_761));
        let demand = Demand { scope: Some(&model), tokens: 10 };
        let selection = f
            .pool
            .select(SelectionRequest::new(&f.openai).for_session(&session).needing(demand), f.now())
            .expect("keys are free");
        f.pool.report_answer(&selection.key_id, Some(&model), &window(99, f.now() + Duration::from_secs(60)));
        drop(selection);
        if i % 1000 == 0 {
            f.advance(Duration::from_millis(10));
        }
    }
    let max_sessions = PoolConfig::default().max_sessions;
    assert_eq!(f.pool.session_count(), max_sessions, "bindings stop at the cap, least recently used out first");
    for key in f.pool.status(&f.openai, f.now()).unwrap() {
        assert!(
            key.budgets.len() <= MAX_SCOPES_PER_KEY,
            "{}: {} scopes kept, at most {MAX_SCOPES_PER_KEY}",
            key.key_id,
            key.budgets.len()
        );
    }
}

#[test]
fn the_least_recently_used_session_goes_first() {
    let config = PoolConfig { max_sessions: 3, ..PoolConfig::default() };
    let f = Fixture::build(config, keys(&[1, 1, 1]), MapResolver::new());
    let [a, b, c, d] = ["a", "b", "c", "d"].map(SessionId::from);
    let key_of_a = f.pick_for(&a).key_id;
    f.advance(secs(1));
    f.pick_for(&b);
    f.pick_for(&c);
    f.advance(secs(1));
    f.pick_for(&a); // a is used again: b is now the least recently used
    f.advance(secs(1));
    f.pick_for(&d);
    assert_eq!(f.pool.session_count(), 3, "one went");
    assert_eq!(f.pick_for(&a).key_id, key_of_a, "a, used lately, kept its key");
    assert!(!f.pick_for(&a).rebound, "and was not re-bound");
}

#[test]
fn a_sweep_forgets_bindings_idle_past_their_time() {
    let f = Fixture::new(&[1, 1]);
    f.pick_for(&SessionId::from("old"));
    f.advance(f.pool.binding_idle());
    f.pick_for(&SessionId::from("recent"));
    f.advance(secs(1));
    f.pool.sweep(f.now());
    assert_eq!(f.pool.session_count(), 1, "only the binding used within the idle time is kept");
}

#[test]
fn a_keys_budgets_drop_models_whose_windows_refilled() {
    let f = Fixture::new(&[1]);
    for i in 0..MAX_SCOPES_PER_KEY {
        let model = format!("m{i}");
        let selection = f
            .pool
            .select(SelectionRequest::new(&f.openai).needing(Demand { scope: Some(&model), tokens: 1 }), f.now())
            .unwrap();
        f.pool.report_answer(&selection.key_id, Some(&model), &window(0, f.now() + secs(5)));
    }
    f.advance(secs(6)); // every window refilled
    let selection = f
        .pool
        .select(SelectionRequest::new(&f.openai).needing(Demand { scope: Some("new"), tokens: 1 }), f.now())
        .unwrap();
    drop(selection);
    let status = f.pool.status(&f.openai, f.now()).unwrap();
    assert_eq!(
        status[0].budgets.iter().map(|b| b.scope.as_str()).collect::<Vec<_>>(),
        ["new"],
        "the refilled windows say nothing any more, and are dropped to make room"
    );
}
