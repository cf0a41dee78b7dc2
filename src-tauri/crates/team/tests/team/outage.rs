//! Redis going away fails no request, and once it is back the members share again.

use std::sync::Arc;

use crate::support::*;

/// A streamed answer that waits for the gate: a request in flight until the test lets it end.
fn held() -> Reply {
    Reply::Hold { chunks_before: vec!["held ".into()], gate: "gate".into(), chunks_after: vec!["and done".into()] }
}

/// `n` requests spawned through A and B in turn, streamed when `stream` says so for `i`.
fn spawn(
    rig: &Arc<Rig>,
    name: &str,
    n: usize,
    stream: fn(usize) -> bool,
) -> Vec<tokio::task::JoinHandle<(u16, String)>> {
    (0..n)
        .map(|i| {
            let (rig, conversation) = (rig.clone(), format!("{name}-{i}"));
            tokio::spawn(async move {
                let member = if i % 2 == 0 { &rig.a } else { &rig.b };
                rig.send(member, &conversation, stream(i)).await
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_killed_mid_burst_fails_no_request_and_the_members_share_again_once_it_is_back() {
    let rig = Arc::new(Rig::start(&["x", "y"]).await);
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves first");
    for label in ["x", "y"] {
        rig.fake.script(&key(label), [held(), held(), held(), held()]);
    }
    let seen_before = rig.fake.keys_used().len();
    let in_flight = spawn(&rig, "held", 8, |_| true);
    until("eight requests are in flight upstream", || rig.fake.keys_used().len() >= seen_before + 8).await;
    rig.redis.lock().unwrap().kill();
    // Requests that start while Redis is gone, before the members know it.
    let meanwhile = spawn(&rig, "meanwhile", 8, |i| i % 3 == 0);
    rig.fake.release("gate");
    for task in in_flight.into_iter().chain(meanwhile) {
        let (status, body) = task.await.expect("the request's task ends");
        assert_eq!(status, 200, "no request fails because Redis went away: {body}");
        assert!(!body.contains("\"error\""), "and none breaks off: {body}");
    }
    until("both members say they are disconnected", || {
        [&rig.a, &rig.b].iter().all(|m| m.team().status().state == TeamState::Disconnected)
    })
    .await;
    for i in 0..4 {
        let member = if i % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, &format!("alone-{i}")).await.0, 200, "each member serves alone");
    }

    rig.redis.lock().unwrap().restart();
    rig.connected().await;
    assert!(rig.a.team().status().connects >= 2, "A connected again and merged the team's state");
    rig.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
    let mut turn = 0;
    while !rig.a.attempts().iter().any(|a| a.outcome == AttemptOutcome::RateLimited) {
        assert!(turn < 4, "A's rotation reaches x within a few requests");
        assert_eq!(rig.ask(&rig.a, &format!("after-{turn}")).await.0, 200, "A serves");
        turn += 1;
    }
    until("B learns of A's refusal again", || rig.b.status("x", rig.now()).state == KeyState::Cooling).await;
}
