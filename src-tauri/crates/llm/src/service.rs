//! The completion service: pooled keys, failover, cooldowns, auth disabling.

use std::sync::{Arc, Once};
use std::time::Duration;

use keypool::{
    Clock, DisableReason, FailureKind, FailureOutcome, KeyId, KeyPool, KeyState, PoolError, ProviderId, Secret,
    SecretResolver, Selection, SelectionRequest, SessionId, Timestamp, Unavailability,
};
use tokio_util::sync::CancellationToken;

use crate::error::{CompletionError, Failure};
use crate::provider::{error_message, ChatMessage, ProviderEndpoint};
use crate::redact::Redactor;
use crate::stream::{read_error_body, Attempt, AttemptEnd, REDIRECT_REFUSED};

/// One request for a reply in a chat.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The chat: the pool keeps it on one key.
    pub session: SessionId,
    pub endpoint: ProviderEndpoint,
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Required by Anthropic; ignored by OpenAI-compatible providers.
    pub max_tokens: u32,
    /// Stream the reply (SSE) or take it whole.
    pub stream: bool,
}

/// What the caller (the chat page) is told while a reply is produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionEvent {
    /// An attempt is about to be sent with this key. `rebound`: the chat moved to another key
    /// than the one it had (the provider's prompt cache starts cold).
    KeySelected { key_id: Option<String>, key_label: String, provider_level: bool, rebound: bool, attempt: u32 },
    /// The attempt was refused in a way the pool handles; the next key is tried at once.
    Failover { key_label: String, status: u16, reason: FailureKind, message: String },
    /// More text of the reply.
    Delta { text: String },
}

/// How a completion ended.
#[derive(Debug)]
pub enum StopReason {
    Finished,
    /// The user stopped it; the text so far stands.
    Cancelled,
    Failed(CompletionError),
}

/// The reply and how it came about.
#[derive(Debug)]
pub struct CompletionOutcome {
    /// All text received (on failure or cancel: what was shown before).
    pub text: String,
    /// The key that produced the text (the last one tried).
    pub key_id: Option<KeyId>,
    pub key_label: Option<String>,
    /// HTTP requests sent upstream.
    pub attempts: u32,
    pub end: StopReason,
}

/// The result of probing one key.
#[derive(Debug, Clone)]
pub struct ProbeResult {
    pub ok: bool,
    pub status: Option<u16>,
    pub message: String,
    pub latency_ms: u64,
}

/// The key an attempt uses.
enum Credential {
    Pooled(Selection),
    /// The provider's own key, used only while its pool is empty.
    ProviderLevel(Secret),
}

impl Credential {
    fn secret(&self) -> &Secret {
        match self {
            Credential::Pooled(selection) => &selection.secret,
            Credential::ProviderLevel(secret) => secret,
        }
    }

    /// How people know the key: never anything derived from a resolved `$NAME` value.
    fn label(&self) -> String {
        match self {
            Credential::Pooled(selection) => selection.name.to_string(),
            Credential::ProviderLevel(_) => "provider key".to_owned(),
        }
    }
}

/// Where the service records the pool's decisions that must outlive the process. The pool has
/// already acted on them in memory; the recorder persists them (the app's write path).
pub trait Recorder: Send + Sync {
    /// The provider rejected `key`: disable it in the store, with `reason`, at `at`.
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp);
}

/// Sends chat completions with pooled keys. Cheap to clone; share one per app.
#[derive(Clone)]
pub struct CompletionService {
    http: reqwest::Client,
    pool: Arc<KeyPool>,
    clock: Arc<dyn Clock>,
    resolver: Arc<dyn SecretResolver>,
    recorder: Arc<dyn Recorder>,
}

fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another part of the process may have installed one already; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl CompletionService {
    pub fn new(
        pool: Arc<KeyPool>,
        clock: Arc<dyn Clock>,
        resolver: Arc<dyn SecretResolver>,
        recorder: Arc<dyn Recorder>,
    ) -> Self {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(same_origin_redirects())
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(180))
            .user_agent(concat!("Keypool/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client configuration is static and valid");
        CompletionService { http, pool, clock, resolver, recorder }
    }

    pub fn pool(&self) -> &Arc<KeyPool> {
        &self.pool
    }

    /// Produces a reply for `request`, trying each available key at most once.
    ///
    /// 429/529 cool the key down (for the announced wait when there is one) and 401/403 disable
    /// it; either way the next key is tried at once and the chat is re-bound to it. A failure
    /// after text was shown ends the reply: retrying would repeat the text.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> CompletionOutcome {
        let provider = &request.endpoint.id;
        let body = serde_json::to_vec(&request.endpoint.completion_body(
            &request.model,
            &request.messages,
            request.max_tokens,
            request.stream,
        ))
        .expect("a JSON value always serializes");

        let mut tried: Vec<KeyId> = Vec::new();
        // The last refusal the pool handled, for the message when no key is left after it.
        let mut last_refusal: Option<Failure> = None;
        let mut text = String::new();
        let outcome = |text: String, key: Option<&Credential>, attempts: u32, end: StopReason| CompletionOutcome {
            text,
            key_id: key.and_then(|c| match c {
                Credential::Pooled(s) => Some(s.key_id.clone()),
                Credential::ProviderLevel(_) => None,
            }),
            key_label: key.map(Credential::label),
            attempts,
            end,
        };
        let mut attempts = 0u32;
        let mut previous: Option<Credential> = None;

        loop {
            let credential = match self.choose(request, &tried) {
                Ok(credential) => credential,
                Err(Choice::Skip(key)) => {
                    tried.push(key);
                    continue;
                }
                Err(Choice::NoneLeft(reason)) => {
                    let message = match &last_refusal {
                        Some(last) => self.why_none_left(&request.endpoint, last),
                        None => format!("no API key of {} is available: {reason}", request.endpoint.name),
                    };
                    let error = CompletionError::NoAvailableKey(message);
                    return outcome(text, previous.as_ref(), attempts, StopReason::Failed(error));
                }
                Err(Choice::Fail(error)) => {
                    return outcome(text, previous.as_ref(), attempts, StopReason::Failed(error));
                }
            };
            attempts += 1;
            let (key_id, provider_level, rebound) = match &credential {
                Credential::Pooled(s) => (Some(s.key_id.to_string()), false, s.rebound),
                Credential::ProviderLevel(_) => (None, true, false),
            };
            on_event(CompletionEvent::KeySelected {
                key_id,
                key_label: credential.label(),
                provider_level,
                rebound,
                attempt: attempts,
            });

            let redact = |text: &str| self.redactor(&request.endpoint, credential.secret()).redact(text);
            let attempt = Attempt {
                http: &self.http,
                endpoint: &request.endpoint,
                key: credential.secret(),
                body: &body,
                stream: request.stream,
                now: self.clock.now(),
                redact: &redact,
            };
            let mut on_text = |piece: &str| on_event(CompletionEvent::Delta { text: piece.to_owned() });
            let end = attempt.run(&mut text, &mut on_text, cancel).await;

            let failure = match end {
                AttemptEnd::Finished => {
                    if let Credential::Pooled(selection) = &credential {
                        self.pool.report_success(&selection.key_id);
                    }
                    return outcome(text, Some(&credential), attempts, StopReason::Finished);
                }
                AttemptEnd::Cancelled => return outcome(text, Some(&credential), attempts, StopReason::Cancelled),
                AttemptEnd::Broken(reason) => {
                    let error = if text.is_empty() {
                        CompletionError::Network(reason)
                    } else {
                        CompletionError::Interrupted(reason)
                    };
                    return outcome(text, Some(&credential), attempts, StopReason::Failed(error));
                }
                AttemptEnd::Refused(failure) => failure,
            };
            let pooled = match &credential {
                Credential::Pooled(selection) => FailureKind::of_status(failure.status, failure.retry_after)
                    .map(|kind| (selection.key_id.clone(), kind)),
                Credential::ProviderLevel(_) => None,
            };
            let Some((key, kind)) = pooled else {
                let error = if text.is_empty() {
                    CompletionError::Provider(failure)
                } else {
                    CompletionError::Interrupted(format!(
                        "the provider answered HTTP {}: {}",
                        failure.status, failure.message
                    ))
                };
                return outcome(text, Some(&credential), attempts, StopReason::Failed(error));
            };
            tracing::info!(provider = %provider, key = %key, status = failure.status, "key refused; failing over");
            tried.push(key.clone());
            if let Err(error) = self.report(provider, &key, failure.status, kind) {
                return outcome(text, Some(&credential), attempts, StopReason::Failed(error.into()));
            }
            if !text.is_empty() {
                let error = CompletionError::Interrupted(format!(
                    "the provider answered HTTP {}: {}",
                    failure.status, failure.message
                ));
                return outcome(text, Some(&credential), attempts, StopReason::Failed(error));
            }
            on_event(CompletionEvent::Failover {
                key_label: credential.label(),
                status: failure.status,
                reason: kind,
                message: failure.message.clone(),
            });
            last_refusal = Some(failure);
            previous = Some(credential);
        }
    }

    /// Tells the pool about a refusal and records a disable it decides on.
    fn report(&self, provider: &ProviderId, key: &KeyId, status: u16, kind: FailureKind) -> Result<(), PoolError> {
        let now = self.clock.now();
        let outcome = self.pool.report_failure(keypool::Failure { provider, key, status, kind }, now)?;
        if let FailureOutcome::Disabled { reason } = outcome {
            self.recorder.key_disabled(provider, key, reason, now);
        }
        Ok(())
    }

    /// The key for the next attempt: the session's pooled key, or the provider-level key while
    /// the pool is empty.
    fn choose(&self, request: &CompletionRequest, tried: &[KeyId]) -> Result<Credential, Choice> {
        let provider = &request.endpoint.id;
        let name = &request.endpoint.name;
        let selection = self
            .pool
            .select(SelectionRequest::new(provider).for_session(&request.session).excluding(tried), self.clock.now());
        match selection {
            Ok(selection) => Ok(Credential::Pooled(selection)),
            Err(PoolError::NoAvailableKey { reason: Unavailability::NoKeys, .. }) => {
                match &request.endpoint.provider_key {
                    Some(raw) => match self.resolver.resolve(raw) {
                        Ok(secret) => Ok(Credential::ProviderLevel(secret)),
                        Err(error) => Err(Choice::Fail(CompletionError::NoAvailableKey(format!(
                            "the provider key refers to ${}, which has no usable value",
                            error.var()
                        )))),
                    },
                    None => Err(Choice::Fail(CompletionError::NoAvailableKey(format!(
                        "{name} has no API keys: add one in Settings → Providers → {name} → API Key Pool"
                    )))),
                }
            }
            Err(PoolError::UnresolvedEnv { key_id, label, var, .. }) => {
                tracing::warn!(key = %key_id, var = %var, label = ?label, "pooled key refers to an unset variable; skipping it");
                Err(Choice::Skip(key_id))
            }
            Err(PoolError::NoAvailableKey { reason, .. }) => Err(Choice::NoneLeft(reason)),
            Err(error) => Err(Choice::Fail(error.into())),
        }
    }

    /// Why no key is left after `last` was refused, in terms the user can act on.
    fn why_none_left(&self, endpoint: &ProviderEndpoint, last: &Failure) -> String {
        let now = self.clock.now();
        let provider = &endpoint.name;
        let Ok(keys) = self.pool.status(&endpoint.id, now) else {
            return format!("no API key of {provider} is left to try");
        };
        let first_free = keys.iter().filter(|k| k.state == KeyState::Cooling).filter_map(|k| k.cooling_until).min();
        let disabled: Vec<String> = keys
            .iter()
            .filter(|k| k.state == KeyState::Disabled)
            .map(|k| k.label.clone().map_or_else(|| k.key_id.to_string(), |l| format!("\"{l}\"")))
            .collect();
        let enabled_left = keys.iter().any(|k| k.state == KeyState::Active);
        let last_words = format!("last answer: HTTP {} {}", last.status, last.message);
        let cooling = first_free.map(|at| {
            let wait = at.saturating_duration_since(now).as_millis().div_ceil(1000);
            format!("the first is free again in {wait} s (at {at})")
        });
        match (cooling, disabled.is_empty()) {
            (Some(cooling), true) => {
                return format!("every key of {provider} is cooling down after rate limits; {cooling}; {last_words}")
            }
            (Some(cooling), false) => {
                return format!(
                    "no key of {provider} is available: the others cool down after rate limits ({cooling}) and {} disabled (fix or enable: {}); {last_words}",
                    disabled.len(),
                    disabled.join(", ")
                )
            }
            (None, false) if !enabled_left => {
                return format!(
                    "every key of {provider} is disabled; fix or enable one of: {}; {last_words}",
                    disabled.join(", ")
                )
            }
            _ => {}
        }
        format!("every available key of {provider} was tried for this request; {last_words}")
    }

    /// Probes `key` with the cheapest authenticated request (listing models). Touches no chat's
    /// binding and reports nothing to the pool.
    pub async fn probe(&self, endpoint: &ProviderEndpoint, key: &Secret) -> ProbeResult {
        let key = match self.resolver.resolve(key) {
            Ok(key) => key,
            Err(error) => {
                return ProbeResult {
                    ok: false,
                    status: None,
                    message: format!("environment variable {} has no usable value", error.var()),
                    latency_ms: 0,
                }
            }
        };
        let started = tokio::time::Instant::now();
        let response = endpoint.authorize(self.http.get(endpoint.models_url()), &key).send().await;
        let latency_ms = started.elapsed().as_millis() as u64;
        match response {
            Ok(response) if response.status().is_success() => {
                ProbeResult { ok: true, status: Some(response.status().as_u16()), message: "OK".into(), latency_ms }
            }
            Ok(response) if response.status().is_redirection() => ProbeResult {
                ok: false,
                status: Some(response.status().as_u16()),
                message: REDIRECT_REFUSED.into(),
                latency_ms,
            },
            Ok(response) => {
                let status = response.status().as_u16();
                let body = self.redactor(endpoint, &key).redact(&read_error_body(response).await);
                ProbeResult { ok: false, status: Some(status), message: error_message(&body), latency_ms }
            }
            Err(error) => ProbeResult {
                ok: false,
                status: None,
                message: if error.is_connect() { "could not connect".into() } else { "request failed".into() },
                latency_ms,
            },
        }
    }
}

impl CompletionService {
    /// A redactor for every key that could appear in `endpoint`'s answers: the one in use, the
    /// others of its pool (references resolved), and the provider-level key. Built only when
    /// there is upstream text to clean, never on the success path.
    fn redactor(&self, endpoint: &ProviderEndpoint, in_use: &Secret) -> Redactor {
        let stored = self.pool.secrets(&endpoint.id).unwrap_or_default();
        // Each by the preview of what is stored: a `$NAME` key by its name, not by its value.
        let named = stored
            .iter()
            .chain(&endpoint.provider_key)
            .filter_map(|raw| self.resolver.resolve(raw).ok().map(|secret| (secret, raw.preview())));
        Redactor::with_names(named.chain([(in_use.clone(), in_use.preview())]))
    }
}

/// Follows a redirect only to the same scheme, host and port: a key is never sent to an origin
/// the user did not choose. A redirect elsewhere is answered as the 3xx itself.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().last().is_some_and(|from| from.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

enum Choice {
    /// This key cannot be used (its `$NAME` is unset); try the next.
    Skip(KeyId),
    /// No pooled key can serve the request.
    NoneLeft(Unavailability),
    Fail(CompletionError),
}
