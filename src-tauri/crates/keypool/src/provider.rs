//! One provider's keys: the cached list in display order, the available subset the strategy
//! walks, and the reasons nothing is available.

use crate::budget::Demand;
use crate::error::{BlockedKey, Blocker};
use crate::hash::IdMap;
use crate::key::{Health, PoolKey};
use crate::{KeyEntry, KeyId, PoolConfig, ProviderId, SelectionStrategy, Timestamp, Unavailability};

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
            available: Vec::new(),
            rebuild_at: TS_MIN,
            strategy: config.strategy.build(),
            weights: Vec::new(),
            budgets_idle: true,
        }
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

    /// Replaces the keys with a fresh load, carrying each surviving key's health over. Returns the
    /// ids that are gone.
    pub fn install(&mut self, mut entries: Vec<KeyEntry>) -> Vec<KeyId> {
        entries.retain(|e| {
            let ours = e.provider_id == self.id;
            if !ours {
                tracing::warn!(key = %e.id, provider = %self.id, "loader returned a key of another provider; ignored");
            }
            ours
        });
        entries.sort_by(|a, b| (a.sort_order, a.created_at, &a.id).cmp(&(b.sort_order, b.created_at, &b.id)));

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
            self.index.insert(entry.id.clone(), self.keys.len());
            self.keys.push(PoolKey::new(entry, health));
        }
        self.loaded_at = Some(self.generation);
        self.epoch += 1;
        self.rebuild_at = TS_MIN;
        old_index.into_iter().filter(|&(_, pos)| old_health[pos].is_some()).map(|(id, _)| id).collect()
    }

    /// The position of a key to hand out among the available ones that are not excluded and
    /// whose budgets admit `demand`, recomputing the available set first if it may have changed.
    pub fn pick(&mut self, exclude: &[KeyId], demand: &Demand<'_>, now: Timestamp) -> Option<usize> {
        self.refresh(now);
        let (keys, available) = (&self.keys, &self.available);
        let picked = if exclude.is_empty() && self.budgets_idle {
            self.strategy.pick(&|_| true)
        } else {
            self.strategy.pick(&|i| {
                let key = &keys[available[i]];
                !exclude.contains(&key.id) && key.admits(demand, now).is_ok()
            })
        };
        picked.map(|i| self.available[i])
    }

    /// Whether the key at `pos` can serve a request that excludes `exclude` and needs `demand`,
    /// as of `now`.
    pub fn can_serve(&mut self, pos: usize, exclude: &[KeyId], demand: &Demand<'_>, now: Timestamp) -> bool {
        self.refresh(now);
        self.keys
            .get(pos)
            .is_some_and(|key| key.available && !exclude.contains(&key.id) && key.admits(demand, now).is_ok())
    }

    fn refresh(&mut self, now: Timestamp) {
        if now >= self.rebuild_at {
            self.rebuild(now);
        }
    }

    /// Recomputes the available set and the strategy's view of it. O(n); runs only after a
    /// change or when a cooldown expires.
    fn rebuild(&mut self, now: Timestamp) {
        self.available.clear();
        self.weights.clear();
        self.rebuild_at = TS_MAX;
        self.budgets_idle = true;
        for (pos, key) in self.keys.iter_mut().enumerate() {
            self.budgets_idle &= key.health.budgets.is_idle(&key.limits);
            let cooling_until = key.cooling_until(now);
            key.available = key.usable() && cooling_until.is_none();
            if key.available {
                self.available.push(pos);
                self.weights.push(key.weight);
            }
            if let (true, Some(until)) = (key.usable(), cooling_until) {
                self.rebuild_at = self.rebuild_at.min(until);
            }
        }
        self.strategy.reset(&self.weights);
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
                    why: key.blocker(demand, tried, now).unwrap_or(Blocker::Tried),
                    tried,
                }
            })
            .collect();
        let first_free_at = keys
            .iter()
            .filter_map(|k| match k.why {
                Blocker::Cooling { until } | Blocker::Spent { until } => Some(until),
                _ => None,
            })
            .min();
        Unavailability::Blocked { keys, first_free_at }
    }
}
