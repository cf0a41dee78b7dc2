//! What the `usage:*` commands return.

use std::path::PathBuf;

use keypool_store::usage::{Price, Totals};
use serde::Serialize;
use ts_rs::TS;

use crate::service::{KeySpend, Point, Spend, Summary};

/// Sums of attempts. `requests`: attempts sent; `failures`: all but the answered and the
/// stopped; `inputTokens` counts cached ones too. `cost` (US dollars) covers the models with a
/// price, null when none has one; `costComplete` says whether every model that spent tokens has a price.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageTotals")]
pub struct TotalsDto {
    pub requests: u64,
    pub failures: u64,
    pub rate_limited: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub cost: Option<f64>,
    pub cost_complete: bool,
}

impl From<&Spend> for TotalsDto {
    fn from(spend: &Spend) -> Self {
        let t = &spend.totals;
        TotalsDto {
            requests: t.requests,
            failures: t.failures,
            rate_limited: t.rate_limited,
            input_tokens: t.input_tokens,
            cached_tokens: t.cached_tokens,
            output_tokens: t.output_tokens,
            cost: spend.cost,
            cost_complete: spend.cost_complete,
        }
    }
}

/// One key's usage. `keyId` is `""` for the provider-level key; `label` is null for it and for
/// a key deleted since.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyUsage")]
pub struct KeyUsageDto {
    #[serde(flatten)]
    pub totals: TotalsDto,
    pub provider_id: String,
    pub key_id: String,
    pub label: Option<String>,
    pub p50_latency_ms: Option<u64>,
    pub p95_latency_ms: Option<u64>,
}

impl From<&KeySpend> for KeyUsageDto {
    fn from(k: &KeySpend) -> Self {
        KeyUsageDto {
            totals: (&k.spend).into(),
            provider_id: k.provider_id.clone(),
            key_id: k.key_id.clone(),
            label: k.label.clone(),
            p50_latency_ms: k.p50_latency_ms,
            p95_latency_ms: k.p95_latency_ms,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageSummary")]
pub struct UsageSummaryDto {
    pub from: i64,
    pub to: i64,
    pub totals: TotalsDto,
    /// Most requests first.
    pub keys: Vec<KeyUsageDto>,
    /// The models that spent tokens in the range and have no price, sorted: what a partial
    /// cost is missing.
    pub unpriced_models: Vec<String>,
}

impl From<Summary> for UsageSummaryDto {
    fn from(s: Summary) -> Self {
        UsageSummaryDto {
            from: s.from,
            to: s.to,
            totals: (&s.total).into(),
            keys: s.keys.iter().map(Into::into).collect(),
            unpriced_models: s.unpriced_models,
        }
    }
}

/// One bucket of one key's attempts; `at` is the bucket's start. `failovers`: attempts refused
/// in a way the pool moved on from (rate limited, auth rejected, out of credit).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsagePoint")]
pub struct PointDto {
    pub at: i64,
    pub provider_id: String,
    pub key_id: String,
    pub requests: u64,
    pub failures: u64,
    pub rate_limited: u64,
    pub failovers: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl From<Point> for PointDto {
    fn from(p: Point) -> Self {
        let Totals { requests, failures, rate_limited, failovers, input_tokens, cached_tokens, output_tokens } =
            p.totals;
        PointDto {
            at: p.at,
            provider_id: p.provider_id,
            key_id: p.key_id,
            requests,
            failures,
            rate_limited,
            failovers,
            input_tokens,
            cached_tokens,
            output_tokens,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageSeries")]
pub struct SeriesDto {
    pub from: i64,
    pub to: i64,
    pub points: Vec<PointDto>,
}

/// Where the CSV went: `path` is null when the user cancelled the save dialog.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportResult {
    pub path: Option<String>,
    pub rows: usize,
}

impl From<Option<(PathBuf, usize)>> for ExportResult {
    fn from(written: Option<(PathBuf, usize)>) -> Self {
        match written {
            Some((path, rows)) => ExportResult { path: Some(path.display().to_string()), rows },
            None => ExportResult { path: None, rows: 0 },
        }
    }
}

/// A model's price, in US dollars per million tokens; `cachedInputPerMillion` null: the input
/// price.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Price")]
pub struct PriceDto {
    pub model: String,
    pub input_per_million: f64,
    pub cached_input_per_million: Option<f64>,
    pub output_per_million: f64,
    pub updated_at: i64,
}

impl From<Price> for PriceDto {
    fn from(p: Price) -> Self {
        PriceDto {
            model: p.model,
            input_per_million: p.input_per_million,
            cached_input_per_million: p.cached_per_million,
            output_per_million: p.output_per_million,
            updated_at: p.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Purged {
    /// How many attempts were deleted.
    pub attempts: usize,
}

/// What a price delete answers: the model whose price is gone.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "DeletedPrice")]
pub struct ModelArgsEcho {
    pub model: String,
}
