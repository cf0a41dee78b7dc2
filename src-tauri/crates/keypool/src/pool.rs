//! The pool: per-provider key sets, session bindings, cooldowns and auth blocks behind one lock.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::KeyName;
use crate::hash::IdMap;
use crate::{
    DisableReason, KeyDisabler, KeyEntry, KeyId, KeyLoader, PoolConfig, PoolError, ProviderId,
    Secret, SecretResolver, SelectionStrategy, SessionId, Timestamp, Unavailability,
};

/// What to select a key for.
#[derive(Clone, Copy, Debug)]
pub struct SelectionRequest<'a> {
    /// The provider the request goes to.
    pub provider: &'a ProviderId,
    /// The chat session, for affinity; `None` for a one-off request.
    pub session: Option<&'a SessionId>,
    /// Keys this request already tried (each key is tried at most once per request).
    pub exclude: &'a [KeyId],
}

impl<'a> SelectionRequest<'a> {
    /// A request for `provider` with no session and nothing excluded.
    pub fn new(provider: &'a ProviderId) -> Self {
        SelectionRequest {
            provider,
            session: None,
            exclude: &[],
        }
    }

    /// The same request on behalf of `session`.
    pub fn for_session(self, session: &'a SessionId) -> Self {
        SelectionRequest {
            session: Some(session),
            ..self
        }
    }

    /// The same request, skipping `keys`.
    pub fn excluding(self, keys: &'a [KeyId]) -> Self {
        SelectionRequest {
            exclude: keys,
            ..self
        }
    }
}

/// A key handed out for one request.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The key to report success or failure for.
    pub key_id: KeyId,
    /// Its label, for logs and messages.
    pub label: Option<Arc<str>>,
    /// The resolved value to send (a `$NAME` reference is already replaced by its value).
    pub secret: Secret,
    /// True when the session was bound to another key (or provider) before this selection,
    /// i.e. the provider's prompt cache for this chat is lost.
    pub rebound: bool,
}

/// A failed request, as reported by the layer that sent it.
#[derive(Clone, Copy, Debug)]
pub struct Failure<'a> {
    /// The provider the request went to.
    pub provider: &'a ProviderId,
    /// The key it used.
    pub key: &'a KeyId,
    /// The session, which is re-bound to the returned key.
    pub session: Option<&'a SessionId>,
    /// The HTTP status.
    pub status: u16,
    /// The wait the provider announced (`Retry-After`), if any.
    pub retry_after: Option<Duration>,
    /// Keys the request already tried; the failed key is excluded in any case.
    pub exclude: &'a [KeyId],
}

/// How a key stands, for the status view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyState {
    /// Enabled and not cooling: can be selected.
    Active,
    /// Enabled, but resting after rate limits until `cooling_until`.
    Cooling,
    /// Off: by hand in the store, or because the provider rejected it.
    Disabled,
}

/// The last failure the pool saw for a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// HTTP 429 or 529.
    RateLimited {
        /// The status received.
        status: u16,
    },
    /// HTTP 401 or 403; the key was disabled.
    AuthRejected {
        /// The status received.
        status: u16,
    },
    /// The key's `$NAME` reference had no usable value when it was selected.
    UnresolvedEnv {
        /// The variable, without `$`.
        var: String,
    },
}

impl KeyError {
    /// The HTTP status, for the errors that came with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            KeyError::RateLimited { status } | KeyError::AuthRejected { status } => Some(*status),
            KeyError::UnresolvedEnv { .. } => None,
        }
    }
}

/// One key's state and in-memory statistics (since the app started; not persisted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyStatus {
    /// The key.
    pub key_id: KeyId,
    /// Its label.
    pub label: Option<String>,
    /// Its weight as the pool uses it (clamped to 1–100).
    pub weight: u32,
    /// Active, cooling or disabled, as of the `now` passed to [`KeyPool::status`].
    pub state: KeyState,
    /// When a running cooldown ends; `None` when not cooling.
    pub cooling_until: Option<Timestamp>,
    /// Rate limits in a row since the last success (drives the backoff).
    pub consecutive_errors: u32,
    /// The most recent failure.
    pub last_error: Option<KeyError>,
    /// When it happened.
    pub last_error_at: Option<Timestamp>,
    /// When a selection last handed the key out.
    pub last_used_at: Option<Timestamp>,
    /// How many selections handed the key out.
    pub request_count: u64,
    /// How many failures (429/529/401/403) were reported for it.
    pub failure_count: u64,
}

/// What a status means to the pool. Everything not listed changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FailureClass {
    /// 429, 529: rest the key, with exponential backoff.
    RateLimit,
    /// 401, 403: the key is bad; disable it.
    Auth,
}

impl FailureClass {
    fn of(status: u16) -> Option<Self> {
        match status {
            429 | 529 => Some(FailureClass::RateLimit),
            401 | 403 => Some(FailureClass::Auth),
            _ => None,
        }
    }
}

/// The shared API key pool.
///
/// All state sits behind one mutex. Every critical section is small (hash lookups, an
/// O(log n) pick, or an O(n) rebuild when the available set changed) and none performs I/O:
/// the loader, the disabler and the resolver are always called with the lock released. One lock
/// rather than one per provider keeps each decision atomic (a key cannot start cooling between
/// the availability check and the hand-out; a 401 cannot be acted on twice) at a cost that is
/// negligible next to an LLM request.
///
/// Time: callers pass the clock's reading. It should not go backwards, but concurrent callers
/// may pass readings a few microseconds apart; the effect is bounded by that skew (a cooldown
/// ended by a later reading stays ended for an earlier one).
///
/// Session bindings live until [`KeyPool::release_session`]: the app releases a chat's binding
/// when the chat is closed or deleted.
pub struct KeyPool {
    config: PoolConfig,
    loader: Arc<dyn KeyLoader>,
    disabler: Arc<dyn KeyDisabler>,
    resolver: Arc<dyn SecretResolver>,
    state: Mutex<State>,
    /// Signalled when a load finishes, for selections waiting on the same provider's load.
    loaded: Condvar,
}

#[derive(Default)]
struct State {
    /// Providers by slot. Slots are never reused, so a binding can refer to one by index.
    providers: Vec<ProviderState>,
    slots: IdMap<ProviderId, usize>,
    sessions: IdMap<SessionId, Binding>,
    /// Which provider slot a key belongs to, for the reports that name only a key.
    owners: IdMap<KeyId, usize>,
}

/// A session's key. `pos` is a cached position in the provider's key list, valid while the
/// provider's `epoch` equals `epoch`; the id is the truth.
struct Binding {
    provider: usize,
    key: KeyId,
    pos: usize,
    epoch: u64,
}

struct ProviderState {
    id: ProviderId,
    /// Bumped by every invalidation. Keys are fresh iff `loaded_at == Some(generation)`; a load
    /// that started at another generation is discarded, so a write that races a load is never
    /// hidden by stale data.
    generation: u64,
    loaded_at: Option<u64>,
    /// A load is in flight; other selections for this provider wait for it instead of loading
    /// the same rows again.
    loading: bool,
    /// Bumped at each install; invalidates the positions cached in bindings.
    epoch: u64,
    /// Keys in display order. Kept (and updated by reports) while stale, so health survives
    /// a reload: the new list takes over each surviving key's health.
    keys: Vec<PoolKey>,
    index: IdMap<KeyId, usize>,
    /// Positions of the available keys, in order: what the strategy's positions refer to.
    available: Vec<usize>,
    /// When `available` must be recomputed: the earliest cooldown expiry among usable keys,
    /// `Timestamp::MIN` after any change, `Timestamp::MAX` when nothing will change by itself.
    /// One comparison on the hot path detects both.
    rebuild_at: Timestamp,
    strategy: Box<dyn SelectionStrategy>,
    /// Reused buffer for the weights passed to the strategy.
    weights: Vec<u32>,
}

struct PoolKey {
    id: KeyId,
    label: Option<Arc<str>>,
    secret: Secret,
    /// `secret` is a `$NAME` reference, decided once at load rather than on every hand-out.
    env_ref: bool,
    enabled: bool,
    weight: u32,
    /// Enabled, not auth-blocked, not cooling, as of the last rebuild.
    available: bool,
    health: Health,
}

/// What the pool learned about a key at run time; carried across reloads.
#[derive(Clone, Debug, Default)]
struct Health {
    cooling_until: Option<Timestamp>,
    consecutive_errors: u32,
    last_error: Option<KeyError>,
    last_error_at: Option<Timestamp>,
    last_used_at: Option<Timestamp>,
    request_count: u64,
    failure_count: u64,
    auth_block: Option<AuthBlock>,
}

/// The provider rejected the key. While present the key is never handed out, whatever the
/// store says, so a key cannot slip through before the disable is persisted and reloaded.
#[derive(Clone, Copy, Debug)]
struct AuthBlock {
    /// The disabler returned Ok. From then on a reload reflects the write, so the first
    /// installed reload lifts the block and the store's `enabled` is the truth again (and a
    /// user who re-enables the key gets it back).
    persisted: bool,
}

const TS_MIN: Timestamp = Timestamp::from_millis(i64::MIN);
const TS_MAX: Timestamp = Timestamp::from_millis(i64::MAX);

/// A decision taken under the lock, completed (resolved) after it is released.
struct Handout {
    provider: usize,
    key_id: KeyId,
    label: Option<Arc<str>>,
    raw: Secret,
    env_ref: bool,
    rebound: bool,
}

impl KeyPool {
    /// A pool with no keys loaded yet; each provider is loaded on its first selection.
    pub fn new(
        config: PoolConfig,
        loader: Arc<dyn KeyLoader>,
        disabler: Arc<dyn KeyDisabler>,
        resolver: Arc<dyn SecretResolver>,
    ) -> Self {
        KeyPool {
            config,
            loader,
            disabler,
            resolver,
            state: Mutex::new(State::default()),
            loaded: Condvar::new(),
        }
    }

    /// The configuration the pool was built with.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// How often the app should call [`KeyPool::sweep`].
    pub fn sweep_interval(&self) -> Duration {
        self.config.sweep_interval
    }

    /// A key for `req`.
    ///
    /// With a session: its bound key while that key is available and not excluded; otherwise a
    /// new selection, to which the session is (re)bound. Without a session: a new selection.
    /// A hand-out counts as a use of the key (`request_count`, `last_used_at`).
    ///
    /// Loads the provider's keys first if they are not cached (the only I/O, done unlocked).
    pub fn select(
        &self,
        req: SelectionRequest<'_>,
        now: Timestamp,
    ) -> Result<Selection, PoolError> {
        let handout = {
            let mut state = self.state.lock();
            let slot = self.ready_slot(&mut state, req.provider)?;
            state
                .hand_out(slot, req, now)
                .map_err(|reason| PoolError::NoAvailableKey {
                    provider: req.provider.clone(),
                    reason,
                })?
        };
        self.resolve(handout, now)
    }

    /// The request with `key` succeeded: its cooldown and consecutive-failure count are cleared.
    pub fn report_success(&self, key: &KeyId, _now: Timestamp) {
        let mut state = self.state.lock();
        if let Some((ps, pos)) = state.key_mut(key) {
            let health = &mut ps.keys[pos].health;
            let was_cooling = health.cooling_until.take().is_some();
            health.consecutive_errors = 0;
            if was_cooling {
                ps.rebuild_at = TS_MIN;
            }
        }
    }

    /// The request with `failure.key` failed with `failure.status`.
    ///
    /// * 429, 529: the key cools down for `min(base · 2^(n−1), cap)`, n its consecutive
    ///   failures, or for the announced wait bounded by the cap.
    /// * 401, 403: the key is refused from now on and disabled in the store through the
    ///   disabler (called once, unlocked); the provider's cache is dropped.
    /// * anything else: nothing changes, and `Ok(None)` (no failover for this status).
    ///
    /// For the first two, returns the next key for the session (re-bound to it), excluding the
    /// failed key and `failure.exclude`, or `Ok(None)` when no key is left; [`KeyPool::select`]
    /// with the same request then tells why.
    pub fn report_failure(
        &self,
        failure: Failure<'_>,
        now: Timestamp,
    ) -> Result<Option<Selection>, PoolError> {
        let Some(class) = FailureClass::of(failure.status) else {
            return Ok(None);
        };
        if let Some(reason) = self.record_failure(&failure, class, now)? {
            self.disable(&failure, reason, now);
        }
        let mut exclude = Vec::with_capacity(failure.exclude.len() + 1);
        exclude.extend_from_slice(failure.exclude);
        if !exclude.iter().any(|k| k == failure.key) {
            exclude.push(failure.key.clone());
        }
        let req = SelectionRequest {
            provider: failure.provider,
            session: failure.session,
            exclude: &exclude,
        };
        match self.select(req, now) {
            Ok(selection) => Ok(Some(selection)),
            Err(PoolError::NoAvailableKey { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// Forgets the session's binding (the chat was closed or deleted).
    pub fn release_session(&self, session: &SessionId) {
        self.state.lock().sessions.remove(session);
    }

    /// The provider's keys changed in the store: the next selection reloads them. Health
    /// (cooldowns, statistics) is kept for the keys that are still there.
    pub fn invalidate(&self, provider: &ProviderId) {
        let mut state = self.state.lock();
        if let Some(&slot) = state.slots.get(provider) {
            state.providers[slot].generation += 1;
        }
    }

    /// Ends the cooldowns that have expired by `now`.
    ///
    /// The consecutive-failure count is kept (only a success clears it), so a key that is
    /// rate-limited again right after resting backs off longer: that is what makes the
    /// backoff exponential. The original design dropped the count with the cooldown, which
    /// with a 30 s sweep meant the backoff rarely grew past 60 s.
    pub fn sweep(&self, now: Timestamp) {
        let mut state = self.state.lock();
        for ps in &mut state.providers {
            let mut changed = false;
            for key in &mut ps.keys {
                if key.health.cooling_until.is_some_and(|until| until <= now) {
                    key.health.cooling_until = None;
                    changed = true;
                }
            }
            if changed {
                ps.rebuild_at = TS_MIN;
            }
        }
    }

    /// Ends `key`'s cooldown and clears its consecutive failures (a user action).
    pub fn reset_cooldown(&self, key: &KeyId) {
        let mut state = self.state.lock();
        if let Some((ps, pos)) = state.key_mut(key) {
            let health = &mut ps.keys[pos].health;
            health.cooling_until = None;
            health.consecutive_errors = 0;
            ps.rebuild_at = TS_MIN;
        }
    }

    /// Lifts the pool's refusal of a key the provider rejected, for when the user re-enables it
    /// by hand but the disable never reached the store (the disabler failed), so the reload alone
    /// cannot tell the pool. A no-op for keys that are not blocked.
    pub fn clear_auth_block(&self, key: &KeyId) {
        let mut state = self.state.lock();
        if let Some((ps, pos)) = state.key_mut(key) {
            if ps.keys[pos].health.auth_block.take().is_some() {
                ps.rebuild_at = TS_MIN;
            }
        }
    }

    /// Every key of `provider` in display order, with its state as of `now` and its statistics.
    /// Loads the keys if they are not cached.
    pub fn status(
        &self,
        provider: &ProviderId,
        now: Timestamp,
    ) -> Result<Vec<KeyStatus>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        Ok(state.providers[slot]
            .keys
            .iter()
            .map(|key| key.status(now))
            .collect())
    }

    /// The slot of `provider`, its keys loaded and current: loads them (unlocked) if needed, or
    /// waits for a load of the same provider already in flight.
    fn ready_slot(
        &self,
        state: &mut MutexGuard<'_, State>,
        provider: &ProviderId,
    ) -> Result<usize, PoolError> {
        let slot = state.slot_of(provider, &self.config);
        loop {
            let ps = &mut state.providers[slot];
            if ps.loaded_at == Some(ps.generation) {
                return Ok(slot);
            }
            if ps.loading {
                self.loaded.wait(state);
                continue;
            }
            ps.loading = true;
            let generation = ps.generation;
            let loaded = MutexGuard::unlocked(state, || {
                panic::catch_unwind(AssertUnwindSafe(|| self.loader.load(provider)))
            });
            state.providers[slot].loading = false;
            self.loaded.notify_all();
            match loaded {
                Err(panicked) => panic::resume_unwind(panicked),
                Ok(Err(source)) => {
                    return Err(PoolError::Load {
                        provider: provider.clone(),
                        source,
                    });
                }
                Ok(Ok(entries)) if state.providers[slot].generation == generation => {
                    state.install(slot, entries);
                }
                // Invalidated while loading: what we read may predate the write. Load again.
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Updates the key's health for a 429/529/401/403 and says whether to call the disabler.
    ///
    /// Applies to the provider's current keys (loading them if they are stale), so a report
    /// for a key deleted meanwhile changes nothing.
    fn record_failure(
        &self,
        failure: &Failure<'_>,
        class: FailureClass,
        now: Timestamp,
    ) -> Result<Option<DisableReason>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, failure.provider)?;
        let ps = &mut state.providers[slot];
        if class == FailureClass::Auth {
            ps.generation += 1; // drop the cache: the store is about to change
        }
        let Some(&pos) = ps.index.get(failure.key) else {
            return Ok(None);
        };
        let key = &mut ps.keys[pos];
        let health = &mut key.health;
        health.failure_count += 1;
        health.last_error_at = Some(now);
        ps.rebuild_at = TS_MIN;
        match class {
            FailureClass::RateLimit => {
                health.last_error = Some(KeyError::RateLimited {
                    status: failure.status,
                });
                health.consecutive_errors = health.consecutive_errors.saturating_add(1);
                let rest = self
                    .config
                    .cooldown_for(health.consecutive_errors, failure.retry_after);
                // Never shorten a running cooldown (an announced short wait after a long backoff).
                health.cooling_until = health.cooling_until.max(Some(now + rest));
                Ok(None)
            }
            FailureClass::Auth => {
                health.last_error = Some(KeyError::AuthRejected {
                    status: failure.status,
                });
                // Concurrent 401s for one key: the first sets the block and calls the disabler,
                // the others see the block. A key already off needs no second write.
                let first = key.enabled && health.auth_block.is_none();
                if first {
                    health.auth_block = Some(AuthBlock { persisted: false });
                }
                Ok(first.then_some(DisableReason::AuthRejected {
                    status: failure.status,
                }))
            }
        }
    }

    /// Persists an auth rejection through the disabler, unlocked, then lets reloads lift the block.
    fn disable(&self, failure: &Failure<'_>, reason: DisableReason, now: Timestamp) {
        match self
            .disabler
            .disable(failure.key, failure.provider, reason, now)
        {
            Ok(()) => {
                let mut state = self.state.lock();
                if let Some(&slot) = state.slots.get(failure.provider) {
                    let ps = &mut state.providers[slot];
                    // Loads that started before the write must not lift the block.
                    ps.generation += 1;
                    if let Some(&pos) = ps.index.get(failure.key) {
                        if let Some(block) = &mut ps.keys[pos].health.auth_block {
                            block.persisted = true;
                        }
                    }
                }
            }
            Err(error) => tracing::error!(
                key = %failure.key,
                provider = %failure.provider,
                %reason,
                %error,
                "could not record the key as disabled; the pool keeps refusing it"
            ),
        }
    }

    /// Resolves a hand-out's `$NAME`, unlocked; records a failure on the key if it has no value.
    /// Plain values skip the resolver: only references need resolving, and the bound-session
    /// path stays free of a virtual call and a second reference-count round trip.
    fn resolve(&self, handout: Handout, now: Timestamp) -> Result<Selection, PoolError> {
        let resolved = if handout.env_ref {
            self.resolver.resolve(&handout.raw)
        } else {
            Ok(handout.raw)
        };
        match resolved {
            Ok(secret) => Ok(Selection {
                key_id: handout.key_id,
                label: handout.label,
                secret,
                rebound: handout.rebound,
            }),
            Err(cause) => {
                let var = cause.var().to_owned();
                tracing::warn!(
                    key = %KeyName(&handout.key_id, handout.label.as_deref()),
                    %cause,
                    "API key reference cannot be resolved"
                );
                let mut state = self.state.lock();
                let ps = &mut state.providers[handout.provider];
                if let Some(&pos) = ps.index.get(&handout.key_id) {
                    let health = &mut ps.keys[pos].health;
                    health.last_error = Some(KeyError::UnresolvedEnv { var: var.clone() });
                    health.last_error_at = Some(now);
                }
                Err(PoolError::UnresolvedEnv {
                    key_id: handout.key_id,
                    label: handout.label.map(|l| l.to_string()),
                    var,
                    cause,
                })
            }
        }
    }
}

impl State {
    fn slot_of(&mut self, provider: &ProviderId, config: &PoolConfig) -> usize {
        if let Some(&slot) = self.slots.get(provider) {
            return slot;
        }
        let slot = self.providers.len();
        self.providers.push(ProviderState {
            id: provider.clone(),
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
        });
        self.slots.insert(provider.clone(), slot);
        slot
    }

    fn key_mut(&mut self, key: &KeyId) -> Option<(&mut ProviderState, usize)> {
        let &slot = self.owners.get(key)?;
        let ps = &mut self.providers[slot];
        let &pos = ps.index.get(key)?;
        Some((ps, pos))
    }

    /// Replaces the provider's keys with a fresh load, carrying each surviving key's health over.
    fn install(&mut self, slot: usize, mut entries: Vec<KeyEntry>) {
        let ps = &mut self.providers[slot];
        entries.retain(|e| {
            let ours = e.provider_id == ps.id;
            if !ours {
                tracing::warn!(key = %e.id, provider = %ps.id, "loader returned a key of another provider; ignored");
            }
            ours
        });
        entries.sort_by(|a, b| {
            (a.sort_order, a.created_at, &a.id).cmp(&(b.sort_order, b.created_at, &b.id))
        });

        let old_index = std::mem::take(&mut ps.index);
        let mut old_keys: Vec<Option<PoolKey>> =
            std::mem::take(&mut ps.keys).into_iter().map(Some).collect();
        ps.keys.reserve(entries.len());
        for entry in entries {
            if ps.index.contains_key(&entry.id) {
                tracing::warn!(key = %entry.id, "loader returned a key twice; the first in display order is used");
                continue;
            }
            let mut health = old_index
                .get(&entry.id)
                .and_then(|&pos| old_keys[pos].take())
                .map(|old| old.health)
                .unwrap_or_default();
            if health.auth_block.is_some_and(|b| b.persisted) {
                health.auth_block = None;
            }
            ps.index.insert(entry.id.clone(), ps.keys.len());
            self.owners.insert(entry.id.clone(), slot);
            ps.keys.push(PoolKey {
                id: entry.id,
                label: entry.label.map(Arc::from),
                env_ref: entry.api_key.env_var().is_some(),
                secret: entry.api_key,
                enabled: entry.enabled,
                weight: entry.weight.clamp(1, 100),
                available: false,
                health,
            });
        }
        for (id, pos) in old_index {
            if old_keys[pos].is_some() && self.owners.get(&id) == Some(&slot) {
                self.owners.remove(&id); // deleted from the store
            }
        }
        ps.loaded_at = Some(ps.generation);
        ps.epoch += 1;
        ps.rebuild_at = TS_MIN;
    }

    /// The decision for one selection: the bound key if still good, else a new pick (and bind).
    fn hand_out(
        &mut self,
        slot: usize,
        req: SelectionRequest<'_>,
        now: Timestamp,
    ) -> Result<Handout, Unavailability> {
        let ps = &mut self.providers[slot];
        if now >= ps.rebuild_at {
            ps.rebuild(now);
        }
        let excluded = |id: &KeyId| req.exclude.iter().any(|x| x == id);

        let mut binding = match req.session {
            Some(session) => self.sessions.get_mut(session),
            None => None,
        };
        if let Some(b) = binding.as_deref_mut() {
            if b.provider == slot {
                if b.epoch != ps.epoch {
                    b.pos = ps.index.get(&b.key).copied().unwrap_or(usize::MAX);
                    b.epoch = ps.epoch;
                }
                if let Some(key) = ps.keys.get(b.pos) {
                    if key.available && !excluded(&key.id) {
                        return Ok(ps.hand_out(slot, b.pos, now, false));
                    }
                }
            }
        }

        let keys = &ps.keys;
        let available = &ps.available;
        let picked = if req.exclude.is_empty() {
            ps.strategy.pick(&|_| true)
        } else {
            ps.strategy.pick(&|i| !excluded(&keys[available[i]].id))
        };
        let Some(pos) = picked.map(|i| ps.available[i]) else {
            return Err(ps.why_unavailable(now));
        };
        let rebound = binding.is_some();
        let fresh = Binding {
            provider: slot,
            key: ps.keys[pos].id.clone(),
            pos,
            epoch: ps.epoch,
        };
        match (binding, req.session) {
            (Some(b), _) => *b = fresh,
            (None, Some(session)) => {
                self.sessions.insert(session.clone(), fresh);
            }
            (None, None) => {}
        }
        Ok(ps.hand_out(slot, pos, now, rebound))
    }
}

impl ProviderState {
    /// Recomputes the available set and the strategy's view of it. O(n); runs only after a
    /// change or when a cooldown expires.
    fn rebuild(&mut self, now: Timestamp) {
        self.available.clear();
        self.weights.clear();
        self.rebuild_at = TS_MAX;
        for (pos, key) in self.keys.iter_mut().enumerate() {
            let usable = key.enabled && key.health.auth_block.is_none();
            let cooling_until = key.health.cooling_until.filter(|&until| until > now);
            key.available = usable && cooling_until.is_none();
            if key.available {
                self.available.push(pos);
                self.weights.push(key.weight);
            }
            if let (true, Some(until)) = (usable, cooling_until) {
                self.rebuild_at = self.rebuild_at.min(until);
            }
        }
        self.strategy.reset(&self.weights);
    }

    fn hand_out(&mut self, slot: usize, pos: usize, now: Timestamp, rebound: bool) -> Handout {
        let key = &mut self.keys[pos];
        key.health.request_count += 1;
        key.health.last_used_at = Some(now);
        Handout {
            provider: slot,
            key_id: key.id.clone(),
            label: key.label.clone(),
            raw: key.secret.clone(),
            env_ref: key.env_ref,
            rebound,
        }
    }

    /// Why nothing was picked. Call after `rebuild` for the same `now`.
    fn why_unavailable(&self, now: Timestamp) -> Unavailability {
        if self.keys.is_empty() {
            return Unavailability::NoKeys;
        }
        if !self.available.is_empty() {
            return Unavailability::AllExcluded;
        }
        let first_free_at = self
            .keys
            .iter()
            .filter(|k| k.enabled && k.health.auth_block.is_none())
            .filter_map(|k| k.health.cooling_until)
            .min();
        match first_free_at {
            Some(first_free_at) => Unavailability::AllCooling {
                first_free_at,
                wait: first_free_at.saturating_duration_since(now),
            },
            None => Unavailability::AllDisabled {
                keys: self
                    .keys
                    .iter()
                    .map(|k| (k.id.clone(), k.label.as_deref().map(str::to_owned)))
                    .collect(),
            },
        }
    }
}

impl PoolKey {
    fn status(&self, now: Timestamp) -> KeyStatus {
        let h = &self.health;
        let cooling_until = h.cooling_until.filter(|&until| until > now);
        let state = if !self.enabled || h.auth_block.is_some() {
            KeyState::Disabled
        } else if cooling_until.is_some() {
            KeyState::Cooling
        } else {
            KeyState::Active
        };
        KeyStatus {
            key_id: self.id.clone(),
            label: self.label.as_deref().map(str::to_owned),
            weight: self.weight,
            state,
            cooling_until,
            consecutive_errors: h.consecutive_errors,
            last_error: h.last_error.clone(),
            last_error_at: h.last_error_at,
            last_used_at: h.last_used_at,
            request_count: h.request_count,
            failure_count: h.failure_count,
        }
    }
}
