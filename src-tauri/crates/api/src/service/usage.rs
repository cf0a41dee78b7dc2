//! What each key spends, from the usage ledger: totals and latencies per key, series for
//! charts, costs where the user gave a price, CSV export, retention.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use keypool::Clock;
use keypool_store::usage::{self, Histogram, HOUR_MS};
use keypool_store::{api_keys, providers, Database};

use super::ledger::Ledger;
use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

pub const DAY_MS: i64 = 24 * HOUR_MS;
/// The range a summary covers when the caller names none.
pub const DEFAULT_RANGE_MS: i64 = 30 * DAY_MS;

/// Asks the user where to save a file (a native dialog in the app).
pub trait SaveDialog: Send + Sync {
    /// The path chosen for `suggested_name`, or `None` when the user cancelled.
    fn choose<'a>(&'a self, suggested_name: &'a str) -> Pin<Box<dyn Future<Output = Option<PathBuf>> + Send + 'a>>;
}

/// No dialog to show (tools without a window): every export is cancelled.
pub struct NoSaveDialog;

impl SaveDialog for NoSaveDialog {
    fn choose<'a>(&'a self, _: &'a str) -> Pin<Box<dyn Future<Output = Option<PathBuf>> + Send + 'a>> {
        Box::pin(std::future::ready(None))
    }
}

/// Sums of attempts. `failures`: all but the answered and the stopped; `failovers`: refusals
/// the pool moved on from; `input_tokens` counts the cached ones too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub requests: u64,
    pub failures: u64,
    pub rate_limited: u64,
    pub failovers: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl From<usage::Totals> for Totals {
    fn from(t: usage::Totals) -> Self {
        let usage::Totals { requests, failures, rate_limited, failovers, input_tokens, cached_tokens, output_tokens } =
            t;
        Totals { requests, failures, rate_limited, failovers, input_tokens, cached_tokens, output_tokens }
    }
}

/// Totals with their cost, where prices are known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    pub totals: Totals,
    /// US dollars, over the models with a price; `None` when none of them has one.
    pub cost: Option<f64>,
    /// Every model used has a price, so `cost` is the whole cost.
    pub cost_complete: bool,
}

/// A [`Spend`] being summed, over the store's totals.
#[derive(Default)]
struct Tally {
    totals: usage::Totals,
    cost: Option<f64>,
    cost_complete: bool,
}

impl Tally {
    fn new() -> Self {
        Tally { cost_complete: true, ..Tally::default() }
    }

    fn spend(self) -> Spend {
        Spend { totals: self.totals.into(), cost: self.cost, cost_complete: self.cost_complete }
    }
}

/// A model's price, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    pub model: String,
    pub input_per_million: f64,
    /// `None`: cached input costs what input costs.
    #[serde(rename = "cachedInputPerMillion")]
    pub cached_per_million: Option<f64>,
    pub output_per_million: f64,
    pub updated_at: i64,
}

impl From<usage::Price> for Price {
    fn from(p: usage::Price) -> Self {
        let usage::Price { model, input_per_million, cached_per_million, output_per_million, updated_at } = p;
        Price { model, input_per_million, cached_per_million, output_per_million, updated_at }
    }
}

/// A price to set, validated and normalized by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPrice {
    pub model: String,
    pub input_per_million: f64,
    /// `None`: cached input costs what input costs.
    pub cached_per_million: Option<f64>,
    pub output_per_million: f64,
}

/// One key's spend, with its latencies.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySpend {
    pub provider_id: String,
    /// `""` for the provider-level key, [`usage::NO_KEY`] for requests sent without any key.
    pub key_id: String,
    /// The key's label, or its masked preview; `None` when the key was deleted since, and for
    /// the provider-level key and no key.
    pub label: Option<String>,
    pub spend: Spend,
    pub p50_latency_ms: Option<u64>,
    pub p95_latency_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub from: i64,
    pub to: i64,
    pub total: Spend,
    pub keys: Vec<KeySpend>,
    /// The models that spent tokens in the range and have no price, by name: what a partial
    /// cost is missing.
    pub unpriced_models: Vec<String>,
    /// The earliest attempt in the range, if any: how far back the history goes.
    pub first_at: Option<i64>,
}

/// The bucket of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Hour,
    Day,
}

impl Bucket {
    /// Its length in milliseconds.
    pub fn millis(self) -> i64 {
        match self {
            Bucket::Hour => HOUR_MS,
            Bucket::Day => DAY_MS,
        }
    }
}

/// One bucket of one key's attempts; `at` is the bucket's start. `failovers`: attempts refused
/// in a way the pool moved on from (rate limited, auth rejected, out of credit).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsagePoint")]
pub struct Point {
    pub at: i64,
    pub provider_id: String,
    /// `""` for the provider-level key, [`usage::NO_KEY`] for requests sent without any key.
    pub key_id: String,
    pub sent_with: SentWith,
    #[serde(flatten)]
    pub totals: Totals,
}

/// The buckets of a range (`[from, to)`), each key's in its own [`Point`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageSeries")]
pub struct Series {
    pub from: i64,
    pub to: i64,
    pub points: Vec<Point>,
}

/// What a key row of the ledger sent its requests with: a key of the pool, the provider-level
/// key, or no key at all (a server on this machine, such as Ollama, while its provider has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum SentWith {
    PoolKey,
    ProviderKey,
    NoKey,
}

impl SentWith {
    /// Of a key id as the ledger keeps it: `""` the provider-level key, [`usage::NO_KEY`] none.
    pub fn of(key_id: &str) -> Self {
        match key_id {
            "" => SentWith::ProviderKey,
            usage::NO_KEY => SentWith::NoKey,
            _ => SentWith::PoolKey,
        }
    }
}

pub struct Usage {
    db: Arc<Database>,
    ledger: Ledger,
    clock: Arc<dyn Clock>,
    save_dialog: Arc<dyn SaveDialog>,
}

impl Usage {
    pub(crate) fn new(
        db: Arc<Database>,
        ledger: Ledger,
        clock: Arc<dyn Clock>,
        save_dialog: Arc<dyn SaveDialog>,
    ) -> Self {
        Usage { db, ledger, clock, save_dialog }
    }

    /// The range `[from, to)`: `to` defaults to now, `from` to 30 days before `to`.
    pub fn range(&self, from: Option<i64>, to: Option<i64>) -> Result<(i64, i64)> {
        let to = to.unwrap_or_else(|| self.clock.now().as_millis() + 1);
        let from = from.unwrap_or(to - DEFAULT_RANGE_MS);
        if from >= to {
            return Err(ServiceError::invalid("from", Rule::RangeOrder));
        }
        Ok((from, to))
    }

    /// Totals, costs and latencies per key over `[from, to)`, for one provider or all.
    pub fn summary(&self, provider: Option<&str>, from: Option<i64>, to: Option<i64>) -> Result<Summary> {
        let (from, to) = self.range(from, to)?;
        self.ledger.flush();
        let conn = self.db.lock()?;
        let groups = usage::groups(&conn, provider, from, to)?;
        let prices: HashMap<String, usage::Price> =
            usage::prices(&conn)?.into_iter().map(|p| (p.model.clone(), p)).collect();
        let mut keys: HashMap<(String, String), (Tally, Histogram)> = HashMap::new();
        let mut total = Tally::new();
        let mut unpriced_models = BTreeSet::new();
        for ((provider_id, key_id, model), group) in &groups {
            let spent = group.totals.input_tokens + group.totals.output_tokens > 0;
            let cost = prices.get(model).map(|price| cost_of(&group.totals, price));
            if cost.is_none() && spent {
                unpriced_models.insert(model.clone());
            }
            let entry = keys
                .entry((provider_id.clone(), key_id.clone()))
                .or_insert_with(|| (Tally::new(), Histogram::default()));
            for spend in [&mut entry.0, &mut total] {
                spend.totals.add(&group.totals);
                match cost {
                    Some(cost) => spend.cost = Some(spend.cost.unwrap_or(0.0) + cost),
                    // Attempts that spent no tokens cost nothing, priced or not.
                    None if !spent => {}
                    None => spend.cost_complete = false,
                }
            }
            entry.1.merge(&group.latencies);
        }
        let mut out = Vec::with_capacity(keys.len());
        for ((provider_id, key_id), (tally, latencies)) in keys {
            let label = match key_id.as_str() {
                "" | usage::NO_KEY => None,
                id => api_keys::get_api_key(&conn, id)?.map(|k| k.label.unwrap_or_else(|| k.api_key.preview())),
            };
            out.push(KeySpend {
                provider_id,
                key_id,
                label,
                spend: tally.spend(),
                p50_latency_ms: latencies.percentile(0.5),
                p95_latency_ms: latencies.percentile(0.95),
            });
        }
        out.sort_by(|a, b| b.spend.totals.requests.cmp(&a.spend.totals.requests).then(a.key_id.cmp(&b.key_id)));
        if groups.is_empty() {
            total.cost_complete = false;
        }
        let unpriced_models = unpriced_models.into_iter().collect();
        let first_at = usage::first_attempt(&conn, provider, from, to)?;
        Ok(Summary { from, to, total: total.spend(), keys: out, unpriced_models, first_at })
    }

    /// Totals per bucket and key over `[from, to)`, the buckets starting at `from` (rounded down
    /// to the hour): with `from` at the user's midnight, day buckets are the user's days.
    pub fn series(
        &self,
        provider: Option<&str>,
        key: Option<&str>,
        bucket: Bucket,
        from: i64,
        to: i64,
    ) -> Result<Series> {
        let (from, to) = self.range(Some(from), Some(to))?;
        self.ledger.flush();
        let rows = usage::series(&*self.db.lock()?, provider, key, bucket.millis(), from, to)?;
        let points = rows
            .into_iter()
            .map(|(at, provider_id, key_id, totals)| Point {
                at,
                provider_id,
                sent_with: SentWith::of(&key_id),
                key_id,
                totals: totals.into(),
            })
            .collect();
        Ok(Series { from, to, points })
    }

    /// Writes the attempts of `[from, to)`, of one provider or all, as CSV where the user chooses
    /// (a native save dialog); `None` when the user cancelled. Keys appear by label or masked
    /// preview, never in full.
    pub async fn export_csv(
        &self,
        provider: Option<&str>,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Result<Option<(PathBuf, usize)>> {
        let (from, to) = self.range(from, to)?;
        let Some(path) = self.save_dialog.choose("keypool-usage.csv").await else { return Ok(None) };
        self.ledger.flush();
        let (rows, names, providers) = {
            let conn = self.db.lock()?;
            let rows = usage::attempts(&conn, provider, from, to)?;
            let providers: HashMap<String, String> =
                providers::list_providers(&conn)?.into_iter().map(|p| (p.id, p.name)).collect();
            let mut names: HashMap<String, String> = HashMap::new();
            names.insert(usage::NO_KEY.to_owned(), "no key".to_owned());
            for key_id in rows.iter().filter_map(|r| r.key_id.as_deref()) {
                if !names.contains_key(key_id) {
                    let name = api_keys::get_api_key(&conn, key_id)?
                        .map_or_else(|| "deleted key".to_owned(), |k| k.label.unwrap_or_else(|| k.api_key.preview()));
                    names.insert(key_id.to_owned(), name);
                }
            }
            (rows, names, providers)
        };
        let written = write_csv(&path, &rows, &names, &providers);
        written.map_err(|error| ServiceError::cannot_write(&path, error))?;
        Ok(Some((path, rows.len())))
    }

    pub fn prices(&self) -> Result<Vec<Price>> {
        price_list(&self.db)
    }

    pub fn set_price(&self, new: NewPrice) -> Result<Price> {
        let NewPrice { model, input_per_million, cached_per_million, output_per_million } = new;
        let updated_at = self.clock.now().as_millis();
        let price = usage::Price { model, input_per_million, cached_per_million, output_per_million, updated_at };
        usage::set_price(&*self.db.lock()?, &price)?;
        Ok(price.into())
    }

    pub fn delete_price(&self, model: &str) -> Result<()> {
        if !usage::delete_price(&*self.db.lock()?, model)? {
            return Err(ServiceError::not_found("price for model", model));
        }
        Ok(())
    }

    /// Deletes the usage history before `before` (rounded down to the hour), or all of it.
    /// Waits until every attempt recorded so far is in the database (before a server exits).
    pub fn flush(&self) {
        self.ledger.flush();
    }

    pub fn purge(&self, before: Option<i64>) -> Result<usize> {
        self.ledger.flush();
        let before = before.unwrap_or(i64::MAX - HOUR_MS);
        let deleted = usage::purge_before(&mut *self.db.lock()?, before)?;
        Ok(deleted)
    }
}

/// What `totals` of one model cost at `price`: cached input at its own price (or the input
/// price), the rest of the input at the input price, the output at the output price.
pub(crate) fn cost_of(totals: &usage::Totals, price: &usage::Price) -> f64 {
    let fresh = totals.input_tokens.saturating_sub(totals.cached_tokens) as f64;
    let cached = totals.cached_tokens as f64;
    let output = totals.output_tokens as f64;
    (fresh * price.input_per_million
        + cached * price.cached_per_million.unwrap_or(price.input_per_million)
        + output * price.output_per_million)
        / 1_000_000.0
}

/// `text` as a spreadsheet shows it rather than runs it: a cell starting with `=`, `+`, `-`, `@`,
/// a tab or a carriage return is a formula to Excel, LibreOffice and Sheets (CSV injection), so
/// it gets a leading `'`, which they read as "text".
pub(crate) fn spreadsheet_safe(text: String) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text,
    }
}

fn write_csv(
    path: &PathBuf,
    rows: &[usage::AttemptRow],
    names: &HashMap<String, String>,
    providers: &HashMap<String, String>,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    let mut out = csv::Writer::from_path(path)?;
    out.write_record([
        "time",
        "provider",
        "key",
        "model",
        "chat",
        "source",
        "outcome",
        "status",
        "time_to_first_token_ms",
        "latency_ms",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
    ])?;
    let text = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_default();
    for row in rows {
        // Every cell that holds a name someone chose: a provider, a key's label, a model, a
        // client's user agent.
        let named = |text: String| spreadsheet_safe(text);
        let time = humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(row.at).unwrap_or(0)),
        );
        out.write_record([
            time.to_string(),
            named(providers.get(&row.provider_id).cloned().unwrap_or_else(|| row.provider_id.clone())),
            named(
                row.key_id
                    .as_ref()
                    .map_or_else(|| "provider key".to_owned(), |id| names.get(id).cloned().unwrap_or_default()),
            ),
            named(row.model.clone()),
            named(row.chat_id.clone().unwrap_or_default()),
            named(row.source.clone()),
            row.outcome.to_owned(),
            row.status.map(|s| s.to_string()).unwrap_or_default(),
            text(row.ttft_ms),
            row.latency_ms.to_string(),
            text(row.input_tokens),
            text(row.cached_tokens),
            text(row.output_tokens),
        ])?;
    }
    out.flush()?;
    Ok(())
}

/// The price table in `db`.
pub(crate) fn price_list(db: &Database) -> Result<Vec<Price>> {
    Ok(usage::prices(&*db.lock()?)?.into_iter().map(Price::from).collect())
}
