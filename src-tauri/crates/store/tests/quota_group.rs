//! A key's quota group in a real SQLite file: added with the key, changed, cleared, and refused
//! when it is not a trimmed name of 1 to 64 characters. (Keys from before the column existed are
//! checked by the migration's upgrade test.)

use keypool::Secret;
use keypool_store::api_keys::{self, NewApiKey};
use keypool_store::{Database, StoredKey};

fn new_key(id: &str, quota_group: Option<&str>) -> NewApiKey {
    NewApiKey {
        id: id.to_owned(),
        provider_id: "openai".to_owned(),
        label: None,
        api_key: StoredKey::Database(Secret::new(format!("sk-{id}-0123456789"))),
        enabled: true,
        weight: 1,
        rpm_limit: None,
        max_concurrent: None,
        quota_group: quota_group.map(str::to_owned),
    }
}

#[test]
fn a_keys_quota_group_is_kept_changed_and_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    {
        let conn = db.lock().unwrap();
        let row = api_keys::insert_api_key(&conn, &new_key("k1", Some("project-7")), 10).unwrap();
        assert_eq!(row.quota_group.as_deref(), Some("project-7"), "the group is saved with the key");
        let row = api_keys::insert_api_key(&conn, &new_key("k2", None), 11).unwrap();
        assert_eq!(row.quota_group, None, "no group: a group of its own");
        let moved = api_keys::set_quota_group(&conn, "k2", Some("project-7"), 12).unwrap().expect("k2 exists");
        assert_eq!(moved.quota_group.as_deref(), Some("project-7"), "k2 joins k1's project");
        assert_eq!(moved.updated_at, 12, "the change is dated");
        let cleared = api_keys::set_quota_group(&conn, "k1", None, 13).unwrap().expect("k1 exists");
        assert_eq!(cleared.quota_group, None, "k1 leaves it");
        assert!(api_keys::set_quota_group(&conn, "nope", Some("p"), 14).unwrap().is_none(), "no such key");
    }
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    let rows = api_keys::list_api_keys(&db.lock().unwrap(), "openai").unwrap();
    let groups: Vec<(&str, Option<&str>)> = rows.iter().map(|r| (r.id.as_str(), r.quota_group.as_deref())).collect();
    assert_eq!(groups, [("k1", None), ("k2", Some("project-7"))], "what was saved survives a reopen");
}

#[test]
fn a_quota_group_that_is_not_a_trimmed_name_of_at_most_64_characters_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let conn = db.lock().unwrap();
    api_keys::insert_api_key(&conn, &new_key("k1", Some("p")), 10).unwrap();
    let too_long = "é".repeat(65);
    for bad in ["", " padded ", too_long.as_str()] {
        assert!(
            api_keys::set_quota_group(&conn, "k1", Some(bad), 11).is_err(),
            "{bad:?} must be refused by the table itself"
        );
        assert!(api_keys::insert_api_key(&conn, &new_key("k9", Some(bad)), 11).is_err(), "also when adding a key");
    }
    let longest = "é".repeat(64);
    let row = api_keys::set_quota_group(&conn, "k1", Some(&longest), 12).unwrap().unwrap();
    assert_eq!(row.quota_group.as_deref(), Some(longest.as_str()), "64 characters (not bytes) fit");
}
