//! Which conversation a relayed request belongs to, for keeping it on one key: one the client
//! names itself, one a coding agent names, or one named by how it starts.

use axum::http::HeaderMap;
use keypool::SessionId;
use keypool_llm::wire::{ConversationName, Peek, WireFormat};

use crate::MAX_SESSION_BYTES;

/// How many sessions a worker keeps the names of.
pub(crate) const KNOWN: usize = 64;

/// A request's conversation, by who named it. Its [`SessionId`] keeps the words it has always
/// had (`api:session:…`, `agent:session:…`, `api:<hash>`), so a conversation keeps its key (and
/// its team binding) through an upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Session<'a> {
    /// The client's `x-keypool-session`.
    Named(&'a str),
    /// A coding agent's own session id (see [`Session::of_agent`]).
    Agent(&'a str),
    /// No one named it: the hash of how it starts ([`Peek::conversation`]).
    Started(ConversationName),
}

impl<'a> Session<'a> {
    /// The client's `x-keypool-session`, if it sent one: text of at most [`MAX_SESSION_BYTES`]
    /// (`Err`: why it is refused).
    pub(crate) fn named(headers: &'a HeaderMap) -> Result<Option<Session<'a>>, String> {
        match headers.get("x-keypool-session").map(|v| v.to_str()) {
            None => Ok(None),
            Some(Ok(session)) if session.len() <= MAX_SESSION_BYTES => Ok(Some(Session::Named(session))),
            Some(_) => Err(format!("x-keypool-session must be text of at most {MAX_SESSION_BYTES} bytes")),
        }
    }

    /// The session a coding agent names: Claude Code's `x-claude-code-session-id`, then the one
    /// in its `metadata.user_id`; Codex's `session-id` header, then the body's
    /// `prompt_cache_key` (Codex: the same id). Each at most [`MAX_SESSION_BYTES`].
    pub(crate) fn of_agent(
        headers: &'a HeaderMap,
        peek: &'a Peek<'_>,
        claude: &'a Option<String>,
    ) -> Option<Session<'a>> {
        let fits = |id: &&str| !id.is_empty() && id.len() <= MAX_SESSION_BYTES;
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).filter(fits);
        header("x-claude-code-session-id")
            .or_else(|| claude.as_deref().filter(fits))
            .or_else(|| header("session-id"))
            .or_else(|| peek.prompt_cache_key().filter(fits))
            .map(Session::Agent)
    }

    /// Named by how it starts, in `format`.
    pub(crate) fn started(peek: &Peek<'_>, format: WireFormat) -> Session<'a> {
        Session::Started(peek.conversation(format))
    }

    /// The pool's name for it: one of `known` when it is there (a conversation's requests name
    /// the same one; its text is made once), else made and kept there (the last [`KNOWN`]).
    pub(crate) fn id(self, known: &std::sync::Mutex<Vec<SessionId>>) -> SessionId {
        let mut text = [0u8; 16 + MAX_SESSION_BYTES];
        let (prefix, id) = match &self {
            Session::Named(name) => ("api:session:", *name),
            Session::Agent(id) => ("agent:session:", *id),
            Session::Started(name) => ("", name.as_str()),
        };
        let length = prefix.len() + id.len();
        text[..prefix.len()].copy_from_slice(prefix.as_bytes());
        text[prefix.len()..length].copy_from_slice(id.as_bytes());
        // Two whole strings, each of at most its bound.
        let text = std::str::from_utf8(&text[..length]).unwrap_or_default();
        let mut known = known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = known.iter().find(|id| id.as_str() == text) {
            return id.clone();
        }
        let id = SessionId::new(text);
        if known.len() >= KNOWN {
            known.remove(0);
        }
        known.push(id.clone());
        id
    }
}
