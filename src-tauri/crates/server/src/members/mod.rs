//! Members of the server's endpoint: each with its own token and limits, enforced before a
//! request reaches the pool ([`MemberBook`] is the gateway's [`keypool_gateway::Members`]) and
//! charged with what its answers used ([`MemberBook`] is also told of every attempt, as a
//! [`Recorder`]).
//!
//! Where the counts live:
//! - **No team**: in this process; a member's spend per budget period is kept in the store
//!   (`member_spend`, written every second), so a restart forgets no spend.
//! - **A team**: in Redis, one count per member for every replica ([`keypool_team::Allowance`]):
//!   the rates, the requests in flight and the budget are checked and counted in one atomic
//!   script per request, so a limit is the member's whatever replica serves it. Each replica's
//!   share of a budget is its own running total (kept in its store too), so a Redis that lost its
//!   data learns it again at the replica's next charge or reconnect.
//! - **A team whose Redis is unreachable** (or slow past the team's request timeout): each
//!   replica decides alone on its own counts, each limit divided by the replicas it last saw (a
//!   budget: what the team had left at the last answer, the replica assuming every other spends
//!   as fast as it does), so the outage multiplies no limit; what it spends meanwhile reaches
//!   Redis when it is back. Requests are served, not refused, while Redis is away: the pool itself
//!   does the same.
//!
//! Definitions travel too: a member added, changed, revoked or removed on one replica (by its
//! config file or its command line) is written to the team with the time of the change, and
//! every replica reads the team's definitions back within [`keypool_team::DEFINITIONS_POLL`] and
//! takes the newest of its own and the team's. A replica whose own definition did not change
//! (a config file not yet rolled out) does not overrule a newer one from another.

pub mod cli;
pub mod config;
pub mod rules;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use keypool::{Clock, DisableReason, KeyId, ProviderId, Timestamp};
use keypool_api::service::{Budget, Member, MemberLimits, MemberSource, Spent};
use keypool_api::AppContext;
use keypool_gateway::{Asked, Limit, Members, Pass, Refusal};
use keypool_llm::{AttemptRecord, Recorder};
use keypool_team::{Allowance, BudgetUnit, MemberAsk, MemberVerdict};
use serde::{Deserialize, Serialize};

use rules::{Rate, Span};

/// How often the book looks for changes: the store's members, the team's definitions.
const POLL: Duration = keypool_team::DEFINITIONS_POLL;
/// How often what members spent is written to the store.
const FLUSH: Duration = Duration::from_secs(1);
/// How often the price table is read again.
const PRICES: Duration = Duration::from_secs(10);

/// A member's definition as the team carries it (in Redis, sealed): what a replica needs to
/// serve a member it has not been told of itself. The token only as its SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TeamRecord {
    name: String,
    token_sha256: String,
    source: MemberSource,
    enabled: bool,
    expires_at: Option<i64>,
    limits: MemberLimits,
    created_at: i64,
    updated_at: i64,
    /// Removed at `updated_at`.
    #[serde(default)]
    deleted: bool,
}

impl TeamRecord {
    fn of(member: &Member) -> TeamRecord {
        TeamRecord {
            name: member.name.clone(),
            token_sha256: member.token_sha256.iter().map(|b| format!("{b:02x}")).collect(),
            source: member.source,
            enabled: member.enabled,
            expires_at: member.expires_at,
            limits: member.limits.clone(),
            created_at: member.created_at,
            updated_at: member.updated_at,
            deleted: false,
        }
    }

    fn member(&self) -> Option<Member> {
        let mut token_sha256 = [0u8; 32];
        if self.token_sha256.len() != 64 {
            return None;
        }
        for (i, byte) in token_sha256.iter_mut().enumerate() {
            *byte = u8::from_str_radix(self.token_sha256.get(i * 2..i * 2 + 2)?, 16).ok()?;
        }
        Some(Member {
            name: self.name.clone(),
            token_sha256,
            source: self.source,
            enabled: self.enabled,
            expires_at: self.expires_at,
            limits: self.limits.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The members as requests see them: by token digest and by name (lower case).
#[derive(Default)]
struct Directory {
    by_hash: HashMap<[u8; 32], Arc<Member>>,
    by_name: HashMap<String, Arc<Member>>,
}

/// Where definitions come from, and what the team was told.
#[derive(Default)]
struct Definitions {
    /// The store's members, by lower-case name.
    local: HashMap<String, Member>,
    /// The team's, by lower-case name (tombstones included).
    team: HashMap<String, TeamRecord>,
    /// Members this process removed from its store, and when: told to the team as tombstones.
    removed: HashMap<String, i64>,
    /// The `updated_at` of each definition the team was told.
    published: HashMap<String, i64>,
    store_generation: Option<u64>,
    team_version: Option<u64>,
    /// The team link's connects when last seen (a new one: tell everything again).
    connects: u64,
}

/// One member's counts in this process.
#[derive(Debug, Default)]
struct Tally {
    /// This replica's spend per budget period (the current ones).
    own: HashMap<String, Spent>,
    /// Spend not yet written to the store.
    dirty: bool,
    /// The rates' TATs (µs) while deciding alone.
    requests_tat: i64,
    tokens_tat: i64,
    /// Requests in flight admitted by this process alone, and by the team.
    alone_flying: u32,
    team_flying: u32,
    /// The team's spend in a budget period at its last answer, and this replica's own then.
    team_seen: Option<(String, Spent, Spent)>,
}

/// A model's price, per million tokens.
#[derive(Debug, Clone, Copy)]
struct Price {
    input: f64,
    cached: f64,
    output: f64,
}

/// The server's members: their definitions, counts and charges. Cheap to clone.
#[derive(Clone)]
pub struct MemberBook {
    inner: Arc<Inner>,
}

struct Inner {
    clock: Arc<dyn Clock>,
    directory: ArcSwap<Directory>,
    definitions: Mutex<Definitions>,
    tallies: Mutex<HashMap<String, Tally>>,
    prices: RwLock<HashMap<String, Price>>,
    attached: OnceLock<Attached>,
    /// Refusals per member and limit, for metrics.
    refusals: Mutex<HashMap<(String, &'static str), u64>>,
    /// Times the team's definitions were read, changed or not, for metrics: what a test of their
    /// spread waits on, not a time.
    team_reads: AtomicU64,
    /// Told when a member's budget is spent.
    alerts: OnceLock<crate::alerts::Alerts>,
}

/// What the book works with once the server's context exists.
struct Attached {
    context: Weak<AppContext>,
    allowance: Option<Arc<Allowance>>,
}

/// One member's budget as `/metrics` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetView {
    pub member: String,
    /// `usd` or `tokens`.
    pub unit: &'static str,
    pub limit: f64,
    pub used: f64,
}

impl MemberBook {
    pub fn new(clock: Arc<dyn Clock>) -> MemberBook {
        MemberBook {
            inner: Arc::new(Inner {
                clock,
                directory: ArcSwap::default(),
                definitions: Mutex::default(),
                tallies: Mutex::default(),
                prices: RwLock::default(),
                attached: OnceLock::new(),
                refusals: Mutex::default(),
                team_reads: AtomicU64::new(0),
                alerts: OnceLock::new(),
            }),
        }
    }

    /// Tells `alerts` when a member's budget is spent.
    pub fn alert_with(&self, alerts: crate::alerts::Alerts) {
        let _ = self.inner.alerts.set(alerts);
    }

    /// Starts serving `context`'s members (counted through `allowance` when a team is joined):
    /// reads them and their spend, and keeps in step with the store and the team on a task of the
    /// current runtime until the context goes.
    pub fn attach(&self, context: &Arc<AppContext>, allowance: Option<Arc<Allowance>>) {
        let attached = Attached { context: Arc::downgrade(context), allowance };
        if self.inner.attached.set(attached).is_err() {
            return;
        }
        self.inner.load_spend();
        self.inner.read_prices();
        self.refresh();
        let inner = self.inner.clone();
        tokio::spawn(async move { inner.keep_in_step().await });
    }

    /// Reads the store's members again now (after an apply), and tells the team what changed.
    pub fn refresh(&self) {
        self.inner.refresh_local(true);
    }

    /// Members the config file no longer lists, removed from the store now: the team is told.
    pub fn removed(&self, names: &[String]) {
        let now = self.inner.clock.now().as_millis();
        let mut definitions = self.inner.lock_definitions();
        for name in names {
            definitions.removed.insert(name.to_lowercase(), now);
        }
    }

    /// Every member with a budget: its unit, limit and what was used in the current period (the
    /// team's count at its last answer, with this replica's since; this replica's alone without a
    /// team).
    pub fn budgets(&self) -> Vec<BudgetView> {
        let now = self.inner.clock.now();
        let directory = self.inner.directory.load();
        let tallies = self.inner.lock_tallies();
        let mut out: Vec<BudgetView> = directory
            .by_name
            .values()
            .filter_map(|member| {
                let budget = member.limits.budget?;
                let span = rules::span(member.limits.period(), now);
                let used =
                    tallies.get(&member.name.to_lowercase()).map_or(Spent::default(), |t| t.team_view(&span.key));
                let (unit, limit, used) = match budget {
                    Budget::Usd(usd) => ("usd", usd, used.micro_usd as f64 / 1_000_000.0),
                    Budget::Tokens(tokens) => ("tokens", tokens as f64, used.tokens as f64),
                };
                Some(BudgetView { member: member.name.clone(), unit, limit, used })
            })
            .collect();
        out.sort_by(|a, b| a.member.cmp(&b.member));
        out
    }

    /// Refusals so far, per member and limit.
    /// How many times the team's member definitions were read (changed or not); `None` without
    /// a team.
    pub fn team_reads(&self) -> Option<u64> {
        self.inner.allowance().map(|_| self.inner.team_reads.load(Ordering::Relaxed))
    }

    pub fn refusals(&self) -> Vec<(String, &'static str, u64)> {
        let refusals = self.inner.refusals.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<_> = refusals.iter().map(|((m, l), n)| (m.clone(), *l, *n)).collect();
        out.sort();
        out
    }

    /// Writes what members spent to the store (at shutdown).
    pub fn flush(&self) {
        self.inner.save_spend();
    }
}

impl Tally {
    /// The team's spend in `period` as best known: its count at the last answer with this
    /// replica's own since; this replica's own when the team never answered.
    fn team_view(&self, period: &str) -> Spent {
        let own = self.own.get(period).cloned().unwrap_or_default();
        match &self.team_seen {
            Some((seen, team, own_then)) if seen == period => Spent {
                tokens: team.tokens + own.tokens.saturating_sub(own_then.tokens),
                micro_usd: team.micro_usd + own.micro_usd.saturating_sub(own_then.micro_usd),
            },
            _ => own,
        }
    }
}

impl Inner {
    fn lock_definitions(&self) -> std::sync::MutexGuard<'_, Definitions> {
        self.definitions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_tallies(&self) -> std::sync::MutexGuard<'_, HashMap<String, Tally>> {
        self.tallies.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn context(&self) -> Option<Arc<AppContext>> {
        self.attached.get()?.context.upgrade()
    }

    fn allowance(&self) -> Option<&Arc<Allowance>> {
        self.attached.get()?.allowance.as_ref()
    }

    fn refused(&self, member: &str, refusal: Refusal) -> Refusal {
        let mut refusals = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        *refusals.entry((member.to_owned(), refusal.limit.as_str())).or_default() += 1;
        drop(refusals);
        if refusal.limit == Limit::Budget {
            self.tell_budget_spent(member);
        }
        refusal
    }

    /// Tells the alerts that `member`'s budget is spent (they send it once per period).
    fn tell_budget_spent(&self, member: &str) {
        let (Some(alerts), Some(member)) = (self.alerts.get(), self.member(member)) else { return };
        let Some(budget) = member.limits.budget else { return };
        let span = rules::span(member.limits.period(), self.clock.now());
        let used =
            self.lock_tallies().get(&member.name.to_lowercase()).map_or(Spent::default(), |t| t.team_view(&span.key));
        let (unit, limit, used) = match budget {
            Budget::Usd(usd) => ("usd", usd, used.micro_usd as f64 / 1_000_000.0),
            Budget::Tokens(tokens) => ("tokens", tokens as f64, used.tokens as f64),
        };
        alerts.budget_spent(&member.name, unit, used, limit, &span.key, span.end);
    }

    /// This replica's spend of the current periods, from the store.
    fn load_spend(&self) {
        let Some(context) = self.context() else { return };
        let spans = rules::current_spans(self.clock.now());
        let keys: Vec<&str> = spans.iter().map(|s| s.key.as_str()).collect();
        match context.members().and_then(|members| members.spend(&keys)) {
            Ok(rows) => {
                let mut tallies = self.lock_tallies();
                for (member, period, spent) in rows {
                    tallies.entry(member.to_lowercase()).or_default().own.insert(period, spent);
                }
            }
            Err(error) => tracing::error!(%error, "members: what they spent could not be read; counting from zero"),
        }
    }

    fn save_spend(&self) {
        let Some(context) = self.context() else { return };
        let spans = rules::current_spans(self.clock.now());
        let current: Vec<&str> = spans.iter().map(|s| s.key.as_str()).collect();
        let rows: Vec<(String, String, Spent)> = {
            let mut tallies = self.lock_tallies();
            let mut rows = Vec::new();
            for (member, tally) in tallies.iter_mut() {
                tally.own.retain(|period, _| current.contains(&period.as_str()));
                if std::mem::take(&mut tally.dirty) {
                    rows.extend(tally.own.iter().map(|(p, s)| (member.clone(), p.clone(), s.clone())));
                }
            }
            rows
        };
        if rows.is_empty() {
            return;
        }
        let borrowed: Vec<(&str, &str, Spent)> =
            rows.iter().map(|(m, p, s)| (m.as_str(), p.as_str(), s.clone())).collect();
        if let Err(error) = context.members().and_then(|members| members.save_spend(&borrowed, &current)) {
            tracing::error!(%error, "members: what they spent could not be saved; trying again");
            let mut tallies = self.lock_tallies();
            for (member, _, _) in &rows {
                if let Some(tally) = tallies.get_mut(member) {
                    tally.dirty = true;
                }
            }
        }
    }

    fn read_prices(&self) {
        let Some(context) = self.context() else { return };
        match context.usage().and_then(|usage| usage.prices()) {
            Ok(prices) => {
                let table = prices
                    .into_iter()
                    .map(|p| {
                        let price = Price {
                            input: p.input_per_million,
                            cached: p.cached_per_million.unwrap_or(p.input_per_million),
                            output: p.output_per_million,
                        };
                        (p.model, price)
                    })
                    .collect();
                *self.prices.write().unwrap_or_else(|e| e.into_inner()) = table;
            }
            Err(error) => tracing::warn!(%error, "members: the price table could not be read"),
        }
    }

    fn priced(&self, model: &str) -> bool {
        self.prices.read().unwrap_or_else(|e| e.into_inner()).contains_key(model)
    }

    /// What `usage` of `model` costs, in millionths of a US dollar (0 without a price).
    fn micro_usd(&self, model: &str, usage: &keypool_llm::Usage) -> u64 {
        let prices = self.prices.read().unwrap_or_else(|e| e.into_inner());
        let Some(price) = prices.get(model) else { return 0 };
        let fresh = usage.input.saturating_sub(usage.cached) as f64;
        // $ per million tokens × tokens = millionths of a dollar.
        (fresh * price.input + usage.cached as f64 * price.cached + usage.output as f64 * price.output).round() as u64
    }

    /// Reads the store's members again if they changed (or `force`), and rebuilds the directory.
    fn refresh_local(&self, force: bool) {
        let Some(context) = self.context() else { return };
        let Ok(members) = context.members() else { return };
        let generation = match members.generation() {
            Ok(generation) => generation,
            Err(error) => return tracing::warn!(%error, "members: the store could not be read"),
        };
        let mut definitions = self.lock_definitions();
        if !force && definitions.store_generation == Some(generation) {
            return;
        }
        let listed = match members.list() {
            Ok(listed) => listed,
            Err(error) => return tracing::warn!(%error, "members: the store could not be read"),
        };
        let now = self.clock.now().as_millis();
        let fresh: HashMap<String, Member> = listed.into_iter().map(|m| (m.name.to_lowercase(), m)).collect();
        let gone: Vec<String> = definitions.local.keys().filter(|name| !fresh.contains_key(*name)).cloned().collect();
        for name in gone {
            definitions.removed.entry(name).or_insert(now);
        }
        for name in fresh.keys() {
            definitions.removed.remove(name);
        }
        definitions.local = fresh;
        definitions.store_generation = Some(generation);
        self.rebuild(&definitions);
        self.publish(&mut definitions, false);
    }

    /// The directory from the store's definitions and the team's: the newest of each name.
    fn rebuild(&self, definitions: &Definitions) {
        let mut directory = Directory::default();
        let names: HashSet<&String> = definitions.local.keys().chain(definitions.team.keys()).collect();
        for name in names {
            let local = definitions.local.get(name);
            let removed = definitions.removed.get(name);
            let team = definitions.team.get(name);
            let local_at = local.map(|m| m.updated_at).or(removed.copied());
            let chosen = match (team, local_at) {
                (Some(team), Some(at)) if team.updated_at > at => (!team.deleted).then(|| team.member()).flatten(),
                (Some(team), None) => (!team.deleted).then(|| team.member()).flatten(),
                _ => local.cloned(),
            };
            if let Some(member) = chosen {
                let member = Arc::new(member);
                directory.by_hash.insert(member.token_sha256, member.clone());
                directory.by_name.insert(name.clone(), member);
            }
        }
        self.directory.store(Arc::new(directory));
    }

    /// Tells the team the definitions it was not told yet (`all`: every one, after a reconnect).
    fn publish(&self, definitions: &mut Definitions, all: bool) {
        let Some(allowance) = self.allowance() else { return };
        if !allowance.connected() {
            return;
        }
        let mut told = Vec::new();
        for (name, member) in &definitions.local {
            if all || definitions.published.get(name) != Some(&member.updated_at) {
                let record = TeamRecord::of(member);
                allowance.define(
                    name,
                    member.updated_at,
                    &serde_json::to_string(&record).expect("a record serializes"),
                );
                told.push((name.clone(), member.updated_at));
            }
        }
        for (name, &at) in &definitions.removed {
            if all || definitions.published.get(name) != Some(&at) {
                let last = definitions.team.get(name).cloned();
                let Some(mut record) = last.or_else(|| definitions.local.get(name).map(TeamRecord::of)) else {
                    continue;
                };
                if record.updated_at >= at {
                    continue;
                }
                record.deleted = true;
                record.updated_at = at;
                allowance.define(name, at, &serde_json::to_string(&record).expect("a record serializes"));
                told.push((name.clone(), at));
            }
        }
        definitions.published.extend(told);
    }

    /// Every [`POLL`]: the store's members, the team's definitions (and after a reconnect, what
    /// the team may have lost); every [`FLUSH`] the spend to the store; every [`PRICES`] the
    /// prices. Until the context goes.
    async fn keep_in_step(self: Arc<Self>) {
        let mut flushed = Instant::now();
        let mut priced = Instant::now();
        loop {
            tokio::time::sleep(POLL).await;
            if self.context().is_none() {
                return;
            }
            self.refresh_local(false);
            if let Some(allowance) = self.allowance().cloned() {
                self.follow_team(&allowance).await;
            }
            if flushed.elapsed() >= FLUSH {
                self.save_spend();
                flushed = Instant::now();
            }
            if priced.elapsed() >= PRICES {
                self.read_prices();
                priced = Instant::now();
            }
        }
    }

    async fn follow_team(&self, allowance: &Allowance) {
        if !allowance.connected() {
            return;
        }
        let connects = allowance.connects();
        let reconnected = {
            let mut definitions = self.lock_definitions();
            let new = definitions.connects != connects;
            definitions.connects = connects;
            if new {
                definitions.team_version = None;
                self.publish(&mut definitions, true);
            }
            new
        };
        if reconnected {
            self.tell_counts(allowance);
        }
        let seen = self.lock_definitions().team_version;
        let read = allowance.definitions(seen).await;
        self.team_reads.fetch_add(1, Ordering::Relaxed);
        let Some((version, records)) = read else { return };
        let mut team = HashMap::new();
        for (at, text) in records {
            match serde_json::from_str::<TeamRecord>(&text) {
                Ok(record) if record.updated_at == at => {
                    team.insert(record.name.to_lowercase(), record);
                }
                _ => tracing::debug!("members: a team definition could not be read; ignored"),
            }
        }
        let mut definitions = self.lock_definitions();
        if definitions.team != team {
            tracing::debug!(version, members = team.len(), "members: the team's definitions changed");
            definitions.team = team;
            self.rebuild(&definitions);
        }
        definitions.team_version = Some(version);
    }

    /// After a reconnect, Redis may have lost the counts: this replica's shares of budgets and its
    /// requests in flight are written again.
    fn tell_counts(&self, allowance: &Allowance) {
        let now = self.clock.now();
        let directory = self.directory.load();
        let tallies = self.lock_tallies();
        for member in directory.by_name.values() {
            let Some(tally) = tallies.get(&member.name.to_lowercase()) else { continue };
            if member.limits.max_in_flight.is_some() {
                allowance.flying(&member.name, u64::from(tally.team_flying));
            }
            if member.limits.budget.is_some() {
                let span = rules::span(member.limits.period(), now);
                let own = tally.own.get(&span.key).cloned().unwrap_or_default();
                allowance.charged(&member.name, now, 0, 0, &span.key, (own.tokens, own.micro_usd));
            }
        }
    }

    /// The member called `name` as requests see it now.
    fn member(&self, name: &str) -> Option<Arc<Member>> {
        self.directory.load().by_name.get(&name.to_lowercase()).cloned()
    }

    async fn admit(self: &Arc<Self>, name: &str, asked: Asked<'_>) -> Result<Pass, Refusal> {
        let now = self.clock.now();
        let Some(member) = self.member(name) else {
            let message = format!("{name} is no longer a member of this endpoint");
            return Err(Refusal { limit: Limit::Revoked, message, retry_after: None });
        };
        rules::check_token(&member, now)?;
        rules::check_model(&member, asked)?;
        let limits = &member.limits;
        let budget = limits.budget.map(|budget| (budget, rules::span(limits.period(), now)));
        if matches!(budget, Some((Budget::Usd(_), _))) && !self.priced(asked.routed) {
            return Err(rules::unpriced_refusal(&member.name, asked.routed));
        }
        let counted = budget.is_some()
            || limits.requests_per_minute.is_some()
            || limits.tokens_per_minute.is_some()
            || limits.max_in_flight.is_some();
        if !counted {
            return Ok(Pass::free());
        }
        if let Some(allowance) = self.allowance().filter(|a| a.connected()) {
            if let Some(decided) = self.admit_by_team(allowance, &member, budget.as_ref(), now).await {
                return decided;
            }
        }
        self.admit_alone(&member, budget.as_ref(), now)
    }

    /// The team's verdict; `None` when it gave none (the replica decides alone).
    async fn admit_by_team(
        self: &Arc<Self>,
        allowance: &Arc<Allowance>,
        member: &Member,
        budget: Option<&(Budget, Span)>,
        now: Timestamp,
    ) -> Option<Result<Pass, Refusal>> {
        let limits = &member.limits;
        let ask = MemberAsk {
            member: &member.name,
            requests_per_minute: limits.requests_per_minute.map_or(0, u64::from),
            tokens_per_minute: limits.tokens_per_minute.unwrap_or(0),
            max_in_flight: limits.max_in_flight.map_or(0, u64::from),
            budget: budget.map(|(budget, span)| match *budget {
                Budget::Usd(usd) => (span.key.as_str(), BudgetUnit::MicroUsd, (usd * 1_000_000.0).round() as u64),
                Budget::Tokens(tokens) => (span.key.as_str(), BudgetUnit::Tokens, tokens),
            }),
            now,
        };
        let verdict = allowance.admit(&ask).await?;
        let key = member.name.to_lowercase();
        let seen = |tally: &mut Tally, team: Spent| {
            if let Some((_, span)) = budget {
                let own = tally.own.get(&span.key).cloned().unwrap_or_default();
                tally.team_seen = Some((span.key.clone(), team, own));
            }
        };
        Some(match verdict {
            MemberVerdict::Admitted { tokens, micro_usd } => {
                let mut tallies = self.lock_tallies();
                let tally = tallies.entry(key.clone()).or_default();
                seen(tally, Spent { tokens, micro_usd });
                if limits.max_in_flight.is_some() {
                    tally.team_flying += 1;
                    Ok(Pass::holding(Flight { inner: self.clone(), member: key, by_team: true }))
                } else {
                    Ok(Pass::free())
                }
            }
            MemberVerdict::Budget { tokens, micro_usd } => {
                let mut tallies = self.lock_tallies();
                seen(tallies.entry(key).or_default(), Spent { tokens, micro_usd });
                let (budget, span) = budget.expect("only a budget is spent");
                let (used, _) = rules::in_budget_unit(*budget, tokens, micro_usd);
                Err(rules::budget_refusal(member, used, span))
            }
            MemberVerdict::RequestsPerMinute(wait) => {
                Err(rules::rate_refusal(&member.name, Limit::RequestsPerMinute, ask.requests_per_minute, wait))
            }
            MemberVerdict::TokensPerMinute(wait) => {
                Err(rules::rate_refusal(&member.name, Limit::TokensPerMinute, ask.tokens_per_minute, wait))
            }
            MemberVerdict::InFlight(_) => {
                Err(rules::in_flight_refusal(&member.name, limits.max_in_flight.unwrap_or(0)))
            }
        })
    }

    /// This process's own decision: without a team, on its counts; with a team out of reach, on
    /// its counts with each limit shared among the replicas it last saw.
    fn admit_alone(
        self: &Arc<Self>,
        member: &Member,
        budget: Option<&(Budget, Span)>,
        now: Timestamp,
    ) -> Result<Pass, Refusal> {
        let limits = &member.limits;
        let replicas = self.allowance().map_or(1, |allowance| allowance.live_members()) as u64;
        let share = |limit: u64| (limit / replicas).max(1);
        let key = member.name.to_lowercase();
        let now_us = now.as_millis().saturating_mul(1000);
        let mut tallies = self.lock_tallies();
        let tally = tallies.entry(key.clone()).or_default();
        if let Some((budget, span)) = budget {
            // The team's count at its last answer, every replica assumed to have spent as much as
            // this one since; without a team (or before its first answer), this replica's own.
            let own = tally.own.get(&span.key).cloned().unwrap_or_default();
            let used = match &tally.team_seen {
                Some((period, team, then)) if period == &span.key => Spent {
                    tokens: team.tokens + own.tokens.saturating_sub(then.tokens) * replicas,
                    micro_usd: team.micro_usd + own.micro_usd.saturating_sub(then.micro_usd) * replicas,
                },
                _ => Spent { tokens: own.tokens * replicas, micro_usd: own.micro_usd * replicas },
            };
            let (used, limit) = rules::in_budget_unit(*budget, used.tokens, used.micro_usd);
            if used >= limit {
                return Err(rules::budget_refusal(member, used, span));
            }
        }
        if let Some(max) = limits.max_in_flight {
            let allowed = share(u64::from(max));
            if u64::from(tally.alone_flying + tally.team_flying) >= allowed {
                return Err(rules::in_flight_refusal(&member.name, max));
            }
        }
        if let Some(tpm) = limits.tokens_per_minute {
            if let Err(wait) = (Rate { per_minute: share(tpm) }).room(tally.tokens_tat, now_us) {
                return Err(rules::rate_refusal(&member.name, Limit::TokensPerMinute, tpm, wait));
            }
        }
        if let Some(rpm) = limits.requests_per_minute {
            match (Rate { per_minute: share(u64::from(rpm)) }).take(tally.requests_tat, now_us) {
                Ok(tat) => tally.requests_tat = tat,
                Err(wait) => {
                    return Err(rules::rate_refusal(&member.name, Limit::RequestsPerMinute, u64::from(rpm), wait));
                }
            }
        }
        if limits.max_in_flight.is_some() {
            tally.alone_flying += 1;
            return Ok(Pass::holding(Flight { inner: self.clone(), member: key, by_team: false }));
        }
        Ok(Pass::free())
    }

    /// An attempt of a member's request ended with `usage`: its tokens and cost charged.
    fn charge(&self, record: &AttemptRecord) {
        let (Some(name), Some(usage)) = (&record.member, &record.usage) else { return };
        let tokens = usage.input + usage.output;
        if tokens == 0 {
            return;
        }
        let micro_usd = self.micro_usd(&record.model, usage);
        let now = self.clock.now();
        let key = name.to_lowercase();
        let member = self.member(name);
        let limits = member.as_ref().map(|m| &m.limits);
        let replicas = self.allowance().map_or(1, |allowance| allowance.live_members()) as u64;
        let own = {
            let mut tallies = self.lock_tallies();
            let tally = tallies.entry(key).or_default();
            for span in rules::current_spans(now) {
                let spent = tally.own.entry(span.key).or_default();
                spent.tokens += tokens;
                spent.micro_usd += micro_usd;
            }
            tally.dirty = true;
            if let Some(tpm) = limits.and_then(|l| l.tokens_per_minute) {
                let rate = Rate { per_minute: (tpm / replicas).max(1) };
                tally.tokens_tat = rate.charge(tally.tokens_tat, now.as_millis().saturating_mul(1000), tokens);
            }
            let span = limits.map(|l| rules::span(l.period(), now));
            span.map(|span| {
                let own = tally.own.get(&span.key).cloned().unwrap_or_default();
                (span.key, own)
            })
        };
        let (Some(allowance), Some(limits)) = (self.allowance(), limits) else { return };
        let tpm = limits.tokens_per_minute.unwrap_or(0);
        let budgeted = limits.budget.is_some();
        if tpm == 0 && !budgeted {
            return;
        }
        let (period, own) = match (budgeted, own) {
            (true, Some((period, own))) => (period, (own.tokens, own.micro_usd)),
            _ => (String::new(), (0, 0)),
        };
        allowance.charged(name, now, tpm, tokens, &period, own);
    }
}

/// A member's request in flight, counted until its answer has gone.
struct Flight {
    inner: Arc<Inner>,
    member: String,
    by_team: bool,
}

impl Drop for Flight {
    fn drop(&mut self) {
        {
            let mut tallies = self.inner.lock_tallies();
            if let Some(tally) = tallies.get_mut(&self.member) {
                match self.by_team {
                    true => tally.team_flying = tally.team_flying.saturating_sub(1),
                    false => tally.alone_flying = tally.alone_flying.saturating_sub(1),
                }
            }
        }
        if self.by_team {
            if let Some(allowance) = self.inner.allowance() {
                allowance.ended(&self.member);
            }
        }
    }
}

impl Members for MemberBook {
    fn identify(&self, hash: &[u8; 32]) -> Option<Result<Arc<str>, Refusal>> {
        let member = self.inner.directory.load().by_hash.get(hash).cloned()?;
        Some(match rules::check_token(&member, self.inner.clock.now()) {
            Ok(()) => Ok(Arc::from(member.name.as_str())),
            Err(refusal) => Err(self.inner.refused(&member.name, refusal)),
        })
    }

    fn admit<'a>(
        &'a self,
        member: &'a str,
        asked: Asked<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Pass, Refusal>> + Send + 'a>> {
        Box::pin(
            async move { self.inner.admit(member, asked).await.map_err(|refusal| self.inner.refused(member, refusal)) },
        )
    }

    fn lists(&self, member: &str, model: &str) -> bool {
        self.inner.member(member).is_some_and(|m| rules::may_list(&m, model))
    }
}

impl Recorder for MemberBook {
    fn key_disabled(&self, _: &ProviderId, _: &KeyId, _: DisableReason, _: Timestamp) {}

    fn attempt(&self, record: AttemptRecord) {
        self.inner.charge(&record);
    }
}

impl crate::metrics::Tap for MemberBook {
    fn attempted(&self, record: &AttemptRecord) {
        self.inner.charge(record);
    }
}
