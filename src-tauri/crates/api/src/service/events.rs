//! What the services tell the UI without being asked.

/// Tells the UI that a provider's keys changed (the shell emits `llmConfig:changed`).
pub trait EventSink: Send + Sync {
    fn llm_config_changed(&self, provider_id: &str);

    /// The team's status changed (joined, left, connected, disconnected, members); the shell
    /// emits `team:changed`. Nothing to tell by default.
    fn team_changed(&self) {}
}

/// For tools that have no UI to tell (benches, a CLI).
pub struct NoEvents;

impl EventSink for NoEvents {
    fn llm_config_changed(&self, _: &str) {}
}
