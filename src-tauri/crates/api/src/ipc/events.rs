//! The events the backend emits to the UI, by name, with their payloads.

use serde::Serialize;
use ts_rs::TS;

use super::bulk::KeyImportProgress;
use super::typescript::TypeSet;
use crate::service::PoolAlert;

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

/// Emitted once when the pool loses keys (a key refused or out of credit, a provider left
/// without a usable key), unless Settings → General switched it off; the UI shows a desktop
/// notification, worded from a [`PoolAlertDto`].
pub const POOL_ALERT: &str = "pool:alert";

/// The payload of `pool:alert`. Names as the user knows them: the provider's, and the key's
/// label or masked preview (never the key).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "PoolAlert")]
pub enum PoolAlertDto {
    /// The provider refused the key (`status`: 401 or 403) and the pool disabled it.
    KeyDisabled { provider_id: String, provider: String, key: String, status: u16 },
    /// The provider said the key is out of credit.
    KeyOutOfCredit { provider_id: String, provider: String, key: String },
    /// Every key of the provider is disabled, out of credit or unreadable.
    ProviderUnusable { provider_id: String, provider: String },
}

impl From<&PoolAlert> for PoolAlertDto {
    fn from(alert: &PoolAlert) -> Self {
        match alert.clone() {
            PoolAlert::KeyDisabled { provider_id, provider, key, status } => {
                PoolAlertDto::KeyDisabled { provider_id, provider, key, status }
            }
            PoolAlert::KeyOutOfCredit { provider_id, provider, key } => {
                PoolAlertDto::KeyOutOfCredit { provider_id, provider, key }
            }
            PoolAlert::ProviderUnusable { provider_id, provider } => {
                PoolAlertDto::ProviderUnusable { provider_id, provider }
            }
        }
    }
}

pub(super) fn declare_types(types: &mut TypeSet) {
    types.add::<ProviderChanged>();
    types.add::<KeyImportProgress>();
    types.add::<PoolAlertDto>();
}

/// The `Events` map of the TypeScript bindings: each event name to its payload.
pub(super) fn typescript(types: &TypeSet) -> String {
    format!(
        "export type Events = {{\n  {LLM_CONFIG_CHANGED:?}: {};\n  {KEY_IMPORT_PROGRESS:?}: {};\n  {TEAM_CHANGED:?}: null;\n  {POOL_ALERT:?}: {};\n}};\n",
        types.name::<ProviderChanged>(),
        types.name::<KeyImportProgress>(),
        types.name::<PoolAlertDto>()
    )
}
