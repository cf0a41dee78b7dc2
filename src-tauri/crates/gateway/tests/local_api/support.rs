//! A running local API over the fake provider: one OpenAI-compatible provider "p" whose pool
//! holds the given keys, a manual clock, and a client that speaks to it.

use std::sync::{Arc, Mutex};

use keypool::{
    Clock, DisableReason, KeyEntry, KeyId, KeyLoader, KeyPool, LoadError, ManualClock, MapResolver, PoolConfig,
    ProviderId, Secret, Timestamp, UserLimits,
};
pub use keypool_fake_provider::{FakeProvider, Reply};
use keypool_gateway::{token_hash, Dialect, Gateway, ListedModel, Route, Routes, Unrouted};
use keypool_llm::{AttemptRecord, CompletionService, ProviderEndpoint, ProviderKind, Recorder, SimulatedTime};
pub use serde_json::{json, Value};

pub const TOKEN: &str = "kp-local-test-token";
const START: Timestamp = Timestamp::from_millis(1_800_000_000_000);

#[derive(Default)]
struct Keys {
    entries: Mutex<Vec<KeyEntry>>,
    attempts: Mutex<Vec<AttemptRecord>>,
}

impl KeyLoader for Keys {
    fn load(&self, provider: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(self.entries.lock().unwrap().iter().filter(|e| &e.provider_id == provider).cloned().collect())
    }
}

impl Recorder for Keys {
    fn key_disabled(&self, _: &ProviderId, key: &KeyId, _: DisableReason, _: Timestamp) {
        for entry in self.entries.lock().unwrap().iter_mut().filter(|e| &e.id == key) {
            entry.enabled = false;
        }
    }

    fn attempt(&self, record: AttemptRecord) {
        self.attempts.lock().unwrap().push(record);
    }
}

struct OneProvider(ProviderEndpoint);

impl Routes for OneProvider {
    fn route(&self, dialect: Dialect, model: &str) -> Result<Route, Unrouted> {
        match dialect {
            Dialect::OpenAi => Ok(Route { endpoint: self.0.clone(), model: model.to_owned() }),
            _ => Err(Unrouted::Unknown),
        }
    }

    fn models(&self, _: Dialect) -> Vec<ListedModel> {
        Vec::new()
    }
}

pub struct LocalApi {
    pub fake: FakeProvider,
    pub gateway: Gateway,
    http: reqwest::Client,
}

impl LocalApi {
    /// The local API over a pool holding `key-<label>` for each label.
    pub async fn start(labels: &[&str]) -> LocalApi {
        let clock = Arc::new(ManualClock::new(START));
        let fake = FakeProvider::start().await;
        let keys = Arc::new(Keys::default());
        for (i, label) in labels.iter().enumerate() {
            keys.entries.lock().unwrap().push(KeyEntry {
                id: KeyId::new(format!("id-{label}")),
                provider_id: ProviderId::new("p"),
                label: Some((*label).to_owned()),
                api_key: Secret::new(format!("key-{label}")),
                enabled: true,
                weight: 1,
                sort_order: i as i64,
                created_at: START,
                limits: UserLimits::default(),
                sealed: false,
            });
        }
        let resolver = Arc::new(MapResolver::new());
        let pool = Arc::new(KeyPool::new(PoolConfig::default(), keys.clone(), resolver.clone()));
        let as_clock: Arc<dyn Clock> = clock.clone();
        let service = CompletionService::new(
            pool.clone(),
            as_clock.clone(),
            resolver,
            keys,
            Arc::new(SimulatedTime::new(clock.clone())),
        );
        let endpoint = ProviderEndpoint {
            id: ProviderId::new("p"),
            name: "Fake".into(),
            kind: ProviderKind::Openai,
            base_url: format!("{}/v1", fake.url()),
            provider_key: None,
        };
        let gateway = Gateway::start(0, token_hash(TOKEN), Arc::new(OneProvider(endpoint)), service, as_clock)
            .await
            .expect("a free port");
        LocalApi { fake, gateway, http: reqwest::Client::new() }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.gateway.port())
    }

    /// `POST /v1/chat/completions` with `body`, the token and `headers`.
    pub async fn chat(&self, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self.http.post(self.url("/v1/chat/completions")).bearer_auth(TOKEN).json(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.expect("the local API answers")
    }
}

pub fn chat_body(model: &str, stream: bool) -> Value {
    json!({ "model": model, "stream": stream, "messages": [{ "role": "user", "content": "hi" }] })
}
