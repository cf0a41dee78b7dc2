//! The services: what Keypool does with keys, providers and chats, callable alike from the IPC
//! layer, tests, benches and a CLI. They speak the domain (the store's rows, the pool's
//! statuses, the completion service's events), never the transport: nothing here knows about
//! IPC, JSON shapes or Tauri.

mod agents;
mod alerts;
mod attachments;
mod bulk;
mod chats;
mod events;
mod keys;
mod ledger;
mod local_api;
mod members;
mod preferences;
mod problem;
mod providers;
mod records;
mod reply_error;
mod report;
mod settings;
mod team;
mod usage;
mod vault;
mod write_path;

use keypool::PoolError;
use keypool_store::StoreError;

pub use agents::{
    cache_drop, Agent, AgentFileProblem, AgentHome, AgentStatus, Agents, AgentsOverview, CacheDrop, Connection, Source,
    SourceUse, SourcesReport, TokenState, AGENTS,
};
pub use alerts::PoolAlert;
pub(crate) use alerts::PoolAlerts;
pub use attachments::{
    AttachmentInfo, AttachmentKind, Attachments, Variant, MAX_ATTACHMENTS, MAX_IMAGE_BYTES, MAX_TEXT_BYTES,
    SEND_LONG_SIDE,
};
pub use bulk::{
    BulkKeys, BulkPatch, ImportOptions, ImportPreview, ImportProgress, ImportState, KeyReading, BATCH,
    CHECK_CONCURRENCY,
};
pub use chats::{
    AttachmentRef, Chat, ChatPatch, ChatProgress, Chats, Message, MessageStatus, NewChat, Role, SearchResult, Snippet,
    Turn, NEW_CHAT_TITLE,
};
pub use events::{EventSink, NoEvents};
pub(crate) use keys::StoreLoader;
pub use keys::{ApiKey, KeyPatch, Keys, NewKey, PoolStatus};
pub use ledger::Ledger;
pub use local_api::{
    LocalApi, LocalApiStatus, ModelRoute, NamedToken, Resolution, RouteState, RouteTest, RouteTestOutcome, RouteView,
    Via, DEFAULT_PORT, ROUTE_TEST_SOURCE,
};
pub use members::{
    valid_name as valid_member_name, BookSnapshot, BookWatch, Budget, BudgetPeriod, BudgetSpent, BudgetView, Member,
    MemberBook, MemberLimits, MemberSource, Members, Spent,
};
pub use preferences::{Language, Page, Preferences, Theme, UiPreferences, PREFERENCES_FILE_NAME};
pub use problem::{FieldError, Rule};
pub use providers::{is_local, is_local_url, ModelList, NewProvider, Provider, ProviderPatch, Providers};
pub(crate) use records::Records;
pub use reply_error::{BlockedKeyInfo, BlockedState, BreakageKind, LastAnswer, ReplyError};
pub use report::{By, UsageLine, UsageReport};
pub use settings::{AppSettings, Proxy, Settings, SettingsPatch, DEFAULT_RETENTION_DAYS, MAX_WAIT_LIMIT_SECONDS};
pub use team::{Membership, SecretPlace, TeamDown, TeamJoin, TeamPhase, TeamView, CONNECTING_GRACE};
pub use usage::{
    Bucket, KeySpend, NewPrice, NoSaveDialog, Point, Price, SaveDialog, Spend, Summary, Totals, Usage, DAY_MS,
};
pub use vault::{KeychainProblem, KeychainState, Migrated, Vault};
pub(crate) use write_path::WritePath;

/// What a request collides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// The key is already in the provider's pool.
    #[error("this API key is already in the provider's pool")]
    DuplicateKey,
    /// The chat is writing a reply; stop it or wait.
    #[error("a reply is already being written in this chat")]
    ReplyInProgress,
}

/// Why a service call failed. Messages never contain a stored secret.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The database could not be opened at startup; the app runs without it.
    #[error("the database is not open: {0}")]
    Unavailable(String),
    /// A file of the app's own (not the database) could not be written.
    #[error("the {what} could not be saved: {reason}")]
    NotSaved { what: &'static str, reason: String },
    #[error("{what} {id:?} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(Conflict),
    /// The request is well-formed but breaks a rule that needs the store to check.
    #[error("the arguments are invalid")]
    Invalid(Vec<FieldError>),
    /// The provider's address would move to another origin while it holds keys: they would be
    /// sent there. Needs the user's explicit confirmation.
    #[error("changing the address from {from} to {to} would send {} key(s) there ({}); confirm the change", keys.len(), keys.join(", "))]
    HostChange { from: String, to: String, keys: Vec<String> },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// A key's value is kept in a keychain that cannot be read now.
    #[error(transparent)]
    Keychain(keypool_keychain::KeychainError),
    /// An attachment's file could not be written or read in the data directory.
    #[error("an attachment file could not be stored or read: {0}")]
    Files(std::io::Error),
    /// The provider did not answer as asked (listing models).
    #[error("the provider answered: {}", .0.message)]
    Upstream(keypool_llm::ModelsFailure),
    /// A coding agent's configuration file stopped Connect or Disconnect (nothing of it was
    /// changed).
    #[error("{}: {}", path.display(), agent_file_problem(problem))]
    AgentFile { path: std::path::PathBuf, problem: AgentFileProblem },
}

fn agent_file_problem(problem: &AgentFileProblem) -> String {
    match problem {
        AgentFileProblem::Malformed { reason } => format!("cannot be merged, left as it is: {reason}"),
        AgentFileProblem::Unreadable { reason } => format!("cannot be read: {reason}"),
        AgentFileProblem::Unwritable { reason } => format!("cannot be written: {reason}"),
        AgentFileProblem::Changed => "changed since Keypool connected the agent".to_owned(),
    }
}

impl ServiceError {
    pub(crate) fn not_found(what: &'static str, id: &str) -> Self {
        ServiceError::NotFound { what, id: id.to_owned() }
    }

    pub(crate) fn invalid(field: &str, rule: Rule) -> Self {
        ServiceError::Invalid(vec![FieldError::new(field, rule)])
    }

    /// A file the user chose could not be written.
    pub(crate) fn cannot_write(path: &std::path::Path, error: impl std::fmt::Display) -> Self {
        ServiceError::invalid("path", Rule::CannotWrite { reason: format!("{}: {error}", path.display()) })
    }
}

impl From<keypool_store::rusqlite::Error> for ServiceError {
    fn from(error: keypool_store::rusqlite::Error) -> Self {
        ServiceError::Store(StoreError::from(error))
    }
}

pub type Result<T, E = ServiceError> = std::result::Result<T, E>;
