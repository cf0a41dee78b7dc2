//! `localApi:getAgents`, `connectAgent`, `disconnectAgent`: the Coding agents panel of Settings →
//! Local API (Claude Code, Codex CLI, Gemini CLI pointed at the local API through their own
//! configuration files, and put back).

use garde::Validate;
use serde::Deserialize;
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{Agent, AgentsOverview, ConnectOptions, Connected};
use crate::AppContext;

/// Points an agent at the local API with a token of its own. `model`: the model it asks for
/// (none: its own choice); `newToken`: a new value for its token even when its files hold it;
/// `keyHelper`: Claude Code reads the token from Keypool's helper command, not its settings file;
/// `trustAllFolders`: Gemini CLI's folder trust is turned off, so it reads `~/.gemini/.env` in
/// every folder.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ConnectAgentArgs {
    #[garde(skip)]
    pub agent: Agent,
    #[serde(default)]
    #[garde(inner(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank), custom(no_spaces)))]
    pub model: Option<String>,
    #[serde(default)]
    #[garde(skip)]
    pub new_token: Option<bool>,
    #[serde(default)]
    #[garde(skip)]
    pub key_helper: Option<bool>,
    /// The model's context window in tokens; left out: the known one, if any.
    #[serde(default)]
    #[garde(inner(range(min = 1_000, max = 100_000_000)))]
    pub context_window: Option<u32>,
    #[serde(default)]
    #[garde(skip)]
    pub trust_all_folders: Option<bool>,
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
    pub agent: Agent,
    #[serde(default)]
    #[garde(skip)]
    pub force: Option<bool>,
}

impl CommandArgs for DisconnectAgentArgs {}

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<AgentsOverview, IpcError> {
    // When each last called counts what was answered a moment ago: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.agents()?.overview(ctx.local_api()?)?)
}

pub(super) fn connect(ctx: &AppContext, args: ConnectAgentArgs) -> Result<Connected, IpcError> {
    let options = ConnectOptions {
        model: args.model.map(|m| m.trim().to_owned()),
        new_token: args.new_token.unwrap_or(false),
        key_helper: args.key_helper.unwrap_or(false),
        context_window: args.context_window,
        trust_all_folders: args.trust_all_folders.unwrap_or(false),
    };
    Ok(ctx.agents()?.connect(args.agent, options, ctx.local_api()?)?)
}

pub(super) fn disconnect(ctx: &AppContext, args: DisconnectAgentArgs) -> Result<AgentsOverview, IpcError> {
    let force = args.force.unwrap_or(false);
    Ok(ctx.agents()?.disconnect(args.agent, force, ctx.local_api()?)?)
}
