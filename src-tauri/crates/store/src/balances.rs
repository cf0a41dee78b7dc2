//! The `key_balances` and `key_windows` tables: the last balance read, and the last plan-window
//! read, of each key whose provider answers one.
//! Plain functions over a connection; times are milliseconds since the Unix epoch, passed in.

use rusqlite::{params, Connection, Row};

/// One key's last balance reading.
#[derive(Debug, Clone, PartialEq)]
pub struct BalanceRow {
    pub key_id: String,
    pub read_at: i64,
    /// What is left, with its currency (ISO 4217); none: no limit, or nothing readable.
    pub amount: Option<(f64, String)>,
    /// The provider takes requests on it.
    pub usable: bool,
    /// Why nothing was read.
    pub problem: Option<String>,
    /// The answer's status, when one came.
    pub status: Option<u16>,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<BalanceRow> {
    let amount: Option<f64> = row.get("amount")?;
    let currency: Option<String> = row.get("currency")?;
    Ok(BalanceRow {
        key_id: row.get("key_id")?,
        read_at: row.get("read_at")?,
        amount: amount.zip(currency),
        usable: row.get("usable")?,
        problem: row.get("problem")?,
        status: row.get::<_, Option<u16>>("status")?,
    })
}

/// Keeps `row` as its key's last reading (replacing the one before). A key deleted meanwhile
/// keeps none.
pub fn put(conn: &Connection, row: &BalanceRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO key_balances (key_id, read_at, amount, currency, usable, problem, status)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM llm_provider_api_keys WHERE id = ?1)
         ON CONFLICT (key_id) DO UPDATE SET read_at = excluded.read_at, amount = excluded.amount,
             currency = excluded.currency, usable = excluded.usable, problem = excluded.problem,
             status = excluded.status",
        params![
            row.key_id,
            row.read_at,
            row.amount.as_ref().map(|(amount, _)| *amount),
            row.amount.as_ref().map(|(_, currency)| currency.as_str()),
            row.usable,
            row.problem,
            row.status,
        ],
    )?;
    Ok(())
}

/// The last readings of `provider_id`'s keys.
pub fn of_provider(conn: &Connection, provider_id: &str) -> rusqlite::Result<Vec<BalanceRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT b.* FROM key_balances b JOIN llm_provider_api_keys k ON k.id = b.key_id WHERE k.provider_id = ?1",
    )?;
    let rows = statement.query_map([provider_id], from_row)?;
    rows.collect()
}

/// One key's last plan-window reading: its windows as JSON (the caller's shape), or why none.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowsRow {
    pub key_id: String,
    pub read_at: i64,
    /// A JSON array.
    pub windows: String,
    pub problem: Option<String>,
    pub status: Option<u16>,
}

/// Keeps `row` as its key's last window reading. A key deleted meanwhile keeps none.
pub fn put_windows(conn: &Connection, row: &WindowsRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO key_windows (key_id, read_at, windows, problem, status)
         SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM llm_provider_api_keys WHERE id = ?1)
         ON CONFLICT (key_id) DO UPDATE SET read_at = excluded.read_at, windows = excluded.windows,
             problem = excluded.problem, status = excluded.status",
        params![row.key_id, row.read_at, row.windows, row.problem, row.status],
    )?;
    Ok(())
}

/// The last window readings of `provider_id`'s keys.
pub fn windows_of_provider(conn: &Connection, provider_id: &str) -> rusqlite::Result<Vec<WindowsRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT w.key_id, w.read_at, w.windows, w.problem, w.status FROM key_windows w
         JOIN llm_provider_api_keys k ON k.id = w.key_id WHERE k.provider_id = ?1",
    )?;
    let rows = statement.query_map([provider_id], |row| {
        Ok(WindowsRow {
            key_id: row.get(0)?,
            read_at: row.get(1)?,
            windows: row.get(2)?,
            problem: row.get(3)?,
            status: row.get(4)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Database;

    #[test]
    fn a_reading_replaces_the_last_and_leaves_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let conn = db.lock().unwrap();
        conn.execute_batch(
            "INSERT INTO providers (id, name, kind, base_url, created_at, updated_at)
                 VALUES ('p', 'DeepSeek', 'deepseek', 'https://api.deepseek.com', 0, 0);
             INSERT INTO llm_provider_api_keys (id, provider_id, api_key, created_at, updated_at)
                 VALUES ('k', 'p', 'sk-x', 0, 0);",
        )
        .unwrap();
        let first = BalanceRow {
            key_id: "k".into(),
            read_at: 1,
            amount: Some((110.0, "CNY".into())),
            usable: true,
            problem: None,
            status: Some(200),
        };
        put(&conn, &first).unwrap();
        let second = BalanceRow { read_at: 2, amount: None, usable: true, problem: Some("unreadable".into()), ..first };
        put(&conn, &second).unwrap();
        assert_eq!(of_provider(&conn, "p").unwrap(), std::slice::from_ref(&second), "one reading per key, the last");
        put(&conn, &BalanceRow { key_id: "gone".into(), ..second }).unwrap();
        assert_eq!(of_provider(&conn, "p").unwrap().len(), 1, "no reading for a key that is not there");
        let windows = WindowsRow {
            key_id: "k".into(),
            read_at: 3,
            windows: r#"[{"used":0.5}]"#.into(),
            problem: None,
            status: Some(200),
        };
        put_windows(&conn, &windows).unwrap();
        put_windows(&conn, &WindowsRow { read_at: 4, ..windows.clone() }).unwrap();
        assert_eq!(windows_of_provider(&conn, "p").unwrap()[0].read_at, 4, "one window reading per key, the last");
        conn.execute("DELETE FROM llm_provider_api_keys WHERE id = 'k'", []).unwrap();
        assert!(of_provider(&conn, "p").unwrap().is_empty(), "a deleted key takes its reading along");
        assert!(windows_of_provider(&conn, "p").unwrap().is_empty(), "and its windows");
    }
}
