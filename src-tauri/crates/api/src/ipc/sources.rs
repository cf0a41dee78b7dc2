//! `usage:getBySource`: the ledger by who asked (each coding agent, the chat, other clients) with
//! each one's share of cached input tokens, and the agents whose share dropped sharply.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::CommandArgs;
use super::error::IpcError;
use super::issues::{IssueCode, IssueParams};
use crate::service::{By, SourcesReport, UsageLine};
use crate::AppContext;

/// A range of time, in milliseconds since the epoch.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SourceRangeArgs {
    #[garde(range(min = 0))]
    pub from: i64,
    #[garde(range(min = 0))]
    pub to: i64,
}

impl CommandArgs for SourceRangeArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.from >= self.to {
            return Err(IpcError::issue("from", IssueCode::RangeOrder, IssueParams::default()));
        }
        Ok(())
    }
}

pub(super) fn by_source(ctx: &AppContext, args: SourceRangeArgs) -> Result<SourcesReport, IpcError> {
    Ok(ctx.agents()?.usage_by_source(args.from, args.to)?)
}

/// What the requests of one named token of the local API spent, or (`name` null) those sent
/// without one: the chat's and the local API's own token's. A view of its own: the report's line
/// also names an id and a provider, which a member has none of.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TokenUsage")]
pub struct TokenUsageDto {
    pub name: Option<String>,
    pub requests: u64,
    pub failed: u64,
    /// Every prompt token, cached ones included.
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// US dollars at the price table's prices; null when no model it used has a price.
    pub cost_usd: Option<f64>,
    /// Every model it used has a price: `costUsd` is its whole cost.
    pub cost_complete: bool,
}

impl From<UsageLine> for TokenUsageDto {
    fn from(line: UsageLine) -> Self {
        TokenUsageDto {
            name: line.name,
            requests: line.attempts,
            failed: line.failed,
            input_tokens: line.input_tokens,
            cached_tokens: line.cached_tokens,
            output_tokens: line.output_tokens,
            cost_usd: line.cost_usd,
            cost_complete: line.cost_complete,
        }
    }
}

/// `usage:getByToken`: the ledger of a range by named token, the largest spend first.
pub(super) fn by_token(ctx: &AppContext, args: SourceRangeArgs) -> Result<Vec<TokenUsageDto>, IpcError> {
    // What was answered a moment ago is counted: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.usage_report()?.lines(By::Member, args.from, args.to)?.into_iter().map(TokenUsageDto::from).collect())
}
