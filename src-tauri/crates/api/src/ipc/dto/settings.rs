//! `settings:*`.

use serde::Serialize;
use ts_rs::TS;

use crate::service::AppSettings;

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
