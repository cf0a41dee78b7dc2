//! Where key values live at rest: the operating system's keychain when one is reachable, the
//! database otherwise (and always for `$NAME` references, which are not secrets).
//!
//! Invariants:
//! - A key is marked as kept in the keychain only after its value was written there, read
//!   back and compared; the database copy is cleared in the same transaction as the flip.
//! - The keychain is read once per key per run (then from memory): the pool's hot path never
//!   touches it.
//! - Without a keychain nothing fails silently: [`Vault::state`] says why, and the UI shows it.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use keypool::Secret;
use keypool_keychain::{Keychain, KeychainError};
use keypool_store::{api_keys, backups, providers, Database, StoredKey, KEYCHAIN_MARKER};

use crate::service::error::Result;

/// Whether keys go to the keychain, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeychainState {
    Available,
    Unavailable(KeychainProblem),
}

/// Why the keychain is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeychainProblem {
    /// This build or tool was started without one (tests, benches).
    NotConfigured,
    /// No D-Bus session, or no Secret Service on it (Linux); no keychain on this platform.
    Unreachable(String),
    /// The keychain is locked or refused access.
    Locked(String),
    /// It answered with an error.
    Failed(String),
}

impl From<KeychainError> for KeychainProblem {
    fn from(error: KeychainError) -> Self {
        match error {
            KeychainError::Unreachable(detail) => KeychainProblem::Unreachable(detail),
            KeychainError::Locked(detail) => KeychainProblem::Locked(detail),
            KeychainError::Failed(detail) => KeychainProblem::Failed(detail),
        }
    }
}

/// What moving keys into the keychain did at startup.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Keys (pool and provider-level) whose value left the database.
    pub moved: usize,
    /// Left-over keychain entries of keys that no longer exist, removed.
    pub orphans_removed: usize,
    /// Values replaced in backup copies.
    pub scrubbed: usize,
}

pub struct Vault {
    keychain: Option<Arc<dyn Keychain>>,
    state: Mutex<KeychainState>,
    /// Values read from (or written to) the keychain this run, by account.
    known: Mutex<HashMap<String, Secret>>,
}

/// The keychain account of a pool key: its id.
pub(crate) fn key_account(id: &str) -> String {
    id.to_owned()
}

/// The keychain accounts of the team: its secret and the Redis URL's password. Never a key's id
/// (those are UUIDs), so the left-over sweep keeps them.
pub(crate) const TEAM_ACCOUNT_PREFIX: &str = "team:";

/// The keychain account of a provider's own key.
pub(crate) fn provider_account(id: &str) -> String {
    format!("provider:{id}")
}

impl Vault {
    /// A vault over `keychain`, or over none (and why).
    pub fn new(keychain: std::result::Result<Arc<dyn Keychain>, KeychainProblem>) -> Vault {
        let (keychain, state) = match keychain {
            Ok(keychain) => (Some(keychain), KeychainState::Available),
            Err(problem) => (None, KeychainState::Unavailable(problem)),
        };
        Vault { keychain, state: Mutex::new(state), known: Mutex::new(HashMap::new()) }
    }

    pub fn state(&self) -> KeychainState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn available(&self) -> Option<&Arc<dyn Keychain>> {
        match self.state() {
            KeychainState::Available => self.keychain.as_ref(),
            KeychainState::Unavailable(_) => None,
        }
    }

    /// The keychain stopped answering: from now on keys go to the database, and the UI says so.
    fn lost(&self, error: KeychainError) {
        tracing::warn!(%error, "the keychain is not usable; keys are kept in the database until it is");
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = KeychainState::Unavailable(error.into());
    }

    /// Writes `secret` for `account` and reads it back: only a value the keychain returns intact
    /// counts as kept there.
    fn write_checked(&self, keychain: &Arc<dyn Keychain>, account: &str, secret: &Secret) -> Result<(), KeychainError> {
        keychain.write(account, secret)?;
        match keychain.read(account)? {
            Some(back) if back.expose() == secret.expose() => {
                self.remember(account, secret);
                Ok(())
            }
            _ => Err(KeychainError::Failed("the value read back differs from the one written".into())),
        }
    }

    fn remember(&self, account: &str, secret: &Secret) {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).insert(account.to_owned(), secret.clone());
    }

    /// How to keep `secret` for `account`: in the keychain when one is reachable, otherwise (or
    /// for a `$NAME` reference) in the database.
    pub fn keep(&self, account: &str, secret: &Secret) -> StoredKey {
        if secret.env_var().is_some() {
            return StoredKey::Database(secret.clone());
        }
        let Some(keychain) = self.available() else { return StoredKey::Database(secret.clone()) };
        match self.write_checked(keychain, account, secret) {
            Ok(()) => StoredKey::Keychain { preview: secret.preview() },
            Err(error) => {
                self.lost(error);
                StoredKey::Database(secret.clone())
            }
        }
    }

    /// The value of a stored key: from the database, or from the keychain (read once per run).
    pub fn reveal(&self, account: &str, stored: &StoredKey) -> std::result::Result<Secret, KeychainError> {
        match stored {
            StoredKey::Database(secret) => Ok(secret.clone()),
            StoredKey::Keychain { .. } => {
                if let Some(secret) = self.known.lock().unwrap_or_else(|e| e.into_inner()).get(account) {
                    return Ok(secret.clone());
                }
                let keychain = self
                    .keychain
                    .as_ref()
                    .ok_or_else(|| KeychainError::Unreachable("Keypool was started without a keychain".into()))?;
                match keychain.read(account)? {
                    Some(secret) => {
                        self.remember(account, &secret);
                        Ok(secret)
                    }
                    None => Err(KeychainError::Failed(format!("the keychain has no entry for {account}"))),
                }
            }
        }
    }

    /// Keeps `secret` for `account` in the keychain only (written, read back and compared):
    /// for secrets that must never be written to the database (the team's). An error when
    /// there is no keychain, or it fails.
    pub fn keep_in_keychain(&self, account: &str, secret: &Secret) -> std::result::Result<(), KeychainError> {
        let keychain = self
            .available()
            .ok_or_else(|| KeychainError::Unreachable("Keypool was started without a keychain".into()))?;
        self.write_checked(keychain, account, secret).inspect_err(|error| self.lost(error.clone()))
    }

    /// The secret the keychain keeps for `account` (read once per run); `None` when it keeps
    /// none or there is no keychain.
    pub fn read_keychain(&self, account: &str) -> std::result::Result<Option<Secret>, KeychainError> {
        if let Some(secret) = self.known.lock().unwrap_or_else(|e| e.into_inner()).get(account) {
            return Ok(Some(secret.clone()));
        }
        let Some(keychain) = self.available() else { return Ok(None) };
        let secret = keychain.read(account)?;
        if let Some(secret) = &secret {
            self.remember(account, secret);
        }
        Ok(secret)
    }

    /// Removes `account`'s value from the keychain (a key deleted, or replaced by one kept in
    /// the database). Best effort: an entry left behind is removed at the next start.
    pub fn forget(&self, account: &str) {
        self.known.lock().unwrap_or_else(|e| e.into_inner()).remove(account);
        if let Some(keychain) = &self.keychain {
            if let Err(error) = keychain.delete(account) {
                tracing::warn!(%error, account, "could not remove a key from the keychain; it is removed at the next start");
            }
        }
    }

    /// At startup: moves every literal key still in the database into the keychain (each one
    /// written, read back and compared before its database copy is cleared, in the same
    /// transaction as the flip), takes back keys a restored backup marked as kept there,
    /// removes left-over entries of deleted keys, and clears from the backup copies beside the
    /// database every value it no longer keeps as it is there. Without a keychain only the last.
    pub fn migrate(&self, db: &Database) -> Result<Migrated> {
        let Some(keychain) = self.available().cloned() else {
            return Ok(Migrated { scrubbed: self.scrub_backups(db)?, ..Migrated::default() });
        };
        let mut migrated = Migrated::default();
        let (pool_keys, provider_keys, marked_keys, marked_providers) = {
            let conn = db.lock()?;
            (
                api_keys::literal_keys_in_database(&conn)?,
                providers::literal_keys_in_database(&conn)?,
                api_keys::marked_as_in_keychain(&conn)?,
                providers::marked_as_in_keychain(&conn)?,
            )
        };
        let moves = pool_keys
            .into_iter()
            .map(|(id, secret)| (key_account(&id), id, Some(secret), false))
            .chain(provider_keys.into_iter().map(|(id, secret)| (provider_account(&id), id, Some(secret), true)))
            .chain(marked_keys.into_iter().map(|id| (key_account(&id), id, None, false)))
            .chain(marked_providers.into_iter().map(|id| (provider_account(&id), id, None, true)));
        for (account, id, secret, provider_level) in moves {
            let secret = match secret {
                Some(secret) => match self.write_checked(&keychain, &account, &secret) {
                    Ok(()) => secret,
                    Err(error) => {
                        tracing::warn!(%error, account, "could not move a key into the keychain; it stays in the database");
                        self.lost(error);
                        break;
                    }
                },
                // A backup restored after its keys moved: the keychain has them under their ids.
                None => match keychain.read(&account) {
                    Ok(Some(secret)) => secret,
                    _ => continue,
                },
            };
            let mut conn = db.lock()?;
            let tx = conn.transaction()?;
            let flipped = if provider_level {
                providers::move_key_to_keychain(&tx, &id, &secret.preview())?
            } else {
                api_keys::move_to_keychain(&tx, &id, &secret.preview())?
            };
            tx.commit()?;
            migrated.moved += usize::from(flipped);
        }
        if migrated.moved > 0 {
            db.forget_removed_content()?;
            tracing::info!(moved = migrated.moved, "API keys moved from the database into the keychain");
        }
        migrated.orphans_removed = self.remove_orphans(&keychain, db)?;
        migrated.scrubbed = self.scrub_backups(db)?;
        Ok(migrated)
    }

    /// Keychain entries under our service whose key no longer exists.
    fn remove_orphans(&self, keychain: &Arc<dyn Keychain>, db: &Database) -> Result<usize> {
        let live: HashSet<String> = {
            let conn = db.lock()?;
            api_keys::all_key_ids(&conn)?
                .iter()
                .map(|id| key_account(id))
                .chain(providers::ids_with_key_in_keychain(&conn)?.iter().map(|id| provider_account(id)))
                .collect()
        };
        let accounts = match keychain.accounts() {
            Ok(accounts) => accounts,
            Err(error) => {
                tracing::warn!(%error, "could not list the keychain's entries; left-over ones stay");
                return Ok(0);
            }
        };
        let mut removed = 0;
        let left_over = |a: &String| !live.contains(a) && !a.starts_with(TEAM_ACCOUNT_PREFIX);
        for account in accounts.into_iter().filter(left_over) {
            match keychain.delete(&account) {
                Ok(()) => removed += 1,
                Err(error) => tracing::warn!(%error, account, "could not remove a left-over keychain entry"),
            }
        }
        if removed > 0 {
            tracing::info!(removed, "left-over keychain entries of deleted keys removed");
        }
        Ok(removed)
    }

    /// Clears from every backup copy the values the live database does not keep as they are
    /// there: moved to the keychain, deleted, or replaced (a key that was rotated must not
    /// survive in a copy, with a keychain or without).
    pub(crate) fn scrub_backups(&self, db: &Database) -> Result<usize> {
        let (plain_keys, plain_providers): (HashMap<String, String>, HashMap<String, String>) = {
            let conn = db.lock()?;
            (
                api_keys::stored_in_database(&conn)?.into_iter().collect(),
                providers::keys_in_database(&conn)?.into_iter().collect(),
            )
        };
        let dir = db.path().parent().unwrap_or(Path::new("."));
        let mut scrubbed = 0;
        for backup in backups::list(dir) {
            match backups::scrub(&backup, &plain_keys, &plain_providers) {
                Ok(0) => {}
                Ok(n) => {
                    tracing::info!(backup = %backup.display(), values = n, "key values cleared from a backup copy");
                    scrubbed += n;
                }
                Err(error) => {
                    tracing::warn!(%error, backup = %backup.display(), "could not clear keys from a backup copy")
                }
            }
        }
        Ok(scrubbed)
    }
}

/// `KEYCHAIN_MARKER` is a `$NAME` reference: the database keeps it as one.
const _: () = assert!(KEYCHAIN_MARKER.as_bytes()[0] == b'$');
