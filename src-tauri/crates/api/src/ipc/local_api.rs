//! `localApi:*`: the local OpenAI- and Anthropic-compatible endpoint.

use garde::Validate;
use keypool_gateway::{Dialect, ListedModel, StartError};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{LocalApiStatus, NamedToken};
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

/// The local API: whether it is on and up, where, and what it served since it started.
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
    pub served: Vec<ServedModelDto>,
}

/// A model the local API can answer for now.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ServedModel")]
pub struct ServedModelDto {
    pub model: String,
    /// The name of the provider a request naming the model alone goes to.
    pub provider: String,
    /// The other providers that can answer and list it too, by name: `name/model` reaches one.
    pub others: Vec<String>,
    pub api: ClientApi,
}

/// The API a local API client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ClientApi {
    Openai,
    Anthropic,
    Gemini,
}

impl From<ListedModel> for ServedModelDto {
    fn from(listed: ListedModel) -> Self {
        let api = match listed.dialect {
            Dialect::OpenAi => ClientApi::Openai,
            Dialect::Anthropic => ClientApi::Anthropic,
            Dialect::Gemini => ClientApi::Gemini,
        };
        ServedModelDto { model: listed.id, provider: listed.provider, others: listed.others, api }
    }
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
            served: status.served.into_iter().map(ServedModelDto::from).collect(),
        }
    }
}

/// The status after `localApi:configure`; `token` only the first time the endpoint is enabled
/// (it is never shown again: `localApi:regenerateToken` makes a new one).
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

/// A new local API token, shown this once.
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

/// A named token of the local API, as shown: never its value.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "NamedToken")]
pub struct NamedTokenDto {
    pub name: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When a request it sent was last recorded; null: never (or its history was purged).
    pub last_used_at: Option<i64>,
    /// False when a server sharing this store disabled it or let it expire.
    pub usable: bool,
}

impl From<NamedToken> for NamedTokenDto {
    fn from(token: NamedToken) -> Self {
        NamedTokenDto {
            name: token.name,
            created_at: token.created_at,
            last_used_at: token.last_used_at,
            usable: token.usable,
        }
    }
}

/// A named token just made, with its value: shown this once.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "NewNamedToken")]
pub struct NewNamedTokenDto {
    #[serde(flatten)]
    pub named: NamedTokenDto,
    pub token: String,
}

pub(super) fn list_tokens(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<NamedTokenDto>, IpcError> {
    // When each was last used counts what was answered a moment ago: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.local_api()?.tokens().list()?.into_iter().map(NamedTokenDto::from).collect())
}

pub(super) fn create_token(ctx: &AppContext, args: TokenNameArgs) -> Result<NewNamedTokenDto, IpcError> {
    let (named, token) = ctx.local_api()?.tokens().create(&args.name)?;
    Ok(NewNamedTokenDto { named: named.into(), token })
}

pub(super) fn revoke_token(ctx: &AppContext, args: TokenNameArgs) -> Result<Vec<NamedTokenDto>, IpcError> {
    let tokens = ctx.local_api()?.tokens();
    tokens.revoke(&args.name)?;
    Ok(tokens.list()?.into_iter().map(NamedTokenDto::from).collect())
}
