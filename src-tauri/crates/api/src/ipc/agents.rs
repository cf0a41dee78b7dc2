//! `localApi:getAgents`, `connectAgent`, `disconnectAgent`: the Coding agents panel of Settings →
//! Local API (Claude Code, Codex CLI, Gemini CLI pointed at the local API through their own
//! configuration files, and put back).

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{
    Agent, AgentFile, AgentStatus, AgentsOverview, ConnectOptions, Connected, Resolution, TokenState, Via,
};
use crate::AppContext;

/// A coding agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Agent")]
pub enum AgentArg {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl From<AgentArg> for Agent {
    fn from(agent: AgentArg) -> Self {
        match agent {
            AgentArg::ClaudeCode => Agent::ClaudeCode,
            AgentArg::Codex => Agent::Codex,
            AgentArg::GeminiCli => Agent::GeminiCli,
        }
    }
}

impl From<Agent> for AgentArg {
    fn from(agent: Agent) -> Self {
        match agent {
            Agent::ClaudeCode => AgentArg::ClaudeCode,
            Agent::Codex => AgentArg::Codex,
            Agent::GeminiCli => AgentArg::GeminiCli,
        }
    }
}

/// Points an agent at the local API with a token of its own. `model`: the model it asks for
/// (none: its own choice); `newToken`: a new value for its token even when its files hold it;
/// `keyHelper`: Claude Code reads the token from Keypool's helper command, not its settings file.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ConnectAgentArgs {
    #[garde(skip)]
    pub agent: AgentArg,
    #[serde(default)]
    #[garde(inner(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank), custom(no_spaces)))]
    pub model: Option<String>,
    #[serde(default)]
    #[garde(skip)]
    pub new_token: Option<bool>,
    #[serde(default)]
    #[garde(skip)]
    pub key_helper: Option<bool>,
}

impl CommandArgs for ConnectAgentArgs {}

fn no_spaces(value: &str, _: &()) -> garde::Result {
    if value.trim().chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(garde::Error::new(super::issues::coded(super::issues::IssueCode::KeyHasSpaces)));
    }
    Ok(())
}

/// Puts an agent's files back as they were; `force` also when they changed since Connect.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct DisconnectAgentArgs {
    #[garde(skip)]
    pub agent: AgentArg,
    #[serde(default)]
    #[garde(skip)]
    pub force: Option<bool>,
}

impl CommandArgs for DisconnectAgentArgs {}

/// The coding agents, and the address Connect gives them.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Agents")]
pub struct AgentsDto {
    pub agents: Vec<AgentDto>,
    /// What agents are pointed at: `http://127.0.0.1:PORT`.
    pub address: String,
}

/// What Connect did: the agents now, and the files it made readable by their owner only.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentConnected")]
pub struct ConnectedDto {
    pub agents: AgentsDto,
    /// Files others could read that now hold the token (0600), each with the mode it had
    /// (Disconnect puts it back).
    pub tightened: Vec<TightenedFile>,
}

/// A file whose mode Connect tightened.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TightenedFile {
    pub path: String,
    /// Its permission bits before (`0o644` is 420).
    pub mode: u32,
}

impl From<Connected> for ConnectedDto {
    fn from(connected: Connected) -> Self {
        ConnectedDto {
            agents: connected.agents.into(),
            tightened: connected
                .tightened
                .into_iter()
                .map(|(path, mode)| TightenedFile { path: path.display().to_string(), mode })
                .collect(),
        }
    }
}

/// One coding agent as the panel shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentState")]
pub struct AgentDto {
    pub agent: AgentArg,
    /// The files Connect writes (and Disconnect puts back).
    pub files: Vec<String>,
    /// Set while Keypool's Connect is in force.
    pub connection: Option<AgentConnectionDto>,
    /// Its files point it at this local API now (whoever wrote them).
    pub points_here: bool,
    pub token: AgentToken,
    /// The model its files set (none: its own default, `defaultModel`).
    pub model: Option<String>,
    pub default_model: String,
    /// Where the model it asks for goes now.
    pub resolution: ResolutionDto,
    /// When the local API last heard from it (milliseconds since the epoch).
    pub last_call: Option<i64>,
    /// A file of its that Connect could not merge now.
    pub problem: Option<AgentFile>,
}

/// Keypool's connection of an agent.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentConnection")]
pub struct AgentConnectionDto {
    pub connected_at: i64,
    pub model: Option<String>,
    /// Its own token's name (a named token of the local API); none for a connection made before
    /// agents had their own.
    pub token: Option<String>,
    /// It reads the token from Keypool's helper command (Claude Code's `apiKeyHelper`).
    pub key_helper: bool,
    /// Files changed since Connect wrote them: Disconnect would undo those changes.
    pub changed: Vec<String>,
}

/// The token an agent's files hold: none, its own, the local API's main one (shared, from a
/// connection made before agents had their own), or another (revoked, or some other key).
#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AgentToken {
    None,
    Own,
    Main,
    Other,
}

/// Where a model goes now.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "Resolution")]
pub enum ResolutionDto {
    /// To `provider`'s `model`; `usable`: it has a key that can answer.
    Routed { provider: String, model: String, via: ViaDto, usable: bool },
    /// Only a provider of another API lists it: a route sends it there.
    OtherApi { provider: String },
    /// No provider lists it and no route takes it.
    Unknown,
}

/// Why a model goes where it goes: a route (its glob), `provider/model`, or a provider's list.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "Via")]
pub enum ViaDto {
    Route { glob: String },
    Prefix,
    Listed,
}

impl From<Resolution> for ResolutionDto {
    fn from(resolution: Resolution) -> Self {
        match resolution {
            Resolution::Routed { provider, model, via, usable } => {
                let via = match via {
                    Via::Route { glob } => ViaDto::Route { glob },
                    Via::Prefix => ViaDto::Prefix,
                    Via::Listed => ViaDto::Listed,
                };
                ResolutionDto::Routed { provider, model, via, usable }
            }
            Resolution::OtherDialect { provider } => ResolutionDto::OtherApi { provider },
            Resolution::Unknown => ResolutionDto::Unknown,
        }
    }
}

impl From<AgentStatus> for AgentDto {
    fn from(status: AgentStatus) -> Self {
        let path = |p: &std::path::PathBuf| p.display().to_string();
        AgentDto {
            agent: status.agent.into(),
            files: status.files.iter().map(path).collect(),
            connection: status.connection.map(|c| AgentConnectionDto {
                connected_at: c.connected_at,
                model: c.model,
                token: c.token,
                key_helper: c.key_helper,
                changed: c.changed.iter().map(path).collect(),
            }),
            points_here: status.points_here,
            token: match status.token {
                TokenState::None => AgentToken::None,
                TokenState::Own => AgentToken::Own,
                TokenState::Main => AgentToken::Main,
                TokenState::Other => AgentToken::Other,
            },
            model: status.model,
            default_model: status.agent.default_model().to_owned(),
            resolution: status.resolution.into(),
            last_call: status.last_call,
            problem: status.problem.map(|(path, problem)| AgentFile::new(&path, &problem)),
        }
    }
}

impl From<AgentsOverview> for AgentsDto {
    fn from(overview: AgentsOverview) -> Self {
        AgentsDto { agents: overview.agents.into_iter().map(AgentDto::from).collect(), address: overview.address }
    }
}

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<AgentsDto, IpcError> {
    // When each last called counts what was answered a moment ago: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.agents()?.overview(ctx.local_api()?)?.into())
}

pub(super) fn connect(ctx: &AppContext, args: ConnectAgentArgs) -> Result<ConnectedDto, IpcError> {
    let options = ConnectOptions {
        model: args.model.map(|m| m.trim().to_owned()),
        new_token: args.new_token.unwrap_or(false),
        key_helper: args.key_helper.unwrap_or(false),
    };
    Ok(ctx.agents()?.connect(args.agent.into(), options, ctx.local_api()?)?.into())
}

pub(super) fn disconnect(ctx: &AppContext, args: DisconnectAgentArgs) -> Result<AgentsDto, IpcError> {
    let force = args.force.unwrap_or(false);
    Ok(ctx.agents()?.disconnect(args.agent.into(), force, ctx.local_api()?)?.into())
}
