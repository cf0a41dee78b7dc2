//! `usage:getBySource`: the ledger by who asked (each coding agent, the chat, other clients) with
//! each one's share of cached input tokens, and the agents whose share dropped sharply.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::agents::AgentArg;
use super::args::CommandArgs;
use super::error::IpcError;
use super::issues::{IssueCode, IssueParams};
use crate::service::{By, Source, SourceUse, SourcesReport, UsageLine};
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

/// Who asked: a coding agent, the app's chat, or another client (an SDK, a script).
#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "UsageSource")]
pub enum SourceDto {
    Agent { agent: AgentArg },
    Chat,
    Other,
}

/// What one source spent; `cachedShare` is `cachedTokens / inputTokens` (null without input).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "SourceUsage")]
pub struct SourceUsageDto {
    pub source: SourceDto,
    pub requests: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub cached_share: Option<f64>,
}

/// An agent whose share of cached input tokens in the last day is at most half of the week
/// before's (a session off its key, or a prompt that changes at its start).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "CacheDrop")]
pub struct CacheDropDto {
    pub agent: AgentArg,
    pub last_day: f64,
    pub week_before: f64,
}

/// Every source in order (the agents, the chat, the others), and the drops.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageBySource")]
pub struct UsageBySourceDto {
    pub sources: Vec<SourceUsageDto>,
    pub drops: Vec<CacheDropDto>,
}

fn usage(source: Source, used: SourceUse) -> SourceUsageDto {
    SourceUsageDto {
        source: match source {
            Source::Agent(agent) => SourceDto::Agent { agent: agent.into() },
            Source::Chat => SourceDto::Chat,
            Source::Other => SourceDto::Other,
        },
        requests: used.requests,
        input_tokens: used.input_tokens,
        cached_tokens: used.cached_tokens,
        output_tokens: used.output_tokens,
        cached_share: used.cached_share(),
    }
}

impl From<SourcesReport> for UsageBySourceDto {
    fn from(report: SourcesReport) -> Self {
        UsageBySourceDto {
            sources: report.sources.into_iter().map(|(source, used)| usage(source, used)).collect(),
            drops: report
                .drops
                .into_iter()
                .map(|d| CacheDropDto { agent: d.agent.into(), last_day: d.last_day, week_before: d.week_before })
                .collect(),
        }
    }
}

pub(super) fn by_source(ctx: &AppContext, args: SourceRangeArgs) -> Result<UsageBySourceDto, IpcError> {
    Ok(ctx.agents()?.usage_by_source(args.from, args.to)?.into())
}

/// What the requests of one named token of the local API spent, or (`name` null) those sent
/// without one: the chat's and the local API's own token's.
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
