//! The events the backend emits to the UI, by name, with their payloads.

use serde::Serialize;
use ts_rs::TS;

use super::typescript::TypeSet;

/// Emitted after every write to a provider's keys; the UI reloads that provider's list.
pub const LLM_CONFIG_CHANGED: &str = "llmConfig:changed";

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
}

/// The `Events` map of the TypeScript bindings: each event name to its payload.
pub(super) fn typescript(types: &TypeSet) -> String {
    format!(
        "export type Events = {{\n  {LLM_CONFIG_CHANGED:?}: {};\n  {TEAM_CHANGED:?}: null;\n}};\n",
        types.name::<ProviderChanged>()
    )
}
