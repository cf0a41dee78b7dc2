//! What someone who can write to the team's Redis but lacks the secret can do with values the
//! team sealed: write an old one back where it was. A key's rejection from before the key was
//! enabled again is not believed, by a member that heard of the enable or one started again since;
//! and admission goes by the windows and counts the team sealed, not by values written without
//! the secret.

use crate::support::*;

/// The value of a one-line Redis reply (`$n`, the value), if there is one.
fn bulk(reply: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(reply);
    let mut lines = text.split("\r\n");
    lines.next().filter(|head| head.starts_with('$') && *head != "$-1")?;
    lines.next().map(str::to_owned)
}

/// The team's hash of the one key whose `auth` field holds a rejection, and that field.
fn rejection(rig: &Rig) -> Option<(String, String)> {
    let keys = rig.redis.lock().unwrap().team_keys();
    keys.into_iter().filter(|k| k.contains(":k:")).find_map(|hash| {
        let auth = bulk(&rig.redis(&["HGET", &hash, "auth"]))?;
        auth.split(' ').nth(1).is_some_and(|word| word == "d").then_some((hash, auth))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_old_rejection_written_back_after_the_key_was_enabled_again_is_not_believed() {
    let mut rig = Rig::start(&["x", "y"]).await;
    assert_eq!(rig.ask(&rig.b, "warm-up").await.0, 200, "B serves first");
    rig.fake.always(&key("x"), Reply::status(401));
    assert_eq!(rig.ask(&rig.a, "revoked").await.0, 200, "A fails over from the revoked x to y");
    until("B disables x too", || !rig.b.store.enabled(&rig.b.id("x"))).await;
    let (hash, old) = rejection(&rig).expect("the team holds x's rejection, sealed");

    // Fixed upstream; A's user enables x again, and B hears of it.
    rig.fake.always(&key("x"), Reply::text(&["fine again"]));
    rig.clock.advance(Duration::from_secs(60));
    rig.a.enable("x");
    until("B enables x again", || rig.b.store.enabled(&rig.b.id("x"))).await;

    // The old rejection, sealed as it was, written back and announced by someone without the
    // secret.
    rig.redis(&["HSET", &hash, "auth", &old]);
    let target = hash.split("}:").nth(1).expect("a team key");
    let message = json!({ "m": "0badc0de", "k": target, "f": { "auth": old } }).to_string();
    rig.redis(&["PUBLISH", &format!("{{keypool:{TEAM}}}:events"), &message]);
    // B reads everything back as a member started again does, with only its store to go by.
    rig.restart_b().await;
    for i in 0..3 {
        assert_eq!(rig.ask(&rig.b, &format!("after-{i}")).await.0, 200, "B serves");
    }
    let now = rig.now();
    for member in [&rig.a, &rig.b] {
        assert!(member.store.enabled(&member.id("x")), "{}: x stays on in the store", member.name);
        assert_ne!(member.status("x", now).state, KeyState::Disabled, "{}: and in the pool", member.name);
    }
    assert!(rig.b.store.enabled_at(&rig.b.id("x")).is_some(), "B kept when x was enabled again");

    // A rejection made after the enable is believed as before.
    rig.fake.always(&key("x"), Reply::status(401));
    for i in 0..4 {
        assert_eq!(rig.ask(&rig.b, &format!("revoked-again-{i}")).await.0, 200, "B fails over to y");
    }
    until("B disables x again", || !rig.b.store.enabled(&rig.b.id("x"))).await;
    until("A disables x again", || !rig.a.store.enabled(&rig.a.id("x"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn admission_goes_by_the_windows_and_counts_the_team_sealed() {
    let rig = Rig::start(&["w"]).await;
    rig.fake.limit(&key("w"), RateLimit { requests: 50, window_ms: 60_000 });
    for i in 0..3 {
        let member = if i % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, &format!("before-{i}")).await.0, 200, "the team serves");
    }
    let scopes =
        || -> Vec<String> { rig.redis.lock().unwrap().team_keys().into_iter().filter(|k| k.contains(":s:")).collect() };
    until("the scope's window is in Redis", || {
        scopes().iter().any(|scope| bulk(&rig.redis(&["HGET", scope, "rq"])).is_some())
    })
    .await;
    let before = rig.a.team().admissions();
    assert!(before.admitted > 0, "A asked ADMIT: {before:?}");

    // Without the secret: a window with nothing left for ten minutes, and a member holding the
    // whole window in flight, seen now.
    let far = (rig.now() + Duration::from_secs(600)).as_millis().to_string();
    let now = rig.now().as_millis().to_string();
    for scope in scopes() {
        rig.redis(&["HSET", &scope, "rq", &format!("50 0 {far} 0123456789abcdef")]);
        rig.redis(&["HSET", &scope, "r.0badc0de", "99 100000 0 0123456789abcdef"]);
    }
    rig.redis(&["ZADD", &format!("{{keypool:{TEAM}}}:members"), &now, "0badc0de"]);
    for i in 0..3 {
        assert_eq!(rig.ask(&rig.a, &format!("after-{i}")).await.0, 200, "A serves");
    }
    let after = rig.a.team().admissions();
    assert_eq!(after.full, before.full, "no request was held back by the unsealed values: {after:?}");
    assert!(after.admitted >= before.admitted + 3, "each was admitted by the team: {before:?} then {after:?}");
}
