//! The command table: every IPC command, declared once.
//!
//! A row names the command as the UI invokes it, how it runs, its arguments, its result (and,
//! for a streaming command, the events it streams), and its handler. Everything else comes from
//! the table: the names the shell serves and the permission files must grant ([`COMMANDS`]), the
//! dispatch of each kind ([`dispatch`], [`dispatch_async`], [`dispatch_stream`]), argument
//! parsing and validation before the handler runs, and the TypeScript the UI calls them with.
//!
//! Kinds: `sync` handlers touch only the database and run on a blocking thread; `async` ones do
//! network I/O; `stream` ones also send events through a channel the page passes as `onEvent`.

use serde::Serialize;
use serde_json::Value;

use super::args::{parse, IdArgs, NoArgs, ProviderArgs};
use super::typescript::TypeSet;
use super::{app, chat, keys, local_api, providers, settings, usage};
use super::{
    AddApiKeyArgs, AddProviderArgs, ApiKeyDto, AppStatus, ChatDto, ChatEvent, ChatIdArgs, ConfigureLocalApiArgs,
    CreateChatArgs, DeletedDto, DeletedProviderDto, ExportResult, ExportUsageArgs, IpcError, KeyTestResult,
    ListModelsArgs, LocalApiConfiguredDto, LocalApiStatusDto, LocalApiTokenDto, MessageDto, ModelArgs, ModelArgsEcho,
    ModelListDto, PoolStatusDto, PriceDto, ProviderDto, PurgeUsageArgs, Purged, ReorderApiKeysArgs, SearchChatsArgs,
    SearchResultDto, SendArgs, SeriesDto, SetKeyLimitsArgs, SetPriceArgs, SettingsDto, StoppedDto, ToggleApiKeyArgs,
    UpdateApiKeyArgs, UpdateChatArgs, UpdateProviderArgs, UpdateSettingsArgs, UsageSeriesArgs, UsageSummaryArgs,
    UsageSummaryDto,
};
use crate::AppContext;

/// How a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sync,
    Async,
    Stream,
}

/// One row of the table, as the shell needs it.
#[derive(Debug, Clone, Copy)]
pub struct Command {
    pub name: &'static str,
    pub kind: Kind,
}

macro_rules! commands {
    ($( $kind:ident $name:literal ($args:ty) -> $result:ty $(, $event:ty)? => $handler:path; )*) => {
        /// Every command, in the table's order.
        pub const COMMANDS: &[Command] = &[$( Command { name: $name, kind: commands!(@kind $kind) } ),*];

        /// Runs the `sync` command `name`; `None` when no sync command has that name.
        pub fn dispatch(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
            let result = match name {
                $( $name => commands!(@sync $kind ctx payload ($args) $handler), )*
                _ => None,
            }?;
            Some(logged(name, result))
        }

        /// Runs the `async` command `name`; `None` when no async command has that name.
        pub async fn dispatch_async(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
            let result = match name {
                $( $name => commands!(@async $kind ctx payload ($args) $handler), )*
                _ => None,
            }?;
            Some(logged(name, result))
        }

        /// Runs the `stream` command `name`, handing each event to `emit` as JSON; `None` when no
        /// streaming command has that name.
        pub async fn dispatch_stream(
            ctx: &AppContext,
            name: &str,
            payload: Value,
            emit: &mut (dyn FnMut(Value) + Send),
        ) -> Option<Result<Value, IpcError>> {
            let result = match name {
                $( $name => commands!(@stream $kind ctx payload emit ($args) $handler, $($event)?), )*
                _ => None,
            }?;
            Some(logged(name, result))
        }

        /// Declares every argument, result and event type of the table.
        pub(crate) fn declare_types(types: &mut TypeSet) {
            $(
                types.add::<$args>();
                types.add::<$result>();
                $( types.add::<$event>(); )?
            )*
        }

        /// The `Commands` map of the TypeScript bindings: each name to its arguments, result and events.
        pub(crate) fn typescript(types: &TypeSet) -> String {
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

    (@kind sync) => { Kind::Sync };
    (@kind async) => { Kind::Async };
    (@kind stream) => { Kind::Stream };

    (@sync sync $ctx:ident $payload:ident ($args:ty) $handler:path) => {
        Some(parse::<$args>($payload).and_then(|args| $handler($ctx, args)).and_then(encode))
    };
    (@sync $other:ident $($rest:tt)*) => { None };

    (@async async $ctx:ident $payload:ident ($args:ty) $handler:path) => {
        Some(match parse::<$args>($payload) {
            Ok(args) => $handler($ctx, args).await.and_then(encode),
            Err(error) => Err(error),
        })
    };
    (@async $other:ident $($rest:tt)*) => { None };

    (@stream stream $ctx:ident $payload:ident $emit:ident ($args:ty) $handler:path, $event:ty) => {
        Some(match parse::<$args>($payload) {
            Ok(args) => {
                let mut typed = |event: $event| $emit(serde_json::to_value(event).unwrap_or(Value::Null));
                $handler($ctx, args, &mut typed).await.and_then(encode)
            }
            Err(error) => Err(error),
        })
    };
    (@stream $other:ident $($rest:tt)*) => { None };

    (@event_ts $types:ident $event:ty) => { format!("; event: {}", $types.name::<$event>()) };
    (@event_ts $types:ident) => { String::new() };
}

commands! {
    sync   "app:getStatus"             (NoArgs)             -> AppStatus               => app::status;
    sync   "llmConfig:getProviders"    (NoArgs)             -> Vec<ProviderDto>        => providers::list;
    sync   "llmConfig:addProvider"     (AddProviderArgs)    -> ProviderDto             => providers::add;
    sync   "llmConfig:updateProvider"  (UpdateProviderArgs) -> ProviderDto             => providers::update;
    sync   "llmConfig:deleteProvider"  (IdArgs)             -> DeletedProviderDto      => providers::delete;
    sync   "llmConfig:getApiKeys"      (ProviderArgs)       -> Vec<ApiKeyDto>          => keys::list;
    sync   "llmConfig:addApiKey"       (AddApiKeyArgs)      -> ApiKeyDto               => keys::add;
    sync   "llmConfig:updateApiKey"    (UpdateApiKeyArgs)   -> ApiKeyDto               => keys::update;
    sync   "llmConfig:setKeyLimits"    (SetKeyLimitsArgs)   -> ApiKeyDto               => keys::set_limits;
    sync   "llmConfig:deleteApiKey"    (IdArgs)             -> DeletedDto              => keys::delete;
    sync   "llmConfig:toggleApiKey"    (ToggleApiKeyArgs)   -> ApiKeyDto               => keys::toggle;
    sync   "llmConfig:reorderApiKeys"  (ReorderApiKeysArgs) -> Vec<ApiKeyDto>          => keys::reorder;
    sync   "llmConfig:getPoolStatus"   (ProviderArgs)       -> PoolStatusDto           => keys::pool_status;
    sync   "llmConfig:resetCooldown"   (IdArgs)             -> DeletedDto              => keys::reset_cooldown;
    async  "llmConfig:testApiKey"      (IdArgs)             -> KeyTestResult           => keys::test;
    async  "llmConfig:listModels"      (ListModelsArgs)     -> ModelListDto            => providers::models;
    sync   "localApi:getStatus"        (NoArgs)             -> LocalApiStatusDto       => local_api::status;
    async  "localApi:configure"        (ConfigureLocalApiArgs) -> LocalApiConfiguredDto => local_api::configure;
    sync   "localApi:regenerateToken"  (NoArgs)             -> LocalApiTokenDto        => local_api::regenerate_token;
    sync   "settings:get"              (NoArgs)             -> SettingsDto             => settings::get;
    sync   "settings:update"           (UpdateSettingsArgs) -> SettingsDto             => settings::update;
    sync   "usage:getSummary"          (UsageSummaryArgs)   -> UsageSummaryDto         => usage::summary;
    sync   "usage:getSeries"           (UsageSeriesArgs)    -> SeriesDto               => usage::series;
    async  "usage:exportCsv"           (ExportUsageArgs)    -> ExportResult            => usage::export_csv;
    sync   "usage:getPrices"           (NoArgs)             -> Vec<PriceDto>           => usage::prices;
    sync   "usage:setPrice"            (SetPriceArgs)       -> PriceDto                => usage::set_price;
    sync   "usage:deletePrice"         (ModelArgs)          -> ModelArgsEcho           => usage::delete_price;
    sync   "usage:purge"               (PurgeUsageArgs)     -> Purged                  => usage::purge;
    sync   "chat:list"                 (NoArgs)             -> Vec<ChatDto>            => chat::list;
    sync   "chat:create"               (CreateChatArgs)     -> ChatDto                 => chat::create;
    sync   "chat:update"               (UpdateChatArgs)     -> ChatDto                 => chat::update;
    sync   "chat:delete"               (IdArgs)             -> DeletedDto              => chat::delete;
    sync   "chat:close"                (IdArgs)             -> DeletedDto              => chat::close;
    sync   "chat:getMessages"          (ChatIdArgs)         -> Vec<MessageDto>         => chat::messages;
    sync   "chat:stop"                 (ChatIdArgs)         -> StoppedDto              => chat::stop;
    sync   "chat:search"               (SearchChatsArgs)    -> Vec<SearchResultDto>    => chat::search;
    async  "chat:exportMarkdown"       (ChatIdArgs)         -> ExportResult            => chat::export_markdown;
    stream "chat_send"                 (SendArgs)           -> MessageDto, ChatEvent   => chat::send;
}

/// The row for `name`, if it is a command.
pub fn command(name: &str) -> Option<Command> {
    COMMANDS.iter().find(|command| command.name == name).copied()
}

fn encode(value: impl Serialize) -> Result<Value, IpcError> {
    serde_json::to_value(value).map_err(|e| IpcError::internal(format!("cannot encode result: {e}")))
}

fn logged(name: &str, result: Result<Value, IpcError>) -> Result<Value, IpcError> {
    if let Err(error) = &result {
        tracing::debug!(command = name, code = ?error.code, message = %error.message, "command failed");
    }
    result
}
