//! A Tauri window showing a blank page, and nothing else: no plugins, no backend, no IPC.
//!
//! `npm run bench:app` builds it (release, as `tauri build` builds the app) and measures it with
//! the same script as the app, in the same run, under Xvfb: the app's memory over this floor is
//! what Keypool itself costs, whatever WebKitGTK costs on the machine. Never bundled or shipped.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .expect("the blank window must open (a display is needed)");
}
