//! The usage ledger: every upstream attempt, and hourly totals kept in step with it.
//!
//! Invariant: `usage_hourly` is the sum of `usage_attempts` per hour, provider, key and model;
//! both are written in the same transaction ([`record`]) and purged on the same hour boundary
//! ([`purge_before`]), so a crash leaves them consistent. Summaries over any range read the
//! hourly totals for the whole hours inside it and the attempts only for the partial hours at
//! its edges, which keeps them fast over a million attempts.

use std::collections::HashMap;

use rusqlite::types::ToSql;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row};

pub const HOUR_MS: i64 = 3_600_000;

/// The key id of attempts sent without any key (a server on this machine, such as Ollama, while
/// its provider has no key at all), in both tables: not a key's id (those are UUIDs), and not
/// the provider-level key's (`NULL` in `usage_attempts`, `''` in `usage_hourly`). A reserved id
/// rather than a column, as `''` is: the hourly totals' primary key holds the key id.
pub const NO_KEY: &str = "(no key)";

/// One upstream attempt as the ledger stores it; its text owned (`String`, as read back) or
/// borrowed (`&str`, as a writer may hold it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRow<S = String> {
    pub at: i64,
    pub provider_id: S,
    /// `None`: the provider-level key; [`NO_KEY`]: sent without any key.
    pub key_id: Option<S>,
    pub model: S,
    pub chat_id: Option<S>,
    pub source: S,
    /// The member of a server's endpoint whose token sent the request, if any.
    pub member: Option<S>,
    /// `ok`, `rate_limited`, `auth_rejected`, `quota_exhausted`, `provider_error`,
    /// `transport_error` or `stopped`.
    pub outcome: &'static str,
    pub status: Option<u16>,
    pub ttft_ms: Option<u64>,
    pub latency_ms: u64,
    pub input_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// Latencies in logarithmic buckets: bucket i holds [GROWTH^i, GROWTH^(i+1)) ms, the last one
/// everything beyond. 96 buckets of 15 % reach about ten minutes; a percentile read from them is
/// within 7.5 % of the true one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram([u32; BUCKETS]);

const BUCKETS: usize = 96;
const GROWTH: f64 = 1.15;

impl Default for Histogram {
    fn default() -> Self {
        Histogram([0; BUCKETS])
    }
}

impl Histogram {
    pub fn add(&mut self, latency_ms: u64) {
        let bucket = if latency_ms <= 1 { 0 } else { ((latency_ms as f64).ln() / GROWTH.ln()) as usize };
        self.0[bucket.min(BUCKETS - 1)] += 1;
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// The latency below which `fraction` of the attempts fall (the bucket's geometric middle);
    /// `None` for an empty histogram.
    pub fn percentile(&self, fraction: f64) -> Option<u64> {
        let total: u64 = self.0.iter().map(|&c| u64::from(c)).sum();
        if total == 0 {
            return None;
        }
        let rank = ((total as f64) * fraction).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (bucket, &count) in self.0.iter().enumerate() {
            seen += u64::from(count);
            if seen >= rank {
                return Some(GROWTH.powf(bucket as f64 + 0.5).round() as u64);
            }
        }
        None
    }

    fn to_blob(&self) -> Vec<u8> {
        self.0.iter().flat_map(|c| c.to_le_bytes()).collect()
    }

    fn from_blob(blob: &[u8]) -> Histogram {
        let mut counts = [0u32; BUCKETS];
        for (count, bytes) in counts.iter_mut().zip(blob.chunks_exact(4)) {
            *count = u32::from_le_bytes(bytes.try_into().expect("chunks of 4"));
        }
        Histogram(counts)
    }
}

/// Sums of attempts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub requests: u64,
    pub failures: u64,
    pub rate_limited: u64,
    pub failovers: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl Totals {
    /// Adds `other`'s sums to these.
    pub fn add(&mut self, other: &Totals) {
        self.requests += other.requests;
        self.failures += other.failures;
        self.rate_limited += other.rate_limited;
        self.failovers += other.failovers;
        self.input_tokens += other.input_tokens;
        self.cached_tokens += other.cached_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// The seven sums read from `row`'s columns `first..first + 7`, in the order of the fields
    /// (the order every query of this module selects them in).
    fn from_columns(row: &Row<'_>, first: usize) -> rusqlite::Result<Totals> {
        Ok(Totals {
            requests: row.get(first)?,
            failures: row.get(first + 1)?,
            rate_limited: row.get(first + 2)?,
            failovers: row.get(first + 3)?,
            input_tokens: row.get(first + 4)?,
            cached_tokens: row.get(first + 5)?,
            output_tokens: row.get(first + 6)?,
        })
    }

    fn of_attempt<S>(row: &AttemptRow<S>) -> Totals {
        let outcome = row.outcome;
        Totals {
            requests: 1,
            failures: u64::from(!matches!(outcome, "ok" | "stopped")),
            rate_limited: u64::from(outcome == "rate_limited"),
            failovers: u64::from(matches!(outcome, "rate_limited" | "auth_rejected" | "quota_exhausted")),
            input_tokens: row.input_tokens.unwrap_or(0),
            cached_tokens: row.cached_tokens.unwrap_or(0),
            output_tokens: row.output_tokens.unwrap_or(0),
        }
    }
}

/// The totals of one provider, key (`""`: the provider-level key) and model, with latencies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    pub totals: Totals,
    pub latencies: Histogram,
}

type GroupKey = (String, String, String);

/// Attempts per `INSERT` statement: one statement's work for many rows (14 parameters each, far
/// below SQLite's limit of 32 766).
const ROWS_PER_INSERT: usize = 32;

/// `INSERT INTO usage_attempts` of `rows` rows.
fn insert_attempts(rows: usize) -> String {
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    format!(
        "INSERT INTO usage_attempts (at, provider_id, key_id, model, chat_id, source, outcome, status, ttft_ms, \
         latency_ms, input_tokens, cached_tokens, output_tokens, member) VALUES {}",
        vec![row; rows].join(", ")
    )
}

/// An attempt's columns, in [`insert_attempts`]' order.
fn attempt_values<S: ToSql>(a: &AttemptRow<S>) -> [&dyn ToSql; 14] {
    [
        &a.at,
        &a.provider_id,
        &a.key_id,
        &a.model,
        &a.chat_id,
        &a.source,
        &a.outcome,
        &a.status,
        &a.ttft_ms,
        &a.latency_ms,
        &a.input_tokens,
        &a.cached_tokens,
        &a.output_tokens,
        &a.member,
    ]
}

/// Writes attempts and their hourly totals in one transaction.
pub fn record<S: AsRef<str> + ToSql>(conn: &mut Connection, attempts: &[AttemptRow<S>]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let mut chunks = attempts.chunks_exact(ROWS_PER_INSERT);
    if attempts.len() >= ROWS_PER_INSERT {
        let mut insert = tx.prepare_cached(&insert_attempts(ROWS_PER_INSERT))?;
        for chunk in &mut chunks {
            insert.execute(params_from_iter(chunk.iter().flat_map(attempt_values)))?;
        }
    }
    if !chunks.remainder().is_empty() {
        let mut insert = tx.prepare_cached(&insert_attempts(1))?;
        for a in chunks.remainder() {
            insert.execute(&attempt_values(a)[..])?;
        }
    }
    // Summed per hour, provider, key and model (borrowed from the attempts).
    let mut hours: HashMap<(i64, (&str, &str, &str)), Group> = HashMap::new();
    for a in attempts {
        let key = (a.provider_id.as_ref(), a.key_id.as_ref().map_or("", AsRef::as_ref), a.model.as_ref());
        let group = hours.entry((a.at.div_euclid(HOUR_MS) * HOUR_MS, key)).or_default();
        group.totals.add(&Totals::of_attempt(a));
        group.latencies.add(a.latency_ms);
    }
    for ((hour, (provider, key, model)), mut group) in hours {
        let existing = tx
            .query_row(
                "SELECT requests, failures, rate_limited, failovers, input_tokens, cached_tokens, output_tokens, latencies \
                 FROM usage_hourly WHERE hour = ?1 AND provider_id = ?2 AND key_id = ?3 AND model = ?4",
                params![hour, provider, key, model],
                |row| group_from(row, 0),
            )
            .optional()?;
        if let Some(existing) = existing {
            group.totals.add(&existing.totals);
            group.latencies.merge(&existing.latencies);
        }
        let t = &group.totals;
        tx.execute(
            "INSERT OR REPLACE INTO usage_hourly (hour, provider_id, key_id, model, requests, failures, rate_limited, \
             failovers, input_tokens, cached_tokens, output_tokens, latencies) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                hour,
                provider,
                key,
                model,
                t.requests,
                t.failures,
                t.rate_limited,
                t.failovers,
                t.input_tokens,
                t.cached_tokens,
                t.output_tokens,
                group.latencies.to_blob()
            ],
        )?;
    }
    tx.commit()
}

/// A group read from `row`'s columns `first..first + 8`: the seven sums, then the latencies.
fn group_from(row: &Row<'_>, first: usize) -> rusqlite::Result<Group> {
    Ok(Group {
        totals: Totals::from_columns(row, first)?,
        latencies: Histogram::from_blob(&row.get::<_, Vec<u8>>(first + 7)?),
    })
}

/// The totals over `[from, to)` per provider, key and model, for one provider or all.
pub fn groups(
    conn: &Connection,
    provider: Option<&str>,
    from: i64,
    to: i64,
) -> rusqlite::Result<HashMap<GroupKey, Group>> {
    let mut out: HashMap<GroupKey, Group> = HashMap::new();
    let first_hour = ceil_hour(from);
    let last_hour = to.div_euclid(HOUR_MS) * HOUR_MS;
    let (edges, whole) = if first_hour < last_hour {
        (vec![(from, first_hour), (last_hour, to)], Some((first_hour, last_hour)))
    } else {
        (vec![(from, to)], None)
    };
    if let Some((start, end)) = whole {
        let mut stmt = conn.prepare_cached(
            "SELECT provider_id, key_id, model, requests, failures, rate_limited, failovers, input_tokens, cached_tokens, \
             output_tokens, latencies FROM usage_hourly WHERE hour >= ?1 AND hour < ?2 AND (?3 IS NULL OR provider_id = ?3)",
        )?;
        let mut rows = stmt.query(params![start, end, provider])?;
        while let Some(row) = rows.next()? {
            let key: GroupKey = (row.get(0)?, row.get(1)?, row.get(2)?);
            let group = group_from(row, 3)?;
            let entry = out.entry(key).or_default();
            entry.totals.add(&group.totals);
            entry.latencies.merge(&group.latencies);
        }
    }
    for (start, end) in edges.into_iter().filter(|(start, end)| start < end) {
        for attempt in attempts(conn, provider, start, end)? {
            let key = (attempt.provider_id.clone(), attempt.key_id.clone().unwrap_or_default(), attempt.model.clone());
            let entry = out.entry(key).or_default();
            entry.totals.add(&Totals::of_attempt(&attempt));
            entry.latencies.add(attempt.latency_ms);
        }
    }
    Ok(out)
}

/// Totals per `(bucket start, provider, key)` over `[from, to)`, in buckets of `bucket_ms` (a
/// whole number of hours) starting at `from` rounded down to the hour: charts read these.
pub fn series(
    conn: &Connection,
    provider: Option<&str>,
    key: Option<&str>,
    bucket_ms: i64,
    from: i64,
    to: i64,
) -> rusqlite::Result<Vec<(i64, String, String, Totals)>> {
    let start = from.div_euclid(HOUR_MS) * HOUR_MS;
    let mut stmt = conn.prepare_cached(
        "SELECT (hour - ?1) / ?2, provider_id, key_id, SUM(requests), SUM(failures), SUM(rate_limited), SUM(failovers), \
         SUM(input_tokens), SUM(cached_tokens), SUM(output_tokens) FROM usage_hourly \
         WHERE hour >= ?1 AND hour < ?3 AND (?4 IS NULL OR provider_id = ?4) AND (?5 IS NULL OR key_id = ?5) \
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )?;
    let rows = stmt.query_map(params![start, bucket_ms, to, provider, key], |row| {
        Ok((start + row.get::<_, i64>(0)? * bucket_ms, row.get(1)?, row.get(2)?, Totals::from_columns(row, 3)?))
    })?;
    rows.collect()
}

/// When each of `provider`'s pool keys was last sent upstream, by key id (keys never used are
/// absent). The newest hour of each key comes from the hourly totals, the instant within it
/// from the attempts of that hour: two indexed reads, however long the history.
pub fn last_attempts(conn: &Connection, provider: &str) -> rusqlite::Result<HashMap<String, i64>> {
    let mut hours = conn.prepare_cached(
        "SELECT key_id, MAX(hour) FROM usage_hourly WHERE provider_id = ?1 AND key_id <> '' GROUP BY key_id",
    )?;
    let newest: Vec<(String, i64)> =
        hours.query_map([provider], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    let mut within = conn.prepare_cached(
        "SELECT MAX(at) FROM usage_attempts WHERE at >= ?1 AND at < ?2 AND provider_id = ?3 AND key_id = ?4",
    )?;
    let mut last = HashMap::with_capacity(newest.len());
    for (key, hour) in newest {
        let at: Option<i64> = within.query_row(params![hour, hour + HOUR_MS, provider, key], |row| row.get(0))?;
        // The hour's attempts are purged with it; its start is what is known then.
        last.insert(key, at.unwrap_or(hour));
    }
    Ok(last)
}

/// The earliest attempt in `[from, to)`, of one provider or all.
pub fn first_attempt(conn: &Connection, provider: Option<&str>, from: i64, to: i64) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT MIN(at) FROM usage_attempts WHERE at >= ?1 AND at < ?2 AND (?3 IS NULL OR provider_id = ?3)",
        params![from, to, provider],
        |row| row.get(0),
    )
}

/// The attempts in `[from, to)`, oldest first.
pub fn attempts(conn: &Connection, provider: Option<&str>, from: i64, to: i64) -> rusqlite::Result<Vec<AttemptRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT at, provider_id, key_id, model, chat_id, source, outcome, status, ttft_ms, latency_ms, input_tokens, \
         cached_tokens, output_tokens, member FROM usage_attempts WHERE at >= ?1 AND at < ?2 \
         AND (?3 IS NULL OR provider_id = ?3) \
         ORDER BY at, id",
    )?;
    let rows = stmt.query_map(params![from, to, provider], |row| {
        let outcome: String = row.get(6)?;
        Ok(AttemptRow {
            at: row.get(0)?,
            provider_id: row.get(1)?,
            key_id: row.get(2)?,
            model: row.get(3)?,
            chat_id: row.get(4)?,
            source: row.get(5)?,
            member: row.get(13)?,
            outcome: outcome_name(&outcome),
            status: row.get(7)?,
            ttft_ms: row.get(8)?,
            latency_ms: row.get(9)?,
            input_tokens: row.get(10)?,
            cached_tokens: row.get(11)?,
            output_tokens: row.get(12)?,
        })
    })?;
    rows.collect()
}

fn outcome_name(outcome: &str) -> &'static str {
    const OUTCOMES: [&str; 7] =
        ["ok", "rate_limited", "auth_rejected", "quota_exhausted", "provider_error", "transport_error", "stopped"];
    OUTCOMES.into_iter().find(|o| *o == outcome).unwrap_or("provider_error")
}

/// Deletes the attempts and totals of the hours before `before` (rounded down to the hour);
/// returns how many attempts went.
pub fn purge_before(conn: &mut Connection, before: i64) -> rusqlite::Result<usize> {
    let hour = before.div_euclid(HOUR_MS) * HOUR_MS;
    let tx = conn.transaction()?;
    let deleted = tx.execute("DELETE FROM usage_attempts WHERE at < ?1", [hour])?;
    tx.execute("DELETE FROM usage_hourly WHERE hour < ?1", [hour])?;
    tx.commit()?;
    Ok(deleted)
}

fn ceil_hour(at: i64) -> i64 {
    (at + HOUR_MS - 1).div_euclid(HOUR_MS) * HOUR_MS
}

/// A model's price, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    pub model: String,
    pub input_per_million: f64,
    /// `None`: cached input costs what input costs.
    pub cached_per_million: Option<f64>,
    pub output_per_million: f64,
    pub updated_at: i64,
}

pub fn prices(conn: &Connection) -> rusqlite::Result<Vec<Price>> {
    let mut stmt = conn.prepare_cached(
        "SELECT model, input_per_million, cached_per_million, output_per_million, updated_at FROM model_prices ORDER BY model",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(Price {
            model: row.get(0)?,
            input_per_million: row.get(1)?,
            cached_per_million: row.get(2)?,
            output_per_million: row.get(3)?,
            updated_at: row.get(4)?,
        })
    })?;
    rows.collect()
}

pub fn set_price(conn: &Connection, price: &Price) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO model_prices (model, input_per_million, cached_per_million, output_per_million, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![price.model, price.input_per_million, price.cached_per_million, price.output_per_million, price.updated_at],
    )?;
    Ok(())
}

/// Deletes a model's price; whether there was one.
pub fn delete_price(conn: &Connection, model: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM model_prices WHERE model = ?1", [model])? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_the_bucket_precision() {
        let mut h = Histogram::default();
        for ms in 1..=1000 {
            h.add(ms);
        }
        let p50 = h.percentile(0.5).unwrap() as f64;
        let p95 = h.percentile(0.95).unwrap() as f64;
        assert!((p50 - 500.0).abs() / 500.0 < 0.08, "p50 near 500 ms, got {p50}");
        assert!((p95 - 950.0).abs() / 950.0 < 0.08, "p95 near 950 ms, got {p95}");
        assert_eq!(Histogram::default().percentile(0.5), None, "no attempts, no percentile");
        assert_eq!(Histogram::from_blob(&h.to_blob()), h, "the blob round-trips");
    }
}
