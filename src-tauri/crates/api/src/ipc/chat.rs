//! `chat:*`: conversations and their messages, and `chat:send`, which streams a reply.

use garde::Validate;
use keypool::FailureKind;
use keypool_llm::{CompletionEvent, Usage};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, IdArgs, NoArgs};
use super::error::{ErrorCode, IpcError};
use super::issues::{IssueCode, IssueParams};
use super::limits::LIMITS;
use super::rules::not_blank;
use super::usage::ExportResult;
use crate::service::{
    self, AttachmentInfo, AttachmentRef, Chat, ChatPatch, ChatProgress, Message, MessageStatus, NewChat, Role,
    SearchResult, Turn, Variant,
};
use crate::AppContext;

type Result<T, E = IpcError> = std::result::Result<T, E>;

/// The model defaults to the provider's default.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct CreateChatArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    #[serde(default)]
    #[garde(inner(length(bytes, min = 1, max = LIMITS.model_name.max_bytes), custom(not_blank)))]
    pub model: Option<String>,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = LIMITS.chat_title.max_chars), custom(not_blank)))]
    pub title: Option<String>,
    /// Defaults to the provider's; `""`: none.
    #[serde(default)]
    #[garde(inner(length(chars, max = LIMITS.system_prompt.max_chars)))]
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
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = LIMITS.chat_title.max_chars), custom(not_blank)))]
    pub title: Option<String>,
    #[serde(default)]
    #[garde(inner(custom(not_blank)))]
    pub provider_id: Option<String>,
    #[serde(default)]
    #[garde(inner(length(bytes, min = 1, max = LIMITS.model_name.max_bytes), custom(not_blank)))]
    pub model: Option<String>,
    /// `""` removes the system prompt.
    #[serde(default)]
    #[garde(inner(length(chars, max = LIMITS.system_prompt.max_chars)))]
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
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub chat_id: String,
}

impl CommandArgs for ChatIdArgs {}

/// `chat:send`'s arguments besides its channel (`onEvent`).
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
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub chat_id: String,
    #[serde(default)]
    #[garde(inner(length(chars, max = LIMITS.message.max_chars), custom(not_blank)))]
    pub content: Option<String>,
    #[serde(default)]
    #[garde(skip)]
    pub edit: Option<bool>,
    /// Files attached with `chat:attach`, in order. A new message may be attachments alone
    /// (no `content`); an edit without `attachments` keeps the message's.
    #[serde(default)]
    #[garde(length(max = LIMITS.attachments.max_items), dive)]
    pub attachments: Option<Vec<AttachmentRefArgs>>,
}

/// An attachment named in a message: the `id` `chat:attach` answered, the name to show.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(rename = "AttachmentRef")]
pub struct AttachmentRefArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    #[garde(length(chars, max = LIMITS.attachment_name.max_chars))]
    pub name: String,
}

impl SendRequest {
    pub(crate) fn turn(self) -> Turn {
        let refs = |list: Vec<AttachmentRefArgs>| -> Vec<AttachmentRef> {
            list.into_iter().map(|a| AttachmentRef { id: a.id, name: a.name }).collect()
        };
        match (self.content, self.edit.unwrap_or(false), self.attachments) {
            (Some(content), true, attachments) => Turn::Edit(content, attachments.map(refs)),
            (Some(content), false, attachments) => Turn::Ask(content, attachments.map(refs).unwrap_or_default()),
            (None, false, Some(attachments)) if !attachments.is_empty() => Turn::Ask(String::new(), refs(attachments)),
            (None, _, _) => Turn::AnswerAgain,
        }
    }
}

/// `chat:attach`: a file the user attached, its bytes in base64. An image (PNG, JPEG, WebP, GIF;
/// the type is read from the bytes) of at most `LIMITS.imageFile`, or UTF-8 text of at most
/// `LIMITS.textFile`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AttachArgs {
    #[garde(length(chars, max = LIMITS.attachment_name.max_chars))]
    pub name: String,
    #[garde(length(bytes, max = LIMITS.attachment_data.max_bytes))]
    pub data: String,
}

impl CommandArgs for AttachArgs {}

/// `chat:attachmentData`: an attachment's bytes, the original or (`thumbnail: true`, images) its
/// thumbnail.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AttachmentDataArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    #[serde(default)]
    #[garde(skip)]
    pub thumbnail: Option<bool>,
}

impl CommandArgs for AttachmentDataArgs {}

/// An image or a text file attached to a message. A view of its own: its `kind` is the store's
/// enum, which knows nothing of serde, named here.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Attachment")]
pub struct AttachmentDto {
    /// Its content id: what `chat:send` and `chat:attachmentData` take.
    pub id: String,
    pub name: String,
    pub kind: AttachmentKind,
    /// Read from the bytes: `image/png`, `image/jpeg`, `image/webp`, `image/gif` or `text/plain`.
    pub media_type: String,
    /// Bytes.
    pub size: u64,
    /// Images: pixels.
    pub width: Option<u32>,
    pub height: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    Image,
    Text,
}

impl From<AttachmentInfo> for AttachmentDto {
    fn from(a: AttachmentInfo) -> Self {
        AttachmentDto {
            id: a.id,
            name: a.name,
            kind: match a.kind {
                service::AttachmentKind::Image => AttachmentKind::Image,
                service::AttachmentKind::Text => AttachmentKind::Text,
            },
            media_type: a.media_type,
            size: a.size,
            width: a.width,
            height: a.height,
        }
    }
}

/// An attachment's bytes, base64, with their media type (for a `data:` URL).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentData {
    pub media_type: String,
    pub data: String,
}

/// `chat:search`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchChatsArgs {
    #[garde(length(chars, min = 1, max = LIMITS.search_query.max_chars), custom(not_blank))]
    pub query: String,
}

impl CommandArgs for SearchChatsArgs {}

pub(crate) fn trimmed(s: String) -> String {
    s.trim().to_owned()
}

/// A message as saved, with its error code typed as the IPC error's (the service keeps the text
/// the reply failed with), and its attachments as the UI shows them.
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
    pub error_details: Option<service::ReplyError>,
    /// Which key answered: its label or its masked preview; `null` when none could.
    pub key_label: Option<String>,
    /// Answered with the provider-level key (the pool was empty).
    pub provider_key: bool,
    pub created_at: i64,
    /// What the reply used, as the provider reported it; null when it reported nothing.
    pub usage: Option<Usage>,
    /// Images and text files sent with a user message, in order.
    pub attachments: Vec<AttachmentDto>,
}

impl From<Message> for MessageDto {
    fn from(message: Message) -> Self {
        MessageDto {
            id: message.id,
            chat_id: message.chat_id,
            role: message.role,
            content: message.content,
            status: message.status,
            error: message.error,
            error_code: message.error_code.as_deref().map(ErrorCode::parse),
            error_details: message.error_details,
            key_label: message.key_label,
            provider_key: message.provider_key,
            created_at: message.created_at,
            usage: message.usage,
            attachments: message.attachments.into_iter().map(AttachmentDto::from).collect(),
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

/// The events of one `chat:send`, in order: `userMessage` (unless retrying), then per attempt
/// `keySelected` and possibly `failover`, `delta`s, and always one `finished` last.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ChatEvent {
    UserMessage {
        message: MessageDto,
    },
    /// `rebound`: the chat moved to another key than the one it had; the prompt cache starts cold.
    /// `keyless`: the attempt goes without a key (the pool is empty and the provider has no key
    /// of its own: local servers need none). `keyId`: the pool key's id (null for the provider
    /// key or none), so the page can tell a retry on the same key from a failover.
    KeySelected {
        key_id: Option<String>,
        key_label: String,
        provider_level: bool,
        keyless: bool,
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
                key_id,
                key_label,
                provider_level,
                keyless,
                rebound,
                attempt,
            }) => ChatEvent::KeySelected {
                key_id: key_id.map(|key| key.to_string()),
                key_label: key_label.to_string(),
                provider_level,
                keyless,
                rebound,
                attempt,
            },
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

/// What deleting a chat answers: the chat that is gone, with its messages.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DeletedChat {
    pub id: String,
}

/// What closing a chat answers: the chat, which stays as it was.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ChatClosed {
    pub id: String,
}

/// What stopping a chat's reply answers, composed here from the chat asked for and whether the
/// service had a reply to stop.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Stopped")]
pub struct StoppedDto {
    pub chat_id: String,
    /// Whether a reply was being written (and is now stopped).
    pub stopped: bool,
}

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<Chat>> {
    Ok(ctx.chats()?.list()?)
}

pub(super) fn create(ctx: &AppContext, args: CreateChatArgs) -> Result<Chat> {
    let provider_id = args.provider_id.clone();
    Ok(ctx.chats()?.create(&provider_id, args.into())?)
}

pub(super) fn update(ctx: &AppContext, args: UpdateChatArgs) -> Result<Chat> {
    let id = args.id.clone();
    Ok(ctx.chats()?.update(&id, args.into())?)
}

/// Stops a running reply and releases the chat's key.
pub(super) fn delete(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedChat> {
    ctx.chats()?.delete(&id)?;
    Ok(DeletedChat { id })
}

/// Deletes nothing: the chat keeps its key (see `Chats::close`).
pub(super) fn close(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<ChatClosed> {
    ctx.chats()?.close(&id)?;
    Ok(ChatClosed { id })
}

pub(super) fn messages(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<Vec<MessageDto>> {
    Ok(ctx.chats()?.messages(&chat_id)?.into_iter().map(MessageDto::from).collect())
}

pub(super) fn stop(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<StoppedDto> {
    let stopped = ctx.chats()?.stop(&chat_id)?;
    Ok(StoppedDto { chat_id, stopped })
}

pub(super) fn search(ctx: &AppContext, SearchChatsArgs { query }: SearchChatsArgs) -> Result<Vec<SearchResult>> {
    Ok(ctx.chats()?.search(&query)?)
}

pub(super) fn attach(ctx: &AppContext, AttachArgs { name, data }: AttachArgs) -> Result<AttachmentDto> {
    use base64::Engine;
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.as_bytes()) else {
        let reason = Some("is not base64".to_owned());
        return Err(IpcError::issue("data", IssueCode::Invalid, IssueParams { reason, ..IssueParams::default() }));
    };
    Ok(ctx.chats()?.attach(&name, &bytes)?.into())
}

pub(super) fn attachment_data(
    ctx: &AppContext,
    AttachmentDataArgs { id, thumbnail }: AttachmentDataArgs,
) -> Result<AttachmentData> {
    use base64::Engine;
    let variant = if thumbnail.unwrap_or(false) { Variant::Thumbnail } else { Variant::Original };
    let (media_type, bytes) = ctx.chats()?.attachments().read(&id, variant)?;
    Ok(AttachmentData { media_type, data: base64::engine::general_purpose::STANDARD.encode(bytes) })
}

pub(super) async fn export_markdown(ctx: &AppContext, ChatIdArgs { chat_id }: ChatIdArgs) -> Result<ExportResult> {
    Ok(ctx.chats()?.export_markdown(&chat_id).await?.into())
}

/// Sends a message (or edits the last one, or answers it again) and streams the reply's events;
/// `finished`, with the reply as saved, is always the last.
pub(super) async fn send(
    ctx: &AppContext,
    args: SendArgs,
    emit: &mut (dyn FnMut(ChatEvent) + Send),
) -> Result<MessageDto> {
    let chat_id = args.request.chat_id.clone();
    let reply = ctx.chats()?.send(&chat_id, args.request.turn(), &mut |progress| emit(progress.into())).await?;
    let message = MessageDto::from(reply);
    emit(ChatEvent::Finished { message: message.clone() });
    Ok(message)
}
