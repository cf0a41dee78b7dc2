//! The ledger's attempts summed by one dimension (a member, a model, a provider or a key) and
//! the model, over a time range: what `keypool-server usage` prints. Read from `usage_attempts`
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
}

/// The attempts of one group and model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportRow {
    /// The member (`None`: the owner's token, or the app), the model, the provider's id, or the
    /// key's id (`None`: the provider-level key).
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
