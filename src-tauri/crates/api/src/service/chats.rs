//! Chats: persisted conversations whose replies come from the completion service.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use keypool::{Clock, KeyId, SessionId};
use keypool_llm::{CancellationToken, ChatMessage, CompletionEvent, CompletionRequest, CompletionService, StopReason};
use keypool_store::chats::{self, ChatPatch, ChatRow, MessageRow, MessageStatus, MessageUsage, Role};
use keypool_store::providers::{self, ProviderRow};
use keypool_store::Database;

use super::providers::{endpoint_of, provider_not_found};
use super::{IssueCode, Result, ServiceError};

/// What happens while a reply is written, in order: the user's message as saved (unless
/// retrying), then the completion's events. The reply as saved is what [`Chats::send`] returns.
#[derive(Debug, Clone)]
pub enum ChatProgress {
    UserMessage(MessageRow),
    Completion(CompletionEvent),
}

pub const NEW_CHAT_TITLE: &str = "New chat";
/// Anthropic requires a reply budget; this one is generous for chat.
const MAX_REPLY_TOKENS: u32 = 4096;

pub struct Chats {
    db: Arc<Database>,
    completions: CompletionService,
    clock: Arc<dyn Clock>,
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
    pub(crate) fn new(db: Arc<Database>, completions: CompletionService, clock: Arc<dyn Clock>) -> Self {
        Chats { db, completions, clock, running: Mutex::new(HashMap::new()) }
    }

    pub fn completions(&self) -> &CompletionService {
        &self.completions
    }

    fn now(&self) -> i64 {
        self.clock.now().as_millis()
    }

    /// Most recently active first.
    pub fn list(&self) -> Result<Vec<ChatRow>> {
        Ok(chats::list_chats(&*self.db.lock()?)?)
    }

    /// A new chat with `provider_id`; the model defaults to the provider's default, then its first.
    pub fn create(&self, provider_id: &str, model: Option<String>, title: Option<String>) -> Result<ChatRow> {
        let conn = self.db.lock()?;
        let provider = providers::get_provider(&conn, provider_id)?.ok_or_else(|| provider_not_found(provider_id))?;
        let model = match model.or_else(|| provider.default_model.clone()).or_else(|| provider.models.first().cloned())
        {
            Some(model) => model,
            None => return Err(ServiceError::invalid("model", IssueCode::NoModels)),
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
        };
        chats::insert_chat(&conn, &row)?;
        Ok(row)
    }

    pub fn update(&self, id: &str, patch: ChatPatch) -> Result<ChatRow> {
        let conn = self.db.lock()?;
        if let Some(provider_id) = &patch.provider_id {
            if !providers::provider_exists(&conn, provider_id)? {
                return Err(provider_not_found(provider_id));
            }
        }
        chats::update_chat(&conn, id, &patch, self.now())?.ok_or_else(|| chat_not_found(id))
    }

    /// Deletes a chat and its messages; stops its reply and releases its key.
    pub fn delete(&self, id: &str) -> Result<()> {
        if !chats::delete_chat(&*self.db.lock()?, id)? {
            return Err(chat_not_found(id));
        }
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
    pub fn messages(&self, chat_id: &str) -> Result<Vec<MessageRow>> {
        let conn = self.db.lock()?;
        chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
        Ok(chats::list_messages(&conn, chat_id)?)
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

    /// Adds the user's message (or, without `content`, retries the last one) and writes the
    /// assistant's reply, telling `sink` what happens. Returns the reply as saved; a failed reply
    /// is saved as a message with its error. `Err` means nothing was sent (unknown chat, no
    /// provider, a reply in progress).
    pub async fn send(
        &self,
        chat_id: &str,
        content: Option<String>,
        sink: &mut (dyn FnMut(ChatProgress) + Send),
    ) -> Result<MessageRow> {
        let cancel = CancellationToken::new();
        let (request, user_message) = {
            let mut conn = self.db.lock()?;
            let chat = chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
            let provider_id =
                chat.provider_id.clone().ok_or_else(|| ServiceError::invalid("chat_id", IssueCode::ProviderDeleted))?;
            let provider =
                providers::get_provider(&conn, &provider_id)?.ok_or_else(|| provider_not_found(&provider_id))?;
            {
                let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
                if running.contains_key(chat_id) {
                    return Err(ServiceError::Conflict("a reply is already being written in this chat".into()));
                }
                running.insert(chat_id.to_owned(), cancel.clone());
            }
            let prepared = self.prepare(&mut conn, &chat, &provider, content);
            if prepared.is_err() {
                self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(chat_id);
            }
            prepared?
        };
        let _running = RunningGuard { chats: self, chat_id: chat_id.to_owned() };
        if let Some(message) = user_message {
            sink(ChatProgress::UserMessage(message));
        }

        let outcome =
            self.completions.complete(&request, &mut |event| sink(ChatProgress::Completion(event)), &cancel).await;
        let (status, error, error_code) = match &outcome.end {
            StopReason::Finished => (MessageStatus::Complete, None, None),
            StopReason::Cancelled => (MessageStatus::Stopped, None, None),
            StopReason::Failed(error) => (MessageStatus::Error, Some(error.to_string()), Some(error.code().to_owned())),
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
            role: Role::Assistant,
            content: outcome.text,
            status,
            error,
            error_code,
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
        Ok(reply)
    }

    /// Saves the user's message (or clears failed replies for a retry) and builds the request.
    fn prepare(
        &self,
        conn: &mut keypool_store::rusqlite::Connection,
        chat: &ChatRow,
        provider: &ProviderRow,
        content: Option<String>,
    ) -> Result<(CompletionRequest, Option<MessageRow>)> {
        let tx = conn.transaction()?;
        let now = self.now();
        let user_message = match content {
            Some(content) => {
                let row = MessageRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    chat_id: chat.id.clone(),
                    role: Role::User,
                    content: content.clone(),
                    status: MessageStatus::Complete,
                    error: None,
                    error_code: None,
                    key_label: None,
                    provider_key: false,
                    created_at: now,
                    usage: None,
                };
                chats::insert_message(&tx, &row)?;
                if chat.title == NEW_CHAT_TITLE {
                    let patch = ChatPatch { title: Some(title_from(&content)), ..ChatPatch::default() };
                    chats::update_chat(&tx, &chat.id, &patch, now)?;
                }
                Some(row)
            }
            None => {
                chats::delete_trailing_failed_replies(&tx, &chat.id)?;
                None
            }
        };
        let history = chats::list_messages(&tx, &chat.id)?;
        if history.last().is_none_or(|m| m.role != Role::User) {
            return Err(ServiceError::invalid("content", IssueCode::NothingToAnswer));
        }
        tx.commit()?;
        let messages = history
            .into_iter()
            .filter(|m| m.role == Role::User || (m.status != MessageStatus::Error && !m.content.is_empty()))
            .map(|m| ChatMessage {
                role: match m.role {
                    Role::User => keypool_llm::Role::User,
                    Role::Assistant => keypool_llm::Role::Assistant,
                },
                content: m.content,
            })
            .collect();
        // The key the chat had, unless it sat idle longer than a prompt cache lives.
        let idle = self.completions.pool().binding_idle();
        let remembered = chat
            .key_id
            .as_ref()
            .filter(|_| chat.key_used_at.is_some_and(|at| now.saturating_sub(at) <= idle.as_millis() as i64))
            .map(|key| KeyId::new(key.as_str()));
        let request = CompletionRequest {
            session: SessionId::new(chat.id.as_str()),
            endpoint: endpoint_of(provider)?,
            model: chat.model.clone(),
            messages,
            max_tokens: MAX_REPLY_TOKENS,
            stream: true,
            source: "chat".into(),
            preferred_key: remembered,
        };
        Ok((request, user_message))
    }
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
