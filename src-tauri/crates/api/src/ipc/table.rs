//! The command table: every IPC command, declared once.
//!
//! A row names the command as the UI invokes it, how it runs, its arguments, its result (and,
//! for a streaming command, the events it streams), and its handler. Everything else comes from
//! the table: the names the shell serves and the permission files must grant ([`COMMANDS`]), how
//! each one runs ([`Run`]: argument parsing and validation, the handler, the JSON answer), and
//! the TypeScript the UI calls them with.
//!
//! Kinds: `sync` handlers touch only the database and run on a blocking thread; `async` ones do
//! network I/O; `stream` ones also send events through a channel the page passes as `onEvent`.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::agents::{ConnectAgentArgs, DisconnectAgentArgs};
use super::app::{Alerts, AppStatus, NotifyArgs, PreferencesDto, SetPreferencesArgs};
use super::args::{parse, IdArgs, NoArgs, ProviderArgs};
use super::bulk::{
    DeletedKeys, ExportApiKeysArgs, ExportedKeys, ImportIdArgs, KeyIdsArgs, KeyImportPreview, PreviewKeyImportArgs,
    StartKeyImportArgs, UpdateApiKeysArgs,
};
use super::chat::{
    AttachArgs, AttachmentData, AttachmentDataArgs, AttachmentDto, ChatClosed, ChatEvent, ChatIdArgs, CreateChatArgs,
    DeletedChat, MessageDto, SearchChatsArgs, SendArgs, StoppedDto, UpdateChatArgs,
};
use super::error::IpcError;
use super::keys::{
    AddApiKeyArgs, CooldownReset, DeletedKey, KeyList, KeyTestResult, PoolStatusDto, ReorderApiKeysArgs,
    SetKeyLimitsArgs, ToggleApiKeyArgs, UpdateApiKeyArgs,
};
use super::local_api::{
    ConfigureLocalApiArgs, CreateTokenArgs, LocalApiConfiguredDto, LocalApiStatusDto, LocalApiTokenDto, NewNamedToken,
    TokenNameArgs, UpdateTokenArgs,
};
use super::providers::{AddProviderArgs, DeletedProviderDto, ListModelsArgs, ListModelsForArgs, UpdateProviderArgs};
use super::routes::{SetRoutesArgs, TestRouteArgs};
use super::settings::{SettingsDto, UpdateSettingsArgs};
use super::sources::{SourceRangeArgs, TokenUsageDto};
use super::team::{ConnectTeamArgs, TeamSecretDto, TeamStatusDto};
use super::typescript::TypeSet;
use super::usage::{
    DeletedPrice, ExportResult, ModelArgs, PurgeUsageArgs, Purged, SetPriceArgs, UsageRangeArgs, UsageSeriesArgs,
    UsageSummaryDto,
};
use super::{agents, app, bulk, chat, keys, local_api, providers, routes, settings, sources, team, usage};
use crate::service::{
    AgentsOverview, ApiKey, Chat, Connected, ImportProgress, ModelList, NamedToken, Notifications, Price, Provider,
    RouteTest, RouteView, SearchResult, Series, SourcesReport, Written,
};
use crate::AppContext;

/// What a command answers: its result as JSON text, or the one error. Text, not a `Value`: the
/// result is written once, straight from its type (the shell passes the text on as it is); a
/// `Value` tree for 10 000 keys cost more than reading them.
pub type Answer = Result<Box<RawValue>, IpcError>;
/// An answer still being worked out.
pub type Pending<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;
/// Where a streaming command sends its events, as JSON.
pub type Emit<'a> = &'a mut (dyn FnMut(Value) + Send);

/// How a command runs, with what runs it: the one way from a name and a JSON payload to an
/// answer. Each kind carries its own runner, so a caller that matches on it serves every command
/// it finds; there is no name it could look up and then fail to run.
#[derive(Clone, Copy)]
pub enum Run {
    /// Touches only the database (synchronous SQLite): run it on a blocking thread.
    Blocking(fn(&AppContext, Value) -> Answer),
    /// Does network I/O: await it on the runtime.
    Async(for<'a> fn(&'a AppContext, Value) -> Pending<'a>),
    /// Does network I/O and sends events (through the channel the page passes as `onEvent`,
    /// which the caller takes out of the payload first).
    Stream(for<'a> fn(&'a AppContext, Value, Emit<'a>) -> Pending<'a>),
}

/// How a command runs, without what runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sync,
    Async,
    Stream,
}

/// One row of the table, as the shell needs it.
#[derive(Clone, Copy)]
pub struct Command {
    pub name: &'static str,
    pub run: Run,
}

impl Command {
    pub fn kind(&self) -> Kind {
        match self.run {
            Run::Blocking(_) => Kind::Sync,
            Run::Async(_) => Kind::Async,
            Run::Stream(_) => Kind::Stream,
        }
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command").field("name", &self.name).field("kind", &self.kind()).finish()
    }
}

macro_rules! commands {
    ($( $kind:ident $name:literal ($args:ty) -> $result:ty $(, $event:ty)? => $handler:path; )*) => {
        /// Every command, in the table's order.
        pub const COMMANDS: &[Command] = &[$( Command { name: $name, run: commands!(@run $kind $name $handler $(, $event)?) } ),*];

        /// Declares every argument, result and event type of the table.
        pub(super) fn declare_types(types: &mut TypeSet) {
            $(
                types.add::<$args>();
                types.add::<$result>();
                $( types.add::<$event>(); )?
            )*
        }

        /// The `Commands` map of the TypeScript bindings: each name to its arguments, result and events.
        pub(super) fn typescript(types: &TypeSet) -> String {
            let mut rows = String::new();
            $(
                rows.push_str(&format!(
                    "  {:?}: {{ kind: {:?}; args: {}; result: {}{} }};\n",
                    $name,
                    stringify!($kind),
                    types.name::<$args>(),
                    types.name::<$result>(),
                    commands!(@event_ts types $($event)?),
                ));
            )*
            format!("export type Commands = {{\n{rows}}};\n")
        }
    };

    // Each runner parses and validates the payload as the handler's arguments, runs the handler
    // and answers its result as JSON (the error logged by the command's name).
    (@run sync $name:literal $handler:path) => {
        Run::Blocking(|ctx, payload| answer($name, parse(payload).and_then(|args| $handler(ctx, args))))
    };
    (@run async $name:literal $handler:path) => {
        Run::Async(|ctx, payload| {
            Box::pin(async move {
                let result = match parse(payload) {
                    Ok(args) => $handler(ctx, args).await,
                    Err(error) => Err(error),
                };
                answer($name, result)
            })
        })
    };
    (@run stream $name:literal $handler:path, $event:ty) => {
        Run::Stream(|ctx, payload, emit| {
            Box::pin(async move {
                let mut typed = |event: $event| emit(serde_json::to_value(event).unwrap_or(Value::Null));
                let result = match parse(payload) {
                    Ok(args) => $handler(ctx, args, &mut typed).await,
                    Err(error) => Err(error),
                };
                answer($name, result)
            })
        })
    };

    (@event_ts $types:ident $event:ty) => { format!("; event: {}", $types.name::<$event>()) };
    (@event_ts $types:ident) => { String::new() };
}

commands! {
    sync   "app:getStatus"             (NoArgs)             -> AppStatus               => app::status;
    sync   "app:getPreferences"        (NoArgs)             -> PreferencesDto          => app::preferences;
    sync   "app:setPreferences"        (SetPreferencesArgs) -> PreferencesDto          => app::set_preferences;
    sync   "app:notify"                (NotifyArgs)         -> ()                      => app::notify;
    sync   "app:getAlerts"             (NoArgs)             -> Alerts                  => app::alerts;
    sync   "app:testNotification"      (NotifyArgs)         -> Notifications           => app::test_notification;
    sync   "llmConfig:getProviders"    (NoArgs)             -> Vec<Provider>           => providers::list;
    sync   "llmConfig:addProvider"     (AddProviderArgs)    -> Provider                => providers::add;
    sync   "llmConfig:updateProvider"  (UpdateProviderArgs) -> Provider                => providers::update;
    sync   "llmConfig:deleteProvider"  (IdArgs)             -> DeletedProviderDto      => providers::delete;
    sync   "llmConfig:getApiKeys"      (ProviderArgs)       -> Vec<ApiKey>             => keys::list;
    sync   "llmConfig:addApiKey"       (AddApiKeyArgs)      -> Written<ApiKey>         => keys::add;
    sync   "llmConfig:updateApiKey"    (UpdateApiKeyArgs)   -> Written<ApiKey>         => keys::update;
    sync   "llmConfig:setKeyLimits"    (SetKeyLimitsArgs)   -> Written<ApiKey>         => keys::set_limits;
    sync   "llmConfig:deleteApiKey"    (IdArgs)             -> Written<DeletedKey>     => keys::delete;
    sync   "llmConfig:toggleApiKey"    (ToggleApiKeyArgs)   -> Written<ApiKey>         => keys::toggle;
    sync   "llmConfig:reorderApiKeys"  (ReorderApiKeysArgs) -> Written<KeyList>        => keys::reorder;
    sync   "llmConfig:getPoolStatus"   (ProviderArgs)       -> PoolStatusDto           => keys::pool_status;
    sync   "llmConfig:resetCooldown"   (IdArgs)             -> Written<CooldownReset>  => keys::reset_cooldown;
    async  "llmConfig:testApiKey"      (IdArgs)             -> KeyTestResult           => keys::test;
    sync   "llmConfig:previewKeyImport" (PreviewKeyImportArgs) -> KeyImportPreview    => bulk::preview_import;
    async  "llmConfig:startKeyImport"  (StartKeyImportArgs) -> ImportProgress          => bulk::start_import;
    async  "llmConfig:cancelKeyImport" (ImportIdArgs)       -> ImportProgress          => bulk::cancel_import;
    sync   "llmConfig:updateApiKeys"   (UpdateApiKeysArgs)  -> Written<KeyList>        => bulk::update;
    sync   "llmConfig:deleteApiKeys"   (KeyIdsArgs)         -> Written<DeletedKeys>    => bulk::delete;
    async  "llmConfig:testApiKeys"     (KeyIdsArgs)         -> Vec<KeyTestResult>      => bulk::test;
    async  "llmConfig:exportApiKeys"   (ExportApiKeysArgs)  -> ExportedKeys            => bulk::export;
    async  "llmConfig:listModels"      (ListModelsArgs)     -> ModelList               => providers::models;
    async  "llmConfig:listModelsFor"   (ListModelsForArgs)  -> ModelList               => providers::models_for;
    sync   "localApi:getStatus"        (NoArgs)             -> LocalApiStatusDto       => local_api::status;
    async  "localApi:configure"        (ConfigureLocalApiArgs) -> LocalApiConfiguredDto => local_api::configure;
    async  "localApi:regenerateToken"  (NoArgs)             -> LocalApiTokenDto        => local_api::regenerate_token;
    sync   "localApi:listTokens"       (NoArgs)             -> Vec<NamedToken>         => local_api::list_tokens;
    sync   "localApi:createToken"      (CreateTokenArgs)    -> NewNamedToken           => local_api::create_token;
    sync   "localApi:updateToken"      (UpdateTokenArgs)    -> Vec<NamedToken>         => local_api::update_token;
    sync   "localApi:revokeToken"      (TokenNameArgs)      -> Vec<NamedToken>         => local_api::revoke_token;
    sync   "localApi:getRoutes"        (NoArgs)             -> Vec<RouteView>          => routes::list;
    sync   "localApi:setRoutes"        (SetRoutesArgs)      -> Vec<RouteView>          => routes::set;
    async  "localApi:testRoute"        (TestRouteArgs)      -> RouteTest               => routes::test;
    sync   "localApi:getAgents"        (NoArgs)             -> AgentsOverview          => agents::list;
    sync   "localApi:connectAgent"     (ConnectAgentArgs)   -> Connected               => agents::connect;
    sync   "localApi:disconnectAgent"  (DisconnectAgentArgs) -> AgentsOverview         => agents::disconnect;
    sync   "team:getStatus"            (NoArgs)             -> TeamStatusDto           => team::status;
    async  "team:connect"              (ConnectTeamArgs)    -> TeamStatusDto           => team::connect;
    async  "team:disconnect"           (NoArgs)             -> TeamStatusDto           => team::disconnect;
    sync   "team:generateSecret"       (NoArgs)             -> TeamSecretDto           => team::generate_secret;
    sync   "settings:get"              (NoArgs)             -> SettingsDto             => settings::get;
    sync   "settings:update"           (UpdateSettingsArgs) -> SettingsDto             => settings::update;
    sync   "usage:getSummary"          (UsageRangeArgs)     -> UsageSummaryDto         => usage::summary;
    sync   "usage:getSeries"           (UsageSeriesArgs)    -> Series                  => usage::series;
    async  "usage:exportCsv"           (UsageRangeArgs)     -> ExportResult            => usage::export_csv;
    sync   "usage:getPrices"           (NoArgs)             -> Vec<Price>              => usage::prices;
    sync   "usage:setPrice"            (SetPriceArgs)       -> Price                   => usage::set_price;
    sync   "usage:deletePrice"         (ModelArgs)          -> DeletedPrice            => usage::delete_price;
    sync   "usage:purge"               (PurgeUsageArgs)     -> Purged                  => usage::purge;
    sync   "usage:getBySource"         (SourceRangeArgs)    -> SourcesReport           => sources::by_source;
    sync   "usage:getByToken"          (SourceRangeArgs)    -> Vec<TokenUsageDto>      => sources::by_token;
    sync   "chat:list"                 (NoArgs)             -> Vec<Chat>               => chat::list;
    sync   "chat:create"               (CreateChatArgs)     -> Chat                    => chat::create;
    sync   "chat:update"               (UpdateChatArgs)     -> Chat                    => chat::update;
    sync   "chat:delete"               (IdArgs)             -> DeletedChat             => chat::delete;
    sync   "chat:close"                (IdArgs)             -> ChatClosed              => chat::close;
    sync   "chat:getMessages"          (ChatIdArgs)         -> Vec<MessageDto>         => chat::messages;
    sync   "chat:stop"                 (ChatIdArgs)         -> StoppedDto              => chat::stop;
    sync   "chat:search"               (SearchChatsArgs)    -> Vec<SearchResult>       => chat::search;
    sync   "chat:attach"               (AttachArgs)         -> AttachmentDto           => chat::attach;
    sync   "chat:attachmentData"       (AttachmentDataArgs) -> AttachmentData          => chat::attachment_data;
    async  "chat:exportMarkdown"       (ChatIdArgs)         -> ExportResult            => chat::export_markdown;
    stream "chat:send"                 (SendArgs)           -> MessageDto, ChatEvent   => chat::send;
}

/// The row for `name`, if it is a command.
pub fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|command| command.name == name)
}

/// A handler's result as the command's answer; a failure is logged with the command's name.
fn answer(name: &str, result: Result<impl Serialize, IpcError>) -> Answer {
    let answer = result.and_then(|value| {
        serde_json::value::to_raw_value(&value).map_err(|e| IpcError::internal(format!("cannot encode result: {e}")))
    });
    if let Err(error) = &answer {
        tracing::debug!(command = name, code = ?error.code, message = %error.message, "command failed");
    }
    answer
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The table of IPC commands in this crate's README names every command of the table, and no
    /// other: its first column lists them, the first of a row with its `domain:` and the rest
    /// without it.
    #[test]
    fn the_readme_lists_exactly_the_commands_of_the_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        let readme = std::fs::read_to_string(&path).expect("the crate's README is readable");
        let section =
            readme.split("\n## IPC commands\n").nth(1).expect("the crate's README has an IPC commands section");
        let section = section.split("\n## ").next().unwrap_or(section);
        let mut listed = BTreeSet::new();
        for row in section.lines().filter(|line| line.starts_with("| `")) {
            let first_cell = row.split('|').nth(1).unwrap_or_default();
            let mut domain = "";
            for name in first_cell.split('`').skip(1).step_by(2) {
                match name.split_once(':') {
                    Some((prefix, _)) => {
                        domain = prefix;
                        listed.insert(name.to_owned());
                    }
                    None => {
                        assert!(!domain.is_empty(), "{row}: the row's first command names its domain");
                        listed.insert(format!("{domain}:{name}"));
                    }
                }
            }
        }
        let table: BTreeSet<String> = super::COMMANDS.iter().map(|command| command.name.to_owned()).collect();
        assert_eq!(
            listed, table,
            "src-tauri/crates/api/README.md's IPC commands table lists every command of the table and nothing else"
        );
    }
}
