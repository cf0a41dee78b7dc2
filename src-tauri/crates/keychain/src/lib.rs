//! The operating system's keychain, where Keypool keeps API keys at rest: the Secret Service on
//! Linux (GNOME Keyring, KWallet), Keychain on macOS, Credential Manager on Windows, through
//! `keyring-core` and its maintained stores. One entry per key: service [`SERVICE`], the key's
//! account name (its id) as the user name.
//!
//! [`Keychain`] is the small surface the app needs; [`OsKeychain`] is the real one and
//! [`MemoryKeychain`] a double for tests (it can also go away, as a keychain can).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use keypool::Secret;
use keyring_core::api::CredentialStoreApi;

/// The service every entry is filed under.
pub const SERVICE: &str = "dev.keypool.desktop";

/// How long opening the keychain may take before it counts as unreachable (a locked keychain
/// may wait for a password prompt nobody answers).
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(5);

/// Where secrets are kept, one per account.
pub trait Keychain: Send + Sync {
    /// Stores `secret` for `account`, replacing what was there.
    fn write(&self, account: &str, secret: &Secret) -> Result<(), KeychainError>;
    /// The secret stored for `account`; `None` when there is none.
    fn read(&self, account: &str) -> Result<Option<Secret>, KeychainError>;
    /// Removes `account`'s secret; nothing to remove is not an error.
    fn delete(&self, account: &str) -> Result<(), KeychainError>;
    /// Every account that has a secret under [`SERVICE`].
    fn accounts(&self) -> Result<Vec<String>, KeychainError>;
}

/// Why the keychain could not be used. Messages never hold a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// There is no keychain to talk to: no D-Bus session, or no Secret Service on it.
    #[error("the keychain is not reachable: {0}")]
    Unreachable(String),
    /// The keychain is there but locked, or refused access.
    #[error("the keychain is locked or refused access: {0}")]
    Locked(String),
    /// Anything else the keychain answered.
    #[error("the keychain failed: {0}")]
    Failed(String),
}

impl KeychainError {
    fn of(error: keyring_core::Error) -> KeychainError {
        use keyring_core::Error;
        match error {
            Error::NoStorageAccess(detail) => KeychainError::Locked(detail.to_string()),
            Error::NoDefaultStore => KeychainError::Unreachable("no credential store on this platform".into()),
            Error::PlatformFailure(detail) => {
                let detail = detail.to_string();
                // zbus says so when there is no bus to connect to, or nobody serves the name.
                let unreachable = ["DBUS_SESSION_BUS_ADDRESS", "ServiceUnknown", "No such file", "Connection refused"]
                    .iter()
                    .any(|sign| detail.contains(sign));
                if unreachable {
                    KeychainError::Unreachable(detail)
                } else {
                    KeychainError::Failed(detail)
                }
            }
            other => KeychainError::Failed(other.to_string()),
        }
    }
}

/// The platform's keychain.
pub struct OsKeychain {
    store: Arc<dyn CredentialStoreApi + Send + Sync>,
}

impl OsKeychain {
    /// Connects to the platform's keychain and checks that it answers (a read of an entry that
    /// need not exist), within [`OPEN_TIMEOUT`].
    pub fn open() -> Result<OsKeychain, KeychainError> {
        let (sent, received) = mpsc::channel();
        // A thread, so a keychain that never answers cannot hold the app's start.
        std::thread::Builder::new()
            .name("keychain-open".into())
            .spawn(move || {
                let opened = platform_store().and_then(|store| {
                    let keychain = OsKeychain { store };
                    keychain.read("keypool-probe").map(|_| keychain)
                });
                let _ = sent.send(opened);
            })
            .map_err(|error| KeychainError::Failed(error.to_string()))?;
        match received.recv_timeout(OPEN_TIMEOUT) {
            Ok(opened) => opened,
            Err(_) => Err(KeychainError::Locked(format!("no answer within {} s", OPEN_TIMEOUT.as_secs()))),
        }
    }

    fn entry(&self, account: &str) -> Result<keyring_core::Entry, KeychainError> {
        let modifiers = HashMap::from([("label", "Keypool API key")]);
        self.store.build(SERVICE, account, Some(&modifiers)).map_err(KeychainError::of)
    }
}

#[cfg(all(unix, not(any(target_os = "macos", target_os = "ios", target_os = "android"))))]
fn platform_store() -> Result<Arc<dyn CredentialStoreApi + Send + Sync>, KeychainError> {
    Ok(zbus_secret_service_keyring_store::Store::new().map_err(KeychainError::of)?)
}

#[cfg(target_os = "macos")]
fn platform_store() -> Result<Arc<dyn CredentialStoreApi + Send + Sync>, KeychainError> {
    Ok(apple_native_keyring_store::keychain::Store::new().map_err(KeychainError::of)?)
}

#[cfg(target_os = "windows")]
fn platform_store() -> Result<Arc<dyn CredentialStoreApi + Send + Sync>, KeychainError> {
    Ok(windows_native_keyring_store::Store::new().map_err(KeychainError::of)?)
}

#[cfg(not(any(unix, target_os = "windows")))]
fn platform_store() -> Result<Arc<dyn CredentialStoreApi + Send + Sync>, KeychainError> {
    Err(KeychainError::Unreachable("no keychain on this platform".into()))
}

impl Keychain for OsKeychain {
    fn write(&self, account: &str, secret: &Secret) -> Result<(), KeychainError> {
        self.entry(account)?.set_password(secret.expose()).map_err(KeychainError::of)
    }

    fn read(&self, account: &str) -> Result<Option<Secret>, KeychainError> {
        match self.entry(account)?.get_password() {
            Ok(password) => Ok(Some(Secret::new(password))),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(error) => Err(KeychainError::of(error)),
        }
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        match self.entry(account)?.delete_credential() {
            Ok(()) | Err(keyring_core::Error::NoEntry) => Ok(()),
            Err(error) => Err(KeychainError::of(error)),
        }
    }

    fn accounts(&self) -> Result<Vec<String>, KeychainError> {
        let found = self.store.search(&HashMap::from([("service", SERVICE)])).map_err(KeychainError::of)?;
        let mut accounts = Vec::with_capacity(found.len());
        for entry in found {
            let attributes = entry.get_attributes().map_err(KeychainError::of)?;
            accounts.extend(attributes.get("username").cloned());
        }
        Ok(accounts)
    }
}

/// A keychain in memory, for tests: it can become unreachable and come back.
#[derive(Default)]
pub struct MemoryKeychain {
    entries: Mutex<HashMap<String, String>>,
    gone: AtomicBool,
    /// How many reads reached it, to show what is cached.
    reads: std::sync::atomic::AtomicUsize,
}

impl MemoryKeychain {
    pub fn new() -> Arc<MemoryKeychain> {
        Arc::new(MemoryKeychain::default())
    }

    /// Makes every call fail as unreachable (`true`) or work again.
    pub fn set_gone(&self, gone: bool) {
        self.gone.store(gone, Ordering::SeqCst);
    }

    /// The secret of `account`, as stored (for assertions).
    pub fn peek(&self, account: &str) -> Option<String> {
        self.entries.lock().unwrap().get(account).cloned()
    }

    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    fn reachable(&self) -> Result<(), KeychainError> {
        if self.gone.load(Ordering::SeqCst) {
            return Err(KeychainError::Unreachable("the test took it away".into()));
        }
        Ok(())
    }
}

impl Keychain for MemoryKeychain {
    fn write(&self, account: &str, secret: &Secret) -> Result<(), KeychainError> {
        self.reachable()?;
        self.entries.lock().unwrap().insert(account.to_owned(), secret.expose().to_owned());
        Ok(())
    }

    fn read(&self, account: &str) -> Result<Option<Secret>, KeychainError> {
        self.reachable()?;
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.entries.lock().unwrap().get(account).map(|s| Secret::new(s.as_str())))
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        self.reachable()?;
        self.entries.lock().unwrap().remove(account);
        Ok(())
    }

    fn accounts(&self) -> Result<Vec<String>, KeychainError> {
        self.reachable()?;
        let mut accounts: Vec<String> = self.entries.lock().unwrap().keys().cloned().collect();
        accounts.sort();
        Ok(accounts)
    }
}

impl<K: Keychain + ?Sized> Keychain for Arc<K> {
    fn write(&self, account: &str, secret: &Secret) -> Result<(), KeychainError> {
        (**self).write(account, secret)
    }
    fn read(&self, account: &str) -> Result<Option<Secret>, KeychainError> {
        (**self).read(account)
    }
    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        (**self).delete(account)
    }
    fn accounts(&self) -> Result<Vec<String>, KeychainError> {
        (**self).accounts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_keychain_keeps_one_secret_per_account_and_can_go_away() {
        let keychain = MemoryKeychain::new();
        keychain.write("a", &Secret::new("sk-one")).unwrap();
        keychain.write("a", &Secret::new("sk-two")).unwrap();
        assert_eq!(keychain.read("a").unwrap().map(|s| s.expose().to_owned()), Some("sk-two".into()), "replaced");
        assert_eq!(keychain.read("b").unwrap().map(|s| s.expose().to_owned()), None, "absent is None");
        keychain.set_gone(true);
        assert!(matches!(keychain.read("a"), Err(KeychainError::Unreachable(_))), "gone is unreachable");
        keychain.set_gone(false);
        keychain.delete("a").unwrap();
        keychain.delete("a").unwrap();
        assert_eq!(keychain.accounts().unwrap(), Vec::<String>::new(), "deleted, twice without error");
    }
}
