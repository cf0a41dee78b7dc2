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
}

impl From<AppSettings> for SettingsDto {
    fn from(s: AppSettings) -> Self {
        SettingsDto { max_wait_seconds: s.max_wait_seconds }
    }
}
