//! Whether a member's request may go now: its token, its models, and its counted limits (the
//! rates, the requests in flight, the budget), decided by the team when it answers and by this
//! process alone otherwise.

use std::sync::Arc;

use keypool::Timestamp;
use keypool_gateway::{Asked, Limit, Pass, Refusal};
use keypool_team::{Allowance, BudgetUnit, MemberAsk, MemberVerdict};

use super::rules::{self, Rate, Span};
use super::spend::{lock, Spending, Tallies, Tally};
use super::{Budget, Member, Spent};

/// What an admission decides with: the member's counts and prices here, and the team's link.
pub(super) struct Admission<'a> {
    pub(super) spending: &'a Spending,
    pub(super) allowance: Option<&'a Arc<Allowance>>,
    pub(super) now: Timestamp,
}

impl Admission<'_> {
    /// Whether `member` (`None`: no longer one, by the name `name`) may send the request
    /// `asked` now; a pass holds its share of the limits until the answer has gone.
    pub(super) async fn admit(
        &self,
        name: &str,
        member: Option<Arc<Member>>,
        asked: Asked<'_>,
    ) -> Result<Pass, Refusal> {
        let now = self.now;
        let Some(member) = member else {
            let message = format!("{name} is no longer a member of this endpoint");
            return Err(Refusal { limit: Limit::Revoked, message, retry_after: None });
        };
        rules::check_token(&member, now)?;
        rules::check_model(&member, asked)?;
        let limits = &member.limits;
        let budget = limits.budget.map(|budget| (budget, rules::span(limits.period(), now)));
        if matches!(budget, Some((Budget::Usd(_), _))) && !self.spending.priced(asked.routed) {
            return Err(rules::unpriced_refusal(&member.name, asked.routed));
        }
        let counted = budget.is_some()
            || limits.requests_per_minute.is_some()
            || limits.tokens_per_minute.is_some()
            || limits.max_in_flight.is_some();
        if !counted {
            return Ok(Pass::free());
        }
        if let Some(allowance) = self.allowance.filter(|a| a.connected()) {
            if let Some(decided) = self.admit_by_team(allowance, &member, budget.as_ref(), now).await {
                return decided;
            }
        }
        self.admit_alone(&member, budget.as_ref(), now)
    }

    /// The team's verdict; `None` when it gave none (the replica decides alone).
    async fn admit_by_team(
        &self,
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
                let mut tallies = lock(self.spending.tallies());
                let tally = tallies.entry(key.clone()).or_default();
                seen(tally, Spent { tokens, micro_usd });
                if limits.max_in_flight.is_some() {
                    tally.team_flying += 1;
                    Ok(Pass::holding(self.flight(key, true)))
                } else {
                    Ok(Pass::free())
                }
            }
            MemberVerdict::Budget { tokens, micro_usd } => {
                let mut tallies = lock(self.spending.tallies());
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
    fn admit_alone(&self, member: &Member, budget: Option<&(Budget, Span)>, now: Timestamp) -> Result<Pass, Refusal> {
        let limits = &member.limits;
        let replicas = self.allowance.map_or(1, |allowance| allowance.live_members()) as u64;
        let share = |limit: u64| (limit / replicas).max(1);
        let key = member.name.to_lowercase();
        let now_us = now.as_millis().saturating_mul(1000);
        let mut tallies = lock(self.spending.tallies());
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
            return Ok(Pass::holding(self.flight(key, false)));
        }
        Ok(Pass::free())
    }
}

impl Admission<'_> {
    fn flight(&self, member: String, by_team: bool) -> Flight {
        let allowance = self.allowance.filter(|_| by_team).cloned();
        Flight { tallies: self.spending.tallies().clone(), allowance, member }
    }
}

/// A member's request in flight, counted until its answer has gone (by the team too, when it
/// admitted it).
struct Flight {
    tallies: Tallies,
    /// The team that admitted it.
    allowance: Option<Arc<Allowance>>,
    member: String,
}

impl Drop for Flight {
    fn drop(&mut self) {
        if let Some(tally) = lock(&self.tallies).get_mut(&self.member) {
            match self.allowance {
                Some(_) => tally.team_flying = tally.team_flying.saturating_sub(1),
                None => tally.alone_flying = tally.alone_flying.saturating_sub(1),
            }
        }
        if let Some(allowance) = &self.allowance {
            allowance.ended(&self.member);
        }
    }
}
