//! `[alerts]`: a webhook told when a key is disabled or runs out of credit, when a provider has
//! no usable key left, and when a member's budget is spent. Each event is sent once for the whole
//! team (the first replica to claim it in Redis sends it; without Redis, once per replica), after
//! the request that caused it, on a task of its own, retried with backoff (1, 2, 4, 8, 16 s) while
//! the receiver fails or answers 429 or 5xx.
//!
//! A body never holds a key or a token: a key is its id (this replica's) and label, a member its
//! name. With a secret, `x-keypool-signature: sha256=<hex>` is HMAC-SHA256 of the body under it
//! (as GitHub signs its webhooks); `x-keypool-event` names the event, `x-keypool-delivery` is the
//! delivery's id, the same on every retry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use hmac::{KeyInit, Mac};
use keypool::{DisableReason, KeyId, KeyState, ProviderId, Timestamp};
use keypool_api::service::BudgetSpent;
use keypool_api::AppContext;
use keypool_llm::{AttemptOutcome, AttemptRecord};
use keypool_team::Allowance;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::observe::Observe;
use tokio::sync::mpsc;

/// `[alerts]` in the config file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsConfig {
    pub webhook_url: String,
    /// `$NAME`: the environment variable holding the signing secret.
    pub webhook_secret: Option<String>,
    /// A file holding the signing secret.
    pub webhook_secret_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for AlertsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlertsConfig").finish_non_exhaustive()
    }
}

/// Where alerts go, checked.
#[derive(Clone)]
pub struct Webhook {
    url: String,
    secret: Option<Vec<u8>>,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook").field("signed", &self.secret.is_some()).finish_non_exhaustive()
    }
}

impl AlertsConfig {
    /// The webhook, its secret read (from the environment or a file; never written in the config).
    pub fn webhook(&self) -> Result<Webhook, String> {
        let url = self.webhook_url.trim();
        if !(url.starts_with("https://") || url.starts_with("http://")) || reqwest::Url::parse(url).is_err() {
            return Err(format!("[alerts] webhook_url is an http(s) URL, not {url:?}"));
        }
        let secret = match (&self.webhook_secret, &self.webhook_secret_file) {
            (Some(_), Some(_)) => return Err("[alerts] webhook_secret or webhook_secret_file, not both".into()),
            (None, None) => None,
            (Some(reference), None) => {
                let Some(var) = reference.trim().strip_prefix('$').filter(|v| !v.is_empty()) else {
                    return Err("[alerts] the secret is read from the environment (webhook_secret = \"$VAR\") or a \
                                file (webhook_secret_file), never written in the config"
                        .into());
                };
                Some(std::env::var(var).map_err(|_| format!("[alerts] the environment variable {var} is not set"))?)
            }
            (None, Some(path)) => {
                crate::warn_if_others_can_read(path, "the webhook secret file");
                Some(std::fs::read_to_string(path).map_err(|e| format!("[alerts] {}: {e}", path.display()))?)
            }
        };
        let secret = secret.map(|s| s.trim().as_bytes().to_vec()).filter(|s| !s.is_empty());
        Ok(Webhook { url: url.to_owned(), secret })
    }
}

/// One event, and how long a claim on it lasts (the same event within it is not sent again).
struct Event {
    /// Its name for deduplication, the same on every replica (`key_disabled:<key's team identity>`).
    id: String,
    /// How long the claim on it lasts.
    ttl: Duration,
    body: Value,
}

/// The server's alerts. Cheap to clone.
#[derive(Clone)]
pub struct Alerts {
    inner: Arc<Inner>,
}

struct Inner {
    webhook: Mutex<Option<Webhook>>,
    queue: mpsc::UnboundedSender<Event>,
    /// Events this process sent (or saw claimed) lately, for deduplication without Redis.
    recent: Mutex<HashMap<String, Instant>>,
    /// How each event went, by its kind and outcome (`delivered`, `claimed` by another replica
    /// or an earlier send, `refused` by the webhook), for metrics: what a test of one alert per
    /// team waits on, not a time.
    outcomes: Mutex<HashMap<(String, &'static str), u64>>,
    reading: OnceLock<Reading>,
}

struct Reading {
    context: Weak<AppContext>,
    allowance: Option<Arc<Allowance>>,
}

impl Alerts {
    /// Alerts sent by a task on the current runtime.
    pub fn start() -> Alerts {
        let (queue, events) = mpsc::unbounded_channel();
        let alerts = Alerts {
            inner: Arc::new(Inner {
                webhook: Mutex::new(None),
                queue,
                recent: Mutex::default(),
                outcomes: Mutex::default(),
                reading: OnceLock::new(),
            }),
        };
        tokio::spawn(deliver(Arc::downgrade(&alerts.inner), events));
        alerts
    }

    /// Sends to `webhook` from now on (none: alerts off).
    pub fn set_webhook(&self, webhook: Option<Webhook>) {
        *self.inner.webhook.lock().unwrap_or_else(|e| e.into_inner()) = webhook;
    }

    /// Reads the pool of `context` (a provider's keys' states) and claims events through the team.
    pub fn attach(&self, context: &Arc<AppContext>, allowance: Option<Arc<Allowance>>) {
        let _ = self.inner.reading.set(Reading { context: Arc::downgrade(context), allowance });
    }

    /// How the events went so far: kind, outcome, count.
    pub fn outcomes(&self) -> Vec<(String, &'static str, u64)> {
        let outcomes = self.inner.outcomes.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<_> = outcomes.iter().map(|((kind, outcome), n)| (kind.clone(), *outcome, *n)).collect();
        out.sort();
        out
    }

    fn on(&self) -> bool {
        self.inner.webhook.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    fn send(&self, event: Event) {
        if self.on() {
            let _ = self.inner.queue.send(event);
        }
    }

    fn context(&self) -> Option<Arc<AppContext>> {
        self.inner.reading.get()?.context.upgrade()
    }

    /// The provider's name, and the key's label, as people know them.
    fn names(&self, provider: &ProviderId, key: &KeyId) -> (String, Option<String>) {
        let Some(context) = self.context() else { return (provider.to_string(), None) };
        let name = context
            .providers()
            .ok()
            .and_then(|p| p.list().ok())
            .and_then(|list| list.into_iter().find(|p| p.id == provider.as_str()).map(|p| p.name))
            .unwrap_or_else(|| provider.to_string());
        let label = context
            .keys()
            .ok()
            .and_then(|keys| keys.list(provider.as_str()).ok())
            .and_then(|list| list.into_iter().find(|k| k.id == key.as_str()))
            .and_then(|k| k.label);
        (name, label)
    }

    /// The key's name for deduplication: its team identity (the same on every replica), or its
    /// id here without a team.
    fn key_event(&self, kind: &str, key: &KeyId) -> String {
        let identity = self.inner.reading.get().and_then(|r| r.allowance.as_ref()).and_then(|a| a.key_identity(key));
        format!("{kind}:{}", identity.unwrap_or_else(|| format!("local:{key}")))
    }

    /// A provider whose keys are all disabled or out of credit (none active, none resting) has no
    /// usable key left.
    fn check_provider(&self, provider: &ProviderId, name: &str) {
        let Some(context) = self.context() else { return };
        let Ok(completions) = context.completions() else { return };
        let now = keypool::Clock::now(&keypool_api::SystemClock);
        let Ok(keys) = completions.pool().status(provider, now) else { return };
        if keys.is_empty() || keys.iter().any(|k| matches!(k.state, KeyState::Active | KeyState::Cooling)) {
            return;
        }
        let count = |state: KeyState| keys.iter().filter(|k| k.state == state).count();
        self.send(Event {
            id: format!("provider_unusable:{}", name.to_lowercase()),
            ttl: Duration::from_secs(3600),
            body: json!({
                "event": "provider_unusable",
                "at": now.to_string(),
                "provider": name,
                "keys": {
                    "disabled": count(KeyState::Disabled),
                    "exhausted": count(KeyState::Exhausted),
                    "unavailable": count(KeyState::Unavailable),
                },
                "message": format!("{name} has no usable key left: every key is disabled, out of credit or unreadable"),
            }),
        });
    }
}

impl Alerts {
    /// The keys of `provider` the pool now holds out of credit (after a request's 402 or a
    /// balance read that found nothing left), each told once per claim's time; then whether the
    /// provider has a usable key left.
    fn out_of_credit(&self, provider: &ProviderId, at: Timestamp) {
        let Some(context) = self.context() else { return };
        let Ok(completions) = context.completions() else { return };
        let Ok(keys) = completions.pool().status(provider, at) else { return };
        for key in keys.iter().filter(|k| k.state == KeyState::Exhausted) {
            let (name, label) = self.names(provider, &key.key_id);
            self.send(Event {
                id: self.key_event("key_out_of_credit", &key.key_id),
                ttl: Duration::from_secs(3600),
                body: json!({
                    "event": "key_out_of_credit",
                    "at": at.to_string(),
                    "provider": name,
                    "key": { "id": key.key_id.as_str(), "label": label },
                    "message": format!("a key of {name} is out of credit"),
                }),
            });
        }
        let (name, _) = self.names(provider, &KeyId::new(""));
        self.check_provider(provider, &name);
    }
}

impl Observe for Alerts {
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp) {
        if !self.on() {
            return;
        }
        let (name, label) = self.names(provider, key);
        self.send(Event {
            id: self.key_event("key_disabled", key),
            ttl: Duration::from_secs(3600),
            body: json!({
                "event": "key_disabled",
                "at": at.to_string(),
                "provider": name,
                "key": { "id": key.as_str(), "label": label },
                "status": reason.status(),
                "message": format!("a key of {name} was refused by the provider (HTTP {}) and disabled", reason.status()),
            }),
        });
        self.check_provider(provider, &name);
    }

    fn attempted(&self, record: &AttemptRecord) {
        if record.outcome == AttemptOutcome::QuotaExhausted && self.on() {
            self.out_of_credit(&record.provider, record.at);
        }
    }

    fn key_window_used_up(&self, provider: &ProviderId, key: &KeyId, until: Timestamp, now: Timestamp) {
        if !self.on() {
            return;
        }
        let (name, label) = self.names(provider, key);
        self.send(Event {
            // Once per key and reset.
            id: format!("{}:{}", self.key_event("key_window_used_up", key), until.as_millis()),
            ttl: until.saturating_duration_since(now).max(Duration::from_secs(60)),
            body: json!({
                "event": "key_window_used_up",
                "at": now.to_string(),
                "provider": name,
                "key": { "id": key.as_str(), "label": label },
                "resets_at": until.to_string(),
                "message": format!("a key of {name} has used up its plan's window; it rests until {until}"),
            }),
        });
    }

    fn key_expiring(&self, provider: &ProviderId, key: &KeyId, expires_at: Timestamp, now: Timestamp) {
        if !self.on() {
            return;
        }
        let (name, label) = self.names(provider, key);
        let expired = expires_at <= now;
        let left = expires_at.saturating_duration_since(now);
        self.send(Event {
            // Once per key and expiry: a key replaced by a later one is told again.
            id: format!("{}:{}", self.key_event("key_expiring", key), expires_at.as_millis()),
            ttl: Duration::from_secs(8 * 24 * 3600),
            body: json!({
                "event": "key_expiring",
                "at": now.to_string(),
                "provider": name,
                "key": { "id": key.as_str(), "label": label },
                "expires_at": expires_at.to_string(),
                "message": if expired {
                    format!("a key of {name} has expired")
                } else {
                    format!("a key of {name} expires in {} h", left.as_secs() / 3600)
                },
            }),
        });
    }

    fn key_out_of_credit(&self, provider: &ProviderId, _key: &KeyId, at: Timestamp) {
        if self.on() {
            self.out_of_credit(provider, at);
        }
    }

    fn budget_spent(&self, spent: &BudgetSpent) {
        let BudgetSpent { member, unit, used, limit, period, resets_at } = spent;
        let now = keypool::Clock::now(&keypool_api::SystemClock);
        let ttl = resets_at.map_or(Duration::from_secs(40 * 24 * 3600), |end| end.saturating_duration_since(now));
        self.send(Event {
            id: format!("member_budget_spent:{}:{period}", member.to_lowercase()),
            ttl: ttl.max(Duration::from_secs(60)),
            body: json!({
                "event": "member_budget_spent",
                "at": now.to_string(),
                "member": member,
                "budget": { *unit: limit, "period": period },
                "used": used,
                "resets_at": resets_at.map(|at| at.to_string()),
                "message": format!("{member}'s budget is spent"),
            }),
        });
    }
}

/// Delivers events in order until the alerts go: claims each (with the team, or in this
/// process), then posts it, retrying with backoff.
async fn deliver(inner: Weak<Inner>, mut events: mpsc::UnboundedReceiver<Event>) {
    // Made at the first event: by then the completion service has installed TLS's crypto provider.
    let mut client: Option<reqwest::Client> = None;
    while let Some(event) = events.recv().await {
        let Some(alerts) = inner.upgrade() else { return };
        let Some(webhook) = alerts.webhook.lock().unwrap_or_else(|e| e.into_inner()).clone() else { continue };
        if client.is_none() {
            let built = reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .redirect(reqwest::redirect::Policy::none())
                .build();
            match built {
                Ok(built) => client = Some(built),
                Err(error) => {
                    tracing::error!(%error, "alerts cannot be sent: no HTTP client");
                    continue;
                }
            }
        }
        let client = client.as_ref().expect("made above");
        let kind = event.body["event"].as_str().unwrap_or("alert").to_owned();
        let count = |alerts: &Inner, outcome: &'static str| {
            let mut outcomes = alerts.outcomes.lock().unwrap_or_else(|e| e.into_inner());
            *outcomes.entry((kind.clone(), outcome)).or_default() += 1;
        };
        if !claimed(&alerts, &event).await {
            count(&alerts, "claimed");
            continue;
        }
        let body = event.body.to_string();
        let mut delivery = [0u8; 12];
        getrandom::fill(&mut delivery).expect("the operating system provides randomness");
        let delivery: String = delivery.iter().map(|b| format!("{b:02x}")).collect();
        let signature = webhook.secret.as_ref().map(|secret| {
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
            mac.update(body.as_bytes());
            let digest = mac.finalize().into_bytes();
            format!("sha256={}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
        });
        let mut wait = Duration::from_secs(1);
        for attempt in 1..=6 {
            let mut request = client
                .post(&webhook.url)
                .header("content-type", "application/json")
                .header("user-agent", concat!("keypool-server/", env!("CARGO_PKG_VERSION")))
                .header("x-keypool-event", &kind)
                .header("x-keypool-delivery", &delivery)
                .body(body.clone());
            if let Some(signature) = &signature {
                request = request.header("x-keypool-signature", signature);
            }
            let sent = request.send().await;
            let retry = match &sent {
                Ok(answer) if answer.status().is_success() => {
                    tracing::info!(event = %kind, %delivery, "alert delivered");
                    count(&alerts, "delivered");
                    break;
                }
                Ok(answer) => answer.status().as_u16() == 429 || answer.status().is_server_error(),
                Err(_) => true,
            };
            let status = sent.as_ref().ok().map(|a| a.status().as_u16());
            if !retry || attempt == 6 {
                tracing::warn!(event = %kind, %delivery, ?status, attempt, "the alert webhook refused the alert; given up");
                count(&alerts, "refused");
                break;
            }
            tracing::info!(event = %kind, %delivery, ?status, attempt, "the alert webhook did not take the alert; retrying");
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }
}

/// Whether this replica sends `event`: the team's claim when Redis answers, else this process's
/// own memory of what it sent.
async fn claimed(inner: &Inner, event: &Event) -> bool {
    let team = inner.reading.get().and_then(|r| r.allowance.clone());
    if let Some(allowance) = team {
        if let Some(first) = allowance.claim(&event.id, event.ttl).await {
            return first;
        }
    }
    let mut recent = inner.recent.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    recent.retain(|_, until| *until > now);
    if recent.contains_key(&event.id) {
        return false;
    }
    recent.insert(event.id.clone(), now + event.ttl);
    true
}
