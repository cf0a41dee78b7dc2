//! Events the backend sends to the UI.

use keypool_api::llm_config::EventSink;
use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};

/// Emitted after every write to a provider's keys; the UI reloads that provider's list.
pub const LLM_CONFIG_CHANGED: &str = "llmConfig:changed";

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProviderChanged<'a> {
    provider_id: &'a str,
}

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
        if let Err(error) = self.app.emit(LLM_CONFIG_CHANGED, ProviderChanged { provider_id }) {
            tracing::warn!(%error, "could not tell the UI that the keys changed");
        }
    }
}
