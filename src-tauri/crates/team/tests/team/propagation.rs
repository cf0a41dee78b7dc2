//! What one member learns reaches the other: a rate limit rests the key on both, a verified
//! rejection disables it on both, and enabling it again on either lifts it on both.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_seen_by_one_member_makes_the_other_skip_the_key() {
    let rig = Rig::start(&["x", "y"]).await;
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves before anything happened (on x)");
    rig.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
    let (status, _) = rig.ask(&rig.a, "first").await;
    assert_eq!(status, 200, "A fails over from x to y");
    let outcomes: Vec<(String, AttemptOutcome)> =
        rig.a.attempts().iter().map(|a| (rig.a.label(a.key.pool_key().unwrap()), a.outcome)).collect();
    let expected = [("x".to_owned(), AttemptOutcome::RateLimited), ("y".to_owned(), AttemptOutcome::Ok)];
    assert_eq!(outcomes, expected, "x was refused on A, y answered");
    until("B learns that x rests", || rig.b.status("x", rig.now()).state == KeyState::Cooling).await;
    assert_eq!(
        rig.b.status("x", rig.now()).cooling_until,
        rig.a.status("x", rig.now()).cooling_until,
        "B rests x until the same deadline as A"
    );
    let x_before = rig.requests_with("x");
    for i in 0..4 {
        assert_eq!(rig.ask(&rig.b, &format!("b-{i}")).await.0, 200, "B serves");
    }
    assert_eq!(rig.requests_with("x"), x_before, "B sent nothing to x while it rests (its rotation would have)");
    assert!(rig.b.team().status().last_change.is_some(), "B says when it last heard of a change");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rejected_on_one_member_is_disabled_on_the_other_and_enabling_it_anywhere_lifts_it() {
    let rig = Rig::start(&["x", "y"]).await;
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves first");
    // Revoked: completions and the model list (the verification) are refused.
    rig.fake.always(&key("x"), Reply::status(401));
    assert_eq!(rig.ask(&rig.a, "first").await.0, 200, "A fails over from the revoked x to y");
    assert!(!rig.a.store.enabled(&rig.a.id("x")), "A disabled x in its store");
    until("B disables x too", || !rig.b.store.enabled(&rig.b.id("x"))).await;
    assert_eq!(rig.b.status("x", rig.now()).state, KeyState::Disabled, "x is off on B");
    let x_before = rig.requests_with("x");
    for i in 0..3 {
        assert_eq!(rig.ask(&rig.b, &format!("b-{i}")).await.0, 200, "B serves on y");
    }
    assert_eq!(rig.requests_with("x"), x_before, "B never tried the revoked key");

    // The key is fixed upstream and B's user enables it again.
    rig.fake.always(&key("x"), Reply::text(&["fine again"]));
    rig.clock.advance(Duration::from_secs(60));
    rig.b.enable("x");
    until("A enables x again", || rig.a.store.enabled(&rig.a.id("x"))).await;
    until("A's pool serves x", || rig.a.status("x", rig.now()).state == KeyState::Active).await;
    let x_before = rig.requests_with("x");
    for i in 0..2 {
        assert_eq!(rig.ask(&rig.a, &format!("a-{i}")).await.0, 200, "A serves");
    }
    assert!(rig.requests_with("x") > x_before, "A's rotation includes x again");
}
