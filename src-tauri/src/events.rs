//! Events the backend sends to the UI.

use keypool_api::ipc::events::{KEY_IMPORT_PROGRESS, LLM_CONFIG_CHANGED, TEAM_CHANGED};
use keypool_api::ipc::{KeyImportProgress, ProviderChanged};
use keypool_api::service::{EventSink, ImportProgress};
use tauri::{AppHandle, Emitter, Runtime};

pub struct TauriEvents<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> TauriEvents<R> {
    pub fn new(app: AppHandle<R>) -> Self {
        TauriEvents { app }
    }
}

impl<R: Runtime> EventSink for TauriEvents<R> {
    fn llm_config_changed(&self, provider_id: &str) {
        let payload = ProviderChanged { provider_id: provider_id.to_owned() };
        if let Err(error) = self.app.emit(LLM_CONFIG_CHANGED, payload) {
            tracing::warn!(%error, "could not tell the UI that the keys changed");
        }
    }

    fn team_changed(&self) {
        if let Err(error) = self.app.emit(TEAM_CHANGED, ()) {
            tracing::warn!(%error, "could not tell the UI that the team changed");
        }
    }

    fn key_import_progress(&self, progress: &ImportProgress) {
        if let Err(error) = self.app.emit(KEY_IMPORT_PROGRESS, KeyImportProgress::from(progress)) {
            tracing::warn!(%error, "could not tell the UI how a key import stands");
        }
    }
}
