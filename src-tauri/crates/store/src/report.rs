//! The ledger's attempts summed by one dimension (a member, a model, a provider, a key, a client
//! or a day) and the model, over a time range: what `keypool-server usage` prints. Read from `usage_attempts`
//! (the hourly totals know no member), which keeps the ledger's retention (180 days unless set).

use rusqlite::{params, Connection};

/// What the attempts are summed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Member,
    Model,
    Provider,
    /// A provider's key: `provider_id`, then the key's id (`NULL` for the provider-level key).
    Key,
    /// The client: `chat` (the app's own chats) or a local API client's user agent.
    Source,
    /// The UTC day, `YYYY-MM-DD`.
    Day,
}

/// The attempts of one group and model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportRow {
    /// The member (`None`: the owner's token, or the app), the model, the provider's id, the
    /// key's id (`None`: the provider-level key), the source, or the day.
    pub group: Option<String>,
    /// With `By::Key`, the key's provider.
    pub provider: Option<String>,
    pub model: String,
    pub attempts: u64,
    /// Every outcome but `ok` and `stopped`.
    pub failed: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// The attempts over `[from, to)` summed by `by` and by model.
pub fn by(conn: &Connection, by: By, from: i64, to: i64) -> rusqlite::Result<Vec<ReportRow>> {
    let (group, provider) = match by {
        By::Member => ("member", "NULL"),
        By::Model => ("model", "NULL"),
        By::Provider => ("provider_id", "NULL"),
        By::Key => ("key_id", "provider_id"),
        By::Source => ("source", "NULL"),
        By::Day => ("strftime('%Y-%m-%d', at / 1000, 'unixepoch')", "NULL"),
    };
    let sql = format!(
        "SELECT {group}, {provider}, model, COUNT(*), SUM(outcome NOT IN ('ok', 'stopped')), \
         COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(output_tokens), 0) \
         FROM usage_attempts WHERE at >= ?1 AND at < ?2 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![from, to], |row| {
        Ok(ReportRow {
            group: row.get(0)?,
            provider: row.get(1)?,
            model: row.get(2)?,
            attempts: row.get(3)?,
            failed: row.get(4)?,
            input_tokens: row.get(5)?,
            cached_tokens: row.get(6)?,
            output_tokens: row.get(7)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::{record, AttemptRow};
    use crate::Database;

    fn attempt(at: i64, source: &str, input: u64) -> AttemptRow<&str> {
        AttemptRow {
            at,
            provider_id: "openai",
            key_id: Some("k1"),
            model: "gpt-5",
            chat_id: None,
            source,
            member: None,
            outcome: "ok",
            status: Some(200),
            ttft_ms: None,
            latency_ms: 5,
            input_tokens: Some(input),
            cached_tokens: None,
            output_tokens: Some(1),
        }
    }

    #[test]
    fn attempts_are_summed_by_source_and_by_utc_day() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let mut conn = db.lock().unwrap();
        // 2027-01-01T23:59:59.999Z, then the next UTC day.
        let midnight = 1_798_848_000_000;
        let rows = [
            attempt(midnight - 1, "claude-cli/2", 10),
            attempt(midnight, "chat", 20),
            attempt(midnight + 5, "chat", 5),
        ];
        record(&mut conn, &rows).unwrap();
        let by_source: Vec<(Option<String>, u64, u64)> = by(&conn, By::Source, 0, i64::MAX)
            .unwrap()
            .into_iter()
            .map(|r| (r.group, r.attempts, r.input_tokens))
            .collect();
        assert_eq!(
            by_source,
            [(Some("chat".into()), 2, 25), (Some("claude-cli/2".into()), 1, 10)],
            "each client's attempts and tokens"
        );
        let by_day: Vec<(Option<String>, u64)> =
            by(&conn, By::Day, 0, i64::MAX).unwrap().into_iter().map(|r| (r.group, r.attempts)).collect();
        assert_eq!(by_day, [(Some("2027-01-01".into()), 1), (Some("2027-01-02".into()), 2)], "days are UTC days");
    }
}
