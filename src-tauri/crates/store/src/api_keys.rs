//! The `llm_provider_api_keys` and `providers` tables. Plain functions over a connection (or a
//! transaction): the caller owns transactions, validation and cache invalidation.
//! Times are milliseconds since the Unix epoch, passed in.

use keypool::Secret;
use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::stored_key::text;
use crate::StoredKey;

/// One stored pool entry. `Debug` never shows the key: [`Secret`] redacts itself.
#[derive(Debug, Clone)]
pub struct ApiKeyRow {
    pub id: String,
    pub provider_id: String,
    pub label: Option<String>,
    pub api_key: StoredKey,
    pub enabled: bool,
    pub weight: u32,
    pub sort_order: i64,
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// At most this many requests per minute (the user's limit; `None`: none).
    pub rpm_limit: Option<u32>,
    /// At most this many requests at once (`None`: no limit).
    pub max_concurrent: Option<u32>,
    /// The quota group the key shares its provider's rate limits with (`None`: its own).
    pub quota_group: Option<String>,
}

/// A key to add. `sort_order` is chosen by [`insert_api_key`]: after the provider's last key.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub id: String,
    pub provider_id: String,
    pub label: Option<String>,
    pub api_key: StoredKey,
    pub enabled: bool,
    pub weight: u32,
    pub rpm_limit: Option<u32>,
    pub max_concurrent: Option<u32>,
    /// Trimmed, 1 to 64 characters (the caller validates; the table refuses anything else).
    pub quota_group: Option<String>,
}

/// The fields to change; `None` leaves a field as it is. `label: Some(None)` removes the label.
#[derive(Debug, Clone, Default)]
pub struct ApiKeyPatch {
    pub label: Option<Option<String>>,
    pub api_key: Option<StoredKey>,
    pub enabled: Option<bool>,
    pub weight: Option<u32>,
    /// `Some(None)` puts the key in a group of its own; a group is trimmed, 1 to 64 characters.
    pub quota_group: Option<Option<String>>,
}

const COLUMNS: &str = "id, provider_id, label, api_key, enabled, weight, sort_order, \
                       disabled_reason, disabled_at, created_at, updated_at, rpm_limit, max_concurrent, storage, preview, quota_group";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ApiKeyRow> {
    Ok(ApiKeyRow {
        id: row.get(0)?,
        provider_id: row.get(1)?,
        label: row.get(2)?,
        api_key: StoredKey::from_columns(&row.get::<_, String>(13)?, row.get(3)?, row.get(14)?)?,
        enabled: row.get(4)?,
        weight: row.get(5)?,
        sort_order: row.get(6)?,
        disabled_reason: row.get(7)?,
        disabled_at: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        rpm_limit: row.get(11)?,
        max_concurrent: row.get(12)?,
        quota_group: row.get(15)?,
    })
}

pub use crate::providers::provider_exists;

/// A provider's keys in display order: `sort_order`, then creation, then id.
pub fn list_api_keys(conn: &Connection, provider_id: &str) -> rusqlite::Result<Vec<ApiKeyRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM llm_provider_api_keys WHERE provider_id = ?1 \
         ORDER BY sort_order, created_at, id"
    ))?;
    let rows = stmt.query_map([provider_id], from_row)?;
    rows.collect()
}

pub fn get_api_key(conn: &Connection, id: &str) -> rusqlite::Result<Option<ApiKeyRow>> {
    conn.query_row(&format!("SELECT {COLUMNS} FROM llm_provider_api_keys WHERE id = ?1"), [id], from_row).optional()
}

/// The id of another key of `provider_id` holding the same value in the database, if any
/// (keys in the keychain are compared by the caller, who can read them).
pub fn find_duplicate(
    conn: &Connection,
    provider_id: &str,
    api_key: &Secret,
    except_id: Option<&str>,
) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT id FROM llm_provider_api_keys WHERE provider_id = ?1 AND storage = 'database' AND api_key = ?2 \
         AND id IS NOT ?3",
        params![provider_id, api_key.expose(), except_id],
        |r| r.get(0),
    )
    .optional()
}

pub fn insert_api_key(conn: &Connection, new: &NewApiKey, now: i64) -> rusqlite::Result<ApiKeyRow> {
    conn.execute(
        "INSERT INTO llm_provider_api_keys \
           (id, provider_id, label, api_key, enabled, weight, sort_order, created_at, updated_at, rpm_limit, \
            max_concurrent, storage, preview, quota_group) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
           (SELECT COALESCE(MAX(sort_order) + 1, 0) FROM llm_provider_api_keys WHERE provider_id = ?2), \
           ?7, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            new.id,
            new.provider_id,
            new.label,
            text(new.api_key.columns().1),
            new.enabled,
            new.weight,
            now,
            new.rpm_limit,
            new.max_concurrent,
            new.api_key.columns().0,
            text(new.api_key.columns().2),
            new.quota_group
        ],
    )?;
    get_api_key(conn, &new.id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)
}

/// Inserts `keys` (of one provider) after the provider's last key, in order, with one prepared statement and no
/// read back (a bulk import: thousands in one transaction the caller owns). Each key may carry
/// why it is disabled (`disabled`: a reason, with `enabled` false).
pub fn insert_api_keys(conn: &Connection, keys: &[(NewApiKey, Option<String>)], now: i64) -> rusqlite::Result<()> {
    let Some((first, _)) = keys.first() else { return Ok(()) };
    let next: i64 = conn.query_row(
        "SELECT COALESCE(MAX(sort_order) + 1, 0) FROM llm_provider_api_keys WHERE provider_id = ?1",
        [&first.provider_id],
        |r| r.get(0),
    )?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO llm_provider_api_keys \
           (id, provider_id, label, api_key, enabled, weight, sort_order, created_at, updated_at, rpm_limit, \
            max_concurrent, storage, preview, quota_group, disabled_reason, disabled_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    for (position, (new, disabled)) in keys.iter().enumerate() {
        debug_assert_eq!(new.provider_id, first.provider_id, "one provider's keys per call");
        let sort_order = next + position as i64;
        let (storage, value, preview) = new.api_key.columns();
        stmt.execute(params![
            new.id,
            new.provider_id,
            new.label,
            text(value),
            new.enabled && disabled.is_none(),
            new.weight,
            sort_order,
            now,
            new.rpm_limit,
            new.max_concurrent,
            storage,
            text(preview),
            new.quota_group,
            disabled,
            disabled.as_ref().map(|_| now),
        ])?;
    }
    Ok(())
}

/// Applies one `patch` (no new value: a bulk change of many keys) to each of `ids`, with one
/// prepared statement. Returns how many keys there were to change.
pub fn update_api_keys(conn: &Connection, ids: &[String], patch: &ApiKeyPatch, now: i64) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(
        "UPDATE llm_provider_api_keys SET \
           label = CASE WHEN ?2 THEN ?3 ELSE label END, \
           enabled_at = CASE WHEN ?4 = 1 AND enabled = 0 THEN ?8 ELSE enabled_at END, \
           enabled = COALESCE(?4, enabled), \
           weight = COALESCE(?5, weight), \
           disabled_reason = CASE WHEN ?4 = 1 THEN NULL ELSE disabled_reason END, \
           disabled_at = CASE WHEN ?4 = 1 THEN NULL ELSE disabled_at END, \
           quota_group = CASE WHEN ?6 THEN ?7 ELSE quota_group END, \
           updated_at = ?8 \
         WHERE id = ?1",
    )?;
    let mut changed = 0;
    for id in ids {
        changed += stmt.execute(params![
            id,
            patch.label.is_some(),
            patch.label.clone().flatten(),
            patch.enabled,
            patch.weight,
            patch.quota_group.is_some(),
            patch.quota_group.clone().flatten(),
            now
        ])?;
    }
    Ok(changed)
}

/// When key `id` was last enabled again after being switched off ([`update_api_key`] and
/// [`update_api_keys`] stamp it when they enable a key that was off; [`record_enabled_at`] keeps
/// a team member's stamp); `None`: never, or no such key.
pub fn enabled_at(conn: &Connection, id: &str) -> rusqlite::Result<Option<i64>> {
    let stamp = conn
        .prepare_cached("SELECT enabled_at FROM llm_provider_api_keys WHERE id = ?1")?
        .query_row([id], |row| row.get::<_, Option<i64>>(0))
        .optional()?;
    Ok(stamp.flatten())
}

/// Keeps `at` as when key `id` was last enabled again, unless it knows a later one.
pub fn record_enabled_at(conn: &Connection, id: &str, at: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE llm_provider_api_keys SET enabled_at = MAX(COALESCE(enabled_at, ?2), ?2) WHERE id = ?1",
    )?
    .execute(params![id, at])?;
    Ok(())
}

/// Deletes each of `ids`; returns the ids that were there, with their provider.
pub fn delete_api_keys(conn: &Connection, ids: &[String]) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare_cached("DELETE FROM llm_provider_api_keys WHERE id = ?1 RETURNING provider_id")?;
    let mut deleted = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(provider) = stmt.query_row([id], |r| r.get::<_, String>(0)).optional()? {
            deleted.push((id.clone(), provider));
        }
    }
    Ok(deleted)
}

/// Applies `patch`; enabling a key clears why it was disabled. `None` when there is no such key.
pub fn update_api_key(
    conn: &Connection,
    id: &str,
    patch: &ApiKeyPatch,
    now: i64,
) -> rusqlite::Result<Option<ApiKeyRow>> {
    let changed = conn.execute(
        "UPDATE llm_provider_api_keys SET \
           label = CASE WHEN ?2 THEN ?3 ELSE label END, \
           storage = CASE WHEN ?8 THEN ?9 ELSE storage END, \
           api_key = CASE WHEN ?8 THEN ?4 ELSE api_key END, \
           preview = CASE WHEN ?8 THEN ?10 ELSE preview END, \
           enabled_at = CASE WHEN ?5 = 1 AND enabled = 0 THEN ?7 ELSE enabled_at END, \
           enabled = COALESCE(?5, enabled), \
           weight = COALESCE(?6, weight), \
           disabled_reason = CASE WHEN ?5 = 1 THEN NULL ELSE disabled_reason END, \
           disabled_at = CASE WHEN ?5 = 1 THEN NULL ELSE disabled_at END, \
           quota_group = CASE WHEN ?11 THEN ?12 ELSE quota_group END, \
           updated_at = ?7 \
         WHERE id = ?1",
        params![
            id,
            patch.label.is_some(),
            patch.label.clone().flatten(),
            text(patch.api_key.as_ref().and_then(|k| k.columns().1)),
            patch.enabled,
            patch.weight,
            now,
            patch.api_key.is_some(),
            patch.api_key.as_ref().map(|k| k.columns().0),
            text(patch.api_key.as_ref().and_then(|k| k.columns().2)),
            patch.quota_group.is_some(),
            patch.quota_group.clone().flatten()
        ],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    get_api_key(conn, id)
}

/// Sets (or, with `None`, removes) the user's limits of a key. `None` when there is no such key.
pub fn set_limits(
    conn: &Connection,
    id: &str,
    rpm_limit: Option<u32>,
    max_concurrent: Option<u32>,
    now: i64,
) -> rusqlite::Result<Option<ApiKeyRow>> {
    let changed = conn.execute(
        "UPDATE llm_provider_api_keys SET rpm_limit = ?2, max_concurrent = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, rpm_limit, max_concurrent, now],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    get_api_key(conn, id)
}

/// Puts a key in the quota group `group` (`None`: a group of its own). `None` when there is no
/// such key.
pub fn set_quota_group(
    conn: &Connection,
    id: &str,
    group: Option<&str>,
    now: i64,
) -> rusqlite::Result<Option<ApiKeyRow>> {
    let changed = conn.execute(
        "UPDATE llm_provider_api_keys SET quota_group = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, group, now],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    get_api_key(conn, id)
}

/// Deletes a key; returns its provider, or `None` when there was no such key.
pub fn delete_api_key(conn: &Connection, id: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("DELETE FROM llm_provider_api_keys WHERE id = ?1 RETURNING provider_id", [id], |r| r.get(0))
        .optional()
}

/// Records that the provider rejected the key. Only an enabled key changes, so a second report
/// of the same rejection does not move `disabled_at`. Returns whether the key changed.
pub fn disable_api_key(conn: &Connection, id: &str, reason: &str, at: i64) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE llm_provider_api_keys \
         SET enabled = 0, disabled_reason = ?2, disabled_at = ?3, updated_at = ?3 \
         WHERE id = ?1 AND enabled = 1",
        params![id, reason, at],
    )?;
    Ok(changed > 0)
}

/// Gives each id its position as `sort_order`. The caller checks that `ids` is exactly the
/// provider's keys and runs this in a transaction.
pub fn reorder_api_keys(conn: &Connection, provider_id: &str, ids: &[String], now: i64) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "UPDATE llm_provider_api_keys SET sort_order = ?1, updated_at = ?2 \
         WHERE id = ?3 AND provider_id = ?4 AND sort_order IS NOT ?1",
    )?;
    for (position, id) in ids.iter().enumerate() {
        stmt.execute(params![position as i64, now, id, provider_id])?;
    }
    Ok(())
}

/// The literal keys (not `$NAME` references) still stored in the database, every provider's:
/// what moves to the keychain.
pub fn literal_keys_in_database(conn: &Connection) -> rusqlite::Result<Vec<(String, Secret)>> {
    let mut stmt =
        conn.prepare("SELECT id, api_key FROM llm_provider_api_keys WHERE storage = 'database' ORDER BY id")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, Secret::new(r.get::<_, String>(1)?))))?;
    let rows: Vec<(String, Secret)> = rows.collect::<rusqlite::Result<_>>()?;
    // A literal key that starts with `$` is a literal key: only a well-formed `$NAME` is not.
    Ok(rows.into_iter().filter(|(_, secret)| secret.env_var().is_none()).collect())
}

/// The keys a scrubbed backup marks as kept in the keychain ([`crate::KEYCHAIN_MARKER`]).
pub fn marked_as_in_keychain(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT id FROM llm_provider_api_keys WHERE storage = 'database' AND api_key = ?1")?;
    let rows = stmt.query_map([crate::KEYCHAIN_MARKER], |r| r.get(0))?;
    rows.collect()
}

/// Records that key `id` is now kept in the keychain: its value leaves the database (the
/// caller checked the keychain holds it). Returns whether the key was there to move.
pub fn move_to_keychain(conn: &Connection, id: &str, preview: &str) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE llm_provider_api_keys SET storage = 'keychain', api_key = NULL, preview = ?2 \
         WHERE id = ?1 AND storage = 'database'",
        params![id, preview],
    )?;
    Ok(changed > 0)
}

/// The ids of a provider's keys, in no order: cheaper than listing them.
pub fn key_ids(conn: &Connection, provider_id: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM llm_provider_api_keys WHERE provider_id = ?1")?;
    let rows = stmt.query_map([provider_id], |r| r.get(0))?;
    rows.collect()
}

/// Every key id, for telling live keychain entries from left-over ones.
pub fn all_key_ids(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT id FROM llm_provider_api_keys")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// The keys whose value (or `$NAME`) the database itself holds.
pub fn stored_in_database(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare("SELECT id, api_key FROM llm_provider_api_keys WHERE storage = 'database'")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
