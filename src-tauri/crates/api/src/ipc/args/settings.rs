//! The arguments of the `settings:*` commands.

use garde::Validate;
use serde::Deserialize;
use ts_rs::TS;

use super::CommandArgs;
use crate::ipc::error::IpcError;
use crate::service::{SettingsPatch, MAX_WAIT_LIMIT_SECONDS};

/// The preferences to change; at least one.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateSettingsArgs {
    /// How long a chat may wait for a key to free up when all are spent or resting: 0–120 s.
    #[serde(default)]
    #[garde(range(min = 0, max = MAX_WAIT_LIMIT_SECONDS))]
    pub max_wait_seconds: Option<u32>,
    /// How long a chat keeps its key without a message: 1–1 440 minutes.
    #[serde(default)]
    #[garde(range(min = 1, max = 1_440))]
    pub binding_idle_minutes: Option<u32>,
    /// How long usage history is kept: 1–3 650 days.
    #[serde(default)]
    #[garde(range(min = 1, max = 3_650))]
    pub usage_retention_days: Option<u32>,
}

impl CommandArgs for UpdateSettingsArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.max_wait_seconds.is_none() && self.binding_idle_minutes.is_none() && self.usage_retention_days.is_none()
        {
            return Err(IpcError::nothing_to_change(&["maxWaitSeconds", "bindingIdleMinutes", "usageRetentionDays"]));
        }
        Ok(())
    }
}

impl From<UpdateSettingsArgs> for SettingsPatch {
    fn from(a: UpdateSettingsArgs) -> Self {
        SettingsPatch {
            max_wait_seconds: a.max_wait_seconds,
            binding_idle_minutes: a.binding_idle_minutes,
            usage_retention_days: a.usage_retention_days,
        }
    }
}
