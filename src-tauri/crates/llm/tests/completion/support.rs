//! The rig every completion test uses: the fake provider on loopback, keys held in memory, a
//! manual clock.

pub use std::collections::HashMap;
use std::sync::{Arc, Mutex};
pub use std::time::Duration;

pub use keypool::{
    Blocker, DisableReason, KeyEntry, KeyId, KeyLoader, KeyPool, KeyState, LoadError, ManualClock, MapResolver,
    PoolConfig, ProviderId, Secret, SelectionRequest, SessionId, Timestamp, Unavailability, UserLimits,
};
pub use keypool_fake_provider::{FakeProvider, ProviderClock, RateLimit, Reply};
pub use keypool_llm::{
    AttemptOutcome, AttemptRecord, CancellationToken, ChatMessage, CompletionError, CompletionEvent, CompletionOutcome,
    CompletionRequest, CompletionService, NoKey, NoKeyReason, ProviderEndpoint, ProviderKind, Recorder, Role, SentWith,
    SimulatedTime, StopReason, Usage, Wait, Waiter,
};

pub const START: Timestamp = Timestamp::from_millis(1_800_000_000_000);

/// Keys held in memory, as the store would hold them; disabling flips `enabled`.
#[derive(Default)]
pub struct Keys {
    pub entries: Mutex<Vec<KeyEntry>>,
    pub disabled: Mutex<Vec<(String, u16)>>,
    /// Every attempt the service recorded, for the ledger.
    pub attempts: Mutex<Vec<AttemptRecord>>,
}

impl KeyLoader for Keys {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(self.entries.lock().unwrap().iter().filter(|e| &e.provider_id == provider).cloned().collect())
    }
}

/// Persists disables as the app's write path does: the entry is switched off.
impl Recorder for Keys {
    fn key_disabled(&self, _: &ProviderId, key: &KeyId, reason: DisableReason, _: Timestamp) {
        self.disabled.lock().unwrap().push((key.to_string(), reason.status()));
        for entry in self.entries.lock().unwrap().iter_mut().filter(|e| &e.id == key) {
            entry.enabled = false;
        }
    }

    fn attempt(&self, record: AttemptRecord) {
        self.attempts.lock().unwrap().push(record);
    }
}

pub struct Rig {
    pub fake: FakeProvider,
    pub keys: Arc<Keys>,
    pub clock: Arc<ManualClock>,
    pub service: CompletionService,
    pub kind: ProviderKind,
    pub provider_key: Option<Secret>,
}

impl Rig {
    /// A provider "p" of `kind` with one pooled key per `(label, weight)`; each key's value is
    /// `key-<label>`, so the fake's log shows which key was used.
    pub async fn new(kind: ProviderKind, keys: &[(&str, u32)]) -> Rig {
        Rig::with_env(kind, keys, MapResolver::new()).await
    }

    pub async fn with_env(kind: ProviderKind, keys: &[(&str, u32)], env: MapResolver) -> Rig {
        Rig::build(kind, keys, env, PoolConfig::default()).await
    }

    /// The rig with `config` for the pool; the fake provider's rate windows run on the rig's
    /// manual clock, so simulated waits refill them.
    pub async fn build(kind: ProviderKind, keys: &[(&str, u32)], env: MapResolver, config: PoolConfig) -> Rig {
        Rig::build_with(kind, keys, env, config, |clock| Arc::new(SimulatedTime::new(clock))).await
    }

    /// The rig whose provider deadlines pass when the test says so ([`Deadlines::pass`]), not
    /// with time: a test of a deadline neither sleeps nor races the network.
    pub async fn with_deadlines(kind: ProviderKind, keys: &[(&str, u32)]) -> (Rig, Arc<Deadlines>) {
        let deadlines = Arc::new(Deadlines::new());
        let waiter = deadlines.clone();
        let rig = Rig::build_with(kind, keys, MapResolver::new(), PoolConfig::default(), move |clock| {
            waiter.time.set(SimulatedTime::new(clock.clone())).ok();
            waiter.clock.set(clock).ok();
            waiter
        })
        .await;
        (rig, deadlines)
    }

    async fn build_with(
        kind: ProviderKind,
        keys: &[(&str, u32)],
        env: MapResolver,
        config: PoolConfig,
        waiter: impl FnOnce(Arc<ManualClock>) -> Arc<dyn Waiter>,
    ) -> Rig {
        let clock = Arc::new(ManualClock::new(START));
        let fake_clock = clock.clone();
        let fake =
            FakeProvider::start_with_clock(Arc::new(move || keypool::Clock::now(&*fake_clock).as_millis())).await;
        let store = Arc::new(Keys::default());
        for (i, (label, weight)) in keys.iter().enumerate() {
            let value = if label.starts_with('$') { label.to_string() } else { format!("key-{label}") };
            store.entries.lock().unwrap().push(KeyEntry {
                id: KeyId::new(format!("id-{label}")),
                provider_id: ProviderId::new("p"),
                label: Some(label.to_string()),
                api_key: Secret::new(value),
                enabled: true,
                weight: *weight,
                sort_order: i as i64,
                created_at: START,
                limits: UserLimits::default(),
                sealed: false,
                quota_group: None,
            });
        }
        let resolver = Arc::new(env);
        let pool = Arc::new(KeyPool::new(config, store.clone(), resolver.clone()));
        let waiter = waiter(clock.clone());
        let service = CompletionService::new(pool, clock.clone(), resolver, store.clone(), waiter);
        Rig { fake, keys: store, clock, service, kind, provider_key: None }
    }

    pub fn request(&self, session: &str, stream: bool) -> CompletionRequest {
        let base_url = match self.kind {
            ProviderKind::Openai
            | ProviderKind::Moonshot
            | ProviderKind::Siliconflow
            | ProviderKind::Groq
            | ProviderKind::Xai
            | ProviderKind::Mistral
            | ProviderKind::Together
            | ProviderKind::Fireworks
            | ProviderKind::Lmstudio
            | ProviderKind::Azure
            | ProviderKind::Bedrock => format!("{}/v1", self.fake.url()),
            ProviderKind::Openrouter => format!("{}/api/v1", self.fake.url()),
            ProviderKind::Anthropic
            | ProviderKind::Gemini
            | ProviderKind::Deepseek
            | ProviderKind::Zai
            | ProviderKind::Minimax
            | ProviderKind::Kimi
            | ProviderKind::Ollama => self.fake.url(),
        };
        CompletionRequest {
            session: SessionId::new(session),
            endpoint: ProviderEndpoint {
                id: ProviderId::new("p"),
                name: "Fake".into(),
                kind: self.kind,
                base_url: base_url.into(),
                provider_key: self.provider_key.clone(),
            },
            model: "fake-model".into(),
            messages: vec![ChatMessage::new(Role::User, "hello")],
            max_tokens: 256,
            stream,
            source: "chat".into(),
            preferred_key: None,
        }
    }

    pub async fn ask(&self, session: &str) -> (CompletionOutcome, Vec<CompletionEvent>) {
        self.ask_with(self.request(session, true), &CancellationToken::new(), |_, _| {}).await
    }

    pub async fn ask_with(
        &self,
        request: CompletionRequest,
        cancel: &CancellationToken,
        mut on: impl FnMut(&CompletionEvent, &CancellationToken) + Send,
    ) -> (CompletionOutcome, Vec<CompletionEvent>) {
        let mut events = Vec::new();
        let outcome = self
            .service
            .complete(
                &request,
                &mut |event| {
                    on(&event, cancel);
                    events.push(event);
                },
                cancel,
            )
            .await;
        (outcome, events)
    }

    /// Sets the user's limits of the key labelled `label`, as a write through the store would.
    pub fn set_limits(&self, label: &str, limits: UserLimits) {
        for entry in self.keys.entries.lock().unwrap().iter_mut().filter(|e| e.label.as_deref() == Some(label)) {
            entry.limits = limits;
        }
        self.service.pool().invalidate(&ProviderId::new("p"));
    }

    /// Puts the key labelled `label` in quota group `group`, as a write through the store would.
    pub fn set_group(&self, label: &str, group: &str) {
        for entry in self.keys.entries.lock().unwrap().iter_mut().filter(|e| e.label.as_deref() == Some(label)) {
            entry.quota_group = Some(group.to_owned());
        }
        self.service.pool().invalidate(&ProviderId::new("p"));
    }

    pub fn state_of(&self, label: &str) -> (KeyState, Option<Timestamp>) {
        let status = self.service.pool().status(&ProviderId::new("p"), self.clock.now_ts()).unwrap();
        let key = status.iter().find(|k| k.label.as_deref() == Some(label)).expect("key exists");
        (key.state, key.cooling_until)
    }
}

/// Simulated time whose provider deadlines pass all at once when the test calls [`Deadlines::pass`];
/// a deadline set at an instant ([`Waiter::bound`]) passes when [`Deadlines::advance`] moves the
/// clock there.
pub struct Deadlines {
    time: std::sync::OnceLock<SimulatedTime>,
    clock: std::sync::OnceLock<Arc<ManualClock>>,
    passed: tokio::sync::watch::Sender<bool>,
    /// Told each time [`Deadlines::advance`] moves the clock.
    moved: tokio::sync::watch::Sender<()>,
}

impl Deadlines {
    fn new() -> Self {
        Deadlines {
            time: std::sync::OnceLock::new(),
            clock: std::sync::OnceLock::new(),
            passed: tokio::sync::watch::channel(false).0,
            moved: tokio::sync::watch::channel(()).0,
        }
    }

    /// Every deadline running now or later has passed.
    pub fn pass(&self) {
        self.passed.send_replace(true);
    }

    /// Moves the clock on by `by`: the deadlines set at instants until then pass.
    pub fn advance(&self, by: Duration) {
        self.clock.get().expect("set when the rig is built").advance(by);
        self.moved.send_replace(());
    }

    fn time(&self) -> &SimulatedTime {
        self.time.get().expect("set when the rig is built")
    }
}

impl Waiter for Deadlines {
    fn until(&self, until: Timestamp) -> Wait<'_> {
        self.time().until(until)
    }

    fn bound(&self, deadline: Timestamp) -> Wait<'_> {
        let mut moved = self.moved.subscribe();
        let clock = self.clock.get().expect("set when the rig is built").clone();
        Box::pin(async move {
            let _ = moved.wait_for(|()| keypool::Clock::now(&*clock) >= deadline).await;
        })
    }

    fn after(&self, _: Duration) -> Wait<'_> {
        let mut passed = self.passed.subscribe();
        Box::pin(async move {
            let _ = passed.wait_for(|passed| *passed).await;
        })
    }
}

pub trait NowTs {
    fn now_ts(&self) -> Timestamp;
}
impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        keypool::Clock::now(self)
    }
}

pub fn finished(outcome: &CompletionOutcome) -> bool {
    matches!(outcome.end, StopReason::Finished)
}

pub fn error_of(outcome: &CompletionOutcome) -> &CompletionError {
    match &outcome.end {
        StopReason::Failed(error) => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub fn failovers(events: &[CompletionEvent]) -> Vec<(String, u16)> {
    events
        .iter()
        .filter_map(|e| match e {
            CompletionEvent::Failover { key_label, status, .. } => Some((key_label.clone(), *status)),
            _ => None,
        })
        .collect()
}
