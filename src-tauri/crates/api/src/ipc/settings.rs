//! `settings:*`: the app's preferences.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use crate::service::{AppSettings, SettingsPatch};
use crate::AppContext;

/// The preferences to change; at least one, each within its `LIMITS`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateSettingsArgs {
    /// How long a chat may wait for a key to free up when all are spent or resting, in seconds.
    #[serde(default)]
    #[garde(range(min = LIMITS.max_wait_seconds.min, max = LIMITS.max_wait_seconds.max))]
    pub max_wait_seconds: Option<u32>,
    /// How long a chat keeps its key without a message, in minutes.
    #[serde(default)]
    #[garde(range(min = LIMITS.binding_idle_minutes.min, max = LIMITS.binding_idle_minutes.max))]
    pub binding_idle_minutes: Option<u32>,
    /// How long usage history is kept, in days.
    #[serde(default)]
    #[garde(range(min = LIMITS.usage_retention_days.min, max = LIMITS.usage_retention_days.max))]
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

/// The app's preferences.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Settings")]
pub struct SettingsDto {
    /// How long a chat may wait for a key to free up when all are spent or resting (seconds).
    pub max_wait_seconds: u32,
    /// How long a chat keeps its key without a message (minutes).
    pub binding_idle_minutes: u32,
    /// How long usage history is kept (days).
    pub usage_retention_days: u32,
}

impl From<AppSettings> for SettingsDto {
    fn from(s: AppSettings) -> Self {
        SettingsDto {
            max_wait_seconds: s.max_wait_seconds,
            binding_idle_minutes: s.binding_idle_minutes,
            usage_retention_days: s.usage_retention_days,
        }
    }
}

pub(super) fn get(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.get()?.into())
}

pub(super) fn update(ctx: &AppContext, args: UpdateSettingsArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.update(args.into())?.into())
}
