//! `keypool-server`: Keypool's pool and local API (OpenAI, Anthropic and Gemini dialects)
//! without a window, for a headless server; optionally one member of a team sharing the pool's
//! state through Redis with the other replicas and desktops.
//!
//! ```text
//! keypool-server serve --data-dir DIR [--listen ADDR:PORT] [--config FILE] [--token-file FILE]
//!                      [--allowed-host NAME]... [--redis-url-file FILE --team NAME --team-secret-file FILE]
//! keypool-server token --data-dir DIR [--regenerate]
//! keypool-server keys import --data-dir DIR --provider NAME --file FILE [--weight N] [--group G] [--no-validate]
//! keypool-server keys list --data-dir DIR [--provider NAME] --json
//! keypool-server members add|list|update|revoke … --data-dir DIR
//! keypool-server usage --data-dir DIR [--config FILE] [--by member|model|provider|key|source|day] [--since WHEN] [--json|--csv]
//! ```
//!
//! Invariants: no log line or span holds a key, the token, the team secret, the Redis URL or the
//! ledger's URL (either may hold a password); a bad config file stops the start before the store
//! is opened.

mod alerts;
mod config;
mod keys;
pub mod ledger;
mod members;
mod metrics;
mod observe;
mod otel;
mod probe;
mod token;
mod usage;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use keypool_api::service::MemberBook;
use keypool_api::{AppContext, Dirs};
use keypool_gateway::Serving;
use keypool_team::{TeamConfig, TeamSecret};

/// How long the answers a drain cut off may take to be written before the process exits.
const LAST_WRITES: Duration = Duration::from_secs(5);

#[derive(Parser)]
#[command(name = "keypool-server", version, about = "Keypool's key pool and local API, headless")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serves the local API until SIGINT or SIGTERM; SIGHUP re-reads the config file.
    Serve(Serve),
    /// Prints the stored token (making one if there is none), or replaces it.
    Token {
        #[arg(long)]
        data_dir: PathBuf,
        /// Makes a new token; the old one stops working at the server's next start.
        #[arg(long)]
        regenerate: bool,
    },
    /// Imports keys from a file into a provider's pool, or lists the pool's keys, as JSON.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Adds, lists, changes and revokes members: tokens of their own, with limits.
    #[command(subcommand)]
    Members(members::cli::MembersCommand),
    /// The ledger (the team's with a `ledger` in --config) summed by member, model, provider, key,
    /// client or day: a table, JSON or CSV.
    Usage(usage::Usage),
    /// Exits 0 when a plain-http URL (the server's /healthz on loopback) answers 200: a
    /// container's health check without a shell or curl.
    Probe {
        #[arg(default_value = "http://127.0.0.1:4141/healthz")]
        url: String,
    },
    /// Reads a config file as `serve` would, and says whether it would start or why not.
    Check {
        #[arg(long)]
        config: PathBuf,
    },
}

#[derive(Args)]
struct Serve {
    /// Where the store (SQLite), the token and the usage ledger live.
    #[arg(long)]
    data_dir: PathBuf,
    /// The address to listen on; one beyond loopback is logged as a warning.
    #[arg(long, default_value = "127.0.0.1:4141")]
    listen: SocketAddr,
    /// The providers and keys to serve (TOML), applied at every start and on SIGHUP.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The token is this file's content; made (mode 0600) if the file does not exist.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// A Host name to answer to besides loopback names and the --listen address (repeatable).
    #[arg(long = "allowed-host")]
    allowed_hosts: Vec<String>,
    /// The team's Redis: redis://… or rediss://… (TLS). Visible in the process list: a URL with
    /// a password belongs in --redis-url-file or KEYPOOL_REDIS_URL.
    #[arg(long, conflicts_with = "redis_url_file")]
    redis: Option<String>,
    /// A file holding the team's Redis URL; KEYPOOL_REDIS_URL otherwise.
    #[arg(long)]
    redis_url_file: Option<PathBuf>,
    /// The team's name.
    #[arg(long)]
    team: Option<String>,
    /// The team secret (64 hex digits); KEYPOOL_TEAM_SECRET otherwise.
    #[arg(long, requires = "team")]
    team_secret_file: Option<PathBuf>,
    /// Serves GET /metrics (and /readyz, /healthz) on this address too, without a token: for a
    /// scraper on a private network. On --listen, /metrics needs the token (or the metrics token).
    #[arg(long)]
    metrics_listen: Option<SocketAddr>,
    /// A token (the file's content, at least 32 characters) that may read /metrics on --listen
    /// besides the server's own.
    #[arg(long)]
    metrics_token_file: Option<PathBuf>,
}

/// Why the server cannot go on: one line for the operator, logged and printed before it exits
/// with a failure. The causes (files, the store, the team, signals) are worded where they occur.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Fatal(String);

impl From<String> for Fatal {
    fn from(message: String) -> Self {
        Fatal(message)
    }
}

impl From<&str> for Fatal {
    fn from(message: &str) -> Self {
        Fatal(message.to_owned())
    }
}

/// The command line `args` (the program's name first), run as `keypool-server` runs it: logging
/// set up from `RUST_LOG` (default `info`), then the command. The binary is this and nothing
/// else; a test runs a server in its own process with it (where it counts what a request costs).
pub fn run_cli<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    // `[otel]` is read before logging starts, to put the exporter's layer beside the log's; a
    // config that cannot be read exports nothing, and is reported by the start (read again).
    let traces = match &cli.command {
        Command::Serve(serve) => {
            serve.config.as_deref().and_then(|path| config::read(path).ok()).and_then(|c| c.traces)
        }
        _ => None,
    };
    let exporting = match start_logging(traces.as_ref()) {
        Ok(exporting) => exporting,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("keypool-server: {message}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Token { data_dir, regenerate } => token_command(&data_dir, regenerate),
        Command::Keys(command) => keys::run(command),
        Command::Members(command) => members::cli::run(command),
        Command::Usage(usage) => usage::run(usage),
        Command::Probe { url } => probe::run_probe(&url),
        Command::Check { config } => probe::run_check(&config),
        Command::Serve(serve) => {
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("keypool-server: no async runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let ran = runtime.block_on(run(serve));
            drop(runtime);
            // After the runtime: the spans of the requests the drain let finish go too.
            if let Some(exporting) = exporting {
                exporting.shut_down();
            }
            match ran {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    tracing::error!("{message}");
                    eprintln!("keypool-server: {message}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Logging to stderr, filtered by `RUST_LOG` (default `info`), and with `traces` the exporter's
/// layer beside it, which sees only the spans of [`keypool_llm::SPAN_TARGET`] (whatever
/// `RUST_LOG` says: a filter of each layer's own). `Err`: the exporter cannot be built (logging
/// has started without it).
fn start_logging(traces: Option<&otel::Otel>) -> Result<Option<otel::Exporting>, String> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::Layer as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi).with_filter(filter);
    let logging = tracing_subscriber::registry().with(log);
    let Some(traces) = traces else {
        logging.init();
        return Ok(None);
    };
    match otel::Exporting::start(traces) {
        Ok((exporting, layer)) => {
            logging.with(layer).init();
            tracing::info!(
                collector = %otel::collector(&traces.endpoint),
                sample_ratio = traces.sample_ratio,
                "traces are exported (OTLP/HTTP)"
            );
            Ok(Some(exporting))
        }
        Err(message) => {
            logging.init();
            Err(message)
        }
    }
}

fn token_command(data_dir: &Path, regenerate: bool) -> ExitCode {
    let made = std::fs::create_dir_all(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()));
    let path = data_dir.join(token::STORED_FILE);
    let token = made.and_then(|()| {
        if regenerate {
            let token = token::generate();
            token::write(&path, &token).map(|()| token).map_err(|e| e.to_string())
        } else {
            token::read_or_make(&path).map(|(token, _)| token).map_err(|e| e.to_string())
        }
    });
    match token {
        Ok(token) => {
            println!("{token}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("keypool-server: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The team's Redis URL: `--redis`, the content of `--redis-url-file`, or `KEYPOOL_REDIS_URL`.
/// One given on the command line with a password is warned about: the process list shows it.
fn redis_url(serve: &Serve) -> Result<Option<String>, Fatal> {
    if let Some(url) = &serve.redis {
        if url.split_once("://").is_some_and(|(_, rest)| rest.split('/').next().is_some_and(|auth| auth.contains('@')))
        {
            tracing::warn!(
                "--redis holds a password, which every user of this machine sees in the process list: use --redis-url-file FILE or KEYPOOL_REDIS_URL"
            );
        }
        return Ok(Some(url.clone()));
    }
    if let Some(path) = &serve.redis_url_file {
        warn_if_others_can_read(path, "the Redis URL file");
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(Some(text.trim().to_owned()));
    }
    Ok(std::env::var("KEYPOOL_REDIS_URL").ok().filter(|url| !url.trim().is_empty()))
}

/// Warns when `path` (a token, a secret, a URL with a password) can be read by its group or by
/// others.
fn warn_if_others_can_read(path: &Path, what: &str) {
    #[cfg(unix)]
    if let Ok(metadata) = std::fs::metadata(path) {
        let mode = std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777;
        if mode & 0o077 != 0 {
            tracing::warn!(
                file = %path.display(),
                "{what} can be read by others (mode {mode:03o}): chmod 600 {}",
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, what);
}

/// The team to join, from the flags and the environment.
fn team_config(serve: &Serve) -> Result<Option<TeamConfig>, Fatal> {
    let url = redis_url(serve)?;
    let (url, team) = match (url, &serve.team) {
        (Some(url), Some(team)) => (url, team),
        (None, None) => return Ok(None),
        (Some(_), None) => return Err("the team's Redis needs --team NAME".into()),
        (None, Some(_)) => {
            return Err("--team needs the team's Redis: --redis-url-file FILE, KEYPOOL_REDIS_URL or --redis URL".into())
        }
    };
    let text = match &serve.team_secret_file {
        Some(path) => {
            warn_if_others_can_read(path, "the team secret file");
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => std::env::var("KEYPOOL_TEAM_SECRET")
            .map_err(|_| "--team needs the team secret: --team-secret-file FILE or KEYPOOL_TEAM_SECRET".to_owned())?,
    };
    let secret = TeamSecret::parse(text.trim()).map_err(|e| format!("the team secret: {e}"))?;
    Ok(Some(TeamConfig::new(url, team.clone(), secret)))
}

async fn run(serve: Serve) -> Result<(), Fatal> {
    // Listened for before the endpoint serves (see `Signals`).
    let mut signals = Signals::listen()?;
    let running = start(serve).await?;
    let reloading = Reloading {
        context: &running.context,
        serve: &running.serve,
        data_dir: &running.serve.data_dir,
        book: &running.book,
        alerts: &running.alerts,
        owner: running.owner,
        drain_limit: &running.drain_limit,
        gateway: &running.gateway,
    };
    signals.wait_for_stop(&reloading).await?;
    running.drain();
    running.finish(signals.stopped_again()).await;
    Ok(())
}

/// A server serving in this process, from [`start`] until [`Running::stop`].
pub struct Running {
    context: Arc<AppContext>,
    serve: Serve,
    book: MemberBook,
    alerts: alerts::Alerts,
    owner: [u8; 32],
    gateway: keypool_gateway::Gateway,
    /// The team's ledger in Postgres, when the config names one.
    team_ledger: Option<ledger::TeamLedger>,
    _metrics_listener: Option<metrics::MetricsListener>,
    /// Set by [`Running::drain`]; readiness (on every listener) says no from then on.
    draining: Arc<AtomicBool>,
    /// How long a drain waits for the requests in flight, in seconds (`drain_seconds`; a SIGHUP
    /// may change it).
    drain_limit: Arc<AtomicU64>,
}

/// How a [`Running::finish`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// Every request in flight ran to its end.
    Drained,
    /// Those still running when the drain ended (its limit, or a second SIGTERM) were cut off,
    /// each with an error in its dialect.
    CutOff,
}

impl Running {
    /// Where the endpoint listens.
    pub fn address(&self) -> SocketAddr {
        self.gateway.addresses()[0]
    }

    /// Writes what waits to be written: the usage ledger's attempts, the members' spend.
    pub fn flush(&self) {
        if let Ok(usage) = self.context.usage() {
            usage.flush();
        }
        self.book.flush();
    }

    /// How long a drain waits for the requests in flight.
    pub fn drain_limit(&self) -> Duration {
        Duration::from_secs(self.drain_limit.load(Ordering::SeqCst))
    }

    /// What SIGTERM does first: `/readyz` answers 503 from this moment (on every listener), new
    /// requests are refused with a retryable 503 in their dialect, and those in flight go on.
    /// `/healthz` still answers 200.
    pub fn drain(&self) {
        // Before anything is said: whoever reads the log line finds the server not ready.
        self.draining.store(true, Ordering::SeqCst);
        self.gateway.drain();
        let in_flight = self.gateway.stats().in_flight;
        tracing::info!(
            in_flight,
            "draining: not ready, refusing new requests; waiting up to {} s for those in flight",
            self.drain_limit().as_secs()
        );
    }

    /// Ends a drain ([`Running::drain`], begun here if it was not): waits until no request is in
    /// flight, [`Running::drain_limit`] has passed, or `cut` resolves (a second SIGTERM); then
    /// ends what is still running (a stream with an error event in its dialect), stops
    /// listening and writes what waits (the ledger, the members' spend, the team ledger's rows:
    /// shipped, or kept in the store for the next start).
    pub async fn finish(self, cut: impl std::future::Future<Output = ()>) -> Finished {
        if !self.draining.load(Ordering::SeqCst) {
            self.drain();
        }
        let limit = self.drain_limit();
        let finished = tokio::select! {
            () = self.gateway.idle() => Finished::Drained,
            () = tokio::time::sleep(limit) => {
                let in_flight = self.gateway.stats().in_flight;
                tracing::warn!(in_flight, "still in flight after {} s (drain_seconds): cutting them off", limit.as_secs());
                Finished::CutOff
            }
            () = cut => {
                let in_flight = self.gateway.stats().in_flight;
                tracing::warn!(in_flight, "asked again to stop: cutting off what is in flight at once");
                Finished::CutOff
            }
        };
        if finished == Finished::CutOff {
            self.gateway.cut_off();
        } else {
            tracing::info!("drained: every request in flight ran to its end");
        }
        let Running { context, book, gateway, team_ledger, .. } = self;
        if !gateway.shut_down(LAST_WRITES).await {
            tracing::warn!("connections still writing after {} s were closed", LAST_WRITES.as_secs());
        }
        if let Ok(usage) = context.usage() {
            usage.flush();
        }
        book.flush();
        if let Some(ledger) = team_ledger {
            ledger.close(LAST_WRITES).await;
        }
        tracing::info!("stopped");
        finished
    }

    /// Drains and stops as SIGTERM does when no second one comes: [`Running::drain`], then
    /// [`Running::finish`] within [`Running::drain_limit`].
    pub async fn stop(self) -> Finished {
        self.drain();
        self.finish(std::future::pending()).await
    }
}

/// Starts serving as `keypool-server serve ARGS` does (`args` without the program's name and
/// `serve`), in this process, on the current Tokio runtime.
pub async fn start_with_args<I, T>(args: I) -> Result<Running, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = ["keypool-server".into(), "serve".into()].into_iter().chain(args.into_iter().map(Into::into));
    let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
    let Command::Serve(serve) = cli.command else { unreachable!("the command is serve") };
    start(serve).await.map_err(|fatal| fatal.0)
}

/// Opens the store, applies the config and serves until the [`Running`] is stopped.
async fn start(serve: Serve) -> Result<Running, Fatal> {
    // Checked before anything is opened or written: a bad file changes nothing.
    let config = serve.config.as_deref().map(config::read).transpose().map_err(|e| e.to_string())?;
    let team = team_config(&serve)?;
    let data_dir = serve.data_dir.clone();
    std::fs::create_dir_all(&data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    if let Ok(privacy) = keypool_api::files::private_dir(&data_dir) {
        keypool_api::files::log_privacy(&data_dir, privacy);
    }
    let dirs = Dirs { data_dir: data_dir.clone(), log_dir: data_dir.join("logs") };
    let metrics = metrics::Metrics::new();
    let alerts = alerts::Alerts::start();
    alerts.set_webhook(config.as_ref().and_then(|c| c.webhook.clone()));
    let team_ledger = match config.as_ref().and_then(|c| c.team_ledger.clone()) {
        Some(ledger) => Some(ledger::TeamLedger::new(ledger, replica_id(&data_dir)?)),
        None => None,
    };
    let mut watching: Vec<Arc<dyn observe::Observe>> = vec![metrics.clone(), Arc::new(alerts.clone())];
    if let Some(ledger) = &team_ledger {
        watching.push(Arc::new(ledger.clone()));
    }
    let observers = Arc::new(observe::Observers(watching));
    let deadlines = config.as_ref().map(config::Config::deadlines).unwrap_or_default();
    let context =
        AppContext::headless_tapped(env!("CARGO_PKG_VERSION"), dirs, team, Some(observers.clone()), deadlines)
            .map_err(|e| format!("the store in {} cannot be opened: {e}", data_dir.display()))?;
    let context = Arc::new(context);
    // The store's services charge the book with every member's answer; the observers hear what
    // it decides beyond a request's own answer.
    let book: MemberBook = context.member_book().map_err(|e| e.to_string())?.clone();
    let watch: Arc<dyn keypool_api::service::BookWatch> = observers;
    book.watch_with(Arc::downgrade(&watch));
    if serve.team.is_some() && context.team_state() == keypool_team::TeamState::Off {
        // The name or the URL was refused (the reason is logged above, without the URL).
        return Err(
            "the team cannot be joined: a team name is 1 to 64 of A-Z a-z 0-9 . _ -, the URL redis:// or rediss://"
                .into(),
        );
    }
    let token_path = serve.token_file.clone().unwrap_or_else(|| data_dir.join(token::STORED_FILE));
    let (token, new) = token::read_or_make(&token_path).map_err(|e| e.to_string())?;
    if new {
        tracing::info!(file = %token_path.display(), "a new token was written (mode 0600)");
    }
    warn_if_others_can_read(&token_path, "the token file");
    let owner = keypool_gateway::token_hash(&token);
    if let (Some(config), Some(path)) = (&config, &serve.config) {
        let applied = config::apply(&context, config, path, &data_dir).map_err(|e| e.to_string())?;
        tracing::info!(?applied, config = %path.display(), "config applied");
        // The keys of providers that answer balance reads know what they have left from the
        // start, not from the background's next round.
        if let Ok(keys) = context.keys().cloned() {
            tokio::spawn(async move {
                if let Err(error) = keys.read_balances().await {
                    tracing::warn!(%error, "could not read the keys' balances");
                }
                if let Err(error) = keys.read_windows().await {
                    tracing::warn!(%error, "could not read the keys' plan windows");
                }
            });
        }
        let members = members::config::apply(&context, &config.resolved_members, &config.prices, &owner)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        tracing::info!(?members, "members applied");
        book.removed(&members.removed);
    }
    let team = context.team().ok().and_then(|team| team.joined());
    let allowance = match &team {
        Some(team) => Some(team.allowance(&replica_id(&data_dir)?)),
        None => None,
    };
    if let Some(allowance) = &allowance {
        book.count_with(allowance.clone());
    }
    // The members the config file just wrote serve from the first request.
    book.refresh();
    book.follow();
    alerts.attach(&context, allowance.clone());
    if let Some(ledger) = &team_ledger {
        ledger.attach(&context, allowance.clone())?;
    }
    metrics.attach(&context, book.clone(), team, allowance, alerts.clone());
    let metrics_token = match &serve.metrics_token_file {
        Some(path) => {
            warn_if_others_can_read(path, "the metrics token file");
            let (token, _) = token::read_or_make(path).map_err(|e| e.to_string())?;
            Some(keypool_gateway::token_hash(&token))
        }
        None => None,
    };
    let render: Arc<dyn Fn() -> String + Send + Sync> = {
        let (metrics, ledger) = (metrics.clone(), team_ledger.clone());
        Arc::new(move || {
            let mut out = metrics.render();
            if let Some(ledger) = &ledger {
                ledger.render(&mut out);
            }
            out
        })
    };
    let draining = Arc::new(AtomicBool::new(false));
    let drain = config.as_ref().map_or(config::DRAIN_DEFAULT, config::Config::drain);
    let drain_limit = Arc::new(AtomicU64::new(drain.as_secs()));
    let ready: keypool_gateway::Readiness = {
        let (context, draining) = (context.clone(), draining.clone());
        let teamed = serve.team.is_some();
        Arc::new(move || match draining.load(Ordering::SeqCst) {
            true => Err("draining: the server is shutting down".to_owned()),
            false => readiness(&context, teamed),
        })
    };
    let _metrics_listener = match serve.metrics_listen {
        Some(address) => Some(metrics::listen(address, render.clone(), ready.clone()).await?),
        None => None,
    };
    if !serve.listen.ip().is_loopback() {
        tracing::warn!(
            address = %serve.listen,
            "listening beyond loopback on {}: anyone who can reach it may try the token; put TLS in front (a reverse proxy)",
            serve.listen
        );
    }
    let health_context = context.clone();
    let serving = Serving {
        health: Some(Arc::new(move || health_context.team_state().as_str())),
        log_requests: true,
        members: Some(Arc::new(book.clone())),
        observer: Some(metrics.clone()),
        metrics: Some(keypool_gateway::MetricsRoute { render, token_hash: metrics_token }),
        ready: Some(ready),
        ..Serving::default()
    };
    let local_api = context.local_api().map_err(|e| e.to_string())?;
    let gateway = local_api.serve_at(serve.listen, &token, serving).await.map_err(|e| e.to_string())?;
    gateway.allow_hosts(serve.allowed_hosts.iter().cloned());
    if let Some(config) = &config {
        trust_proxies(&gateway, &config.proxies);
    }
    tracing::info!(address = %serve.listen, team = context.team_state().as_str(), "keypool-server serves");
    Ok(Running { context, serve, book, alerts, owner, gateway, team_ledger, _metrics_listener, draining, drain_limit })
}

/// Reads the client's address from `proxies`' forwarded header from now on, and says so.
fn trust_proxies(gateway: &keypool_gateway::Gateway, proxies: &keypool_gateway::TrustedProxies) {
    if !proxies.networks.is_empty() {
        let networks: Vec<String> = proxies.networks.iter().map(ToString::to_string).collect();
        tracing::info!(
            proxies = %networks.join(", "),
            header = proxies.header.name(),
            "the client's address is read from the trusted proxies' forwarded header"
        );
    }
    gateway.trust_proxies(proxies.clone());
}

/// SIGINT, SIGTERM (stop) and SIGHUP (re-read the config), listened for before the endpoint
/// serves: a supervisor that stops the server as soon as `/healthz` answers must find the
/// handlers in place, not the default action that kills it uncleanly.
#[cfg(unix)]
struct Signals {
    hangup: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn listen() -> Result<Signals, Fatal> {
        use tokio::signal::unix::{signal, SignalKind};
        let listen = |kind| signal(kind).map_err(|e| format!("cannot listen for signals: {e}"));
        Ok(Signals {
            hangup: listen(SignalKind::hangup())?,
            terminate: listen(SignalKind::terminate())?,
            interrupt: listen(SignalKind::interrupt())?,
        })
    }

    /// Until SIGINT or SIGTERM; re-applies the config file on every SIGHUP (a bad file is
    /// logged and changes nothing).
    async fn wait_for_stop(&mut self, reloading: &Reloading<'_>) -> Result<(), Fatal> {
        loop {
            tokio::select! {
                _ = self.hangup.recv() => reload(reloading),
                _ = self.terminate.recv() => return Ok(()),
                _ = self.interrupt.recv() => return Ok(()),
            }
        }
    }

    /// Until SIGINT or SIGTERM comes again (during a drain; a SIGHUP then is logged and ignored).
    async fn stopped_again(mut self) {
        loop {
            tokio::select! {
                _ = self.hangup.recv() => tracing::info!("SIGHUP while draining: the config is not re-read"),
                _ = self.terminate.recv() => return,
                _ = self.interrupt.recv() => return,
            }
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn listen() -> Result<Signals, Fatal> {
        Ok(Signals)
    }

    async fn wait_for_stop(&mut self, _: &Reloading<'_>) -> Result<(), Fatal> {
        tokio::signal::ctrl_c().await.map_err(|e| format!("cannot listen for Ctrl-C: {e}").into())
    }

    async fn stopped_again(self) {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// What a SIGHUP re-applies the config file to.
struct Reloading<'a> {
    context: &'a AppContext,
    serve: &'a Serve,
    data_dir: &'a Path,
    book: &'a MemberBook,
    alerts: &'a alerts::Alerts,
    /// The server's own token's digest (no member may have it).
    owner: [u8; 32],
    drain_limit: &'a AtomicU64,
    gateway: &'a keypool_gateway::Gateway,
}

fn reload(reloading: &Reloading<'_>) {
    let Reloading { context, serve, data_dir, book, alerts, owner, drain_limit, gateway } = reloading;
    let Some(path) = &serve.config else {
        return tracing::info!("SIGHUP: no config file to re-read");
    };
    let config = match config::read(path) {
        Ok(config) => config,
        Err(error) => return tracing::error!(%error, "SIGHUP: the config file was not applied; nothing changed"),
    };
    match config::apply(context, &config, path, data_dir) {
        Ok(applied) => tracing::info!(?applied, "SIGHUP: config applied"),
        Err(error) => return tracing::error!(%error, "SIGHUP: the config file was not applied; nothing changed"),
    }
    alerts.set_webhook(config.webhook.clone());
    drain_limit.store(config.drain().as_secs(), Ordering::SeqCst);
    trust_proxies(gateway, &config.proxies);
    match members::config::apply(context, &config.resolved_members, &config.prices, owner) {
        Ok(members) => {
            tracing::info!(?members, "SIGHUP: members applied");
            book.removed(&members.removed);
            book.refresh();
        }
        Err(error) => tracing::error!(%error, "SIGHUP: the config file's members were not applied"),
    }
}

/// Whether the server is ready: its store open and, when it has a team, the team connected
/// (the config was applied before it served).
fn readiness(context: &AppContext, teamed: bool) -> Result<(), String> {
    if let keypool_api::DatabaseState::Failed { message, .. } = context.database() {
        return Err(format!("the store is not open: {message}"));
    }
    if teamed && context.team_state() != keypool_team::TeamState::Connected {
        return Err(format!("the team is {}", context.team_state().as_str()));
    }
    Ok(())
}

/// This server's stable id among a team's replicas (its shares of members' budgets are written
/// under it): kept in `DIR/server-replica-id`, made once.
fn replica_id(data_dir: &Path) -> Result<String, Fatal> {
    let path = data_dir.join("server-replica-id");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let id = text.trim();
        if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(id.to_owned());
        }
    }
    let mut random = [0u8; 16];
    getrandom::fill(&mut random).expect("the operating system provides randomness");
    let id: String = random.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(&path, format!("{id}\n")).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(id)
}
