//! What the `chat:*` commands return and what `chat_send` streams.

use keypool_llm::CompletionEvent;
use keypool_store::chats::{ChatRow, MessageRow};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatDto {
    pub id: String,
    pub title: String,
    /// `null` when the chat's provider was deleted: pick another before sending.
    pub provider_id: Option<String>,
    pub model: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<ChatRow> for ChatDto {
    fn from(row: ChatRow) -> Self {
        ChatDto {
            id: row.id,
            title: row.title,
            provider_id: row.provider_id,
            model: row.model,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageDto {
    pub id: String,
    pub chat_id: String,
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    /// `complete`, `stopped` (by the user) or `error`.
    pub status: String,
    pub error: Option<String>,
    /// An IPC error code (`no_available_key`, `provider`, …) when `status` is `error`.
    pub error_code: Option<String>,
    /// Which key answered (its label, or its masked preview).
    pub key_label: Option<String>,
    /// Answered with the provider-level key (the pool was empty).
    pub provider_key: bool,
    pub created_at: i64,
}

impl From<MessageRow> for MessageDto {
    fn from(row: MessageRow) -> Self {
        MessageDto {
            id: row.id,
            chat_id: row.chat_id,
            role: row.role,
            content: row.content,
            status: row.status,
            error: row.error,
            error_code: row.error_code,
            key_label: row.key_label,
            provider_key: row.provider_key,
            created_at: row.created_at,
        }
    }
}

/// The events of one `chat_send`, in order: `userMessage` (unless retrying), then per attempt
/// `keySelected` and possibly `failover`, `delta`s, and always one `finished` last.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ChatEvent {
    UserMessage { message: MessageDto },
    KeySelected { key_label: String, provider_level: bool, rebound: bool, attempt: u32 },
    Failover { key_label: String, status: u16, reason: &'static str, message: String },
    Delta { text: String },
    /// The assistant's message as saved: complete, stopped, or failed with its error.
    Finished { message: MessageDto },
}

impl From<CompletionEvent> for ChatEvent {
    fn from(event: CompletionEvent) -> Self {
        match event {
            CompletionEvent::KeySelected { key_label, provider_level, rebound, attempt, .. } => {
                ChatEvent::KeySelected { key_label, provider_level, rebound, attempt }
            }
            CompletionEvent::Failover { key_label, status, reason, message } => {
                ChatEvent::Failover { key_label, status, reason, message }
            }
            CompletionEvent::Delta { text } => ChatEvent::Delta { text },
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedDto {
    pub chat_id: String,
    /// Whether a reply was being written (and is now stopped).
    pub stopped: bool,
}
