//! The ledger by who asked: its `source` column holds `chat` for the app's own chats and a local
//! API client's user agent otherwise (`claude-cli/2.1.328 (external, sdk-cli)`,
//! `codex_exec/0.169.0 (…)`, `GeminiCLI-tui/0.61.0/…`). Read through the index on
//! `(source, at)`, so a prefix costs a range of that index, never a walk through every attempt.

use rusqlite::{params, Connection};

/// What the attempts of one source for one model add up to (a model's price gives its cost).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceTotals {
    pub source: String,
    pub model: String,
    pub requests: u64,
    /// Every outcome but `ok` and `stopped`, as the hourly totals count failures.
    pub failures: u64,
    /// Every prompt token, cached ones included.
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// When an attempt whose source starts with `prefix` was last recorded (milliseconds since the
/// epoch); `None` when none is kept. `prefix` is ASCII (user agents are).
pub fn last_call(conn: &Connection, prefix: &str) -> rusqlite::Result<Option<i64>> {
    let (low, high) = prefix_range(prefix);
    let mut stmt = conn.prepare_cached("SELECT MAX(at) FROM usage_attempts WHERE source >= ?1 AND source < ?2")?;
    stmt.query_row(params![low, high], |row| row.get(0))
}

/// The totals of `[from, to)` per source and model, in no particular order.
pub fn totals_by_source(conn: &Connection, from: i64, to: i64) -> rusqlite::Result<Vec<SourceTotals>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, model, COUNT(*), SUM(outcome NOT IN ('ok', 'stopped')), COALESCE(SUM(input_tokens), 0), \
         COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(output_tokens), 0) FROM usage_attempts \
         WHERE at >= ?1 AND at < ?2 GROUP BY source, model",
    )?;
    let rows = stmt.query_map(params![from, to], |row| {
        Ok(SourceTotals {
            source: row.get(0)?,
            model: row.get(1)?,
            requests: row.get(2)?,
            failures: row.get(3)?,
            input_tokens: row.get(4)?,
            cached_tokens: row.get(5)?,
            output_tokens: row.get(6)?,
        })
    })?;
    rows.collect()
}

/// The texts that start with `prefix`, as a half-open range `[low, high)` in SQLite's binary
/// order: `high` is `prefix` with its last byte one higher (`claude-cli/` → `claude-cli0`).
fn prefix_range(prefix: &str) -> (String, String) {
    let mut high = prefix.as_bytes().to_vec();
    while let Some(last) = high.pop() {
        if last < 0x7f {
            high.push(last + 1);
            return (prefix.to_owned(), String::from_utf8(high).expect("ASCII stays UTF-8"));
        }
    }
    // An empty prefix (or only DEL characters): every text.
    (prefix.to_owned(), "\u{10FFFF}".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_holds_exactly_the_texts_that_start_with_it() {
        let (low, high) = prefix_range("claude-cli/");
        for inside in ["claude-cli/", "claude-cli/2.1.328 (external, sdk-cli)", "claude-cli/~"] {
            assert!(low.as_str() <= inside && inside < high.as_str(), "{inside} starts with the prefix");
        }
        for outside in ["claude-cli", "claude-cli0", "claude-clj", "chat", "codex_exec/0.169.0"] {
            assert!(!(low.as_str() <= outside && outside < high.as_str()), "{outside} does not");
        }
    }

    #[test]
    fn a_sources_last_call_and_the_totals_by_source_come_from_the_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Database::open(dir.path()).unwrap();
        let conn = db.lock().unwrap();
        for (at, source, cached, outcome) in [
            (1_000, "claude-cli/2.1.328 (external, sdk-cli)", 80, "ok"),
            (3_000, "claude-cli/2.1.329 (external, sdk-cli)", 90, "ok"),
            (2_000, "codex_exec/0.169.0 (Debian 12; x86_64)", 0, "auth_rejected"),
            (4_000, "chat", 10, "ok"),
        ] {
            conn.execute(
                "INSERT INTO usage_attempts (at, provider_id, model, source, outcome, latency_ms, input_tokens, \
                 cached_tokens, output_tokens) VALUES (?1, 'p', 'm', ?2, ?4, 5, 100, ?3, 7)",
                params![at, source, cached, outcome],
            )
            .unwrap();
        }
        assert_eq!(last_call(&conn, "claude-cli/").unwrap(), Some(3_000), "the newest of every version");
        assert_eq!(last_call(&conn, "codex_").unwrap(), Some(2_000));
        assert_eq!(last_call(&conn, "GeminiCLI").unwrap(), None, "never called");
        let mut totals = totals_by_source(&conn, 0, 3_500).unwrap();
        totals.sort_by(|a, b| a.source.cmp(&b.source));
        let sums: Vec<(&str, u64, u64, u64)> =
            totals.iter().map(|t| (t.source.as_str(), t.requests, t.failures, t.cached_tokens)).collect();
        assert_eq!(
            sums,
            [
                ("claude-cli/2.1.328 (external, sdk-cli)", 1, 0, 80),
                ("claude-cli/2.1.329 (external, sdk-cli)", 1, 0, 90),
                ("codex_exec/0.169.0 (Debian 12; x86_64)", 1, 1, 0)
            ],
            "the attempts of [from, to), by source"
        );
    }
}
