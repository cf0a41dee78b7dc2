//! The team ledger's outbox (`ledger_outbox`): attempts kept here while the team's Postgres
//! cannot take them, shipped oldest first, deleted once it has; and the block of attempt keys
//! (`ledger_sequence`) this replica may use, reserved before any of it is used.

use rusqlite::{params, Connection, OptionalExtension};

/// One attempt as the team's ledger takes it: numbers, and the names Postgres keeps in tables of
/// their own (never a key's value: a key is its team identity, or `local:` and its id, and its
/// label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    /// Its key in Postgres, with the replica's: this replica's attempts are numbered from 1, and
    /// a number is never used twice (see [`reserve`]).
    pub seq: i64,
    /// Milliseconds since the epoch.
    pub at: i64,
    /// The provider's name.
    pub provider: String,
    /// `None`: the provider-level key.
    pub key_identity: Option<String>,
    pub key_label: Option<String>,
    pub model: String,
    pub source: String,
    /// `None`: the server's own token.
    pub member: Option<String>,
    /// As the local ledger's (`ok`, `rate_limited`, …).
    pub outcome: String,
    pub status: Option<u16>,
    pub ttft_ms: Option<u64>,
    pub latency_ms: u64,
    pub input_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

fn number(value: Option<u64>) -> Option<i64> {
    value.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

/// Keeps `rows`, in one transaction (a row already kept, by its `seq`, stays as it was): all of
/// them or, on an error, none.
pub fn push(conn: &mut Connection, rows: &[LedgerRow]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT OR IGNORE INTO ledger_outbox (seq, at, provider, key_identity, key_label, model, source, member, \
             outcome, status, ttft_ms, latency_ms, input_tokens, cached_tokens, output_tokens) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )?;
        for row in rows {
            insert.execute(params![
                row.seq,
                row.at,
                row.provider,
                row.key_identity,
                row.key_label,
                row.model,
                row.source,
                row.member,
                row.outcome,
                row.status,
                number(row.ttft_ms),
                number(Some(row.latency_ms)),
                number(row.input_tokens),
                number(row.cached_tokens),
                number(row.output_tokens),
            ])?;
        }
    }
    tx.commit()
}

/// The oldest `limit` rows kept.
pub fn oldest(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<LedgerRow>> {
    let mut select = conn.prepare_cached(
        "SELECT seq, at, provider, key_identity, key_label, model, source, member, outcome, status, ttft_ms, \
         latency_ms, input_tokens, cached_tokens, output_tokens FROM ledger_outbox ORDER BY seq LIMIT ?1",
    )?;
    let unsigned = |value: Option<i64>| value.map(|v| u64::try_from(v).unwrap_or(0));
    let rows = select.query_map(params![i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
        Ok(LedgerRow {
            seq: row.get(0)?,
            at: row.get(1)?,
            provider: row.get(2)?,
            key_identity: row.get(3)?,
            key_label: row.get(4)?,
            model: row.get(5)?,
            source: row.get(6)?,
            member: row.get(7)?,
            outcome: row.get(8)?,
            status: row.get(9)?,
            ttft_ms: unsigned(row.get(10)?),
            latency_ms: unsigned(row.get(11)?).unwrap_or(0),
            input_tokens: unsigned(row.get(12)?),
            cached_tokens: unsigned(row.get(13)?),
            output_tokens: unsigned(row.get(14)?),
        })
    })?;
    rows.collect()
}

/// Deletes the rows with these keys, once Postgres has committed them.
pub fn remove(conn: &mut Connection, seqs: &[i64]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut delete = tx.prepare_cached("DELETE FROM ledger_outbox WHERE seq = ?1")?;
        for seq in seqs {
            delete.execute(params![seq])?;
        }
    }
    tx.commit()
}

/// How many rows wait.
pub fn count(conn: &Connection) -> rusqlite::Result<u64> {
    conn.query_row("SELECT COUNT(*) FROM ledger_outbox", [], |row| row.get::<_, i64>(0))
        .map(|n| u64::try_from(n).unwrap_or(0))
}

/// Reserves the next `block` attempt keys, returning the first: none of them is handed out
/// again, whatever happens after (the reservation is written before it is used).
pub fn reserve(conn: &mut Connection, block: i64) -> rusqlite::Result<i64> {
    let tx = conn.transaction()?;
    let next: Option<i64> =
        tx.query_row("SELECT next FROM ledger_sequence WHERE id = 1", [], |row| row.get(0)).optional()?;
    let first = next.unwrap_or(1);
    tx.execute(
        "INSERT INTO ledger_sequence (id, next) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET next = excluded.next",
        params![first + block],
    )?;
    tx.commit()?;
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Database;

    fn row(seq: i64) -> LedgerRow {
        LedgerRow {
            seq,
            at: 1_800_000_000_000 + seq,
            provider: "openai".into(),
            key_identity: Some(format!("k{seq}")),
            key_label: None,
            model: "gpt-5".into(),
            source: "agent".into(),
            member: (seq % 2 == 0).then(|| "alice".into()),
            outcome: "ok".into(),
            status: Some(200),
            ttft_ms: Some(3),
            latency_ms: 9,
            input_tokens: Some(11),
            cached_tokens: Some(5),
            output_tokens: None,
        }
    }

    #[test]
    fn rows_wait_oldest_first_once_each_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let mut conn = db.lock().unwrap();
        push(&mut conn, &[row(3), row(1), row(2)]).unwrap();
        push(&mut conn, &[row(2)]).unwrap();
        assert_eq!(count(&conn).unwrap(), 3, "a row pushed twice is kept once");
        let oldest = oldest(&conn, 2).unwrap();
        assert_eq!(oldest, vec![row(1), row(2)], "oldest first, as they were");
        remove(&mut conn, &[1, 2]).unwrap();
        assert_eq!(super::oldest(&conn, 10).unwrap(), vec![row(3)], "removed once shipped");
    }

    #[test]
    fn a_reserved_block_is_never_handed_out_again() {
        let dir = tempfile::tempdir().unwrap();
        let first = {
            let db = Database::open(dir.path()).unwrap();
            let mut conn = db.lock().unwrap();
            let first = reserve(&mut conn, 1000).unwrap();
            assert_eq!(reserve(&mut conn, 1000).unwrap(), first + 1000, "the next block follows");
            first
        };
        let db = Database::open(dir.path()).unwrap();
        let mut conn = db.lock().unwrap();
        assert_eq!(reserve(&mut conn, 10).unwrap(), first + 2000, "after a restart too");
    }
}
