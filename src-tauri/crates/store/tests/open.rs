//! Opening the database: real files in a temporary directory.

use std::fs;

use keypool_store::{Database, OpenError, DATABASE_FILE_NAME, SCHEMA_VERSION};

#[test]
fn creates_database_in_wal_mode_at_latest_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).expect("a fresh directory must open");
    assert_eq!(db.path(), dir.path().join(DATABASE_FILE_NAME), "the file lives in the data dir");
    assert_eq!(db.schema_version().unwrap(), SCHEMA_VERSION, "all migrations must have run");
    let mode: String = db.lock().unwrap().pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
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
        db.lock().unwrap().execute("INSERT INTO settings (key, value, updated_at) VALUES ('k', 'v', 1)", []).unwrap();
    }
    let db = Database::open(dir.path()).expect("reopening must succeed");
    let value: String =
        db.lock().unwrap().query_row("SELECT value FROM settings WHERE key = 'k'", [], |r| r.get(0)).unwrap();
    assert_eq!(value, "v", "a saved row must survive closing and reopening");
}

#[test]
fn garbage_file_is_rejected_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    fs::write(&path, &garbage).unwrap();

    let err = Database::open(dir.path()).expect_err("a non-database must not open");
    let backup = match &err {
        OpenError::NotADatabase { backup, .. } => backup.clone().expect("a copy is made beside it"),
        other => panic!("expected NotADatabase, got {other:?}"),
    };
    assert!(err.to_string().contains(DATABASE_FILE_NAME), "the message must name the file");
    assert!(err.to_string().contains("a copy is at"), "and say where the copy is: {err}");
    assert_eq!(fs::read(&path).unwrap(), garbage, "the file must be byte-for-byte unchanged");
    assert_eq!(fs::read(&backup).unwrap(), garbage, "the copy is exact");
    let second = Database::open(dir.path()).expect_err("still not a database");
    let OpenError::NotADatabase { backup: Some(second), .. } = second else { panic!("a second copy") };
    assert_ne!(second, backup, "a second failure never overwrites the first copy");
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
        OpenError::TooNew { found, supported, backup, .. } => {
            assert_eq!((*found, *supported), (SCHEMA_VERSION + 5, SCHEMA_VERSION), "versions");
            assert_eq!(fs::read(backup.as_ref().expect("a copy")).unwrap(), before, "an exact copy is kept beside it");
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert_eq!(fs::read(&path).unwrap(), before, "the file must be byte-for-byte unchanged");
}

#[cfg(unix)]
#[test]
fn wal_and_shared_memory_files_are_private_too() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    db.lock().unwrap().execute("INSERT INTO settings VALUES ('k', 'v', 1)", []).unwrap();
    for suffix in ["-wal", "-shm"] {
        let file = dir.path().join(format!("{DATABASE_FILE_NAME}{suffix}"));
        let mode = fs::metadata(&file).unwrap_or_else(|e| panic!("{suffix} exists: {e}")).permissions().mode();
        assert_eq!(mode & 0o077, 0, "{suffix}: group and others must have no access, got {mode:o}");
    }
}

#[test]
fn damaged_page_is_detected_at_open_and_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA page_size = 1024; CREATE TABLE t (x TEXT); PRAGMA user_version = 1;").unwrap();
        for i in 0..200 {
            conn.execute("INSERT INTO t VALUES (?1)", [format!("row {i} {}", "x".repeat(200))]).unwrap();
        }
    }
    let mut bytes = fs::read(&path).unwrap();
    for byte in &mut bytes[1024 * 3..1024 * 3 + 600] {
        *byte = 0xA5;
    }
    fs::write(&path, &bytes).unwrap();

    let err = Database::open(dir.path()).expect_err("a damaged database must not open");
    assert!(matches!(err, OpenError::NotADatabase { backup: Some(_), .. }), "damage is reported with a copy: {err:?}");
    assert_eq!(fs::read(&path).unwrap(), bytes, "the damaged file is left as it was");
}

#[cfg(unix)]
#[test]
fn looser_files_from_before_are_tightened_at_open() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    {
        let db = Database::open(&data).unwrap();
        db.lock().unwrap().execute("INSERT INTO settings VALUES ('k', 'v', 1)", []).unwrap();
        // Keep the WAL and the shared-memory file around, as a crashed process would.
        std::mem::forget(db);
    }
    let wal = data.join(format!("{DATABASE_FILE_NAME}-wal"));
    let shm = data.join(format!("{DATABASE_FILE_NAME}-shm"));
    fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).unwrap();
    for file in [data.join(DATABASE_FILE_NAME), wal.clone(), shm.clone()] {
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    }
    let db = Database::open(&data).expect("a database with loose permissions still opens");
    let mode = |path: &std::path::Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "the data directory is tightened to owner only");
    for file in [data.join(DATABASE_FILE_NAME), wal, shm] {
        assert_eq!(mode(&file), 0o600, "{} is tightened to owner read/write", file.display());
    }
    let value: String = db.lock().unwrap().query_row("SELECT value FROM settings", [], |r| r.get(0)).unwrap();
    assert_eq!(value, "v", "and nothing saved was lost");
}

#[test]
fn a_power_loss_safe_setting_and_secure_delete_are_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let conn = db.lock().unwrap();
    let synchronous: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap();
    assert_eq!(synchronous, 2, "FULL: an acknowledged write is on disk, WAL included");
    let secure_delete: i64 = conn.pragma_query_value(None, "secure_delete", |r| r.get(0)).unwrap();
    assert_eq!(secure_delete, 1, "deleted content is overwritten");
}
