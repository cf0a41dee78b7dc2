//! `app:getStatus` and the argument rules every command shares.

use std::sync::Arc;

use keypool::{ManualClock, MapResolver};
use keypool_api::ipc::{self, ErrorCode};
use keypool_api::AppContext;
use serde_json::json;

use crate::support::{self, dispatch, RecordedEvents, START};

fn context(dir: &std::path::Path) -> AppContext {
    support::context(
        dir,
        Arc::new(RecordedEvents::default()),
        Arc::new(ManualClock::new(START)),
        MapResolver::new(),
        Default::default(),
    )
}

#[test]
fn status_reports_ready_database_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let status = dispatch(&ctx, "app:getStatus", json!({})).expect("known command").unwrap();
    assert_eq!(status["version"], "test", "the version given at startup is reported");
    assert_eq!(status["dataDir"], dir.path().display().to_string(), "the data dir in use");
    assert_eq!(status["database"]["state"], "ready", "a fresh directory opens: {status}");
}

#[test]
fn status_reports_failed_database_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(keypool_store::DATABASE_FILE_NAME), b"not sqlite at all, no").unwrap();
    let ctx = context(dir.path());
    let status = dispatch(&ctx, "app:getStatus", json!({})).unwrap().unwrap();
    assert_eq!(status["database"]["state"], "failed", "a garbage file must not open: {status}");
    assert_eq!(status["database"]["kind"], "not_a_database", "the failure is classified");
    let message = status["database"]["message"].as_str().unwrap();
    assert!(message.contains("left untouched"), "the user is told the file is kept: {message}");
}

#[test]
fn unknown_command_is_not_handled() {
    assert!(ipc::command("app:nope").is_none(), "left to the shell");
}

#[test]
fn unknown_field_is_a_validation_error_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let err = dispatch(&context(dir.path()), "app:getStatus", json!({ "extra": 1 }))
        .unwrap()
        .expect_err("unknown fields are rejected");
    assert_eq!(err.code, ErrorCode::Validation, "wrong arguments are a validation error");
    let issues = err.issues.expect("validation errors carry issues");
    assert_eq!(issues[0].path, "extra", "the issue points at the unknown field");
}

#[test]
fn non_object_arguments_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let err = dispatch(&context(dir.path()), "app:getStatus", json!([1, 2]))
        .unwrap()
        .expect_err("arrays are not argument objects");
    assert_eq!(err.code, ErrorCode::Validation, "a non-object payload is a validation error");
    let encoded = serde_json::to_value(&err).unwrap();
    assert_eq!(encoded["code"], "validation", "the code serializes in snake_case: {encoded}");
}

#[test]
fn preferences_are_kept_in_the_data_directory_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let none = dispatch(&ctx, "app:getPreferences", json!({})).unwrap().unwrap();
    assert_eq!(
        none,
        json!({ "theme": null, "language": null, "page": null, "provider": null }),
        "nothing chosen yet: the UI may bring over what the web view kept"
    );
    let set = json!({ "theme": "dark", "language": "ru", "page": "settings/localApi", "provider": "anthropic" });
    let kept = dispatch(&ctx, "app:setPreferences", set.clone()).unwrap().unwrap();
    assert_eq!(kept, set, "each choice is answered as kept");
    let changed = dispatch(&ctx, "app:setPreferences", json!({ "page": "usage" })).unwrap().unwrap();
    assert_eq!(changed["theme"], "dark", "a change of one field keeps the others");
    drop(ctx);
    let again = dispatch(&context(dir.path()), "app:getPreferences", json!({})).unwrap().unwrap();
    assert_eq!(
        again,
        json!({ "theme": "dark", "language": "ru", "page": "usage", "provider": "anthropic" }),
        "read back"
    );
    assert!(dir.path().join(keypool_api::service::PREFERENCES_FILE_NAME).is_file(), "in the data directory");
}

#[test]
fn preferences_are_there_even_when_the_database_cannot_be_opened() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(keypool_store::DATABASE_FILE_NAME), b"not sqlite at all, no").unwrap();
    let ctx = context(dir.path());
    let kept = dispatch(&ctx, "app:setPreferences", json!({ "language": "ja" })).unwrap();
    assert_eq!(kept.unwrap()["language"], "ja", "the startup problem screen is worded in the user's language");
}

#[test]
fn bad_preferences_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    for (args, path) in [
        (json!({ "theme": "sepia" }), "theme"),
        (json!({ "language": "fr" }), "language"),
        (json!({ "page": "settings/secret" }), "page"),
        (json!({ "provider": "  " }), "provider"),
        (json!({ "theme": null }), "theme"),
        (json!({}), ""),
    ] {
        let err = dispatch(&ctx, "app:setPreferences", args.clone()).unwrap().expect_err("refused");
        assert_eq!(err.code, ErrorCode::Validation, "{args}: a validation error");
        assert_eq!(err.issues.expect("issues")[0].path, path, "{args}: at the field");
    }
    let none = dispatch(&ctx, "app:getPreferences", json!({})).unwrap().unwrap();
    assert_eq!(none["theme"], serde_json::Value::Null, "nothing was kept");
    assert!(!dir.path().join(keypool_api::service::PREFERENCES_FILE_NAME).exists(), "nothing was written");
}

/// What the window's initialization script hands the page: as a script, the two answers the
/// first screen would otherwise wait for, as those commands give them now.
fn handed(ctx: &AppContext) -> serde_json::Value {
    let script = ipc::FirstScreen::of(ctx).script();
    let json = script
        .strip_prefix("window.__KEYPOOL_FIRST_SCREEN__ = ")
        .and_then(|rest| rest.strip_suffix(';'))
        .unwrap_or_else(|| panic!("one assignment to the global the page reads: {script}"));
    serde_json::from_str(json).expect("the value is JSON, so a JavaScript expression")
}

#[test]
fn the_first_screen_is_handed_the_answers_of_get_preferences_and_get_status() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    dispatch(&ctx, "app:setPreferences", json!({ "theme": "dark", "page": "settings/team" })).unwrap().unwrap();
    let first = handed(&ctx);
    let preferences = dispatch(&ctx, "app:getPreferences", json!({})).unwrap().unwrap();
    let status = dispatch(&ctx, "app:getStatus", json!({})).unwrap().unwrap();
    assert_eq!(first["preferences"], preferences, "the preferences as app:getPreferences answers them");
    assert_eq!(first["preferences"]["theme"], "dark", "including the ones just chosen");
    assert_eq!(first["status"], status, "the status as app:getStatus answers it");
}

#[test]
fn a_database_that_cannot_open_is_handed_over_as_its_status_says() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(keypool_store::DATABASE_FILE_NAME), b"not sqlite at all, no").unwrap();
    let first = handed(&context(dir.path()));
    assert_eq!(first["status"]["database"]["state"], "failed", "the first screen is the problem screen: {first}");
    assert_eq!(first["preferences"]["theme"], serde_json::Value::Null, "and the defaults, since none could be read");
}

#[test]
fn text_that_closes_a_script_or_ends_a_line_stays_inside_the_json_string() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let sneaky = "p\u{2028}x</script><script>alert(1)</script>";
    // The provider shown last is free text the user's data gives; it is the one string we can set.
    dispatch(&ctx, "app:setPreferences", json!({ "provider": sneaky })).unwrap().unwrap();
    assert_eq!(handed(&ctx)["preferences"]["provider"], sneaky, "the text comes back as the same string, not as code");
}
