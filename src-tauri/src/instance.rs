//! One Keypool per database. Two processes over the same file would hold two key pools that
//! disagree about cooldowns and bindings, so a second launch hands over to the running app
//! (which brings its window to the front) and exits before anything opens the database.
//!
//! On Linux the plugin claims a D-Bus name on the session bus (without a session bus each launch
//! runs on its own, as the plugin decides). The name is the bundle identifier, or, when
//! `KEYPOOL_DATA_DIR` chooses another database, the identifier plus a digest of that directory:
//! apps over different databases do not exclude each other. macOS and Windows use the identifier.

use std::path::Path;

use tauri::plugin::TauriPlugin;
use tauri::{AppHandle, Manager, Runtime};

use crate::paths::DATA_DIR_ENV;

/// The bundle identifier of `tauri.conf.json` (a unit test keeps them equal).
const IDENTIFIER: &str = "dev.keypool.desktop";

/// Registered before every other plugin, so a second launch exits before the rest of the setup.
pub fn plugin<R: Runtime>() -> TauriPlugin<R> {
    let builder = tauri_plugin_single_instance::Builder::new().callback(|app, _args, _cwd| {
        tracing::info!("Keypool was launched again; showing this window instead");
        focus_main_window(app);
    });
    match std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => builder.dbus_id(bus_id_for_data_dir(Path::new(&dir))),
        None => builder,
    }
    .build()
}

fn focus_main_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else { return };
    for (what, result) in [("unminimize", window.unminimize()), ("show", window.show()), ("focus", window.set_focus())]
    {
        if let Err(error) = result {
            tracing::warn!(%error, "could not {what} the window");
        }
    }
}

/// `<identifier>.data_<digest>`: a valid D-Bus name (each element starts with a letter) that is
/// the same for every spelling of the same directory as far as `std::path::absolute` goes.
fn bus_id_for_data_dir(dir: &Path) -> String {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    format!("{IDENTIFIER}.data_{:016x}", fnv1a(dir.as_os_str().as_encoded_bytes()))
}

/// FNV-1a, 64 bits: stable across builds and Rust versions, unlike `DefaultHasher`, so two
/// builds of Keypool agree on the name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_is_the_bundle_identifier() {
        let config: serde_json::Value =
            serde_json::from_str(include_str!("../tauri.conf.json")).expect("tauri.conf.json is JSON");
        assert_eq!(config["identifier"], IDENTIFIER, "the D-Bus name must follow the bundle identifier");
    }

    #[test]
    fn data_dirs_get_distinct_valid_bus_names() {
        let a = bus_id_for_data_dir(Path::new("/tmp/keypool-a"));
        let b = bus_id_for_data_dir(Path::new("/tmp/keypool-b"));
        assert_ne!(a, b, "apps over different databases must not exclude each other");
        assert_eq!(a, bus_id_for_data_dir(Path::new("/tmp/keypool-a")), "the same directory gives the same name");
        for element in a.split('.') {
            assert!(
                element.starts_with(|c: char| c.is_ascii_alphabetic())
                    && element.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "D-Bus name elements start with a letter and hold only [A-Za-z0-9_-]: {a}"
            );
        }
        assert!(a.len() + ".SingleInstance".len() <= 255, "D-Bus names are at most 255 bytes");
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325, "the offset basis");
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c, "FNV-1a 64 of 'a'");
    }
}
