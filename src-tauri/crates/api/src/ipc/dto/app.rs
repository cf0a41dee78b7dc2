//! `app:getStatus`.

use serde::Serialize;
use ts_rs::TS;

use crate::context::{AppContext, DatabaseState};

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    pub version: String,
    pub data_dir: String,
    pub log_dir: String,
    pub database: DatabaseStatus,
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
            version: ctx.version().to_owned(),
            data_dir: ctx.dirs().data_dir.display().to_string(),
            log_dir: ctx.dirs().log_dir.display().to_string(),
            database,
        }
    }
}
