//! The team pool's figures, over the tests' rig (two members, the fake provider, a redis-server of
//! the run's own on loopback):
//! - how long after A's pool rests a key on a 429 B's pool rests it too (median, p99);
//! - the time a request takes through A's local API with the team on vs off, at concurrency 1
//!   and 64 (median);
//! - a burst through A and B together at twice a key's announced window: answered and refused,
//!   team off vs on, and how the team's side of the hand-outs went (which paths decided alone).
//!
//! Run with `cargo bench -p keypool-team --bench figures` (a release build; a program of its own,
//! `harness = false`).

#[allow(dead_code, unused_imports)]
#[path = "../tests/team/support.rs"]
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use keypool_team::AdmissionCounts;
use support::*;

/// Rounds for the propagation figure.
const ROUNDS: usize = 200;
/// Requests per concurrency level for the overhead figure.
const REQUESTS: usize = 2_000;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn summary(mut samples: Vec<f64>) -> String {
    samples.sort_by(f64::total_cmp);
    format!(
        "median {:.3} ms, p99 {:.3} ms, max {:.3} ms (n = {})",
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples[samples.len() - 1],
        samples.len()
    )
}

/// A 429 on A, and the time until B's pool rests the key, measured by one thread watching both
/// pools (A's pool rests the key before the team is told, so this is the team's share alone).
async fn propagation() {
    let rig = Arc::new(Rig::start(&["x", "y"]).await);
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves");
    let mut samples = Vec::with_capacity(ROUNDS);
    let (mut conversation, mut missed) = (0, 0);
    for _ in 0..ROUNDS {
        // Past the local cap: neither member rests x any more.
        rig.clock.advance(Duration::from_secs(16 * 60));
        until("x is active on both", || {
            [&rig.a, &rig.b].iter().all(|m| m.status("x", rig.now()).state == KeyState::Active)
        })
        .await;
        rig.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
        let done = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (rig, done) = (rig.clone(), done.clone());
            // Polls both pools every 50 us (a spinning thread would be descheduled on a busy
            // machine and see both change at once); the figure's resolution is one poll.
            std::thread::spawn(move || {
                let cooling = |m: &Member| m.status("x", rig.now()).state == KeyState::Cooling;
                let (mut on_a, mut on_b) = (None, None);
                while on_b.is_none() || on_a.is_none() {
                    let now = Instant::now();
                    if on_a.is_none() && cooling(&rig.a) {
                        on_a = Some(now);
                    }
                    if on_b.is_none() && cooling(&rig.b) {
                        on_b = Some(now);
                    }
                    if done.load(Ordering::Acquire) && (on_a.is_none() || on_b.is_none()) {
                        return None;
                    }
                    std::thread::sleep(Duration::from_micros(50));
                }
                let (a, b) = (on_a?, on_b?);
                Some(b.saturating_duration_since(a).as_secs_f64() * 1e3)
            })
        };
        let refused_before = rig.a.attempts().iter().filter(|a| a.outcome == AttemptOutcome::RateLimited).count();
        // A's rotation reaches x within a few requests.
        while rig.a.attempts().iter().filter(|a| a.outcome == AttemptOutcome::RateLimited).count() == refused_before {
            conversation += 1;
            assert_eq!(rig.ask(&rig.a, &format!("p-{conversation}")).await.0, 200, "A serves");
        }
        until("B rests x", || rig.b.status("x", rig.now()).state == KeyState::Cooling).await;
        // The watcher's last poll (within 50 us) sees both, unless it missed A's rest entirely.
        tokio::time::sleep(Duration::from_millis(2)).await;
        done.store(true, Ordering::Release);
        match watcher.join().expect("the watcher ends") {
            Some(ms) => samples.push(ms),
            None => missed += 1,
        }
    }
    println!("429 on A until B rests the key: {} ({missed} rounds not seen)", summary(samples));
}

/// The time per request through A's local API, `concurrency` at once, team on or off.
async fn per_request(team: bool, concurrency: usize) -> String {
    let rig = Arc::new(if team { Rig::start(&["x", "y"]).await } else { Rig::alone(&["x", "y"]).await });
    for i in 0..20 {
        assert_eq!(rig.ask(&rig.a, &format!("warm-{i}")).await.0, 200, "A serves");
    }
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (rig, next) = (rig.clone(), next.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= REQUESTS {
                        return times;
                    }
                    let started = Instant::now();
                    assert_eq!(rig.ask(&rig.a, &format!("r-{i}")).await.0, 200, "A serves");
                    times.push(started.elapsed().as_secs_f64() * 1e3);
                }
            })
        })
        .collect();
    let mut samples = Vec::new();
    for worker in workers {
        samples.extend(worker.await.expect("the worker ends"));
    }
    summary(samples)
}

/// 8 conversations at once, 4 through A and 4 through B, at a key whose window holds 4: rounds of
/// them, each after the window refilled, and how many were answered and refused upstream.
async fn burst(team: bool, rounds: usize) -> (usize, u64, AdmissionCounts, u64) {
    const WINDOW: RateLimit = RateLimit { requests: 4, window_ms: 2_000 };
    let rig = Arc::new(if team { Rig::start(&["x"]).await } else { Rig::alone(&["x"]).await });
    assert_eq!(rig.ask(&rig.b, "b-warm").await.0, 200, "B serves");
    rig.fake.limit(&key("x"), WINDOW);
    assert_eq!(rig.ask(&rig.a, "announce").await.0, 200, "A's first answer announces the window");
    if team {
        until("B knows the window", || rig.b.status("x", rig.now()).budgets.iter().any(|b| b.requests.is_some())).await;
    } else {
        assert_eq!(rig.ask(&rig.b, "announce-b").await.0, 200, "B's first answer announces it to B");
    }
    let mut answered = 0;
    for round in 0..rounds {
        rig.clock.advance(Duration::from_secs(3));
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let rig = rig.clone();
                tokio::spawn(async move {
                    let member = if i % 2 == 0 { &rig.a } else { &rig.b };
                    rig.ask(member, &format!("burst-{round}-{i}")).await.0
                })
            })
            .collect();
        for task in tasks {
            answered += usize::from(task.await.expect("the request's task ends") == 200);
        }
    }
    let counts = [&rig.a, &rig.b].iter().filter_map(|m| m.team.as_ref()).map(|t| t.admissions()).fold(
        AdmissionCounts::default(),
        |sum, c| AdmissionCounts {
            admitted: sum.admitted + c.admitted,
            full: sum.full + c.full,
            unasked: sum.unasked + c.unasked,
            timed_out: sum.timed_out + c.timed_out,
            failed: sum.failed + c.failed,
        },
    );
    // Every attempt sent with a pooled key had a hand-out the team decided, or went after
    // MAX_TEAM_REFUSALS `Full` verdicts on what the member knew (the difference).
    let sent = [&rig.a, &rig.b].iter().map(|m| m.attempts().len() as u64).sum::<u64>();
    let decided = counts.admitted + counts.unasked + counts.timed_out + counts.failed;
    (answered, rig.fake.refused(), counts, sent.saturating_sub(decided))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    propagation().await;
    for concurrency in [1, 64] {
        for team in [false, true] {
            let figure = per_request(team, concurrency).await;
            println!("per request, concurrency {concurrency}, team {}: {figure}", if team { "on" } else { "off" });
        }
    }
    for team in [false, true] {
        let rounds = 20;
        let (answered, refused, c, after_full) = burst(team, rounds).await;
        println!(
            "2x burst, {rounds} rounds of 8 requests over A and B, team {}: {answered} answered, {refused} refused upstream",
            if team { "on" } else { "off" }
        );
        if team {
            println!(
                "  the team's hand-outs: {} admitted and {} full by ADMIT; decided alone: {} unasked (no window, no Redis), \
                 {} timed out, {} failed, {after_full} sent after repeated full verdicts",
                c.admitted, c.full, c.unasked, c.timed_out, c.failed
            );
        }
    }
}
