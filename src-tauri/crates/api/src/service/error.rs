//! The services' one error, at the bottom of the layer: every service returns it, none of it
//! knows the transport (the IPC layer words it as `{ code, message, issues? }`).

use keypool::PoolError;
use keypool_store::StoreError;

use super::problem::{FieldError, Rule};

/// Why an agent's file stops Connect or Disconnect: not JSON or TOML it can be merged into (left
/// as it is), unreadable, unwritable, or changed since Connect (Disconnect would undo the change:
/// `force` it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum AgentFileProblem {
    /// Not what the agent reads (not JSON, not TOML, a setting of the wrong type): left as it is.
    Malformed { reason: String },
    /// It could not be read (`reason`: the system's words).
    Unreadable { reason: String },
    /// It could not be written.
    Unwritable { reason: String },
    /// Changed since Connect wrote it: restoring the backup would undo that change.
    Changed,
}

/// An agent's file that stops Connect or Disconnect, as the UI is told of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentFile {
    pub path: String,
    pub problem: AgentFileProblem,
}

impl AgentFile {
    pub fn new(path: &std::path::Path, problem: &AgentFileProblem) -> AgentFile {
        AgentFile { path: path.display().to_string(), problem: problem.clone() }
    }
}

/// What a request collides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
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
