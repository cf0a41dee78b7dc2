//! `keypool-server usage`: the ledger summed by member, model, provider, key, client or day over
//! a time range, with its cost where the price table has the models' prices; as a table, JSON or
//! CSV. The ledger is the team's (Postgres) when `--config` names one, every replica's attempts;
//! otherwise this data dir's own (with a team, this replica's share).
//!
//! Invariants: the output goes to stdout alone; a usage problem (a bad `--since`, a data dir
//! without a store) is one line on stderr and exit status 2.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use keypool_api::service::{sum_lines, By, UsageLine};
use keypool_api::{AppContext, Dirs};
use serde_json::json;

use crate::ledger::{server_of, LedgerConfig, Postgres};

#[derive(Clone, Copy, ValueEnum)]
pub enum Dimension {
    Member,
    Model,
    Provider,
    Key,
    /// The client: `chat`, or the user agent of the API's client.
    Source,
    /// The UTC day.
    Day,
}

impl Dimension {
    fn by(self) -> By {
        match self {
            Dimension::Member => By::Member,
            Dimension::Model => By::Model,
            Dimension::Provider => By::Provider,
            Dimension::Key => By::Key,
            Dimension::Source => By::Source,
            Dimension::Day => By::Day,
        }
    }
}

#[derive(Args)]
pub struct Usage {
    #[arg(long)]
    data_dir: PathBuf,
    /// The server's config file: with a `ledger = "postgres://…"`, the team's ledger is summed
    /// (every replica's attempts) rather than this data dir's.
    #[arg(long)]
    config: Option<PathBuf>,
    /// What the attempts are summed by.
    #[arg(long, value_enum, default_value = "member")]
    by: Dimension,
    /// From: a duration back from now (`90m`, `24h`, `7d`), a date (`2026-12-01`, UTC) or an
    /// RFC 3339 instant.
    #[arg(long, default_value = "30d")]
    since: String,
    /// Until (the same forms); now when left out.
    #[arg(long)]
    until: Option<String>,
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    #[arg(long)]
    csv: bool,
}

/// Exit status of a problem with what was asked.
const USAGE: u8 = 2;

fn fail(status: u8, message: &str) -> ExitCode {
    eprintln!("keypool-server: {message}");
    ExitCode::from(status)
}

/// An instant as `--since` and `--until` take it, in milliseconds since the epoch.
pub fn instant(text: &str, now_ms: i64) -> Result<i64, String> {
    let text = text.trim();
    let unit = |suffix: char, ms: i64| {
        text.strip_suffix(suffix).and_then(|n| n.parse::<i64>().ok()).filter(|n| *n >= 0).map(|n| now_ms - n * ms)
    };
    if let Some(at) = unit('m', 60_000).or_else(|| unit('h', 3_600_000)).or_else(|| unit('d', 86_400_000)) {
        return Ok(at);
    }
    if let Ok(date) = text.parse::<jiff::civil::Date>() {
        let midnight = date.to_zoned_datetime(jiff::tz::TimeZone::UTC).map_err(|e| e.to_string())?;
        return Ok(midnight.timestamp().as_millisecond());
    }
    text.parse::<jiff::Timestamp>().map(|at| at.as_millisecond()).map_err(|_| {
        format!("{text:?} is neither a duration (90m, 24h, 7d), a date (2026-12-01) nor an RFC 3339 instant")
    })
}

pub fn run(usage: Usage) -> ExitCode {
    let now = keypool::Clock::now(&keypool_api::SystemClock).as_millis();
    let from = match instant(&usage.since, now) {
        Ok(from) => from,
        Err(message) => return fail(USAGE, &format!("--since: {message}")),
    };
    let to = match usage.until.as_deref().map(|until| instant(until, now)).transpose() {
        Ok(to) => to.unwrap_or(now + 1),
        Err(message) => return fail(USAGE, &format!("--until: {message}")),
    };
    if !usage.data_dir.join(keypool_store::DATABASE_FILE_NAME).exists() {
        return fail(USAGE, &format!("{}: no Keypool store in this directory", usage.data_dir.display()));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &format!("no async runtime: {error}")),
    };
    let _entered = runtime.enter();
    let dirs = Dirs { data_dir: usage.data_dir.clone(), log_dir: usage.data_dir.join("logs") };
    let context = match AppContext::headless(env!("CARGO_PKG_VERSION"), dirs, None) {
        Ok(context) => context,
        Err(error) => return fail(1, &format!("the store in {} cannot be opened: {error}", usage.data_dir.display())),
    };
    let team = match usage.config.as_deref().map(crate::config::read_ledger).transpose() {
        Ok(team) => team.flatten(),
        Err(error) => return fail(USAGE, &error.to_string()),
    };
    let lines = match summed(&runtime, &context, team.as_ref(), usage.by.by(), from, to) {
        Ok(lines) => lines,
        Err(message) => return fail(1, &message),
    };
    let text = match (usage.json, usage.csv) {
        (true, _) => json_of(usage.by, &lines, from, to, team.is_some()),
        (_, true) => csv_of(usage.by, &lines),
        _ => table_of(usage.by, &lines),
    };
    print!("{text}");
    ExitCode::SUCCESS
}

/// The attempts over `[from, to)` summed by `by`: from the team's ledger when there is one, from
/// the store's otherwise; costed at the store's prices either way.
pub fn summed(
    runtime: &tokio::runtime::Runtime,
    context: &AppContext,
    team: Option<&LedgerConfig>,
    by: By,
    from: i64,
    to: i64,
) -> Result<Vec<UsageLine>, String> {
    let Some(team) = team else {
        return context.usage_report().and_then(|report| report.lines(by, from, to)).map_err(|e| e.to_string());
    };
    let prices = context.usage().and_then(|usage| usage.prices()).map_err(|e| e.to_string())?;
    let rows = runtime
        .block_on(async { Postgres::open(&team.url).await?.report(by, from, to).await })
        .map_err(|error| format!("{error} ({})", server_of(&team.url)))?;
    Ok(sum_lines(rows, &prices))
}

/// What a line's name is shown as: the member `None` is the server's own token.
fn name_of(by: Dimension, line: &UsageLine) -> String {
    match (&line.name, by) {
        (Some(name), _) => name.clone(),
        (None, Dimension::Member) => "(own token)".to_owned(),
        (None, _) => "-".to_owned(),
    }
}

fn dimension_name(by: Dimension) -> &'static str {
    match by {
        Dimension::Member => "member",
        Dimension::Model => "model",
        Dimension::Provider => "provider",
        Dimension::Key => "key",
        Dimension::Source => "source",
        Dimension::Day => "day",
    }
}

fn json_of(by: Dimension, lines: &[UsageLine], from: i64, to: i64, team: bool) -> String {
    let rows: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| {
            let mut row = json!({
                dimension_name(by): line.name,
                "attempts": line.attempts,
                "failed": line.failed,
                "input_tokens": line.input_tokens,
                "cached_tokens": line.cached_tokens,
                "output_tokens": line.output_tokens,
                "cost_usd": line.cost_usd,
                "cost_complete": line.cost_complete,
            });
            if matches!(by, Dimension::Provider | Dimension::Key) {
                row["id"] = json!(line.id);
            }
            if matches!(by, Dimension::Key) {
                row["provider"] = json!(line.provider);
            }
            row
        })
        .collect();
    let at = |ms: i64| keypool::Timestamp::from_millis(ms).to_string();
    let ledger = if team { "team" } else { "replica" };
    format!("{}\n", json!({ "from": at(from), "to": at(to), "by": dimension_name(by), "ledger": ledger, "rows": rows }))
}

/// A CSV field: quoted when it must be, and kept from being read as a formula by a spreadsheet.
fn csv_field(text: &str) -> String {
    let text = match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    };
    match text.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", text.replace('"', "\"\"")),
        false => text,
    }
}

fn cost_text(line: &UsageLine) -> String {
    line.cost_usd.map(|cost| format!("{cost:.6}")).unwrap_or_default()
}

fn csv_of(by: Dimension, lines: &[UsageLine]) -> String {
    let provider = matches!(by, Dimension::Key);
    let mut out = format!(
        "{}{},attempts,failed,input_tokens,cached_tokens,output_tokens,cost_usd,cost_complete\n",
        dimension_name(by),
        if provider { ",provider" } else { "" }
    );
    for line in lines {
        let provider = match provider {
            true => format!(",{}", csv_field(line.provider.as_deref().unwrap_or(""))),
            false => String::new(),
        };
        out.push_str(&format!(
            "{}{provider},{},{},{},{},{},{},{}\n",
            csv_field(&name_of(by, line)),
            line.attempts,
            line.failed,
            line.input_tokens,
            line.cached_tokens,
            line.output_tokens,
            cost_text(line),
            line.cost_complete
        ));
    }
    out
}

fn table_of(by: Dimension, lines: &[UsageLine]) -> String {
    let header = [dimension_name(by), "attempts", "failed", "input", "cached", "output", "cost (USD)"];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for line in lines {
        let cost = match (line.cost_usd, line.cost_complete) {
            (Some(cost), true) => format!("{cost:.4}"),
            (Some(cost), false) => format!("{cost:.4}+"),
            (None, _) => "-".to_owned(),
        };
        let name = match (&line.provider, by) {
            (Some(provider), Dimension::Key) => format!("{} ({provider})", name_of(by, line)),
            _ => name_of(by, line),
        };
        rows.push(vec![
            name,
            line.attempts.to_string(),
            line.failed.to_string(),
            line.input_tokens.to_string(),
            line.cached_tokens.to_string(),
            line.output_tokens.to_string(),
            cost,
        ]);
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|i| rows.iter().map(|row| row[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| match i {
                0 => format!("{cell:<width$}", width = widths[i]),
                _ => format!("{cell:>width$}", width = widths[i]),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    if lines.iter().any(|line| !line.cost_complete) {
        out.push_str("+: some of its models have no price; their cost is left out\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_dates_and_instants() {
        let now = 1_800_000_000_000;
        assert_eq!(instant("90m", now), Ok(now - 90 * 60_000));
        assert_eq!(instant("7d", now), Ok(now - 7 * 86_400_000));
        assert_eq!(instant("2027-01-01", now), Ok(1_798_761_600_000), "a date is its UTC midnight");
        assert_eq!(instant("2027-01-01T00:00:01Z", now), Ok(1_798_761_601_000));
        assert!(instant("yesterday", now).is_err() && instant("-3d", now).is_err());
    }

    #[test]
    fn a_csv_field_is_quoted_and_never_a_formula() {
        assert_eq!(csv_field("gpt-5"), "gpt-5");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
    }
}
