//! Named tokens of the app's local API: one per agent, script or person, each shown once when it
//! is made, kept as its SHA-256 only, and revoked alone. The ledger records each request under
//! its token's name, so the Usage page can say who spent what.
//!
//! They are rows of the store's members (`keypool-server`'s, made by hand: source `cli`), with
//! what a member may have: requests and tokens per minute, a budget per period, a cap on requests
//! in flight, allowed models and an expiry. The app's endpoint enforces them as a server does,
//! through the same [`MemberBook`]; every change here reaches it before the call returns, so a
//! revoked token is refused from the next request on.

use std::sync::Arc;

use keypool::Clock;
use keypool_gateway::token_hash;
use keypool_store::{members as rows, Database};
use serde::{Deserialize, Serialize};

use crate::service::error::{Result, ServiceError};
use crate::service::members::{
    from_row, to_row, valid_name, Budget, BudgetPeriod, Member, MemberBook, MemberLimits, MemberSource,
};
use crate::service::problem::{FieldError, Rule};

/// A named token as the app shows it: never its value.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct NamedToken {
    pub name: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// When the ledger last recorded a request it sent (milliseconds); `None`: never (or its
    /// history was purged).
    pub last_used_at: Option<i64>,
    /// Whether it is served: not expired, and not disabled by a server sharing this store.
    pub usable: bool,
    /// The coding agent Connect made it for (`claude-code`, `codex`, `gemini-cli`); `None`: made
    /// by hand. Disconnecting the agent revokes it.
    pub agent: Option<String>,
    /// What it may do, and until when.
    pub rules: TokenRules,
    /// What it spent.
    pub spent: TokenSpend,
}

/// What a named token may do: a server member's limits (each `None`, or no models, is no limit),
/// and the moment it stops working.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenRules {
    /// What it may spend per `budget_period` (a month unless told): dollars at the price table's
    /// prices, or tokens.
    pub budget: Option<Budget>,
    pub budget_period: Option<BudgetPeriod>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    /// Requests it may have in flight at once.
    pub max_in_flight: Option<u32>,
    /// Globs (`*`, `?`) of the models it may ask for, matched against the name asked (a route's
    /// included) and the model routed to; empty: every model.
    pub models: Vec<String>,
    /// Milliseconds since the epoch; `None`: never.
    pub expires_at: Option<i64>,
}

impl TokenRules {
    fn of(member: &Member) -> TokenRules {
        let limits = &member.limits;
        TokenRules {
            budget: limits.budget,
            budget_period: limits.budget_period,
            requests_per_minute: limits.requests_per_minute,
            tokens_per_minute: limits.tokens_per_minute,
            max_in_flight: limits.max_in_flight,
            models: limits.models.clone(),
            expires_at: member.expires_at,
        }
    }

    fn limits(&self) -> MemberLimits {
        MemberLimits {
            budget: self.budget,
            budget_period: self.budget.and(self.budget_period),
            requests_per_minute: self.requests_per_minute,
            tokens_per_minute: self.tokens_per_minute,
            max_in_flight: self.max_in_flight,
            models: self.models.clone(),
        }
    }
}

/// What a named token spent, as the book counts it (from the store's tally at start, then every
/// answer).
#[derive(Debug, Clone, PartialEq, Default, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenSpend {
    /// This calendar month (UTC): tokens (prompt and output) and US dollars at the price table's
    /// prices.
    pub month_tokens: u64,
    pub month_usd: f64,
    /// Of its budget, in the budget's unit and period; `None` without a budget.
    pub budget_used: Option<f64>,
}

/// A token value issued for a coding agent, and how to take it back.
pub(crate) struct Issued {
    pub name: String,
    pub token: String,
    pub undo: Undo,
}

/// How to take an issued token back.
pub(crate) enum Undo {
    /// It was made: it goes.
    Delete(String),
    /// It had another value: this one comes back.
    Restore(Member),
}

/// The named tokens: the store's rows, and the book that serves them.
pub struct NamedTokens {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
    book: MemberBook,
}

impl NamedTokens {
    pub(crate) fn new(db: Arc<Database>, clock: Arc<dyn Clock>, book: MemberBook) -> NamedTokens {
        NamedTokens { db, clock, book }
    }

    fn members(&self) -> Result<Vec<Member>> {
        Ok(rows::list(&*self.db.lock()?)?.into_iter().filter_map(from_row).collect())
    }

    fn usable(&self, member: &Member) -> bool {
        member.enabled && member.expires_at.is_none_or(|at| at > self.clock.now().as_millis())
    }

    fn view(&self, member: Member, conn: &keypool_store::rusqlite::Connection) -> Result<NamedToken> {
        let spent = self.book.spent(&member);
        Ok(NamedToken {
            last_used_at: rows::last_used(conn, &member.name)?,
            usable: self.usable(&member),
            created_at: member.created_at,
            rules: TokenRules::of(&member),
            agent: member.agent,
            spent: TokenSpend {
                month_tokens: spent.month.tokens,
                month_usd: spent.month.micro_usd as f64 / 1_000_000.0,
                budget_used: spent.budget_used,
            },
            name: member.name,
        })
    }

    /// Every named token, by name, with when it was last used and what it spent.
    pub fn list(&self) -> Result<Vec<NamedToken>> {
        let members = self.members()?;
        let conn = self.db.lock()?;
        members.into_iter().map(|member| self.view(member, &conn)).collect()
    }

    /// The token called `name` (in any case).
    pub fn get(&self, name: &str) -> Result<NamedToken> {
        let member = self.member(name)?;
        let conn = self.db.lock()?;
        self.view(member, &conn)
    }

    fn member(&self, name: &str) -> Result<Member> {
        let row = rows::get(&*self.db.lock()?, name)?;
        row.and_then(from_row).ok_or_else(|| ServiceError::not_found("token", name))
    }

    /// Makes a token called `name` (1 to 64 of `A-Z a-z 0-9 . _ - @`, unique in any case) under
    /// `rules`, and returns it with its value, this once. It serves at once.
    pub fn create(&self, name: &str, rules: TokenRules) -> Result<(NamedToken, String)> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(ServiceError::invalid("name", Rule::BadTokenName));
        }
        self.check(&rules)?;
        let (member, token) = self.put_new(name, rules, None)?;
        tracing::info!(name, "a named local API token was made");
        Ok((self.get(&member.name)?, token))
    }

    /// Sets what the token called `name` may do; its value stays. Applies from the next request.
    pub fn update(&self, name: &str, rules: TokenRules) -> Result<NamedToken> {
        self.check(&rules)?;
        let mut member = self.member(name)?;
        member.limits = rules.limits();
        member.expires_at = rules.expires_at;
        member.updated_at = self.clock.now().as_millis();
        rows::put(&mut *self.db.lock()?, &to_row(&member))?;
        self.book.refresh();
        tracing::info!(name = %member.name, "a named local API token's limits were changed");
        self.get(&member.name)
    }

    /// Revokes the token called `name` (in any case): it is refused from the next request on.
    /// What it spent stays in the ledger under its name.
    pub fn revoke(&self, name: &str) -> Result<()> {
        let now = self.clock.now().as_millis();
        let deleted = rows::delete(&mut *self.db.lock()?, name, now)?;
        self.book.refresh();
        match deleted {
            true => {
                tracing::info!(name, "a named local API token was revoked");
                Ok(())
            }
            false => Err(ServiceError::not_found("token", name)),
        }
    }

    /// A new token value for the coding agent `agent` (its slug). Its token `previous`, when it
    /// still is one, keeps its name and rules and takes the new value (the old one stops working);
    /// otherwise a token is made, named after the agent (`claude-code`, or `claude-code-2` when a
    /// token made by hand has that name). [`NamedTokens::undo`] takes it back.
    pub(crate) fn issue_for_agent(&self, agent: &str, previous: Option<&str>) -> Result<Issued> {
        let token = super::new_token_value();
        let earlier = previous.and_then(|name| self.member(name).ok()).filter(|m| m.agent.as_deref() == Some(agent));
        if let Some(earlier) = earlier {
            let mut member = earlier.clone();
            member.token_sha256 = token_hash(&token);
            member.enabled = true;
            member.updated_at = self.clock.now().as_millis();
            rows::put(&mut *self.db.lock()?, &to_row(&member))?;
            self.book.refresh();
            tracing::info!(name = %member.name, agent, "a coding agent's local API token was given a new value");
            return Ok(Issued { name: member.name, token, undo: Undo::Restore(earlier) });
        }
        let taken: Vec<String> = self.members()?.into_iter().map(|m| m.name.to_lowercase()).collect();
        let name = std::iter::once(agent.to_owned())
            .chain((2..).map(|n| format!("{agent}-{n}")))
            .find(|name| !taken.contains(name))
            .expect("some suffix is free");
        let member = self.put_with(&name, &token, TokenRules::default(), Some(agent))?;
        tracing::info!(name = %member.name, agent, "a local API token was made for a coding agent");
        Ok(Issued { undo: Undo::Delete(member.name.clone()), name: member.name, token })
    }

    /// Takes back what [`NamedTokens::issue_for_agent`] did (Connect could not write the agent's
    /// files): the token made goes, or the old value comes back.
    pub(crate) fn undo(&self, undo: Undo) {
        let now = self.clock.now().as_millis();
        let undone = self.db.lock().map_err(ServiceError::from).and_then(|mut conn| match &undo {
            Undo::Delete(name) => rows::delete(&mut conn, name, now).map(|_| ()).map_err(ServiceError::from),
            Undo::Restore(member) => rows::put(&mut conn, &to_row(member)).map_err(ServiceError::from),
        });
        if let Err(error) = undone {
            tracing::error!(%error, "a coding agent's token could not be put back as it was");
        }
        self.book.refresh();
    }

    /// Revokes the token called `name` if Connect made it for `agent` (a token made by hand of the
    /// same name stays).
    pub(crate) fn revoke_agents(&self, name: &str, agent: &str) -> Result<()> {
        match self.member(name)?.agent.as_deref() == Some(agent) {
            true => self.revoke(name),
            false => Ok(()),
        }
    }

    /// Whether the token called `name` is `token` (by its SHA-256), and is still served.
    pub(crate) fn holds(&self, name: &str, token: &str) -> bool {
        self.member(name).is_ok_and(|m| m.token_sha256 == token_hash(token) && self.usable(&m))
    }

    fn put_new(&self, name: &str, rules: TokenRules, agent: Option<&str>) -> Result<(Member, String)> {
        let token = super::new_token_value();
        let member = self.put_with(name, &token, rules, agent)?;
        Ok((member, token))
    }

    fn put_with(&self, name: &str, token: &str, rules: TokenRules, agent: Option<&str>) -> Result<Member> {
        let now = self.clock.now().as_millis();
        let member = Member {
            name: name.to_owned(),
            token_sha256: token_hash(token),
            source: MemberSource::Cli,
            enabled: true,
            expires_at: rules.expires_at,
            limits: rules.limits(),
            agent: agent.map(str::to_owned),
            created_at: now,
            updated_at: now,
        };
        {
            let mut conn = self.db.lock()?;
            if rows::get(&conn, name)?.is_some() {
                return Err(ServiceError::invalid("name", Rule::TokenNameTaken));
            }
            rows::put(&mut conn, &to_row(&member))?;
        }
        self.book.refresh();
        Ok(member)
    }

    /// What only the service can check of `rules` (the transport checks their shape): an expiry
    /// still ahead.
    fn check(&self, rules: &TokenRules) -> Result<()> {
        let mut broken = Vec::new();
        if rules.expires_at.is_some_and(|at| at <= self.clock.now().as_millis()) {
            broken.push(FieldError::new("rules.expires_at", Rule::ExpiryPassed));
        }
        match broken.is_empty() {
            true => Ok(()),
            false => Err(ServiceError::Invalid(broken)),
        }
    }
}
