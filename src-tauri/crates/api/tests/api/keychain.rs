//! Keys at rest in the keychain. The scenarios run against a keychain in memory in every test
//! run, and against the real Secret Service (gnome-keyring in a D-Bus session) in the suite
//! `tests/keychain.sh` starts (`-- --ignored keychain::secret_service`).

use std::path::Path;
use std::sync::Arc;

use keypool_fake_provider::{FakeProvider, Reply};
use keypool_keychain::{Keychain, MemoryKeychain, OsKeychain};
use serde_json::{json, Value};

use crate::chat::new_chat;
use crate::support::Harness;

const POOL_A: &str = "sk-kc-POOLKEYAAAAAAAAAAAAAAAAAAAA-0001";
const POOL_B: &str = "sk-kc-POOLKEYBBBBBBBBBBBBBBBBBBBB-0002";
const REPLACED: &str = "sk-kc-REPLACEDREPLACEDREPLACEDRE-0003";
const PROVIDER_OWN: &str = "sk-kc-PROVIDEROWNPROVIDEROWNPROV-0004";

/// Whether `secret` is anywhere in `bytes`.
fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// The database, its WAL and every backup copy beside it, by name.
fn files_at_rest(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(keypool_store::DATABASE_FILE_NAME))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

fn assert_no_secret_at_rest(dir: &Path, secrets: &[&str], when: &str) {
    for (name, bytes) in files_at_rest(dir) {
        for secret in secrets {
            assert!(!holds(&bytes, secret), "{when}: {name} holds a key value");
        }
    }
}

/// A provider pointing at the fake with its own key, and two pool keys.
fn setup(h: &Harness, fake: &FakeProvider) -> (String, Vec<String>) {
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()),
                "apiKey": PROVIDER_OWN, "models": ["fake-model"], "defaultModel": "fake-model" }),
    );
    let provider = provider["id"].as_str().unwrap().to_owned();
    let ids = [("a", POOL_A), ("b", POOL_B)]
        .iter()
        .map(|(label, key)| {
            let row = h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": key, "label": label }));
            row["id"].as_str().unwrap().to_owned()
        })
        .collect();
    (provider, ids)
}

/// Add, replace, delete and chat with keys kept in `keychain`; then prove nothing is at rest in
/// the database files, that the keychain holds exactly the live keys, and that a restart reads
/// them back. `accounts` lists what the keychain holds (for the real one, by `secret-tool`).
async fn keys_live_in_the_keychain(keychain: Arc<dyn Keychain>, accounts: impl Fn() -> Vec<String>) {
    let h = Harness::with_keychain(keychain.clone());
    let status = h.ok("app:getStatus", json!({}));
    assert_eq!(status["keychain"], json!({ "state": "available" }), "the keychain is in use");

    let fake = FakeProvider::start().await;
    let (provider, ids) = setup(&h, &fake);
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    assert_eq!(keys[0]["apiKeyPreview"], "sk-…0001", "the preview still shows: {keys}");

    // Replace A's value, delete B.
    h.ok("llmConfig:updateApiKey", json!({ "id": ids[0], "apiKey": REPLACED }));
    h.ok("llmConfig:deleteApiKey", json!({ "id": ids[1] }));
    let err = h.err("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": REPLACED }));
    assert_eq!(err.code, keypool_api::ipc::ErrorCode::Conflict, "a duplicate of a keychain key is still refused");

    fake.always(REPLACED, Reply::text(&["from the keychain"]));
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    assert_eq!(reply["content"], "from the keychain", "the replaced key answered");
    assert_eq!(fake.keys_used(), [REPLACED], "sent with the value from the keychain");

    let mut live = accounts();
    live.sort();
    let mut expected = vec![ids[0].clone(), format!("provider:{provider}")];
    expected.sort();
    assert_eq!(live, expected, "the keychain holds exactly the live keys");
    assert_no_secret_at_rest(
        h.dir.path(),
        &[POOL_A, POOL_B, REPLACED, PROVIDER_OWN],
        "after add, update, delete, chat",
    );

    let h = h.reopen();
    fake.always(REPLACED, Reply::text(&["again"]));
    let (reply, _) = h.send(&chat, Some("still there?"), |_| {}).await.unwrap();
    assert_eq!(reply["content"], "again", "a restart reads the key back from the keychain");

    h.ok("llmConfig:deleteProvider", json!({ "id": provider }));
    assert_eq!(accounts(), Vec::<String>::new(), "deleting the provider removes its entries");
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_live_in_a_keychain() {
    let keychain = MemoryKeychain::new();
    let listed = keychain.clone();
    keys_live_in_the_keychain(keychain, move || listed.accounts().unwrap()).await;
}

/// A database that holds plain keys (and backup copies of it) moves them into the keychain at
/// the next start: none is lost, none stays at rest.
async fn plaintext_database_migrates(keychain: Arc<dyn Keychain>) {
    let fake = FakeProvider::start().await;
    let h = Harness::new();
    let (provider, ids) = setup(&h, &fake);
    let env = h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "$KEYPOOL_TEST_ENV_KEY" }));
    drop(env);
    // A backup copy from an older schema, as an upgrade leaves one.
    let db = h.dir.path().join(keypool_store::DATABASE_FILE_NAME);
    let backup = h.dir.path().join(format!("{}.v7.bak", keypool_store::DATABASE_FILE_NAME));
    rusqlite::Connection::open(&db).unwrap().execute("VACUUM INTO ?1", [backup.to_string_lossy()]).unwrap();
    let plain = files_at_rest(h.dir.path()).iter().any(|(_, bytes)| holds(bytes, POOL_A));
    assert!(plain, "before: the key is at rest in plain text (the test can fail)");

    let h = h.reopen_with(Some(keychain.clone()));
    assert_no_secret_at_rest(h.dir.path(), &[POOL_A, POOL_B, PROVIDER_OWN], "after the migration");
    for (id, value) in [(&ids[0], POOL_A), (&ids[1], POOL_B)] {
        assert_eq!(keychain.read(id).unwrap().map(|s| s.expose().to_owned()).as_deref(), Some(value), "moved intact");
    }
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    let previews: Vec<&str> = keys.as_array().unwrap().iter().map(|k| k["apiKeyPreview"].as_str().unwrap()).collect();
    assert_eq!(previews, ["sk-…0001", "sk-…0002", "$KEYPOOL_TEST_ENV_KEY"], "none lost; references stay as written");

    fake.always(POOL_A, Reply::text(&["a"]));
    fake.always(POOL_B, Reply::text(&["b"]));
    let chat = new_chat(&h, &provider);
    h.send(&chat, Some("one"), |_| {}).await.unwrap();
    h.send(&new_chat(&h, &provider), Some("two"), |_| {}).await.unwrap();
    let mut used = fake.keys_used();
    used.sort();
    assert_eq!(used, [POOL_A, POOL_B], "both moved keys serve");

    // The scrubbed backup still opens, its key marked as kept in the keychain.
    let conn = rusqlite::Connection::open(&backup).unwrap();
    let (storage, value): (String, Option<String>) = conn
        .query_row("SELECT storage, api_key FROM llm_provider_api_keys WHERE id = ?1", [&ids[0]], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((storage.as_str(), value), ("keychain", None), "the backup copy points at the keychain");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plaintext_database_moves_into_the_keychain() {
    plaintext_database_migrates(MemoryKeychain::new()).await;
}

/// Without a keychain keys go to the database and the app says so; keys already in the
/// keychain show as unavailable, never as deleted, and a chat says why it cannot use them.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_keychain_keys_stay_in_the_database_and_kept_ones_show_unavailable() {
    let h = Harness::new();
    let status = h.ok("app:getStatus", json!({}));
    assert_eq!(status["keychain"]["state"], "unavailable", "the notice has something to say: {status}");
    assert_eq!(status["keychain"]["reason"], "not_configured");
    let fake = FakeProvider::start().await;
    let (provider, _) = setup(&h, &fake);
    let (db, wal) = h.file_bytes();
    assert!(holds(&db, POOL_A) || holds(&wal, POOL_A), "with no keychain the key is kept in the database, as before");

    let keychain = MemoryKeychain::new();
    let h = h.reopen_with(Some(keychain.clone()));
    keychain.set_gone(true);
    let h = h.reopen_with(Some(keychain.clone()));
    let status = h.ok("app:getStatus", json!({}));
    assert_eq!(status["keychain"]["state"], "available", "it answered at start (a reopen keeps the double)");
    let pool = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    let states: Vec<&str> = pool["keys"].as_array().unwrap().iter().map(|k| k["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["unavailable", "unavailable"], "kept keys show as unavailable: {pool}");
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    assert_eq!(keys.as_array().unwrap().len(), 2, "and are still listed");

    h.ok("settings:update", json!({ "maxWaitSeconds": 0 }));
    let chat = new_chat(&h, &provider);
    let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    let blocked: Vec<&Value> = reply["errorDetails"]["keys"].as_array().unwrap().iter().collect();
    assert!(blocked.iter().all(|k| k["state"] == "unavailable"), "the chat says why: {reply}");
    assert!(fake.seen().is_empty(), "nothing was sent");

    keychain.set_gone(false);
    let h = h.reopen_with(Some(keychain));
    let pool = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    assert_eq!(pool["keys"][0]["state"], "active", "back when the keychain is");
}

/// A key added while the keychain fails goes to the database, and the status says why.
#[test]
fn a_keychain_that_stops_answering_turns_writes_to_the_database_visibly() {
    let keychain = MemoryKeychain::new();
    let h = Harness::with_keychain(keychain.clone());
    keychain.set_gone(true);
    h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": POOL_A }));
    let (db, wal) = h.file_bytes();
    assert!(holds(&db, POOL_A) || holds(&wal, POOL_A), "kept in the database rather than lost");
    let status = h.ok("app:getStatus", json!({}));
    assert_eq!(status["keychain"]["reason"], "unreachable", "and the app says so: {status}");
}

/// Left-over entries of keys deleted while the keychain was away are removed at the next start.
#[test]
fn left_over_entries_are_removed_at_start() {
    let keychain = MemoryKeychain::new();
    keychain.write("deleted-long-ago", &keypool::Secret::new(POOL_B)).unwrap();
    let h = Harness::with_keychain(keychain.clone());
    let kept = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": POOL_A }));
    let _h = h.reopen();
    assert_eq!(keychain.accounts().unwrap(), [kept["id"].as_str().unwrap()], "only the live key stays");
}

/// The real Secret Service: what `secret-tool` sees under our service.
fn secret_tool_accounts() -> Vec<String> {
    let out = std::process::Command::new("secret-tool")
        .args(["search", "--all", "service", keypool_keychain::SERVICE])
        .output()
        .expect("secret-tool runs (libsecret-tools)");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    text.lines().filter_map(|l| l.strip_prefix("attribute.username = ")).map(str::to_owned).collect()
}

mod secret_service {
    use super::*;

    fn os_keychain() -> Arc<dyn Keychain> {
        Arc::new(OsKeychain::open().expect("a Secret Service in this D-Bus session (run tests/keychain.sh)"))
    }

    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "needs a Secret Service: tests/keychain.sh runs it"]
    async fn keys_live_in_the_secret_service() {
        keys_live_in_the_keychain(os_keychain(), secret_tool_accounts).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "needs a Secret Service: tests/keychain.sh runs it"]
    async fn a_plaintext_database_moves_into_the_secret_service() {
        plaintext_database_migrates(os_keychain()).await;
        // Leave the session's keychain as found for the next test.
        for account in secret_tool_accounts() {
            os_keychain().delete(&account).unwrap();
        }
    }

    /// Without a D-Bus session the keychain is unreachable and says so (the suite runs this one
    /// with `DBUS_SESSION_BUS_ADDRESS` unset).
    #[test]
    #[ignore = "run by tests/keychain.sh without a D-Bus session"]
    fn no_session_no_keychain() {
        assert!(std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none(), "run without a session bus");
        match OsKeychain::open() {
            Err(keypool_keychain::KeychainError::Unreachable(_)) => {}
            Err(other) => panic!("expected unreachable, got {other}"),
            Ok(_) => panic!("a keychain without a session bus?"),
        }
    }
}

/// The keychain is read once per key per run, never per request: the pool keeps the value.
#[tokio::test(flavor = "multi_thread")]
async fn the_keychain_is_read_once_per_key_not_per_request() {
    let keychain = MemoryKeychain::new();
    let h = Harness::with_keychain(keychain.clone());
    let fake = FakeProvider::start().await;
    let (provider, _) = setup(&h, &fake);
    let h = h.reopen(); // a fresh run: nothing known yet
    let before = keychain.reads();
    fake.always(POOL_A, Reply::text(&["a"]));
    fake.always(POOL_B, Reply::text(&["b"]));
    for i in 0..10 {
        let chat = new_chat(&h, &provider);
        h.send(&chat, Some(&format!("question {i}")), |_| {}).await.unwrap();
    }
    h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    assert_eq!(keychain.reads() - before, 3, "two pool keys and the provider's own, once each, for ten replies");
}

/// Without a keychain the database holds the keys, and so do the backup copies an upgrade left:
/// a key deleted or replaced must not survive in them.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_keychain_a_deleted_or_replaced_key_leaves_no_backup_copy() {
    let fake = FakeProvider::start().await;
    let h = Harness::new();
    let (_, ids) = setup(&h, &fake);
    let db = h.dir.path().join(keypool_store::DATABASE_FILE_NAME);
    let backup = h.dir.path().join(format!("{}.v7.bak", keypool_store::DATABASE_FILE_NAME));
    rusqlite::Connection::open(&db).unwrap().execute("VACUUM INTO ?1", [backup.to_string_lossy()]).unwrap();
    let in_backup = |secret: &str| holds(&std::fs::read(&backup).unwrap(), secret);
    assert!(in_backup(POOL_A) && in_backup(POOL_B), "the copy holds both keys (the test can fail)");

    h.ok("llmConfig:deleteApiKey", json!({ "id": ids[0] }));
    assert!(!in_backup(POOL_A), "the deleted key is gone from the backup copy");
    h.ok("llmConfig:updateApiKey", json!({ "id": ids[1], "apiKey": REPLACED }));
    assert!(!in_backup(POOL_B), "the replaced value too");
    assert_no_secret_at_rest(h.dir.path(), &[POOL_A, POOL_B], "after the delete and the rotation");
    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
    drop(keys);
    let conn = rusqlite::Connection::open(&backup).unwrap();
    let rows: i64 = conn.query_row("SELECT COUNT(*) FROM llm_provider_api_keys", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 2, "the copy still opens, its rows still there (their values marked as gone)");
}

/// A literal key that happens to start with `$` (not a well-formed variable name; the IPC no
/// longer takes one, but a database written before may hold it) is a key like any other: it
/// moves to the keychain and leaves no copy behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_literal_key_starting_with_a_dollar_is_kept_like_any_key() {
    const DOLLAR: &str = "$k-DOLLARDOLLARDOLLARDOLLAR!0005";
    let fake = FakeProvider::start().await;
    let h = Harness::new();
    let (_, ids) = setup(&h, &fake);
    let db = h.dir.path().join(keypool_store::DATABASE_FILE_NAME);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE llm_provider_api_keys SET api_key = ?1 WHERE id = ?2", [DOLLAR, &ids[0]]).unwrap();
    drop(conn);
    let row = json!({ "id": ids[0] });
    let backup = h.dir.path().join(format!("{}.v7.bak", keypool_store::DATABASE_FILE_NAME));
    rusqlite::Connection::open(&db).unwrap().execute("VACUUM INTO ?1", [backup.to_string_lossy()]).unwrap();
    let keychain = MemoryKeychain::new();
    let h = h.reopen_with(Some(keychain.clone()));
    assert_no_secret_at_rest(h.dir.path(), &[DOLLAR, POOL_A], "after the migration");
    assert_eq!(
        keychain.read(row["id"].as_str().unwrap()).unwrap().map(|s| s.expose().to_owned()).as_deref(),
        Some(DOLLAR),
        "it moved into the keychain intact"
    );
}
