//! Which of this member's keys each team identity names, and back: built from the keys the pool
//! has loaded, their resolved values and the team secret, again whenever the pool loads.

use std::collections::{HashMap, HashSet};

use keypool::{KeyId, KeyPool, ProviderId, SecretResolver};

use crate::secret::TeamSecret;

/// A key's names in the team.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ids {
    pub provider: ProviderId,
    /// The key's identity.
    pub key: String,
    /// Its quota group's: the group's, or the key's own when it has none.
    pub group: String,
}

/// The team's names of the pool's keys as of one of its loads.
#[derive(Default)]
pub(crate) struct Directory {
    /// The pool's [`KeyPool::loads`] this was built at.
    loads: Option<u64>,
    by_key: HashMap<KeyId, Ids>,
    by_identity: HashMap<String, Vec<KeyId>>,
    by_group: HashMap<String, Vec<KeyId>>,
}

/// Identities that were not in the directory before a rebuild: what the team said of them
/// before can be applied now.
#[derive(Debug, Default)]
pub(crate) struct Arrived {
    pub keys: HashSet<String>,
    pub groups: HashSet<String>,
}

impl Directory {
    /// Whether the pool loaded anything since this was built.
    pub fn stale(&self, pool: &KeyPool) -> bool {
        self.loads != Some(pool.loads())
    }

    /// Builds the directory again from the pool's keys. Keys whose value cannot be read (sealed,
    /// an unset `$NAME`) have no identity: the team cannot know them.
    pub fn rebuild(&mut self, pool: &KeyPool, resolver: &dyn SecretResolver, secret: &TeamSecret) -> Arrived {
        let loads = pool.loads();
        let mut fresh = Directory { loads: Some(loads), ..Directory::default() };
        for loaded in pool.loaded_keys() {
            if loaded.sealed {
                continue;
            }
            let Ok(value) = resolver.resolve(&loaded.secret) else { continue };
            let key = secret.key_identity(value.expose());
            let group = match loaded.quota_group.as_deref() {
                Some(name) => secret.group_identity(name),
                None => key.clone(),
            };
            fresh.by_identity.entry(key.clone()).or_default().push(loaded.key.clone());
            fresh.by_group.entry(group.clone()).or_default().push(loaded.key.clone());
            fresh.by_key.insert(loaded.key, Ids { provider: loaded.provider, key, group });
        }
        let arrived = Arrived {
            keys: fresh.by_identity.keys().filter(|k| !self.by_identity.contains_key(*k)).cloned().collect(),
            groups: fresh.by_group.keys().filter(|g| !self.by_group.contains_key(*g)).cloned().collect(),
        };
        *self = fresh;
        arrived
    }

    /// The names of `key`.
    pub fn ids(&self, key: &KeyId) -> Option<&Ids> {
        self.by_key.get(key)
    }

    /// This member's keys with the identity `key` (one, unless two providers hold the same key).
    pub fn keys(&self, key: &str) -> &[KeyId] {
        self.by_identity.get(key).map_or(&[], Vec::as_slice)
    }

    /// This member's keys in the group named `group`.
    pub fn group(&self, group: &str) -> &[KeyId] {
        self.by_group.get(group).map_or(&[], Vec::as_slice)
    }
}
