//! The events the backend emits to the UI, by name, with their payloads.

use serde::Serialize;
use ts_rs::TS;

use super::typescript::TypeSet;
use crate::service::{ImportProgress, PoolAlert};

/// Emitted after every change to a provider or its keys; the UI reloads that provider's list,
/// unless it shows the change's answer already (the same generation).
pub const LLM_CONFIG_CHANGED: &str = "llmConfig:changed";

/// Emitted while a bulk import of keys runs (at most every 100 ms, after every batch saved) and
/// once at its end, with an [`ImportProgress`].
pub const KEY_IMPORT_PROGRESS: &str = "llmConfig:keyImportProgress";

/// The payload of `llmConfig:changed`: a provider or its keys changed (a command's write, a bulk
/// import's batch, the pool disabling a key the provider rejected, or a change of the pool's
/// memory alone: a cooldown ended, a key back from out of credit).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderChanged {
    pub provider_id: String,
    /// The change's generation: changes are counted in the order they commit, and a key command
    /// answers the generation of its own (`Written`), so a view knows the echo of its write.
    pub generation: u64,
}

/// Emitted when the team's status changes (connected, disconnected, left, members); the UI
/// reads `team:getStatus` again. No payload.
pub const TEAM_CHANGED: &str = "team:changed";

/// Emitted once when the pool loses keys (a key refused or out of credit, a provider left
/// without a usable key), unless Settings → General switched it off; the UI shows a desktop
/// notification, worded from a [`PoolAlert`] (its payload).
pub const POOL_ALERT: &str = "pool:alert";

pub(super) fn declare_types(types: &mut TypeSet) {
    types.add::<ProviderChanged>();
    types.add::<ImportProgress>();
    types.add::<PoolAlert>();
}

/// The `Events` map of the TypeScript bindings: each event name to its payload.
pub(super) fn typescript(types: &TypeSet) -> String {
    format!(
        "export type Events = {{\n  {LLM_CONFIG_CHANGED:?}: {};\n  {KEY_IMPORT_PROGRESS:?}: {};\n  {TEAM_CHANGED:?}: null;\n  {POOL_ALERT:?}: {};\n}};\n",
        types.name::<ProviderChanged>(),
        types.name::<ImportProgress>(),
        types.name::<PoolAlert>()
    )
}
