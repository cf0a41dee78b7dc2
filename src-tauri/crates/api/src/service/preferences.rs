//! The UI's preferences: theme, language, the page and the provider last shown. Kept in the data
//! directory beside the database (`preferences.json`), so each Keypool profile (each
//! `KEYPOOL_DATA_DIR`) has its own; the web view's storage is shared by all of them. A file of
//! its own rather than a table: the language is wanted even when the database cannot be opened.
//!
//! Every change is written whole to a new file that then replaces the old one, so a crash leaves
//! either the old preferences or the new, never half of them. A file that cannot be read (damaged,
//! or from a newer Keypool) counts as no preferences, and is replaced at the next change.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::service::error::{Result, ServiceError};

/// The file, in the data directory.
pub const PREFERENCES_FILE_NAME: &str = "preferences.json";

/// The colour theme: the OS's, or one chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename = "ThemeChoice")]
pub enum Theme {
    /// The OS's light or dark.
    System,
    Light,
    Dark,
}

/// The UI's language: the OS's, or one chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename = "LanguageChoice")]
pub enum Language {
    /// The OS's language, when the UI has it.
    System,
    En,
    Zh,
    Ja,
    Ru,
}

/// A page of the app, as the window reopens on it: `chat`, `usage`, or a section of Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "PageChoice")]
pub enum Page {
    #[serde(rename = "chat")]
    Chat,
    #[serde(rename = "usage")]
    Usage,
    #[serde(rename = "settings/providers")]
    SettingsProviders,
    #[serde(rename = "settings/general")]
    SettingsGeneral,
    #[serde(rename = "settings/localApi")]
    SettingsLocalApi,
    #[serde(rename = "settings/team")]
    SettingsTeam,
    #[serde(rename = "settings/about")]
    SettingsAbout,
}

/// What the user chose; `None`: never chosen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPreferences {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Page>,
    /// The provider Settings → Providers showed last (its id; it may have been deleted since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl UiPreferences {
    /// These preferences with each field `patch` gives replaced.
    fn with(mut self, patch: UiPreferences) -> UiPreferences {
        self.theme = patch.theme.or(self.theme);
        self.language = patch.language.or(self.language);
        self.page = patch.page.or(self.page);
        self.provider = patch.provider.or(self.provider);
        self
    }
}

pub struct Preferences {
    path: PathBuf,
    current: Mutex<UiPreferences>,
}

impl Preferences {
    /// The preferences kept in `data_dir`; none when there are none yet, or they cannot be read.
    pub fn open(data_dir: &Path) -> Preferences {
        let path = data_dir.join(PREFERENCES_FILE_NAME);
        let current = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                tracing::warn!(path = %path.display(), %error, "the UI's preferences cannot be read; starting from none");
                UiPreferences::default()
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => UiPreferences::default(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "the UI's preferences cannot be read; starting from none");
                UiPreferences::default()
            }
        };
        Preferences { path, current: Mutex::new(current) }
    }

    pub fn get(&self) -> UiPreferences {
        self.current.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the fields `patch` gives and keeps the result; on an error nothing changes.
    pub fn update(&self, patch: UiPreferences) -> Result<UiPreferences> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let next = current.clone().with(patch);
        if next != *current {
            self.write(&next).map_err(|error| ServiceError::NotSaved {
                what: "preferences",
                reason: format!("{}: {error}", self.path.display()),
            })?;
            *current = next.clone();
        }
        Ok(next)
    }

    /// Writes `preferences` to a new file (readable by the user only) beside the old one, then
    /// puts it in the old one's place.
    fn write(&self, preferences: &UiPreferences) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&serde_json::to_vec_pretty(preferences).expect("preferences serialize"))?;
        file.as_file().sync_all()?;
        file.persist(&self.path).map_err(|error| error.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(theme: Option<Theme>, page: Option<Page>) -> UiPreferences {
        UiPreferences { theme, page, ..UiPreferences::default() }
    }

    #[test]
    fn a_change_is_kept_in_the_data_directory_and_read_back_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let preferences = Preferences::open(dir.path());
        assert_eq!(preferences.get(), UiPreferences::default(), "nothing chosen at first");
        preferences.update(patch(Some(Theme::Dark), None)).unwrap();
        let kept = preferences.update(patch(None, Some(Page::SettingsLocalApi))).unwrap();
        assert_eq!(kept.theme, Some(Theme::Dark), "a change of one field keeps the others");
        assert_eq!(Preferences::open(dir.path()).get(), kept, "the next start reads what was kept");
        let text = std::fs::read_to_string(dir.path().join(PREFERENCES_FILE_NAME)).unwrap();
        assert!(text.contains("\"settings/localApi\""), "pages are stored as the UI names them: {text}");
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_the_user_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        Preferences::open(dir.path()).update(patch(Some(Theme::Light), None)).unwrap();
        let mode = std::fs::metadata(dir.path().join(PREFERENCES_FILE_NAME)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "like the database, the file is the user's alone");
    }

    #[test]
    fn a_damaged_file_counts_as_none_and_is_replaced_by_the_next_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PREFERENCES_FILE_NAME), b"{ not json").unwrap();
        let preferences = Preferences::open(dir.path());
        assert_eq!(preferences.get(), UiPreferences::default(), "an unreadable file is no preferences");
        preferences.update(patch(Some(Theme::Dark), None)).unwrap();
        assert_eq!(Preferences::open(dir.path()).get().theme, Some(Theme::Dark), "and the next change replaces it");
    }

    #[test]
    fn a_change_that_cannot_be_written_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let preferences = Preferences::open(&dir.path().join("missing-directory"));
        assert!(preferences.update(patch(Some(Theme::Dark), None)).is_err(), "there is nowhere to write");
        assert_eq!(preferences.get(), UiPreferences::default(), "and nothing changed");
    }
}
