//! The ledger by who asked: each coding agent, the app's chat, and other clients; each with the
//! share of its input tokens the provider's prompt cache served. An agent whose share dropped
//! sharply in the last day against the week before is pointed out: a session that lost its key
//! (a broken affinity) or a prompt that changes at its start (a nonce, a date) makes every
//! request pay for its whole prompt again, several times the cost.

use std::collections::HashMap;

use keypool_store::sources::{self, SourceTotals};
use keypool_store::usage::{self as ledger, Price};

use super::{Agent, Agents, AGENTS};
use crate::service::error::Result;
use crate::service::usage::cost_of;
use crate::service::{DAY_MS, ROUTE_TEST_SOURCE};

/// Who asked: a coding agent, the app's chat, or another client (an SDK, a script).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "UsageSource")]
pub enum Source {
    Agent {
        agent: Agent,
    },
    /// The app's own chats.
    Chat,
    /// Any other client of the local API (an SDK, a script), and the routes' tests.
    Other,
}

impl Source {
    /// The source of a ledger row's `source` text (`chat`, or a client's user agent).
    pub fn of(recorded: &str) -> Source {
        if recorded == "chat" {
            return Source::Chat;
        }
        if recorded == ROUTE_TEST_SOURCE {
            return Source::Other;
        }
        Agent::of_user_agent(recorded).map_or(Source::Other, |agent| Source::Agent { agent })
    }
}

/// What one source spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceUse {
    pub requests: u64,
    /// Refused or broken off: every outcome but answered and stopped.
    pub failures: u64,
    /// Every prompt token, cached ones included.
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl SourceUse {
    fn add(&mut self, totals: &SourceTotals) {
        self.requests += totals.requests;
        self.failures += totals.failures;
        self.input_tokens += totals.input_tokens;
        self.cached_tokens += totals.cached_tokens;
        self.output_tokens += totals.output_tokens;
    }

    /// The share of the input tokens the cache served; `None` without input tokens.
    pub fn cached_share(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.cached_tokens as f64 / self.input_tokens as f64)
    }
}

/// An agent whose share of cached input tokens in the last day is at most half of the week
/// before's (a session off its key, or a prompt that changes at its start): its share in the
/// last day, and in the week before it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CacheDrop {
    pub agent: Agent,
    pub last_day: f64,
    pub week_before: f64,
}

/// What one source spent, with `cached_share`: `cached_tokens / input_tokens` (`None` without
/// input), and its cost where its models have prices.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceUsage {
    pub source: Source,
    #[serde(flatten)]
    pub used: SourceUse,
    pub cached_share: Option<f64>,
    /// US dollars, over the models with a price; `None` when none of those that spent tokens
    /// has one.
    pub cost: Option<f64>,
    /// Every model that spent tokens has a price, so `cost` is the whole cost.
    pub cost_complete: bool,
}

/// Each source's use over `rows`, with its cost at `prices` (by model).
fn priced_by_source(rows: &[SourceTotals], prices: &HashMap<String, Price>) -> Vec<SourceUsage> {
    by_source(rows)
        .into_iter()
        .map(|(source, used)| {
            let (mut cost, mut complete) = (None, true);
            for row in rows.iter().filter(|row| Source::of(&row.source) == source) {
                let spent = row.input_tokens + row.output_tokens > 0;
                let totals = ledger::Totals {
                    input_tokens: row.input_tokens,
                    cached_tokens: row.cached_tokens,
                    output_tokens: row.output_tokens,
                    ..ledger::Totals::default()
                };
                match prices.get(&row.model) {
                    Some(price) => cost = Some(cost.unwrap_or(0.0) + cost_of(&totals, price)),
                    // Attempts that spent no tokens cost nothing, priced or not.
                    None if spent => complete = false,
                    None => {}
                }
            }
            SourceUsage { source, used, cached_share: used.cached_share(), cost, cost_complete: complete }
        })
        .collect()
}

/// The ledger of a range by source (every source, in the panel's order: the agents, the chat,
/// the others), and the agents whose cache share dropped as of `now`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "UsageBySource")]
pub struct SourcesReport {
    pub sources: Vec<SourceUsage>,
    pub drops: Vec<CacheDrop>,
}

/// A drop is pointed out when the week before was cached at least this much…
const MIN_SHARE_BEFORE: f64 = 0.2;
/// …the last day at most this fraction of it…
const DROP_RATIO: f64 = 0.5;
/// …over enough of the last day's requests and tokens to say so.
const MIN_REQUESTS: u64 = 5;
const MIN_INPUT_TOKENS: u64 = 20_000;

/// Whether `last_day` against `week_before` is a sharp drop of the cache's share: `(last day's
/// share, the week before's)` when it is.
pub fn cache_drop(last_day: &SourceUse, week_before: &SourceUse) -> Option<(f64, f64)> {
    let (now, before) = (last_day.cached_share()?, week_before.cached_share()?);
    let enough = last_day.requests >= MIN_REQUESTS
        && last_day.input_tokens >= MIN_INPUT_TOKENS
        && week_before.requests >= MIN_REQUESTS
        && week_before.input_tokens >= MIN_INPUT_TOKENS;
    (enough && before >= MIN_SHARE_BEFORE && now <= before * DROP_RATIO).then_some((now, before))
}

/// Every source, in the order shown: the agents, the chat, the others.
fn every_source() -> Vec<Source> {
    AGENTS.iter().map(|&agent| Source::Agent { agent }).chain([Source::Chat, Source::Other]).collect()
}

fn by_source(rows: &[SourceTotals]) -> Vec<(Source, SourceUse)> {
    let mut out: Vec<(Source, SourceUse)> = every_source().into_iter().map(|s| (s, SourceUse::default())).collect();
    for row in rows {
        let source = Source::of(&row.source);
        if let Some((_, used)) = out.iter_mut().find(|(s, _)| *s == source) {
            used.add(row);
        }
    }
    out
}

impl Agents {
    /// What each source spent in `[from, to)`, and which agents' cache share dropped in the last
    /// day before `now` against the seven days before that.
    pub fn usage_by_source(&self, from: i64, to: i64) -> Result<SourcesReport> {
        let now = self.clock.now().as_millis();
        let conn = self.db.lock()?;
        let prices: HashMap<String, Price> = ledger::prices(&conn)?.into_iter().map(|p| (p.model.clone(), p)).collect();
        let sources = priced_by_source(&sources::totals_by_source(&conn, from, to)?, &prices);
        let last_day = by_source(&sources::totals_by_source(&conn, now - DAY_MS, now)?);
        let week_before = by_source(&sources::totals_by_source(&conn, now - 8 * DAY_MS, now - DAY_MS)?);
        let drops = AGENTS
            .iter()
            .filter_map(|agent| {
                let of = |list: &[(Source, SourceUse)]| {
                    list.iter()
                        .find(|(s, _)| *s == Source::Agent { agent: *agent })
                        .map(|(_, u)| *u)
                        .unwrap_or_default()
                };
                let (now, before) = cache_drop(&of(&last_day), &of(&week_before))?;
                Some(CacheDrop { agent: *agent, last_day: now, week_before: before })
            })
            .collect();
        Ok(SourcesReport { sources, drops })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(requests: u64, input_tokens: u64, cached_tokens: u64) -> SourceUse {
        SourceUse { requests, failures: 0, input_tokens, cached_tokens, output_tokens: 0 }
    }

    #[test]
    fn a_sources_text_names_the_agent_the_chat_or_another_client() {
        assert_eq!(Source::of("claude-cli/2.1.328 (external, sdk-cli)"), Source::Agent { agent: Agent::ClaudeCode });
        assert_eq!(Source::of("codex_exec/0.169.0 (Debian 12; x86_64) xterm"), Source::Agent { agent: Agent::Codex });
        assert_eq!(Source::of("codex_cli_rs/0.169.0"), Source::Agent { agent: Agent::Codex }, "Codex's TUI too");
        assert_eq!(
            Source::of("GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64)"),
            Source::Agent { agent: Agent::GeminiCli }
        );
        assert_eq!(Source::of("chat"), Source::Chat);
        assert_eq!(Source::of("OpenAI/Python 1.99.0"), Source::Other);
        assert_eq!(Source::of(ROUTE_TEST_SOURCE), Source::Other, "a route's test is no agent");
    }

    #[test]
    fn a_sharp_drop_of_the_cache_share_is_pointed_out_and_noise_is_not() {
        let week = used(200, 2_000_000, 1_600_000);
        assert_eq!(cache_drop(&used(40, 400_000, 60_000), &week), Some((0.15, 0.8)), "80 % to 15 %: a drop");
        assert_eq!(cache_drop(&used(40, 400_000, 300_000), &week), None, "75 %: as before");
        assert_eq!(cache_drop(&used(40, 400_000, 180_000), &week), None, "45 % is more than half of 80 %: not sharp");
        assert_eq!(cache_drop(&used(2, 400_000, 0), &week), None, "two requests say nothing");
        assert_eq!(cache_drop(&used(40, 5_000, 0), &week), None, "nor a few tokens");
        assert_eq!(
            cache_drop(&used(40, 400_000, 0), &used(200, 2_000_000, 100_000)),
            None,
            "5 % before: no cache to lose"
        );
        assert_eq!(cache_drop(&used(0, 0, 0), &week), None, "no request in the last day");
    }
}
