//! A Redis full of garbage: wrong types, words that are no numbers, huge values, deadlines years
//! ahead, values without the team's seal, messages that are not the team's, its scripts flushed.
//! Both members go on serving, and no key is kept out longer than the pool's own caps.

use crate::support::*;

/// Every key of the team the Redis holds.
fn keys_of(rig: &Rig) -> Vec<String> {
    rig.redis.lock().unwrap().team_keys()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garbage_over_every_team_key_leaves_both_members_serving_within_the_caps() {
    let rig = Rig::start(&["x", "y"]).await;
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves first");
    rig.fake.limit(&key("y"), RateLimit { requests: 50, window_ms: 60_000 });
    rig.fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "30")])]);
    for i in 0..4 {
        let member = if i % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, &format!("before-{i}")).await.0, 200, "the team works before the garbage");
    }
    until("the team's state is in Redis", || {
        let keys = keys_of(&rig);
        [":g:", ":s:", ":b:", ":members"].iter().all(|family| keys.iter().any(|k| k.contains(family)))
    })
    .await;

    // Both members read it all back: they reconnect (and load their scripts again).
    let connects = |m: &Member| m.team().status().connects;
    let before = (connects(&rig.a), connects(&rig.b));
    rig.redis.lock().unwrap().garble(TEAM);
    until("both members reconnected and read the garbage back", || {
        connects(&rig.a) > before.0
            && connects(&rig.b) > before.1
            && [&rig.a, &rig.b].iter().all(|m| m.team().status().state == TeamState::Connected)
    })
    .await;

    for i in 0..6 {
        let member = if i % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, &format!("after-{i}")).await.0, 200, "both members serve through the garbage");
    }
    let now = rig.now();
    for member in [&rig.a, &rig.b] {
        for label in ["x", "y"] {
            let status = member.status(label, now);
            assert_ne!(status.state, KeyState::Disabled, "{}: {label} was never rejected: {status:?}", member.name);
            assert_ne!(status.state, KeyState::Exhausted, "{}: {label} never ran out of credit", member.name);
            assert!(
                status.cooling_until.is_none_or(|until| until <= now + Duration::from_secs(900)),
                "{}: {label} rests no longer than the cap: {status:?}",
                member.name
            );
            for budget in &status.budgets {
                assert!(
                    budget.used_up_until.is_none() && budget.cooling_until.is_none(),
                    "{}: no forged daily quota or rest on {label}: {budget:?}",
                    member.name
                );
            }
        }
    }
    rig.clock.advance(Duration::from_secs(901));
    for member in [&rig.a, &rig.b] {
        member.pool.sweep(rig.now());
        for label in ["x", "y"] {
            assert_eq!(member.status(label, rig.now()).state, KeyState::Active, "{}: {label} serves", member.name);
        }
    }
}
