//! The arguments of the `usage:*` commands.

use garde::Validate;
use serde::Deserialize;
use ts_rs::TS;

use super::rules::not_blank;
use super::CommandArgs;
use crate::ipc::error::IpcError;
use crate::ipc::{IssueCode, IssueParams};
use crate::service::Bucket;

/// The most buckets one series may hold.
const MAX_BUCKETS: i64 = 10_000;

/// A range of time, in milliseconds since the epoch; `to` defaults to now, `from` to 30 days
/// before `to`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UsageSummaryArgs {
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

impl CommandArgs for UsageSummaryArgs {
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
        if buckets > MAX_BUCKETS {
            return Err(IpcError::issue(
                "to",
                IssueCode::TooManyBuckets,
                IssueParams { max: Some(MAX_BUCKETS), ..Default::default() },
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ExportUsageArgs {
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

impl CommandArgs for ExportUsageArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        check_range(self.from, self.to)
    }
}

/// A model's price in US dollars per million tokens; cached input defaults to the input price.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SetPriceArgs {
    #[garde(length(chars, min = 1, max = 200), custom(not_blank))]
    pub model: String,
    #[garde(range(min = 0.0, max = 100_000.0))]
    pub input_per_million: f64,
    #[serde(default)]
    #[garde(inner(range(min = 0.0, max = 100_000.0)))]
    pub cached_input_per_million: Option<f64>,
    #[garde(range(min = 0.0, max = 100_000.0))]
    pub output_per_million: f64,
}

impl CommandArgs for SetPriceArgs {}

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
