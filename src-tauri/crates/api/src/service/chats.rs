//! Chats: persisted conversations whose replies come from the completion service.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use keypool::{Clock, KeyId, SessionId};
use keypool_llm::{
    CancellationToken, ChatMessage, CompletionEvent, CompletionRequest, CompletionService, StopReason, Usage,
};
use keypool_store::attachments::{self as attachment_rows, LinkedAttachment};
use keypool_store::chats::{self, ChatRow, MessageRow, MessageUsage};
use keypool_store::providers::{self, ProviderRow};
use keypool_store::Database;

use super::attachments::{AttachmentInfo, Attachments};
use super::providers::{endpoint_of, provider_not_found};
use super::reply_error::ReplyError;
use super::usage::SaveDialog;
use super::Vault;
use crate::service::error::{Conflict, Result, ServiceError};
use crate::service::problem::Rule;

/// A conversation with one provider and model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Chat {
    pub id: String,
    pub title: String,
    /// `None` when the chat's provider was deleted: another must be chosen before sending.
    pub provider_id: Option<String>,
    pub model: String,
    /// Sent first, as the system message.
    pub system_prompt: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<ChatRow> for Chat {
    fn from(row: ChatRow) -> Self {
        Chat {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// How a message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    Complete,
    /// Stopped by the user; the text so far stands.
    Stopped,
    /// Failed; `error`, `error_code` and `error_details` say why.
    Error,
}

/// A message as saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    pub chat_id: String,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    /// Why the reply failed, in English.
    pub error: Option<String>,
    /// The failure's code (`no_available_key`, `provider`, …).
    pub error_code: Option<String>,
    /// Why the reply failed, as a code with parameters.
    pub error_details: Option<ReplyError>,
    /// Which key answered: its label or its masked preview.
    pub key_label: Option<String>,
    /// Answered with the provider-level key (the pool was empty).
    pub provider_key: bool,
    pub created_at: i64,
    /// What the reply used, as the provider reported it.
    pub usage: Option<Usage>,
    /// Images and text files sent with a user message, in order.
    pub attachments: Vec<AttachmentInfo>,
}

impl Message {
    fn with_attachments(row: MessageRow, linked: Vec<LinkedAttachment>) -> Message {
        Message { attachments: linked.into_iter().map(AttachmentInfo::from).collect(), ..Message::from(row) }
    }
}

impl From<MessageRow> for Message {
    fn from(row: MessageRow) -> Self {
        Message {
            attachments: Vec::new(),
            role: match row.role {
                chats::Role::User => Role::User,
                chats::Role::Assistant => Role::Assistant,
            },
            status: match row.status {
                chats::MessageStatus::Complete => MessageStatus::Complete,
                chats::MessageStatus::Stopped => MessageStatus::Stopped,
                chats::MessageStatus::Error => MessageStatus::Error,
            },
            error_details: ReplyError::stored(row.error_details.as_deref(), row.error.as_deref()),
            id: row.id,
            chat_id: row.chat_id,
            content: row.content,
            error: row.error,
            error_code: row.error_code,
            key_label: row.key_label,
            provider_key: row.provider_key,
            created_at: row.created_at,
            usage: row.usage.map(|u| Usage { input: u.input, cached: u.cached, output: u.output }),
        }
    }
}

/// What to change in a chat; `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct ChatPatch {
    pub title: Option<String>,
    pub provider_id: Option<String>,
    pub model: Option<String>,
    /// `Some(None)` removes the system prompt.
    pub system_prompt: Option<Option<String>>,
}

impl From<ChatPatch> for chats::ChatPatch {
    fn from(patch: ChatPatch) -> Self {
        let ChatPatch { title, provider_id, model, system_prompt } = patch;
        chats::ChatPatch { title, provider_id, model, system_prompt }
    }
}

/// What happens while a reply is written, in order: the user's message as saved (unless
/// retrying), then the completion's events. The reply as saved is what [`Chats::send`] returns.
#[derive(Debug, Clone)]
pub enum ChatProgress {
    UserMessage(Message),
    Completion(CompletionEvent),
}

/// An attachment named in a message to send: its content id (from [`Attachments::add`]) and
/// the name to show and send it under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentRef {
    pub id: String,
    pub name: String,
}

/// What a send does with the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// Adds a user message with these attachments and answers it.
    Ask(String, Vec<AttachmentRef>),
    /// Replaces the text of the last user message (and its attachments, when given; else it
    /// keeps them), drops everything after it, and answers it.
    Edit(String, Option<Vec<AttachmentRef>>),
    /// Drops the replies after the last user message (failed or not) and answers it again:
    /// retry and regenerate.
    AnswerAgain,
}

/// A chat to create; every field falls back to the provider's defaults.
#[derive(Debug, Clone, Default)]
pub struct NewChat {
    pub model: Option<String>,
    pub title: Option<String>,
    /// Empty: none, even if the provider has a default.
    pub system_prompt: Option<String>,
}

/// A chat that matches a search: where, and the first matching message cut around the match.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ChatSearchResult")]
pub struct SearchResult {
    pub chat: Chat,
    /// The query is in the title.
    pub in_title: bool,
    /// The first matching message, cut around the match; `None` when only the title matches.
    pub snippet: Option<Snippet>,
    /// How many of its messages match.
    pub message_count: u32,
}

/// A piece of a message around a match, on one line: `before` + `matched` + `after`, `matched`
/// being the query as the message writes it (for highlighting).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "SearchSnippet")]
pub struct Snippet {
    pub message_id: String,
    pub before: String,
    pub matched: String,
    pub after: String,
}

/// The characters shown on each side of a match.
const SNIPPET_CONTEXT: usize = 60;
const MAX_SEARCH_RESULTS: usize = 100;

impl Snippet {
    /// The first place `query` is in `text` (ignoring case), with some text on each side, on
    /// one line; the whole start of `text` when the match cannot be placed.
    fn around(message_id: String, text: &str, query: &str) -> Snippet {
        let flat: Vec<char> = text.chars().map(|c| if c.is_whitespace() { ' ' } else { c }).collect();
        let needle: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
        let lower = |c: &char| c.to_lowercase().collect::<Vec<_>>();
        // Positions by character; lower case of one character may be several (rare), so compare
        // character by character folded.
        let found = (0..flat.len()).find(|&start| {
            let mut folded = flat[start..].iter().flat_map(lower);
            needle.iter().all(|n| folded.next() == Some(*n))
        });
        let (start, len) = match found {
            Some(start) => {
                let mut len = 0;
                let mut folded = 0;
                while folded < needle.len() && start + len < flat.len() {
                    folded += lower(&flat[start + len]).len();
                    len += 1;
                }
                (start, len)
            }
            None => (0, 0),
        };
        let from = start.saturating_sub(SNIPPET_CONTEXT);
        let to = (start + len + SNIPPET_CONTEXT).min(flat.len());
        let piece = |a: usize, b: usize| flat[a..b].iter().collect::<String>();
        let mut before = piece(from, start);
        if from > 0 {
            before.insert(0, '…');
        }
        let mut after = piece(start + len, to);
        if to < flat.len() {
            after.push('…');
        }
        Snippet { message_id, before, matched: piece(start, start + len), after }
    }
}

pub const NEW_CHAT_TITLE: &str = "New chat";
/// Anthropic requires a reply budget; this one is generous for chat.
const MAX_REPLY_TOKENS: u32 = 4096;

pub struct Chats {
    db: Arc<Database>,
    attachments: Arc<Attachments>,
    completions: CompletionService,
    clock: Arc<dyn Clock>,
    save_dialog: Arc<dyn SaveDialog>,
    /// Where the providers' own keys are kept.
    vault: Arc<Vault>,
    /// Replies being written, by chat: one at a time per chat, each stoppable.
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// Removes a chat's entry from `running` when its reply ends, however it ends.
struct RunningGuard<'a> {
    chats: &'a Chats,
    chat_id: String,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.chats.running.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.chat_id);
    }
}

impl Chats {
    pub(crate) fn new(
        db: Arc<Database>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
        save_dialog: Arc<dyn SaveDialog>,
        vault: Arc<Vault>,
        attachments: Arc<Attachments>,
    ) -> Self {
        Chats { db, attachments, completions, clock, save_dialog, vault, running: Mutex::new(HashMap::new()) }
    }

    pub fn attachments(&self) -> &Attachments {
        &self.attachments
    }

    /// Checks and stores a file attached in the composer, for a message to send.
    pub fn attach(&self, name: &str, bytes: &[u8]) -> Result<AttachmentInfo> {
        self.attachments.add(name, bytes, self.now())
    }

    pub fn completions(&self) -> &CompletionService {
        &self.completions
    }

    fn now(&self) -> i64 {
        self.clock.now().as_millis()
    }

    /// Most recently active first.
    pub fn list(&self) -> Result<Vec<Chat>> {
        Ok(chats::list_chats(&*self.db.lock()?)?.into_iter().map(Chat::from).collect())
    }

    /// A new chat with `provider_id`; the model defaults to the provider's default, then its
    /// first; the system prompt to the provider's default.
    pub fn create(&self, provider_id: &str, new: NewChat) -> Result<Chat> {
        let NewChat { model, title, system_prompt } = new;
        let conn = self.db.lock()?;
        let provider = providers::get_provider(&conn, provider_id)?.ok_or_else(|| provider_not_found(provider_id))?;
        let model = match model.or_else(|| provider.default_model.clone()).or_else(|| provider.models.first().cloned())
        {
            Some(model) => model,
            None => return Err(ServiceError::invalid("model", Rule::NoModels)),
        };
        let now = self.now();
        let row = ChatRow {
            id: uuid::Uuid::new_v4().to_string(),
            title: title.unwrap_or_else(|| NEW_CHAT_TITLE.to_owned()),
            provider_id: Some(provider.id),
            model,
            created_at: now,
            updated_at: now,
            key_id: None,
            key_used_at: None,
            system_prompt: match system_prompt {
                Some(prompt) => Some(prompt).filter(|p| !p.trim().is_empty()),
                None => provider.system_prompt,
            },
        };
        chats::insert_chat(&conn, &row)?;
        Ok(Chat::from(row))
    }

    pub fn update(&self, id: &str, patch: ChatPatch) -> Result<Chat> {
        let conn = self.db.lock()?;
        if let Some(provider_id) = &patch.provider_id {
            if !providers::provider_exists(&conn, provider_id)? {
                return Err(provider_not_found(provider_id));
            }
        }
        let row = chats::update_chat(&conn, id, &patch.into(), self.now())?.ok_or_else(|| chat_not_found(id))?;
        Ok(Chat::from(row))
    }

    /// Deletes a chat and its messages, and the attachment files no other message uses; stops
    /// its reply and releases its key.
    pub fn delete(&self, id: &str) -> Result<()> {
        let unused = {
            let mut conn = self.db.lock()?;
            let tx = conn.transaction()?;
            let used = attachment_rows::used_by_chat(&tx, id)?;
            if !chats::delete_chat(&tx, id)? {
                return Err(chat_not_found(id));
            }
            let unused = attachment_rows::forget_unused(&tx, &used)?;
            tx.commit()?;
            unused
        };
        // Only once no row names them: a crash before this leaves files, never a dangling row.
        self.attachments.remove_files(&unused);
        self.stop_running(id);
        self.completions.pool().release_session(&SessionId::new(id));
        Ok(())
    }

    /// The chat was closed in the UI. Its key binding stays: a binding ends only when the chat
    /// is deleted, when its key becomes unavailable, or after the idle time, so switching away
    /// and back keeps the prompt cache warm. Kept for callers of the first contract.
    pub fn close(&self, id: &str) -> Result<()> {
        chats::get_chat(&*self.db.lock()?, id)?.ok_or_else(|| chat_not_found(id))?;
        Ok(())
    }

    /// A chat's messages in order.
    pub fn messages(&self, chat_id: &str) -> Result<Vec<Message>> {
        let conn = self.db.lock()?;
        chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
        let mut attachments = attachment_rows::of_chat(&conn, chat_id)?;
        Ok(chats::list_messages(&conn, chat_id)?
            .into_iter()
            .map(|row| {
                let linked = attachments.remove(&row.id).unwrap_or_default();
                Message::with_attachments(row, linked)
            })
            .collect())
    }

    /// Chats whose title or messages contain `query` (any case, any script), most recently
    /// active first, each with the first matching message cut around the match.
    pub fn search(&self, query: &str) -> Result<Vec<SearchResult>> {
        let conn = self.db.lock()?;
        let hits = chats::search(&conn, query.trim(), MAX_SEARCH_RESULTS)?;
        let mut results = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(chat) = chats::get_chat(&conn, &hit.chat_id)? else { continue };
            let snippet = hit.message.map(|(message_id, text)| Snippet::around(message_id, &text, query.trim()));
            let (in_title, message_count) = (hit.in_title, hit.message_count);
            results.push(SearchResult { chat: Chat::from(chat), in_title, snippet, message_count });
        }
        Ok(results)
    }

    /// Saves the chat as Markdown where the user chooses, each attachment as a file beside it
    /// (`{name}-{n}-{attachment}`) that the Markdown links to; `None` when they cancelled.
    pub async fn export_markdown(&self, chat_id: &str) -> Result<Option<(PathBuf, usize)>> {
        let (chat, messages, mut linked) = {
            let conn = self.db.lock()?;
            let chat = chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
            let messages = chats::list_messages(&conn, chat_id)?;
            (chat, messages, attachment_rows::of_chat(&conn, chat_id)?)
        };
        let Some(path) = self.save_dialog.choose(&format!("{}.md", file_name_of(&chat.title))).await else {
            return Ok(None);
        };
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "chat".into());
        let mut beside: HashMap<String, Vec<(String, bool)>> = HashMap::new();
        let mut count = 0;
        for message in &messages {
            for attachment in linked.remove(&message.id).unwrap_or_default() {
                count += 1;
                let file_name = format!("{stem}-{count}-{}", file_name_of(&attachment.name));
                let target = path.with_file_name(&file_name);
                let bytes = self.attachments.files().read(&attachment.file.sha256).map_err(ServiceError::Files)?;
                std::fs::write(&target, bytes).map_err(|error| ServiceError::cannot_write(&target, error))?;
                let is_image = attachment.file.kind == attachment_rows::AttachmentKind::Image;
                beside.entry(message.id.clone()).or_default().push((file_name, is_image));
            }
        }
        std::fs::write(&path, markdown_of(&chat, &messages, &beside))
            .map_err(|error| ServiceError::cannot_write(&path, error))?;
        Ok(Some((path, messages.len())))
    }

    /// Stops the chat's running reply; returns whether one was running.
    pub fn stop(&self, chat_id: &str) -> Result<bool> {
        chats::get_chat(&*self.db.lock()?, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
        Ok(self.stop_running(chat_id))
    }

    fn stop_running(&self, chat_id: &str) -> bool {
        match self.running.lock().unwrap_or_else(|e| e.into_inner()).get(chat_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Adds the user's message (or edits the last one, or answers it again) and writes the
    /// assistant's reply, telling `sink` what happens. Returns the reply as saved; a failed reply
    /// is saved as a message with its error. `Err` means nothing was sent (unknown chat, no
    /// provider, a reply in progress).
    pub async fn send(
        &self,
        chat_id: &str,
        turn: Turn,
        sink: &mut (dyn FnMut(ChatProgress) + Send),
    ) -> Result<Message> {
        let cancel = CancellationToken::new();
        let turn = self.checked(turn)?;
        let (mut request, user_message, pending) = {
            let mut conn = self.db.lock()?;
            let chat = chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
            let provider_id =
                chat.provider_id.clone().ok_or_else(|| ServiceError::invalid("chat_id", Rule::ProviderDeleted))?;
            let provider =
                providers::get_provider(&conn, &provider_id)?.ok_or_else(|| provider_not_found(&provider_id))?;
            {
                let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
                if running.contains_key(chat_id) {
                    return Err(ServiceError::Conflict(Conflict::ReplyInProgress));
                }
                running.insert(chat_id.to_owned(), cancel.clone());
            }
            let prepared = self.prepare(&mut conn, &chat, &provider, turn);
            if prepared.is_err() {
                self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(chat_id);
            }
            prepared?
        };
        let _running = RunningGuard { chats: self, chat_id: chat_id.to_owned() };
        // The files are read with the database unlocked.
        let mut user_attachments = Vec::new();
        for (index, linked) in pending {
            let mut sent = Vec::with_capacity(linked.len());
            for one in &linked {
                sent.push(self.attachments.to_send(one)?);
            }
            request.messages[index].attachments = sent;
            if index + 1 == request.messages.len() {
                user_attachments = linked;
            }
        }
        let carries_images = request.messages.iter().any(ChatMessage::has_images);
        if let Some(message) = user_message {
            sink(ChatProgress::UserMessage(Message::with_attachments(message, user_attachments)));
        }

        let outcome =
            self.completions.complete(&request, &mut |event| sink(ChatProgress::Completion(event)), &cancel).await;
        let (status, error, error_code, error_details) = match &outcome.end {
            StopReason::Finished => (chats::MessageStatus::Complete, None, None, None),
            StopReason::Cancelled => (chats::MessageStatus::Stopped, None, None, None),
            StopReason::Failed(error) => (
                chats::MessageStatus::Error,
                Some(error.to_string()),
                Some(error.code().to_owned()),
                Some(ReplyError::of_request(error, carries_images).to_stored()),
            ),
        };
        if let Some(error) = &error {
            tracing::info!(chat = chat_id, %error, "reply failed");
        }
        // A reply no key could serve names no key; otherwise the key that produced (or failed) it.
        let answered_by = match (&outcome.end, outcome.attempts) {
            (StopReason::Failed(error), _) if error.code() == "no_available_key" => None,
            (_, 0) => None,
            _ => outcome.key_label.clone(),
        };
        let provider_key = answered_by.is_some() && outcome.key_id.is_none();
        let reply = MessageRow {
            id: uuid::Uuid::new_v4().to_string(),
            chat_id: chat_id.to_owned(),
            role: chats::Role::Assistant,
            content: outcome.text,
            status,
            error,
            error_code,
            error_details,
            key_label: answered_by,
            provider_key,
            created_at: self.now(),
            usage: outcome.usage.map(|u| MessageUsage { input: u.input, cached: u.cached, output: u.output }),
        };
        {
            let conn = self.db.lock()?;
            // The chat may have been deleted while the reply was written; then there is nothing to save.
            if chats::get_chat(&conn, chat_id)?.is_some() {
                chats::insert_message(&conn, &reply)?;
                // The chat stays on the key that served it, across restarts too.
                if let Some(key) = outcome.key_id.as_ref().filter(|_| outcome.attempts > 0) {
                    chats::set_chat_key(&conn, chat_id, Some(key.as_str()), self.now())?;
                }
            }
        }
        Ok(Message::from(reply))
    }

    /// Saves the user's message (or edits the last one, or clears the replies to answer it
    /// again) and builds the request.
    fn prepare(
        &self,
        conn: &mut keypool_store::rusqlite::Connection,
        chat: &ChatRow,
        provider: &ProviderRow,
        turn: Turn,
    ) -> Result<(CompletionRequest, Option<MessageRow>, Pending)> {
        let tx = conn.transaction()?;
        let now = self.now();
        let user_message = match turn {
            Turn::Edit(content, attachments) => {
                let edited = chats::edit_last_question(&tx, &chat.id, &content)?;
                let edited = edited.ok_or_else(|| ServiceError::invalid("content", Rule::NothingToAnswer))?;
                if let Some(attachments) = attachments {
                    attachment_rows::link(&tx, &edited.id, &pairs(&attachments))?;
                }
                Some(edited)
            }
            Turn::Ask(content, attachments) => {
                let row = MessageRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    chat_id: chat.id.clone(),
                    role: chats::Role::User,
                    content: content.clone(),
                    status: chats::MessageStatus::Complete,
                    error: None,
                    error_code: None,
                    error_details: None,
                    key_label: None,
                    provider_key: false,
                    created_at: now,
                    usage: None,
                };
                chats::insert_message(&tx, &row)?;
                attachment_rows::link(&tx, &row.id, &pairs(&attachments))?;
                if chat.title == NEW_CHAT_TITLE && !content.trim().is_empty() {
                    let patch = chats::ChatPatch { title: Some(title_from(&content)), ..Default::default() };
                    chats::update_chat(&tx, &chat.id, &patch, now)?;
                }
                Some(row)
            }
            Turn::AnswerAgain => {
                chats::delete_replies_after_last_question(&tx, &chat.id)?;
                None
            }
        };
        let history = chats::list_messages(&tx, &chat.id)?;
        if history.last().is_none_or(|m| m.role != chats::Role::User) {
            return Err(ServiceError::invalid("content", Rule::NothingToAnswer));
        }
        let mut linked = attachment_rows::of_chat(&tx, &chat.id)?;
        tx.commit()?;
        let system =
            chat.system_prompt.iter().map(|prompt| ChatMessage::new(keypool_llm::Role::System, prompt.clone()));
        let history = history.into_iter().filter(|m| {
            m.role == chats::Role::User || (m.status != chats::MessageStatus::Error && !m.content.is_empty())
        });
        let mut messages: Vec<ChatMessage> = system.collect();
        let mut pending = Vec::new();
        for m in history {
            if let Some(attached) = linked.remove(&m.id).filter(|a| !a.is_empty()) {
                pending.push((messages.len(), attached));
            }
            let role = match m.role {
                chats::Role::User => keypool_llm::Role::User,
                chats::Role::Assistant => keypool_llm::Role::Assistant,
            };
            messages.push(ChatMessage::new(role, m.content));
        }
        // The key the chat had, unless it sat idle longer than a prompt cache lives.
        let idle = self.completions.pool().binding_idle();
        let remembered = chat
            .key_id
            .as_ref()
            .filter(|_| chat.key_used_at.is_some_and(|at| now.saturating_sub(at) <= idle.as_millis() as i64))
            .map(|key| KeyId::new(key.as_str()));
        let request = CompletionRequest {
            session: SessionId::new(chat.id.as_str()),
            endpoint: endpoint_of(provider, &self.vault)?,
            model: chat.model.clone(),
            messages,
            max_tokens: MAX_REPLY_TOKENS,
            stream: true,
            source: "chat".into(),
            preferred_key: remembered,
        };
        Ok((request, user_message, pending))
    }

    /// `turn` with its attachments checked (each attached before, at most ten), before the
    /// database is locked for the send.
    fn checked(&self, turn: Turn) -> Result<Turn> {
        let check = |attachments: Vec<AttachmentRef>| -> Result<Vec<AttachmentRef>> {
            let pairs: Vec<(String, String)> = attachments.into_iter().map(|a| (a.id, a.name)).collect();
            Ok(self.attachments.check(&pairs)?.into_iter().map(|(id, name)| AttachmentRef { id, name }).collect())
        };
        Ok(match turn {
            Turn::Ask(content, attachments) => {
                if content.trim().is_empty() && attachments.is_empty() {
                    return Err(ServiceError::invalid("content", Rule::NothingToAnswer));
                }
                Turn::Ask(content, check(attachments)?)
            }
            Turn::Edit(content, Some(attachments)) => Turn::Edit(content, Some(check(attachments)?)),
            other => other,
        })
    }
}

/// The attachments of the turns to send, by their index in the request's messages, not yet read.
type Pending = Vec<(usize, Vec<LinkedAttachment>)>;

fn pairs(attachments: &[AttachmentRef]) -> Vec<(String, String)> {
    attachments.iter().map(|a| (a.id.clone(), a.name.clone())).collect()
}

/// A file name from a chat's title: no path separators or characters file systems refuse.
fn file_name_of(title: &str) -> String {
    let name: String =
        title.chars().map(|c| if c.is_control() || r#"/\:*?"<>|"#.contains(c) { '_' } else { c }).take(80).collect();
    let name = name.trim().trim_start_matches('.');
    if name.is_empty() {
        "chat".to_owned()
    } else {
        name.to_owned()
    }
}

/// A chat as Markdown: its title, model and system prompt, then each message under its role,
/// with links to its attachments' files (`beside`, by message id: file name, whether an image).
fn markdown_of(chat: &ChatRow, messages: &[MessageRow], beside: &HashMap<String, Vec<(String, bool)>>) -> String {
    let mut out = format!(
        "# {}

",
        chat.title.trim()
    );
    out.push_str(&format!(
        "Model: `{}`

",
        chat.model
    ));
    if let Some(prompt) = &chat.system_prompt {
        out.push_str(
            "## System

",
        );
        out.push_str(prompt.trim_end());
        out.push_str("\n\n");
    }
    for message in messages {
        let heading = match message.role {
            chats::Role::User => "## User",
            chats::Role::Assistant => "## Assistant",
        };
        out.push_str(heading);
        out.push_str("\n\n");
        out.push_str(message.content.trim_end());
        for (file_name, is_image) in beside.get(&message.id).into_iter().flatten() {
            let bang = if *is_image { "!" } else { "" };
            out.push_str(&format!("\n\n{bang}[{file_name}](<{file_name}>)"));
        }
        if message.status == chats::MessageStatus::Stopped {
            out.push_str("\n\n_(stopped)_");
        }
        if let Some(error) = &message.error {
            out.push_str(&format!("\n\n> Error: {error}"));
        }
        out.push_str("\n\n");
    }
    out
}

/// The first line of the first message, shortened: the chat's automatic title.
fn title_from(content: &str) -> String {
    let line = content.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(NEW_CHAT_TITLE);
    let mut title: String = line.chars().take(48).collect();
    if line.chars().count() > 48 {
        title.push('…');
    }
    title
}

fn chat_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("chat", id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_cuts_around_the_match_as_written() {
        let s = Snippet::around("m".into(), "Line one\nWe ate BORSCHT today", "borscht");
        assert_eq!(
            (s.before.as_str(), s.matched.as_str(), s.after.as_str()),
            ("Line one We ate ", "BORSCHT", " today")
        );
        // `İ` lower-cases to two characters: the match still covers whole characters.
        let s = Snippet::around("m".into(), "in İstanbul now", "i̇stanbul");
        assert_eq!(s.matched, "İstanbul", "folded width differs from the written one");
        let s = Snippet::around("m".into(), &"x".repeat(500), "zzz");
        assert_eq!((s.matched.as_str(), s.before.as_str()), ("", ""), "no match: the start of the text");
        assert!(s.after.ends_with('…'), "cut");
    }

    #[test]
    fn file_names_drop_what_file_systems_refuse() {
        assert_eq!(file_name_of("a/b\\c: d?"), "a_b_c_ d_");
        assert_eq!(file_name_of("..."), "chat");
        assert_eq!(file_name_of("  Привет  "), "Привет");
    }
}
