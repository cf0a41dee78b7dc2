//! The copies opening keeps beside the database (`keypool.sqlite3.<tag>.bak`): once keys move
//! to the keychain, the copies must not keep them either.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::{DATABASE_FILE_NAME, KEYCHAIN_MARKER};

/// The backup copies in `dir`, oldest name first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let prefix = format!("{DATABASE_FILE_NAME}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.starts_with(&prefix) && name.ends_with(".bak")
        })
        .collect();
    found.sort();
    found
}

/// Replaces, in the backup at `path`, every literal key that the live database does not keep in
/// plain text as it is there: moved to the keychain, deleted, or replaced by another value
/// (`plain_keys`: the pool keys the live database keeps, by id, with their values;
/// `plain_providers`: the providers' own keys). A literal key is any value that is not a
/// well-formed `$NAME` reference, whatever it starts with. A schema that knows the keychain gets
/// the key marked as kept there; an older one gets [`KEYCHAIN_MARKER`], a `$NAME` nothing sets, so
/// an older Keypool skips the key. The file is then rebuilt (VACUUM) so the old pages are gone,
/// and no journal is written beside it. Returns how many values were replaced; a file that is
/// not a Keypool database is left alone (`Ok(0)`).
pub fn scrub(
    path: &Path,
    plain_keys: &HashMap<String, String>,
    plain_providers: &HashMap<String, String>,
) -> rusqlite::Result<usize> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    if conn.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)).ok().as_deref() != Some("ok") {
        return Ok(0);
    }
    conn.pragma_update(None, "journal_mode", "MEMORY")?;
    conn.pragma_update(None, "secure_delete", true)?;
    let mut replaced = 0;
    if has_column(&conn, "llm_provider_api_keys", "api_key")? {
        let keychain_aware = has_column(&conn, "llm_provider_api_keys", "storage")?;
        let rows = literal_rows(&conn, "SELECT id, api_key FROM llm_provider_api_keys WHERE api_key IS NOT NULL")?;
        for (id, value) in rows.into_iter().filter(|(id, value)| plain_keys.get(id) != Some(value)) {
            if keychain_aware {
                conn.execute(
                    "UPDATE llm_provider_api_keys SET storage = 'keychain', api_key = NULL, preview = ?2 WHERE id = ?1",
                    rusqlite::params![id, keypool::Secret::new(value).preview()],
                )?;
            } else {
                conn.execute(
                    "UPDATE llm_provider_api_keys SET api_key = ?2 WHERE id = ?1",
                    rusqlite::params![id, KEYCHAIN_MARKER],
                )?;
            }
            replaced += 1;
        }
    }
    if has_column(&conn, "providers", "api_key")? {
        let keychain_aware = has_column(&conn, "providers", "api_key_storage")?;
        let rows = literal_rows(&conn, "SELECT id, api_key FROM providers WHERE api_key IS NOT NULL")?;
        for (id, value) in rows.into_iter().filter(|(id, value)| plain_providers.get(id) != Some(value)) {
            if keychain_aware {
                conn.execute(
                    "UPDATE providers SET api_key_storage = 'keychain', api_key = NULL, api_key_preview = ?2 WHERE id = ?1",
                    rusqlite::params![id, keypool::Secret::new(value).preview()],
                )?;
            } else {
                conn.execute(
                    "UPDATE providers SET api_key = ?2 WHERE id = ?1",
                    rusqlite::params![id, KEYCHAIN_MARKER],
                )?;
            }
            replaced += 1;
        }
    }
    if replaced > 0 {
        conn.execute_batch("VACUUM")?;
    }
    Ok(replaced)
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)", [table, column], |r| r.get(0))
}

/// The `(id, value)` rows `sql` selects whose value is a literal key, not a `$NAME` reference.
fn literal_rows(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let rows: Vec<(String, String)> = rows.collect::<rusqlite::Result<_>>()?;
    Ok(rows.into_iter().filter(|(_, value)| keypool::Secret::from(value.as_str()).env_var().is_none()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrations::MIGRATIONS;

    const KEY: &str = "sk-backup-PLAINPLAINPLAINPLAIN-0001";

    fn database_at(dir: &Path, version: usize) -> PathBuf {
        let path = dir.join(format!("{DATABASE_FILE_NAME}.v{version}.bak"));
        let mut conn = Connection::open(&path).unwrap();
        MIGRATIONS.to_version(&mut conn, version).unwrap();
        conn.execute(
            "INSERT INTO llm_provider_api_keys (id, provider_id, api_key, created_at, updated_at) \
             VALUES ('k1', 'openai', ?1, 0, 0), ('k2', 'openai', '$FROM_ENV', 0, 0), ('k3', 'openai', 'sk-still-plain-in-db', 0, 0)",
            [KEY],
        )
        .unwrap();
        conn.execute("UPDATE providers SET api_key = ?1 WHERE id = 'anthropic'", [KEY]).unwrap();
        path
    }

    #[test]
    fn an_older_backup_gets_a_reference_nothing_sets_and_no_value_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = database_at(dir.path(), 7);
        let still_plain = HashMap::from([("k3".to_owned(), "sk-still-plain-in-db".to_owned())]);
        let replaced = scrub(&path, &still_plain, &HashMap::new()).unwrap();
        assert_eq!(replaced, 2, "the pool key and the provider key, not the reference nor the key still in the db");
        let bytes = std::fs::read(&path).unwrap();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "no copy of the value is left in the file");
        let conn = Connection::open(&path).unwrap();
        let value: String =
            conn.query_row("SELECT api_key FROM llm_provider_api_keys WHERE id = 'k1'", [], |r| r.get(0)).unwrap();
        assert_eq!(value, KEYCHAIN_MARKER, "an older Keypool sees a `$NAME` nothing sets");
        let kept: String =
            conn.query_row("SELECT api_key FROM llm_provider_api_keys WHERE id = 'k3'", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, "sk-still-plain-in-db", "a key the live database still holds is left as it is");
        let files: Vec<_> = list(dir.path()).iter().map(|p| p.file_name().unwrap().to_owned()).collect();
        assert_eq!(files.len(), 1, "no journal or other file is left beside it: {files:?}");
    }

    #[test]
    fn a_key_the_live_database_holds_with_another_value_is_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let path = database_at(dir.path(), 7);
        let rotated = HashMap::from([("k3".to_owned(), "sk-the-new-value".to_owned())]);
        scrub(&path, &rotated, &HashMap::new()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let old = b"sk-still-plain-in-db";
        assert!(!bytes.windows(old.len()).any(|w| w == old), "the value before the rotation is gone");
    }

    #[test]
    fn a_file_that_is_not_a_database_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{DATABASE_FILE_NAME}.damaged.bak"));
        std::fs::write(&path, b"not a database at all").unwrap();
        let _ = scrub(&path, &HashMap::new(), &HashMap::new());
        assert_eq!(std::fs::read(&path).unwrap(), b"not a database at all", "untouched");
    }
}
