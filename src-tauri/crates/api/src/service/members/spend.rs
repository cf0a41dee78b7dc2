//! What members spend: each answer's tokens and cost charged to its member, per budget period,
//! kept in the store (and told to the team), at the price table's prices.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use keypool::Timestamp;
use keypool_llm::AttemptRecord;
use keypool_team::Allowance;

use super::rules::{self, Rate};
use super::{Budget, Member, Members, Spent};

/// Every member's counts in this process, shared with the requests in flight that hold them.
pub(super) type Tallies = Arc<Mutex<HashMap<String, Tally>>>;

/// What the members spent and what answers cost.
#[derive(Default)]
pub(super) struct Spending {
    tallies: Tallies,
    /// Each model's price, from the price table.
    prices: RwLock<HashMap<String, Price>>,
}

/// One member's counts in this process.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// This replica's spend per budget period (the current ones).
    pub(super) own: HashMap<String, Spent>,
    /// Spend not yet written to the store.
    pub(super) dirty: bool,
    /// The rates' TATs (µs) while deciding alone.
    pub(super) requests_tat: i64,
    pub(super) tokens_tat: i64,
    /// Requests in flight admitted by this process alone, and by the team.
    pub(super) alone_flying: u32,
    pub(super) team_flying: u32,
    /// The team's spend in a budget period at its last answer, and this replica's own then.
    pub(super) team_seen: Option<(String, Spent, Spent)>,
}

/// A model's price, per million tokens.
#[derive(Debug, Clone, Copy)]
struct Price {
    input: f64,
    cached: f64,
    output: f64,
}

impl Tally {
    /// The team's spend in `period` as best known: its count at the last answer with this
    /// replica's own since; this replica's own when the team never answered.
    pub(super) fn team_view(&self, period: &str) -> Spent {
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

/// Locks `tallies`, whatever a panic elsewhere left.
pub(super) fn lock(tallies: &Mutex<HashMap<String, Tally>>) -> MutexGuard<'_, HashMap<String, Tally>> {
    tallies.lock().unwrap_or_else(|e| e.into_inner())
}

impl Spending {
    /// The counts, for the admissions that change them and the requests they hold.
    pub(super) fn tallies(&self) -> &Tallies {
        &self.tallies
    }

    /// What the member called `name` spent in the period `key` (`month:2026-12`), as best known.
    pub(super) fn spent_in(&self, name: &str, key: &str) -> Spent {
        lock(&self.tallies).get(&name.to_lowercase()).map_or(Spent::default(), |t| t.team_view(key))
    }

    /// What `member` used of its budget in the current period at `now`, in the budget's unit: the
    /// unit's name, the limit and the amount used (the team's count at its last answer, with this
    /// replica's since; this replica's alone without a team). `None` without a budget.
    pub(super) fn budget_used(&self, member: &Member, now: Timestamp) -> Option<(&'static str, f64, f64)> {
        let budget = member.limits.budget?;
        let span = rules::span(member.limits.period(), now);
        let used =
            lock(&self.tallies).get(&member.name.to_lowercase()).map_or(Spent::default(), |t| t.team_view(&span.key));
        Some(match budget {
            Budget::Usd(usd) => ("usd", usd, used.micro_usd as f64 / 1_000_000.0),
            Budget::Tokens(tokens) => ("tokens", tokens as f64, used.tokens as f64),
        })
    }

    /// This replica's spend of the current periods at `now`, from the store.
    pub(super) fn load(&self, members: &Members, now: Timestamp) {
        let spans = rules::current_spans(now);
        let keys: Vec<&str> = spans.iter().map(|s| s.key.as_str()).collect();
        match members.spend(&keys) {
            Ok(rows) => {
                let mut tallies = lock(&self.tallies);
                for (member, period, spent) in rows {
                    tallies.entry(member.to_lowercase()).or_default().own.insert(period, spent);
                }
            }
            Err(error) => tracing::error!(%error, "members: what they spent could not be read; counting from zero"),
        }
    }

    /// Writes what changed of this replica's spend to the store; periods past at `now` are
    /// forgotten.
    pub(super) fn save(&self, members: &Members, now: Timestamp) {
        let spans = rules::current_spans(now);
        let current: Vec<&str> = spans.iter().map(|s| s.key.as_str()).collect();
        let rows: Vec<(String, String, Spent)> = {
            let mut tallies = lock(&self.tallies);
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
        if let Err(error) = members.save_spend(&borrowed, &current) {
            tracing::error!(%error, "members: what they spent could not be saved; trying again");
            let mut tallies = lock(&self.tallies);
            for (member, _, _) in &rows {
                if let Some(tally) = tallies.get_mut(member) {
                    tally.dirty = true;
                }
            }
        }
    }

    /// Takes the price table's prices.
    pub(super) fn set_prices(&self, prices: Vec<crate::service::Price>) {
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

    pub(super) fn priced(&self, model: &str) -> bool {
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

    /// An attempt of `member`'s request (`None`: no longer a member) ended with `usage`: its
    /// tokens and cost charged at `now`, and told to the team through `allowance`.
    pub(super) fn charge(
        &self,
        record: &AttemptRecord,
        member: Option<&Member>,
        allowance: Option<&Allowance>,
        now: Timestamp,
    ) {
        let (Some(name), Some(usage)) = (&record.member, &record.usage) else { return };
        let tokens = usage.input + usage.output;
        if tokens == 0 {
            return;
        }
        let micro_usd = self.micro_usd(&record.model, usage);
        let key = name.to_lowercase();
        let limits = member.map(|m| &m.limits);
        let replicas = allowance.map_or(1, |allowance| allowance.live_members()) as u64;
        let own = {
            let mut tallies = lock(&self.tallies);
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
        let (Some(allowance), Some(limits)) = (allowance, limits) else { return };
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

    /// After a reconnect, Redis may have lost the counts: this replica's shares of `members`'
    /// budgets and its requests in flight are written again.
    pub(super) fn tell_counts(&self, members: &[Arc<Member>], allowance: &Allowance, now: Timestamp) {
        let tallies = lock(&self.tallies);
        for member in members {
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
}
