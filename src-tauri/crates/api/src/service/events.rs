//! What the services tell the UI without being asked.

/// Tells the UI that a provider's keys changed (the shell emits `llmConfig:changed`).
pub trait EventSink: Send + Sync {
    /// A write to `provider_id` or its keys committed, and got `generation` (see
    /// [`super::Written`]).
    fn llm_config_changed(&self, provider_id: &str, generation: u64);

    /// The team's status changed (joined, left, connected, disconnected, members); the shell
    /// emits `team:changed`. Nothing to tell by default.
    fn team_changed(&self) {}

    /// How a bulk import of keys stands (the shell emits `llmConfig:keyImportProgress`): at most
    /// every 100 ms while it runs, after every batch saved, and once at its end.
    fn key_import_progress(&self, _progress: &super::ImportProgress) {}

    /// The pool lost keys: the shell shows a desktop notification (`pool:alert`), once for each
    /// loss (see [`super::PoolAlert`]). Nothing to tell by default.
    fn pool_alert(&self, _alert: &super::PoolAlert) {}

    /// Shows a desktop notification (the UI worded it from a `pool:alert`). Nothing to show by
    /// default.
    fn notify(&self, _title: &str, _body: &str) {}

    /// Whether a desktop notification can be shown now (on Linux: a notification service
    /// answers on the session bus). It may block for a moment: call it off the UI's thread. By
    /// default nothing shows them.
    fn notifications(&self) -> Notifications {
        Notifications::Unavailable { detail: None }
    }
}

/// Whether desktop notifications can be shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Notifications {
    Available,
    /// Nothing shows them: no notification service (Linux), or no desktop at all. `detail`: the
    /// system's own words, for a bug report.
    Unavailable {
        #[ts(optional)]
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

/// For tools that have no UI to tell (benches, a CLI).
pub struct NoEvents;

impl EventSink for NoEvents {
    fn llm_config_changed(&self, _: &str, _: u64) {}
}
