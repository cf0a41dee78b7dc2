//! The team's ledger in Postgres: its schema (migrated by whichever replica starts first, under
//! an advisory lock), the monthly partitions, shipping a batch of rows (each kept once, by its
//! replica and number), and the sums `usage` and `members list` print.
//!
//! One connection, no pool: a replica ships from one writer, and a command reads once. Why
//! `tokio-postgres`: the protocol's binary arrays let a batch be one `INSERT … SELECT FROM
//! unnest(…)` (one statement, one round trip, atomic), and it runs on the Tokio the server has.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use keypool_api::service::{By, LedgerRow, LineOf, ReportRow};
use tokio_postgres::Client;

/// The schema, as an ordered list of migrations; `ledger_schema.version` says how many ran.
/// Append-only, as the store's.
const MIGRATIONS: &[&str] = &[include_str!("schema/0001_ledger.sql")];

/// The advisory lock the replicas take to migrate, and to add or drop a partition: one at a
/// time, whoever starts at once ("kpledger").
const LOCK: i64 = 0x6b70_6c65_6467_6572;

/// How long to wait for the server before the attempt counts as a failure.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The outcomes as `ledger_outcomes` numbers them.
const OUTCOMES: [&str; 7] =
    ["ok", "rate_limited", "auth_rejected", "quota_exhausted", "provider_error", "transport_error", "stopped"];

/// Why the ledger's Postgres could not be used. Never holds the URL (its password).
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("the ledger's Postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("the ledger's Postgres did not answer within {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("the ledger's TLS: {0}")]
    Tls(String),
    #[error("the ledger's Postgres has schema version {found}; this keypool-server knows {known}: upgrade it")]
    Newer { found: i32, known: usize },
}

/// A month, counted from year 0: `year * 12 + month - 1`.
type Month = i32;

fn month_of(at_ms: i64) -> Month {
    let at = jiff::Timestamp::from_millisecond(at_ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let date = at.to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
    i32::from(date.year()) * 12 + i32::from(date.month()) - 1
}

/// The partition of `month`: its table's name and its first day, `YYYY-MM-01`.
fn partition(month: Month) -> (String, String) {
    let (year, month) = (month.div_euclid(12), month.rem_euclid(12) + 1);
    (format!("ledger_attempts_{year:04}_{month:02}"), format!("{year:04}-{month:02}-01"))
}

/// The month of a partition's table, if `name` is one.
fn month_of_partition(name: &str) -> Option<Month> {
    let rest = name.strip_prefix("ledger_attempts_")?;
    let (year, month) = rest.split_once('_')?;
    let digits = |text: &str, n: usize| text.len() == n && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(year, 4) || !digits(month, 2) {
        return None;
    }
    let (year, month): (i32, i32) = (year.parse().ok()?, month.parse().ok()?);
    (1..=12).contains(&month).then_some(year * 12 + month - 1)
}

/// What the names of rows are in Postgres, learnt once each.
#[derive(Default)]
struct Ids {
    replicas: HashMap<String, i32>,
    providers: HashMap<String, i32>,
    models: HashMap<String, i32>,
    sources: HashMap<String, i32>,
    members: HashMap<String, i32>,
    /// By provider, identity and label (a label changed is written again).
    keys: HashMap<(i32, String, Option<String>), i32>,
}

/// A connection to the team's ledger, migrated.
pub struct Postgres {
    client: Client,
    ids: Ids,
    /// The partitions known to exist.
    months: HashSet<Month>,
}

impl Postgres {
    /// Connects to `url` (TLS as its `sslmode` says: `prefer`, the default, `require` or
    /// `disable`) and brings the schema up to date: a replica's writer.
    pub async fn connect(url: &str) -> Result<Postgres, LedgerError> {
        let mut postgres = Postgres::open(url).await?;
        migrate(&mut postgres.client).await?;
        Ok(postgres)
    }

    /// Connects to `url` to read, changing nothing (a command: a role that may only read will do).
    pub async fn open(url: &str) -> Result<Postgres, LedgerError> {
        let mut config: tokio_postgres::Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let connecting = async {
            if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "the ledger's connection ended");
                    }
                });
                Ok::<Client, LedgerError>(client)
            } else {
                let (client, connection) = config.connect(tls()?).await?;
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "the ledger's connection ended");
                    }
                });
                Ok(client)
            }
        };
        let limit = CONNECT_TIMEOUT * 2;
        let client = tokio::time::timeout(limit, connecting).await.map_err(|_| LedgerError::Timeout(limit))??;
        Ok(Postgres { client, ids: Ids::default(), months: HashSet::new() })
    }

    /// Whether the connection is gone (the next use fails).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Writes `rows` of replica `replica` in one statement (all or none), each once: a row it
    /// already has (by replica and number) is left as it is. Returns how many were new.
    pub async fn ship(&mut self, replica: &str, rows: &[LedgerRow]) -> Result<u64, LedgerError> {
        if rows.is_empty() {
            return Ok(0);
        }
        let replica = self.named("ledger_replicas", [replica]).await?[0];
        let months: HashSet<Month> = rows.iter().map(|row| month_of(row.at)).collect();
        for month in months {
            self.ensure_partition(month).await?;
        }
        let providers = self.named("ledger_providers", rows.iter().map(|r| r.provider.as_str())).await?;
        let models = self.named("ledger_models", rows.iter().map(|r| r.model.as_str())).await?;
        let sources = self.named("ledger_sources", rows.iter().map(|r| r.source.as_str())).await?;
        let members = self.named_optional("ledger_members", rows.iter().map(|r| r.member.as_deref())).await?;
        let keys = self.keys(rows, &providers).await?;
        let small = |n: Option<u64>| n.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
        let at: Vec<i64> = rows.iter().map(|r| r.at).collect();
        let seq: Vec<i64> = rows.iter().map(|r| r.seq).collect();
        let outcome: Vec<i16> =
            rows.iter().map(|r| OUTCOMES.iter().position(|o| *o == r.outcome).unwrap_or(4) as i16).collect();
        let status: Vec<Option<i16>> = rows.iter().map(|r| r.status.map(|s| i16::try_from(s).unwrap_or(0))).collect();
        let ttft: Vec<Option<i32>> = rows.iter().map(|r| small(r.ttft_ms)).collect();
        let latency: Vec<i32> = rows.iter().map(|r| small(Some(r.latency_ms)).unwrap_or(0)).collect();
        let input: Vec<Option<i32>> = rows.iter().map(|r| small(r.input_tokens)).collect();
        let cached: Vec<Option<i32>> = rows.iter().map(|r| small(r.cached_tokens)).collect();
        let output: Vec<Option<i32>> = rows.iter().map(|r| small(r.output_tokens)).collect();
        let inserted = self
            .client
            .execute(
                "INSERT INTO ledger_attempts (at, replica_id, seq, provider_id, key_id, model_id, source_id, member_id, \
                 outcome, status, ttft_ms, latency_ms, input_tokens, cached_tokens, output_tokens) \
                 SELECT 'epoch'::timestamptz + r.at * interval '1 millisecond', $1, r.seq, r.provider_id, r.key_id, \
                 r.model_id, r.source_id, r.member_id, r.outcome, r.status, r.ttft_ms, r.latency_ms, r.input_tokens, \
                 r.cached_tokens, r.output_tokens \
                 FROM unnest($2::bigint[], $3::bigint[], $4::integer[], $5::integer[], $6::integer[], $7::integer[], \
                 $8::integer[], $9::smallint[], $10::smallint[], $11::integer[], $12::integer[], $13::integer[], \
                 $14::integer[], $15::integer[]) \
                 AS r(at, seq, provider_id, key_id, model_id, source_id, member_id, outcome, status, ttft_ms, latency_ms, \
                 input_tokens, cached_tokens, output_tokens) \
                 ON CONFLICT DO NOTHING",
                &[
                    &replica, &at, &seq, &providers, &keys, &models, &sources, &members, &outcome, &status, &ttft,
                    &latency, &input, &cached, &output,
                ],
            )
            .await?;
        Ok(inserted)
    }

    /// The ids of `names` in `table` (`ledger_replicas`, `…_providers`, `…_models`, `…_sources`,
    /// `…_members`), one per name in order; the names new to it are added.
    async fn named<'a>(
        &mut self,
        table: &'static str,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<i32>, LedgerError> {
        let names: Vec<&str> = names.into_iter().collect();
        let known = match table {
            "ledger_replicas" => &mut self.ids.replicas,
            "ledger_providers" => &mut self.ids.providers,
            "ledger_models" => &mut self.ids.models,
            "ledger_sources" => &mut self.ids.sources,
            _ => &mut self.ids.members,
        };
        let mut missing: Vec<&str> = names.iter().copied().filter(|name| !known.contains_key(*name)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            self.client
                .execute(
                    &format!("INSERT INTO {table} (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING"),
                    &[&missing],
                )
                .await?;
            for row in
                self.client.query(&format!("SELECT id, name FROM {table} WHERE name = ANY($1)"), &[&missing]).await?
            {
                known.insert(row.get(1), row.get(0));
            }
        }
        Ok(names.iter().map(|name| known.get(*name).copied().unwrap_or_default()).collect())
    }

    /// [`Postgres::named`] of names that may be absent (`None` stays `None`).
    async fn named_optional<'a>(
        &mut self,
        table: &'static str,
        names: impl IntoIterator<Item = Option<&'a str>>,
    ) -> Result<Vec<Option<i32>>, LedgerError> {
        let names: Vec<Option<&str>> = names.into_iter().collect();
        let ids = self.named(table, names.iter().flatten().copied()).await?;
        let mut ids = ids.into_iter();
        Ok(names.iter().map(|name| name.and_then(|_| ids.next())).collect())
    }

    /// The ids of the rows' keys (`None`: the provider-level key), `providers` the rows'
    /// providers' ids; a key new to the ledger, or with a new label, is written.
    async fn keys(&mut self, rows: &[LedgerRow], providers: &[i32]) -> Result<Vec<Option<i32>>, LedgerError> {
        let wanted = |(row, provider): (&LedgerRow, &i32)| {
            row.key_identity.as_ref().map(|identity| (*provider, identity.clone(), row.key_label.clone()))
        };
        let mut missing: Vec<(i32, String, Option<String>)> =
            rows.iter().zip(providers).filter_map(wanted).filter(|key| !self.ids.keys.contains_key(key)).collect();
        missing.sort_unstable();
        // One per provider and identity: an upsert may not touch a row twice.
        missing.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        if !missing.is_empty() {
            let provider: Vec<i32> = missing.iter().map(|k| k.0).collect();
            let identity: Vec<&str> = missing.iter().map(|k| k.1.as_str()).collect();
            let label: Vec<Option<&str>> = missing.iter().map(|k| k.2.as_deref()).collect();
            let written = self
                .client
                .query(
                    "INSERT INTO ledger_keys (provider_id, identity, label) \
                     SELECT * FROM unnest($1::integer[], $2::text[], $3::text[]) \
                     ON CONFLICT (provider_id, identity) DO UPDATE SET label = EXCLUDED.label \
                     RETURNING id, provider_id, identity, label",
                    &[&provider, &identity, &label],
                )
                .await?;
            for row in written {
                self.ids.keys.insert((row.get(1), row.get(2), row.get(3)), row.get(0));
            }
        }
        Ok(rows
            .iter()
            .zip(providers)
            .map(|pair| wanted(pair).and_then(|key| self.ids.keys.get(&key).copied()))
            .collect())
    }

    /// Makes `month`'s partition if it is not there.
    async fn ensure_partition(&mut self, month: Month) -> Result<(), LedgerError> {
        if self.months.contains(&month) {
            return Ok(());
        }
        let (table, from) = partition(month);
        let (_, to) = partition(month + 1);
        // A transaction of its own: dropped unfinished (an error), it is rolled back.
        let tx = self.client.transaction().await?;
        tx.batch_execute(&format!(
            "SELECT pg_advisory_xact_lock({LOCK}); \
             CREATE TABLE IF NOT EXISTS {table} PARTITION OF ledger_attempts \
             FOR VALUES FROM ('{from} 00:00:00+00') TO ('{to} 00:00:00+00');"
        ))
        .await?;
        tx.commit().await?;
        self.months.insert(month);
        Ok(())
    }

    /// The partitions there are, oldest first (`ledger_attempts_YYYY_MM`).
    pub async fn partitions(&self) -> Result<Vec<String>, LedgerError> {
        let rows = self
            .client
            .query(
                "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                 WHERE i.inhparent = 'ledger_attempts'::regclass ORDER BY 1",
                &[],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// What a replica does now and then at `now_ms`: the partitions of this month and the next
    /// made ahead; with `retention_months` N, those of the months before the last N dropped
    /// (N = 12 in July 2027 keeps July 2026 on). Returns the partitions dropped.
    pub async fn maintain(&mut self, now_ms: i64, retention_months: Option<u32>) -> Result<Vec<String>, LedgerError> {
        let this = month_of(now_ms);
        self.ensure_partition(this).await?;
        self.ensure_partition(this + 1).await?;
        let Some(kept) = retention_months else { return Ok(Vec::new()) };
        let oldest_kept = this - i32::try_from(kept).unwrap_or(i32::MAX);
        let mut dropped = Vec::new();
        for name in self.partitions().await? {
            let Some(month) = month_of_partition(&name) else { continue };
            if month < oldest_kept {
                let tx = self.client.transaction().await?;
                tx.batch_execute(&format!("SELECT pg_advisory_xact_lock({LOCK}); DROP TABLE IF EXISTS {name};"))
                    .await?;
                tx.commit().await?;
                self.months.remove(&month);
                dropped.push(name);
            }
        }
        Ok(dropped)
    }

    /// The attempts over `[from, to)` (milliseconds) summed by `by` and model, named as people
    /// know them: a key by its label (its team identity when it has none), a provider by its
    /// name, a day as `YYYY-MM-DD` (UTC).
    pub async fn report(&self, by: By, from: i64, to: i64) -> Result<Vec<(LineOf, ReportRow)>, LedgerError> {
        let (group, id, provider) = match by {
            By::Member => ("me.name", "NULL", "NULL"),
            By::Model => ("mo.name", "NULL", "NULL"),
            By::Provider => ("p.name", "p.name", "NULL"),
            By::Key => ("COALESCE(k.label, k.identity, 'provider-level key')", "k.identity", "p.name"),
            By::Source => ("s.name", "NULL", "NULL"),
            By::Day => ("to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD')", "NULL", "NULL"),
        };
        let sql = format!(
            "SELECT {group}, {id}, {provider}, mo.name, COUNT(*), COUNT(*) FILTER (WHERE a.outcome NOT IN (0, 6)), \
             COALESCE(SUM(a.input_tokens), 0)::bigint, COALESCE(SUM(a.cached_tokens), 0)::bigint, \
             COALESCE(SUM(a.output_tokens), 0)::bigint \
             FROM ledger_attempts a \
             JOIN ledger_models mo ON mo.id = a.model_id \
             JOIN ledger_providers p ON p.id = a.provider_id \
             JOIN ledger_sources s ON s.id = a.source_id \
             LEFT JOIN ledger_keys k ON k.id = a.key_id \
             LEFT JOIN ledger_members me ON me.id = a.member_id \
             WHERE a.at >= 'epoch'::timestamptz + $1::bigint * interval '1 millisecond' \
             AND a.at < 'epoch'::timestamptz + $2::bigint * interval '1 millisecond' \
             GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
        );
        let rows = self.client.query(&sql, &[&from, &to]).await?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(rows
            .iter()
            .map(|row| {
                let name: Option<String> = row.get(0);
                let of = LineOf { name: name.clone(), id: row.get(1), provider: row.get(2) };
                let sums = ReportRow {
                    group: name,
                    provider: row.get(2),
                    model: row.get(3),
                    attempts: count(row.get(4)),
                    failed: count(row.get(5)),
                    input_tokens: count(row.get(6)),
                    cached_tokens: count(row.get(7)),
                    output_tokens: count(row.get(8)),
                };
                (of, sums)
            })
            .collect())
    }
}

/// The connector for `sslmode=prefer` and `require`: rustls (ring, as the rest of the server)
/// verifying the server's certificate against the platform's roots.
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, LedgerError> {
    use rustls_platform_verifier::ConfigVerifierExt as _;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = rustls::ClientConfig::with_platform_verifier().map_err(|e| LedgerError::Tls(e.to_string()))?;
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Brings the schema to the latest version, in one transaction under [`LOCK`]: replicas starting
/// at once migrate one after the other, the later ones finding nothing left to do.
async fn migrate(client: &mut Client) -> Result<(), LedgerError> {
    let tx = client.transaction().await?;
    tx.batch_execute(&format!(
        "SELECT pg_advisory_xact_lock({LOCK}); CREATE TABLE IF NOT EXISTS ledger_schema (version integer NOT NULL);"
    ))
    .await?;
    let found: Option<i32> = tx.query_opt("SELECT version FROM ledger_schema", &[]).await?.map(|row| row.get(0));
    let found = match found {
        Some(version) => version,
        None => {
            tx.execute("INSERT INTO ledger_schema (version) VALUES (0)", &[]).await?;
            0
        }
    };
    let known = MIGRATIONS.len();
    if usize::try_from(found).unwrap_or(usize::MAX) > known {
        return Err(LedgerError::Newer { found, known });
    }
    for (done, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        tx.batch_execute(sql).await?;
        tx.execute("UPDATE ledger_schema SET version = $1", &[&(done as i32 + 1)]).await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_is_named_and_bounded_in_utc() {
        // 2027-01-31T23:59:59.999Z and the next millisecond.
        let february = 1_801_440_000_000;
        assert_eq!(partition(month_of(february - 1)), ("ledger_attempts_2027_01".into(), "2027-01-01".into()));
        assert_eq!(partition(month_of(february)), ("ledger_attempts_2027_02".into(), "2027-02-01".into()));
        assert_eq!(partition(month_of(february) + 11).1, "2028-01-01", "December's next month is January");
        assert_eq!(month_of_partition("ledger_attempts_2027_02"), Some(month_of(february)));
        for other in ["ledger_attempts_2027_13", "ledger_attempts_27_02", "ledger_attempts_2027_02_x", "ledger_keys"] {
            assert_eq!(month_of_partition(other), None, "{other} is no partition of ours");
        }
    }
}
