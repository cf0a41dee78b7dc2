//! The events the backend emits to the UI, by name, with their payloads.

use serde::Serialize;
use ts_rs::TS;

use super::bulk::KeyImportProgress;
use super::typescript::TypeSet;

/// Emitted after every write to a provider's keys; the UI reloads that provider's list.
pub const LLM_CONFIG_CHANGED: &str = "llmConfig:changed";

/// Emitted while a bulk import of keys runs (at most every 100 ms, after every batch saved) and
/// once at its end, with a [`KeyImportProgress`].
pub const KEY_IMPORT_PROGRESS: &str = "llmConfig:keyImportProgress";

/// The payload of `llmConfig:changed`, emitted after every write to a provider's keys (by a
/// command, or by the pool disabling a key the provider rejected).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderChanged {
    pub provider_id: String,
}

/// Emitted when the team's status changes (connected, disconnected, left, members); the UI
/// reads `team:getStatus` again. No payload.
pub const TEAM_CHANGED: &str = "team:changed";

pub(super) fn declare_types(types: &mut TypeSet) {
    types.add::<ProviderChanged>();
    types.add::<KeyImportProgress>();
}

/// The `Events` map of the TypeScript bindings: each event name to its payload.
pub(super) fn typescript(types: &TypeSet) -> String {
    format!(
        "export type Events = {{\n  {LLM_CONFIG_CHANGED:?}: {};\n  {KEY_IMPORT_PROGRESS:?}: {};\n  {TEAM_CHANGED:?}: null;\n}};\n",
        types.name::<ProviderChanged>(),
        types.name::<KeyImportProgress>()
    )
}
