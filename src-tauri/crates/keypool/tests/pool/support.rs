//! A fake store and a fixture around the pool. Time is a `ManualClock`: no test sleeps.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use keypool::*;

pub const T0: Timestamp = Timestamp::from_millis(1_700_000_000_000);

type Hook = Box<dyn FnMut(&KeyPool) + Send>;

/// An in-memory stand-in for the SQLite store: loads count, disables are recorded and, like the
/// real store, turn `enabled` off.
#[derive(Default)]
pub struct FakeStore {
    keys: Mutex<Vec<KeyEntry>>,
    loads: AtomicUsize,
    disables: Mutex<Vec<(KeyId, ProviderId, DisableReason, Timestamp)>>,
    fail_disables: AtomicBool,
    fail_loads: AtomicBool,
    /// Run inside `load` / `disable`, with the pool, to simulate concurrent writers or to prove
    /// that the pool's lock is not held.
    on_load: Mutex<Option<Hook>>,
    on_disable: Mutex<Option<Hook>>,
    pool: OnceLock<Weak<KeyPool>>,
}

impl FakeStore {
    pub fn new(keys: Vec<KeyEntry>) -> Arc<Self> {
        Arc::new(FakeStore { keys: Mutex::new(keys), ..FakeStore::default() })
    }

    pub fn loads(&self) -> usize {
        self.loads.load(Ordering::SeqCst)
    }

    pub fn disabled_keys(&self) -> Vec<KeyId> {
        self.disables.lock().unwrap().iter().map(|d| d.0.clone()).collect()
    }

    pub fn disables(&self) -> Vec<(KeyId, ProviderId, DisableReason, Timestamp)> {
        self.disables.lock().unwrap().clone()
    }

    pub fn set_enabled(&self, id: &str, enabled: bool) {
        let mut keys = self.keys.lock().unwrap();
        keys.iter_mut().filter(|k| k.id.as_str() == id).for_each(|k| k.enabled = enabled);
    }

    pub fn remove(&self, id: &str) {
        self.keys.lock().unwrap().retain(|k| k.id.as_str() != id);
    }

    pub fn insert(&self, entry: KeyEntry) {
        self.keys.lock().unwrap().push(entry);
    }

    pub fn fail_disables(&self, fail: bool) {
        self.fail_disables.store(fail, Ordering::SeqCst);
    }

    pub fn fail_loads(&self, fail: bool) {
        self.fail_loads.store(fail, Ordering::SeqCst);
    }

    pub fn on_load(&self, hook: impl FnMut(&KeyPool) + Send + 'static) {
        *self.on_load.lock().unwrap() = Some(Box::new(hook));
    }

    pub fn on_disable(&self, hook: impl FnMut(&KeyPool) + Send + 'static) {
        *self.on_disable.lock().unwrap() = Some(Box::new(hook));
    }

    fn run(&self, hook: &Mutex<Option<Hook>>) {
        let pool = self.pool.get().and_then(Weak::upgrade);
        if let (Some(hook), Some(pool)) = (hook.lock().unwrap().as_mut(), pool) {
            hook(&pool);
        }
    }
}

impl KeyLoader for FakeStore {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        let keys: Vec<KeyEntry> =
            self.keys.lock().unwrap().iter().filter(|k| &k.provider_id == provider).cloned().collect();
        self.run(&self.on_load);
        if self.fail_loads.load(Ordering::SeqCst) {
            return Err(LoadError::new("database is locked"));
        }
        Ok(keys)
    }
}

impl FakeStore {
    /// What the app's write path does with a [`FailureOutcome::Disabled`]: record it, switch the
    /// key off (unless the write is made to fail) and drop the pool's cache.
    pub fn persist_disable(&self, key: &KeyId, provider: &ProviderId, reason: DisableReason, at: Timestamp) {
        self.disables.lock().unwrap().push((key.clone(), provider.clone(), reason, at));
        self.run(&self.on_disable);
        if self.fail_disables.load(Ordering::SeqCst) {
            return;
        }
        self.set_enabled(key.as_str(), false);
        if let Some(pool) = self.pool.get().and_then(Weak::upgrade) {
            pool.invalidate(provider);
        }
    }
}

pub fn entry(provider: &str, id: &str, weight: u32, sort_order: i64) -> KeyEntry {
    KeyEntry {
        id: KeyId::from(id),
        provider_id: ProviderId::from(provider),
        label: Some(format!("label-{id}")),
        api_key: Secret::from(format!("sk-secret-value-of-{id}-0123456789")),
        enabled: true,
        weight,
        sort_order,
        created_at: T0,
        limits: UserLimits::default(),
        sealed: false,
        quota_group: None,
    }
}

/// Keys named A, B, C, … of provider "openai", in that display order.
pub fn keys(weights: &[u32]) -> Vec<KeyEntry> {
    weights.iter().enumerate().map(|(i, &w)| entry("openai", &name(i), w, i as i64)).collect()
}

pub fn name(i: usize) -> String {
    char::from(b'A' + i as u8).to_string()
}

pub struct Fixture {
    pub store: Arc<FakeStore>,
    pub pool: Arc<KeyPool>,
    pub clock: ManualClock,
    pub openai: ProviderId,
}

impl Fixture {
    pub fn new(weights: &[u32]) -> Self {
        Self::build(PoolConfig::default(), keys(weights), MapResolver::new())
    }

    pub fn build(config: PoolConfig, keys: Vec<KeyEntry>, resolver: MapResolver) -> Self {
        let store = FakeStore::new(keys);
        let pool = Arc::new(KeyPool::new(config, store.clone(), Arc::new(resolver)));
        let _ = store.pool.set(Arc::downgrade(&pool));
        Fixture { store, pool, clock: ManualClock::new(T0), openai: ProviderId::from("openai") }
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// The key a session-less selection hands out.
    pub fn pick(&self) -> String {
        self.pool
            .select(SelectionRequest::new(&self.openai), self.now())
            .expect("a key is available")
            .key_id
            .to_string()
    }

    pub fn picks(&self, n: usize) -> String {
        (0..n).map(|_| self.pick()).collect::<Vec<_>>().join(" ")
    }

    pub fn pick_for(&self, session: &SessionId) -> Selection {
        self.pool
            .select(SelectionRequest::new(&self.openai).for_session(session), self.now())
            .expect("a key is available")
    }

    pub fn try_pick(&self) -> Result<Selection, PoolError> {
        self.pool.select(SelectionRequest::new(&self.openai), self.now())
    }

    pub fn fail(&self, key: &str, status: u16, session: Option<&SessionId>) -> Option<Selection> {
        self.fail_with(key, status, session, None)
    }

    pub fn fail_with(
        &self,
        key: &str,
        status: u16,
        session: Option<&SessionId>,
        retry_after: Option<Duration>,
    ) -> Option<Selection> {
        let key = KeyId::from(key);
        let _persisted = self.report(&key, status, retry_after)?;
        let tried = [key];
        let mut next = SelectionRequest::new(&self.openai).excluding(&tried);
        if let Some(session) = session {
            next = next.for_session(session);
        }
        self.pool.select(next, self.now()).ok()
    }

    /// Reports a refusal as the completion service does, persisting a disable; `None` when the
    /// status is not the pool's business.
    pub fn report(&self, key: &KeyId, status: u16, retry_after: Option<Duration>) -> Option<FailureOutcome> {
        self.report_sent(key, status, retry_after, None)
    }

    /// [`Fixture::report`] of a request sent at `sent_at`.
    pub fn report_sent(
        &self,
        key: &KeyId,
        status: u16,
        retry_after: Option<Duration>,
        sent_at: Option<Timestamp>,
    ) -> Option<FailureOutcome> {
        let kind = FailureKind::of_status(status, retry_after)?;
        let failure = Failure { provider: &self.openai, key, status, kind, scope: None, sent_at };
        let outcome = self.pool.report_failure(failure, self.now()).expect("the report itself succeeds");
        if let FailureOutcome::Disabled { reason } = outcome {
            self.store.persist_disable(key, &self.openai, reason, self.now());
        }
        Some(outcome)
    }

    pub fn status_of(&self, key: &str) -> KeyStatus {
        self.pool
            .status(&self.openai, self.now())
            .expect("status loads")
            .into_iter()
            .find(|s| s.key_id.as_str() == key)
            .unwrap_or_else(|| panic!("key {key} is in the status list"))
    }

    /// Simulates a write through the store's one write path: change, then invalidate.
    pub fn toggle(&self, key: &str, enabled: bool) {
        self.store.set_enabled(key, enabled);
        self.pool.invalidate(&self.openai);
    }
}

pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Whether another thread can take the pool's lock within a generous bound. Only waits when
/// the lock is wrongly held, so passing tests never wait.
pub fn pool_usable_from_another_thread(pool: &Weak<KeyPool>) -> bool {
    let pool = pool.upgrade().expect("the fixture is alive");
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        pool.release_session(&SessionId::from("probe"));
        let _ = done.send(());
    });
    finished.recv_timeout(Duration::from_secs(20)).is_ok()
}
