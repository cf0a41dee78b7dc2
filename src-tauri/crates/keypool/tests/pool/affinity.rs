//! A session keeps its key while it can, and moves only for a reason.

use keypool::*;

use crate::support::*;

#[test]
fn session_keeps_its_bound_key() {
    let f = Fixture::new(&[1, 1, 1]);
    let chat = SessionId::from("chat");
    let first = f.pick_for(&chat);
    f.pick(); // other traffic moves the round-robin on
    f.pick();
    for _ in 0..5 {
        let again = f.pick_for(&chat);
        assert_eq!(again.key_id, first.key_id, "the provider's prompt cache is per key: the session must stay");
        assert!(!again.rebound, "staying on the bound key is not a re-bind");
    }
    assert!(!first.rebound, "a session's first binding is not a re-bind");
}

#[test]
fn bound_session_hit_does_not_advance_the_round_robin() {
    let f = Fixture::new(&[1, 1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    f.pick_for(&chat);
    f.pick_for(&chat);
    assert_eq!(f.pick(), "B", "only new selections consume slots");
}

#[test]
fn rebinds_session_when_bound_key_cools_down() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    f.fail("A", 429, None); // another session's request hit the limit on A
    let next = f.pick_for(&chat);
    assert_eq!(next.key_id.as_str(), "B", "A is cooling, so the session needs another key");
    assert!(next.rebound, "moving keys loses the prompt cache; the caller must be told");
    f.advance(secs(61));
    assert_eq!(
        f.pick_for(&chat).key_id.as_str(),
        "B",
        "after A recovers the session stays on B: re-binding back would lose the cache again"
    );
}

#[test]
fn rebinds_session_when_bound_key_is_disabled() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    f.toggle("A", false);
    let next = f.pick_for(&chat);
    assert_eq!(next.key_id.as_str(), "B", "a key switched off by the user is not used");
    assert!(next.rebound, "the session moved");
}

#[test]
fn rebinds_session_when_bound_key_is_deleted() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    f.store.remove("A");
    f.pool.invalidate(&f.openai);
    let next = f.pick_for(&chat);
    assert_eq!(next.key_id.as_str(), "B", "a deleted key is gone");
    assert!(next.rebound, "the session moved");
}

#[test]
fn rebinds_session_when_it_asks_for_another_provider() {
    let mut keys = keys(&[1]);
    keys.push(entry("anthropic", "X", 1, 0));
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "openai's only key");
    let anthropic = ProviderId::from("anthropic");
    let moved = f.pool.select(SelectionRequest::new(&anthropic).for_session(&chat), f.now()).expect("X is available");
    assert_eq!(moved.key_id.as_str(), "X", "a key of the provider asked for");
    assert!(moved.rebound, "the session left its openai key");
    let again = f.pool.select(SelectionRequest::new(&anthropic).for_session(&chat), f.now()).expect("X is available");
    assert!(!again.rebound, "now bound to X");
}

#[test]
fn rebinds_session_when_bound_key_is_excluded() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    let tried = [KeyId::from("A")];
    let next = f
        .pool
        .select(SelectionRequest::new(&f.openai).for_session(&chat).excluding(&tried), f.now())
        .expect("B is untried");
    assert_eq!(next.key_id.as_str(), "B", "this request already failed on A (e.g. a 500 that changes nothing)");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "B", "the session follows the failover");
}

#[test]
fn released_session_gets_a_new_selection() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    assert_eq!(f.pick_for(&chat).key_id.as_str(), "A", "slot 0");
    f.pool.release_session(&chat);
    let after = f.pick_for(&chat);
    assert_eq!(after.key_id.as_str(), "B", "after release the session is new, and slot 1 is B");
    assert!(!after.rebound, "a released session starts afresh");
}

#[test]
fn sessions_are_independent() {
    let f = Fixture::new(&[1, 1]);
    let (one, two) = (SessionId::from("one"), SessionId::from("two"));
    assert_eq!(f.pick_for(&one).key_id.as_str(), "A", "slot 0");
    assert_eq!(f.pick_for(&two).key_id.as_str(), "B", "slot 1: sessions spread over the keys");
    f.pool.release_session(&one);
    assert_eq!(f.pick_for(&two).key_id.as_str(), "B", "releasing one session leaves the other bound");
}

#[test]
fn an_idle_binding_expires_after_the_cache_would_have() {
    let f = Fixture::new(&[1, 1]);
    let chat = SessionId::from("chat");
    let first = f.pick_for(&chat).key_id.clone();
    f.advance(secs(59 * 60));
    assert_eq!(f.pick_for(&chat).key_id, first, "59 minutes idle: still on its key");
    f.advance(secs(61 * 60));
    f.pick(); // another chat takes the next slot meanwhile
    let again = f.pick_for(&chat);
    assert!(!again.rebound, "past the idle time there is no warm cache to lose: not a rebind");
    f.pool.set_binding_idle(secs(10));
    let kept = again.key_id.clone();
    drop(again);
    f.advance(secs(5));
    assert_eq!(f.pick_for(&chat).key_id, kept, "the idle time can be changed while the app runs");
}

#[test]
fn a_session_goes_back_to_the_key_it_remembers() {
    let f = Fixture::new(&[1, 1, 1]);
    let chat = SessionId::from("restarted-chat");
    let remembered = KeyId::from("C");
    let got = f
        .pool
        .select(SelectionRequest::new(&f.openai).for_session(&chat).preferring(Some(&remembered)), f.now())
        .unwrap();
    assert_eq!(got.key_id.as_str(), "C", "a chat that remembers its key gets it back after a restart");
    assert!(!got.rebound, "its cache may still be warm: no rebind notice");
    f.fail("C", 429, None);
    let moved = f
        .pool
        .select(SelectionRequest::new(&f.openai).for_session(&chat).preferring(Some(&remembered)), f.now())
        .unwrap();
    assert_ne!(moved.key_id.as_str(), "C", "but not while it cannot serve");
}
