//! The context every command runs in: the services over one open store (or why it could not
//! be opened), the app's directories, and the cooldown sweeper.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, EnvResolver, KeyPool, PoolConfig, SecretResolver};
use keypool_llm::{CancellationToken, CompletionService, RealTime, Waiter};
use keypool_store::{Database, OpenError};
use tokio_util::sync::DropGuard;

use keypool_keychain::{Keychain, OsKeychain};

use crate::service::{
    AgentHome, Agents, Attachments, BulkKeys, Chats, EventSink, KeychainProblem, Keys, Ledger, LedgerOutbox, LocalApi,
    MemberBook, Members, Membership, Migrated, NoSaveDialog, Notifications, PoolAlerts, Preferences, Providers,
    RecentAlert, Records, SaveDialog, ServiceError, Settings, StoreLoader, Usage, UsageReport, Vault, WritePath,
    DAY_MS,
};
use crate::SystemClock;

/// Where Keypool keeps its files.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// The database lives here.
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
}

/// What the services are connected to: injected so tests control time, the environment and
/// what the UI is told.
pub struct Wiring {
    pub events: Arc<dyn EventSink>,
    pub clock: Arc<dyn Clock>,
    /// How requests wait for a key to free up: real time, or simulated time in tests.
    pub waiter: Arc<dyn Waiter>,
    pub resolver: Arc<dyn SecretResolver>,
    pub pool: PoolConfig,
    /// Where exports are saved: a native dialog in the app.
    pub save_dialog: Arc<dyn SaveDialog>,
    /// Whether upstream attempts are recorded in the usage ledger (benchmarks turn it off to
    /// measure what it costs).
    pub ledger: bool,
    /// Where key values are kept at rest: the OS keychain in the app, none (the database) in
    /// tools, a double in tests.
    pub keychain: Result<Arc<dyn Keychain>, KeychainProblem>,
    /// The team whose members share the pool's state through Redis (none: the pool is this
    /// process's own). Joined on the current Tokio runtime when the services are made.
    pub team: Option<keypool_team::TeamConfig>,
    /// Told of every key disabled and every upstream attempt after the store is (a server's
    /// members, metrics and alerts); none in the app.
    pub tap: Option<Arc<dyn keypool_llm::Recorder>>,
    /// Where the coding agents keep their configuration (the user's home folder; a temporary
    /// one in tests). `None`: no agent can be connected.
    pub agent_home: Option<AgentHome>,
    /// Whether keys lost are told to `events` (`pool:alert`, the app's desktop notifications);
    /// a server has webhook alerts of its own, and nothing shows these.
    pub pool_alerts: bool,
    /// How long a provider may keep an attempt waiting (a server's `first_event_seconds`).
    pub deadlines: keypool_llm::Deadlines,
}

impl Wiring {
    /// The real clock, `$NAME` keys from the process environment, the default pool settings,
    /// no keychain ([`AppContext::open`] adds the operating system's).
    pub fn production(events: Arc<dyn EventSink>) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        Wiring {
            events,
            waiter: Arc::new(RealTime::new(clock.clone())),
            clock,
            resolver: Arc::new(EnvResolver),
            pool: PoolConfig::default(),
            save_dialog: Arc::new(NoSaveDialog),
            ledger: true,
            keychain: Err(KeychainProblem::NotConfigured),
            team: None,
            tap: None,
            agent_home: AgentHome::of_user(),
            pool_alerts: true,
            deadlines: keypool_llm::Deadlines::default(),
        }
    }
}

/// The database's state, for the startup screen.
#[derive(Debug, Clone)]
pub enum DatabaseState {
    Ready {
        path: PathBuf,
    },
    /// Could not be opened; `kind` is stable for the UI, `message` names the file and what to do.
    Failed {
        kind: &'static str,
        message: String,
        path: PathBuf,
    },
}

pub struct AppContext {
    version: String,
    dirs: Dirs,
    /// Kept beside the database, and there even when the database cannot be opened.
    preferences: Preferences,
    services: Result<Services, (&'static str, String)>,
    /// Stops the background work (sweeps, probes) when the context goes.
    _background: Option<DropGuard>,
}

struct Services {
    keys: Keys,
    bulk_keys: BulkKeys,
    providers: Arc<Providers>,
    chats: Chats,
    settings: Arc<Settings>,
    usage: Arc<Usage>,
    completions: CompletionService,
    clock: Arc<dyn Clock>,
    vault: Arc<Vault>,
    local_api: LocalApi,
    agents: Agents,
    members: Members,
    /// The members' (and named tokens') limits and spend, as the endpoint enforces them.
    book: MemberBook,
    usage_report: UsageReport,
    ledger_outbox: LedgerOutbox,
    team: Membership,
    events: Arc<dyn EventSink>,
    alerts: Arc<PoolAlerts>,
}

impl AppContext {
    /// Opens the store in `dirs.data_dir` with the production wiring (and `save_dialog` for
    /// exports) and starts the background work: cooldown sweeps, probes of out-of-credit keys,
    /// usage retention. A database that cannot be opened is kept as the reason every command
    /// fails with.
    pub fn open(
        version: impl Into<String>,
        dirs: Dirs,
        events: Arc<dyn EventSink>,
        save_dialog: Arc<dyn SaveDialog>,
    ) -> Self {
        let database = Database::open(&dirs.data_dir);
        if let Err(error) = &database {
            tracing::error!(%error, "the database could not be opened; the app starts without it");
        }
        let keychain = OsKeychain::open().map(|k| Arc::new(k) as Arc<dyn Keychain>).map_err(|error| {
            tracing::warn!(%error, "no keychain: API keys are kept in the database");
            KeychainProblem::from(error)
        });
        let wiring = Wiring { save_dialog, keychain, ..Wiring::production(events) };
        let mut context = Self::with_wiring(version, dirs, database, wiring);
        if let Ok(services) = &context.services {
            context._background = Some(background(Background {
                keys: services.keys.clone(),
                usage: services.usage.clone(),
                settings: services.settings.clone(),
                clock: services.clock.clone(),
            }));
        }
        context
    }

    /// A server's context: the store in `dirs.data_dir` (key values in the database: a server
    /// has no keychain), `team` joined when given, and the background work started. Must run
    /// on the Tokio runtime that is to serve.
    pub fn headless(
        version: impl Into<String>,
        dirs: Dirs,
        team: Option<keypool_team::TeamConfig>,
    ) -> Result<Self, OpenError> {
        Self::headless_tapped(version, dirs, team, None, keypool_llm::Deadlines::default())
    }

    /// A server's context ([`AppContext::headless`]) whose completion service's records are also
    /// told to `tap` (see [`Wiring::tap`]), its providers waited for as `deadlines` say.
    pub fn headless_tapped(
        version: impl Into<String>,
        dirs: Dirs,
        team: Option<keypool_team::TeamConfig>,
        tap: Option<Arc<dyn keypool_llm::Recorder>>,
        deadlines: keypool_llm::Deadlines,
    ) -> Result<Self, OpenError> {
        let database = Database::open(&dirs.data_dir)?;
        let events = Arc::new(crate::service::NoEvents);
        let wiring = Wiring { team, tap, pool_alerts: false, deadlines, ..Wiring::production(events) };
        let mut context = Self::with_wiring(version, dirs, Ok(database), wiring);
        if let Ok(services) = &context.services {
            context._background = Some(background(Background {
                keys: services.keys.clone(),
                usage: services.usage.clone(),
                settings: services.settings.clone(),
                clock: services.clock.clone(),
            }));
        }
        Ok(context)
    }

    /// How this member stands with its team; `off` without one.
    pub fn team_state(&self) -> keypool_team::TeamState {
        match self.services.as_ref() {
            Ok(services) => services.team.state(),
            Err(_) => keypool_team::TeamState::Off,
        }
    }

    /// The context over an already opened (or failed) database, wired as the caller says.
    pub fn with_wiring(
        version: impl Into<String>,
        dirs: Dirs,
        database: Result<Database, OpenError>,
        wiring: Wiring,
    ) -> Self {
        let services = database
            .map(|db| Services::new(Arc::new(db), wiring, &dirs.data_dir))
            .map_err(|error| (error.kind(), error.to_string()));
        let preferences = Preferences::open(&dirs.data_dir);
        AppContext { version: version.into(), dirs, preferences, services, _background: None }
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn dirs(&self) -> &Dirs {
        &self.dirs
    }

    /// The UI's preferences (theme, language, last page and provider).
    pub fn preferences(&self) -> &Preferences {
        &self.preferences
    }

    pub fn database(&self) -> DatabaseState {
        let path = self.dirs.data_dir.join(keypool_store::DATABASE_FILE_NAME);
        match &self.services {
            Ok(_) => DatabaseState::Ready { path },
            Err((kind, message)) => DatabaseState::Failed { kind, message: message.clone(), path },
        }
    }

    fn services(&self) -> Result<&Services, ServiceError> {
        self.services.as_ref().map_err(|(_, message)| ServiceError::Unavailable(message.clone()))
    }

    pub fn keys(&self) -> Result<&Keys, ServiceError> {
        Ok(&self.services()?.keys)
    }

    /// Imports, changes, deletes, tests and exports many keys at once.
    pub fn bulk_keys(&self) -> Result<&BulkKeys, ServiceError> {
        Ok(&self.services()?.bulk_keys)
    }

    pub fn providers(&self) -> Result<&Providers, ServiceError> {
        Ok(&self.services()?.providers)
    }

    pub fn chats(&self) -> Result<&Chats, ServiceError> {
        Ok(&self.services()?.chats)
    }

    pub fn settings(&self) -> Result<&Settings, ServiceError> {
        Ok(&self.services()?.settings)
    }

    pub fn usage(&self) -> Result<&Usage, ServiceError> {
        Ok(&self.services()?.usage)
    }

    /// The local OpenAI- and Anthropic-compatible endpoint.
    pub fn local_api(&self) -> Result<&LocalApi, ServiceError> {
        Ok(&self.services()?.local_api)
    }

    /// The coding agents pointed at the local API (Settings → Local API).
    pub fn agents(&self) -> Result<&Agents, ServiceError> {
        Ok(&self.services()?.agents)
    }

    /// The members of a server's endpoint, with tokens and limits of their own.
    pub fn members(&self) -> Result<&Members, ServiceError> {
        Ok(&self.services()?.members)
    }

    /// What the endpoint enforces of its members' limits, and what they spent: a server's members,
    /// the app's named tokens.
    pub fn member_book(&self) -> Result<&MemberBook, ServiceError> {
        Ok(&self.services()?.book)
    }

    /// The ledger summed by member, model, provider, key, client or day (`keypool-server usage`).
    pub fn usage_report(&self) -> Result<&UsageReport, ServiceError> {
        Ok(&self.services()?.usage_report)
    }

    /// What a server could not ship to its team's ledger (Postgres) yet.
    pub fn ledger_outbox(&self) -> Result<&LedgerOutbox, ServiceError> {
        Ok(&self.services()?.ledger_outbox)
    }

    /// Shows a desktop notification the UI worded from a `pool:alert`, unless Settings → General
    /// switched them off since.
    pub fn notify(&self, title: &str, body: &str) -> Result<(), ServiceError> {
        let services = self.services()?;
        if services.settings.get()?.notify_keys_lost {
            services.events.notify(title, body);
        }
        Ok(())
    }

    /// The keys lost this run, as the app lists them (the newest first), told to the desktop or
    /// not.
    pub fn recent_alerts(&self) -> Result<Vec<RecentAlert>, ServiceError> {
        Ok(self.services()?.alerts.recent())
    }

    /// Whether desktop notifications can be shown now (it may block for a moment).
    pub fn notifications(&self) -> Result<Notifications, ServiceError> {
        Ok(self.services()?.events.notifications())
    }

    /// Shows a desktop notification whatever Settings say (the user asked for a test), when one
    /// can be shown; answers whether one can.
    pub fn test_notification(&self, title: &str, body: &str) -> Result<Notifications, ServiceError> {
        let services = self.services()?;
        let state = services.events.notifications();
        if state == Notifications::Available {
            services.events.notify(title, body);
        }
        Ok(state)
    }

    /// The team this app is a member of (Settings → Team).
    pub fn team(&self) -> Result<&Membership, ServiceError> {
        Ok(&self.services()?.team)
    }

    /// Where key values are kept at rest.
    pub fn vault(&self) -> Result<&Vault, ServiceError> {
        Ok(&self.services()?.vault)
    }

    /// The completion service the chats use, for tools that drive it directly (benches).
    pub fn completions(&self) -> Result<&CompletionService, ServiceError> {
        Ok(&self.services()?.completions)
    }
}

impl Services {
    fn new(db: Arc<Database>, wiring: Wiring, data_dir: &std::path::Path) -> Self {
        let Wiring {
            events,
            clock,
            waiter,
            resolver,
            pool,
            save_dialog,
            ledger,
            keychain,
            team,
            tap,
            agent_home,
            pool_alerts,
            deadlines,
        } = wiring;
        let vault = Arc::new(Vault::new(keychain));
        match vault.migrate(&db) {
            Ok(migrated) if migrated != Migrated::default() => tracing::info!(?migrated, "keychain migration"),
            Ok(_) => {}
            Err(error) => tracing::error!(%error, "moving keys into the keychain failed; they stay in the database"),
        }
        let loader = Arc::new(StoreLoader { db: db.clone(), vault: vault.clone() });
        let pool = Arc::new(KeyPool::new(pool, loader, resolver.clone()));
        let writes = Arc::new(WritePath {
            db: db.clone(),
            pool: pool.clone(),
            events: events.clone(),
            vault: vault.clone(),
            generation: Default::default(),
        });
        let ledger = if ledger { Ledger::start(db.clone()) } else { Ledger::off() };
        let attachments = Arc::new(Attachments::open(db.clone(), clock.now().as_millis()));
        let alerts = Arc::new(PoolAlerts::new(db.clone(), pool.clone(), events.clone(), pool_alerts));
        let notices = events.clone();
        let members = Members::new(db.clone(), clock.clone());
        let book = MemberBook::new(clock.clone());
        book.attach(members.clone());
        let records = Arc::new(Records {
            writes: writes.clone(),
            ledger: ledger.clone(),
            tap,
            alerts: alerts.clone(),
            book: book.clone(),
        });
        let completions =
            CompletionService::new(pool.clone(), clock.clone(), resolver.clone(), records.clone(), waiter)
                .with_deadlines(deadlines);
        let membership = Membership::new(
            db.clone(),
            clock.clone(),
            vault.clone(),
            completions.clone(),
            pool.clone(),
            resolver,
            records,
            events,
        );
        if let Some(config) = team {
            if let Err(error) = membership.join_for_this_run(config) {
                tracing::error!(%error, "the team cannot be joined; the pool is this process's own");
            }
        }
        let providers = Arc::new(Providers::new(db.clone(), writes.clone(), clock.clone(), completions.clone()));
        let keys = Keys::new(db.clone(), writes.clone(), clock.clone(), completions.clone());
        Services {
            bulk_keys: BulkKeys::new(
                db.clone(),
                writes.clone(),
                clock.clone(),
                completions.clone(),
                keys.clone(),
                save_dialog.clone(),
            ),
            keys,
            providers: providers.clone(),
            settings: Arc::new(Settings::open(db.clone(), pool, completions.clone(), clock.clone(), alerts.clone())),
            usage: Arc::new(Usage::new(db.clone(), ledger, clock.clone(), save_dialog.clone())),
            local_api: LocalApi::new(
                db.clone(),
                clock.clone(),
                completions.clone(),
                writes.clone(),
                vault.clone(),
                providers,
                book.clone(),
            ),
            agents: Agents::new(db.clone(), clock.clone(), agent_home, data_dir),
            members,
            book,
            usage_report: UsageReport::new(db.clone()),
            ledger_outbox: LedgerOutbox::new(db.clone()),
            chats: Chats::new(db, completions.clone(), clock.clone(), save_dialog, vault.clone(), attachments),
            completions,
            clock,
            vault,
            team: membership,
            events: notices,
            alerts,
        }
    }
}

/// How often the background checks for out-of-credit keys due for a probe.
const PROBE_CHECK: Duration = Duration::from_secs(60);
/// How often old usage history is purged.
const RETENTION_CHECK: Duration = Duration::from_secs(3600);

/// What the background work reaches.
struct Background {
    keys: Keys,
    usage: Arc<Usage>,
    settings: Arc<Settings>,
    clock: Arc<dyn Clock>,
}

impl Background {
    async fn probe(&self) {
        if let Err(error) = self.keys.probe_exhausted().await {
            tracing::warn!(%error, "could not probe out-of-credit keys");
        }
        if let Err(error) = self.keys.read_balances().await {
            tracing::warn!(%error, "could not read the keys' balances");
        }
        if let Err(error) = self.keys.read_windows().await {
            tracing::warn!(%error, "could not read the keys' plan windows");
        }
        if let Err(error) = self.keys.check_expiries() {
            tracing::warn!(%error, "could not check when the keys expire");
        }
    }

    fn retain(&self) {
        let purged = self.settings.get().and_then(|settings| {
            let keep = i64::from(settings.usage_retention_days) * DAY_MS;
            self.usage.purge(Some(self.clock.now().as_millis() - keep))
        });
        match purged {
            Ok(0) => {}
            Ok(attempts) => tracing::info!(attempts, "usage history past its retention purged"),
            Err(error) => tracing::warn!(%error, "could not purge old usage history"),
        }
    }
}

/// The background work of an open app, on a thread of its own with a small runtime, until the
/// returned guard is dropped: expired cooldowns are swept on the pool's interval (the pool is
/// correct without it; the sweep keeps the status view tidy and the rebuild off the selection
/// path), out-of-credit keys are probed when due, usage history past its retention is purged.
fn background(work: Background) -> DropGuard {
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let spawned = std::thread::Builder::new().name("keypool-background".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(error) => {
                return tracing::error!(%error, "no background runtime: cooldowns end at the next selection, no probes")
            }
        };
        runtime.block_on(async move {
            let pool = work.keys.pool().clone();
            let mut sweep = tokio::time::interval(pool.sweep_interval());
            let mut probe = tokio::time::interval(PROBE_CHECK);
            let mut retain = tokio::time::interval(RETENTION_CHECK);
            loop {
                tokio::select! {
                    _ = stopped.cancelled() => return,
                    _ = sweep.tick() => pool.sweep(work.clock.now()),
                    _ = probe.tick() => work.probe().await,
                    _ = retain.tick() => work.retain(),
                }
            }
        });
    });
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start the background thread: cooldowns end at the next selection, no probes");
    }
    stop.drop_guard()
}
