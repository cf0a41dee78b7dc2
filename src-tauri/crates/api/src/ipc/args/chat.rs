//! The arguments of the `chat:*` commands and of `chat_send`.

use garde::Validate;
use keypool_store::chats::ChatPatch;
use serde::Deserialize;
use ts_rs::TS;

use super::rules::not_blank;
use super::CommandArgs;
use crate::ipc::error::IpcError;
use crate::ipc::{IssueCode, IssueParams};
use crate::service::{NewChat, Turn};

pub(crate) const MAX_MESSAGE_CHARS: usize = 200_000;
pub(crate) const MAX_SYSTEM_PROMPT_CHARS: usize = 50_000;

/// The model defaults to the provider's default.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct CreateChatArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub model: Option<String>,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub title: Option<String>,
    /// Defaults to the provider's; `""`: none.
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_SYSTEM_PROMPT_CHARS)))]
    pub system_prompt: Option<String>,
}

impl CommandArgs for CreateChatArgs {}

impl From<CreateChatArgs> for NewChat {
    fn from(a: CreateChatArgs) -> Self {
        NewChat { model: a.model.map(trimmed), title: a.title.map(trimmed), system_prompt: a.system_prompt }
    }
}

/// At least one field to change.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateChatArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub title: Option<String>,
    #[serde(default)]
    #[garde(inner(custom(not_blank)))]
    pub provider_id: Option<String>,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub model: Option<String>,
    /// `""` removes the system prompt.
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_SYSTEM_PROMPT_CHARS)))]
    pub system_prompt: Option<String>,
}

impl CommandArgs for UpdateChatArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.title.is_none() && self.provider_id.is_none() && self.model.is_none() && self.system_prompt.is_none() {
            return Err(IpcError::nothing_to_change(&["title", "providerId", "model", "systemPrompt"]));
        }
        Ok(())
    }
}

impl From<UpdateChatArgs> for ChatPatch {
    fn from(a: UpdateChatArgs) -> Self {
        ChatPatch {
            title: a.title.map(trimmed),
            provider_id: a.provider_id,
            model: a.model.map(trimmed),
            system_prompt: a.system_prompt.map(|p| Some(p).filter(|p| !p.trim().is_empty())),
        }
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatIdArgs {
    #[garde(custom(not_blank))]
    pub chat_id: String,
}

impl CommandArgs for ChatIdArgs {}

/// `chat_send`'s arguments besides its channel (`onEvent`).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendArgs {
    #[garde(dive)]
    pub request: SendRequest,
}

impl CommandArgs for SendArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.request.edit == Some(true) && self.request.content.is_none() {
            return Err(IpcError::issue("request.content", IssueCode::Required, IssueParams::default()));
        }
        Ok(())
    }
}

/// With `content`, a new user message; with `content` and `edit: true`, the last user message
/// rewritten (everything after it is dropped); without `content`, the last user message answered
/// again, replacing the replies after it (retry a failed reply, regenerate a good one).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SendRequest {
    #[garde(custom(not_blank))]
    pub chat_id: String,
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_MESSAGE_CHARS), custom(not_blank)))]
    pub content: Option<String>,
    #[serde(default)]
    #[garde(skip)]
    pub edit: Option<bool>,
}

impl SendRequest {
    pub(crate) fn turn(self) -> Turn {
        match (self.content, self.edit.unwrap_or(false)) {
            (Some(content), true) => Turn::Edit(content),
            (Some(content), false) => Turn::Ask(content),
            (None, _) => Turn::AnswerAgain,
        }
    }
}

/// `chat:search`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchChatsArgs {
    #[garde(length(chars, min = 1, max = 200), custom(not_blank))]
    pub query: String,
}

impl CommandArgs for SearchChatsArgs {}

pub(crate) fn trimmed(s: String) -> String {
    s.trim().to_owned()
}
