//! Two members of one team, A and B, over the fake provider and a Redis of the test's own: each
//! member has its own store (the same key values under other ids), pool, completion service with
//! a team link, and local API. One manual clock runs everything (the fake's windows too); a
//! request that waits for a key moves it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
pub use std::time::Duration;

pub use keypool::{
    Clock, DisableReason, KeyEntry, KeyId, KeyLoader, KeyPool, KeyState, KeyStatus, LoadError, ManualClock,
    MapResolver, PoolConfig, ProviderId, Secret, SessionId, Timestamp, UserLimits,
};
pub use keypool_fake_provider::{FakeProvider, RateLimit, Reply};
use keypool_gateway::{token_hash, Dialect, Gateway, ListedModel, Route, Routes, Unrouted};
use keypool_llm::SimulatedTime;
pub use keypool_llm::{AttemptOutcome, AttemptRecord, CompletionService, ProviderEndpoint, ProviderKind, Recorder};
pub use keypool_team::test_redis::TestRedis;
pub use keypool_team::{Team, TeamConfig, TeamSecret, TeamState};
pub use serde_json::json;

pub const TOKEN: &str = "kp-team-test-token";
pub const START: Timestamp = Timestamp::from_millis(1_800_000_000_000);
pub const TEAM: &str = "blue";
pub const MODEL: &str = "fake-model";

/// The value of the key labelled `label`: long, and with letters no hex digest has, so a run of
/// it in Redis could only be the key.
pub fn key(label: &str) -> String {
    format!("sk-team-{label}-QwErTyUiOpLkJhGzXsVbNmPq-{label}")
}

/// One member's store: its keys, the disables and enables the team caused, when each key was
/// last enabled again, and its ledger. It outlives a restart of its member.
#[derive(Default)]
pub struct Store {
    entries: Mutex<Vec<KeyEntry>>,
    attempts: Mutex<Vec<AttemptRecord>>,
    enabled_at: Mutex<HashMap<KeyId, Timestamp>>,
    pool: Mutex<Weak<KeyPool>>,
}

impl Store {
    /// Switches `key` on or off; answers whether it was off and is on now.
    fn set_enabled(&self, key: &KeyId, enabled: bool) -> bool {
        let (provider, was) = {
            let mut entries = self.entries.lock().unwrap();
            let Some(entry) = entries.iter_mut().find(|e| &e.id == key) else { return false };
            let was = std::mem::replace(&mut entry.enabled, enabled);
            (entry.provider_id.clone(), was)
        };
        // As the app's one write path: write, then tell the pool its cache is stale.
        if let Some(pool) = self.pool.lock().unwrap().upgrade() {
            pool.invalidate(&provider);
        }
        !was && enabled
    }

    /// `key` was enabled again at `at` (the later stamp wins), as the app's store keeps it.
    fn stamp_enabled(&self, key: &KeyId, at: Timestamp) {
        let mut stamps = self.enabled_at.lock().unwrap();
        let stamp = stamps.entry(key.clone()).or_insert(at);
        *stamp = (*stamp).max(at);
    }

    pub fn enabled(&self, key: &KeyId) -> bool {
        self.entries.lock().unwrap().iter().any(|e| &e.id == key && e.enabled)
    }
}

impl KeyLoader for Store {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        let entries = self.entries.lock().unwrap();
        Ok(entries.iter().filter(|entry| entry.provider_id == *provider).cloned().collect())
    }
}

impl Recorder for Store {
    fn key_disabled(&self, _: &ProviderId, key: &KeyId, _: DisableReason, _: Timestamp) {
        self.set_enabled(key, false);
    }

    fn key_enabled(&self, _: &ProviderId, key: &KeyId, at: Timestamp) {
        self.set_enabled(key, true);
        self.stamp_enabled(key, at);
    }

    fn enabled_at(&self, key: &KeyId) -> Option<Timestamp> {
        self.enabled_at.lock().unwrap().get(key).copied()
    }

    fn attempt(&self, record: AttemptRecord) {
        self.attempts.lock().unwrap().push(record);
    }
}

/// Every model of the one provider, in OpenAI's dialect.
struct OneProvider(ProviderEndpoint);

impl Routes for OneProvider {
    fn route(&self, _: Dialect, model: &str) -> Result<Route, Unrouted> {
        Ok(Route { endpoint: self.0.clone(), model: model.into() })
    }

    fn models(&self, _: Dialect) -> Vec<ListedModel> {
        Vec::new()
    }
}

/// One member: its store, pool, service, team link and local API.
pub struct Member {
    pub name: &'static str,
    pub clock: Arc<ManualClock>,
    pub store: Arc<Store>,
    pub pool: Arc<KeyPool>,
    pub service: CompletionService,
    pub team: Option<Arc<Team>>,
    pub gateway: Gateway,
}

impl Member {
    /// This member's id of the key labelled `label`.
    pub fn id(&self, label: &str) -> KeyId {
        KeyId::new(format!("{}-id-{label}", self.name))
    }

    /// The label of this member's key `id`.
    pub fn label(&self, id: &KeyId) -> String {
        id.as_str().rsplit("-id-").next().unwrap_or_default().to_owned()
    }

    pub fn status(&self, label: &str, now: Timestamp) -> KeyStatus {
        let provider = ProviderId::new("p");
        let all = self.pool.status(&provider, now).expect("the keys load");
        all.into_iter().find(|s| s.key_id == self.id(label)).expect("the key is in the pool")
    }

    /// Every attempt the member made, for the ledger.
    pub fn attempts(&self) -> Vec<AttemptRecord> {
        self.store.attempts.lock().unwrap().clone()
    }

    /// The labels of the keys that served `conversation`, in order.
    pub fn served(&self, conversation: &str) -> Vec<String> {
        let session = SessionId::new(format!("api:session:{conversation}"));
        let attempts = self.attempts();
        let served = attempts.iter().filter(|a| a.session == session && a.outcome == AttemptOutcome::Ok);
        served.filter_map(|a| a.key.pool_key()).map(|k| self.label(k)).collect()
    }

    /// The user enables `label` again on this member, as the app does: the store stamps the
    /// enable of a key that was off, then the service (and the team) hear of it.
    pub fn enable(&self, label: &str) {
        if self.store.set_enabled(&self.id(label), true) {
            self.store.stamp_enabled(&self.id(label), self.clock.now());
        }
        self.service.key_enabled(&self.id(label));
    }

    pub fn team(&self) -> &Team {
        self.team.as_deref().expect("the member is in the team")
    }
}

pub struct Rig {
    /// The team's Redis (behind a lock, so a shared rig can kill and restart it).
    pub redis: Mutex<TestRedis>,
    pub fake: FakeProvider,
    pub clock: Arc<ManualClock>,
    pub a: Member,
    pub b: Member,
    http: reqwest::Client,
    endpoint: ProviderEndpoint,
    config: Option<TeamConfig>,
}

impl Rig {
    /// A and B in one team, each with the keys `labels`, connected.
    pub async fn start(labels: &[&str]) -> Rig {
        let rig = Rig::build(labels, Some(Duration::from_millis(100))).await;
        rig.connected().await;
        rig
    }

    /// A and B in one team whose heartbeats come only when they connect (the next one an hour
    /// away): the injected clock can run on past every liveness bound with no heartbeat between.
    pub async fn quiet(labels: &[&str]) -> Rig {
        let rig = Rig::build(labels, Some(Duration::from_secs(3600))).await;
        until("both members are connected and have each beaten once", || {
            let connected = [&rig.a, &rig.b].iter().all(|m| m.team().status().state == TeamState::Connected);
            let beaten = String::from_utf8_lossy(&rig.redis(&["ZCARD", &format!("{{keypool:{TEAM}}}:members")]))
                .starts_with(":2\r\n");
            connected && beaten
        })
        .await;
        rig
    }

    /// A and B with the same keys, each on its own (the team off).
    pub async fn alone(labels: &[&str]) -> Rig {
        Rig::build(labels, None).await
    }

    /// `heartbeat`: the team's, or `None` for no team.
    async fn build(labels: &[&str], heartbeat: Option<Duration>) -> Rig {
        let redis = TestRedis::start();
        let clock = Arc::new(ManualClock::new(START));
        let fake_clock = clock.clone();
        let fake = FakeProvider::start_with_clock(Arc::new(move || fake_clock.now().as_millis())).await;
        let secret = TeamSecret::generate();
        let endpoint = ProviderEndpoint {
            id: ProviderId::new("p"),
            name: "Fake".into(),
            kind: ProviderKind::Openai,
            base_url: format!("{}/v1", fake.url()).into(),
            provider_key: None,
        };
        let config = heartbeat.map(|heartbeat| {
            let mut config = TeamConfig::new(redis.url(), TEAM, secret.clone());
            config.heartbeat = heartbeat;
            config
        });
        let a = member("a", stocked(labels), &clock, &endpoint, config.clone()).await;
        let b = member("b", stocked(labels), &clock, &endpoint, config.clone()).await;
        Rig { redis: Mutex::new(redis), fake, clock, a, b, http: reqwest::Client::new(), endpoint, config }
    }

    /// Member B stops (its pool, team link and local API go, as when its process ends) and starts
    /// again over the same store, then waits until it is connected.
    pub async fn restart_b(&mut self) {
        self.b.team().stop();
        let store = self.b.store.clone();
        let restarted = member("b", store, &self.clock, &self.endpoint, self.config.clone()).await;
        let old = std::mem::replace(&mut self.b, restarted);
        old.gateway.stop();
        self.connected().await;
    }

    /// Waits until both members are connected and each sees the other.
    pub async fn connected(&self) {
        until("both members are connected and see each other", || {
            [&self.a, &self.b].iter().all(|m| {
                let status = m.team().status();
                status.state == TeamState::Connected && status.members >= 2
            })
        })
        .await;
    }

    /// Runs one Redis command (see [`TestRedis::command`]).
    pub fn redis(&self, words: &[&str]) -> Vec<u8> {
        self.redis.lock().unwrap().command(words)
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// A chat request of `conversation` through `member`'s local API: its status and body.
    pub async fn ask(&self, member: &Member, conversation: &str) -> (u16, String) {
        self.send(member, conversation, false).await
    }

    /// The same, streamed.
    pub async fn send(&self, member: &Member, conversation: &str, stream: bool) -> (u16, String) {
        let body =
            json!({ "model": MODEL, "stream": stream, "messages": [{ "role": "user", "content": conversation }] });
        let url = format!("http://127.0.0.1:{}/v1/chat/completions", member.gateway.port());
        let response = self
            .http
            .post(url)
            .bearer_auth(TOKEN)
            .header("x-keypool-session", conversation)
            .json(&body)
            .send()
            .await
            .expect("the local API answers");
        let status = response.status().as_u16();
        (status, response.text().await.expect("a body"))
    }

    /// How many completion requests the fake saw with the key labelled `label`.
    pub fn requests_with(&self, label: &str) -> usize {
        self.fake.keys_used().iter().filter(|k| **k == key(label)).count()
    }
}

/// A store with the keys `labels` (ids are given when a member takes it: see [`member`]).
fn stocked(labels: &[&str]) -> Arc<Store> {
    let store = Arc::new(Store::default());
    for (i, label) in labels.iter().enumerate() {
        store.entries.lock().unwrap().push(KeyEntry {
            id: KeyId::new(format!("-id-{label}")),
            provider_id: ProviderId::new("p"),
            label: Some((*label).to_owned()),
            api_key: Secret::new(key(label)),
            enabled: true,
            weight: 1,
            sort_order: i as i64,
            created_at: START,
            limits: UserLimits::default(),
            sealed: false,
            quota_group: None,
        });
    }
    store
}

/// Member `name` over `store` (whose keys it names `{name}-id-{label}`).
async fn member(
    name: &'static str,
    store: Arc<Store>,
    clock: &Arc<ManualClock>,
    endpoint: &ProviderEndpoint,
    team: Option<TeamConfig>,
) -> Member {
    for entry in store.entries.lock().unwrap().iter_mut() {
        if entry.id.as_str().starts_with("-id-") {
            entry.id = KeyId::new(format!("{name}{}", entry.id.as_str()));
        }
    }
    let resolver = Arc::new(MapResolver::new());
    let pool = Arc::new(KeyPool::new(PoolConfig::default(), store.clone(), resolver.clone()));
    *store.pool.lock().unwrap() = Arc::downgrade(&pool);
    let as_clock: Arc<dyn Clock> = clock.clone();
    let waiter = Arc::new(SimulatedTime::new(clock.clone()));
    let mut service = CompletionService::new(pool.clone(), as_clock.clone(), resolver.clone(), store.clone(), waiter);
    let team = team.map(|config| {
        let team = Team::start(config, pool.clone(), resolver, as_clock.clone(), store.clone()).expect("a valid team");
        service = service.clone().with_team(team.clone());
        team
    });
    let routes = Arc::new(OneProvider(endpoint.clone()));
    let gateway = Gateway::start(0, token_hash(TOKEN), routes, service.clone(), as_clock).await.expect("a free port");
    Member { name, clock: clock.clone(), store, pool, service, team, gateway }
}

/// Waits until `done` holds, polling: for something another task or member does, never for time
/// to pass. Panics with `what` after a bound far longer than it ever takes.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
