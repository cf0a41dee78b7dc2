//! Members of an endpoint: a name, a token of their own (only its SHA-256 is kept) and optional
//! limits. `keypool-server` keeps them here (its command line and its config file write them),
//! and so does the app (its named tokens); what the limits mean when a request comes is the
//! [`MemberBook`]'s.
//!
//! Every write bumps the store's members generation, so a serving process learns of a change
//! another process made by reading one row ([`Members::generation`]).

use std::sync::Arc;

use keypool::Clock;
pub use keypool_store::members::Spent;
use keypool_store::members::{self as rows, MemberRow};
use keypool_store::Database;
use serde::{Deserialize, Serialize};

use crate::service::error::{Result, ServiceError};

mod admission;
mod book;
mod directory;
pub mod rules;
mod spend;

pub use book::{BookSnapshot, BookWatch, BudgetSpent, BudgetView, MemberBook};

/// Whether `name` can name a member: 1 to 64 of `A-Z a-z 0-9 . _ - @` (it is a label in
/// `/metrics`, a column in the ledger, a word in messages).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
}

/// Who manages a member: the config file, or a person (the command line, or the app's named
/// tokens). Neither changes the other's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberSource {
    Cli,
    Config,
}

impl MemberSource {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberSource::Cli => "cli",
            MemberSource::Config => "config",
        }
    }
}

/// The span a budget is counted over, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum BudgetPeriod {
    Day,
    /// From Monday 00:00 UTC.
    Week,
    Month,
    /// Since the member was added.
    Total,
}

impl BudgetPeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "day",
            BudgetPeriod::Week => "week",
            BudgetPeriod::Month => "month",
            BudgetPeriod::Total => "total",
        }
    }

    pub fn parse(text: &str) -> Option<BudgetPeriod> {
        [BudgetPeriod::Day, BudgetPeriod::Week, BudgetPeriod::Month, BudgetPeriod::Total]
            .into_iter()
            .find(|p| p.as_str() == text)
    }
}

/// What a member may spend per period: US dollars (at the price table's prices) or tokens
/// (prompt, cached included, and output).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "SpendBudget")]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    Usd(f64),
    Tokens(u64),
}

/// A member's limits; `None` (or no models) is no limit. Its fields keep their snake_case names
/// everywhere (the team's definitions in Redis, the IPC), as a server's config file spells them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ts_rs::TS)]
pub struct MemberLimits {
    pub budget: Option<Budget>,
    pub budget_period: Option<BudgetPeriod>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    pub max_in_flight: Option<u32>,
    /// Globs (`*` any run of characters, `?` one) of the models it may ask for, matched against
    /// the name it asks for (a route's included) and the model it is routed to.
    pub models: Vec<String>,
}

impl MemberLimits {
    /// The period its budget is counted over (a month unless told).
    pub fn period(&self) -> BudgetPeriod {
        self.budget_period.unwrap_or(BudgetPeriod::Month)
    }
}

/// One member. Its token is only ever its SHA-256, which never leaves the server (nor goes into
/// `members list`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    pub name: String,
    #[serde(skip)]
    pub token_sha256: [u8; 32],
    pub source: MemberSource,
    pub enabled: bool,
    /// Milliseconds since the epoch; `None`: never.
    pub expires_at: Option<i64>,
    pub limits: MemberLimits,
    /// The coding agent the app's Connect made it for (`claude-code`, `codex`, `gemini-cli`);
    /// `None`: a member made by hand or by a config file.
    pub agent: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Member {
    /// The same definition (what the member may do and with which token), whatever its times.
    pub fn same_definition(&self, other: &Member) -> bool {
        self.token_sha256 == other.token_sha256
            && self.source == other.source
            && self.enabled == other.enabled
            && self.expires_at == other.expires_at
            && self.limits == other.limits
            && self.agent == other.agent
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

pub(crate) fn from_row(row: MemberRow) -> Option<Member> {
    let budget = match (row.budget_usd, row.budget_tokens) {
        (Some(usd), _) => Some(Budget::Usd(usd)),
        (None, Some(tokens)) => Some(Budget::Tokens(tokens)),
        (None, None) => None,
    };
    Some(Member {
        token_sha256: unhex(&row.token_sha256)?,
        source: if row.source == "config" { MemberSource::Config } else { MemberSource::Cli },
        enabled: row.enabled,
        expires_at: row.expires_at,
        limits: MemberLimits {
            budget,
            // Canonical: a period exactly when there is a budget (the column has one always).
            budget_period: budget.map(|_| BudgetPeriod::parse(&row.budget_period).unwrap_or(BudgetPeriod::Month)),
            requests_per_minute: row.requests_per_minute,
            tokens_per_minute: row.tokens_per_minute,
            max_in_flight: row.max_in_flight,
            models: row.models,
        },
        agent: row.agent,
        name: row.name,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

pub(crate) fn to_row(member: &Member) -> MemberRow {
    let (budget_usd, budget_tokens) = match member.limits.budget {
        Some(Budget::Usd(usd)) => (Some(usd), None),
        Some(Budget::Tokens(tokens)) => (None, Some(tokens)),
        None => (None, None),
    };
    MemberRow {
        name: member.name.clone(),
        token_sha256: hex(&member.token_sha256),
        source: member.source.as_str().to_owned(),
        enabled: member.enabled,
        expires_at: member.expires_at,
        budget_usd,
        budget_tokens,
        budget_period: member.limits.period().as_str().to_owned(),
        requests_per_minute: member.limits.requests_per_minute,
        tokens_per_minute: member.limits.tokens_per_minute,
        max_in_flight: member.limits.max_in_flight,
        models: member.limits.models.clone(),
        agent: member.agent.clone(),
        created_at: member.created_at,
        updated_at: member.updated_at,
    }
}

/// The members in the store.
#[derive(Clone)]
pub struct Members {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
}

impl Members {
    pub(crate) fn new(db: Arc<Database>, clock: Arc<dyn Clock>) -> Members {
        Members { db, clock }
    }

    /// Every member, by name.
    pub fn list(&self) -> Result<Vec<Member>> {
        let rows = rows::list(&*self.db.lock()?)?;
        Ok(rows.into_iter().filter_map(from_row).collect())
    }

    /// The member called `name`, in any case.
    pub fn get(&self, name: &str) -> Result<Member> {
        let row = rows::get(&*self.db.lock()?, name)?;
        row.and_then(from_row).ok_or_else(|| ServiceError::not_found("member", name))
    }

    /// Writes `member` (new, or replacing the one of its name); `created_at` is kept for one that
    /// existed, `updated_at` set to now when its definition changed. Answers it as stored.
    pub fn put(&self, mut member: Member) -> Result<Member> {
        let now = self.clock.now().as_millis();
        let mut conn = self.db.lock()?;
        let existing = rows::get(&conn, &member.name)?.and_then(from_row);
        match existing {
            Some(old) if old.same_definition(&member) && old.name == member.name => return Ok(old),
            Some(old) => member.created_at = old.created_at,
            None => member.created_at = now,
        }
        member.updated_at = now;
        rows::put(&mut conn, &to_row(&member))?;
        Ok(member)
    }

    /// Deletes the member called `name`.
    pub fn delete(&self, name: &str) -> Result<()> {
        let now = self.clock.now().as_millis();
        match rows::delete(&mut *self.db.lock()?, name, now)? {
            true => Ok(()),
            false => Err(ServiceError::not_found("member", name)),
        }
    }

    /// The price table, at whose prices members' budgets in dollars are counted.
    pub fn prices(&self) -> Result<Vec<crate::service::Price>> {
        crate::service::usage::price_list(&self.db)
    }

    /// How many writes the members have seen: a change since a reading shows as a new number.
    pub fn generation(&self) -> Result<u64> {
        Ok(rows::generation(&*self.db.lock()?)?)
    }

    /// What every member spent, through this store, in the periods named `periods`.
    pub fn spend(&self, periods: &[&str]) -> Result<Vec<(String, String, Spent)>> {
        Ok(rows::spend(&*self.db.lock()?, periods)?)
    }

    /// Sets what members spent (the caller's running tally: a lower value than the stored one
    /// loses); forgets the periods that ended but `current` and the total.
    pub fn save_spend(&self, spent: &[(&str, &str, Spent)], current: &[&str]) -> Result<()> {
        let mut conn = self.db.lock()?;
        rows::set_spend(&mut conn, spent)?;
        rows::forget_spend_except(&conn, current)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_hash_survives_the_store_as_hex() {
        let hash = [0xab; 32];
        assert_eq!(unhex(&hex(&hash)), Some(hash), "64 hex digits and back");
        assert_eq!(unhex("ab"), None, "too short");
        assert_eq!(unhex(&"zz".repeat(32)), None, "not hex");
    }
}
