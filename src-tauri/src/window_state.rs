//! The window comes back where the user left it: size, position and maximized state, saved when
//! the app exits (tauri-plugin-window-state). The page the UI was on is the UI's to remember
//! (`keypool.route` in the web view's localStorage, like the language and theme).
//!
//! The state lives in the app config directory (Linux: `~/.config/dev.keypool.desktop/`), or in
//! `KEYPOOL_DATA_DIR` when that is set, so a test's window never inherits another run's geometry.

use std::path::PathBuf;

use tauri::plugin::TauriPlugin;
use tauri::Runtime;
use tauri_plugin_window_state::StateFlags;

use crate::paths::DATA_DIR_ENV;

pub const FILE_NAME: &str = "window-state.json";

pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    // Not VISIBLE: the window always opens shown; nothing else is remembered about it.
    let flags = StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED;
    tauri_plugin_window_state::Builder::new().with_state_flags(flags).with_filename(file()).build()
}

/// Relative names are joined to the app config directory by the plugin; an absolute one
/// replaces it.
fn file() -> String {
    match std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(FILE_NAME).to_string_lossy().into_owned(),
        None => FILE_NAME.to_owned(),
    }
}
