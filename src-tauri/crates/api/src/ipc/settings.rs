//! `settings:*`: the app's preferences.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use crate::service::{AppSettings, Proxy, SettingsPatch};
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
    /// Which proxy provider requests go through.
    #[serde(default)]
    #[garde(dive)]
    pub proxy: Option<ProxyDto>,
    /// A desktop notification when a key dies or a provider has no usable key left.
    #[serde(default)]
    #[garde(skip)]
    pub notify_keys_lost: Option<bool>,
}

impl CommandArgs for UpdateSettingsArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.max_wait_seconds.is_none()
            && self.binding_idle_minutes.is_none()
            && self.usage_retention_days.is_none()
            && self.proxy.is_none()
            && self.notify_keys_lost.is_none()
        {
            return Err(IpcError::nothing_to_change(&[
                "maxWaitSeconds",
                "bindingIdleMinutes",
                "usageRetentionDays",
                "proxy",
                "notifyKeysLost",
            ]));
        }
        self.proxy.as_ref().map(ProxyDto::proxy).transpose().map(drop)
    }
}

/// Which proxy provider requests over https go through (never for this machine): `none` (the
/// default), `system` (its `HTTPS_PROXY`/`ALL_PROXY`), or `url` with the address in `url`. An
/// argument (checked here) that the settings answer in the same form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(rename = "ProxySetting", optional_fields)]
pub struct ProxyDto {
    #[garde(skip)]
    pub mode: ProxyMode,
    /// The proxy's address, with `mode: "url"` (and only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[garde(inner(length(chars, min = 1, max = LIMITS.proxy_url.max_chars), custom(super::rules::not_blank)))]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    None,
    System,
    Url,
}

impl ProxyDto {
    /// The proxy it names; `Err` when the address is missing for `url` or given for another mode.
    fn proxy(&self) -> Result<Proxy, IpcError> {
        let misplaced =
            || IpcError::issue("proxy.url", super::issues::IssueCode::Required, super::issues::IssueParams::default());
        match (self.mode, &self.url) {
            (ProxyMode::None, None) => Ok(Proxy::None),
            (ProxyMode::System, None) => Ok(Proxy::System),
            (ProxyMode::Url, Some(url)) => Ok(Proxy::Url(url.trim().to_owned())),
            (ProxyMode::Url, None) => Err(misplaced()),
            (_, Some(_)) => Err(IpcError::issue(
                "proxy.url",
                super::issues::IssueCode::UnknownField,
                super::issues::IssueParams::default(),
            )),
        }
    }
}

impl From<Proxy> for ProxyDto {
    fn from(proxy: Proxy) -> Self {
        match proxy {
            Proxy::None => ProxyDto { mode: ProxyMode::None, url: None },
            Proxy::System => ProxyDto { mode: ProxyMode::System, url: None },
            Proxy::Url(url) => ProxyDto { mode: ProxyMode::Url, url: Some(url) },
        }
    }
}

impl From<UpdateSettingsArgs> for SettingsPatch {
    fn from(a: UpdateSettingsArgs) -> Self {
        SettingsPatch {
            max_wait_seconds: a.max_wait_seconds,
            binding_idle_minutes: a.binding_idle_minutes,
            usage_retention_days: a.usage_retention_days,
            // Checked as a whole before: an address that is missing or misplaced never gets here.
            proxy: a.proxy.as_ref().and_then(|p| p.proxy().ok()),
            notify_keys_lost: a.notify_keys_lost,
        }
    }
}

/// The app's preferences. A view of its own: the proxy in the form `settings:update` takes it.
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
    /// Which proxy provider requests go through.
    pub proxy: ProxyDto,
    /// A desktop notification when a key dies or a provider has no usable key left (on unless
    /// switched off).
    pub notify_keys_lost: bool,
}

impl From<AppSettings> for SettingsDto {
    fn from(s: AppSettings) -> Self {
        SettingsDto {
            max_wait_seconds: s.max_wait_seconds,
            binding_idle_minutes: s.binding_idle_minutes,
            usage_retention_days: s.usage_retention_days,
            proxy: s.proxy.into(),
            notify_keys_lost: s.notify_keys_lost,
        }
    }
}

pub(super) fn get(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.get()?.into())
}

pub(super) fn update(ctx: &AppContext, args: UpdateSettingsArgs) -> Result<SettingsDto, IpcError> {
    Ok(ctx.settings()?.update(args.into())?.into())
}
