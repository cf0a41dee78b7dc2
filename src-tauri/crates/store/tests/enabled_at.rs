//! When a key was last enabled again, in a real SQLite file: stamped when a key that was off is
//! enabled (one key or many), kept when a team member's later stamp arrives, never moved back, and
//! surviving a reopen. A team believes no rejection of the key made before it.

use keypool::Secret;
use keypool_store::api_keys::{self, ApiKeyPatch, NewApiKey};
use keypool_store::{Database, StoredKey};

fn new_key(id: &str) -> NewApiKey {
    NewApiKey {
        id: id.to_owned(),
        provider_id: "openai".to_owned(),
        label: None,
        api_key: StoredKey::Database(Secret::new(format!("sk-{id}-0123456789"))),
        enabled: true,
        weight: 1,
        rpm_limit: None,
        max_concurrent: None,
        quota_group: None,
    }
}

#[test]
fn a_key_enabled_again_is_stamped_and_a_later_stamp_wins() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    {
        let conn = db.lock().unwrap();
        for id in ["k1", "k2"] {
            api_keys::insert_api_key(&conn, &new_key(id), 10).unwrap();
        }
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), None, "a new key was never enabled again");
        let on = ApiKeyPatch { enabled: Some(true), ..Default::default() };
        api_keys::update_api_key(&conn, "k1", &on, 20).unwrap();
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), None, "enabling a key that is on is no enable");

        api_keys::disable_api_key(&conn, "k1", "HTTP 401", 30).unwrap();
        api_keys::update_api_key(&conn, "k1", &on, 40).unwrap();
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), Some(40), "the user's enable is stamped");

        let off = ApiKeyPatch { enabled: Some(false), ..Default::default() };
        api_keys::update_api_keys(&conn, &["k2".to_owned()], &off, 50).unwrap();
        api_keys::update_api_keys(&conn, &["k1".to_owned(), "k2".to_owned()], &on, 60).unwrap();
        assert_eq!(api_keys::enabled_at(&conn, "k2").unwrap(), Some(60), "a bulk enable of a key that was off");
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), Some(40), "not of one that was on");

        api_keys::record_enabled_at(&conn, "k1", 45).unwrap();
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), Some(45), "a team member's later stamp is kept");
        api_keys::record_enabled_at(&conn, "k1", 41).unwrap();
        assert_eq!(api_keys::enabled_at(&conn, "k1").unwrap(), Some(45), "an older one changes nothing");
        assert_eq!(api_keys::enabled_at(&conn, "nope").unwrap(), None, "no such key");
    }
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    assert_eq!(api_keys::enabled_at(&db.lock().unwrap(), "k1").unwrap(), Some(45), "the stamp survives a reopen");
}
