//! `$NAME` keys resolve from the environment when used; an unset variable is named, not guessed.

use keypool::*;

use crate::support::*;

fn env_keys() -> Vec<KeyEntry> {
    let mut keys = keys(&[1, 1]);
    keys[0].api_key = Secret::from("$OPENAI_KEY_ONE");
    keys[1].api_key = Secret::from("$OPENAI_KEY_TWO");
    keys
}

#[test]
fn env_reference_resolves_at_use() {
    let resolver = MapResolver::new().with("OPENAI_KEY_ONE", "sk-from-the-environment");
    let f = Fixture::build(PoolConfig::default(), env_keys(), resolver);
    let s = f.try_pick().expect("A's variable is set");
    assert_eq!(s.secret.expose(), "sk-from-the-environment", "the HTTP layer gets the value, not the reference");
}

#[test]
fn plain_values_pass_through() {
    let f = Fixture::new(&[1]);
    let s = f.try_pick().expect("a plain key");
    assert_eq!(s.secret.expose(), "sk-secret-value-of-A-0123456789", "a stored value is sent as stored");
}

#[test]
fn unset_env_var_names_variable() {
    let f = Fixture::build(PoolConfig::default(), env_keys(), MapResolver::new());
    let err = f.try_pick().expect_err("OPENAI_KEY_ONE is not set");
    match &err {
        PoolError::UnresolvedEnv { key_id, label, var, .. } => {
            assert_eq!(key_id.as_str(), "A", "names the key");
            assert_eq!(label.as_deref(), Some("label-A"), "by its label too");
            assert_eq!(var, "OPENAI_KEY_ONE", "and the variable to set");
        }
        other => panic!("an unset variable must be reported as such, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("OPENAI_KEY_ONE") && message.contains("label-A"),
        "the message alone tells the user what to fix: {message}"
    );
    assert_eq!(
        f.status_of("A").last_error,
        Some(KeyError::UnresolvedEnv { var: "OPENAI_KEY_ONE".into() }),
        "and the status view shows it on the key"
    );
}

#[test]
fn unresolved_key_can_be_excluded_and_the_next_selected() {
    let resolver = MapResolver::new().with("OPENAI_KEY_TWO", "sk-two");
    let f = Fixture::build(PoolConfig::default(), env_keys(), resolver);
    let chat = SessionId::from("chat");
    let req = SelectionRequest::new(&f.openai).for_session(&chat);
    let Err(PoolError::UnresolvedEnv { key_id, .. }) = f.pool.select(req, f.now()) else {
        panic!("A comes first and cannot be resolved");
    };
    let tried = [key_id];
    let s = f.pool.select(req.excluding(&tried), f.now()).expect("B resolves");
    assert_eq!(s.secret.expose(), "sk-two", "the completion service's retry loop gets a working key");
    assert_eq!(
        f.pool.select(req, f.now()).expect("bound to B").key_id.as_str(),
        "B",
        "and the session stays on the key that works"
    );
}

#[test]
fn no_secret_in_any_error_or_debug_output() {
    let f = Fixture::new(&[1]);
    let s = f.try_pick().expect("a plain key");
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk-secret"), "a Selection may be logged whole: {shown}");
    f.fail("A", 429, None);
    let err = f.try_pick().expect_err("cooling");
    assert!(!format!("{err} {err:?}").contains("sk-secret"), "errors never carry the key");
    let status = format!("{:?}", f.pool.status(&f.openai, f.now()).unwrap());
    assert!(!status.contains("sk-secret"), "status is for the UI and carries no secret: {status}");
}

/// A key whose value sits in a keychain that is not reachable is never handed out, shows as
/// unavailable, and is named as such when nothing else is left.
#[test]
fn a_sealed_key_is_skipped_and_said_unavailable() {
    let mut entries = keys(&[1, 1]);
    entries[0].sealed = true;
    let f = Fixture::build(PoolConfig::default(), entries, MapResolver::new());
    for _ in 0..4 {
        assert_eq!(f.try_pick().expect("B is readable").key_id.as_str(), "B", "only the readable key serves");
    }
    let status = f.pool.status(&f.openai, f.now()).unwrap();
    assert_eq!(status[0].state, KeyState::Unavailable, "A shows as unavailable, not deleted nor active");

    let mut entries = keys(&[1]);
    entries[0].sealed = true;
    let f = Fixture::build(PoolConfig::default(), entries, MapResolver::new());
    match f.try_pick().expect_err("nothing readable") {
        PoolError::NoAvailableKey { reason: Unavailability::Blocked { keys, .. }, .. } => {
            assert_eq!(keys[0].why, Blocker::Unavailable, "says why: {keys:?}")
        }
        other => panic!("expected the key named as unavailable, got {other:?}"),
    }
}
