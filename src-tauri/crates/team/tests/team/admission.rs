//! Admission counts the whole team's traffic: a burst through both members at twice what a key's
//! window has left is never refused, and a member waits for a window the other spent, where
//! without the team it is refused.

use std::sync::Arc;

use keypool::{Announced, Window};
use keypool_llm::{Admission, HandOut, Taught, TeamLink};

use crate::support::*;

/// The key's window: 4 requests per 2 s (on the rig's clock).
const WINDOW: RateLimit = RateLimit { requests: 4, window_ms: 2_000 };

/// 8 conversations at once, 4 through A and 4 through B: how many were answered and how many
/// requests the provider refused.
async fn burst(rig: Arc<Rig>) -> (usize, u64) {
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let rig = rig.clone();
            tokio::spawn(async move {
                let member = if i % 2 == 0 { &rig.a } else { &rig.b };
                rig.ask(member, &format!("burst-{i}")).await.0
            })
        })
        .collect();
    let mut answered = 0;
    for task in tasks {
        if task.await.expect("the request's task ends") == 200 {
            answered += 1;
        }
    }
    (answered, rig.fake.refused())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_through_both_members_at_twice_the_window_is_never_refused() {
    let rig = Arc::new(Rig::start(&["x"]).await);
    assert_eq!(rig.ask(&rig.b, "b-warm").await.0, 200, "B serves first");
    rig.fake.limit(&key("x"), WINDOW);
    assert_eq!(rig.ask(&rig.a, "announce").await.0, 200, "A's first request announces the window");
    until("B knows the window A's first answer announced", || {
        rig.b.status("x", rig.now()).budgets.iter().any(|b| b.requests.is_some())
    })
    .await;
    let (answered, refused) = burst(rig.clone()).await;
    assert_eq!(answered, 8, "every request of the burst is answered");
    assert_eq!(refused, 0, "and the provider refused none: each member counted the other's requests in flight");
    assert!(rig.now() > START, "the burst waited for the window to refill (in simulated time)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_team_a_member_sends_into_the_window_the_other_spent() {
    let rig = Rig::alone(&["x"]).await;
    rig.fake.limit(&key("x"), WINDOW);
    for i in 0..4 {
        assert_eq!(rig.ask(&rig.a, &format!("a-{i}")).await.0, 200, "A spends the window");
    }
    assert_eq!(rig.fake.refused(), 0, "A knew what it had left");
    assert_eq!(rig.ask(&rig.b, "b").await.0, 200, "B's request is answered in the end");
    assert!(rig.fake.refused() > 0, "but B, knowing nothing of what A spent, was refused first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_team_a_member_waits_for_the_window_the_other_spent() {
    let rig = Rig::start(&["x"]).await;
    assert_eq!(rig.ask(&rig.b, "b-warm").await.0, 200, "B serves first");
    rig.fake.limit(&key("x"), WINDOW);
    for i in 0..4 {
        assert_eq!(rig.ask(&rig.a, &format!("a-{i}")).await.0, 200, "A spends the window");
    }
    until("B knows the window is spent", || {
        let status = rig.b.status("x", rig.now());
        status.budgets.iter().any(|b| b.requests.is_some_and(|w| w.remaining == 0))
    })
    .await;
    let before = rig.now();
    assert_eq!(rig.ask(&rig.b, "b").await.0, 200, "B's request is answered");
    assert_eq!(rig.fake.refused(), 0, "without being refused: B waited for the window A spent");
    assert!(rig.now() > before, "B waited for the reset (in simulated time)");
}

/// Whether a member is there is asked of its last heartbeat's age, on the asking member's clock.
/// A member whose clock ran on more than a minute past the others' last heartbeats (a
/// simulation's injected clock runs ahead of the heartbeats' real-time ticks) stopped counting
/// their requests in flight, and the team's admission let a burst through at twice the window
/// (the burst figure's refusals). A member asking to admit a request now says it is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_counts_requests_in_flight_however_far_a_members_clock_ran_since_the_heartbeats() {
    let rig = Rig::quiet(&["x"]).await;
    let provider = ProviderId::new("p");
    let window = Window { limit: Some(4), remaining: 4, reset_at: rig.now() + Duration::from_secs(600) };
    let announced = Announced { requests: Some(window), tokens: None };
    for member in [&rig.a, &rig.b] {
        member.pool.load(&provider).expect("the member's keys load");
    }
    rig.a.pool.report_answer(&rig.a.id("x"), Some(MODEL), &announced);
    rig.a.team().taught(&provider, &rig.a.id("x"), MODEL, Taught::Answer(&announced));
    until("B knows the window A was announced", || {
        rig.b.status("x", rig.now()).budgets.iter().any(|b| b.requests.is_some())
    })
    .await;
    // Ninety seconds on both members' clock, and no heartbeat since they connected.
    rig.clock.advance(Duration::from_secs(90));

    let hand_out =
        |key, session| HandOut { provider: &provider, key, session, bound_before: None, scope: MODEL, tokens: 0 };
    let a_key = rig.a.id("x");
    let sessions: Vec<SessionId> = (0..4).map(|i| SessionId::new(format!("api:session:a-{i}"))).collect();
    let mut holds = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        let (admission, hold) = rig.a.team().hand_out(hand_out(&a_key, session)).await;
        assert_eq!(admission, Admission::Admitted, "A's request {i} fits the window of 4");
        holds.push(hold);
    }
    let (b_key, b_session) = (rig.b.id("x"), SessionId::new("api:session:b"));
    let (admission, _hold) = rig.b.team().hand_out(hand_out(&b_key, &b_session)).await;
    assert_eq!(
        admission,
        Admission::Full,
        "A's four requests in flight fill the window: B's fifth must wait, though a minute and a half \
         passed on B's clock since A's last heartbeat"
    );
    let (on_a, on_b) = (rig.a.team().admissions(), rig.b.team().admissions());
    assert_eq!((on_a.admitted, on_a.full), (4, 0), "the team's ADMIT decided A's four: {on_a:?}");
    assert_eq!((on_b.admitted, on_b.full), (0, 1), "and found B's fifth full: {on_b:?}");
    assert_eq!(on_a.unasked + on_a.timed_out + on_a.failed, 0, "none decided alone: {on_a:?}");
    drop(holds);
}

/// A member's count in flight drops when its requests end, and their answers announced what the
/// window has left after them; the pool learns those windows first, its writer tells the team
/// later. An `ADMIT` that sent the lowered count without those windows was weighed against the
/// window from before the answers and let through a request the provider then refused (the
/// burst's last refusals). The count now comes with the member's windows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_lowered_by_ended_requests_comes_with_the_windows_their_answers_announced() {
    let rig = Rig::start(&["x"]).await;
    let provider = ProviderId::new("p");
    let reset_at = rig.now() + Duration::from_secs(600);
    let whole = Announced { requests: Some(Window { limit: Some(4), remaining: 4, reset_at }), tokens: None };
    for member in [&rig.a, &rig.b] {
        member.pool.load(&provider).expect("the member's keys load");
    }
    rig.a.pool.report_answer(&rig.a.id("x"), Some(MODEL), &whole);
    rig.a.team().taught(&provider, &rig.a.id("x"), MODEL, Taught::Answer(&whole));
    until("B knows the window A was announced", || {
        rig.b.status("x", rig.now()).budgets.iter().any(|b| b.requests.is_some())
    })
    .await;
    let hand_out =
        |key, session| HandOut { provider: &provider, key, session, bound_before: None, scope: MODEL, tokens: 0 };
    let (a_key, b_key) = (rig.a.id("x"), rig.b.id("x"));
    let sessions: Vec<SessionId> = (0..5).map(|i| SessionId::new(format!("api:session:s-{i}"))).collect();

    let (admission, _b_hold) = rig.b.team().hand_out(hand_out(&b_key, &sessions[0])).await;
    assert_eq!(admission, Admission::Admitted, "B's request fits the window of 4");
    let mut a_holds = Vec::new();
    for session in &sessions[1..4] {
        let (admission, hold) = rig.a.team().hand_out(hand_out(&a_key, session)).await;
        assert_eq!(admission, Admission::Admitted, "so do three of A's");
        a_holds.push(hold);
    }
    // A's three are answered: the provider counted them and B's, and said the window is spent.
    // A's pool takes that in; A's writer has not told the team yet (here it is never told).
    let spent = Announced { requests: Some(Window { limit: Some(4), remaining: 0, reset_at }), tokens: None };
    rig.a.pool.report_answer(&a_key, Some(MODEL), &spent);
    drop(a_holds);

    let (admission, _hold) = rig.a.team().hand_out(hand_out(&a_key, &sessions[4])).await;
    assert_eq!(
        admission,
        Admission::Full,
        "the window is spent and B's request is still in flight: A's next request must wait, \
         though A's count no longer holds its three answered requests"
    );
}
