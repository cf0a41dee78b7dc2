//! `keypool-server keys import|list|test`: a large pool brought in, read and tested from the command line,
//! through the same import service as the app's (`BulkKeys`): extraction, de-duplication against
//! the pool, validation with the provider's model list, batches of one transaction each.
//!
//! As in the app, a file is read by the shapes of the provider's kind (an OpenAI provider takes
//! the `sk-…` keys of a `.env`, never its Anthropic or Gemini keys or a GitHub token); every
//! line's token is taken only with `--one-per-line`, and `--list` shows what would be sent,
//! masked, before anything is (`--leave-out` drops any of it).
//!
//! Invariants: one JSON value on stdout, nothing else there; a usage problem (an unknown
//! provider, an unreadable file, a file with no key of the provider's shape) is one line on
//! stderr, exit status 2, and nothing is changed: the file is read before the store is opened, and
//! its keys are extracted before anything is saved or sent.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use keypool_api::service::{ImportOptions, KeyReading};
use keypool_api::{AppContext, Dirs};
use serde_json::json;

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Imports the keys of a file (any text: CSV, JSON, a .env; the keys of the provider's shape)
    /// into a provider's pool; prints {"found","added","duplicates","invalid","rate_limited",
    /// "unreachable"}, or with --list what would be imported.
    Import(Import),
    /// Lists the pool's keys (masked) as JSON, each with its state and, where the provider
    /// answers balance reads (DeepSeek, Moonshot, SiliconFlow, OpenRouter), its last balance.
    List(List),
    /// Tests the pool's keys with the provider, as the app's Test does (a key the provider refuses
    /// is disabled); prints each key's result as JSON, with its credit where the provider tells
    /// it (OpenRouter).
    Test(Test),
}

#[derive(Args)]
pub struct Test {
    #[arg(long)]
    data_dir: PathBuf,
    /// The provider, by name (any case) or id.
    #[arg(long)]
    provider: String,
    /// Only this key (its id); every key of the provider when left out.
    #[arg(long)]
    key: Option<String>,
}

#[derive(Args)]
pub struct Import {
    #[arg(long)]
    data_dir: PathBuf,
    /// The provider, by name (any case) or id.
    #[arg(long)]
    provider: String,
    #[arg(long)]
    file: PathBuf,
    /// Each key's weight (1 to 100).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    weight: u32,
    /// The quota group every key joins.
    #[arg(long)]
    group: Option<String>,
    /// Adds the keys without asking the provider first.
    #[arg(long)]
    no_validate: bool,
    /// Takes each line's longest key-like token, whatever its shape (for a provider whose keys
    /// have no known shape); without it only keys of the provider's kind's shapes are taken.
    #[arg(long)]
    one_per_line: bool,
    /// Prints what would be imported (each new key's index and masked preview) and changes and
    /// sends nothing.
    #[arg(long)]
    list: bool,
    /// Leaves out the key of this index (as --list shows it); may be given again.
    #[arg(long, value_name = "INDEX")]
    leave_out: Vec<usize>,
}

#[derive(Args)]
pub struct List {
    #[arg(long)]
    data_dir: PathBuf,
    /// Only this provider's keys (by name, any case, or id).
    #[arg(long)]
    provider: Option<String>,
    /// JSON (the only format).
    #[arg(long)]
    json: bool,
}

/// Exit status of a problem with what was asked (as clap's own usage errors).
const USAGE: u8 = 2;

pub fn run(command: KeysCommand) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &format!("no async runtime: {error}")),
    };
    match command {
        KeysCommand::Import(import) => runtime.block_on(import_keys(import)),
        KeysCommand::List(list) => runtime.block_on(list_keys(list)),
        KeysCommand::Test(test) => runtime.block_on(test_keys(test)),
    }
}

fn fail(status: u8, message: &str) -> ExitCode {
    eprintln!("keypool-server: {message}");
    ExitCode::from(status)
}

fn open(data_dir: &Path) -> Result<AppContext, ExitCode> {
    if !data_dir.join(keypool_store::DATABASE_FILE_NAME).exists() {
        return Err(fail(USAGE, &format!("{}: no Keypool store in this directory", data_dir.display())));
    }
    let dirs = Dirs { data_dir: data_dir.to_owned(), log_dir: data_dir.join("logs") };
    AppContext::headless(env!("CARGO_PKG_VERSION"), dirs, None)
        .map_err(|e| fail(1, &format!("the store in {} cannot be opened: {e}", data_dir.display())))
}

/// The id of the provider named `name` (any case) or with that id.
fn provider_id(context: &AppContext, name: &str) -> Result<String, ExitCode> {
    provider(context, name).map(|p| p.id)
}

/// The provider named `name` (any case) or with that id.
fn provider(context: &AppContext, name: &str) -> Result<keypool_api::service::Provider, ExitCode> {
    let providers = context.providers().and_then(|p| p.list()).map_err(|e| fail(1, &e.to_string()))?;
    match providers.iter().position(|p| p.id == name || p.name.eq_ignore_ascii_case(name)) {
        Some(at) => Ok(providers.into_iter().nth(at).expect("the position was found")),
        None => {
            let known: Vec<&str> = providers.iter().map(|p| p.name.as_str()).collect();
            Err(fail(USAGE, &format!("no provider is called {name:?}; there are: {}", known.join(", "))))
        }
    }
}

async fn import_keys(import: Import) -> ExitCode {
    // Read before the store is opened: an unreadable file changes nothing.
    let text = match std::fs::read(&import.file) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) => return fail(USAGE, &format!("{}: {error}", import.file.display())),
    };
    let group = import.group.as_deref().map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned);
    if group.as_ref().is_some_and(|g| g.chars().count() > keypool_api::ipc::LIMITS.quota_group.max_chars) {
        return fail(USAGE, "--group: at most 64 characters");
    }
    let context = match open(&import.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let provider = match provider(&context, &import.provider) {
        Ok(provider) => provider,
        Err(code) => return code,
    };
    let (reading, shapes) = match import.one_per_line {
        true => (KeyReading::OnePerLine, &[][..]),
        false => (KeyReading::Shapes, provider.kind.row().key_shapes),
    };
    if keypool::extract_keys(&text, shapes).keys.is_empty() {
        let what = match import.one_per_line {
            true => "no API key found in the file".to_owned(),
            false => {
                let prefixes: Vec<String> = shapes.iter().map(|s| format!("{}…", s.prefix())).collect();
                format!(
                    "no API key of {}'s shape ({}) found in the file; for keys of another shape, pass --one-per-line",
                    provider.name,
                    prefixes.join(", ")
                )
            }
        };
        return fail(USAGE, &format!("{}: {what}", import.file.display()));
    }
    let options = ImportOptions {
        weight: import.weight,
        label_prefix: None,
        quota_group: group,
        validate: !import.no_validate,
        keep_rejected_disabled: false,
        left_out: import.leave_out.iter().copied().collect(),
    };
    let bulk = match context.bulk_keys() {
        Ok(bulk) => bulk,
        Err(error) => return fail(1, &error.to_string()),
    };
    if import.list {
        return match bulk.preview(&provider.id, &text, reading) {
            Ok(preview) => {
                let new: Vec<_> = preview
                    .new
                    .iter()
                    .filter(|(index, _)| !options.left_out.contains(index))
                    .map(|(index, preview)| json!({ "index": index, "preview": preview }))
                    .collect();
                let summary = json!({
                    "found": preview.found,
                    "new": new,
                    "duplicates": preview.duplicates_in_paste + preview.duplicates_in_pool,
                    "unrecognised_lines": preview.unrecognised_lines,
                });
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(error) => fail(1, &error.to_string()),
        };
    }
    match bulk.import_now(&provider.id, &text, reading, options).await {
        Ok((preview, end)) => {
            let summary = json!({
                "found": preview.found,
                "added": end.added,
                "duplicates": end.duplicates,
                "invalid": end.invalid,
                "rate_limited": end.rate_limited,
                "unreachable": end.unreachable,
            });
            println!("{summary}");
            if end.state == keypool_api::service::ImportState::Failed {
                return fail(1, "the import stopped before its end; the keys saved so far stay");
            }
            ExitCode::SUCCESS
        }
        Err(error) => fail(1, &error.to_string()),
    }
}

async fn list_keys(list: List) -> ExitCode {
    let _ = list.json;
    let context = match open(&list.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let providers: Vec<String> = match &list.provider {
        Some(name) => match provider_id(&context, name) {
            Ok(id) => vec![id],
            Err(code) => return code,
        },
        None => match context.providers().and_then(|p| p.list()) {
            Ok(all) => all.into_iter().map(|p| p.id).collect(),
            Err(error) => return fail(1, &error.to_string()),
        },
    };
    let keys = match context.keys() {
        Ok(keys) => keys,
        Err(error) => return fail(1, &error.to_string()),
    };
    let mut out = Vec::new();
    for provider in providers {
        let listed = keys.list(&provider).and_then(|listed| Ok((listed, keys.pool_status(&provider)?)));
        let (listed, status) = match listed {
            Ok(both) => both,
            Err(error) => return fail(1, &error.to_string()),
        };
        for key in listed {
            let at = status.keys.iter().position(|s| s.key_id.as_str() == key.id);
            let state = at.map(|i| status.keys[i].state.as_str());
            let balance = at.and_then(|i| status.balances[i].as_ref()).map(balance_json);
            let windows = at.and_then(|i| status.windows[i].as_ref()).map(windows_json);
            out.push(json!({
                "id": key.id,
                "provider": provider,
                "label": key.label,
                "preview": key.preview,
                "weight": key.weight,
                "group": key.quota_group,
                "enabled": key.enabled,
                "state": state.unwrap_or("disabled"),
                "balance": balance,
                "windows": windows,
                "expires_at": at.and_then(|i| status.expiries[i]).map(|t| t.as_millis()),
            }));
        }
    }
    println!("{}", serde_json::Value::Array(out));
    ExitCode::SUCCESS
}

/// A key's last balance reading: `{"amount", "currency", "usable", "read_at"}`, with `amount`
/// and `currency` null for a key without limit, or `{"problem", "status", "read_at"}` when the
/// read found nothing.
fn balance_json(row: &keypool_store::balances::BalanceRow) -> serde_json::Value {
    match (&row.problem, &row.amount) {
        (Some(problem), _) => json!({ "problem": problem, "status": row.status, "read_at": row.read_at }),
        (None, amount) => json!({
            "amount": amount.as_ref().map(|(amount, _)| amount),
            "currency": amount.as_ref().map(|(_, currency)| currency),
            "usable": row.usable,
            "read_at": row.read_at,
        }),
    }
}

/// A key's last plan-window reading: `{"windows":[{"span":{"count","unit"},"used","resetsAt"}],
/// "read_at"}`, or `{"problem","status","read_at"}` when the read found nothing.
fn windows_json(row: &keypool_store::balances::WindowsRow) -> serde_json::Value {
    match &row.problem {
        Some(problem) => json!({ "problem": problem, "status": row.status, "read_at": row.read_at }),
        None => {
            let windows: serde_json::Value = serde_json::from_str(&row.windows).unwrap_or_else(|_| json!([]));
            json!({ "windows": windows, "read_at": row.read_at })
        }
    }
}

async fn test_keys(test: Test) -> ExitCode {
    let context = match open(&test.data_dir) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let provider = match provider_id(&context, &test.provider) {
        Ok(id) => id,
        Err(code) => return code,
    };
    let keys = match context.keys() {
        Ok(keys) => keys,
        Err(error) => return fail(1, &error.to_string()),
    };
    let listed = match keys.list(&provider) {
        Ok(listed) => listed,
        Err(error) => return fail(1, &error.to_string()),
    };
    if let Some(id) = test.key.as_deref().filter(|id| !listed.iter().any(|key| key.id == *id)) {
        return fail(USAGE, &format!("the provider has no key {id:?}"));
    }
    let mut out = Vec::new();
    for key in listed.iter().filter(|key| test.key.as_deref().is_none_or(|id| id == key.id)) {
        let probe = match keys.test(&key.id).await {
            Ok(probe) => probe,
            Err(error) => return fail(1, &error.to_string()),
        };
        let credit = probe.credit.map(|c| json!({ "limit": c.limit, "remaining": c.remaining, "usage": c.usage }));
        out.push(json!({
            "id": key.id,
            "label": key.label,
            "preview": key.preview,
            "ok": probe.ok,
            "status": probe.status,
            "message": probe.message,
            "credit": credit,
        }));
    }
    println!("{}", serde_json::Value::Array(out));
    ExitCode::SUCCESS
}
