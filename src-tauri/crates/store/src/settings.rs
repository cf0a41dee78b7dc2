//! The `settings` table: the app's preferences as key/value pairs, the value as JSON text.

use rusqlite::{params, Connection, OptionalExtension};

/// The stored JSON of `key`, if set.
pub fn get(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| r.get(0)).optional()
}

pub fn set(conn: &Connection, key: &str, json: &str, now: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, json, now],
    )?;
    Ok(())
}
