//! The completion service: pooled keys, failover, cooldowns, auth disabling.

use std::sync::Arc;

use keypool::{
    Clock, DisableReason, FailureKind, KeyId, KeyPool, ProviderId, Secret, SecretResolver, SessionId, Timestamp,
};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::error::{Breakage, CompletionError, Failure};
use crate::failover::{Attempt, Credential, Ended, Lesson, Plan, Settlement, Stop, Target, Tried};
use crate::http::{Connections, HttpClients, ProxyChoice, ProxyError};
use crate::provider::Usage;
use crate::provider::{refusal_of, ChatMessage, ProviderEndpoint};
use crate::provider_clock::ProviderClocks;
use crate::record::{AttemptOutcome, AttemptRecord};
use crate::redact::Redactor;
use crate::stream::{read_error_body, AttemptEnd, AttemptReport, Deadlines, Exchange, REDIRECT_REFUSED};
use crate::team::TeamLink;
use crate::verify::Verifications;
use crate::wait::Waiter;
use crate::ProviderKind;
use arc_swap::ArcSwapOption;

/// One request for a reply in a chat.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The chat: the pool keeps it on one key.
    pub session: SessionId,
    pub endpoint: ProviderEndpoint,
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Required by Anthropic; ignored by OpenAI-compatible providers and Gemini.
    pub max_tokens: u32,
    /// Stream the reply (SSE) or take it whole.
    pub stream: bool,
    /// Who asks, for the usage ledger: `chat`, or a local API client's user agent.
    pub source: String,
    /// The key the session had before (a chat remembers it across restarts).
    pub preferred_key: Option<KeyId>,
}

/// What the caller (the chat page) is told while a reply is produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionEvent {
    /// An attempt is about to be sent with this key. `rebound`: the chat moved to another key
    /// than the one it had (the provider's prompt cache starts cold).
    /// `keyless`: sent without a key (the pool is empty, the provider has no key of its own).
    KeySelected {
        key_id: Option<String>,
        key_label: String,
        provider_level: bool,
        keyless: bool,
        rebound: bool,
        attempt: u32,
    },
    /// The attempt was refused in a way the pool handles; the next key is tried at once.
    Failover { key_label: String, status: u16, reason: FailureKind, message: String },
    /// More text of the reply.
    Delta { text: String },
    /// Every key is spent, cooling or busy: the request waits until `until` (when a key frees
    /// up by itself), or until a request in flight ends (`until: None`), at most until
    /// `deadline`. `now` is the service's clock, for the countdown.
    Waiting { until: Option<Timestamp>, deadline: Timestamp, now: Timestamp },
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
    /// What the answering attempt used, as the provider reported it.
    pub usage: Option<Usage>,
    pub end: StopReason,
}

/// The result of probing one key.
#[derive(Debug, Clone)]
pub struct ProbeResult {
    pub ok: bool,
    pub status: Option<u16>,
    /// What went wrong, when something did.
    pub problem: Option<ProbeProblem>,
    /// The provider's words on a refusal; otherwise the English for `problem`.
    pub message: String,
    pub latency_ms: u64,
}

impl ProbeResult {
    /// What a model list asked for with a key says of the key.
    pub(crate) fn of(listed: Result<Vec<String>, ModelsFailure>, latency_ms: u64) -> ProbeResult {
        match listed {
            // A server that answers 200 with something else still accepted the key.
            Ok(_) | Err(ModelsFailure { problem: ProbeProblem::Unreadable, .. }) => {
                ProbeResult { ok: true, status: Some(200), problem: None, message: "OK".into(), latency_ms }
            }
            Err(failure) => ProbeResult {
                ok: false,
                status: failure.status,
                problem: Some(failure.problem),
                message: failure.message,
                latency_ms,
            },
        }
    }
}

/// Why a key test failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeProblem {
    /// The key is `$var`, which has no usable value.
    EnvUnset { var: String },
    /// The provider redirected to another origin; the key was not sent there.
    Redirected,
    /// The provider refused the key (`status`, its words in `message`).
    Refused,
    /// No answer came.
    Unreachable(Breakage),
    /// An answer came, but not a list of models.
    Unreadable,
    /// The key is accepted but still out of credit (a credit check failed).
    OutOfCredit,
}

/// Where the service records the pool's decisions that must outlive the process. The pool has
/// already acted on them in memory; the recorder persists them (the app's write path).
pub trait Recorder: Send + Sync {
    /// The provider rejected `key`: disable it in the store, with `reason`, at `at`.
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp);

    /// An upstream attempt ended, for the usage ledger. Called on the request's task: an
    /// implementation must hand the record off, not write it there.
    fn attempt(&self, record: AttemptRecord);

    /// Another member of the team enabled `key` again after a provider's rejection: enable it in
    /// the store if the store disabled it because the provider rejected it (a key the user
    /// switched off stays off). Only a team link calls it; without a team there is nothing to do.
    fn key_enabled(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        let _ = (provider, key, at);
    }
}

/// Sends chat completions with pooled keys. Cheap to clone; share one per app.
#[derive(Clone)]
pub struct CompletionService {
    /// The HTTP clients, rebuilt when the user chooses another proxy.
    pub(crate) http: Connections,
    pub(crate) pool: Arc<KeyPool>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) resolver: Arc<dyn SecretResolver>,
    pub(crate) recorder: Arc<dyn Recorder>,
    pub(crate) waiter: Arc<dyn Waiter>,
    /// Notified whenever an attempt ends: a request waiting for a busy key may find room.
    pub(crate) freed: Arc<Notify>,
    /// Providers that refused `stream_options` (some OpenAI-compatible servers reject unknown
    /// fields): their streams are asked without it, and report no usage.
    pub(crate) no_stream_usage: Arc<Mutex<HashSet<ProviderId>>>,
    /// How far each provider's clock is from ours, for the instants it announces.
    pub(crate) provider_clocks: Arc<ProviderClocks>,
    /// How long a provider may keep an attempt waiting.
    pub(crate) deadlines: Deadlines,
    /// Each provider's redactor, kept until its keys change.
    pub(crate) redactors: Arc<Mutex<HashMap<ProviderId, CachedRedactor>>>,
    /// The verifications of refused keys, one in flight per key.
    pub(crate) verifications: Arc<Verifications>,
    /// The other members of a team, when the pool is shared (none by default): a slot shared
    /// by every clone of the service, so joining or leaving a team at runtime reaches every
    /// service that holds one (see [`CompletionService::set_team`]).
    pub(crate) team: Arc<ArcSwapOption<Arc<dyn TeamLink>>>,
}

impl CompletionService {
    pub fn new(
        pool: Arc<KeyPool>,
        clock: Arc<dyn Clock>,
        resolver: Arc<dyn SecretResolver>,
        recorder: Arc<dyn Recorder>,
        waiter: Arc<dyn Waiter>,
    ) -> Self {
        CompletionService {
            http: Connections::new(),
            pool,
            clock,
            resolver,
            recorder,
            waiter,
            freed: Arc::new(Notify::new()),
            no_stream_usage: Arc::default(),
            provider_clocks: Arc::default(),
            deadlines: Deadlines::default(),
            redactors: Arc::default(),
            verifications: Arc::default(),
            team: Arc::default(),
        }
    }

    /// The same service sharing its pool's state with a team through `team` (see
    /// [`CompletionService::set_team`]).
    pub fn with_team(self, team: Arc<dyn TeamLink>) -> Self {
        self.set_team(Some(team));
        self
    }

    /// Shares the pool's state with `team` from now on (none: the pool is this process's own),
    /// for this service and every clone of it; answers the link it replaces, for the caller to
    /// stop. The new link is told how to wake the service's waiting requests when it frees room.
    ///
    /// Safe under concurrent requests: the slot is swapped atomically, and every use of the
    /// link on a request's path ([`TeamLink::binding`], [`TeamLink::hand_out`],
    /// [`TeamLink::taught`]) reads the slot once and is whole on the link it read: a hand-out's
    /// [`crate::TeamHold`] belongs to the link that issued it and ends its count there whatever
    /// the slot holds by then, and a lesson told to the new link is as true for it as for the
    /// old. A request running across a swap therefore mixes at most two links call by call,
    /// never within one call, and each call is one the member could have made alone (the
    /// links only ever add what the team knows; deciding without one is always allowed).
    pub fn set_team(&self, team: Option<Arc<dyn TeamLink>>) -> Option<Arc<dyn TeamLink>> {
        if let Some(team) = &team {
            let freed = self.freed.clone();
            team.attach(Arc::new(move || freed.notify_waiters()));
        }
        let old = self.team.swap(team.map(Arc::new));
        old.map(|old| (*old).clone())
    }

    /// The team link, when the pool is shared.
    pub fn team(&self) -> Option<Arc<dyn TeamLink>> {
        self.team.load_full().map(|team| (*team).clone())
    }

    /// The user enabled `key` again: the pool lifts a provider's rejection of it, and so does
    /// every member of the team.
    pub fn key_enabled(&self, key: &KeyId) {
        self.pool.clear_auth_block(key);
        if let Some(team) = self.team() {
            team.key_enabled(key);
        }
    }

    /// A background probe of the out-of-credit `key` answered: the pool (and the team) return it
    /// to rotation when `usable`, or probe it again later.
    pub fn probed(&self, key: &KeyId, usable: bool) {
        self.pool.report_probe(key, usable, self.clock.now());
        if let Some(team) = self.team() {
            team.probed(key, usable);
        }
    }

    /// Sends provider requests over `https` through `proxy` from now on (none by default; never
    /// for loopback hosts, and never for plain `http`). On an error nothing changes.
    pub fn set_proxy(&self, proxy: &ProxyChoice) -> Result<(), ProxyError> {
        self.http.set_proxy(proxy)
    }

    /// Whether `proxy` can be used, without using it.
    pub fn check_proxy(&self, proxy: &ProxyChoice) -> Result<(), ProxyError> {
        HttpClients::build(proxy).map(drop)
    }

    /// The HTTP client for a request to `url`.
    pub(crate) fn client(&self, url: &str) -> reqwest::Client {
        self.http.for_url(url)
    }

    /// The same service (pool, team, ledger, proxy choice) with HTTP connections of its own:
    /// for a runtime of its own, so that its requests' upstream connections are driven on its
    /// thread, not woken on another's.
    pub fn with_own_connections(&self) -> Self {
        CompletionService { http: self.http.own(), ..self.clone() }
    }

    /// The same service with other deadlines for the provider's answers.
    pub fn with_deadlines(self, deadlines: Deadlines) -> Self {
        CompletionService { deadlines, ..self }
    }

    pub fn pool(&self) -> &Arc<KeyPool> {
        &self.pool
    }

    /// The service's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The environment variable a stored `$NAME` key refers to, when it has no usable value
    /// now; `None` for a literal key or a variable that is set.
    pub fn unresolved_var(&self, stored: &Secret) -> Option<String> {
        self.resolver.resolve(stored).err().map(|error| error.var().to_owned())
    }

    /// Produces a reply for `request`, trying each available key at most once.
    ///
    /// Keys whose announced budget for the request's model is spent are skipped without a
    /// refused request. When every key is spent, cooling or busy and one frees up within the
    /// pool's `max_wait`, the request waits for it (a [`CompletionEvent::Waiting`]) and goes.
    /// A refusal is reported to the pool (cooldown, per-model spend, disable, out of credit)
    /// and the next key is tried at once, the chat re-bound to it. A failure after text was
    /// shown ends the reply: retrying would repeat the text. The loop itself is
    /// [`CompletionService::drive`]'s; this is what a chat's attempt is.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> CompletionOutcome {
        let scope = scope_of(request.endpoint.kind, &request.model);
        let target = Target {
            endpoint: &request.endpoint,
            session: &request.session,
            preferred_key: request.preferred_key.as_ref(),
        };
        let tokens = estimate_tokens(&request.messages);
        let plan = Plan::new(self, target, &scope, tokens, &request.model, &request.source);
        let mut attempt = ChatAttempt { service: self, request, text: String::new(), usage: None };
        let driven = self.drive(&plan, &mut attempt, on_event, cancel).await;
        let (key_id, key_label) = driven.last_key.map_or((None, None), |(id, label)| (id, Some(label)));
        let end = match driven.end {
            Ok(()) => StopReason::Finished,
            Err(Stop::Cancelled) => StopReason::Cancelled,
            Err(Stop::Failed(error)) => StopReason::Failed(error),
        };
        CompletionOutcome {
            text: attempt.text,
            key_id,
            key_label,
            attempts: driven.attempts,
            usage: attempt.usage,
            end,
        }
    }

    /// Whether an out-of-credit key can answer again: the smallest real completion (one token of
    /// `model`), since listing models succeeds without credit. Touches no binding, reports
    /// nothing to the pool.
    pub async fn probe_credit(&self, endpoint: &ProviderEndpoint, key: &Secret, model: &str) -> bool {
        let Ok(key) = self.resolver.resolve(key) else { return false };
        let messages = [ChatMessage::new(crate::Role::User, "Hi")];
        let body = endpoint.completion_body(model, &messages, 1, false);
        let request = endpoint
            .authorize(self.client(&endpoint.base_url).post(endpoint.completion_url(model, false)), &key)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        matches!(request.send().await, Ok(response) if response.status().is_success())
    }

    /// Probes `key` with the cheapest authenticated request (listing models). Touches no chat's
    /// binding and reports nothing to the pool.
    pub async fn probe(&self, endpoint: &ProviderEndpoint, key: &Secret) -> ProbeResult {
        let started = tokio::time::Instant::now();
        let listed = self.list_models(endpoint, Some(key)).await;
        ProbeResult::of(listed, started.elapsed().as_millis() as u64)
    }

    /// The models `endpoint` lists (OpenAI-compatible `GET models`, Anthropic `GET v1/models`,
    /// Gemini `GET v1beta/models` (only those that generate content, without `models/`),
    /// following their pages), asked with `key`, or with no key at all (local servers).
    pub async fn list_models(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        let key = self.resolved_for_listing(key)?;
        self.fetch_models(endpoint, key.as_ref()).await
    }

    /// The models a provider that is not saved yet lists (a form being filled in), asked with
    /// `key` (resolved here when it is a `$NAME`) or none. As [`CompletionService::list_models`]
    /// does, redirects are followed only within the origin, and the provider's words are
    /// returned with the key masked; nothing is kept, and no pool is consulted.
    pub async fn list_models_unsaved(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        let key = self.resolved_for_listing(key)?;
        self.fetch_models_masking(endpoint, key.as_ref(), Masking::KeyInUse).await
    }

    /// The value a model list is asked with: `key` with its `$NAME` resolved.
    fn resolved_for_listing(&self, key: Option<&Secret>) -> Result<Option<Secret>, ModelsFailure> {
        key.map(|key| self.resolver.resolve(key)).transpose().map_err(|error| ModelsFailure {
            key_refused: false,
            status: None,
            problem: ProbeProblem::EnvUnset { var: error.var().to_owned() },
            message: format!("environment variable {} has no usable value", error.var()),
        })
    }

    /// [`CompletionService::list_models`] with `key` already resolved. Each page is read to at
    /// most [`MAX_MODEL_LIST`] bytes, and a model listed twice is kept once.
    pub(crate) async fn fetch_models(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        self.fetch_models_masking(endpoint, key, Masking::Pool).await
    }

    async fn fetch_models_masking(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
        masking: Masking,
    ) -> Result<Vec<String>, ModelsFailure> {
        let mut models: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let mut url = reqwest::Url::parse(&endpoint.models_url()).map_err(|_| ModelsFailure {
                key_refused: false,
                status: None,
                problem: ProbeProblem::Unreachable(Breakage::Request),
                message: Breakage::Request.to_string(),
            })?;
            let (size, cursor) = match endpoint.kind {
                ProviderKind::Anthropic => (Some("limit"), "after_id"),
                ProviderKind::Gemini => (Some("pageSize"), "pageToken"),
                ProviderKind::Openai => (None, ""),
            };
            if let Some(size) = size {
                url.query_pairs_mut().append_pair(size, "1000");
                if let Some(after) = &after {
                    url.query_pairs_mut().append_pair(cursor, after);
                }
            }
            let request = self.client(url.as_str()).get(url);
            let request = endpoint.authorize_with(request, key);
            let response = request.send().await.map_err(|error| {
                let kind = crate::stream::breakage(&error);
                ModelsFailure {
                    status: None,
                    problem: ProbeProblem::Unreachable(kind),
                    message: kind.to_string(),
                    key_refused: false,
                }
            })?;
            let status = response.status().as_u16();
            if response.status().is_redirection() {
                return Err(ModelsFailure {
                    status: Some(status),
                    problem: ProbeProblem::Redirected,
                    message: REDIRECT_REFUSED.into(),
                    key_refused: false,
                });
            }
            if !response.status().is_success() {
                let body = read_error_body(response, self.deadlines.idle, &*self.waiter).await;
                let refusal = refusal_of(endpoint.kind, status, &body, None, keypool::Announced::default());
                let key_refused = refusal.pool_kind() == Some(FailureKind::AuthRejected);
                let message = match (key, masking) {
                    // Decoded words may hold a key written with escapes: masked again.
                    (Some(key), Masking::Pool) => self.redactor(endpoint, Some(key)).redact(&refusal.message),
                    (Some(key), Masking::KeyInUse) => Redactor::new([key]).redact(&refusal.message),
                    (None, _) => refusal.message,
                };
                return Err(ModelsFailure {
                    status: Some(status),
                    problem: ProbeProblem::Refused,
                    message,
                    key_refused,
                });
            }
            let unreadable = || ModelsFailure {
                status: Some(status),
                problem: ProbeProblem::Unreadable,
                message: "the provider's answer is not a list of models".into(),
                key_refused: false,
            };
            let body = crate::stream::read_whole(response, MAX_MODEL_LIST, self.deadlines.idle, &*self.waiter)
                .await
                .map_err(|_| unreadable())?;
            let page: Value = serde_json::from_slice(&body).map_err(|_| unreadable())?;
            let (ids, next) = match endpoint.kind {
                ProviderKind::Gemini => crate::gemini::models_page(&page).ok_or_else(unreadable)?,
                ProviderKind::Openai | ProviderKind::Anthropic => {
                    let listed =
                        page["data"].as_array().or_else(|| page["models"].as_array()).ok_or_else(unreadable)?;
                    let ids = listed.iter().filter_map(|m| m["id"].as_str().or_else(|| m["name"].as_str()));
                    let next = match (page["has_more"].as_bool(), page["last_id"].as_str()) {
                        (Some(true), Some(last)) if endpoint.kind == ProviderKind::Anthropic => Some(last.to_owned()),
                        _ => None,
                    };
                    (ids.map(str::to_owned).collect(), next)
                }
            };
            for id in ids {
                if seen.insert(id.clone()) {
                    models.push(id);
                }
            }
            match next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        Ok(models)
    }
}

/// Which keys a model list's refusal is masked of.
#[derive(Clone, Copy)]
enum Masking {
    /// Every key of the endpoint's pool, and its own key (a saved provider).
    Pool,
    /// The key the list was asked with (a provider not saved: it has no pool).
    KeyInUse,
}

/// The most of one page of a model list that is read: far more than any provider's list.
pub const MAX_MODEL_LIST: usize = 8 * 1024 * 1024;

/// Anthropic and Gemini page their model lists; more than this many pages is not a real list.
const MAX_MODEL_PAGES: usize = 20;

/// Why a model list could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelsFailure {
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    pub problem: ProbeProblem,
    /// The provider's words on a refusal; otherwise the English for `problem`.
    pub message: String,
    /// The refusal says the key itself is refused (401, 403, Gemini's `API_KEY_INVALID`).
    pub key_refused: bool,
}

impl CompletionService {
    /// A redactor for every key that could appear in `endpoint`'s answers: the one in use, the
    /// others of its pool (references resolved), and the provider-level key. Used only when
    /// there is upstream text to clean, never on the success path; kept per provider and built
    /// again only when its keys (or the provider-level key) changed, since with thousands of keys
    /// building one costs far more than using it.
    pub(crate) fn redactor(&self, endpoint: &ProviderEndpoint, in_use: Option<&Secret>) -> Arc<Redactor> {
        let mut cache = self.redactors.lock().unwrap_or_else(|e| e.into_inner());
        let cached = cache.get(&endpoint.id);
        let known = cached.map(|c| c.epoch);
        let (epoch, stored) = match self.pool.secrets_since(&endpoint.id, known) {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "the pool's keys could not be read for redaction; masking the key in use only");
                return Arc::new(Redactor::new(in_use));
            }
        };
        let provider_key = endpoint.provider_key.clone();
        let same_key =
            |cached: &Option<Secret>| cached.as_ref().map(Secret::expose) == provider_key.as_ref().map(Secret::expose);
        if let (Some(cached), None) = (cached, &stored) {
            if same_key(&cached.provider_key) && in_use.is_none_or(|key| cached.redactor.covers(key)) {
                return cached.redactor.clone();
            }
        }
        let stored = match stored {
            Some(stored) => stored,
            None => self.pool.secrets(&endpoint.id).unwrap_or_default(),
        };
        // Each by the preview of what is stored: a `$NAME` key by its name, not by its value.
        let named = stored
            .iter()
            .chain(&endpoint.provider_key)
            .filter_map(|raw| self.resolver.resolve(raw).ok().map(|secret| (secret, raw.preview())));
        let in_use = in_use.map(|key| (key.clone(), key.preview()));
        let redactor = Arc::new(Redactor::with_names(named.chain(in_use)));
        cache.insert(endpoint.id.clone(), CachedRedactor { epoch, provider_key, redactor: redactor.clone() });
        redactor
    }
}

/// A provider's redactor and what it was made of.
pub(crate) struct CachedRedactor {
    /// The pool's load it was made from.
    epoch: u64,
    provider_key: Option<Secret>,
    redactor: Arc<Redactor>,
}

/// Whether a refusal is a server saying it does not know `stream_options`.
fn rejects_stream_options(failure: &Failure) -> bool {
    failure.status == 400 && failure.message.contains("stream_options")
}

/// The rate-limit scope of a request to `model`: OpenAI limits each model separately, Anthropic
/// each model class (the Opus models share one limit, the Sonnet models another, the Haiku
/// models a third).
pub fn scope_of(kind: ProviderKind, model: &str) -> String {
    if kind == ProviderKind::Gemini {
        // Gemini's quotas are per model; `models/x` and `x` are one model.
        return model.strip_prefix("models/").unwrap_or(model).to_owned();
    }
    if kind == ProviderKind::Anthropic {
        let lower = model.to_ascii_lowercase();
        if let Some(class) = ["opus", "sonnet", "haiku"].into_iter().find(|class| lower.contains(class)) {
            return format!("claude-{class}");
        }
    }
    model.to_owned()
}

/// A request's input tokens, estimated as characters / 4 (rounded up) over every message: the
/// usual rule of thumb for English text, close enough to admit requests against a token window.
pub fn estimate_tokens(messages: &[ChatMessage]) -> u32 {
    let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

/// A chat's attempt: the request built from the conversation, the provider's stream parsed into
/// text as it comes and passed on as [`CompletionEvent::Delta`]s.
struct ChatAttempt<'a> {
    service: &'a CompletionService,
    request: &'a CompletionRequest,
    /// The reply's text so far (what was shown, when a later failure ends it).
    text: String,
    /// What the answering attempt used.
    usage: Option<Usage>,
}

impl Attempt for ChatAttempt<'_> {
    type Answer = ();
    type Output = ();

    async fn run(
        &mut self,
        credential: &Credential,
        _attempt: u32,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> Tried<()> {
        let (service, request) = (self.service, self.request);
        let provider = &request.endpoint.id;
        let stream_usage = !service.no_stream_usage.lock().unwrap_or_else(|e| e.into_inner()).contains(provider);
        let body = serde_json::to_vec(&request.endpoint.completion_body_with(
            &request.model,
            &request.messages,
            request.max_tokens,
            request.stream,
            stream_usage,
        ))
        .expect("a JSON value always serializes");
        let redact = |text: &str| service.redactor(&request.endpoint, credential.secret()).redact(text);
        let exchange = Exchange {
            http: &service.client(&request.endpoint.base_url),
            endpoint: &request.endpoint,
            key: credential.secret(),
            model: &request.model,
            body: &body,
            stream: request.stream,
            clock: &*service.clock,
            provider_clocks: &service.provider_clocks,
            deadlines: service.deadlines,
            waiter: &*service.waiter,
            redact: &redact,
        };
        let mut on_text = |piece: &str| on_event(CompletionEvent::Delta { text: piece.to_owned() });
        let mut report = AttemptReport::default();
        let end = exchange.run(&mut self.text, &mut on_text, &mut report, cancel).await;
        let ended = match end {
            AttemptEnd::Finished => Ended::Answered(()),
            AttemptEnd::Cancelled => Ended::Cancelled,
            AttemptEnd::Broken(broke) => Ended::Broken(broke),
            AttemptEnd::Refused(failure) if stream_usage && request.stream && rejects_stream_options(&failure) => {
                // A server that does not know `stream_options`: remember it, ask again without.
                tracing::info!(%provider, "the provider refuses stream_options; streams go without usage there");
                service.no_stream_usage.lock().unwrap_or_else(|e| e.into_inner()).insert(provider.clone());
                Ended::Again(failure)
            }
            AttemptEnd::Refused(failure) => Ended::Refused(failure),
        };
        Tried {
            ended,
            shown: !self.text.is_empty(),
            announced: report.announced,
            usage: report.usage,
            first_token_ms: report.first_token.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    fn answered(&mut self, (): (), settlement: Settlement, tried: Tried<()>) {
        self.usage = tried.usage;
        let lesson = Lesson::Answer(&tried.announced);
        let _ = settlement.settle(AttemptOutcome::Ok, Some(200), tried.usage, tried.first_token_ms, lesson);
    }
}
