//! The Tauri shell of Keypool: it resolves directories, starts logging, opens the store once,
//! and forwards every `domain:action` invoke to [`keypool_api`]. Nothing here decides anything
//! about keys or chats.

mod dialog;
mod events;
#[cfg(target_os = "linux")]
mod fonts;
mod instance;
mod ipc;
#[cfg(target_os = "linux")]
mod javascript_heap;
mod logging;
mod paths;
#[cfg(target_os = "linux")]
mod rendering;
mod window_state;

use std::sync::Arc;

use keypool_api::ipc::FirstScreen;
use keypool_api::AppContext;
use tauri::{Builder, Manager, Runtime, WebviewWindowBuilder};

/// Starts the desktop app.
pub fn run() {
    // WebKitGTK's processes read both from the environment they inherit.
    #[cfg(target_os = "linux")]
    {
        rendering::choose();
        javascript_heap::choose();
    }
    // The single-instance guard comes first, so a second launch exits before anything opens the
    // database; it is the real process's alone (a test's mock app must never exit the test binary).
    build(Builder::default().plugin(instance::plugin()))
        .build(tauri::generate_context!())
        .expect("the Tauri runtime failed to start")
        .run(|app, event| {
            // The process ends without dropping the app's state: usage still waiting for the
            // ledger's writer is written now, or a quit would lose the last moments' attempts.
            if let tauri::RunEvent::Exit = event {
                if let Some(Ok(usage)) = app.try_state::<AppContext>().map(|context| context.inner().usage()) {
                    usage.flush();
                }
            }
        });
}

/// Configures the app on any runtime, so tests can pass `tauri::test::mock_builder()`.
pub fn build<R: Runtime>(builder: Builder<R>) -> Builder<R> {
    let builder = builder.plugin(window_state::plugin());
    // The opener opens links from replies in the system browser, only when the page asks (a
    // click), and the capability scopes it to http(s) URLs; no script of its own in the page.
    let opener = tauri_plugin_opener::Builder::new().open_js_links_on_click(false).build();
    // Notifications are shown from Rust (events.rs); the capability grants the page none of the
    // plugin's commands.
    let builder = builder.plugin(tauri_plugin_notification::init());
    builder.plugin(tauri_plugin_dialog::init()).plugin(opener).invoke_handler(ipc::handler()).setup(|app| {
        let dirs = paths::resolve(app.handle())?;
        logging::init(&dirs.log_dir);
        tracing::info!(version = env!("CARGO_PKG_VERSION"), data_dir = %dirs.data_dir.display(), "Keypool starting");
        let events = Arc::new(events::TauriEvents::new(app.handle().clone()));
        let save_dialog = Arc::new(dialog::NativeSaveDialog::new(app.handle().clone()));
        app.manage(AppContext::open(env!("CARGO_PKG_VERSION"), dirs, events, save_dialog));
        // The local API, if the user turned it on, listens from the start (on the app's runtime).
        let handle = app.handle().clone();
        tauri::async_runtime::spawn(async move {
            let context = handle.state::<AppContext>();
            if let Ok(local_api) = context.local_api() {
                if let Err(error) = local_api.start_if_enabled().await {
                    tracing::error!(%error, "the local API could not start");
                }
            }
            // The team, if it was on when the app last ran, is joined again.
            if let Ok(team) = context.team() {
                if let Err(error) = team.start_if_enabled().await {
                    tracing::error!(%error, "the team could not be joined at start");
                }
            }
        });

        // The window is created only now, after the state exists, so no invoke can arrive first.
        // It hands the page what its first screen waits for, so the first render needs no IPC.
        let first_screen =
            FirstScreen { fonts: chosen_fonts(), ..FirstScreen::of(&app.state::<AppContext>()) }.script();
        let dev_url = app.config().build.dev_url.clone();
        for config in app.config().app.windows.iter().filter(|w| !w.create) {
            let dev_url = dev_url.clone();
            WebviewWindowBuilder::from_config(app.handle(), config)?
                .initialization_script(&first_screen)
                .on_navigation(move |url| stays_in_app(url, dev_url.as_ref()))
                .build()?;
        }
        Ok(())
    })
}

/// The Latin font families the page draws in (see [`FirstScreen`]): on Linux, the app chooses.
#[cfg(target_os = "linux")]
fn chosen_fonts() -> Option<Vec<String>> {
    Some(fonts::installed_latin_families())
}

/// Elsewhere the stylesheet's own list stands: Windows and macOS have their UI fonts.
#[cfg(not(target_os = "linux"))]
fn chosen_fonts() -> Option<Vec<String>> {
    None
}

/// The window shows the app and nothing else: a link or a script can never navigate it away
/// (links in replies open in the system browser, through the opener, on click).
fn stays_in_app(url: &tauri::Url, dev_url: Option<&tauri::Url>) -> bool {
    let app_origin = url.scheme() == "tauri" || url.host_str() == Some("tauri.localhost");
    let dev_server = dev_url.is_some_and(|dev| cfg!(debug_assertions) && dev.origin() == url.origin());
    let allowed = app_origin || dev_server;
    if !allowed {
        tracing::warn!(url = %url.origin().ascii_serialization(), "the window was asked to leave the app; refused");
    }
    allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_never_leaves_the_app() {
        let url = |text: &str| tauri::Url::parse(text).unwrap();
        let dev = url("http://localhost:1420");
        assert!(stays_in_app(&url("tauri://localhost/index.html"), None), "the app itself");
        assert!(stays_in_app(&url("http://tauri.localhost/"), None), "the app on Windows");
        assert!(!stays_in_app(&url("https://example.com/"), Some(&dev)), "not the web");
        assert!(!stays_in_app(&url("file:///etc/passwd"), Some(&dev)), "not a file");
        assert!(!stays_in_app(&url("http://localhost:9999/"), Some(&dev)), "not another local server");
        assert_eq!(
            stays_in_app(&url("http://localhost:1420/"), Some(&dev)),
            cfg!(debug_assertions),
            "the dev server in dev builds only"
        );
    }
}
