//! One provider's keys: the cached list in display order, their quota groups, the available
//! subset the strategy walks, and the reasons nothing is available.

use crate::config::PoolConfig;
use crate::entry::KeyEntry;
use crate::error::{BlockedKey, Blocker, Unavailability};
use crate::group::{GroupHealth, GroupId, QuotaGroup};
use crate::hash::IdMap;
use crate::ids::{KeyId, ProviderId};
use crate::key::{Health, PoolKey};
use crate::request::Demand;
use crate::strategy::SelectionStrategy;
use crate::time::Timestamp;

pub(crate) const TS_MIN: Timestamp = Timestamp::from_millis(i64::MIN);
pub(crate) const TS_MAX: Timestamp = Timestamp::from_millis(i64::MAX);

pub(crate) struct ProviderState {
    pub id: ProviderId,
    /// Bumped by every invalidation. Keys are fresh iff `loaded_at == Some(generation)`; a load
    /// that started at another generation is discarded, so a write that races a load is never
    /// hidden by stale data.
    pub generation: u64,
    pub loaded_at: Option<u64>,
    /// A load is in flight; other selections for this provider wait for it instead of loading
    /// the same rows again.
    pub loading: bool,
    /// Bumped at each install; invalidates the positions cached in bindings.
    pub epoch: u64,
    /// Keys in display order. Kept (and updated by reports) while stale, so health survives
    /// a reload: the new list takes over each surviving key's health.
    pub keys: Vec<PoolKey>,
    pub index: IdMap<KeyId, usize>,
    /// The keys' quota groups; each key's `group` is a position here. Kept, like the keys, across
    /// reloads: a group's health survives by its [`GroupId`].
    pub groups: Vec<QuotaGroup>,
    group_index: IdMap<GroupId, usize>,
    /// Positions of the available keys, in order: what the strategy's positions refer to.
    available: Vec<usize>,
    /// When `available` must be recomputed: the earliest cooldown expiry among usable keys,
    /// `TS_MIN` after any change, `TS_MAX` when nothing will change by itself. One comparison on
    /// the hot path detects both.
    rebuild_at: Timestamp,
    strategy: Box<dyn SelectionStrategy>,
    /// Reused buffer for the weights passed to the strategy.
    weights: Vec<u32>,
    /// No available key has a budget or a user limit, as of the last rebuild: picks skip the
    /// admission checks. Budgets appear with an answer, which rebuilds.
    budgets_idle: bool,
    /// The scopes hand-outs reserved in, each text made once (a lease names its scope).
    scopes: Vec<std::sync::Arc<str>>,
}

impl ProviderState {
    pub fn new(id: ProviderId, config: &PoolConfig) -> Self {
        ProviderState {
            id,
            generation: 0,
            loaded_at: None,
            loading: false,
            epoch: 0,
            keys: Vec::new(),
            index: IdMap::default(),
            groups: Vec::new(),
            group_index: IdMap::default(),
            available: Vec::new(),
            rebuild_at: TS_MIN,
            strategy: config.strategy.build(),
            weights: Vec::new(),
            budgets_idle: true,
            scopes: Vec::new(),
        }
    }

    /// `scope`, shared with the leases that reserved in it before.
    pub fn scope(&mut self, scope: &str) -> std::sync::Arc<str> {
        if let Some(known) = self.scopes.iter().find(|known| ***known == *scope) {
            return known.clone();
        }
        let made: std::sync::Arc<str> = scope.into();
        if self.scopes.len() >= crate::MAX_SCOPES_PER_KEY {
            self.scopes.clear();
        }
        self.scopes.push(made.clone());
        made
    }

    pub fn is_fresh(&self) -> bool {
        self.loaded_at == Some(self.generation)
    }

    /// Availability may have changed: recompute it before the next pick.
    pub fn touch(&mut self) {
        self.rebuild_at = TS_MIN;
    }

    pub fn key_mut(&mut self, id: &KeyId) -> Option<&mut PoolKey> {
        let &pos = self.index.get(id)?;
        Some(&mut self.keys[pos])
    }

    /// A key and its group, both to change.
    pub fn key_and_group_mut(&mut self, id: &KeyId) -> Option<(&mut PoolKey, &mut GroupHealth)> {
        let &pos = self.index.get(id)?;
        let key = &mut self.keys[pos];
        let group = key.group;
        Some((key, &mut self.groups[group].health))
    }

    /// Ends a hand-out's reservation: the key's load and its group's scope. The group is found by
    /// its id, so a reservation made before a reload that moved the key to another group is given
    /// back where it was made.
    pub fn release(&mut self, key: &KeyId, group: &GroupId, scope: Option<&str>, tokens: u32) {
        if let Some(key) = self.key_mut(key) {
            key.release();
        }
        if let Some(&pos) = self.group_index.get(group) {
            self.groups[pos].health.scopes.release(scope, tokens);
        }
    }

    /// Counts a hand-out of the key at `pos` (and its reservation, when `reserve`).
    pub fn record_hand_out(&mut self, pos: usize, demand: &Demand<'_>, reserve: bool, now: Timestamp) {
        let key = &mut self.keys[pos];
        let group = key.group;
        key.record_hand_out(&mut self.groups[group].health, demand, reserve, now);
    }

    /// The id of the group of the key at `pos`.
    pub fn group_id(&self, pos: usize) -> &GroupId {
        &self.groups[self.keys[pos].group].id
    }

    /// Ends the rests that are over by `now`; returns whether availability may have changed.
    pub fn expire(&mut self, now: Timestamp) -> bool {
        let mut changed = false;
        for group in &mut self.groups {
            changed |= group.health.expire(now);
        }
        changed
    }

    /// Replaces the keys with a fresh load, carrying each surviving key's health and each
    /// surviving group's health over. Returns the ids that are gone.
    pub fn install(&mut self, mut entries: Vec<KeyEntry>) -> Vec<KeyId> {
        entries.retain(|e| {
            let ours = e.provider_id == self.id;
            if !ours {
                tracing::warn!(key = %e.id, provider = %self.id, "loader returned a key of another provider; ignored");
            }
            ours
        });
        entries.sort_by(|a, b| (a.sort_order, a.created_at, &a.id).cmp(&(b.sort_order, b.created_at, &b.id)));

        let mut old_groups: IdMap<GroupId, GroupHealth> =
            std::mem::take(&mut self.groups).into_iter().map(|group| (group.id, group.health)).collect();
        self.group_index.clear();
        let old_index = std::mem::take(&mut self.index);
        let mut old_health: Vec<Option<Health>> =
            std::mem::take(&mut self.keys).into_iter().map(|key| Some(key.health)).collect();
        self.keys.reserve(entries.len());
        for entry in entries {
            if self.index.contains_key(&entry.id) {
                tracing::warn!(key = %entry.id, "loader returned a key twice; the first in display order is used");
                continue;
            }
            let health = old_index.get(&entry.id).and_then(|&pos| old_health[pos].take()).unwrap_or_default();
            let id = GroupId::of(&entry.id, entry.quota_group.as_deref());
            let group = match self.group_index.get(&id) {
                Some(&group) => group,
                None => {
                    let health = old_groups.remove(&id).unwrap_or_default();
                    self.group_index.insert(id.clone(), self.groups.len());
                    self.groups.push(QuotaGroup { id, health });
                    self.groups.len() - 1
                }
            };
            self.index.insert(entry.id.clone(), self.keys.len());
            self.keys.push(PoolKey::new(entry, group, health));
        }
        let previous: Vec<Option<usize>> = self.keys.iter().map(|key| old_index.get(&key.id).copied()).collect();
        self.strategy.renumber(&previous);
        self.loaded_at = Some(self.generation);
        self.epoch += 1;
        self.rebuild_at = TS_MIN;
        old_index.into_iter().filter(|&(_, pos)| old_health[pos].is_some()).map(|(id, _)| id).collect()
    }

    /// The position of a key to hand out among the available ones that are not excluded and
    /// whose budgets admit `demand`, recomputing the available set first if it may have changed.
    pub fn pick(&mut self, exclude: &[KeyId], demand: &Demand<'_>, now: Timestamp) -> Option<usize> {
        self.refresh(now);
        let (keys, groups, available) = (&self.keys, &self.groups, &self.available);
        let picked = if exclude.is_empty() && self.budgets_idle {
            self.strategy.pick_any()
        } else {
            self.strategy.pick(&|i| {
                let key = &keys[available[i]];
                !exclude.contains(&key.id) && key.admits(&groups[key.group].health, demand, now).is_ok()
            })
        };
        picked.map(|i| self.available[i])
    }

    /// Whether the key at `pos` can serve a request that excludes `exclude` and needs `demand`,
    /// as of `now`.
    pub fn can_serve(&mut self, pos: usize, exclude: &[KeyId], demand: &Demand<'_>, now: Timestamp) -> bool {
        self.refresh(now);
        // As in `pick`: with nothing that can refuse a request, the group is not even looked at.
        self.keys.get(pos).is_some_and(|key| {
            key.available
                && !exclude.contains(&key.id)
                && (self.budgets_idle || key.admits(&self.groups[key.group].health, demand, now).is_ok())
        })
    }

    fn refresh(&mut self, now: Timestamp) {
        if now >= self.rebuild_at {
            self.rebuild(now);
        }
    }

    /// Recomputes the available set and the strategy's view of it. O(n); runs only after a
    /// change or when a group's cooldown expires.
    fn rebuild(&mut self, now: Timestamp) {
        self.available.clear();
        self.weights.clear();
        self.rebuild_at = TS_MAX;
        self.budgets_idle = true;
        for (pos, key) in self.keys.iter_mut().enumerate() {
            let group = &self.groups[key.group].health;
            self.budgets_idle &= key.limits.is_empty() && group.scopes.is_empty();
            let cooling_until = group.resting_until(now);
            key.available = key.usable() && cooling_until.is_none();
            if key.available {
                self.available.push(pos);
                self.weights.push(key.weight);
            }
            if let (true, Some(until)) = (key.usable(), cooling_until) {
                self.rebuild_at = self.rebuild_at.min(until);
            }
        }
        self.strategy.reset(&self.available, &self.weights);
    }

    /// Why nothing was picked for a request excluding `exclude` and needing `demand`, key by key.
    pub fn why_unavailable(&self, exclude: &[KeyId], demand: &Demand<'_>, now: Timestamp) -> Unavailability {
        if self.keys.is_empty() {
            return Unavailability::NoKeys;
        }
        let keys: Vec<BlockedKey> = self
            .keys
            .iter()
            .map(|key| {
                let tried = exclude.contains(&key.id);
                BlockedKey {
                    id: key.id.clone(),
                    name: key.name.to_string(),
                    // A key that could serve but was not picked lost only to the request's exclusions.
                    why: key.blocker(&self.groups[key.group].health, demand, tried, now).unwrap_or(Blocker::Tried),
                    tried,
                }
            })
            .collect();
        let first_free_at = keys
            .iter()
            .filter_map(|k| match k.why {
                Blocker::Cooling { until } | Blocker::Spent { until } | Blocker::UsedUpForTheDay { until } => {
                    Some(until)
                }
                _ => None,
            })
            .min();
        Unavailability::Blocked { keys, first_free_at }
    }
}
