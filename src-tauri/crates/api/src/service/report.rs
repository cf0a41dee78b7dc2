//! The ledger summed by member, model, provider, key, client or day over a time range, with what
//! it cost at the price table's prices: `keypool-server usage`. Names are resolved here (a provider's name,
//! a key's label or masked preview); a deleted key or provider keeps its id.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use keypool_store::report::{By, ReportRow};
use keypool_store::{api_keys, providers, report, usage, Database};

use crate::service::error::Result;
use crate::service::usage::Price;

/// One group's sums.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageLine {
    /// The member (`None`: the server's own token, or the app), the model, the provider's name
    /// or the key's label.
    pub name: Option<String>,
    /// A provider's or a key's id; the key's provider.
    pub id: Option<String>,
    pub provider: Option<String>,
    pub attempts: u64,
    pub failed: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// US dollars over the models with a price; `None` when none has one.
    pub cost_usd: Option<f64>,
    /// Every model that used tokens has a price: `cost_usd` is the whole cost.
    pub cost_complete: bool,
}

/// What a [`UsageLine`] is of: its group as people know it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineOf {
    /// The member, the model, the provider's name, the key's label, the client or the day.
    pub name: Option<String>,
    /// A provider's or a key's id.
    pub id: Option<String>,
    /// The key's provider, by name.
    pub provider: Option<String>,
}

pub struct UsageReport {
    db: Arc<Database>,
}

impl UsageReport {
    pub(crate) fn new(db: Arc<Database>) -> UsageReport {
        UsageReport { db }
    }

    /// The attempts over `[from, to)` (milliseconds) summed by `by`, largest spend first.
    pub fn lines(&self, by: By, from: i64, to: i64) -> Result<Vec<UsageLine>> {
        let conn = self.db.lock()?;
        let rows = report::by(&conn, by, from, to)?;
        let prices: Vec<Price> = usage::prices(&conn)?.into_iter().map(Price::from).collect();
        let providers: HashMap<String, String> =
            providers::list_providers(&conn)?.into_iter().map(|p| (p.id, p.name)).collect();
        let mut labels: HashMap<String, String> = HashMap::new();
        if by == By::Key {
            for id in providers.keys() {
                for key in api_keys::list_api_keys(&conn, id)? {
                    labels.insert(key.id.clone(), key.label.clone().unwrap_or_else(|| key.api_key.preview()));
                }
            }
        }
        drop(conn);
        let named = rows.into_iter().map(|row| {
            let (name, id) = match by {
                By::Member | By::Model | By::Source | By::Day => (row.group.clone(), None),
                By::Provider => {
                    (row.group.as_ref().map(|id| providers.get(id).unwrap_or(id).clone()), row.group.clone())
                }
                By::Key => (
                    Some(row.group.as_ref().map_or("provider-level key".to_owned(), |id| {
                        labels.get(id).cloned().unwrap_or_else(|| id.clone())
                    })),
                    row.group.clone(),
                ),
            };
            let provider = row.provider.as_ref().map(|id| providers.get(id).unwrap_or(id).clone());
            (LineOf { name, id, provider }, row)
        });
        Ok(sum_lines(named, &prices))
    }
}

/// One line per group of `rows` (each a group's sums for one model), costed at `prices` (a model
/// without a price makes its line's cost incomplete, unless it used no tokens), largest spend
/// first. The local ledger's report and the team ledger's (Postgres) both end here.
pub fn sum_lines(rows: impl IntoIterator<Item = (LineOf, ReportRow)>, prices: &[Price]) -> Vec<UsageLine> {
    let prices: HashMap<&str, &Price> = prices.iter().map(|p| (p.model.as_str(), p)).collect();
    let mut lines: BTreeMap<LineOf, UsageLine> = BTreeMap::new();
    for (of, row) in rows {
        let line = lines.entry(of.clone()).or_insert_with(|| {
            let LineOf { name, id, provider } = of;
            UsageLine { name, id, provider, cost_complete: true, ..UsageLine::default() }
        });
        line.attempts += row.attempts;
        line.failed += row.failed;
        line.input_tokens += row.input_tokens;
        line.cached_tokens += row.cached_tokens;
        line.output_tokens += row.output_tokens;
        match prices.get(row.model.as_str()) {
            Some(price) => {
                let fresh = row.input_tokens.saturating_sub(row.cached_tokens) as f64;
                let cost = (fresh * price.input_per_million
                    + row.cached_tokens as f64 * price.cached_per_million.unwrap_or(price.input_per_million)
                    + row.output_tokens as f64 * price.output_per_million)
                    / 1_000_000.0;
                line.cost_usd = Some(line.cost_usd.unwrap_or(0.0) + cost);
            }
            None if row.input_tokens + row.output_tokens > 0 => line.cost_complete = false,
            None => {}
        }
    }
    let mut lines: Vec<UsageLine> = lines.into_values().collect();
    lines.sort_by(|a, b| {
        let spend = |l: &UsageLine| (l.cost_usd.unwrap_or(0.0), l.input_tokens + l.output_tokens);
        spend(b).partial_cmp(&spend(a)).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.name.cmp(&b.name))
    });
    lines
}
