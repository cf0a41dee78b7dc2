//! Opening the database: real files in a temporary directory.

use std::fs;

use keypool_store::{Database, OpenError, DATABASE_FILE_NAME, SCHEMA_VERSION};

#[test]
fn creates_database_in_wal_mode_at_latest_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).expect("a fresh directory must open");
    assert_eq!(db.path(), dir.path().join(DATABASE_FILE_NAME), "the file lives in the data dir");
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION, "all migrations must have run");
    let mode: String =
        db.lock().unwrap().pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal", "the database must be in WAL mode");
}

#[test]
fn creates_missing_nested_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c");
    Database::open(&nested).expect("missing parents must be created");
    assert!(nested.join(DATABASE_FILE_NAME).is_file(), "the database file must exist");
}

#[cfg(unix)]
#[test]
fn database_file_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    Database::open(dir.path()).unwrap();
    let mode = fs::metadata(dir.path().join(DATABASE_FILE_NAME)).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "group and others must have no access, got {mode:o}");
}

#[test]
fn data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        db.lock()
            .unwrap()
            .execute("INSERT INTO settings (key, value, updated_at) VALUES ('k', 'v', 1)", [])
            .unwrap();
    }
    let db = Database::open(dir.path()).expect("reopening must succeed");
    let value: String = db
        .lock()
        .unwrap()
        .query_row("SELECT value FROM settings WHERE key = 'k'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(value, "v", "a saved row must survive closing and reopening");
}

#[test]
fn garbage_file_is_rejected_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    fs::write(&path, &garbage).unwrap();

    let err = Database::open(dir.path()).expect_err("a non-database must not open");
    assert!(matches!(err, OpenError::NotADatabase { .. }), "got {err:?}");
    assert!(err.to_string().contains(DATABASE_FILE_NAME), "the message must name the file");
    assert_eq!(fs::read(&path).unwrap(), garbage, "the file must be byte-for-byte unchanged");
    assert!(!dir.path().join(format!("{DATABASE_FILE_NAME}-wal")).exists(), "no WAL was created");
}

#[test]
fn database_from_newer_version_is_rejected_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); INSERT INTO future VALUES (42);").unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 5).unwrap();
    }
    let before = fs::read(&path).unwrap();

    let err = Database::open(dir.path()).expect_err("a database from the future must not open");
    match &err {
        OpenError::TooNew { found, supported, .. } => {
            assert_eq!((*found, *supported), (SCHEMA_VERSION + 5, SCHEMA_VERSION), "versions");
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert_eq!(fs::read(&path).unwrap(), before, "the file must be byte-for-byte unchanged");
}
