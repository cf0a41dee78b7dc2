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
    })
}

const CHAT_COLUMNS: &str = "id, title, provider_id, model, created_at, updated_at, key_id, key_used_at";
const MESSAGE_COLUMNS: &str =
    "id, chat_id, role, content, status, error, error_code, key_label, created_at, provider_key, \
                               input_tokens, cached_tokens, output_tokens";

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
        "INSERT INTO chats (id, title, provider_id, model, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![chat.id, chat.title, chat.provider_id, chat.model, chat.created_at, chat.updated_at],
    )?;
    Ok(())
}

pub fn update_chat(conn: &Connection, id: &str, patch: &ChatPatch, now: i64) -> rusqlite::Result<Option<ChatRow>> {
    let changed = conn.execute(
        "UPDATE chats SET title = COALESCE(?2, title), provider_id = COALESCE(?3, provider_id), \
         model = COALESCE(?4, model), updated_at = ?5 WHERE id = ?1",
        params![id, patch.title, patch.provider_id, patch.model, now],
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
         input_tokens, cached_tokens, output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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
            message.usage.map(|u| u.output)
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

/// Removes the failed assistant replies at the end of a chat (before a retry); returns how many.
pub fn delete_trailing_failed_replies(conn: &Connection, chat_id: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM messages WHERE chat_id = ?1 AND role = 'assistant' AND status = 'error' \
         AND seq > COALESCE((SELECT MAX(seq) FROM messages WHERE chat_id = ?1 AND NOT (role = 'assistant' AND status = 'error')), 0)",
        [chat_id],
    )
}
