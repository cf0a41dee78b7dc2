//! The `members` table: who may use a server's shared endpoint with a token of their own, and
//! within which limits; and `member_spend`, what each spent per budget period through this store.
//!
//! Every write bumps [`GENERATION`] in the same transaction, so a serving process notices a change
//! another process made (`keypool-server members add` beside `serve`) by reading one row.

use rusqlite::{params, Connection, OptionalExtension, Row};

/// The settings key counting writes to `members`.
pub const GENERATION: &str = "members.generation";

/// One member as stored. Its token is only ever its SHA-256 (64 hex digits).
#[derive(Debug, Clone, PartialEq)]
pub struct MemberRow {
    pub name: String,
    pub token_sha256: String,
    /// `cli` or `config`.
    pub source: String,
    pub enabled: bool,
    pub expires_at: Option<i64>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// `day`, `week`, `month` or `total`.
    pub budget_period: String,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    pub max_in_flight: Option<u32>,
    /// Globs of the models it may ask for; empty: every model.
    pub models: Vec<String>,
    /// The coding agent the app's Connect made it for (`claude-code`, …); `None`: made by hand.
    pub agent: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const SELECT: &str =
    "SELECT name, token_sha256, source, enabled, expires_at, budget_usd, budget_tokens, budget_period, \
     requests_per_minute, tokens_per_minute, max_in_flight, models, created_at, updated_at, agent FROM members";

fn row(row: &Row<'_>) -> rusqlite::Result<MemberRow> {
    let models: String = row.get(11)?;
    Ok(MemberRow {
        name: row.get(0)?,
        token_sha256: row.get(1)?,
        source: row.get(2)?,
        enabled: row.get(3)?,
        expires_at: row.get(4)?,
        budget_usd: row.get(5)?,
        budget_tokens: row.get(6)?,
        budget_period: row.get(7)?,
        requests_per_minute: row.get(8)?,
        tokens_per_minute: row.get(9)?,
        max_in_flight: row.get(10)?,
        models: serde_json::from_str(&models).unwrap_or_default(),
        created_at: row.get(12)?,
        updated_at: row.get(13)?,
        agent: row.get(14)?,
    })
}

/// Every member, by name.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<MemberRow>> {
    let mut stmt = conn.prepare_cached(&format!("{SELECT} ORDER BY name"))?;
    let rows = stmt.query_map([], row)?;
    rows.collect()
}

/// The member called `name` (in any case).
pub fn get(conn: &Connection, name: &str) -> rusqlite::Result<Option<MemberRow>> {
    conn.query_row(&format!("{SELECT} WHERE name = ?1"), [name], row).optional()
}

/// Writes `member` whole: a new one, or the one of its name (in any case) replaced, `created_at`
/// kept. One transaction with the generation's bump.
pub fn put(conn: &mut Connection, member: &MemberRow) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let models = serde_json::to_string(&member.models).expect("strings serialize");
    tx.execute(
        "INSERT INTO members (name, token_sha256, source, enabled, expires_at, budget_usd, budget_tokens, budget_period, \
         requests_per_minute, tokens_per_minute, max_in_flight, models, created_at, updated_at, agent) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) \
         ON CONFLICT (name) DO UPDATE SET name = excluded.name, token_sha256 = excluded.token_sha256, \
         source = excluded.source, enabled = excluded.enabled, expires_at = excluded.expires_at, \
         budget_usd = excluded.budget_usd, budget_tokens = excluded.budget_tokens, \
         budget_period = excluded.budget_period, requests_per_minute = excluded.requests_per_minute, \
         tokens_per_minute = excluded.tokens_per_minute, max_in_flight = excluded.max_in_flight, \
         models = excluded.models, updated_at = excluded.updated_at, agent = excluded.agent",
        params![
            member.name,
            member.token_sha256,
            member.source,
            member.enabled,
            member.expires_at,
            member.budget_usd,
            member.budget_tokens,
            member.budget_period,
            member.requests_per_minute,
            member.tokens_per_minute,
            member.max_in_flight,
            models,
            member.created_at,
            member.updated_at,
            member.agent,
        ],
    )?;
    bump(&tx, member.updated_at)?;
    tx.commit()
}

/// Deletes the member called `name`; whether there was one. Its spend stays (the ledger's
/// history names it too).
pub fn delete(conn: &mut Connection, name: &str, now: i64) -> rusqlite::Result<bool> {
    let tx = conn.transaction()?;
    let deleted = tx.execute("DELETE FROM members WHERE name = ?1", [name])? > 0;
    if deleted {
        bump(&tx, now)?;
    }
    tx.commit()?;
    Ok(deleted)
}

fn bump(conn: &Connection, now: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, '1', ?2) \
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT), updated_at = excluded.updated_at",
        params![GENERATION, now],
    )?;
    Ok(())
}

/// When the ledger last recorded an attempt of the member called `name` (milliseconds since
/// the epoch); `None`: none is kept. Read through the ledger's index on `(member, at)`.
pub fn last_used(conn: &Connection, name: &str) -> rusqlite::Result<Option<i64>> {
    let mut stmt =
        conn.prepare_cached("SELECT MAX(at) FROM usage_attempts WHERE member = ?1 AND member IS NOT NULL")?;
    stmt.query_row([name], |row| row.get(0))
}

/// How many writes `members` has seen (0 before the first).
pub fn generation(conn: &Connection) -> rusqlite::Result<u64> {
    let value: Option<String> =
        conn.query_row("SELECT value FROM settings WHERE key = ?1", [GENERATION], |r| r.get(0)).optional()?;
    Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// What a member spent in one budget period, through this store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spent {
    pub tokens: u64,
    /// US dollars in millionths.
    pub micro_usd: u64,
}

/// Every member's spend in the periods named `periods` (e.g. today's, this week's, …).
pub fn spend(conn: &Connection, periods: &[&str]) -> rusqlite::Result<Vec<(String, String, Spent)>> {
    let mut stmt =
        conn.prepare_cached("SELECT member, period, tokens, micro_usd FROM member_spend WHERE period = ?1")?;
    let mut out = Vec::new();
    for period in periods {
        let rows = stmt
            .query_map([period], |r| Ok((r.get(0)?, r.get(1)?, Spent { tokens: r.get(2)?, micro_usd: r.get(3)? })))?;
        for row in rows {
            out.push(row?);
        }
    }
    Ok(out)
}

/// Sets what members spent (absolute values: the caller's tally, which only grows within a
/// period; a lower value than the stored one is an older write and loses), in one transaction.
pub fn set_spend(conn: &mut Connection, spent: &[(&str, &str, Spent)]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO member_spend (member, period, tokens, micro_usd) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (member, period) DO UPDATE SET tokens = max(tokens, excluded.tokens), \
             micro_usd = max(micro_usd, excluded.micro_usd)",
        )?;
        for (member, period, spent) in spent {
            upsert.execute(params![member, period, spent.tokens, spent.micro_usd])?;
        }
    }
    tx.commit()
}

/// Forgets the spend of periods that ended: every period but `current` ones and `total`.
pub fn forget_spend_except(conn: &Connection, current: &[&str]) -> rusqlite::Result<usize> {
    let placeholders = vec!["?"; current.len()].join(", ");
    let sql = format!("DELETE FROM member_spend WHERE period <> 'total' AND period NOT IN ({placeholders})");
    conn.execute(&sql, rusqlite::params_from_iter(current.iter()))
}
