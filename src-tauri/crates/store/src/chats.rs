//! The `chats` and `messages` tables.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, OptionalExtension, Row};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// How a message ended: `Stopped` by the user, `Error` with its error beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageStatus {
    Complete,
    Stopped,
    Error,
}

/// Text columns with a CHECK constraint map to these enums and back.
macro_rules! text_enum {
    ($ty:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),* }
            }
        }
        impl ToSql for $ty {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }
        impl FromSql for $ty {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                match value.as_str()? {
                    $($text => Ok($ty::$variant),)*
                    other => Err(FromSqlError::Other(format!("unknown {} {other:?}", stringify!($ty)).into())),
                }
            }
        }
    };
}

text_enum!(Role { User = "user", Assistant = "assistant" });
text_enum!(MessageStatus { Complete = "complete", Stopped = "stopped", Error = "error" });

#[derive(Debug, Clone)]
pub struct ChatRow {
    pub id: String,
    pub title: String,
    pub provider_id: Option<String>,
    pub model: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The key the chat is kept on, and when it last answered: the binding survives restarts.
    pub key_id: Option<String>,
    pub key_used_at: Option<i64>,
    /// Sent before the conversation, as the system message.
    pub system_prompt: Option<String>,
}

#[derive(Debug, Clone)]
pub struct MessageRow {
    pub id: String,
    pub chat_id: String,
    pub role: Role,
    pub content: String,
    pub status: MessageStatus,
    pub error: Option<String>,
    pub error_code: Option<String>,
    /// The error as structured JSON (a code with parameters), for the UI to word.
    pub error_details: Option<String>,
    pub key_label: Option<String>,
    /// Answered with the provider-level key rather than a pool key.
    pub provider_key: bool,
    pub created_at: i64,
    /// What the reply used, as the provider reported it.
    pub usage: Option<MessageUsage>,
}

/// The tokens a reply used; `input` counts every prompt token, cached ones included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageUsage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

/// Fields to change; `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct ChatPatch {
    pub title: Option<String>,
    pub provider_id: Option<String>,
    pub model: Option<String>,
    /// `Some(None)` removes the system prompt.
    pub system_prompt: Option<Option<String>>,
}

fn chat_from(row: &Row<'_>) -> rusqlite::Result<ChatRow> {
    Ok(ChatRow {
        id: row.get(0)?,
        title: row.get(1)?,
        provider_id: row.get(2)?,
        model: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
        key_id: row.get(6)?,
        key_used_at: row.get(7)?,
        system_prompt: row.get(8)?,
    })
}

fn message_from(row: &Row<'_>) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        id: row.get(0)?,
        chat_id: row.get(1)?,
        role: row.get(2)?,
        content: row.get(3)?,
        status: row.get(4)?,
        error: row.get(5)?,
        error_code: row.get(6)?,
        key_label: row.get(7)?,
        created_at: row.get(8)?,
        provider_key: row.get(9)?,
        usage: match (row.get::<_, Option<u64>>(10)?, row.get::<_, Option<u64>>(11)?, row.get::<_, Option<u64>>(12)?) {
            (Some(input), cached, output) => {
                Some(MessageUsage { input, cached: cached.unwrap_or(0), output: output.unwrap_or(0) })
            }
            _ => None,
        },
        error_details: row.get(13)?,
    })
}

const CHAT_COLUMNS: &str = "id, title, provider_id, model, created_at, updated_at, key_id, key_used_at, system_prompt";
const MESSAGE_COLUMNS: &str =
    "id, chat_id, role, content, status, error, error_code, key_label, created_at, provider_key, \
                               input_tokens, cached_tokens, output_tokens, error_details";

/// Most recently active first.
pub fn list_chats(conn: &Connection) -> rusqlite::Result<Vec<ChatRow>> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {CHAT_COLUMNS} FROM chats ORDER BY updated_at DESC, id"))?;
    let rows = stmt.query_map([], chat_from)?;
    rows.collect()
}

pub fn get_chat(conn: &Connection, id: &str) -> rusqlite::Result<Option<ChatRow>> {
    conn.query_row(&format!("SELECT {CHAT_COLUMNS} FROM chats WHERE id = ?1"), [id], chat_from).optional()
}

pub fn insert_chat(conn: &Connection, chat: &ChatRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO chats (id, title, provider_id, model, created_at, updated_at, system_prompt) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            chat.id,
            chat.title,
            chat.provider_id,
            chat.model,
            chat.created_at,
            chat.updated_at,
            chat.system_prompt
        ],
    )?;
    Ok(())
}

pub fn update_chat(conn: &Connection, id: &str, patch: &ChatPatch, now: i64) -> rusqlite::Result<Option<ChatRow>> {
    let changed = conn.execute(
        "UPDATE chats SET title = COALESCE(?2, title), provider_id = COALESCE(?3, provider_id), \
         model = COALESCE(?4, model), system_prompt = CASE WHEN ?6 THEN ?7 ELSE system_prompt END, \
         updated_at = ?5 WHERE id = ?1",
        params![
            id,
            patch.title,
            patch.provider_id,
            patch.model,
            now,
            patch.system_prompt.is_some(),
            patch.system_prompt.clone().flatten()
        ],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    get_chat(conn, id)
}

pub fn delete_chat(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM chats WHERE id = ?1", [id])? > 0)
}

/// A chat's messages in the order they were written.
pub fn list_messages(conn: &Connection, chat_id: &str) -> rusqlite::Result<Vec<MessageRow>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE chat_id = ?1 ORDER BY seq"))?;
    let rows = stmt.query_map([chat_id], message_from)?;
    rows.collect()
}

pub fn insert_message(conn: &Connection, message: &MessageRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO messages (id, chat_id, role, content, status, error, error_code, key_label, created_at, provider_key, \
         input_tokens, cached_tokens, output_tokens, error_details) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            message.id,
            message.chat_id,
            message.role,
            message.content,
            message.status,
            message.error,
            message.error_code,
            message.key_label,
            message.created_at,
            message.provider_key,
            message.usage.map(|u| u.input),
            message.usage.map(|u| u.cached),
            message.usage.map(|u| u.output),
            message.error_details
        ],
    )?;
    conn.execute(
        "UPDATE chats SET updated_at = MAX(updated_at, ?2) WHERE id = ?1",
        params![message.chat_id, message.created_at],
    )?;
    Ok(())
}

/// Records the key a chat is kept on (`None`: none), and when it last served it.
pub fn set_chat_key(conn: &Connection, chat_id: &str, key_id: Option<&str>, at: i64) -> rusqlite::Result<()> {
    conn.execute("UPDATE chats SET key_id = ?2, key_used_at = ?3 WHERE id = ?1", params![chat_id, key_id, at])?;
    Ok(())
}

/// Removes every reply after the chat's last user message (before answering it again);
/// returns how many.
pub fn delete_replies_after_last_question(conn: &Connection, chat_id: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM messages WHERE chat_id = ?1 AND role = 'assistant' \
         AND seq > COALESCE((SELECT MAX(seq) FROM messages WHERE chat_id = ?1 AND role = 'user'), 0)",
        [chat_id],
    )
}

/// Replaces the text of the chat's last user message and removes every reply after it (edit and
/// resend); the message as it now reads, or `None` when the chat has no user message.
pub fn edit_last_question(conn: &Connection, chat_id: &str, content: &str) -> rusqlite::Result<Option<MessageRow>> {
    let Some(seq): Option<i64> =
        conn.query_row("SELECT MAX(seq) FROM messages WHERE chat_id = ?1 AND role = 'user'", [chat_id], |r| r.get(0))?
    else {
        return Ok(None);
    };
    conn.execute("UPDATE messages SET content = ?3 WHERE chat_id = ?1 AND seq = ?2", params![chat_id, seq, content])?;
    conn.execute("DELETE FROM messages WHERE chat_id = ?1 AND seq > ?2", params![chat_id, seq])?;
    conn.query_row(
        &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE chat_id = ?1 AND seq = ?2"),
        params![chat_id, seq],
        message_from,
    )
    .optional()
}

/// A chat that matches a search, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub chat_id: String,
    /// The query is in the chat's title.
    pub in_title: bool,
    /// The first message that holds it, if any: its id and text.
    pub message: Option<(String, String)>,
    /// How many of the chat's messages hold it.
    pub message_count: u32,
}

/// Chats whose title or messages contain `query`, ignoring case in any script (Unicode lower
/// case), most recently active first, at most `limit`. Scans every message once, in SQLite's
/// order; the text is folded in Rust because SQLite's `LIKE` folds ASCII only.
pub fn search(conn: &Connection, query: &str, limit: usize) -> rusqlite::Result<Vec<SearchHit>> {
    let needle = query.to_lowercase();
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut stmt = conn.prepare_cached("SELECT id, title FROM chats ORDER BY updated_at DESC, id")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        let title: String = row.get(1)?;
        index.insert(id.clone(), hits.len());
        hits.push(SearchHit {
            chat_id: id,
            in_title: title.to_lowercase().contains(&needle),
            message: None,
            message_count: 0,
        });
    }
    let mut stmt = conn.prepare_cached("SELECT chat_id, id, content FROM messages ORDER BY chat_id, seq")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let content = row.get_ref(2)?.as_str()?;
        if !contains_folded(content, &needle) {
            continue;
        }
        let Some(&at) = index.get(row.get_ref(0)?.as_str()?) else { continue };
        let hit = &mut hits[at];
        hit.message_count += 1;
        if hit.message.is_none() {
            hit.message = Some((row.get(1)?, content.to_owned()));
        }
    }
    Ok(hits.into_iter().filter(|h| h.in_title || h.message_count > 0).take(limit).collect())
}

/// Whether `text` holds `needle` (already lower case), ignoring case; ASCII text is compared
/// without allocating.
fn contains_folded(text: &str, needle: &str) -> bool {
    if text.is_ascii() && needle.is_ascii() {
        let (text, needle) = (text.as_bytes(), needle.as_bytes());
        return needle.is_empty() || text.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    }
    text.to_lowercase().contains(needle)
}
