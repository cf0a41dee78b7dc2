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
}

impl CommandArgs for UpdateSettingsArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.max_wait_seconds.is_none() {
            return Err(IpcError::invalid("nothing to change: give maxWaitSeconds"));
        }
        Ok(())
    }
}

impl From<UpdateSettingsArgs> for SettingsPatch {
    fn from(a: UpdateSettingsArgs) -> Self {
        SettingsPatch { max_wait_seconds: a.max_wait_seconds }
    }
}
