//! `app:*` commands, and the context every command runs in.

use std::path::PathBuf;
use std::sync::Arc;

use keypool::{Clock, EnvResolver, PoolConfig, SecretResolver};
use keypool_store::{Database, OpenError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::IpcError;
use crate::chat::Chats;
use crate::llm_config::{EventSink, LlmConfig};
use crate::{run, SystemClock};

pub(crate) const COMMANDS: &[&str] = &["app:getStatus"];

pub(crate) fn dispatch(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
    match name {
        "app:getStatus" => Some(run(payload, |NoArgs {}| Ok(ctx.status()))),
        _ => None,
    }
}

/// Arguments of a command that takes none; any field is rejected.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

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

/// What every command can reach: the services (or why the database could not be opened) and
/// the app's paths.
pub struct AppContext {
    version: String,
    data_dir: PathBuf,
    log_dir: PathBuf,
    services: Result<Services, DatabaseFailure>,
}

struct Services {
    llm_config: LlmConfig,
    chats: Chats,
}

/// Why the store is unavailable, kept as the text shown to the user.
#[derive(Debug, Clone)]
struct DatabaseFailure {
    kind: &'static str,
    message: String,
    path: PathBuf,
}

impl AppContext {
    pub fn new(
        version: impl Into<String>,
        data_dir: PathBuf,
        log_dir: PathBuf,
        database: Result<Database, OpenError>,
        wiring: Wiring,
    ) -> Self {
        let db_path = data_dir.join(keypool_store::DATABASE_FILE_NAME);
        let services = match database {
            Ok(db) => {
                let db = Arc::new(db);
                let llm_config =
                    LlmConfig::new(db.clone(), wiring.pool, wiring.resolver.clone(), wiring.events, wiring.clock.clone());
                let chats = Chats::new(db, llm_config.pool().clone(), wiring.clock, wiring.resolver);
                Ok(Services { llm_config, chats })
            }
            Err(e) => Err(DatabaseFailure { kind: e.kind(), message: e.to_string(), path: db_path }),
        };
        AppContext { version: version.into(), data_dir, log_dir, services }
    }

    /// The key store and pool, or a `storage` error saying why the database is not open.
    pub fn llm_config(&self) -> Result<&LlmConfig, IpcError> {
        self.services.as_ref().map(|s| &s.llm_config).map_err(|f| {
            IpcError::storage(format!("the database is not open: {}", f.message))
        })
    }

    /// Chats and completions, or a `storage` error saying why the database is not open.
    pub fn chats(&self) -> Result<&Chats, IpcError> {
        self.services.as_ref().map(|s| &s.chats).map_err(|f| {
            IpcError::storage(format!("the database is not open: {}", f.message))
        })
    }

    pub fn status(&self) -> AppStatus {
        let database = match &self.services {
            Ok(_) => DatabaseStatus::Ready {
                path: self.data_dir.join(keypool_store::DATABASE_FILE_NAME).display().to_string(),
            },
            Err(f) => DatabaseStatus::Failed {
                kind: f.kind.to_owned(),
                message: f.message.clone(),
                path: f.path.display().to_string(),
            },
        };
        AppStatus {
            version: self.version.clone(),
            data_dir: self.data_dir.display().to_string(),
            log_dir: self.log_dir.display().to_string(),
            database,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    pub version: String,
    pub data_dir: String,
    pub log_dir: String,
    pub database: DatabaseStatus,
}

#[derive(Debug, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum DatabaseStatus {
    Ready { path: String },
    Failed { kind: String, message: String, path: String },
}
