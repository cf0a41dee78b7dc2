//! `[[members]]` and `[[prices]]` in the server's config file: members whose tokens come from
//! the environment (`token = "$NAME"`) or a file (`token_file`), never from the file itself, and
//! the prices US-dollar budgets are counted at. Checked whole when the file is read (a bad
//! member stops the start, or is logged on SIGHUP, and changes nothing); applied after the
//! providers.

use std::path::PathBuf;

use keypool_api::service::{Budget, BudgetPeriod, Member, MemberLimits, MemberSource, NewPrice};
use keypool_api::AppContext;
use serde::Deserialize;
use toml::Spanned;

use crate::token::MIN_TOKEN_CHARS;

/// `[[members]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberConfig {
    pub name: Spanned<String>,
    /// `$NAME`: the environment variable holding the token.
    pub token: Option<String>,
    /// A file holding the token (trimmed).
    pub token_file: Option<PathBuf>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    pub budget_period: Option<BudgetPeriod>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
    pub max_in_flight: Option<u32>,
    #[serde(default)]
    pub models: Vec<String>,
    /// `YYYY-MM-DD` (the token works through that day, UTC) or an RFC 3339 instant.
    pub expires: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
}

impl std::fmt::Debug for MemberConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberConfig").field("name", self.name.get_ref()).finish_non_exhaustive()
    }
}

fn yes() -> bool {
    true
}

/// `[[prices]]`: US dollars per million tokens of a model (as its provider names it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    pub model: String,
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// What cached prompt tokens cost; the input price when left out.
    pub cached_per_million: Option<f64>,
}

pub use keypool_api::service::valid_member_name as valid_name;

/// An expiry as the config and the command line write it: `YYYY-MM-DD` (through that day, UTC:
/// the token stops at the next midnight) or an RFC 3339 instant; milliseconds since the epoch.
pub fn parse_expiry(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(date) = text.parse::<jiff::civil::Date>() {
        let next = date.tomorrow().map_err(|e| e.to_string())?;
        let midnight = next.to_zoned_datetime(jiff::tz::TimeZone::UTC).map_err(|e| e.to_string())?;
        return Ok(midnight.timestamp().as_millisecond());
    }
    text.parse::<jiff::Timestamp>()
        .map(|at| at.as_millisecond())
        .map_err(|_| format!("{text:?} is neither a date (2027-06-30) nor an RFC 3339 instant (2027-06-30T12:00:00Z)"))
}

/// The limits as given, checked: one budget at most, numbers above zero, globs not empty.
pub fn limits(
    budget_usd: Option<f64>,
    budget_tokens: Option<u64>,
    budget_period: Option<BudgetPeriod>,
    requests_per_minute: Option<u32>,
    tokens_per_minute: Option<u64>,
    max_in_flight: Option<u32>,
    models: Vec<String>,
) -> Result<MemberLimits, String> {
    let budget = match (budget_usd, budget_tokens) {
        (Some(_), Some(_)) => return Err("a budget is in US dollars or in tokens, not both".into()),
        (Some(usd), None) if !(usd.is_finite() && usd >= 0.0) => {
            return Err("budget_usd is a number of dollars, 0 or more".into())
        }
        (Some(usd), None) => Some(Budget::Usd(usd)),
        (None, Some(tokens)) => Some(Budget::Tokens(tokens)),
        (None, None) => None,
    };
    if budget.is_none() && budget_period.is_some() {
        return Err("budget_period needs a budget (budget_usd or budget_tokens)".into());
    }
    if requests_per_minute == Some(0) || tokens_per_minute == Some(0) || max_in_flight == Some(0) {
        return Err("a rate or an in-flight limit is 1 or more (leave it out for none)".into());
    }
    let models: Vec<String> = models.into_iter().map(|m| m.trim().to_owned()).collect();
    if models.iter().any(|m| m.is_empty() || m.len() > keypool_gateway::MAX_MODEL_BYTES) {
        return Err(format!("a model glob is 1 to {} bytes", keypool_gateway::MAX_MODEL_BYTES));
    }
    // Canonical: a period exactly when there is a budget, so a definition read back compares
    // equal to the one written (and an unchanged config file changes nothing).
    let budget_period = budget.map(|_| budget_period.unwrap_or(BudgetPeriod::Month));
    Ok(MemberLimits { budget, budget_period, requests_per_minute, tokens_per_minute, max_in_flight, models })
}

/// The token of a config member: from `$NAME` in the environment or from `token_file`; at least
/// [`MIN_TOKEN_CHARS`] characters.
fn token_of(member: &MemberConfig) -> Result<String, String> {
    let name = member.name.get_ref();
    let token = match (&member.token, &member.token_file) {
        (Some(_), Some(_)) => return Err(format!("member {name:?}: token or token_file, not both")),
        (None, None) => return Err(format!("member {name:?}: needs token = \"$ENV_VAR\" or token_file")),
        (Some(reference), None) => {
            let Some(var) = reference.trim().strip_prefix('$').filter(|v| !v.is_empty()) else {
                return Err(format!(
                    "member {name:?}: the token is read from the environment (token = \"$ENV_VAR\") or a file \
                     (token_file), never written in the config"
                ));
            };
            std::env::var(var).map_err(|_| format!("member {name:?}: the environment variable {var} is not set"))?
        }
        (None, Some(path)) => {
            crate::warn_if_others_can_read(path, "a member's token file");
            std::fs::read_to_string(path).map_err(|e| format!("member {name:?}: {}: {e}", path.display()))?
        }
    };
    let token = token.trim().to_owned();
    let length = token.chars().count();
    if length < MIN_TOKEN_CHARS {
        return Err(format!(
            "member {name:?}: the token is {length} characters; at least {MIN_TOKEN_CHARS} are needed"
        ));
    }
    Ok(token)
}

/// The file's members as they are to be stored, each checked (`line` gives a member's line in
/// the file); nothing is written.
pub fn resolve(members: &[MemberConfig], line: impl Fn(usize) -> usize) -> Result<Vec<Member>, String> {
    let mut names = std::collections::HashSet::new();
    let mut tokens = std::collections::HashSet::new();
    let mut out = Vec::new();
    for member in members {
        let at = line(member.name.span().start);
        let name = member.name.get_ref().trim();
        if !valid_name(name) {
            return Err(format!("line {at}: a member's name is 1 to 64 of A-Z a-z 0-9 . _ - @, not {name:?}"));
        }
        if !names.insert(name.to_lowercase()) {
            return Err(format!("line {at}: a second member named {name:?}"));
        }
        let limits = limits(
            member.budget_usd,
            member.budget_tokens,
            member.budget_period,
            member.requests_per_minute,
            member.tokens_per_minute,
            member.max_in_flight,
            member.models.clone(),
        )
        .map_err(|e| format!("line {at}: member {name:?}: {e}"))?;
        let expires_at = member
            .expires
            .as_deref()
            .map(parse_expiry)
            .transpose()
            .map_err(|e| format!("line {at}: member {name:?}: expires: {e}"))?;
        let token = token_of(member).map_err(|e| format!("line {at}: {e}"))?;
        let token_sha256 = keypool_gateway::token_hash(&token);
        if !tokens.insert(token_sha256) {
            return Err(format!("line {at}: member {name:?} has the token of another member"));
        }
        out.push(Member {
            name: name.to_owned(),
            token_sha256,
            source: MemberSource::Config,
            enabled: member.enabled,
            expires_at,
            limits,
            agent: None,
            created_at: 0,
            updated_at: 0,
        });
    }
    Ok(out)
}

/// Checks the prices: finite, 0 or more.
pub fn check_prices(prices: &[PriceConfig]) -> Result<(), String> {
    for price in prices {
        let all = [Some(price.input_per_million), Some(price.output_per_million), price.cached_per_million];
        if price.model.trim().is_empty() || all.into_iter().flatten().any(|p| !(p.is_finite() && p >= 0.0)) {
            return Err(format!("the price of {:?}: a model and dollar amounts of 0 or more", price.model));
        }
    }
    Ok(())
}

/// What applying the members changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct MembersApplied {
    pub written: usize,
    /// The members the file no longer lists, removed.
    pub removed: Vec<String>,
}

/// Writes the file's members into the store (a definition unchanged keeps its time), removes
/// the members the file added before and no longer lists, and sets its prices. A member of the
/// file's that the command line added, or one with the server's own token, refuses the file.
pub fn apply(
    context: &AppContext,
    members: &[Member],
    prices: &[PriceConfig],
    owner_token: &[u8; 32],
) -> Result<MembersApplied, String> {
    let store = context.members().map_err(|e| e.to_string())?;
    let existing = store.list().map_err(|e| e.to_string())?;
    for member in members {
        if member.token_sha256 == *owner_token {
            return Err(format!("member {:?} has the server's own token: give it one of its own", member.name));
        }
        let clash = existing.iter().find(|m| {
            (m.name.eq_ignore_ascii_case(&member.name) && m.source == MemberSource::Cli)
                || (m.token_sha256 == member.token_sha256 && !m.name.eq_ignore_ascii_case(&member.name))
        });
        if let Some(clash) = clash {
            return Err(match clash.name.eq_ignore_ascii_case(&member.name) {
                true => format!(
                    "member {:?} was added with `keypool-server members add`: revoke it there and rename one",
                    member.name
                ),
                false => format!("member {:?} has the token of member {:?}", member.name, clash.name),
            });
        }
    }
    let mut applied = MembersApplied::default();
    for member in members {
        let before = existing.iter().find(|m| m.name.eq_ignore_ascii_case(&member.name));
        let stored = store.put(member.clone()).map_err(|e| e.to_string())?;
        if before.is_none_or(|b| b.updated_at != stored.updated_at) {
            applied.written += 1;
        }
    }
    for old in existing.iter().filter(|m| m.source == MemberSource::Config) {
        if !members.iter().any(|m| m.name.eq_ignore_ascii_case(&old.name)) {
            store.delete(&old.name).map_err(|e| e.to_string())?;
            applied.removed.push(old.name.clone());
        }
    }
    let usage = context.usage().map_err(|e| e.to_string())?;
    for price in prices {
        let new = NewPrice {
            model: price.model.trim().to_owned(),
            input_per_million: price.input_per_million,
            cached_per_million: price.cached_per_million,
            output_per_million: price.output_per_million,
        };
        usage.set_price(new).map_err(|e| format!("the price of {:?}: {e}", price.model))?;
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_date_lasts_through_its_day_in_utc() {
        let end = parse_expiry("2027-06-30").unwrap();
        assert_eq!(keypool::Timestamp::from_millis(end).to_string(), "2027-07-01T00:00:00.000Z", "the next midnight");
        let exact = parse_expiry("2027-06-30T12:00:00Z").unwrap();
        assert_eq!(keypool::Timestamp::from_millis(exact).to_string(), "2027-06-30T12:00:00.000Z");
        assert!(parse_expiry("next tuesday").is_err(), "anything else is refused");
    }

    #[test]
    fn a_budget_is_one_unit_and_rates_are_positive() {
        let some = |usd, tokens| limits(usd, tokens, None, None, None, None, vec![]);
        assert!(some(Some(1.0), Some(1)).is_err(), "not both");
        assert!(some(Some(-1.0), None).is_err() && some(Some(f64::NAN), None).is_err(), "no negative or NaN dollars");
        assert_eq!(some(None, Some(5)).unwrap().budget, Some(Budget::Tokens(5)));
        assert!(limits(None, None, None, Some(0), None, None, vec![]).is_err(), "0 per minute is refused");
        assert!(
            limits(None, None, Some(BudgetPeriod::Day), None, None, None, vec![]).is_err(),
            "a period needs a budget"
        );
        assert!(limits(None, None, None, None, None, None, vec![" ".into()]).is_err(), "an empty glob");
    }

    #[test]
    fn names_are_short_plain_words() {
        assert!(valid_name("alice") && valid_name("ci-bot_2@team.example"));
        assert!(!valid_name("") && !valid_name("a b") && !valid_name("é") && !valid_name(&"a".repeat(65)));
    }
}
