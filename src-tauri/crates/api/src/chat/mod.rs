//! `chat:*`: conversations. Replies stream through `chat_send` (a Tauri channel command in the
//! shell), which calls [`Chats::send`].

mod args;
mod dto;
mod service;

use keypool_store::chats::ChatPatch;
use serde_json::Value;

pub use args::SendArgs;
pub use dto::{ChatDto, ChatEvent, MessageDto, StoppedDto};
pub use service::{endpoint_of, Chats, NEW_CHAT_TITLE};

use self::args::*;
use crate::args::validate;
use crate::error::IpcError;
use crate::{run, AppContext};

pub const COMMANDS: &[&str] =
    &["chat:list", "chat:create", "chat:update", "chat:delete", "chat:close", "chat:getMessages", "chat:stop"];

pub(crate) fn dispatch(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
    let result = match name {
        "chat:list" => run(payload, |crate::app::NoArgs {}| Ok(ctx.chats()?.list()?)),
        "chat:create" => run(payload, |a: CreateChatArgs| {
            validate(&a)?;
            Ok(ctx.chats()?.create(&a.provider_id, a.model.map(trimmed), a.title.map(trimmed))?)
        }),
        "chat:update" => run(payload, |a: UpdateChatArgs| {
            validate(&a)?;
            let patch = ChatPatch {
                title: a.title.map(trimmed),
                provider_id: a.provider_id,
                model: a.model.map(trimmed),
            };
            if patch.title.is_none() && patch.provider_id.is_none() && patch.model.is_none() {
                return Err(IpcError::validation(vec![crate::Issue {
                    path: String::new(),
                    message: "nothing to change: give at least one of title, providerId, model".into(),
                }]));
            }
            Ok(ctx.chats()?.update(&a.id, patch)?)
        }),
        "chat:delete" => run(payload, |a: crate::llm_config::IdArgs| {
            validate(&a)?;
            Ok(ctx.chats()?.delete(&a.id)?)
        }),
        "chat:close" => run(payload, |a: crate::llm_config::IdArgs| {
            validate(&a)?;
            Ok(ctx.chats()?.close(&a.id)?)
        }),
        "chat:getMessages" => run(payload, |a: ChatIdArgs| {
            validate(&a)?;
            Ok(ctx.chats()?.messages(&a.chat_id)?)
        }),
        "chat:stop" => run(payload, |a: ChatIdArgs| {
            validate(&a)?;
            Ok(ctx.chats()?.stop(&a.chat_id)?)
        }),
        _ => return None,
    };
    Some(result)
}

/// Validates a `chat_send` request before anything is written.
pub fn validate_send(args: &SendArgs) -> Result<(), IpcError> {
    validate(args)
}

fn trimmed(s: String) -> String {
    s.trim().to_owned()
}
