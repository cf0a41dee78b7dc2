//! What the `chat:*` commands return and what `chat_send` streams.

use keypool::FailureKind;
use keypool_llm::CompletionEvent;
use keypool_store::chats::{self, ChatRow, MessageRow};
use serde::Serialize;
use ts_rs::TS;

use crate::ipc::error::ErrorCode;
use crate::service::{ChatProgress, ReplyError, SearchResult};

/// A conversation with one provider and model.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Chat")]
pub struct ChatDto {
    pub id: String,
    pub title: String,
    /// `null` when the chat's provider was deleted: pick another before sending.
    pub provider_id: Option<String>,
    pub model: String,
    /// Sent first, as the system message; null: none.
    pub system_prompt: Option<String>,
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
            system_prompt: row.system_prompt,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// How a message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    Complete,
    /// Stopped by the user; the text so far stands.
    Stopped,
    /// Failed; `error` and `errorCode` say why.
    Error,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Message")]
pub struct MessageDto {
    pub id: String,
    pub chat_id: String,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    /// Why the reply failed, in English (the fallback); set when `status` is `error`.
    pub error: Option<String>,
    /// The error's code (`no_available_key`, `provider`, …) when `status` is `error`.
    pub error_code: Option<ErrorCode>,
    /// Why the reply failed, with what the UI needs to word it; set when `status` is `error`.
    pub error_details: Option<ReplyError>,
    /// Which key answered: its label or its masked preview; `null` when none could.
    pub key_label: Option<String>,
    /// Answered with the provider-level key (the pool was empty).
    pub provider_key: bool,
    pub created_at: i64,
    /// What the reply used, as the provider reported it; null when it reported nothing.
    pub usage: Option<MessageUsageDto>,
}

/// The tokens of one reply: `inputTokens` counts every prompt token, `cachedTokens` those read
/// from the provider's prompt cache ("cached 5 of 11 input tokens").
#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "MessageUsage")]
pub struct MessageUsageDto {
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl From<MessageRow> for MessageDto {
    fn from(row: MessageRow) -> Self {
        MessageDto {
            id: row.id,
            chat_id: row.chat_id,
            role: match row.role {
                chats::Role::User => Role::User,
                chats::Role::Assistant => Role::Assistant,
            },
            content: row.content,
            status: match row.status {
                chats::MessageStatus::Complete => MessageStatus::Complete,
                chats::MessageStatus::Stopped => MessageStatus::Stopped,
                chats::MessageStatus::Error => MessageStatus::Error,
            },
            error_details: ReplyError::stored(row.error_details.as_deref(), row.error.as_deref()),
            error: row.error,
            error_code: row.error_code.as_deref().map(ErrorCode::parse),
            key_label: row.key_label,
            provider_key: row.provider_key,
            created_at: row.created_at,
            usage: row.usage.map(|u| MessageUsageDto {
                input_tokens: u.input,
                cached_tokens: u.cached,
                output_tokens: u.output,
            }),
        }
    }
}

/// Why a key was refused and the reply moved to the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum FailoverReason {
    RateLimited,
    AuthRejected,
    /// Out of credit: the key leaves rotation until a background probe finds it usable.
    QuotaExhausted,
}

/// The events of one `chat_send`, in order: `userMessage` (unless retrying), then per attempt
/// `keySelected` and possibly `failover`, `delta`s, and always one `finished` last.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ChatEvent {
    UserMessage {
        message: MessageDto,
    },
    /// `rebound`: the chat moved to another key than the one it had; the prompt cache starts cold.
    KeySelected {
        key_label: String,
        provider_level: bool,
        rebound: bool,
        attempt: u32,
    },
    Failover {
        key_label: String,
        status: u16,
        reason: FailoverReason,
        message: String,
    },
    Delta {
        text: String,
    },
    /// Every key is spent, cooling or busy: the reply waits for one to free up (it can be
    /// stopped meanwhile). `until`: when a key frees up by itself; null when it waits for a
    /// request in flight to end. Never past `deadline` (the pool's max wait). `now` is the
    /// backend's clock, for the countdown; `seconds` the wait left, rounded up.
    Waiting {
        until: Option<i64>,
        deadline: i64,
        now: i64,
        seconds: u32,
    },
    /// The assistant's message as saved: complete, stopped, or failed with its error.
    Finished {
        message: MessageDto,
    },
}

impl From<ChatProgress> for ChatEvent {
    fn from(progress: ChatProgress) -> Self {
        match progress {
            ChatProgress::UserMessage(row) => ChatEvent::UserMessage { message: row.into() },
            ChatProgress::Completion(CompletionEvent::KeySelected {
                key_label,
                provider_level,
                rebound,
                attempt,
                ..
            }) => ChatEvent::KeySelected { key_label, provider_level, rebound, attempt },
            ChatProgress::Completion(CompletionEvent::Failover { key_label, status, reason, message }) => {
                let reason = match reason {
                    FailureKind::AuthRejected => FailoverReason::AuthRejected,
                    FailureKind::RateLimited { .. } => FailoverReason::RateLimited,
                    FailureKind::QuotaExhausted => FailoverReason::QuotaExhausted,
                };
                ChatEvent::Failover { key_label, status, reason, message }
            }
            ChatProgress::Completion(CompletionEvent::Delta { text }) => ChatEvent::Delta { text },
            ChatProgress::Completion(CompletionEvent::Waiting { until, deadline, now }) => {
                let seconds = until.unwrap_or(deadline).saturating_duration_since(now).as_millis().div_ceil(1000);
                ChatEvent::Waiting {
                    until: until.map(|t| t.as_millis()),
                    deadline: deadline.as_millis(),
                    now: now.as_millis(),
                    seconds: u32::try_from(seconds).unwrap_or(u32::MAX),
                }
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Stopped")]
pub struct StoppedDto {
    pub chat_id: String,
    /// Whether a reply was being written (and is now stopped).
    pub stopped: bool,
}

/// A chat that matches a search: where, and the first matching message cut around the match.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ChatSearchResult")]
pub struct SearchResultDto {
    pub chat: ChatDto,
    /// The query is in the title.
    pub in_title: bool,
    /// The first matching message; null when only the title matches.
    pub snippet: Option<SnippetDto>,
    /// How many of the chat's messages match.
    pub message_count: u32,
}

/// `before` + `matched` + `after` is a piece of one message on one line; `matched` is the
/// query as the message writes it (for highlighting).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "SearchSnippet")]
pub struct SnippetDto {
    pub message_id: String,
    pub before: String,
    pub matched: String,
    pub after: String,
}

impl From<SearchResult> for SearchResultDto {
    fn from(result: SearchResult) -> Self {
        SearchResultDto {
            chat: result.chat.into(),
            in_title: result.in_title,
            snippet: result.snippet.map(|s| SnippetDto {
                message_id: s.message_id,
                before: s.before,
                matched: s.matched,
                after: s.after,
            }),
            message_count: result.message_count,
        }
    }
}
