//! Chats: persisted conversations whose replies come from the completion service.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use keypool::{Clock, KeyPool, ProviderId, SecretResolver, SessionId};
use keypool_llm::{
    CancellationToken, ChatMessage, CompletionRequest, CompletionService, ProbeResult, ProviderEndpoint, ProviderKind,
    Role, StopReason,
};
use keypool_store::chats::{self, ChatPatch, ChatRow, MessageRow};
use keypool_store::providers::{self, ProviderRow};
use keypool_store::{api_keys, Database};

use super::dto::{ChatDto, ChatEvent, MessageDto, StoppedDto};
use crate::error::Issue;
use crate::llm_config::{DeletedDto, ServiceError};

type Result<T, E = ServiceError> = std::result::Result<T, E>;

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
    pub fn new(db: Arc<Database>, pool: Arc<KeyPool>, clock: Arc<dyn Clock>, resolver: Arc<dyn SecretResolver>) -> Self {
        let completions = CompletionService::new(pool, clock.clone(), resolver);
        Chats { db, completions, clock, running: Mutex::new(HashMap::new()) }
    }

    pub fn completions(&self) -> &CompletionService {
        &self.completions
    }

    fn now(&self) -> i64 {
        self.clock.now().as_millis()
    }

    pub fn list(&self) -> Result<Vec<ChatDto>> {
        Ok(chats::list_chats(&*self.db.lock()?)?.into_iter().map(ChatDto::from).collect())
    }

    pub fn create(&self, provider_id: &str, model: Option<String>, title: Option<String>) -> Result<ChatDto> {
        let conn = self.db.lock()?;
        let provider = providers::get_provider(&conn, provider_id)?.ok_or_else(|| provider_not_found(provider_id))?;
        let model = match model.or_else(|| provider.default_model.clone()).or_else(|| provider.models.first().cloned()) {
            Some(model) => model,
            None => {
                return Err(ServiceError::Invalid(vec![Issue {
                    path: "model".into(),
                    message: "the provider lists no models: give one".into(),
                }]))
            }
        };
        let now = self.now();
        let row = ChatRow {
            id: uuid::Uuid::new_v4().to_string(),
            title: title.unwrap_or_else(|| NEW_CHAT_TITLE.to_owned()),
            provider_id: Some(provider.id),
            model,
            created_at: now,
            updated_at: now,
        };
        chats::insert_chat(&conn, &row)?;
        Ok(row.into())
    }

    pub fn update(&self, id: &str, patch: ChatPatch) -> Result<ChatDto> {
        let conn = self.db.lock()?;
        if let Some(provider_id) = &patch.provider_id {
            if !providers::provider_exists(&conn, provider_id)? {
                return Err(provider_not_found(provider_id));
            }
        }
        Ok(chats::update_chat(&conn, id, &patch, self.now())?.ok_or_else(|| chat_not_found(id))?.into())
    }

    /// Deletes a chat and its messages; stops its reply and releases its key.
    pub fn delete(&self, id: &str) -> Result<DeletedDto> {
        if !chats::delete_chat(&*self.db.lock()?, id)? {
            return Err(chat_not_found(id));
        }
        self.stop_running(id);
        self.completions.pool().release_session(&SessionId::new(id));
        Ok(DeletedDto { id: id.to_owned() })
    }

    /// The chat was closed in the UI: its key binding is released (the next message picks anew).
    pub fn close(&self, id: &str) -> Result<DeletedDto> {
        chats::get_chat(&*self.db.lock()?, id)?.ok_or_else(|| chat_not_found(id))?;
        self.completions.pool().release_session(&SessionId::new(id));
        Ok(DeletedDto { id: id.to_owned() })
    }

    pub fn messages(&self, chat_id: &str) -> Result<Vec<MessageDto>> {
        let conn = self.db.lock()?;
        chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
        Ok(chats::list_messages(&conn, chat_id)?.into_iter().map(MessageDto::from).collect())
    }

    pub fn stop(&self, chat_id: &str) -> Result<StoppedDto> {
        chats::get_chat(&*self.db.lock()?, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
        Ok(StoppedDto { chat_id: chat_id.to_owned(), stopped: self.stop_running(chat_id) })
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
    /// assistant's reply, streaming events to `sink`. A failed reply is saved as a message with
    /// its error; `Err` means nothing was sent (unknown chat, no provider, a reply in progress).
    pub async fn send(
        &self,
        chat_id: &str,
        content: Option<String>,
        sink: &mut (dyn FnMut(ChatEvent) + Send),
    ) -> Result<MessageDto> {
        let cancel = CancellationToken::new();
        let (request, user_message) = {
            let mut conn = self.db.lock()?;
            let chat = chats::get_chat(&conn, chat_id)?.ok_or_else(|| chat_not_found(chat_id))?;
            let provider_id = chat.provider_id.clone().ok_or_else(|| {
                ServiceError::Invalid(vec![Issue {
                    path: "chatId".into(),
                    message: "this chat's provider was deleted: choose another provider for it".into(),
                }])
            })?;
            let provider = providers::get_provider(&conn, &provider_id)?.ok_or_else(|| provider_not_found(&provider_id))?;
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
            sink(ChatEvent::UserMessage { message });
        }

        let outcome = self.completions.complete(&request, &mut |event| sink(event.into()), &cancel).await;
        let (status, error, error_code) = match &outcome.end {
            StopReason::Finished => ("complete", None, None),
            StopReason::Cancelled => ("stopped", None, None),
            StopReason::Failed(error) => ("error", Some(error.to_string()), Some(error.code().to_owned())),
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
            role: "assistant".into(),
            content: outcome.text,
            status: status.into(),
            error,
            error_code,
            key_label: answered_by,
            provider_key,
            created_at: self.now(),
        };
        {
            let conn = self.db.lock()?;
            // The chat may have been deleted while the reply was written; then there is nothing to save.
            if chats::get_chat(&conn, chat_id)?.is_some() {
                chats::insert_message(&conn, &reply)?;
            }
        }
        let message = MessageDto::from(reply);
        sink(ChatEvent::Finished { message: message.clone() });
        Ok(message)
    }

    /// Saves the user's message (or clears failed replies for a retry) and builds the request.
    fn prepare(
        &self,
        conn: &mut keypool_store::rusqlite::Connection,
        chat: &ChatRow,
        provider: &ProviderRow,
        content: Option<String>,
    ) -> Result<(CompletionRequest, Option<MessageDto>)> {
        let tx = conn.transaction()?;
        let now = self.now();
        let user_message = match content {
            Some(content) => {
                let row = MessageRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    chat_id: chat.id.clone(),
                    role: "user".into(),
                    content: content.clone(),
                    status: "complete".into(),
                    error: None,
                    error_code: None,
                    key_label: None,
                    provider_key: false,
                    created_at: now,
                };
                chats::insert_message(&tx, &row)?;
                if chat.title == NEW_CHAT_TITLE {
                    let patch = ChatPatch { title: Some(title_from(&content)), ..ChatPatch::default() };
                    chats::update_chat(&tx, &chat.id, &patch, now)?;
                }
                Some(MessageDto::from(row))
            }
            None => {
                chats::delete_trailing_failed_replies(&tx, &chat.id)?;
                None
            }
        };
        let history = chats::list_messages(&tx, &chat.id)?;
        if history.last().is_none_or(|m| m.role != "user") {
            return Err(ServiceError::Invalid(vec![Issue {
                path: "content".into(),
                message: "there is no message to answer: write one".into(),
            }]));
        }
        tx.commit()?;
        let messages = history
            .into_iter()
            .filter(|m| m.role == "user" || (m.status != "error" && !m.content.is_empty()))
            .map(|m| ChatMessage { role: if m.role == "user" { Role::User } else { Role::Assistant }, content: m.content })
            .collect();
        let request = CompletionRequest {
            session: SessionId::new(chat.id.as_str()),
            endpoint: endpoint_of(provider)?,
            model: chat.model.clone(),
            messages,
            max_tokens: MAX_REPLY_TOKENS,
            stream: true,
        };
        Ok((request, user_message))
    }

    /// Probes one pool key against its provider; no chat's binding changes.
    pub async fn test_api_key(&self, key_id: &str) -> Result<ProbeResult> {
        let (endpoint, key) = {
            let conn = self.db.lock()?;
            let key = api_keys::get_api_key(&conn, key_id)?
                .ok_or_else(|| ServiceError::not_found("API key", key_id))?;
            let provider =
                providers::get_provider(&conn, &key.provider_id)?.ok_or_else(|| provider_not_found(&key.provider_id))?;
            (endpoint_of(&provider)?, key.api_key)
        };
        Ok(self.completions.probe(&endpoint, &key).await)
    }
}

/// How to reach a stored provider.
pub fn endpoint_of(provider: &ProviderRow) -> Result<ProviderEndpoint> {
    let kind = ProviderKind::parse(&provider.kind).ok_or_else(|| {
        ServiceError::Invalid(vec![Issue { path: "kind".into(), message: format!("unknown provider kind {}", provider.kind) }])
    })?;
    Ok(ProviderEndpoint {
        id: ProviderId::new(provider.id.as_str()),
        name: provider.name.clone(),
        kind,
        base_url: provider.base_url.clone(),
        provider_key: provider.api_key.clone(),
    })
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

fn provider_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("provider", id)
}
