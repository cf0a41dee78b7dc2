//! `app:getStatus`.

use serde::Serialize;
use ts_rs::TS;

use crate::context::{AppContext, DatabaseState};
use crate::service::{KeychainProblem, KeychainState};

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    pub version: String,
    pub data_dir: String,
    pub log_dir: String,
    pub database: DatabaseStatus,
    /// Where API keys are kept at rest; `null` while the database is not open.
    pub keychain: Option<KeychainStatusDto>,
}

/// Whether API keys go to the operating system's keychain, and if not, why: the UI shows a
/// notice in the user's language from `reason`; `detail` is the system's own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "KeychainStatus")]
pub enum KeychainStatusDto {
    Available,
    Unavailable {
        reason: KeychainReason,
        #[ts(optional)]
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeychainReason {
    /// Started without one (a tool, not the app).
    NotConfigured,
    /// No D-Bus session or no Secret Service (Linux), or no keychain on this platform.
    Unreachable,
    /// Locked, or access refused.
    Locked,
    /// It answered with an error.
    Failed,
}

impl From<&KeychainState> for KeychainStatusDto {
    fn from(state: &KeychainState) -> Self {
        let (reason, detail) = match state {
            KeychainState::Available => return KeychainStatusDto::Available,
            KeychainState::Unavailable(KeychainProblem::NotConfigured) => (KeychainReason::NotConfigured, None),
            KeychainState::Unavailable(KeychainProblem::Unreachable(d)) => (KeychainReason::Unreachable, Some(d)),
            KeychainState::Unavailable(KeychainProblem::Locked(d)) => (KeychainReason::Locked, Some(d)),
            KeychainState::Unavailable(KeychainProblem::Failed(d)) => (KeychainReason::Failed, Some(d)),
        };
        KeychainStatusDto::Unavailable { reason, detail: detail.cloned() }
    }
}

#[derive(Debug, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum DatabaseStatus {
    Ready {
        path: String,
    },
    /// `kind` is stable (`not_a_database`, `too_new`, …); `message` names the file and what to do.
    Failed {
        kind: String,
        message: String,
        path: String,
    },
}

impl From<&AppContext> for AppStatus {
    fn from(ctx: &AppContext) -> Self {
        let database = match ctx.database() {
            DatabaseState::Ready { path } => DatabaseStatus::Ready { path: path.display().to_string() },
            DatabaseState::Failed { kind, message, path } => {
                DatabaseStatus::Failed { kind: kind.to_owned(), message, path: path.display().to_string() }
            }
        };
        AppStatus {
            keychain: ctx.vault().ok().map(|vault| KeychainStatusDto::from(&vault.state())),
            version: ctx.version().to_owned(),
            data_dir: ctx.dirs().data_dir.display().to_string(),
            log_dir: ctx.dirs().log_dir.display().to_string(),
            database,
        }
    }
}
