//! `localApi:*`: the local OpenAI- and Anthropic-compatible endpoint.

use garde::Validate;
use keypool_gateway::{ListedModel, StartError};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{Budget, BudgetPeriod, LocalApiStatus, NamedToken, TokenRules};
use crate::AppContext;

/// Turns the local API on or off; `port` (within `LIMITS.port`) changes where it listens.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ConfigureLocalApiArgs {
    #[garde(skip)]
    pub enabled: bool,
    #[serde(default)]
    #[garde(inner(range(min = LIMITS.port.min, max = LIMITS.port.max)))]
    pub port: Option<u16>,
}

impl CommandArgs for ConfigureLocalApiArgs {}

/// The local API: whether it is on and up, where, and what it served since it started. A view
/// of its own: the service's status holds the gateway's counters and start error, flattened and
/// worded here.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiStatus")]
pub struct LocalApiStatusDto {
    pub enabled: bool,
    pub running: bool,
    /// `http://127.0.0.1:PORT` while running; the base URL for OpenAI SDKs is this plus `/v1`.
    pub address: Option<String>,
    pub port: u16,
    /// Requests received, answering now, and answered with an error, since it started.
    pub requests: u64,
    pub in_flight: u64,
    pub failed: u64,
    /// Why it is enabled but not running.
    pub error: Option<LocalApiProblem>,
    /// The models it can answer for now, by the API a client speaks: those of the providers
    /// whose keys can answer (or that need none), as `GET /v1/models` lists them.
    pub served: Vec<ListedModel>,
}

/// Why the local API could not start.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum LocalApiProblem {
    /// Another program listens on the port: choose another.
    PortInUse { port: u16 },
    /// The system refused to listen (`reason` in its words).
    Bind { port: u16, reason: String },
}

impl From<LocalApiStatus> for LocalApiStatusDto {
    fn from(status: LocalApiStatus) -> Self {
        LocalApiStatusDto {
            enabled: status.enabled,
            running: status.running,
            address: status.address,
            port: status.port,
            requests: status.stats.requests,
            in_flight: status.stats.in_flight,
            failed: status.stats.failed,
            error: status.error.map(|error| match error {
                StartError::PortInUse(port) => LocalApiProblem::PortInUse { port },
                StartError::Bind { port, reason } => LocalApiProblem::Bind { port, reason },
                // Only a server listens on an address of its own; the app's endpoint is loopback.
                StartError::Listen { address, reason } => LocalApiProblem::Bind { port: address.port(), reason },
            }),
            served: status.served,
        }
    }
}

/// The status after `localApi:configure`; `token` only the first time the endpoint is enabled
/// (it is never shown again: `localApi:regenerateToken` makes a new one). Composed here from the
/// status and the token the service answers beside it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiConfigured")]
pub struct LocalApiConfiguredDto {
    #[serde(flatten)]
    pub status: LocalApiStatusDto,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token: Option<String>,
}

/// A new local API token, shown this once (the service answers the bare string).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiToken")]
pub struct LocalApiTokenDto {
    pub token: String,
}

pub(super) fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<LocalApiStatusDto, IpcError> {
    Ok(ctx.local_api()?.status()?.into())
}

pub(super) async fn configure(
    ctx: &AppContext,
    args: ConfigureLocalApiArgs,
) -> Result<LocalApiConfiguredDto, IpcError> {
    let (status, token) = ctx.local_api()?.configure(args.enabled, args.port).await?;
    Ok(LocalApiConfiguredDto { status: status.into(), token })
}

pub(super) async fn regenerate_token(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<LocalApiTokenDto, IpcError> {
    Ok(LocalApiTokenDto { token: ctx.local_api()?.regenerate_token().await? })
}

/// A named token's name: 1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case (the service checks
/// the characters and the name's use).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TokenNameArgs {
    #[garde(length(chars, max = LIMITS.token_name.max_chars), custom(not_blank))]
    pub name: String,
}

impl CommandArgs for TokenNameArgs {}

/// A named token just made, with its value: shown this once.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewNamedToken {
    #[serde(flatten)]
    pub named: NamedToken,
    pub token: String,
}

/// What a named token may do (each left out: no limit). A budget is dollars or tokens per
/// `budgetPeriod` (a month unless told); `models` are globs (`*`, `?`); `expiresAt` is ms since
/// the epoch, ahead of now.
#[derive(Debug, Default, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields, rename = "TokenRulesInput")]
pub struct TokenRulesArg {
    #[serde(default)]
    #[garde(dive)]
    pub budget: Option<BudgetArg>,
    #[serde(default)]
    #[garde(skip)]
    pub budget_period: Option<BudgetPeriod>,
    #[serde(default)]
    #[garde(inner(range(min = LIMITS.token_requests_per_minute.min, max = LIMITS.token_requests_per_minute.max)))]
    pub requests_per_minute: Option<u32>,
    #[serde(default)]
    #[garde(inner(range(min = LIMITS.token_tokens_per_minute.min, max = LIMITS.token_tokens_per_minute.max)))]
    pub tokens_per_minute: Option<u64>,
    #[serde(default)]
    #[garde(inner(range(min = LIMITS.token_in_flight.min, max = LIMITS.token_in_flight.max)))]
    pub max_in_flight: Option<u32>,
    #[serde(default)]
    #[garde(inner(length(max = LIMITS.token_models.max_items), inner(length(bytes, min = 1, max = LIMITS.model_name.max_bytes), custom(super::routes::glob_rule))))]
    pub models: Option<Vec<String>>,
    #[serde(default)]
    #[garde(skip)]
    pub expires_at: Option<i64>,
}

/// A budget: US dollars (at the price table's prices) or tokens.
#[derive(Debug, Clone, Copy, Deserialize, Validate, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "BudgetInput")]
pub enum BudgetArg {
    Usd(#[garde(range(min = LIMITS.token_budget_usd.min, max = LIMITS.token_budget_usd.max))] f64),
    Tokens(#[garde(range(min = LIMITS.token_budget_tokens.min, max = LIMITS.token_budget_tokens.max))] u64),
}

impl From<TokenRulesArg> for TokenRules {
    fn from(rules: TokenRulesArg) -> Self {
        TokenRules {
            budget: rules.budget.map(|budget| match budget {
                BudgetArg::Usd(usd) => Budget::Usd(usd),
                BudgetArg::Tokens(tokens) => Budget::Tokens(tokens),
            }),
            budget_period: rules.budget_period,
            requests_per_minute: rules.requests_per_minute,
            tokens_per_minute: rules.tokens_per_minute,
            max_in_flight: rules.max_in_flight,
            models: rules.models.unwrap_or_default().iter().map(|m| m.trim().to_owned()).collect(),
            expires_at: rules.expires_at,
        }
    }
}

/// Makes a named token: its name (see [`TokenNameArgs`]) and what it may do.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct CreateTokenArgs {
    #[garde(length(chars, max = LIMITS.token_name.max_chars), custom(not_blank))]
    pub name: String,
    #[serde(default)]
    #[garde(dive)]
    pub rules: Option<TokenRulesArg>,
}

impl CommandArgs for CreateTokenArgs {}

/// Sets what the named token `name` may do (its value stays).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateTokenArgs {
    #[garde(length(chars, max = LIMITS.token_name.max_chars), custom(not_blank))]
    pub name: String,
    #[garde(dive)]
    pub rules: TokenRulesArg,
}

impl CommandArgs for UpdateTokenArgs {}

pub(super) fn list_tokens(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<NamedToken>, IpcError> {
    // When each was last used counts what was answered a moment ago: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.local_api()?.tokens().list()?)
}

pub(super) fn create_token(ctx: &AppContext, args: CreateTokenArgs) -> Result<NewNamedToken, IpcError> {
    let rules = args.rules.map(TokenRules::from).unwrap_or_default();
    let (named, token) = ctx.local_api()?.tokens().create(&args.name, rules)?;
    Ok(NewNamedToken { named, token })
}

pub(super) fn update_token(ctx: &AppContext, args: UpdateTokenArgs) -> Result<Vec<NamedToken>, IpcError> {
    let tokens = ctx.local_api()?.tokens();
    tokens.update(&args.name, args.rules.into())?;
    Ok(tokens.list()?)
}

pub(super) fn revoke_token(ctx: &AppContext, args: TokenNameArgs) -> Result<Vec<NamedToken>, IpcError> {
    let tokens = ctx.local_api()?.tokens();
    tokens.revoke(&args.name)?;
    Ok(tokens.list()?)
}
