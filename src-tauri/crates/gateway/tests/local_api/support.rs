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

/// One provider, served in its kind's dialect: every model, or only those listed.
struct OneProvider {
    /// Its endpoint, which a test may point elsewhere ([`LocalApi::point_at`]).
    endpoint: Mutex<ProviderEndpoint>,
    models: Option<Vec<String>>,
}

impl OneProvider {
    fn endpoint(&self) -> ProviderEndpoint {
        self.endpoint.lock().unwrap().clone()
    }

    fn dialect(&self) -> Dialect {
        Dialect::of_wire(self.endpoint().kind.row().wire)
    }
}

impl Routes for OneProvider {
    fn route(&self, dialect: Dialect, model: &str) -> Result<Route, Unrouted> {
        // `fake/model` names the provider: asked in its own dialect whatever the client's, as the
        // app's routes do.
        if let Some(model) = model.strip_prefix("fake/") {
            return Ok(Route { endpoint: self.endpoint(), model: model.into() });
        }
        let served = self.models.as_ref().is_none_or(|models| models.iter().any(|m| m == model));
        match (served, dialect == self.dialect()) {
            (true, true) => Ok(Route { endpoint: self.endpoint(), model: model.into() }),
            (true, false) => Err(Unrouted::OtherDialect { provider: self.endpoint().name.to_string() }),
            (false, _) => Err(Unrouted::Unknown),
        }
    }

    fn models(&self, dialect: Dialect) -> Vec<ListedModel> {
        let listed = self.models.iter().flatten().filter(|_| dialect == self.dialect());
        listed
            .map(|id| ListedModel {
                id: id.clone(),
                provider: self.endpoint().name.to_string(),
                others: Vec::new(),
                dialect,
            })
            .collect()
    }
}

pub struct LocalApi {
    pub fake: FakeProvider,
    pub gateway: Gateway,
    keys: Arc<Keys>,
    http: reqwest::Client,
    routes: Arc<OneProvider>,
}

impl LocalApi {
    /// The local API over an OpenAI-compatible provider serving every model, whose pool holds
    /// `key-<label>` for each label.
    pub async fn start(labels: &[&str]) -> LocalApi {
        LocalApi::of_kind(ProviderKind::Openai, None, labels).await
    }

    /// The same over a provider of `kind` serving `models` (every model when `None`), the fake
    /// provider's quota windows on the service's manual clock.
    pub async fn of_kind(kind: ProviderKind, models: Option<&[&str]>, labels: &[&str]) -> LocalApi {
        LocalApi::started_by(kind, models, labels, on_any_port).await
    }

    /// The local API over an OpenAI-compatible provider at `base_url` instead of the fake one
    /// (which still runs), whose pool holds `key-<label>` for each label.
    pub async fn over(base_url: &str, labels: &[&str]) -> LocalApi {
        LocalApi::started_at(ProviderKind::Openai, None, Some(base_url.to_owned()), labels, on_any_port).await
    }

    /// The same, the endpoint started by `start` (with what [`Gateway::start`] takes but the
    /// port and token: any free port, [`TOKEN`]), the fake provider on this runtime.
    pub async fn started_by<F, Started>(
        kind: ProviderKind,
        models: Option<&[&str]>,
        labels: &[&str],
        start: F,
    ) -> LocalApi
    where
        F: FnOnce(Arc<dyn Routes>, CompletionService, Arc<dyn Clock>) -> Started,
        Started: std::future::Future<Output = Gateway>,
    {
        LocalApi::started_at(kind, models, None, labels, start).await
    }

    /// The same with the provider at `base_url` when given, else at the fake provider.
    async fn started_at<F, Started>(
        kind: ProviderKind,
        models: Option<&[&str]>,
        base_url: Option<String>,
        labels: &[&str],
        start: F,
    ) -> LocalApi
    where
        F: FnOnce(Arc<dyn Routes>, CompletionService, Arc<dyn Clock>) -> Started,
        Started: std::future::Future<Output = Gateway>,
    {
        let clock = Arc::new(ManualClock::new(START));
        let fake_clock = clock.clone();
        let fake = FakeProvider::start_with_clock(Arc::new(move || fake_clock.now().as_millis())).await;
        let keys = Arc::new(Keys::default());
        for (i, label) in labels.iter().enumerate() {
            // `a@org` is key `a` in quota group `org`.
            let (label, quota_group) = label.split_once('@').map_or((*label, None), |(l, g)| (l, Some(g.to_owned())));
            keys.entries.lock().unwrap().push(KeyEntry {
                id: KeyId::new(format!("id-{label}")),
                provider_id: ProviderId::new("p"),
                label: Some(label.to_owned()),
                api_key: Secret::new(format!("key-{label}")),
                enabled: true,
                weight: 1,
                sort_order: i as i64,
                created_at: START,
                limits: UserLimits::default(),
                sealed: false,
                quota_group,
            });
        }
        let resolver = Arc::new(MapResolver::new());
        let pool = Arc::new(KeyPool::new(PoolConfig::default(), keys.clone(), resolver.clone()));
        let as_clock: Arc<dyn Clock> = clock.clone();
        let keys_for_records = keys.clone();
        let service = CompletionService::new(
            pool.clone(),
            as_clock.clone(),
            resolver,
            keys,
            Arc::new(SimulatedTime::new(clock.clone())),
        );
        let base_url = base_url.unwrap_or_else(|| match kind {
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
            | ProviderKind::Bedrock => format!("{}/v1", fake.url()),
            ProviderKind::Openrouter => format!("{}/api/v1", fake.url()),
            ProviderKind::Anthropic
            | ProviderKind::Gemini
            | ProviderKind::Deepseek
            | ProviderKind::Zai
            | ProviderKind::Minimax
            | ProviderKind::Kimi
            | ProviderKind::Ollama => fake.url(),
        });
        let endpoint = ProviderEndpoint {
            id: ProviderId::new("p"),
            name: "Fake".into(),
            kind,
            base_url: base_url.into(),
            provider_key: None,
        };
        let models = models.map(|models| models.iter().map(|m| (*m).to_owned()).collect());
        let routes = Arc::new(OneProvider { endpoint: Mutex::new(endpoint), models });
        let gateway = start(routes.clone(), service, as_clock).await;
        LocalApi { fake, gateway, keys: keys_for_records, http: reqwest::Client::new(), routes }
    }

    /// Points the provider at `base_url` from now on.
    pub fn point_at(&self, base_url: &str) {
        self.routes.endpoint.lock().unwrap().base_url = base_url.into();
    }

    /// Every attempt the service recorded for the ledger.
    pub fn attempts(&self) -> Vec<AttemptRecord> {
        self.keys.attempts.lock().unwrap().clone()
    }

    /// `POST path` with `body` as it is, and `headers`: the status, the body, its `retry-after`.
    pub async fn post_raw(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, String, Option<String>) {
        let mut request =
            self.http.post(self.url(path)).header("content-type", "application/json").body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("the local API answers");
        let status = response.status().as_u16();
        let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
        (status, response.text().await.expect("a body"), retry_after)
    }

    /// `GET path` with `headers`: the body as JSON.
    pub async fn get_json(&self, path: &str, headers: &[(&str, &str)]) -> Value {
        let mut request = self.http.get(self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.expect("the local API answers").json().await.expect("JSON")
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

/// The app's endpoint on any free loopback port, with [`TOKEN`].
async fn on_any_port(routes: Arc<dyn Routes>, service: CompletionService, clock: Arc<dyn Clock>) -> Gateway {
    Gateway::start(0, token_hash(TOKEN), routes, service, clock).await.expect("a free port")
}

pub fn chat_body(model: &str, stream: bool) -> Value {
    json!({ "model": model, "stream": stream, "messages": [{ "role": "user", "content": "hi" }] })
}
