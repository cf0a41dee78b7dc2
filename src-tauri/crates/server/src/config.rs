//! The server's config file: the providers and keys it serves, applied at every start (and on
//! SIGHUP) into the data dir's store.
//!
//! Providers are matched by name, keys by their value (a `$NAME` reference is its own value: it
//! is read from the environment when used, as in the app). A key the file no longer lists is
//! removed if the file had added it; keys added otherwise (by another tool on the same store)
//! are left alone. Which keys the file added is kept beside the store in
//! [`ADDED_FILE`]: their ids, never their values.
//!
//! A bad file (a syntax error, an unknown field, a bad kind, weight 0, two providers of one
//! name) is refused as a whole with a message naming its line, before anything is written.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use keypool::{Secret, UserLimits};
use keypool_api::service::{KeyPatch, NewKey, NewProvider, ProviderPatch};
use keypool_api::AppContext;
use keypool_llm::ProviderKind;
use serde::Deserialize;
use toml::Spanned;

/// The ids of the keys the config file added, in the data dir.
pub const ADDED_FILE: &str = "server-config-keys.json";

/// Why the config file was not applied. The message names the file and the line; it never
/// holds a key's value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot be read: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: could not be applied to the store: {reason}")]
    Store { path: PathBuf, reason: String },
}

/// How long requests in flight may run after SIGTERM when the file does not say.
pub const DRAIN_DEFAULT: std::time::Duration = std::time::Duration::from_secs(600);

/// The longest `drain_seconds` accepted: a day (a longer one is taken for a typo).
const DRAIN_MAX_SECONDS: u64 = 86_400;

/// The longest `first_event_seconds` accepted: the first-byte deadline's five minutes.
const FIRST_EVENT_MAX_SECONDS: u64 = 300;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How long requests in flight (streams included) may run after SIGTERM before what is
    /// left is cut off; [`DRAIN_DEFAULT`] when left out.
    pub drain_seconds: Option<Spanned<u64>>,
    /// How long a stream may take to send its first event before the request goes to another
    /// key (keep-alive comments do not count); 45 s when left out.
    pub first_event_seconds: Option<Spanned<u64>>,
    /// The reverse proxies (networks `10.0.0.0/8` or addresses) whose forwarded header names the
    /// client; none by default.
    #[serde(default)]
    pub trusted_proxies: Vec<Spanned<String>>,
    /// The header they write: `x-forwarded-for` (the default) or `forwarded`.
    pub forwarded_header: Option<Spanned<String>>,
    /// The team's ledger: a `postgres://` URL, `$NAME`s read from the environment (see
    /// `ledger`); the data dir's SQLite ledger alone when left out.
    pub ledger: Option<Spanned<String>>,
    /// The months of the team ledger kept before the current one; all when left out.
    pub ledger_retention_months: Option<Spanned<u32>>,
    /// [`Config::ledger`] read (filled by [`read`]).
    #[serde(skip)]
    pub team_ledger: Option<crate::ledger::LedgerConfig>,
    /// [`Config::trusted_proxies`] read (filled by [`read`]).
    #[serde(skip)]
    pub proxies: keypool_gateway::TrustedProxies,
    /// Traces for an OpenTelemetry collector (see `otel`); none when left out.
    pub otel: Option<crate::otel::OtelConfig>,
    /// `[otel]` checked, its headers read (filled by [`read`]).
    #[serde(skip)]
    pub traces: Option<crate::otel::Otel>,
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    /// Models sent to a provider whatever it lists, first match first.
    #[serde(default)]
    pub routes: Vec<RouteConfig>,
    /// Members with tokens and limits of their own (see `members::config`).
    #[serde(default)]
    pub members: Vec<crate::members::config::MemberConfig>,
    /// Prices of models, for budgets in US dollars.
    #[serde(default)]
    pub prices: Vec<crate::members::config::PriceConfig>,
    /// The members as they are to be stored, their tokens read (filled by [`read`]).
    #[serde(skip)]
    pub resolved_members: Vec<keypool_api::service::Member>,
    /// A webhook told of dead keys, providers without a usable key and spent budgets.
    pub alerts: Option<crate::alerts::AlertsConfig>,
    /// The webhook, its secret read (filled by [`read`]).
    #[serde(skip)]
    pub webhook: Option<crate::alerts::Webhook>,
}

/// `[[routes]]`: `model` (a glob) goes `to` a provider's model, written `provider/model`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub model: Spanned<String>,
    pub to: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub name: Spanned<String>,
    pub kind: ProviderKind,
    pub base_url: String,
    #[serde(default)]
    pub models: Vec<String>,
    #[serde(default)]
    pub keys: Vec<KeyConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    /// The key, or `$NAME` to read it from the environment when used.
    pub key: String,
    pub label: Option<String>,
    #[serde(default = "one")]
    pub weight: Spanned<u32>,
    pub quota_group: Option<String>,
}

impl std::fmt::Debug for KeyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyConfig").field("label", &self.label).finish_non_exhaustive()
    }
}

fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

/// The line (1-based) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Reads and checks the file at `path`; nothing is written.
pub fn read(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| ConfigError::Unreadable { path: path.to_owned(), reason: error.to_string() })?;
    let invalid = |message: String| ConfigError::Invalid { path: path.to_owned(), message };
    // toml's message names the line and column, and quotes the line: a key's value could be on
    // it, so only the first line of the message (where and what) is kept.
    let config: Config = toml::from_str(&text).map_err(|error| {
        let line = error.span().map(|span| line_of(&text, span.start));
        let what = error.message().to_owned();
        invalid(match line {
            Some(line) => format!("line {line}: {what}"),
            None => what,
        })
    })?;
    let mut names = HashSet::new();
    for provider in &config.providers {
        let line = line_of(&text, provider.name.span().start);
        let name = provider.name.get_ref().trim();
        if name.is_empty() {
            return Err(invalid(format!("line {line}: a provider needs a name")));
        }
        if !names.insert(name.to_lowercase()) {
            return Err(invalid(format!("line {line}: a second provider named {name:?}")));
        }
        let mut values = HashSet::new();
        for key in &provider.keys {
            let line = line_of(&text, key.weight.span().start);
            if *key.weight.get_ref() == 0 {
                return Err(invalid(format!("line {line}: a key's weight is 1 or more")));
            }
            if key.key.trim().is_empty() {
                return Err(invalid(format!("provider {name:?}: a key is empty")));
            }
            if !values.insert(key.key.trim()) {
                return Err(invalid(format!("provider {name:?}: a key is listed twice")));
            }
        }
    }
    for route in &config.routes {
        let line = line_of(&text, route.model.span().start);
        match route.to.split_once('/') {
            Some((provider, model)) if !provider.trim().is_empty() && !model.trim().is_empty() => {}
            _ => return Err(invalid(format!("line {line}: a route goes `to` \"provider/model\", not {:?}", route.to))),
        }
        if route.model.get_ref().trim().is_empty() {
            return Err(invalid(format!("line {line}: a route needs the model it takes")));
        }
    }
    if let Some(drain) = &config.drain_seconds {
        if *drain.get_ref() > DRAIN_MAX_SECONDS {
            let line = line_of(&text, drain.span().start);
            return Err(invalid(format!("line {line}: drain_seconds is at most {DRAIN_MAX_SECONDS} (a day)")));
        }
    }
    if let Some(first) = &config.first_event_seconds {
        if !(1..=FIRST_EVENT_MAX_SECONDS).contains(first.get_ref()) {
            let line = line_of(&text, first.span().start);
            return Err(invalid(format!("line {line}: first_event_seconds is 1 to {FIRST_EVENT_MAX_SECONDS}")));
        }
    }
    let mut config = config;
    config.proxies = trusted_proxies(&config, &text).map_err(invalid)?;
    config.team_ledger = match (&config.ledger, &config.ledger_retention_months) {
        (Some(url), retention) => {
            Some(crate::ledger::resolve(url, retention.as_ref(), |offset| line_of(&text, offset)).map_err(invalid)?)
        }
        (None, Some(months)) => {
            let line = line_of(&text, months.span().start);
            return Err(invalid(format!("line {line}: ledger_retention_months needs a ledger = \"postgres://…\"")));
        }
        (None, None) => None,
    };
    config.traces =
        config.otel.as_ref().map(|otel| otel.resolve(|offset| line_of(&text, offset))).transpose().map_err(invalid)?;
    config.resolved_members =
        crate::members::config::resolve(&config.members, |offset| line_of(&text, offset)).map_err(invalid)?;
    crate::members::config::check_prices(&config.prices).map_err(invalid)?;
    config.webhook = config.alerts.as_ref().map(|alerts| alerts.webhook()).transpose().map_err(invalid)?;
    Ok(config)
}

/// The team ledger the file at `path` names, if any, reading nothing else of it (the commands
/// that only read the ledger need none of the members' or the alerts' secrets).
pub fn read_ledger(path: &Path) -> Result<Option<crate::ledger::LedgerConfig>, ConfigError> {
    #[derive(Deserialize)]
    struct LedgerOnly {
        ledger: Option<Spanned<String>>,
        ledger_retention_months: Option<Spanned<u32>>,
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| ConfigError::Unreadable { path: path.to_owned(), reason: error.to_string() })?;
    let invalid = |message: String| ConfigError::Invalid { path: path.to_owned(), message };
    let only: LedgerOnly = toml::from_str(&text).map_err(|error| {
        let line = error.span().map(|span| line_of(&text, span.start));
        invalid(format!("line {}: {}", line.unwrap_or(0), error.message()))
    })?;
    only.ledger
        .map(|url| crate::ledger::resolve(&url, only.ledger_retention_months.as_ref(), |offset| line_of(&text, offset)))
        .transpose()
        .map_err(invalid)
}

/// `trusted_proxies` and `forwarded_header` as the gateway takes them; `Err` names the line.
fn trusted_proxies(config: &Config, text: &str) -> Result<keypool_gateway::TrustedProxies, String> {
    let mut networks = Vec::new();
    for entry in &config.trusted_proxies {
        let line = line_of(text, entry.span().start);
        let written = entry.get_ref().trim();
        let network = written
            .parse::<ipnet::IpNet>()
            .or_else(|_| written.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
            .map_err(|_| {
                format!("line {line}: trusted_proxies holds {written:?}, which is no network (10.0.0.0/8, fd00::/8) or address")
            })?;
        // 10.1.2.3/8 is taken for 10.0.0.0/8, as it contains the same addresses.
        networks.push(network.trunc());
    }
    let header = match &config.forwarded_header {
        None => keypool_gateway::ForwardedHeader::XForwardedFor,
        Some(name) => match name.get_ref().trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => keypool_gateway::ForwardedHeader::XForwardedFor,
            "forwarded" => keypool_gateway::ForwardedHeader::Forwarded,
            other => {
                let line = line_of(text, name.span().start);
                return Err(format!(
                    "line {line}: forwarded_header is \"x-forwarded-for\" or \"forwarded\", not {other:?}"
                ));
            }
        },
    };
    Ok(keypool_gateway::TrustedProxies { networks, header })
}

impl Config {
    /// How long the server waits for its providers.
    pub fn deadlines(&self) -> keypool_llm::Deadlines {
        let default = keypool_llm::Deadlines::default();
        let first = self.first_event_seconds.as_ref().map(|s| std::time::Duration::from_secs(*s.get_ref()));
        keypool_llm::Deadlines { first_event: first.unwrap_or(default.first_event), ..default }
    }

    /// How long requests in flight may run after SIGTERM.
    pub fn drain(&self) -> std::time::Duration {
        self.drain_seconds.as_ref().map_or(DRAIN_DEFAULT, |seconds| std::time::Duration::from_secs(*seconds.get_ref()))
    }
}

/// The file's routes, their providers (checked before anything was written) in the store now.
fn model_routes(context: &AppContext, config: &Config) -> Result<Vec<keypool_api::service::ModelRoute>, String> {
    let providers = context.providers().and_then(|p| p.list()).map_err(|e| e.to_string())?;
    config
        .routes
        .iter()
        .map(|route| {
            let (provider, model) = route.to.split_once('/').expect("checked when read");
            let provider = provider.trim();
            // A provider the file names wins over a built-in one whose id is the same word (the
            // file's `gemini` over the built-in Google Gemini, id `gemini`).
            let Some(provider) = providers
                .iter()
                .find(|p| same_name(&p.name, provider))
                .or_else(|| providers.iter().find(|p| p.id == provider))
            else {
                return Err(format!("a route goes to {provider:?}, which is no provider here"));
            };
            Ok(keypool_api::service::ModelRoute {
                model: route.model.get_ref().trim().to_owned(),
                provider: provider.id.clone(),
                to_model: model.trim().to_owned(),
            })
        })
        .collect()
}

/// A service error as a line: an invalid argument names its fields and why (the field errors
/// carry codes and parameters, never a key's value).
fn described(error: &keypool_api::service::ServiceError) -> String {
    match error {
        keypool_api::service::ServiceError::Invalid(fields) => {
            let each: Vec<String> = fields.iter().map(|f| format!("{}: {:?}", f.field, f.rule)).collect();
            format!("{error} ({})", each.join("; "))
        }
        other => other.to_string(),
    }
}

/// What applying the file changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub providers_added: usize,
    pub keys_added: usize,
    pub keys_removed: usize,
}

/// Applies `config` (read from `path`) to the store of `context`, in `data_dir`.
/// One provider name as the app compares them: trimmed, in Unicode case (the store refuses a
/// second provider of a name that differs only so).
fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// What an apply added, undone when it fails: a failed apply leaves no key or provider behind
/// that the next one would not know it had added.
#[derive(Default)]
struct Additions {
    providers: Vec<String>,
    keys: Vec<String>,
}

/// Applies `config` to the store; when it fails, the keys and providers it added are removed
/// again (changes to those that were there before stay).
pub fn apply(context: &AppContext, config: &Config, path: &Path, data_dir: &Path) -> Result<Applied, ConfigError> {
    let mut additions = Additions::default();
    let applied = apply_recording(context, config, path, data_dir, &mut additions);
    if applied.is_err() {
        if let Ok(keys) = context.keys() {
            for id in &additions.keys {
                if let Err(error) = keys.delete(id) {
                    tracing::error!(key = %id, %error, "a key the failed apply added could not be removed");
                }
            }
        }
        if let Ok(providers) = context.providers() {
            for id in &additions.providers {
                if let Err(error) = providers.delete(id) {
                    tracing::error!(provider = %id, %error, "a provider the failed apply added could not be removed");
                }
            }
        }
    }
    applied
}

fn apply_recording(
    context: &AppContext,
    config: &Config,
    path: &Path,
    data_dir: &Path,
    additions: &mut Additions,
) -> Result<Applied, ConfigError> {
    let failed = |reason: String| ConfigError::Store { path: path.to_owned(), reason };
    let providers = context.providers().map_err(|e| failed(e.to_string()))?;
    let keys = context.keys().map_err(|e| failed(e.to_string()))?;
    let added_path = data_dir.join(ADDED_FILE);
    let before: Vec<String> =
        std::fs::read(&added_path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
    let mut added: Vec<String> = Vec::new();
    let mut applied = Applied::default();
    let existing = providers.list().map_err(|e| failed(e.to_string()))?;
    // Checked before anything is written: a route to a provider neither here nor in the file
    // refuses the whole file.
    for route in &config.routes {
        let provider = route.to.split_once('/').map_or("", |(provider, _)| provider.trim());
        let known = existing.iter().any(|p| p.id == provider || same_name(&p.name, provider))
            || config.providers.iter().any(|p| same_name(p.name.get_ref(), provider));
        if !known {
            return Err(failed(format!("a route goes to {provider:?}, which is no provider here")));
        }
    }
    for wanted in &config.providers {
        let name = wanted.name.get_ref().trim();
        let found = existing.iter().find(|p| same_name(&p.name, name));
        let provider = match found {
            Some(row) => {
                let same = row.kind == wanted.kind
                    && row.base_url == wanted.base_url
                    && (wanted.models.is_empty() || row.models == wanted.models);
                if same {
                    row.clone()
                } else {
                    let patch = ProviderPatch {
                        kind: Some(wanted.kind),
                        base_url: Some(wanted.base_url.clone()),
                        models: (!wanted.models.is_empty()).then(|| wanted.models.clone()),
                        // A default model the file's list no longer has gives way to its first.
                        default_model: row
                            .default_model
                            .as_ref()
                            .filter(|m| !wanted.models.is_empty() && !wanted.models.contains(m))
                            .map(|_| wanted.models.first().cloned()),
                        // The operator's file names the host: that is the confirmation.
                        on_my_network: true,
                        ..ProviderPatch::default()
                    };
                    // The operator's file names the host: that is the confirmation.
                    providers
                        .update(&row.id, patch, true)
                        .map_err(|e| failed(format!("provider {name:?}: {}", described(&e))))?
                }
            }
            None => {
                let new = NewProvider {
                    name: name.to_owned(),
                    kind: wanted.kind,
                    base_url: wanted.base_url.clone(),
                    api_key: None,
                    models: wanted.models.clone(),
                    default_model: None,
                    system_prompt: None,
                    // As for an update: the operator's file names the host.
                    on_my_network: true,
                };
                applied.providers_added += 1;
                let row = providers.add(new).map_err(|e| failed(format!("provider {name:?}: {}", described(&e))))?;
                additions.providers.push(row.id.clone());
                row
            }
        };
        let rows = keys.list(&provider.id).map_err(|e| failed(e.to_string()))?;
        for key in &wanted.keys {
            let value = key.key.trim();
            let holder = keys.find_by_value(&provider.id, &Secret::new(value)).map_err(|e| failed(e.to_string()))?;
            let matched = holder.and_then(|held| rows.iter().find(|row| row.id == held.id));
            let id = match matched {
                Some(row) => {
                    let patch = KeyPatch {
                        label: Some(key.label.clone()),
                        weight: Some(*key.weight.get_ref()),
                        ..KeyPatch::default()
                    };
                    if row.label != key.label || row.weight != *key.weight.get_ref() {
                        keys.update(&row.id, patch)
                            .map_err(|e| failed(format!("provider {name:?}: {}", described(&e))))?;
                    }
                    row.id.clone()
                }
                None => {
                    let new = NewKey {
                        provider_id: provider.id.clone(),
                        label: key.label.clone(),
                        api_key: Secret::new(value),
                        enabled: true,
                        weight: *key.weight.get_ref(),
                        limits: UserLimits::default(),
                        quota_group: None,
                    };
                    applied.keys_added += 1;
                    let row = keys.add(new).map_err(|e| failed(format!("provider {name:?}: {}", described(&e))))?.value;
                    added.push(row.id.clone());
                    additions.keys.push(row.id.clone());
                    row.id
                }
            };
            if matched.is_some() && before.contains(&id) {
                added.push(id.clone());
            }
            let group = key.quota_group.as_deref().map(str::trim).filter(|g| !g.is_empty());
            let current = rows.iter().find(|row| row.id == id).and_then(|row| row.quota_group.as_deref());
            if matched.is_none() || current != group {
                keys.set_quota_group(&id, group)
                    .map_err(|e| failed(format!("provider {name:?}: {}", described(&e))))?;
            }
        }
    }
    for id in before.iter().filter(|id| !added.contains(id)) {
        match keys.delete(id) {
            Ok(_) => applied.keys_removed += 1,
            // Removed meanwhile by someone else: nothing left to do.
            Err(keypool_api::service::ServiceError::NotFound { .. }) => {}
            Err(error) => return Err(failed(error.to_string())),
        }
    }
    let json = serde_json::to_vec(&added).expect("ids serialize");
    std::fs::write(&added_path, json).map_err(|e| failed(format!("{}: {e}", added_path.display())))?;
    let routes = model_routes(context, config).map_err(failed)?;
    context.local_api().map_err(|e| failed(e.to_string()))?.set_model_routes(routes);
    Ok(applied)
}
