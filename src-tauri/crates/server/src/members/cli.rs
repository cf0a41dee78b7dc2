//! `keypool-server members add|list|update|revoke`: members managed from the command line, in
//! the store of a data dir (a server serving it picks a change up within a second; with a team,
//! every replica does).
//!
//! Invariants: `add` (and `update --rotate-token`) print the new token on stdout, alone, once;
//! nothing else ever prints a token or its digest; a usage problem (an unknown member, one the
//! config file manages, a bad limit) is one line on stderr and exit status 2, and changes nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use keypool::Timestamp;
use keypool_api::service::{Budget, BudgetPeriod, By, Member, MemberLimits, MemberSource, ServiceError, UsageLine};
use keypool_api::{AppContext, Dirs};
use serde_json::json;

use super::config::{limits, parse_expiry, valid_name};

#[derive(Subcommand)]
pub enum MembersCommand {
    /// Adds a member and prints its new token (shown this once).
    Add(Add),
    /// Lists the members as JSON (never a token).
    List(List),
    /// Changes a member's limits, enables or disables it, or gives it a new token.
    Update(Update),
    /// Revokes a member: its token is refused from now on (`update --enable` restores it).
    Revoke(Revoke),
}

/// Limits given on the command line; left out, a limit is none (`add`) or unchanged (`update`).
#[derive(Args)]
pub struct LimitFlags {
    /// A budget in US dollars per period, at the price table's prices (0 with update: none).
    #[arg(long, conflicts_with = "budget_tokens")]
    budget_usd: Option<f64>,
    /// A budget in tokens (prompt, cached included, and output) per period (0 with update: none).
    #[arg(long)]
    budget_tokens: Option<u64>,
    /// day | week | month | total (UTC; a week from Monday). A month unless told.
    #[arg(long, value_parser = parse_period)]
    budget_period: Option<BudgetPeriod>,
    /// Requests per minute (0 with update: none).
    #[arg(long)]
    requests_per_minute: Option<u32>,
    /// Tokens per minute (0 with update: none).
    #[arg(long)]
    tokens_per_minute: Option<u64>,
    /// Requests in flight at once (0 with update: none).
    #[arg(long)]
    max_in_flight: Option<u32>,
    /// A glob of the models it may ask for (repeatable; routes' names count). Every model when none.
    #[arg(long = "model")]
    models: Vec<String>,
    /// YYYY-MM-DD (through that day, UTC) or an RFC 3339 instant; `never` with update.
    #[arg(long)]
    expires: Option<String>,
}

fn parse_period(text: &str) -> Result<BudgetPeriod, String> {
    BudgetPeriod::parse(text).ok_or_else(|| "day, week, month or total".to_owned())
}

#[derive(Args)]
pub struct Add {
    name: String,
    #[arg(long)]
    data_dir: PathBuf,
    #[command(flatten)]
    limits: LimitFlags,
}

#[derive(Args)]
pub struct List {
    #[arg(long)]
    data_dir: PathBuf,
    /// The server's config file: with a `ledger = "postgres://…"`, what each member used is
    /// the team's sum (every replica's) rather than this data dir's.
    #[arg(long)]
    config: Option<PathBuf>,
    /// JSON (the only format).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct Update {
    name: String,
    #[arg(long)]
    data_dir: PathBuf,
    #[command(flatten)]
    limits: LimitFlags,
    /// Every model again (the --model globs cleared).
    #[arg(long, conflicts_with = "models")]
    all_models: bool,
    #[arg(long, conflicts_with = "disable")]
    enable: bool,
    #[arg(long)]
    disable: bool,
    /// A new token, printed once; the old one stops working.
    #[arg(long)]
    rotate_token: bool,
}

#[derive(Args)]
pub struct Revoke {
    name: String,
    #[arg(long)]
    data_dir: PathBuf,
}

/// Exit status of a problem with what was asked (as clap's own usage errors).
const USAGE: u8 = 2;

fn fail(status: u8, message: &str) -> ExitCode {
    eprintln!("keypool-server: {message}");
    ExitCode::from(status)
}

pub fn run(command: MembersCommand) -> ExitCode {
    // The store's services start background work on a runtime: give them one.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &format!("no async runtime: {error}")),
    };
    if let MembersCommand::List(list) = command {
        // Outside `block_on`: reading the team's ledger runs on this runtime.
        let _entered = runtime.enter();
        return self::list(list, &runtime);
    }
    runtime.block_on(async move {
        match command {
            MembersCommand::Add(add) => self::add(add),
            MembersCommand::List(_) => unreachable!("listed above"),
            MembersCommand::Update(update) => self::update(update),
            MembersCommand::Revoke(revoke) => self::revoke(revoke),
        }
    })
}

/// The store in `data_dir`, made if there is none yet (a server's first member may come before
/// its first start).
fn open(data_dir: &Path) -> Result<AppContext, ExitCode> {
    std::fs::create_dir_all(data_dir).map_err(|e| fail(1, &format!("{}: {e}", data_dir.display())))?;
    let dirs = Dirs { data_dir: data_dir.to_owned(), log_dir: data_dir.join("logs") };
    AppContext::headless(env!("CARGO_PKG_VERSION"), dirs, None)
        .map_err(|e| fail(1, &format!("the store in {} cannot be opened: {e}", data_dir.display())))
}

/// A new member token: `kp-member-` and 64 hex digits from the operating system's randomness.
fn new_token() -> String {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).expect("the operating system provides randomness");
    format!("kp-member-{}", random.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn add(add: Add) -> ExitCode {
    let name = add.name.trim().to_owned();
    if !valid_name(&name) {
        return fail(USAGE, &format!("a member's name is 1 to 64 of A-Z a-z 0-9 . _ - @, not {name:?}"));
    }
    let flags = add.limits;
    let limits = match limits(
        flags.budget_usd,
        flags.budget_tokens,
        flags.budget_period,
        flags.requests_per_minute,
        flags.tokens_per_minute,
        flags.max_in_flight,
        flags.models,
    ) {
        Ok(limits) => limits,
        Err(message) => return fail(USAGE, &message),
    };
    let expires_at = match flags.expires.as_deref().map(parse_expiry).transpose() {
        Ok(expires) => expires,
        Err(message) => return fail(USAGE, &format!("--expires: {message}")),
    };
    let context = match open(&add.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let Ok(members) = context.members() else { return fail(1, "the store is not open") };
    match members.get(&name) {
        Ok(existing) => return fail(USAGE, &format!("there is a member {:?} already", existing.name)),
        Err(ServiceError::NotFound { .. }) => {}
        Err(error) => return fail(1, &error.to_string()),
    }
    let token = new_token();
    let member = Member {
        name,
        token_sha256: keypool_gateway::token_hash(&token),
        source: MemberSource::Cli,
        enabled: true,
        expires_at,
        limits,
        agent: None,
        created_at: 0,
        updated_at: 0,
    };
    if let Err(error) = members.put(member) {
        return fail(1, &error.to_string());
    }
    eprintln!("keypool-server: the member's token is shown this once; give it to them and keep no copy");
    println!("{token}");
    ExitCode::SUCCESS
}

/// A member as `members list` shows it: its definition, never its token.
fn view(member: &Member) -> serde_json::Value {
    let at = |ms: i64| Timestamp::from_millis(ms).to_string();
    let budget = member.limits.budget.map(|budget| {
        let period = member.limits.period().as_str();
        match budget {
            Budget::Usd(usd) => json!({ "usd": usd, "period": period }),
            Budget::Tokens(tokens) => json!({ "tokens": tokens, "period": period }),
        }
    });
    json!({
        "name": member.name,
        "source": member.source.as_str(),
        "enabled": member.enabled,
        "expires": member.expires_at.map(at),
        "budget": budget,
        "requests_per_minute": member.limits.requests_per_minute,
        "tokens_per_minute": member.limits.tokens_per_minute,
        "max_in_flight": member.limits.max_in_flight,
        "models": member.limits.models,
        "created_at": at(member.created_at),
        "updated_at": at(member.updated_at),
    })
}

/// [`view`] and what the member used in its budget's current period, from `since` (the ledger's
/// sums).
fn listed(member: &Member, used: Option<&UsageLine>, since: i64) -> serde_json::Value {
    let mut view = view(member);
    view["used"] = json!({
        "since": Timestamp::from_millis(since).to_string(),
        "attempts": used.map_or(0, |u| u.attempts),
        "input_tokens": used.map_or(0, |u| u.input_tokens),
        "cached_tokens": used.map_or(0, |u| u.cached_tokens),
        "output_tokens": used.map_or(0, |u| u.output_tokens),
        "cost_usd": used.and_then(|u| u.cost_usd),
    });
    view
}

/// When the current period of `member`'s budget (a month without one) began at `now_ms`, in UTC:
/// today's midnight, Monday's, the month's first day, or (`total`) when it was added.
fn period_start(member: &Member, now_ms: i64) -> i64 {
    let at = jiff::Timestamp::from_millisecond(now_ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let today = at.to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
    let first = match member.limits.period() {
        BudgetPeriod::Total => return member.created_at,
        BudgetPeriod::Day => today,
        BudgetPeriod::Week => today
            .checked_sub(jiff::Span::new().days(i64::from(today.weekday().to_monday_zero_offset())))
            .unwrap_or(today),
        BudgetPeriod::Month => today.first_of_month(),
    };
    first.to_zoned_datetime(jiff::tz::TimeZone::UTC).map_or(0, |midnight| midnight.timestamp().as_millisecond())
}

fn list(list: List, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let _ = list.json;
    if !list.data_dir.join(keypool_store::DATABASE_FILE_NAME).exists() {
        return fail(USAGE, &format!("{}: no Keypool store in this directory", list.data_dir.display()));
    }
    let team = match list.config.as_deref().map(crate::config::read_ledger).transpose() {
        Ok(team) => team.flatten(),
        Err(error) => return fail(USAGE, &error.to_string()),
    };
    let context = match open(&list.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let members = match context.members().and_then(|members| members.list()) {
        Ok(members) => members,
        Err(error) => return fail(1, &error.to_string()),
    };
    let now = keypool::Clock::now(&keypool_api::SystemClock).as_millis();
    // One sum per period start (a few: today, this week, this month, each total's).
    let mut used: HashMap<i64, Vec<UsageLine>> = HashMap::new();
    for member in &members {
        let since = period_start(member, now);
        if let std::collections::hash_map::Entry::Vacant(entry) = used.entry(since) {
            match crate::usage::summed(runtime, &context, team.as_ref(), By::Member, since, now + 1) {
                Ok(lines) => {
                    entry.insert(lines);
                }
                Err(message) => return fail(1, &message),
            }
        }
    }
    let views: Vec<serde_json::Value> = members
        .iter()
        .map(|member| {
            let since = period_start(member, now);
            let line = used[&since].iter().find(|line| line.name.as_deref() == Some(member.name.as_str()));
            listed(member, line, since)
        })
        .collect();
    println!("{}", serde_json::Value::Array(views));
    ExitCode::SUCCESS
}

/// The member `name`, when the command line may change it.
fn changeable(context: &AppContext, name: &str) -> Result<Member, ExitCode> {
    let members = context.members().map_err(|e| fail(1, &e.to_string()))?;
    let member = members.get(name).map_err(|error| match error {
        ServiceError::NotFound { .. } => fail(USAGE, &format!("no member is called {name:?}")),
        other => fail(1, &other.to_string()),
    })?;
    if member.source == MemberSource::Config {
        return Err(fail(USAGE, &format!("{:?} is declared in the config file: change it there", member.name)));
    }
    Ok(member)
}

fn update(update: Update) -> ExitCode {
    let flags = update.limits;
    let context = match open(&update.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let mut member = match changeable(&context, update.name.trim()) {
        Ok(member) => member,
        Err(code) => return code,
    };
    let old = member.limits.clone();
    let budget_usd = match (flags.budget_usd, old.budget) {
        (Some(usd), _) => (usd != 0.0).then_some(usd),
        (None, Some(Budget::Usd(usd))) if flags.budget_tokens.is_none() => Some(usd),
        _ => None,
    };
    let budget_tokens = match (flags.budget_tokens, old.budget) {
        (Some(0), _) => None,
        (Some(tokens), _) => Some(tokens),
        (None, Some(Budget::Tokens(tokens))) if flags.budget_usd.is_none() => Some(tokens),
        _ => None,
    };
    let has_budget = budget_usd.is_some() || budget_tokens.is_some();
    let zero_is_none = |given: Option<u32>, old: Option<u32>| match given {
        Some(0) => None,
        Some(n) => Some(n),
        None => old,
    };
    let models = match (update.all_models, flags.models.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => old.models.clone(),
        (false, false) => flags.models,
    };
    let checked: Result<MemberLimits, String> = limits(
        budget_usd,
        budget_tokens,
        has_budget.then(|| flags.budget_period.or(old.budget_period)).flatten(),
        zero_is_none(flags.requests_per_minute, old.requests_per_minute),
        match flags.tokens_per_minute {
            Some(0) => None,
            Some(n) => Some(n),
            None => old.tokens_per_minute,
        },
        zero_is_none(flags.max_in_flight, old.max_in_flight),
        models,
    );
    member.limits = match checked {
        Ok(limits) => limits,
        Err(message) => return fail(USAGE, &message),
    };
    match flags.expires.as_deref().map(str::trim) {
        Some("never") => member.expires_at = None,
        Some(text) => match parse_expiry(text) {
            Ok(at) => member.expires_at = Some(at),
            Err(message) => return fail(USAGE, &format!("--expires: {message}")),
        },
        None => {}
    }
    if update.enable {
        member.enabled = true;
    }
    if update.disable {
        member.enabled = false;
    }
    let token = update.rotate_token.then(new_token);
    if let Some(token) = &token {
        member.token_sha256 = keypool_gateway::token_hash(token);
    }
    let members = match context.members() {
        Ok(members) => members,
        Err(error) => return fail(1, &error.to_string()),
    };
    match members.put(member) {
        Ok(stored) => {
            match token {
                Some(token) => {
                    eprintln!("keypool-server: the new token is shown this once; the old one no longer works");
                    println!("{token}");
                }
                None => println!("{}", view(&stored)),
            }
            ExitCode::SUCCESS
        }
        Err(error) => fail(1, &error.to_string()),
    }
}

fn revoke(revoke: Revoke) -> ExitCode {
    let context = match open(&revoke.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let mut member = match changeable(&context, revoke.name.trim()) {
        Ok(member) => member,
        Err(code) => return code,
    };
    member.enabled = false;
    match context.members().and_then(|members| members.put(member)) {
        Ok(stored) => {
            println!("{}", view(&stored));
            ExitCode::SUCCESS
        }
        Err(error) => fail(1, &error.to_string()),
    }
}
