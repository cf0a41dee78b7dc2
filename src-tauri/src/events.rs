//! Events the backend sends to the UI.

use keypool_api::ipc::events::{KEY_IMPORT_PROGRESS, LLM_CONFIG_CHANGED, POOL_ALERT, TEAM_CHANGED};
use keypool_api::ipc::ProviderChanged;
use keypool_api::service::{EventSink, ImportProgress, Notifications, PoolAlert};
use tauri::{AppHandle, Emitter, Runtime};
use tauri_plugin_notification::NotificationExt;

pub struct TauriEvents<R: Runtime> {
    app: AppHandle<R>,
}

impl<R: Runtime> TauriEvents<R> {
    pub fn new(app: AppHandle<R>) -> Self {
        TauriEvents { app }
    }
}

impl<R: Runtime> EventSink for TauriEvents<R> {
    fn llm_config_changed(&self, provider_id: &str, generation: u64) {
        let payload = ProviderChanged { provider_id: provider_id.to_owned(), generation };
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
        if let Err(error) = self.app.emit(KEY_IMPORT_PROGRESS, progress) {
            tracing::warn!(%error, "could not tell the UI how a key import stands");
        }
    }

    fn pool_alert(&self, alert: &PoolAlert) {
        if let Err(error) = self.app.emit(POOL_ALERT, alert) {
            tracing::warn!(%error, "could not tell the UI that keys were lost");
        }
    }

    fn notify(&self, title: &str, body: &str) {
        if let Err(error) = self.app.notification().builder().title(title).body(body).show() {
            tracing::warn!(%error, "the desktop notification could not be shown");
        }
    }

    /// On Linux, a notification service answers on the session bus (the plugin hands a
    /// notification to D-Bus and drops the error when nothing takes it); elsewhere the system
    /// always has one.
    fn notifications(&self) -> Notifications {
        #[cfg(target_os = "linux")]
        {
            match notify_rust::get_server_information() {
                Ok(_) => Notifications::Available,
                Err(error) => Notifications::Unavailable { detail: Some(error.to_string()) },
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Notifications::Available
        }
    }
}
