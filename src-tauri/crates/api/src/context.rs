//! The context every command runs in: the services over one open store (or why it could not
//! be opened), the app's directories, and the cooldown sweeper.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;

use keypool::{Clock, EnvResolver, KeyPool, PoolConfig, SecretResolver};
use keypool_llm::CompletionService;
use keypool_store::{Database, OpenError};

use crate::service::{Chats, EventSink, Keys, Providers, ServiceError, StoreLoader, WritePath};
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
    pub resolver: Arc<dyn SecretResolver>,
    pub pool: PoolConfig,
}

impl Wiring {
    /// The real clock, `$NAME` keys from the process environment, the default pool settings.
    pub fn production(events: Arc<dyn EventSink>) -> Self {
        Wiring { events, clock: Arc::new(SystemClock), resolver: Arc::new(EnvResolver), pool: PoolConfig::default() }
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
    services: Result<Services, (&'static str, String)>,
    /// Stops the sweeper thread when the context goes.
    _sweeper: Option<mpsc::Sender<()>>,
}

struct Services {
    keys: Keys,
    providers: Providers,
    chats: Chats,
    completions: CompletionService,
}

impl AppContext {
    /// Opens the store in `dirs.data_dir` with the production wiring and starts the cooldown
    /// sweeper. A database that cannot be opened is kept as the reason every command fails with.
    pub fn open(version: impl Into<String>, dirs: Dirs, events: Arc<dyn EventSink>) -> Self {
        let database = Database::open(&dirs.data_dir);
        if let Err(error) = &database {
            tracing::error!(%error, "the database could not be opened; the app starts without it");
        }
        let wiring = Wiring::production(events);
        let clock = wiring.clock.clone();
        let mut context = Self::with_wiring(version, dirs, database, wiring);
        if let Ok(services) = &context.services {
            context._sweeper = Some(sweep_cooldowns(services.keys.pool().clone(), clock));
        }
        context
    }

    /// The context over an already opened (or failed) database, wired as the caller says.
    pub fn with_wiring(
        version: impl Into<String>,
        dirs: Dirs,
        database: Result<Database, OpenError>,
        wiring: Wiring,
    ) -> Self {
        let services =
            database.map(|db| Services::new(Arc::new(db), wiring)).map_err(|error| (error.kind(), error.to_string()));
        AppContext { version: version.into(), dirs, services, _sweeper: None }
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn dirs(&self) -> &Dirs {
        &self.dirs
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

    pub fn providers(&self) -> Result<&Providers, ServiceError> {
        Ok(&self.services()?.providers)
    }

    pub fn chats(&self) -> Result<&Chats, ServiceError> {
        Ok(&self.services()?.chats)
    }

    /// The completion service the chats use, for tools that drive it directly (benches).
    pub fn completions(&self) -> Result<&CompletionService, ServiceError> {
        Ok(&self.services()?.completions)
    }
}

impl Services {
    fn new(db: Arc<Database>, wiring: Wiring) -> Self {
        let Wiring { events, clock, resolver, pool } = wiring;
        let pool = Arc::new(KeyPool::new(pool, Arc::new(StoreLoader { db: db.clone() }), resolver.clone()));
        let writes = Arc::new(WritePath { db: db.clone(), pool: pool.clone(), events });
        let completions = CompletionService::new(pool, clock.clone(), resolver, writes.clone());
        Services {
            keys: Keys::new(db.clone(), writes.clone(), clock.clone(), completions.clone()),
            providers: Providers::new(db.clone(), writes, clock.clone()),
            chats: Chats::new(db, completions.clone(), clock),
            completions,
        }
    }
}

/// Clears expired cooldowns on the pool's interval, on a thread of its own, until the returned
/// sender is dropped. The pool is correct without sweeping (expiry is found at selection); the
/// sweep keeps the status view tidy and moves the rebuild off the selection path.
fn sweep_cooldowns(pool: Arc<KeyPool>, clock: Arc<dyn Clock>) -> mpsc::Sender<()> {
    let (stop, stopped) = mpsc::channel::<()>();
    let interval = pool.sweep_interval();
    let spawned = std::thread::Builder::new().name("keypool-sweeper".into()).spawn(move || loop {
        match stopped.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => pool.sweep(clock.now()),
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    });
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start the cooldown sweeper; expired cooldowns end at the next selection");
    }
    stop
}
