//! A Redis full of garbage: wrong types, words that are no numbers, huge values, deadlines years
//! ahead, values without the team's seal, messages that are not the team's, its scripts flushed.
//! Both members go on serving, and no key is kept out longer than the pool's own caps.

use crate::support::*;

/// Every key the Redis holds, by SCAN.
fn keys_of(rig: &Rig) -> Vec<String> {
    let reply = String::from_utf8_lossy(&rig.redis(&["SCAN", "0", "COUNT", "100000"])).into_owned();
    reply.lines().filter(|line| line.starts_with("{keypool:")).map(str::to_owned).collect()
}

/// What a hostile writer (without the team secret) puts in the fields the team uses.
fn garbage_values() -> Vec<String> {
    vec![
        "garbage".into(),
        "99999999999999999 1 -".into(),
        "999999999999999 d 401 0123456789abcdef".into(),
        "9999999999999 x 99999999999999 99 fedcba9876543210".into(),
        "- 0 99999999999999 0000000000000000".into(),
        "1e308 inf nan".into(),
        "9".repeat(1 << 20),
    ]
}

const FIELDS: [&str; 11] = ["auth", "credit", "rest", "scope", "rq", "tk", "spent", "day", "r.00ff", "key", "x"];

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

    let values = garbage_values();
    for (i, name) in keys_of(&rig).iter().enumerate() {
        rig.redis(&["DEL", name]);
        match i % 4 {
            0 => drop(rig.redis(&["SET", name, "garbage"])),
            1 => drop(rig.redis(&["RPUSH", name, "a", "b"])),
            2 => drop(rig.redis(&["ZADD", name, "1", "m"])),
            _ => {
                for (j, field) in FIELDS.iter().enumerate() {
                    rig.redis(&["HSET", name, field, &values[(i + j) % values.len()]]);
                }
            }
        }
        // The same key's hash, as a forger would write it, under a name next to the real one.
        let forged = format!("{name}0");
        for (j, field) in FIELDS.iter().enumerate() {
            rig.redis(&["HSET", &forged, field, &values[j % values.len()]]);
        }
    }
    let channel = format!("{{keypool:{TEAM}}}:events");
    let group = keys_of(&rig).into_iter().find_map(|k| k.split(":g:").nth(1).map(str::to_owned)).unwrap_or_default();
    let messages = [
        "not json".to_owned(),
        "{}".to_owned(),
        r#"{"m":1,"k":[],"f":null}"#.to_owned(),
        format!(r#"{{"m":"ff","k":"g:{group}","f":{{"rest":"99999999999999999 9 - 0000000000000000"}}}}"#),
        format!(r#"{{"m":"ff","k":"k:{group}","f":{{"auth":"99999999999999 d 401 0000000000000000"}}}}"#),
        "x".repeat(1 << 20),
    ];
    for message in &messages {
        rig.redis(&["PUBLISH", &channel, message]);
    }
    rig.redis(&["SCRIPT", "FLUSH"]);

    // Both members read it all back: they reconnect (and load their scripts again).
    let connects = |m: &Member| m.team().status().connects;
    let before = (connects(&rig.a), connects(&rig.b));
    // Subscribed RESP3 connections count as `pubsub` clients.
    for kind in ["normal", "pubsub"] {
        rig.redis(&["CLIENT", "KILL", "TYPE", kind]);
    }
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
