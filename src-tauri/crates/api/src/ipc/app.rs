//! `app:*`: the app's version, directories, database and keychain; the UI's preferences.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::problems::KeychainStatusDto;
use super::rules::not_blank;
use crate::context::{AppContext, DatabaseState};
use crate::service::{Language, Notifications, Page, RecentAlert, Theme, UiPreferences};

#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    pub version: String,
    pub data_dir: String,
    pub log_dir: String,
    pub database: DatabaseStatus,
    /// Where API keys are kept at rest; `null` while the database is not open.
    pub keychain: Option<KeychainStatusDto>,
}

#[derive(Debug, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum DatabaseStatus {
    Ready {
        path: String,
    },
    /// `kind` is stable (`not_a_database`, `too_new`, …); `message` names the file and what to do.
    Failed {
        kind: String,
        message: String,
        path: String,
    },
}

impl From<&AppContext> for AppStatus {
    fn from(ctx: &AppContext) -> Self {
        let database = match ctx.database() {
            DatabaseState::Ready { path } => DatabaseStatus::Ready { path: path.display().to_string() },
            DatabaseState::Failed { kind, message, path } => {
                DatabaseStatus::Failed { kind: kind.to_owned(), message, path: path.display().to_string() }
            }
        };
        AppStatus {
            keychain: ctx.vault().ok().map(|vault| KeychainStatusDto::from(&vault.state())),
            version: ctx.version().to_owned(),
            data_dir: ctx.dirs().data_dir.display().to_string(),
            log_dir: ctx.dirs().log_dir.display().to_string(),
            database,
        }
    }
}

pub(super) fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<AppStatus, IpcError> {
    Ok(AppStatus::from(ctx))
}

/// What the first screen waits for before it draws (the answers of `app:getPreferences` and
/// `app:getStatus`), known before the window opens. The window's initialization script hands it
/// to the page as `window.__KEYPOOL_FIRST_SCREEN__`, so the first render waits for no IPC answer.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FirstScreen {
    pub preferences: PreferencesDto,
    pub status: AppStatus,
    /// The families the page draws Latin text in, in order, where the app chooses them: on Linux,
    /// those of the desktops' UI fonts this machine has (empty: it has none of them), so WebKit
    /// looks up no family the machine lacks. `None`: the stylesheet's own list. Unlike the rest, it
    /// holds for every load of the window, a reload's included.
    pub fonts: Option<Vec<String>>,
}

impl FirstScreen {
    /// Where the page finds it; a script runs it before any of the page's own.
    pub const GLOBAL: &'static str = "__KEYPOOL_FIRST_SCREEN__";

    pub fn of(ctx: &AppContext) -> Self {
        FirstScreen { preferences: ctx.preferences().get().into(), status: AppStatus::from(ctx), fonts: None }
    }

    /// The initialization script: JSON is a JavaScript expression, so the value goes in as it is.
    /// The page takes the preferences and the status on its first load only: a reload runs the same
    /// script, with what was true when the window opened, so it asks the commands then.
    pub fn script(&self) -> String {
        let json = serde_json::to_string(self).expect("the first screen's types always serialize");
        format!("window.{} = {json};", Self::GLOBAL)
    }
}

/// The UI's preferences, kept in the data directory (one set per Keypool profile); null: never
/// chosen. A view of its own: the file leaves out what was never chosen, the UI reads nulls.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Preferences")]
pub struct PreferencesDto {
    pub theme: Option<Theme>,
    pub language: Option<Language>,
    /// The page the window was left on.
    pub page: Option<Page>,
    /// The provider Settings → Providers showed last (it may have been deleted since).
    pub provider: Option<String>,
}

/// The preferences to change; at least one.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SetPreferencesArgs {
    #[serde(default)]
    #[garde(skip)]
    pub theme: Option<Theme>,
    #[serde(default)]
    #[garde(skip)]
    pub language: Option<Language>,
    #[serde(default)]
    #[garde(skip)]
    pub page: Option<Page>,
    /// A provider's id (`LIMITS.id`, in bytes).
    #[serde(default)]
    #[garde(inner(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank)))]
    pub provider: Option<String>,
}

impl CommandArgs for SetPreferencesArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.theme.is_none() && self.language.is_none() && self.page.is_none() && self.provider.is_none() {
            return Err(IpcError::nothing_to_change(&["theme", "language", "page", "provider"]));
        }
        Ok(())
    }
}

impl From<UiPreferences> for PreferencesDto {
    fn from(p: UiPreferences) -> Self {
        PreferencesDto { theme: p.theme, language: p.language, page: p.page, provider: p.provider }
    }
}

impl From<SetPreferencesArgs> for UiPreferences {
    fn from(a: SetPreferencesArgs) -> Self {
        UiPreferences {
            theme: a.theme,
            language: a.language,
            page: a.page,
            provider: a.provider.map(|p| p.trim().to_owned()),
        }
    }
}

pub(super) fn preferences(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<PreferencesDto, IpcError> {
    Ok(ctx.preferences().get().into())
}

pub(super) fn set_preferences(ctx: &AppContext, args: SetPreferencesArgs) -> Result<PreferencesDto, IpcError> {
    Ok(ctx.preferences().update(args.into())?.into())
}

/// A desktop notification, worded by the UI from a `pool:alert`.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotifyArgs {
    #[garde(length(chars, max = LIMITS.notification_title.max_chars), custom(not_blank))]
    pub title: String,
    #[garde(length(chars, max = LIMITS.notification_body.max_chars))]
    pub body: String,
}

impl CommandArgs for NotifyArgs {}

pub(super) fn notify(ctx: &AppContext, args: NotifyArgs) -> Result<(), IpcError> {
    Ok(ctx.notify(&args.title, &args.body)?)
}

/// Settings → General's alerts: whether the desktop shows notifications now, and the keys lost
/// this run (the newest first), shown there or not.
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Alerts {
    pub notifications: Notifications,
    pub recent: Vec<RecentAlert>,
}

pub(super) fn alerts(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Alerts, IpcError> {
    Ok(Alerts { notifications: ctx.notifications()?, recent: ctx.recent_alerts()? })
}

/// Shows a test notification (worded by the UI), whatever Settings say; answers whether the
/// desktop can show one.
pub(super) fn test_notification(ctx: &AppContext, args: NotifyArgs) -> Result<Notifications, IpcError> {
    Ok(ctx.test_notification(&args.title, &args.body)?)
}
