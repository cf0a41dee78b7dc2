//! The one error that crosses IPC.

use serde::Serialize;
use ts_rs::TS;

use super::issues::{Issue, IssueCode, IssueParams};
use super::problems::{KeychainStatusDto, ProbeProblemDto};
use crate::service::{AgentFile, AgentFileProblem, Conflict, KeychainState, ServiceError};

/// The fixed set of error codes the UI may match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Validation,
    NotFound,
    Conflict,
    Storage,
    Provider,
    NoAvailableKey,
    Internal,
}

impl ErrorCode {
    /// The code as the wire spells it; unknown text is `internal`.
    pub fn parse(code: &str) -> ErrorCode {
        serde_json::from_value(serde_json::Value::String(code.to_owned())).unwrap_or(ErrorCode::Internal)
    }
}

/// The one error that crosses IPC: `{ code, message, issues?, details? }`. The UI words it from
/// `code`, `issues` and `details`; `message` is the English fallback (and what logs show).
///
/// Invariant: `message` is written for a person and never contains a stored secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub issues: Option<Vec<Issue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub details: Option<Box<ErrorDetails>>,
}

/// What the UI needs to word an error precisely, beyond its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ErrorDetails {
    /// `llmConfig:updateProvider` would move the base URL to another origin while the provider
    /// holds `keys` (labels or masked previews): send it again with `confirmHostChange: true`.
    HostChange { from: String, to: String, keys: Vec<String> },
    /// The thing an id named does not exist: `what` is `chat`, `provider`, `API key`, ….
    NotFound { what: String },
    /// The request collides with the state: `conflict` says how.
    Conflict { conflict: Conflict },
    /// A key's value is kept in the keychain, which cannot be read now.
    Keychain { keychain: KeychainStatusDto },
    /// The provider did not answer as asked: `status` when it answered, its words in `message`.
    Upstream { status: Option<u16>, problem: ProbeProblemDto, message: String },
    /// A coding agent's configuration file stopped Connect or Disconnect; nothing was changed.
    AgentFile { file: AgentFile },
}

impl IpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        IpcError { code, message: message.into(), issues: None, details: None }
    }

    pub fn validation(issues: Vec<Issue>) -> Self {
        let message = match issues.as_slice() {
            [one] if one.path.is_empty() => one.message.clone(),
            [one] => format!("{}: {}", one.path, one.message),
            _ => format!("{} arguments are invalid", issues.len()),
        };
        IpcError { code: ErrorCode::Validation, message, issues: Some(issues), details: None }
    }

    /// The error with `details` for the UI.
    pub fn with(self, details: ErrorDetails) -> Self {
        IpcError { details: Some(Box::new(details)), ..self }
    }

    /// One problem with one argument (`path` as the UI sent it; empty for the whole).
    pub fn issue(path: impl Into<String>, code: IssueCode, params: IssueParams) -> Self {
        IpcError::validation(vec![Issue::new(path, code, params)])
    }

    /// An update that changes nothing: it needs at least one of `fields`.
    pub fn nothing_to_change(fields: &[&str]) -> Self {
        let fields = Some(fields.iter().map(|f| (*f).to_owned()).collect());
        IpcError::issue("", IssueCode::NothingToChange, IssueParams { fields, ..Default::default() })
    }

    pub fn internal(message: impl Into<String>) -> Self {
        IpcError::new(ErrorCode::Internal, message)
    }
}

impl From<ServiceError> for IpcError {
    fn from(error: ServiceError) -> Self {
        use keypool::PoolError;
        match error {
            ServiceError::Unavailable(_) | ServiceError::NotSaved { .. } => {
                IpcError::new(ErrorCode::Storage, error.to_string())
            }
            ServiceError::NotFound { what, .. } => IpcError::new(ErrorCode::NotFound, error.to_string())
                .with(ErrorDetails::NotFound { what: what.to_owned() }),
            ServiceError::Conflict(conflict) => {
                IpcError::new(ErrorCode::Conflict, error.to_string()).with(ErrorDetails::Conflict { conflict })
            }
            ServiceError::Keychain(ref failure) => {
                let keychain = KeychainStatusDto::from(&KeychainState::Unavailable(failure.clone().into()));
                IpcError::new(ErrorCode::Storage, error.to_string()).with(ErrorDetails::Keychain { keychain })
            }
            ServiceError::Upstream(ref failure) => {
                IpcError::new(ErrorCode::Provider, error.to_string()).with(ErrorDetails::Upstream {
                    status: failure.status,
                    problem: failure.problem.clone().into(),
                    message: failure.message.clone(),
                })
            }
            ServiceError::Invalid(errors) => IpcError::validation(errors.into_iter().map(Issue::from).collect()),
            ServiceError::HostChange { ref from, ref to, ref keys } => {
                let details = ErrorDetails::HostChange { from: from.clone(), to: to.clone(), keys: keys.clone() };
                let issue = Issue {
                    message: error.to_string(),
                    ..Issue::new("baseUrl", IssueCode::HostChange, IssueParams::default())
                };
                IpcError { details: Some(Box::new(details)), ..IpcError::validation(vec![issue]) }
            }
            ServiceError::AgentFile { ref path, ref problem } => {
                let code = match problem {
                    AgentFileProblem::Malformed { .. } | AgentFileProblem::Changed => ErrorCode::Conflict,
                    AgentFileProblem::Unreadable { .. } | AgentFileProblem::Unwritable { .. } => ErrorCode::Storage,
                };
                IpcError::new(code, error.to_string())
                    .with(ErrorDetails::AgentFile { file: AgentFile::new(path, problem) })
            }
            ServiceError::Files(ref e) => {
                tracing::error!(error = %e, "attachment file failure");
                IpcError::new(ErrorCode::Storage, error.to_string())
            }
            ServiceError::Store(e) => {
                tracing::error!(error = %e, "storage failure");
                IpcError::new(ErrorCode::Storage, format!("the database failed: {e}"))
            }
            ServiceError::Pool(e @ PoolError::NoAvailableKey { .. }) => {
                IpcError::new(ErrorCode::NoAvailableKey, e.to_string())
            }
            ServiceError::Pool(e @ PoolError::UnresolvedEnv { .. }) => {
                IpcError::new(ErrorCode::Provider, e.to_string())
            }
            ServiceError::Pool(e @ PoolError::Load { .. }) => {
                tracing::error!(error = ?e, "the pool could not load keys");
                IpcError::new(ErrorCode::Storage, e.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_from_their_wire_names() {
        assert_eq!(ErrorCode::parse("no_available_key"), ErrorCode::NoAvailableKey, "a known code");
        assert_eq!(ErrorCode::parse("nonsense"), ErrorCode::Internal, "an unknown code is internal");
    }
}
