//! `usage:*`: what each key spends, from the usage ledger.

use std::path::PathBuf;

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::issues::{IssueCode, IssueParams};
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{Bucket, KeySpend, NewPrice, Price, SentWith, Series, Spend, Summary};
use crate::AppContext;

type Result<T, E = IpcError> = std::result::Result<T, E>;

/// The usage of one provider (or all) over a range of time, in milliseconds since the epoch;
/// `to` defaults to now, `from` to 30 days before `to`. What `usage:getSummary` sums and
/// `usage:exportCsv` writes.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UsageRangeArgs {
    #[serde(default)]
    #[garde(inner(custom(not_blank)))]
    pub provider_id: Option<String>,
    #[serde(default)]
    #[garde(inner(range(min = 0)))]
    pub from: Option<i64>,
    #[serde(default)]
    #[garde(inner(range(min = 0)))]
    pub to: Option<i64>,
}

impl CommandArgs for UsageRangeArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        check_range(self.from, self.to)
    }
}

/// The size of a series' buckets.
#[derive(Debug, Clone, Copy, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum BucketArg {
    Hour,
    Day,
}

impl From<BucketArg> for Bucket {
    fn from(bucket: BucketArg) -> Self {
        match bucket {
            BucketArg::Hour => Bucket::Hour,
            BucketArg::Day => Bucket::Day,
        }
    }
}

/// Buckets start at `from` (rounded down to the hour) and are an hour or 24 hours long: a `from`
/// at the user's midnight makes day buckets the user's days until a daylight-saving change. The
/// Usage page reads hours and sums them into the user's days.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UsageSeriesArgs {
    #[serde(default)]
    #[garde(inner(custom(not_blank)))]
    pub provider_id: Option<String>,
    /// `""` for the provider-level key.
    #[serde(default)]
    #[garde(skip)]
    pub key_id: Option<String>,
    #[garde(skip)]
    pub bucket: BucketArg,
    #[garde(range(min = 0))]
    pub from: i64,
    #[garde(range(min = 0))]
    pub to: i64,
}

impl CommandArgs for UsageSeriesArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        check_range(Some(self.from), Some(self.to))?;
        let buckets = (self.to - self.from) / Bucket::from(self.bucket).millis();
        let max = LIMITS.series_buckets.max_items as i64;
        if buckets > max {
            return Err(IpcError::issue(
                "to",
                IssueCode::TooManyBuckets,
                IssueParams { max: Some(max), ..Default::default() },
            ));
        }
        Ok(())
    }
}

/// A model's price in US dollars per million tokens; cached input defaults to the input price.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SetPriceArgs {
    #[garde(length(bytes, min = 1, max = LIMITS.model_name.max_bytes), custom(not_blank))]
    pub model: String,
    #[garde(range(min = LIMITS.price.min, max = LIMITS.price.max))]
    pub input_per_million: f64,
    #[serde(default)]
    #[garde(inner(range(min = LIMITS.price.min, max = LIMITS.price.max)))]
    pub cached_input_per_million: Option<f64>,
    #[garde(range(min = LIMITS.price.min, max = LIMITS.price.max))]
    pub output_per_million: f64,
}

impl CommandArgs for SetPriceArgs {}

impl From<SetPriceArgs> for NewPrice {
    fn from(a: SetPriceArgs) -> Self {
        NewPrice {
            model: a.model.trim().to_owned(),
            input_per_million: a.input_per_million,
            cached_per_million: a.cached_input_per_million,
            output_per_million: a.output_per_million,
        }
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelArgs {
    #[garde(custom(not_blank))]
    pub model: String,
}

impl CommandArgs for ModelArgs {}

/// Deletes the usage history before `before` (rounded down to the hour); all of it without.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct PurgeUsageArgs {
    #[serde(default)]
    #[garde(inner(range(min = 0)))]
    pub before: Option<i64>,
}

impl CommandArgs for PurgeUsageArgs {}

fn check_range(from: Option<i64>, to: Option<i64>) -> Result<(), IpcError> {
    match (from, to) {
        (Some(from), Some(to)) if from >= to => {
            Err(IpcError::issue("from", IssueCode::RangeOrder, IssueParams::default()))
        }
        _ => Ok(()),
    }
}

/// Sums of attempts. `requests`: attempts sent; `failures`: all but the answered and the
/// stopped; `inputTokens` counts cached ones too. `cost` (US dollars) covers the models with a
/// price, null when none has one; `costComplete` says whether every model that spent tokens has a price.
/// A view of its own: a [`Spend`] flattened, without the failovers a summary does not show.
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

/// One key's usage. `keyId` names the row (`""` for the provider-level key; another reserved id
/// for no key), `sentWith` says which of the three it is; `label` is null but for a pool key
/// that still exists. A view of its own, with its totals as [`TotalsDto`] and `sentWith`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyUsage")]
pub struct KeyUsageDto {
    #[serde(flatten)]
    pub totals: TotalsDto,
    pub provider_id: String,
    pub key_id: String,
    pub sent_with: SentWith,
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
            sent_with: SentWith::of(&k.key_id),
            label: k.label.clone(),
            p50_latency_ms: k.p50_latency_ms,
            p95_latency_ms: k.p95_latency_ms,
        }
    }
}

/// A summary of a range, with its totals and keys as [`TotalsDto`] and [`KeyUsageDto`].
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
    /// The earliest attempt in the range; null when it holds none.
    pub first_at: Option<i64>,
}

impl From<Summary> for UsageSummaryDto {
    fn from(s: Summary) -> Self {
        UsageSummaryDto {
            from: s.from,
            to: s.to,
            totals: (&s.total).into(),
            keys: s.keys.iter().map(Into::into).collect(),
            unpriced_models: s.unpriced_models,
            first_at: s.first_at,
        }
    }
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

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Purged {
    /// How many attempts were deleted.
    pub attempts: usize,
}

/// What a price delete answers: the model whose price is gone.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DeletedPrice {
    pub model: String,
}

pub(super) fn summary(ctx: &AppContext, a: UsageRangeArgs) -> Result<UsageSummaryDto> {
    Ok(ctx.usage()?.summary(a.provider_id.as_deref(), a.from, a.to)?.into())
}

pub(super) fn series(ctx: &AppContext, a: UsageSeriesArgs) -> Result<Series> {
    Ok(ctx.usage()?.series(a.provider_id.as_deref(), a.key_id.as_deref(), a.bucket.into(), a.from, a.to)?)
}

pub(super) async fn export_csv(ctx: &AppContext, a: UsageRangeArgs) -> Result<ExportResult> {
    Ok(ctx.usage()?.export_csv(a.provider_id.as_deref(), a.from, a.to).await?.into())
}

pub(super) fn prices(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<Price>> {
    Ok(ctx.usage()?.prices()?)
}

pub(super) fn set_price(ctx: &AppContext, a: SetPriceArgs) -> Result<Price> {
    Ok(ctx.usage()?.set_price(a.into())?)
}

pub(super) fn delete_price(ctx: &AppContext, ModelArgs { model }: ModelArgs) -> Result<DeletedPrice> {
    ctx.usage()?.delete_price(&model)?;
    Ok(DeletedPrice { model })
}

pub(super) fn purge(ctx: &AppContext, a: PurgeUsageArgs) -> Result<Purged> {
    Ok(Purged { attempts: ctx.usage()?.purge(a.before)? })
}
