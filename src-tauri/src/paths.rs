//! Where Keypool keeps its files.

use std::path::PathBuf;

use keypool_api::Dirs;
use tauri::{AppHandle, Manager, Runtime};

/// Overrides the data directory (tests use a temporary one). Logs then go to `<dir>/logs`.
pub const DATA_DIR_ENV: &str = "KEYPOOL_DATA_DIR";

pub fn resolve<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Dirs> {
    match std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => {
            let data_dir = PathBuf::from(dir);
            Ok(Dirs { log_dir: data_dir.join("logs"), data_dir })
        }
        None => Ok(Dirs { data_dir: app.path().app_data_dir()?, log_dir: app.path().app_log_dir()? }),
    }
}
