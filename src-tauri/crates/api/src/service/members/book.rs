//! Members of an endpoint (a server's, or the app's named tokens): each with its own token and
//! limits, enforced before a request reaches the pool ([`MemberBook`] is the gateway's
//! [`keypool_gateway::Members`]) and charged with what its answers used ([`MemberBook`] is also
//! told of every attempt, as a [`Recorder`]). The book's parts: [`super::directory`] (who the
//! members are, from the store and the team), [`super::admission`] (whether a request may go),
//! [`super::spend`] (what answers cost them), on the arithmetic of [`super::rules`].
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use keypool::{Clock, DisableReason, KeyId, ProviderId, Timestamp};
use keypool_gateway::{Asked, Limit, Members, Pass, Refusal};
use keypool_llm::{AttemptRecord, Recorder};
use keypool_team::Allowance;

use super::admission::Admission;
use super::directory::Roster;
use super::rules;
use super::spend::Spending;
use super::Members as Store;

/// How often the book looks for changes: the store's members, the team's definitions.
const POLL: Duration = keypool_team::DEFINITIONS_POLL;
/// How often what members spent is written to the store.
const FLUSH: Duration = Duration::from_secs(1);
/// How often the price table is read again.
const PRICES: Duration = Duration::from_secs(10);

/// A member's budget ran out: `used` of `limit` in `unit` for the period `period` (its name,
/// `day:2026-12-10`), which ends at `resets_at` (`None`: never).
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetSpent {
    pub member: String,
    /// `usd` or `tokens`.
    pub unit: &'static str,
    pub used: f64,
    pub limit: f64,
    pub period: String,
    pub resets_at: Option<Timestamp>,
}

/// Who hears what the book decides beyond a request's answer (a server's alerts).
pub trait BookWatch: Send + Sync {
    fn budget_spent(&self, spent: &BudgetSpent);
}

/// What the book holds now, for a scrape of `/metrics`: every budget, the refusals so far, and
/// how many times the team's definitions were read (`None` without a team).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BookSnapshot {
    pub budgets: Vec<BudgetView>,
    pub refusals: Vec<(String, &'static str, u64)>,
    pub team_reads: Option<u64>,
}

/// An endpoint's members: their definitions, counts and charges. Cheap to clone.
#[derive(Clone)]
pub struct MemberBook {
    inner: Arc<Inner>,
}

struct Inner {
    clock: Arc<dyn Clock>,
    roster: Roster,
    spending: Spending,
    /// The store the members are read from and their spend written to.
    store: OnceLock<Store>,
    /// The team's counts, once a team is joined.
    allowance: OnceLock<Arc<Allowance>>,
    /// The task that keeps the book in step has started.
    following: std::sync::atomic::AtomicBool,
    /// Refusals per member and limit, for metrics.
    refusals: Mutex<HashMap<(String, &'static str), u64>>,
    /// Told when a member's budget is spent.
    watch: OnceLock<Weak<dyn BookWatch>>,
}

/// What one member spent, as the app's token list shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemberSpent {
    /// In this calendar month (UTC).
    pub month: super::Spent,
    /// Of its budget, in the budget's unit and period; `None` without a budget.
    pub budget_used: Option<f64>,
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
                roster: Roster::default(),
                spending: Spending::default(),
                store: OnceLock::new(),
                allowance: OnceLock::new(),
                following: Default::default(),
                refusals: Mutex::default(),
                watch: OnceLock::new(),
            }),
        }
    }

    /// Tells `watch` when a member's budget is spent, for as long as it lives (it may hold the
    /// book itself: a server's observers do).
    pub fn watch_with(&self, watch: Weak<dyn BookWatch>) {
        let _ = self.inner.watch.set(watch);
    }

    /// Charges the member of `record`'s request with what its attempt used.
    pub fn charged(&self, record: &AttemptRecord) {
        self.inner.charge(record);
    }

    /// Serves the members of `store`: reads them, their spend and the prices now (the store's
    /// services do, when they are made).
    pub(crate) fn attach(&self, store: Store) {
        if self.inner.store.set(store).is_err() {
            return;
        }
        if let Some(members) = self.inner.store.get() {
            self.inner.spending.load(members, self.inner.clock.now());
        }
        self.refresh();
    }

    /// Counts the members through the team's `allowance` from now on (a server that joined one).
    pub fn count_with(&self, allowance: Arc<Allowance>) {
        if self.inner.allowance.set(allowance).is_ok() {
            self.refresh();
        }
    }

    /// Keeps the book in step with the store and the team (see [`POLL`]) on a task of the current
    /// Tokio runtime, for as long as the book lives; once, however often it is called.
    pub fn follow(&self) {
        if self.inner.following.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(Inner::keep_in_step(inner));
    }

    /// Reads the store's members and prices again now (after an apply, a token's change), and
    /// tells the team what changed.
    pub fn refresh(&self) {
        self.inner.refresh_local(true);
        self.inner.read_prices();
    }

    /// Members the config file no longer lists, removed from the store now: the team is told.
    pub fn removed(&self, names: &[String]) {
        self.inner.roster.removed(names, self.inner.clock.now().as_millis());
    }

    /// Every member with a budget: its unit, limit and what was used in the current period (the
    /// team's count at its last answer, with this replica's since; this replica's alone without a
    /// team).
    pub fn budgets(&self) -> Vec<BudgetView> {
        let now = self.inner.clock.now();
        let mut out: Vec<BudgetView> = self
            .inner
            .roster
            .members()
            .iter()
            .filter_map(|member| {
                let (unit, limit, used) = self.inner.spending.budget_used(member, now)?;
                Some(BudgetView { member: member.name.clone(), unit, limit, used })
            })
            .collect();
        out.sort_by(|a, b| a.member.cmp(&b.member));
        out
    }

    /// What `member` spent this month, and of its budget.
    pub fn spent(&self, member: &super::Member) -> MemberSpent {
        let now = self.inner.clock.now();
        MemberSpent {
            month: self.inner.spending.spent_in(&member.name, &rules::span(super::BudgetPeriod::Month, now).key),
            budget_used: self.inner.spending.budget_used(member, now).map(|(_, _, used)| used),
        }
    }

    /// What the book holds now, for a scrape.
    pub fn snapshot(&self) -> BookSnapshot {
        BookSnapshot { budgets: self.budgets(), refusals: self.refusals(), team_reads: self.team_reads() }
    }

    /// How many times the team's member definitions were read (changed or not); `None` without
    /// a team.
    pub fn team_reads(&self) -> Option<u64> {
        self.inner.allowance().map(|_| self.inner.roster.team_reads())
    }

    /// Refusals so far, per member and limit.
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

impl Inner {
    fn allowance(&self) -> Option<&Arc<Allowance>> {
        self.allowance.get()
    }

    fn refresh_local(&self, force: bool) {
        let Some(members) = self.store.get() else { return };
        let allowance = self.allowance().map(|a| &**a);
        self.roster.refresh_local(members, allowance, self.clock.now().as_millis(), force);
    }

    fn save_spend(&self) {
        if let Some(members) = self.store.get() {
            self.spending.save(members, self.clock.now());
        }
    }

    fn read_prices(&self) {
        let Some(members) = self.store.get() else { return };
        match members.prices() {
            Ok(prices) => self.spending.set_prices(prices),
            Err(error) => tracing::warn!(%error, "members: the price table could not be read"),
        }
    }

    fn charge(&self, record: &AttemptRecord) {
        let member = record.member.as_deref().and_then(|name| self.roster.member(name));
        let allowance = self.allowance().map(|a| &**a);
        self.spending.charge(record, member.as_deref(), allowance, self.clock.now());
    }

    async fn admit(&self, name: &str, asked: Asked<'_>) -> Result<Pass, Refusal> {
        let admission = Admission { spending: &self.spending, allowance: self.allowance(), now: self.clock.now() };
        admission.admit(name, self.roster.member(name), asked).await
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

    /// Tells the watch that `member`'s budget is spent (alerts send it once per period).
    fn tell_budget_spent(&self, member: &str) {
        let (Some(watch), Some(member)) = (self.watch.get().and_then(Weak::upgrade), self.roster.member(member)) else {
            return;
        };
        let now = self.clock.now();
        let Some((unit, limit, used)) = self.spending.budget_used(&member, now) else { return };
        let span = rules::span(member.limits.period(), now);
        watch.budget_spent(&BudgetSpent {
            member: member.name.clone(),
            unit,
            used,
            limit,
            period: span.key,
            resets_at: span.end,
        });
    }

    /// Every [`POLL`]: the store's members, the team's definitions (and after a reconnect, what
    /// the team may have lost); every [`FLUSH`] the spend to the store; every [`PRICES`] the
    /// prices. Until the book goes (its spend written then).
    async fn keep_in_step(inner: Weak<Inner>) {
        let mut flushed = Instant::now();
        let mut priced = Instant::now();
        loop {
            tokio::time::sleep(POLL).await;
            let Some(this) = inner.upgrade() else { return };
            this.step(&mut flushed, &mut priced).await;
        }
    }

    /// One round of [`Inner::keep_in_step`].
    async fn step(&self, flushed: &mut Instant, priced: &mut Instant) {
        self.refresh_local(false);
        if let Some(allowance) = self.allowance().cloned() {
            if self.roster.follow_team(&allowance).await {
                self.spending.tell_counts(&self.roster.members(), &allowance, self.clock.now());
            }
        }
        if flushed.elapsed() >= FLUSH {
            self.save_spend();
            *flushed = Instant::now();
        }
        if priced.elapsed() >= PRICES {
            self.read_prices();
            *priced = Instant::now();
        }
    }
}

impl Members for MemberBook {
    fn identify(&self, hash: &[u8; 32]) -> Option<Result<Arc<str>, Refusal>> {
        let member = self.inner.roster.by_hash(hash)?;
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
        self.inner.roster.member(member).is_some_and(|m| rules::may_list(&m, model))
    }
}

impl Recorder for MemberBook {
    fn key_disabled(&self, _: &ProviderId, _: &KeyId, _: DisableReason, _: Timestamp) {}

    fn attempt(&self, record: AttemptRecord) {
        self.inner.charge(&record);
    }
}
