use garde::Validate;
use serde::Deserialize;

use crate::args::{not_blank, present};

pub(crate) const MAX_MESSAGE_CHARS: usize = 200_000;

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CreateChatArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct UpdateChatArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub title: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(custom(not_blank)))]
    pub provider_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, min = 1, max = 200), custom(not_blank)))]
    pub model: Option<String>,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ChatIdArgs {
    #[garde(custom(not_blank))]
    pub chat_id: String,
}

/// `chat_send`'s request. Without `content`, the last user message is answered again (retry).
#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendArgs {
    #[garde(custom(not_blank))]
    pub chat_id: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, max = MAX_MESSAGE_CHARS), custom(not_blank)))]
    pub content: Option<String>,
}
