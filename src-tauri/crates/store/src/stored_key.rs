//! Where a key is kept: in this database, or in the operating system's keychain.

use keypool::Secret;
use rusqlite::types::Value;

/// A key as the database knows it.
#[derive(Debug, Clone)]
pub enum StoredKey {
    /// The key itself, or a `$NAME` reference, stored in the database.
    Database(Secret),
    /// Kept in the keychain under the key's account name; the database has only its preview.
    Keychain { preview: String },
}

/// The reference a scrubbed backup holds instead of a key that moved to the keychain: a
/// `$NAME` no environment sets, so an older Keypool opening that backup skips the key rather
/// than send anything, and this one finds the key in the keychain under its id.
pub const KEYCHAIN_MARKER: &str = "$KEYPOOL_KEYCHAIN";

impl StoredKey {
    /// The masked form people see.
    pub fn preview(&self) -> String {
        match self {
            StoredKey::Database(secret) => secret.preview(),
            StoredKey::Keychain { preview } => preview.clone(),
        }
    }

    /// The variable a `$NAME` reference names (references always stay in the database).
    pub fn env_var(&self) -> Option<&str> {
        match self {
            StoredKey::Database(secret) => secret.env_var(),
            StoredKey::Keychain { .. } => None,
        }
    }

    pub fn in_keychain(&self) -> bool {
        matches!(self, StoredKey::Keychain { .. })
    }

    /// `storage`, `api_key`, `preview` as the columns hold them.
    pub(crate) fn columns(&self) -> (&'static str, Option<&str>, Option<&str>) {
        match self {
            StoredKey::Database(secret) => ("database", Some(secret.expose()), None),
            StoredKey::Keychain { preview } => ("keychain", None, Some(preview.as_str())),
        }
    }

    /// From the columns `storage`, `api_key`, `preview`.
    pub(crate) fn from_columns(
        storage: &str,
        api_key: Option<String>,
        preview: Option<String>,
    ) -> rusqlite::Result<Self> {
        match (storage, api_key) {
            ("keychain", _) => Ok(StoredKey::Keychain { preview: preview.unwrap_or_default() }),
            (_, Some(key)) => Ok(StoredKey::Database(Secret::new(key))),
            (_, None) => Err(rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Null,
                "a key stored in the database has no value".into(),
            )),
        }
    }
}

/// A value for a nullable text column.
pub(crate) fn text(value: Option<&str>) -> Value {
    value.map_or(Value::Null, |v| Value::Text(v.to_owned()))
}
