//! The native save dialog, for exports (usage CSV, chats as Markdown).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use keypool_api::service::SaveDialog;
use tauri::{AppHandle, Runtime};
use tauri_plugin_dialog::DialogExt;

/// Skips the dialog and saves here: end-to-end tests cannot click a native dialog.
pub const SAVE_PATH_ENV: &str = "KEYPOOL_SAVE_PATH";

pub struct NativeSaveDialog<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> NativeSaveDialog<R> {
    pub fn new(app: AppHandle<R>) -> Self {
        NativeSaveDialog { app }
    }
}

impl<R: Runtime> SaveDialog for NativeSaveDialog<R> {
    fn choose<'a>(&'a self, suggested_name: &'a str) -> Pin<Box<dyn Future<Output = Option<PathBuf>> + Send + 'a>> {
        if let Some(path) = std::env::var_os(SAVE_PATH_ENV).filter(|p| !p.is_empty()) {
            return Box::pin(std::future::ready(Some(PathBuf::from(path))));
        }
        let (chosen, answer) = tokio::sync::oneshot::channel();
        // The filter follows what is saved: a usage CSV, a chat's Markdown.
        let extension = std::path::Path::new(suggested_name).extension().and_then(|e| e.to_str()).unwrap_or("csv");
        let kind = match extension {
            "md" => "Markdown",
            "csv" => "CSV",
            other => other,
        };
        self.app.dialog().file().set_file_name(suggested_name).add_filter(kind, &[extension]).save_file(move |path| {
            let _ = chosen.send(path.and_then(|path| path.into_path().ok()));
        });
        Box::pin(async move { answer.await.ok().flatten() })
    }
}
