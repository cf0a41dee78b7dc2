//! The pool: per-provider key sets, session bindings and the lock around them, and the
//! selections it hands out, each with the lease that holds its reservation.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::announced::Announced;
use crate::config::PoolConfig;
use crate::entry::{KeyEntry, KeyLoader};
use crate::error::{KeyName, PoolError, Unavailability};
use crate::group::GroupId;
use crate::hash::IdMap;
use crate::ids::{KeyId, ProviderId, SessionId};
use crate::provider::ProviderState;
use crate::request::{Demand, Failure, FailureOutcome, SelectionRequest};
use crate::secret::{Secret, SecretResolver};
use crate::status::KeyStatus;
use crate::team::{KeyFacts, LoadedKey, Merged, RemoteFact};
use crate::time::Timestamp;

/// The shared API key pool.
///
/// All state sits behind one mutex. Every critical section is small (hash lookups, an
/// O(log n) pick, or an O(n) rebuild when the available set changed) and none performs I/O:
/// the loader and the resolver are always called with the lock released. One lock rather than
/// one per provider keeps each decision atomic (a key cannot start cooling between the
/// availability check and the hand-out; a 401 cannot be acted on twice) at a cost that is
/// negligible next to an LLM request.
///
/// The pool never writes anywhere: a report answers what happened ([`FailureOutcome`]) and the
/// caller persists it. A key the provider rejected is refused at once, in memory, until a load
/// shows the store recorded the disable.
///
/// Time: callers pass the clock's reading. It should not go backwards, but concurrent callers
/// may pass readings a few microseconds apart; the effect is bounded by that skew (a cooldown
/// ended by a later reading stays ended for an earlier one).
///
/// Session bindings live until [`KeyPool::release_session`], until a sweep finds them idle past
/// [`PoolConfig::binding_idle`], or until [`PoolConfig::max_sessions`] newer ones push them out.
pub struct KeyPool {
    config: PoolConfig,
    loader: Arc<dyn KeyLoader>,
    resolver: Arc<dyn SecretResolver>,
    /// Shared with the leases of the selections handed out, which release their reservations.
    state: Arc<Mutex<State>>,
    /// Signalled when a load finishes, for selections waiting on the same provider's load.
    loaded: Condvar,
    /// [`PoolConfig::max_wait`], as the user last set it.
    max_wait_ms: std::sync::atomic::AtomicU64,
    /// [`PoolConfig::binding_idle`], as the user last set it.
    binding_idle_ms: std::sync::atomic::AtomicU64,
    /// Loads installed so far (any provider): see [`KeyPool::loads`].
    loads: std::sync::atomic::AtomicU64,
}

/// A key handed out for one request. It holds the request's reservation of the key's budgets
/// (its [`Lease`]) until it is dropped: drop it when the request is over.
#[derive(Debug)]
pub struct Selection {
    /// The key to report success or failure for.
    pub key_id: KeyId,
    /// Its label, for logs and messages.
    pub label: Option<Arc<str>>,
    /// How people know the key: its label, or the masked preview of the stored value (a `$NAME`
    /// reference as written). Never derived from a resolved value.
    pub name: Arc<str>,
    /// The resolved value to send (a `$NAME` reference is already replaced by its value).
    pub secret: Secret,
    /// True when the session was bound to another key (or provider) before this selection,
    /// i.e. the provider's prompt cache for this chat is lost.
    pub rebound: bool,
    /// The reservation of the key's budgets, released when the selection is dropped.
    pub lease: Lease,
}

/// A selection's reservation of its key's budgets (one request of its model's windows, its
/// estimated tokens, one of the key's concurrent slots), released when dropped: when the
/// request is over, however it ended. Empty, and free, for keys with nothing to reserve.
#[derive(Debug, Default)]
#[must_use = "dropping a lease ends the reservation at once"]
pub struct Lease {
    held: Option<Held>,
}

#[derive(Debug)]
struct Held {
    state: std::sync::Weak<Mutex<State>>,
    provider: usize,
    key: KeyId,
    /// The group the reservation was made in.
    group: GroupId,
    scope: Option<Arc<str>>,
    tokens: u32,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("State { .. }")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else { return };
        let Some(state) = held.state.upgrade() else { return };
        let mut state = state.lock();
        state.providers[held.provider].release(&held.key, &held.group, held.scope.as_deref(), held.tokens);
    }
}

#[derive(Default)]
struct State {
    /// The state's own handle, for the leases it hands out (set when the pool is built).
    leases: std::sync::Weak<Mutex<State>>,
    /// Providers by slot. Slots are never reused, so a binding can refer to one by index.
    providers: Vec<ProviderState>,
    slots: IdMap<ProviderId, usize>,
    sessions: IdMap<SessionId, Binding>,
    /// Sessions in the order they were bound, each with its last use when queued: the eviction
    /// order once there are too many (an entry whose session was used since goes to the back
    /// again, one used never is evicted; a clock-style approximation of least recently used).
    session_order: std::collections::VecDeque<(SessionId, Timestamp)>,
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
    /// The last hand-out through the binding; idle longer than the provider's cache lives, the
    /// binding keeps nothing warm and the next request picks afresh.
    last_used: Timestamp,
}

/// A decision taken under the lock, completed (resolved) after it is released.
struct Handout {
    provider: usize,
    key_id: KeyId,
    label: Option<Arc<str>>,
    name: Arc<str>,
    raw: Secret,
    env_ref: bool,
    rebound: bool,
    lease: Lease,
}

impl KeyPool {
    /// A pool with no keys loaded yet; each provider is loaded on its first selection.
    pub fn new(config: PoolConfig, loader: Arc<dyn KeyLoader>, resolver: Arc<dyn SecretResolver>) -> Self {
        let state = Arc::new_cyclic(|me| Mutex::new(State { leases: me.clone(), ..State::default() }));
        let max_wait_ms =
            std::sync::atomic::AtomicU64::new(u64::try_from(config.max_wait.as_millis()).unwrap_or(u64::MAX));
        let binding_idle_ms =
            std::sync::atomic::AtomicU64::new(u64::try_from(config.binding_idle.as_millis()).unwrap_or(u64::MAX));
        let loads = std::sync::atomic::AtomicU64::new(0);
        KeyPool { config, loader, resolver, state, loaded: Condvar::new(), max_wait_ms, binding_idle_ms, loads }
    }

    /// The configuration the pool was built with.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// How long a request may wait for a key to free up (see [`PoolConfig::max_wait`]); the
    /// user can change it while the app runs.
    pub fn max_wait(&self) -> Duration {
        Duration::from_millis(self.max_wait_ms.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Sets how long a request may wait for a key to free up.
    pub fn set_max_wait(&self, max_wait: Duration) {
        let ms = u64::try_from(max_wait.as_millis()).unwrap_or(u64::MAX);
        self.max_wait_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// How long a session's binding lasts without use (see [`PoolConfig::binding_idle`]); the
    /// user can change it while the app runs.
    pub fn binding_idle(&self) -> Duration {
        Duration::from_millis(self.binding_idle_ms.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Sets how long a session's binding lasts without use.
    pub fn set_binding_idle(&self, idle: Duration) {
        let ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        self.binding_idle_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// How often the app should call [`KeyPool::sweep`].
    pub fn sweep_interval(&self) -> Duration {
        self.config.sweep_interval
    }

    /// A key for `req`.
    ///
    /// With a session: its bound key while that key is available, not excluded and admitted by
    /// its budgets; otherwise a new selection, to which the session is (re)bound. Without a
    /// session: a new selection. A hand-out counts as a use of the key (`request_count`,
    /// `last_used_at`) and reserves what the request needs of its budgets until the selection is
    /// dropped.
    ///
    /// Loads the provider's keys first if they are not cached (the only I/O, done unlocked).
    pub fn select(&self, req: SelectionRequest<'_>, now: Timestamp) -> Result<Selection, PoolError> {
        let handout = {
            let mut state = self.state.lock();
            let slot = self.ready_slot(&mut state, req.provider)?;
            let handout = state
                .hand_out(slot, req, self.binding_idle(), now)
                .map_err(|reason| PoolError::NoAvailableKey { provider: req.provider.clone(), reason })?;
            state.evict_sessions(self.config.max_sessions);
            handout
        };
        self.resolve(handout, now)
    }

    /// The request with `key` was answered: its group's cooldown and consecutive-failure count
    /// (and `scope`'s) are cleared, and the windows the answer `announced` for `scope` become what
    /// the group has left.
    pub fn report_answer(&self, key: &KeyId, scope: Option<&str>, announced: &Announced) {
        let mut state = self.state.lock();
        if let Some(ps) = state.provider_of(key) {
            let changed = ps.key_and_group_mut(key).is_some_and(|(_, group)| group.answered(scope, announced));
            if changed || !announced.is_empty() {
                ps.touch();
            }
        }
    }

    /// The request with `failure.key` was refused; see [`crate::FailureKind`] for what each kind
    /// does. The pool acts at once in memory (the key is not handed out again while cooling or
    /// refused) and answers what the caller must persist; a retry is a new
    /// [`KeyPool::select`] excluding the keys already tried, which re-binds the session.
    ///
    /// Applies to the provider's current keys (loading them if they are stale), so a report
    /// for a key deleted meanwhile changes nothing.
    pub fn report_failure(&self, failure: Failure<'_>, now: Timestamp) -> Result<FailureOutcome, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, failure.provider)?;
        let ps = &mut state.providers[slot];
        let Some((key, group)) = ps.key_and_group_mut(failure.key) else {
            return Ok(FailureOutcome::Unchanged);
        };
        let outcome = key.record_failure(&failure, group, &self.config, now);
        ps.touch();
        Ok(outcome)
    }

    /// The out-of-credit keys of `provider` due for a probe at `now`, with their stored values
    /// (`$NAME` unresolved), for the app's background prober.
    pub fn due_probes(&self, provider: &ProviderId, now: Timestamp) -> Result<Vec<(KeyId, Secret)>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        Ok(state.providers[slot]
            .keys
            .iter()
            .filter(|key| key.probe_due(now))
            .map(|key| (key.id.clone(), key.secret.clone()))
            .collect())
    }

    /// A background probe of an out-of-credit key answered: `usable` returns it to rotation,
    /// otherwise it is probed again after a doubled interval (up to the cap).
    pub fn report_probe(&self, key: &KeyId, usable: bool, now: Timestamp) {
        let mut state = self.state.lock();
        if let Some(ps) = state.provider_of(key) {
            if ps.key_mut(key).is_some_and(|k| k.record_probe(usable, &self.config, now)) {
                ps.touch();
            }
        }
    }

    /// How many sessions are bound now (for diagnostics and measurements).
    pub fn session_count(&self) -> usize {
        self.state.lock().sessions.len()
    }

    /// Forgets the session's binding (the chat was deleted, or its binding expired).
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

    /// Ends the cooldowns (groups' and scopes') and daily quotas that have expired by `now`.
    ///
    /// The consecutive-failure count is kept (only a success clears it), so a key that is
    /// rate-limited again right after resting backs off longer: that is what makes the
    /// backoff exponential. The original design dropped the count with the cooldown, which
    /// with a 30 s sweep meant the backoff rarely grew past 60 s.
    pub fn sweep(&self, now: Timestamp) {
        let mut state = self.state.lock();
        let idle = self.binding_idle();
        state.sessions.retain(|_, binding| now.saturating_duration_since(binding.last_used) <= idle);
        let State { sessions, session_order, .. } = &mut *state;
        session_order.retain(|(session, _)| sessions.contains_key(session));
        for ps in &mut state.providers {
            if ps.expire(now) {
                ps.touch();
            }
        }
    }

    /// Ends the cooldown of `key`'s group, of each of its scopes and their daily quotas, and
    /// clears the consecutive failures (a user action; every key of the group serves again).
    pub fn reset_cooldown(&self, key: &KeyId) {
        let mut state = self.state.lock();
        if let Some(ps) = state.provider_of(key) {
            if let Some((_, group)) = ps.key_and_group_mut(key) {
                group.reset();
                ps.touch();
            }
        }
    }

    /// Lifts the pool's refusal of a key the provider rejected, for when the user enables it again
    /// by hand: the store's `enabled` is the truth from then on. A no-op for keys not refused.
    pub fn clear_auth_block(&self, key: &KeyId) {
        let mut state = self.state.lock();
        if let Some(ps) = state.provider_of(key) {
            if ps.key_mut(key).is_some_and(|k| k.lift_refusal()) {
                ps.touch();
            }
        }
    }

    /// The stored values of `provider`'s keys (`$NAME` references unresolved), for redacting them
    /// from upstream text. Loads the keys if they are not cached.
    pub fn secrets(&self, provider: &ProviderId) -> Result<Vec<Secret>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        Ok(state.providers[slot].keys.iter().map(|key| key.secret.clone()).collect())
    }

    /// The stored values of `provider`'s keys (`$NAME` unresolved), each with its key's id: for
    /// background reads about each key (its balance).
    pub fn secrets_by_key(&self, provider: &ProviderId) -> Result<Vec<(KeyId, Secret)>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        Ok(state.providers[slot].keys.iter().map(|key| (key.id.clone(), key.secret.clone())).collect())
    }

    /// The stored values of `provider`'s keys, as [`KeyPool::secrets`], but only when they may
    /// have changed since the load numbered `known` (`None` when nothing is known): the number of
    /// the current load, and the values when it is another. For callers that keep something made
    /// of the values (a redactor for thousands of keys) and rebuild it only when they change.
    pub fn secrets_since(
        &self,
        provider: &ProviderId,
        known: Option<u64>,
    ) -> Result<(u64, Option<Vec<Secret>>), PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        let ps = &state.providers[slot];
        let changed = known != Some(ps.epoch);
        Ok((ps.epoch, changed.then(|| ps.keys.iter().map(|key| key.secret.clone()).collect())))
    }

    /// Every key of `provider` in display order, with its state as of `now` and its statistics.
    /// Loads the keys if they are not cached.
    pub fn status(&self, provider: &ProviderId, now: Timestamp) -> Result<Vec<KeyStatus>, PoolError> {
        let mut state = self.state.lock();
        let slot = self.ready_slot(&mut state, provider)?;
        let ps = &state.providers[slot];
        Ok(ps.keys.iter().map(|key| key.status(&ps.groups[key.group].health, now)).collect())
    }

    /// Loads `provider`'s keys if they are not cached, as a selection would first: for a layer
    /// that must see them (and merge what it knows of them) before the first selection.
    pub fn load(&self, provider: &ProviderId) -> Result<(), PoolError> {
        let mut state = self.state.lock();
        self.ready_slot(&mut state, provider).map(|_| ())
    }

    /// The key `session` is bound to at `now`, if its binding is live (not idle past
    /// [`KeyPool::binding_idle`]).
    pub fn bound_key(&self, session: &SessionId, now: Timestamp) -> Option<KeyId> {
        let state = self.state.lock();
        let binding = state.sessions.get(session)?;
        (now.saturating_duration_since(binding.last_used) <= self.binding_idle()).then(|| binding.key.clone())
    }

    /// Another member of the team bound `session` to `key` at `now`: this pool's binding follows
    /// (made if the session had none), so the conversation stays on one key whichever member
    /// serves it. Returns whether the binding changed; nothing changes for a key the pool has not
    /// loaded.
    pub fn merge_binding(&self, session: &SessionId, key: &KeyId, now: Timestamp) -> bool {
        let mut state = self.state.lock();
        let Some(&slot) = state.owners.get(key) else { return false };
        let ps = &state.providers[slot];
        let Some(&pos) = ps.index.get(key) else { return false };
        let fresh = Binding { provider: slot, key: ps.keys[pos].id.clone(), pos, epoch: ps.epoch, last_used: now };
        match state.sessions.get_mut(session) {
            Some(binding) if binding.provider == slot && binding.key == *key => {
                binding.last_used = binding.last_used.max(now);
                return false;
            }
            Some(binding) => *binding = fresh,
            None => {
                state.sessions.insert(session.clone(), fresh);
                state.session_order.push_back((session.clone(), now));
                state.evict_sessions(self.config.max_sessions);
            }
        }
        true
    }

    /// What the pool knows about `key` and `scope` of its quota group at `now`, for the other
    /// members of a team; `None` for a key it has not loaded.
    pub fn facts(&self, key: &KeyId, scope: Option<&str>, now: Timestamp) -> Option<KeyFacts> {
        let mut state = self.state.lock();
        let ps = state.provider_of(key)?;
        let &pos = ps.index.get(key)?;
        let key = &ps.keys[pos];
        Some(key.facts(&ps.id, &ps.groups[key.group].health, scope, now))
    }

    /// Merges what another member of the team learned about `key` (or its quota group) at `now`,
    /// bounded by this pool's own rules ([`crate::team`]). A key the pool has not loaded is not
    /// changed. The caller persists a [`Merged::Disabled`] as it would a
    /// [`FailureOutcome::Disabled`].
    pub fn merge(&self, key: &KeyId, fact: RemoteFact<'_>, now: Timestamp) -> Merged {
        let mut state = self.state.lock();
        let Some(ps) = state.provider_of(key) else { return Merged::Unchanged };
        let Some((pool_key, group)) = ps.key_and_group_mut(key) else { return Merged::Unchanged };
        let merged = pool_key.merge(fact, group, &self.config, now);
        if merged != Merged::Unchanged {
            ps.touch();
        }
        merged
    }

    /// Every key of the providers loaded so far, for the layer that names keys to a team.
    pub fn loaded_keys(&self) -> Vec<LoadedKey> {
        let state = self.state.lock();
        let loaded = state.providers.iter().filter(|ps| ps.loaded_at.is_some());
        loaded
            .flat_map(|ps| {
                ps.keys.iter().map(|key| LoadedKey {
                    provider: ps.id.clone(),
                    key: key.id.clone(),
                    secret: key.secret.clone(),
                    quota_group: key.quota_group.clone(),
                    sealed: key.sealed,
                })
            })
            .collect()
    }

    /// How many loads (of any provider) were installed so far: when it moves,
    /// [`KeyPool::loaded_keys`] may say something new.
    pub fn loads(&self) -> u64 {
        self.loads.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The slot of `provider`, its keys loaded and current: loads them (unlocked) if needed, or
    /// waits for a load of the same provider already in flight.
    fn ready_slot(&self, state: &mut MutexGuard<'_, State>, provider: &ProviderId) -> Result<usize, PoolError> {
        let slot = state.slot_of(provider, &self.config);
        loop {
            let ps = &mut state.providers[slot];
            if ps.is_fresh() {
                return Ok(slot);
            }
            if ps.loading {
                self.loaded.wait(state);
                continue;
            }
            ps.loading = true;
            let generation = ps.generation;
            let loaded =
                MutexGuard::unlocked(state, || panic::catch_unwind(AssertUnwindSafe(|| self.loader.load(provider))));
            state.providers[slot].loading = false;
            self.loaded.notify_all();
            match loaded {
                Err(panicked) => panic::resume_unwind(panicked),
                Ok(Err(source)) => return Err(PoolError::Load { provider: provider.clone(), source }),
                Ok(Ok(entries)) if state.providers[slot].generation == generation => {
                    state.install(slot, entries);
                    self.loads.fetch_add(1, std::sync::atomic::Ordering::Release);
                }
                // Invalidated while loading: what we read may predate the write. Load again.
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Resolves a hand-out's `$NAME`, unlocked; records a failure on the key if it has no value.
    /// Plain values skip the resolver: only references need resolving, and the bound-session
    /// path stays free of a virtual call and a second reference-count round trip.
    fn resolve(&self, handout: Handout, now: Timestamp) -> Result<Selection, PoolError> {
        let resolved = if handout.env_ref { self.resolver.resolve(&handout.raw) } else { Ok(handout.raw) };
        match resolved {
            Ok(secret) => Ok(Selection {
                key_id: handout.key_id,
                label: handout.label,
                name: handout.name,
                secret,
                rebound: handout.rebound,
                lease: handout.lease,
            }),
            Err(cause) => {
                let var = cause.var().to_owned();
                tracing::warn!(
                    key = %KeyName(&handout.key_id, handout.label.as_deref()),
                    %cause,
                    "API key reference cannot be resolved"
                );
                // The hand-out's reservation ends with it (after the lock below is released).
                let lease = handout.lease;
                let mut state = self.state.lock();
                if let Some(key) = state.providers[handout.provider].key_mut(&handout.key_id) {
                    key.record_unresolved(var.clone(), now);
                }
                drop(state);
                drop(lease);
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
        self.providers.push(ProviderState::new(provider.clone(), config));
        self.slots.insert(provider.clone(), slot);
        slot
    }

    /// Unbinds the least recently used sessions until at most `max` are bound. Amortized O(1) per
    /// binding: each queue entry is looked at once per trip to the front.
    fn evict_sessions(&mut self, max: usize) {
        // Entries of sessions released meanwhile are dropped once they are half the queue.
        if self.session_order.len() > 2 * self.sessions.len() + 64 {
            let sessions = &self.sessions;
            self.session_order.retain(|(session, _)| sessions.contains_key(session));
        }
        while self.sessions.len() > max {
            let Some((session, queued_at)) = self.session_order.pop_front() else { return };
            match self.sessions.get(&session) {
                // Used since it was queued: it goes to the back with its last use.
                Some(binding) if binding.last_used > queued_at => {
                    let last_used = binding.last_used;
                    self.session_order.push_back((session, last_used));
                }
                Some(_) => {
                    self.sessions.remove(&session);
                }
                None => {} // released meanwhile
            }
        }
    }

    fn provider_of(&mut self, key: &KeyId) -> Option<&mut ProviderState> {
        let &slot = self.owners.get(key)?;
        Some(&mut self.providers[slot])
    }

    fn install(&mut self, slot: usize, entries: Vec<KeyEntry>) {
        let ps = &mut self.providers[slot];
        for gone in ps.install(entries) {
            if self.owners.get(&gone) == Some(&slot) {
                self.owners.remove(&gone); // deleted from the store
            }
        }
        for key in &ps.keys {
            self.owners.insert(key.id.clone(), slot);
        }
    }

    /// The decision for one selection: the bound key if still good, else a new pick (and bind).
    fn hand_out(
        &mut self,
        slot: usize,
        req: SelectionRequest<'_>,
        idle: Duration,
        now: Timestamp,
    ) -> Result<Handout, Unavailability> {
        // Borrowed, not cloned: only a hand-out that reserves takes its own reference.
        let leases = &self.leases;
        let ps = &mut self.providers[slot];
        let mut binding = req.session.and_then(|session| self.sessions.get_mut(session));
        // Idle past the prompt cache's lifetime, a binding keeps nothing warm: pick afresh.
        let stale = binding.as_ref().is_some_and(|b| now.saturating_duration_since(b.last_used) > idle);
        if let Some(b) = binding.as_deref_mut().filter(|b| b.provider == slot && !stale) {
            if b.epoch != ps.epoch {
                b.pos = ps.index.get(&b.key).copied().unwrap_or(usize::MAX);
                b.epoch = ps.epoch;
            }
            if ps.can_serve(b.pos, req.exclude, &req.demand, now) {
                b.last_used = now;
                return Ok(hand_out(ps, slot, b.pos, &req.demand, leases, now, false));
            }
        }

        // A session with no live binding may name the key it had (a chat remembers it across
        // restarts): it goes back to that key if the key can serve.
        let preferred = (binding.is_none() || stale)
            .then_some(req.preferred)
            .flatten()
            .and_then(|key| ps.index.get(key).copied())
            .filter(|&pos| ps.can_serve(pos, req.exclude, &req.demand, now));
        let picked = match preferred {
            Some(pos) => Some(pos),
            None => ps.pick(req.exclude, &req.demand, now),
        };
        let Some(pos) = picked else {
            return Err(ps.why_unavailable(req.exclude, &req.demand, now));
        };
        let rebound = binding.is_some() && !stale;
        let fresh = Binding { provider: slot, key: ps.keys[pos].id.clone(), pos, epoch: ps.epoch, last_used: now };
        match (binding, req.session) {
            (Some(b), _) => *b = fresh,
            (None, Some(session)) => {
                self.sessions.insert(session.clone(), fresh);
                self.session_order.push_back((session.clone(), now));
            }
            (None, None) => {}
        }
        Ok(hand_out(ps, slot, pos, &req.demand, leases, now, rebound))
    }
}

fn hand_out(
    ps: &mut ProviderState,
    slot: usize,
    pos: usize,
    demand: &Demand<'_>,
    leases: &std::sync::Weak<Mutex<State>>,
    now: Timestamp,
    rebound: bool,
) -> Handout {
    let reserve = ps.keys[pos].needs_lease(demand);
    ps.record_hand_out(pos, demand, reserve, now);
    let group = reserve.then(|| ps.group_id(pos).clone());
    let scope = demand.scope.filter(|_| reserve).map(|scope| ps.scope(scope));
    let key = &ps.keys[pos];
    let lease = Lease {
        held: group.map(|group| Held {
            state: leases.clone(),
            provider: slot,
            key: key.id.clone(),
            group,
            scope,
            tokens: demand.tokens,
        }),
    };
    Handout {
        lease,
        provider: slot,
        key_id: key.id.clone(),
        label: key.label.clone(),
        name: key.name.clone(),
        raw: key.secret.clone(),
        env_ref: key.env_ref,
        rebound,
    }
}
