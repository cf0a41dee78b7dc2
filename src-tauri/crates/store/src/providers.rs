//! The `providers` table. Deleting a provider deletes its pool keys (foreign key cascade) and
//! leaves its chats, detached.

use keypool::Secret;
use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::stored_key::text;
use crate::StoredKey;

/// One provider. `api_key` is the provider-level key, used only while the pool is empty.
#[derive(Debug, Clone)]
pub struct ProviderRow {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub base_url: String,
    pub api_key: Option<StoredKey>,
    pub builtin: bool,
    pub sort_order: i64,
    pub models: Vec<String>,
    pub default_model: Option<String>,
    /// The system prompt new chats with this provider start with.
    pub system_prompt: Option<String>,
    pub key_count: u32,
    /// How many of its keys are switched on.
    pub enabled_key_count: u32,
    /// The last request sent to it without any key that it answered or refused as
    /// unauthenticated was refused, with this status (401 or 403): a server that needs a key
    /// after all. `None`: it answered, or none was sent.
    pub keyless_refused: Option<u16>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A provider to add.
#[derive(Debug, Clone)]
pub struct NewProvider {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub base_url: String,
    pub api_key: Option<StoredKey>,
    pub models: Vec<String>,
    pub default_model: Option<String>,
    pub system_prompt: Option<String>,
}

/// Fields to change; `None` keeps a field. `api_key: Some(None)` removes the provider key.
#[derive(Debug, Clone, Default)]
pub struct ProviderPatch {
    pub name: Option<String>,
    pub kind: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<Option<StoredKey>>,
    pub models: Option<Vec<String>>,
    pub default_model: Option<Option<String>>,
    /// `Some(None)` removes the default system prompt.
    pub system_prompt: Option<Option<String>>,
}

const SELECT: &str = "SELECT p.id, p.name, p.kind, p.base_url, p.api_key, p.builtin, p.sort_order, p.models, \
     p.default_model, (SELECT COUNT(*) FROM llm_provider_api_keys k WHERE k.provider_id = p.id), \
     p.created_at, p.updated_at, p.system_prompt, p.api_key_storage, p.api_key_preview, \
     (SELECT COUNT(*) FROM llm_provider_api_keys k WHERE k.provider_id = p.id AND k.enabled = 1), \
     (SELECT CASE u.outcome WHEN 'auth_rejected' THEN COALESCE(u.status, 401) END FROM usage_attempts u \
      WHERE u.provider_id = p.id AND u.key_id = '(no key)' AND u.outcome IN ('ok', 'auth_rejected') \
      ORDER BY u.at DESC, u.id DESC LIMIT 1) \
     FROM providers p";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ProviderRow> {
    let models: String = row.get(7)?;
    Ok(ProviderRow {
        id: row.get(0)?,
        name: row.get(1)?,
        kind: row.get(2)?,
        base_url: row.get(3)?,
        api_key: match (row.get::<_, String>(13)?.as_str(), row.get::<_, Option<String>>(4)?) {
            ("keychain", _) => {
                Some(StoredKey::Keychain { preview: row.get::<_, Option<String>>(14)?.unwrap_or_default() })
            }
            (_, key) => key.map(|key| StoredKey::Database(Secret::new(key))),
        },
        builtin: row.get(5)?,
        sort_order: row.get(6)?,
        models: serde_json::from_str(&models).unwrap_or_default(),
        default_model: row.get(8)?,
        key_count: row.get(9)?,
        enabled_key_count: row.get(15)?,
        keyless_refused: row.get(16)?,
        created_at: row.get(10)?,
        updated_at: row.get(11)?,
        system_prompt: row.get(12)?,
    })
}

pub fn provider_exists(conn: &Connection, provider_id: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM providers WHERE id = ?1)", [provider_id], |r| r.get(0))
}

/// Every provider in display order, with how many keys its pool holds.
pub fn list_providers(conn: &Connection) -> rusqlite::Result<Vec<ProviderRow>> {
    let mut stmt = conn.prepare_cached(&format!("{SELECT} ORDER BY p.sort_order, p.created_at, p.id"))?;
    let rows = stmt.query_map([], from_row)?;
    rows.collect()
}

pub fn get_provider(conn: &Connection, id: &str) -> rusqlite::Result<Option<ProviderRow>> {
    conn.query_row(&format!("{SELECT} WHERE p.id = ?1"), [id], from_row).optional()
}

pub fn insert_provider(conn: &Connection, new: &NewProvider, now: i64) -> rusqlite::Result<ProviderRow> {
    conn.execute(
        "INSERT INTO providers (id, name, kind, base_url, api_key, builtin, sort_order, models, default_model, created_at, \
         updated_at, system_prompt, api_key_storage, api_key_preview) \
         VALUES (?1, ?2, ?3, ?4, ?5, 0, (SELECT COALESCE(MAX(sort_order) + 1, 0) FROM providers), ?6, ?7, ?8, ?8, ?9, ?10, ?11)",
        params![
            new.id,
            new.name,
            new.kind,
            new.base_url,
            text(new.api_key.as_ref().and_then(|k| k.columns().1)),
            serde_json::to_string(&new.models).expect("strings serialize"),
            new.default_model,
            now,
            new.system_prompt,
            new.api_key.as_ref().map_or("database", |k| k.columns().0),
            text(new.api_key.as_ref().and_then(|k| k.columns().2))
        ],
    )?;
    get_provider(conn, &new.id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)
}

pub fn update_provider(
    conn: &Connection,
    id: &str,
    patch: &ProviderPatch,
    now: i64,
) -> rusqlite::Result<Option<ProviderRow>> {
    let changed = conn.execute(
        "UPDATE providers SET \
           name = COALESCE(?2, name), kind = COALESCE(?3, kind), base_url = COALESCE(?4, base_url), \
           api_key = CASE WHEN ?5 THEN ?6 ELSE api_key END, \
           api_key_storage = CASE WHEN ?5 THEN ?13 ELSE api_key_storage END, \
           api_key_preview = CASE WHEN ?5 THEN ?14 ELSE api_key_preview END, \
           models = COALESCE(?7, models), \
           default_model = CASE WHEN ?8 THEN ?9 ELSE default_model END, \
           system_prompt = CASE WHEN ?11 THEN ?12 ELSE system_prompt END, \
           updated_at = ?10 \
         WHERE id = ?1",
        params![
            id,
            patch.name,
            patch.kind,
            patch.base_url,
            patch.api_key.is_some(),
            text(patch.api_key.as_ref().and_then(|k| k.as_ref()).and_then(|k| k.columns().1)),
            patch.models.as_ref().map(|m| serde_json::to_string(m).expect("strings serialize")),
            patch.default_model.is_some(),
            patch.default_model.clone().flatten(),
            now,
            patch.system_prompt.is_some(),
            patch.system_prompt.clone().flatten(),
            patch.api_key.as_ref().and_then(|k| k.as_ref()).map_or("database", |k| k.columns().0),
            text(patch.api_key.as_ref().and_then(|k| k.as_ref()).and_then(|k| k.columns().2))
        ],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    get_provider(conn, id)
}

/// Deletes a provider and (by cascade) its keys; returns how many keys went with it, or `None`
/// when there was no such provider.
pub fn delete_provider(conn: &Connection, id: &str) -> rusqlite::Result<Option<u32>> {
    let keys: u32 =
        conn.query_row("SELECT COUNT(*) FROM llm_provider_api_keys WHERE provider_id = ?1", [id], |r| r.get(0))?;
    let deleted = conn.execute("DELETE FROM providers WHERE id = ?1", [id])?;
    Ok((deleted > 0).then_some(keys))
}

/// Provider-level literal keys still stored in the database: what moves to the keychain.
pub fn literal_keys_in_database(conn: &Connection) -> rusqlite::Result<Vec<(String, Secret)>> {
    let mut stmt = conn.prepare(
        "SELECT id, api_key FROM providers WHERE api_key_storage = 'database' AND api_key IS NOT NULL ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, Secret::new(r.get::<_, String>(1)?))))?;
    let rows: Vec<(String, Secret)> = rows.collect::<rusqlite::Result<_>>()?;
    // A literal key that starts with `$` is a literal key: only a well-formed `$NAME` is not.
    Ok(rows.into_iter().filter(|(_, secret)| secret.env_var().is_none()).collect())
}

/// The providers whose key a scrubbed backup marks as kept in the keychain.
pub fn marked_as_in_keychain(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT id FROM providers WHERE api_key_storage = 'database' AND api_key = ?1")?;
    let rows = stmt.query_map([crate::KEYCHAIN_MARKER], |r| r.get(0))?;
    rows.collect()
}

/// Records that provider `id`'s own key is now kept in the keychain.
pub fn move_key_to_keychain(conn: &Connection, id: &str, preview: &str) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE providers SET api_key_storage = 'keychain', api_key = NULL, api_key_preview = ?2 \
         WHERE id = ?1 AND api_key_storage = 'database' AND api_key IS NOT NULL",
        params![id, preview],
    )?;
    Ok(changed > 0)
}

/// The providers whose own key is in the keychain.
pub fn ids_with_key_in_keychain(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT id FROM providers WHERE api_key_storage = 'keychain'")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// The providers whose own key (or `$NAME`) the database itself holds.
pub fn keys_in_database(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt =
        conn.prepare("SELECT id, api_key FROM providers WHERE api_key_storage = 'database' AND api_key IS NOT NULL")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
