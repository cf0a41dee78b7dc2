//! What a member's limits say, as arithmetic on `now`: budget periods, the per-minute rates as a
//! generic cell rate algorithm (GCRA, as governor and Redis' CL.THROTTLE compute it), the checks
//! that need no counts, and the sentences a refusal says. Nothing here reads a clock or a store.
//!
//! A rate of L per minute admits a burst of L at once, then one every 60/L s: its state is the
//! *theoretical arrival time* (TAT), the instant the member's use so far would end if it had
//! kept to the rate. A request is admitted when the TAT it leaves is at most a minute ahead of
//! `now`. Tokens are only known once an answer is complete, so the tokens rate is charged after
//! (the TAT moves by the tokens used) and a request is admitted while the TAT is less than a
//! minute ahead: a member who used a minute's tokens in one request waits until they drain.
//! Times in these sums are microseconds since the epoch, so a rate such as 7 per minute keeps its
//! fraction of a millisecond (the same numbers go through Redis' Lua, whose numbers are doubles:
//! exact up to 2^53 µs, some 285 years).

use std::time::Duration;

use super::{Budget, BudgetPeriod, Member};
use keypool::{glob_matches, Timestamp};
use keypool_gateway::{Asked, Limit, Refusal};

/// A minute, in microseconds: how far ahead a rate's TAT may run.
pub const MINUTE_US: i64 = 60_000_000;

/// One budget period: its name in the store and in Redis (`day:2026-12-10`, `week:2026-12-07`,
/// `month:2026-12`, `total`), and when it ends (`None`: never).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub key: String,
    pub end: Option<Timestamp>,
}

/// The period of kind `period` that `now` falls in, in UTC.
pub fn span(period: BudgetPeriod, now: Timestamp) -> Span {
    let at = jiff::Timestamp::from_millisecond(now.as_millis()).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let date = at.to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
    let (key, next) = match period {
        BudgetPeriod::Total => return Span { key: "total".into(), end: None },
        BudgetPeriod::Day => (format!("day:{date}"), date.tomorrow().ok()),
        BudgetPeriod::Week => {
            let monday = date
                .checked_sub(jiff::Span::new().days(i64::from(date.weekday().to_monday_zero_offset())))
                .unwrap_or(date);
            (format!("week:{monday}"), monday.checked_add(jiff::Span::new().days(7)).ok())
        }
        BudgetPeriod::Month => {
            let first = date.first_of_month();
            (
                format!("month:{:04}-{:02}", first.year(), first.month()),
                first.checked_add(jiff::Span::new().months(1)).ok(),
            )
        }
    };
    let end = next
        .and_then(|day| day.to_zoned_datetime(jiff::tz::TimeZone::UTC).ok())
        .map(|midnight| Timestamp::from_millis(midnight.timestamp().as_millisecond()));
    Span { key, end }
}

/// The current period of every kind at `now`: what a store keeps (the rest ended).
pub fn current_spans(now: Timestamp) -> Vec<Span> {
    [BudgetPeriod::Day, BudgetPeriod::Week, BudgetPeriod::Month, BudgetPeriod::Total]
        .into_iter()
        .map(|period| span(period, now))
        .collect()
}

/// A rate of `per_minute` (requests, or tokens) as GCRA, over TATs in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_minute: u64,
}

impl Rate {
    /// How far `cost` moves the TAT.
    fn step(self, cost: u64) -> i64 {
        let step = i128::from(MINUTE_US) * i128::from(cost) / i128::from(self.per_minute.max(1));
        i64::try_from(step).unwrap_or(i64::MAX)
    }

    /// Takes one request at `now_us` with the TAT `tat_us` (0: none yet): the new TAT, or how long
    /// until one would be admitted.
    pub fn take(self, tat_us: i64, now_us: i64) -> Result<i64, Duration> {
        let next = tat_us.max(now_us).saturating_add(self.step(1));
        match next - now_us > MINUTE_US {
            false => Ok(next),
            true => Err(micros(next - now_us - MINUTE_US)),
        }
    }

    /// Whether anything may start at `now_us` under the TAT `tat_us` (a rate charged after):
    /// `Err` how long until it may.
    pub fn room(self, tat_us: i64, now_us: i64) -> Result<(), Duration> {
        match tat_us - now_us >= MINUTE_US {
            false => Ok(()),
            true => Err(micros(tat_us - now_us - MINUTE_US + 1)),
        }
    }

    /// The TAT after `cost` was used at `now_us`.
    pub fn charge(self, tat_us: i64, now_us: i64, cost: u64) -> i64 {
        tat_us.max(now_us).saturating_add(self.step(cost))
    }
}

fn micros(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

/// A member's spend in a budget's unit: tokens, or US dollars in millionths.
pub fn in_budget_unit(budget: Budget, tokens: u64, micro_usd: u64) -> (u64, u64) {
    match budget {
        Budget::Usd(usd) => (micro_usd, (usd * 1_000_000.0).round().max(0.0) as u64),
        Budget::Tokens(limit) => (tokens, limit),
    }
}

/// Refusals that need no counts: an expired or revoked token.
pub fn check_token(member: &Member, now: Timestamp) -> Result<(), Refusal> {
    if !member.enabled {
        let message = format!("this token ({}) was revoked; ask whoever gave it to you", member.name);
        return Err(Refusal { limit: Limit::Revoked, message, retry_after: None });
    }
    if let Some(expires) = member.expires_at.filter(|&at| at <= now.as_millis()) {
        let message = format!("this token ({}) expired at {}", member.name, Timestamp::from_millis(expires));
        return Err(Refusal { limit: Limit::Expired, message, retry_after: None });
    }
    Ok(())
}

/// Whether `member` may ask for `asked`: no list, or a glob matching the name asked for, the model
/// it was routed to, or `provider/model`.
pub fn check_model(member: &Member, asked: Asked<'_>) -> Result<(), Refusal> {
    let models = &member.limits.models;
    if models.is_empty() || may_list(member, asked.model) || may_list(member, asked.routed) {
        return Ok(());
    }
    let qualified = format!("{}/{}", asked.provider, asked.routed);
    if models.iter().any(|glob| glob_matches(glob, &qualified)) {
        return Ok(());
    }
    let message =
        format!("{} may not use the model `{}`: its models are {}", member.name, asked.model, models.join(", "));
    Err(Refusal { limit: Limit::Model, message, retry_after: None })
}

/// Whether `member`'s model list lets it ask for `model` by that name.
pub fn may_list(member: &Member, model: &str) -> bool {
    let models = &member.limits.models;
    models.is_empty() || models.iter().any(|glob| glob_matches(glob, model))
}

/// The sentence for a rate refusal.
pub fn rate_refusal(member: &str, limit: Limit, per_minute: u64, wait: Duration) -> Refusal {
    let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
    let message = match limit {
        Limit::TokensPerMinute => {
            format!("{member} may use {per_minute} tokens per minute: the next request is allowed in {seconds} s")
        }
        _ => format!("{member} may send {per_minute} requests per minute: the next is allowed in {seconds} s"),
    };
    Refusal { limit, message, retry_after: Some(wait.max(Duration::from_millis(1))) }
}

/// The sentence for a full in-flight count.
pub fn in_flight_refusal(member: &str, max: u32) -> Refusal {
    let message = format!("{member} may have {max} requests in flight: one must finish first");
    Refusal { limit: Limit::InFlight, message, retry_after: Some(Duration::from_secs(1)) }
}

/// The sentence for a spent budget: what it is, what was used, when it resets.
pub fn budget_refusal(member: &Member, used: u64, span: &Span) -> Refusal {
    let budget = member.limits.budget.unwrap_or(Budget::Tokens(0));
    let (amount, used) = match budget {
        Budget::Usd(usd) => (format!("${usd:.2}"), format!("${:.2}", used as f64 / 1_000_000.0)),
        Budget::Tokens(tokens) => (format!("{tokens} tokens"), format!("{used} tokens")),
    };
    let period = member.limits.period();
    let per = match period {
        BudgetPeriod::Total => "in total".to_owned(),
        other => format!("per {}", other.as_str()),
    };
    let resets = match span.end {
        Some(end) => format!("it resets at {end}"),
        None => "it does not reset: only a larger budget lets it go on".to_owned(),
    };
    let message = format!("{}'s budget of {amount} {per} is spent ({used} used); {resets}", member.name);
    Refusal { limit: Limit::Budget, message, retry_after: None }
}

/// The refusal of a model without a price to a member whose budget is in US dollars: its cost
/// could not be counted.
pub fn unpriced_refusal(member: &str, model: &str) -> Refusal {
    let message = format!(
        "{member}'s budget is in US dollars and the model `{model}` has no price, so its cost cannot be counted: \
         the operator sets one in the config file's [[prices]]"
    );
    Refusal { limit: Limit::Budget, message, retry_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        let at: jiff::Timestamp = text.parse().expect("an RFC 3339 instant");
        Timestamp::from_millis(at.as_millisecond())
    }

    #[test]
    fn periods_are_utc_days_mondays_and_months() {
        let now = at("2026-12-10T23:59:59.999Z");
        assert_eq!(
            span(BudgetPeriod::Day, now),
            Span { key: "day:2026-12-10".into(), end: Some(at("2026-12-11T00:00:00Z")) }
        );
        assert_eq!(
            span(BudgetPeriod::Week, now),
            Span { key: "week:2026-12-07".into(), end: Some(at("2026-12-14T00:00:00Z")) },
            "10 December 2026 is a Thursday: its week began on Monday the 7th"
        );
        assert_eq!(
            span(BudgetPeriod::Month, at("2026-12-31T12:00:00Z")),
            Span { key: "month:2026-12".into(), end: Some(at("2027-01-01T00:00:00Z")) },
            "December's month ends with the year"
        );
        assert_eq!(span(BudgetPeriod::Total, now), Span { key: "total".into(), end: None });
        assert_eq!(
            span(BudgetPeriod::Week, at("2026-12-07T00:00:00Z")).key,
            "week:2026-12-07",
            "a Monday starts its own week"
        );
    }

    #[test]
    fn a_rate_admits_its_burst_then_one_per_interval() {
        let rate = Rate { per_minute: 2 };
        let now = 1_000 * MINUTE_US;
        let first = rate.take(0, now).expect("the first of the burst");
        let second = rate.take(first, now).expect("the second of the burst");
        assert_eq!(rate.take(second, now), Err(Duration::from_secs(30)), "the third waits for half a minute");
        let later = now + 30 * 1_000_000;
        assert!(rate.take(second, later).is_ok(), "and passes once it has waited");
        let seven = Rate { per_minute: 7 };
        let mut tat = 0;
        for i in 0..7 {
            tat = seven.take(tat, now).unwrap_or_else(|wait| panic!("request {i} of 7 waits {wait:?}"));
        }
        assert!(seven.take(tat, now).is_err(), "an eighth in the same minute is refused, fractions kept");
    }

    #[test]
    fn a_tokens_rate_charged_after_admits_until_a_minute_is_used() {
        let rate = Rate { per_minute: 1_000 };
        let now = 1_000 * MINUTE_US;
        assert_eq!(rate.room(0, now), Ok(()));
        let tat = rate.charge(0, now, 600);
        assert_eq!(rate.room(tat, now), Ok(()), "600 of 1000 used: room left");
        let tat = rate.charge(tat, now, 1_400);
        let wait = rate.room(tat, now).expect_err("2000 used of 1000 a minute: it waits");
        assert!(wait > Duration::from_secs(59) && wait <= Duration::from_secs(61), "about a minute: {wait:?}");
    }
}
