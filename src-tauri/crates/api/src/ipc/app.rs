//! `app:getStatus`: the app's version, directories, database and keychain.

use serde::Serialize;
use ts_rs::TS;

use super::args::NoArgs;
use super::error::IpcError;
use super::problems::KeychainStatusDto;
use crate::context::{AppContext, DatabaseState};

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

pub(super) fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<AppStatus, IpcError> {
    Ok(AppStatus::from(ctx))
}
