//! The arguments of the `chat:*` commands and of `chat_send`.

use garde::Validate;
use keypool_store::chats::ChatPatch;
use serde::Deserialize;
use ts_rs::TS;

use super::rules::not_blank;
use super::CommandArgs;
use crate::ipc::error::IpcError;

pub(crate) const MAX_MESSAGE_CHARS: usize = 200_000;

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
}

impl CommandArgs for CreateChatArgs {}

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
}

impl CommandArgs for UpdateChatArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.title.is_none() && self.provider_id.is_none() && self.model.is_none() {
            return Err(IpcError::nothing_to_change(&["title", "providerId", "model"]));
        }
        Ok(())
    }
}

impl From<UpdateChatArgs> for ChatPatch {
    fn from(a: UpdateChatArgs) -> Self {
        ChatPatch { title: a.title.map(trimmed), provider_id: a.provider_id, model: a.model.map(trimmed) }
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

impl CommandArgs for SendArgs {}

/// Without `content`, the last user message is answered again (retry), replacing a failed reply.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SendRequest {
    #[garde(custom(not_blank))]
    pub chat_id: String,
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_MESSAGE_CHARS), custom(not_blank)))]
    pub content: Option<String>,
}

pub(crate) fn trimmed(s: String) -> String {
    s.trim().to_owned()
}
