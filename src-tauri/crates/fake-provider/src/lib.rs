//! A fake LLM provider on loopback, speaking OpenAI's Chat Completions and Responses APIs,
//! Anthropic's Messages API and Google Gemini's API, whose answers are scripted per API key.
//! Gemini's: see [`gemini`].
//!
//! Each key has a queue of [`Reply`]s (used once each) and an optional standing reply (used when
//! the queue is empty); keys with neither get a short default text. Every request is logged.
//! Tests drive it in-process; the end-to-end suite runs the binary and scripts it over HTTP
//! (`POST /__fake/script`, `POST /__fake/release`, `GET /__fake/requests`, `POST /__fake/reset`,
//! `POST /__fake/models` with a JSON list of model ids, `POST /__fake/text-only` with the models
//! that take no images, `POST /__fake/project` `{key, project}`,
//! `POST /__fake/project-limit` `{project, requests, windowMs, perDay?}`, and OpenRouter's
//! `POST /__fake/credit` `{key, limit, usage}`, and DeepSeek's, Moonshot's and SiliconFlow's
//! `POST /__fake/balance` `{key, amount, currency?, available?, raw?}`, and the coding plans'
//! `POST /__fake/windows` `{key, fiveHoursUsed, fiveHoursReset?, weekUsed?, weekReset?, raw?}`). OpenRouter's API is under
//! `/api/v1` ([`openrouter`]); the vendors' balance reads are [`vendors`]. A key that begins [`NEVER_ISSUED`] is refused by the model list (unless it
//! is public: [`FakeProvider::public_models`]) and by OpenRouter's key answer, as a provider that
//! checks keys refuses one it never issued.

mod content;
pub mod gemini;
pub mod openrouter;
pub mod plans;
mod responses;
pub mod vendors;

pub use content::SeenImage;

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use base64::Engine;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

/// One scripted answer. In every `message`, `{key}` stands for the API key the request carried,
/// and for the forms gateways that repeat a key write it in: `{key_urlencoded}` (percent-encoded,
/// upper-case hex), `{key_urlencoded_lower}`, `{key_json_escaped}` (every character as `\uXXXX`,
/// which JSON decodes back into the key) and `{key_base64}` (of `user:KEY`, as in Basic auth).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A successful reply made of these pieces (streamed one event each, or joined).
    Text { chunks: Vec<String> },
    /// An HTTP error with these headers (e.g. `retry-after`) and message.
    Status {
        status: u16,
        #[serde(default)]
        headers: Vec<(String, String)>,
        #[serde(default)]
        message: String,
    },
    /// HTTP 200, these pieces, then an error event inside the stream (`error_type` as the
    /// provider names it, e.g. `overloaded_error`, `rate_limit_error`, `authentication_error`).
    StreamError {
        #[serde(default)]
        chunks_before: Vec<String>,
        error_type: String,
        #[serde(default)]
        message: String,
    },
    /// HTTP 200, these pieces, then the connection drops mid-stream.
    Drop {
        #[serde(default)]
        chunks_before: Vec<String>,
    },
    /// HTTP 200, these pieces, then nothing until `gate` is released; then `chunks_after`.
    /// Scripted for a model list: the list, once `gate` is released.
    Hold {
        #[serde(default)]
        chunks_before: Vec<String>,
        gate: String,
        #[serde(default)]
        chunks_after: Vec<String>,
    },
    /// HTTP 200, `comments` SSE comments (`: keep-alive`, as a provider holding a queued request
    /// open sends them) and no event until `gate` is released; then `chunks`.
    KeepAlive {
        comments: u32,
        gate: String,
        #[serde(default)]
        chunks: Vec<String>,
    },
    /// A successful reply with a pause before each piece.
    Slow { chunks: Vec<String>, delay_ms: u64 },
    /// The account is out of credit, in the dialect's words: OpenAI's 429 `insufficient_quota`,
    /// Anthropic's 400 "Your credit balance is too low".
    QuotaExceeded,
    /// A redirect (`status` 301/302/307/308) to the same path on the server at `to`
    /// (`http://host:port`), as a misconfigured gateway might send.
    Redirect { status: u16, to: String },
    /// HTTP 200 and then `bytes` of one event that never ends (`data: xxxx…`), as a broken or
    /// hostile server might stream; taken whole, a body of that many bytes.
    Flood { bytes: u64 },
    /// A 429 naming a quota: in Gemini's words a `QuotaFailure` with `quota_id` (e.g.
    /// [`gemini::PER_MINUTE_QUOTA`]) and a `RetryInfo` with `retry_delay` (`"37s"`) when given;
    /// the other dialects' plain rate limit.
    QuotaRefused {
        quota_id: String,
        #[serde(default)]
        retry_delay: Option<String>,
    },
    /// The key is not valid: Gemini's 400 with `ErrorInfo.reason: API_KEY_INVALID`, the others' 401.
    InvalidKey,
    /// Gemini: these pieces, then the safety filter blocks the prompt (`prompt`, as
    /// `promptFeedback.blockReason`) or the reply (`finishReason: SAFETY`).
    Blocked {
        #[serde(default)]
        chunks_before: Vec<String>,
        #[serde(default)]
        prompt: bool,
    },
    /// These pieces, then the stream ends without saying the reply is complete.
    Unfinished { chunks: Vec<String> },
    /// HTTP 200 and text events of `piece`, each a whole event, without end until the client
    /// hangs up (a runaway model); counted in [`FakeProvider::flooded`]. Streamed only.
    Endless { piece: String },
    /// The model calls the tool `name` with `arguments` (JSON text; streamed in two pieces), in
    /// the dialect's words (OpenAI's `tool_calls`, Anthropic's `tool_use`, Gemini's
    /// `functionCall`).
    ToolCall { name: String, arguments: String },
}

impl Reply {
    pub fn text(chunks: &[&str]) -> Reply {
        Reply::Text { chunks: chunks.iter().map(|c| c.to_string()).collect() }
    }

    pub fn status(status: u16) -> Reply {
        Reply::Status { status, headers: Vec::new(), message: format!("scripted HTTP {status}") }
    }

    pub fn status_with(status: u16, headers: &[(&str, &str)]) -> Reply {
        Reply::Status {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            message: format!("scripted HTTP {status}"),
        }
    }
}

/// What the fake saw of one request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Seen {
    /// The API key it carried (`Authorization: Bearer` or `x-api-key`).
    pub key: String,
    pub path: String,
    pub stream: bool,
    pub model: String,
    /// How many turns the request's `messages` held (an OpenAI system message is one).
    pub messages: usize,
    /// The system prompt: Anthropic's `system`, or the first OpenAI message when it is a
    /// system message.
    #[serde(default)]
    pub system: Option<String>,
    /// The text of the last user turn.
    #[serde(default)]
    pub last_user: String,
    /// The request body exactly as it arrived.
    #[serde(default)]
    pub body: String,
    /// The `anthropic-version` header it carried.
    #[serde(default)]
    pub anthropic_version: Option<String>,
    /// The images of every user turn, in order, read in the dialect's shape.
    #[serde(default)]
    pub images: Vec<SeenImage>,
    /// Anthropic: how many `cache_control` breakpoints the request set (tools, system blocks,
    /// content blocks).
    #[serde(default)]
    pub breakpoints: usize,
    /// The Keypool hop marks it carried (`x-keypool-hop`).
    #[serde(default)]
    pub hop: Option<String>,
}

impl Seen {
    /// A request for a list (of models), with no body to read.
    pub(crate) fn listing(key: &str, path: &str) -> Seen {
        Seen {
            key: key.to_owned(),
            path: path.to_owned(),
            stream: false,
            model: String::new(),
            messages: 0,
            system: None,
            last_user: String::new(),
            body: String::new(),
            anthropic_version: None,
            images: Vec::new(),
            breakpoints: 0,
            hop: None,
        }
    }
}

/// Anthropic's most breakpoints in one request.
const MAX_BREAKPOINTS: usize = 4;

/// The `cache_control` breakpoints of a Messages request, or Anthropic's refusal of them: more
/// than four, or one on an empty text block.
fn breakpoints(body: &Value) -> Result<usize, String> {
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let mut blocks = list(&body["tools"]);
    blocks.extend(list(&body["system"]));
    for turn in list(&body["messages"]) {
        blocks.extend(list(&turn["content"]));
    }
    let marked: Vec<&Value> = blocks.iter().filter(|b| b.get("cache_control").is_some()).collect();
    if marked.iter().any(|b| b["type"] == "text" && b["text"].as_str().is_some_and(str::is_empty)) {
        return Err("messages: cache_control cannot be set for empty text blocks".into());
    }
    if marked.len() > MAX_BREAKPOINTS {
        return Err(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {}.",
            marked.len()
        ));
    }
    Ok(marked.len())
}

/// A system prompt as text: Anthropic's string or text blocks, or an OpenAI system message's.
fn system_text(body: &Value) -> Option<String> {
    let text_of = |v: &Value| match v {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => Some(blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")),
        _ => None,
    };
    text_of(&body["system"]).or_else(|| {
        let first = &body["messages"][0];
        (first["role"] == "system").then(|| text_of(&first["content"]).unwrap_or_default())
    })
}

#[derive(Default)]
pub(crate) struct Script {
    queued: HashMap<String, VecDeque<Reply>>,
    standing: HashMap<String, Reply>,
    pub(crate) seen: Vec<Seen>,
    released: HashSet<String>,
    limits: HashMap<String, RateLimit>,
    windows: HashMap<(String, String), Window>,
    /// Requests refused by a rate limit, for benchmarks.
    pub(crate) refused: u64,
    reject_stream_options: bool,
    /// Answers the Responses API with a 404, as OpenAI-compatible servers without it do.
    pub(crate) without_responses: bool,
    /// Models that take no images: a request with one is refused with a 400.
    pub(crate) text_only: HashSet<String>,
    /// What `GET models` lists; `None`: the one `fake-model`.
    pub(crate) models: Option<Vec<String>>,
    /// Bytes of floods sent so far (what the client read before it hung up, and a little more).
    flooded: u64,
    /// Keys whose model list is answered whatever is scripted: their refusals are the requests'.
    listing_keys: HashSet<String>,
    /// The model list answers any key, a revoked or never issued one too (a public list, or a
    /// gateway's page).
    public_models: bool,
    /// Keys restricted by scope, as OpenAI's restricted keys without the Models permission: their
    /// model list is refused with a 403, their chats are answered.
    restricted_keys: HashSet<String>,
    /// How the provider's clock and its announced instants look.
    provider_clock: ProviderClock,
    /// Gemini: the project of each key (a key not listed is a project of its own).
    pub(crate) projects: HashMap<String, String>,
    /// Gemini: each project's quotas, per model.
    pub(crate) project_limits: HashMap<String, gemini::ProjectLimit>,
    pub(crate) project_usage: HashMap<(String, String), gemini::ProjectUse>,
    /// OpenRouter: what each key may spend (a key not listed: unlimited, nothing spent).
    pub(crate) credits: HashMap<String, openrouter::Credit>,
    /// DeepSeek, Moonshot, SiliconFlow: what each key's account holds (not listed: 100.00).
    pub(crate) balances: HashMap<String, vendors::VendorBalance>,
    /// Z.ai, MiniMax: each key's plan windows (not listed: nothing used).
    pub(crate) plan_windows: HashMap<String, plans::PlanWindows>,
}

/// The provider's own clock as its answers show it: its `date` header, the instants of
/// Anthropic's reset headers, and its rate windows, which all run on it.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProviderClock {
    /// How far the provider's clock is ahead of the fake's (negative: behind), in milliseconds.
    #[serde(default)]
    pub offset_ms: i64,
    /// Reset instants in whole seconds, truncated (`2026-12-01T10:15:42Z`), as some providers
    /// send them, instead of with milliseconds.
    #[serde(default)]
    pub whole_second_resets: bool,
    /// Announces its windows' resets this much before they end, as a provider whose rate limiter
    /// and whose headers disagree: a client that believes them sends too early and is refused
    /// (with a `retry-after` that tells the truth).
    #[serde(default)]
    pub early_resets_ms: u64,
}

pub(crate) struct Shared {
    pub(crate) script: Mutex<Script>,
    gate_opened: Notify,
    /// Milliseconds since the Unix epoch, as the rate windows see time.
    clock: Clock,
}

impl Shared {
    /// The provider's time: the fake's clock moved by the provider clock's offset.
    pub(crate) fn provider_now(&self) -> i64 {
        let offset = self.script.lock().unwrap().provider_clock.offset_ms;
        (self.clock)().saturating_add(offset)
    }
}

/// The fake's clock: the real one, or a test's (a simulation shares its manual clock).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

fn system_clock() -> Clock {
    Arc::new(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    })
}

/// A rate limit the fake enforces for one key (per model, as OpenAI counts), and announces on
/// every answer in the dialect's header style.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per window.
    pub requests: u32,
    /// The window's length; it starts with its first request.
    pub window_ms: u64,
}

/// One key's (and model's) current window.
#[derive(Debug, Clone, Copy)]
struct Window {
    started: i64,
    used: u32,
}

#[derive(Clone)]
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Openai,
    Anthropic,
    Gemini,
}

impl FakeProvider {
    /// Starts on an ephemeral loopback port, on the current tokio runtime.
    pub async fn start() -> FakeProvider {
        Self::start_on(0).await
    }

    pub async fn start_on(port: u16) -> FakeProvider {
        Self::start_with(port, system_clock()).await
    }

    /// Starts on an ephemeral port with `clock` as the rate windows' time (a test's manual clock).
    pub async fn start_with_clock(clock: Clock) -> FakeProvider {
        Self::start_with(0, clock).await
    }

    async fn start_with(port: u16, clock: Clock) -> FakeProvider {
        let shared = Arc::new(Shared { script: Mutex::new(Script::default()), gate_opened: Notify::new(), clock });
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            // Azure OpenAI's v1 API, under its resource's `/openai/v1`.
            .route("/openai/v1/chat/completions", post(openai))
            .route("/openai/v1/models", get(models))
            .route("/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .route("/v1/models", get(models))
            .route("/models", get(models))
            .route("/v1/responses", post(responses::respond))
            .route("/v1/responses/compact", post(responses::respond))
            .route("/api/v1/chat/completions", post(openai))
            .route("/api/v1/models", get(openrouter::models))
            .route("/api/v1/key", get(openrouter::key))
            .route("/user/balance", get(vendors::deepseek))
            .route("/v1/users/me/balance", get(vendors::moonshot))
            .route("/v1/user/info", get(vendors::siliconflow))
            .route("/api/monitor/usage/quota/limit", get(plans::zhipu))
            .route("/v1/api/openplatform/coding_plan/remains", get(plans::minimax))
            .route("/v1beta/models", get(gemini::models))
            .route("/v1beta/models/{action}", post(gemini::action))
            .route("/__fake/project", post(control_project))
            .route("/__fake/project-limit", post(control_project_limit))
            .route("/__fake/script", post(control_script))
            .route("/__fake/release", post(control_release))
            .route("/__fake/requests", get(control_requests))
            .route("/__fake/reset", post(control_reset))
            .route("/__fake/limit", post(control_limit))
            .route("/__fake/refused", get(control_refused))
            .route("/__fake/models", post(control_models))
            .route("/__fake/text-only", post(control_text_only))
            .route("/__fake/clock", post(control_clock))
            .route("/__fake/credit", post(control_credit))
            .route("/__fake/balance", post(control_balance))
            .route("/__fake/windows", post(control_windows))
            .layer(axum::middleware::map_response_with_state(shared.clone(), with_date))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind loopback");
        let addr = listener.local_addr().expect("bound address");
        // Streams are many small writes: without TCP_NODELAY, Nagle's algorithm and delayed ACKs
        // hold each one back ~40 ms, which no real provider does.
        let listener = listener.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        tokio::spawn(async move {
            axum::serve(listener, app).await.expect("fake provider serves");
        });
        FakeProvider { addr, shared }
    }

    /// `http://127.0.0.1:PORT` (an OpenAI-compatible base URL is this plus `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues replies for `key`, each used once, in order.
    pub fn script(&self, key: &str, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().unwrap().queued.entry(key.to_owned()).or_default().extend(replies);
    }

    /// Answers every request with `key` this way once its queue is empty.
    pub fn always(&self, key: &str, reply: Reply) {
        self.shared.script.lock().unwrap().standing.insert(key.to_owned(), reply);
    }

    /// Enforces `limit` on `key`'s requests (each model its own window) and announces what is
    /// left on every answer; over the limit, a 429 in the dialect's words and headers.
    pub fn limit(&self, key: &str, limit: RateLimit) {
        self.shared.script.lock().unwrap().limits.insert(key.to_owned(), limit);
    }

    /// Gemini: `key` belongs to `project`, whose quotas it shares with the project's other keys.
    pub fn project(&self, key: &str, project: &str) {
        self.shared.script.lock().unwrap().projects.insert(key.to_owned(), project.to_owned());
    }

    /// Gemini: enforces `limit` on every key of `project` together (each model its own quotas);
    /// over it, Google's 429 naming the per-minute or the per-day quota.
    pub fn project_limit(&self, project: &str, limit: gemini::ProjectLimit) {
        self.shared.script.lock().unwrap().project_limits.insert(project.to_owned(), limit);
    }

    /// Refuses requests with images to these models (400), as models that take no images do.
    pub fn text_only(&self, models: &[&str]) {
        self.shared.script.lock().unwrap().text_only = models.iter().map(|m| m.to_string()).collect();
    }

    /// Refuses requests that carry `stream_options`, as some OpenAI-compatible servers do.
    pub fn reject_stream_options(&self, reject: bool) {
        self.shared.script.lock().unwrap().reject_stream_options = reject;
    }

    /// Answers `POST v1/responses` with a bare 404 (as many OpenAI-compatible servers do, having
    /// only chat completions), still counting the request among those seen.
    pub fn without_responses(&self, without: bool) {
        self.shared.script.lock().unwrap().without_responses = without;
    }

    /// Lists `models` from `GET models` (Anthropic's in pages of its `limit`).
    pub fn models(&self, models: &[&str]) {
        self.shared.script.lock().unwrap().models = Some(models.iter().map(|m| (*m).to_owned()).collect());
    }

    /// Sets how the provider's clock looks in its answers.
    pub fn provider_clock(&self, clock: ProviderClock) {
        self.shared.script.lock().unwrap().provider_clock = clock;
    }

    /// Answers `key`'s model list whatever is scripted for it: its scripted refusals are then the
    /// requests' own (a model the organisation may not use), not the key's.
    pub fn lists_models_for(&self, key: &str) {
        self.shared.script.lock().unwrap().listing_keys.insert(key.to_owned());
    }

    /// Lists models to any key, whatever is scripted for it, as a provider whose list is public
    /// (or a gateway that answers it with a page of its own) does.
    pub fn public_models(&self, public: bool) {
        self.shared.script.lock().unwrap().public_models = public;
    }

    /// `key` is restricted by scope (no Models permission): its model list is refused with a
    /// 403 naming the missing scope, its chats are answered as scripted.
    pub fn restricted(&self, key: &str) {
        self.shared.script.lock().unwrap().restricted_keys.insert(key.to_owned());
    }

    /// OpenRouter: `key`'s credit as `GET /api/v1/key` answers it.
    pub fn credit(&self, key: &str, credit: openrouter::Credit) {
        self.shared.script.lock().unwrap().credits.insert(key.to_owned(), credit);
    }

    /// DeepSeek, Moonshot, SiliconFlow: what `key`'s account holds, as their balance reads answer.
    pub fn balance(&self, key: &str, balance: vendors::VendorBalance) {
        self.shared.script.lock().unwrap().balances.insert(key.to_owned(), balance);
    }

    /// Z.ai, MiniMax: `key`'s plan windows, as their window reads answer.
    pub fn windows(&self, key: &str, windows: plans::PlanWindows) {
        self.shared.script.lock().unwrap().plan_windows.insert(key.to_owned(), windows);
    }

    /// How many bytes of [`Reply::Flood`]s went out so far.
    pub fn flooded(&self) -> u64 {
        self.shared.script.lock().unwrap().flooded
    }

    /// How many requests a rate limit refused so far.
    pub fn refused(&self) -> u64 {
        self.shared.script.lock().unwrap().refused
    }

    /// Lets held streams waiting on `gate` go on.
    pub fn release(&self, gate: &str) {
        release(&self.shared, gate);
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.script.lock().unwrap().seen.clone()
    }

    /// The keys of every completion request so far, in order.
    pub fn keys_used(&self) -> Vec<String> {
        self.seen()
            .into_iter()
            .filter(|s| !s.path.ends_with("models") && !s.path.ends_with("/key"))
            .map(|s| s.key)
            .collect()
    }
}

/// Returns once `gate` is released (at once if it was).
async fn released(shared: &Shared, gate: &str) {
    loop {
        let opened = shared.gate_opened.notified();
        if shared.script.lock().unwrap().released.contains(gate) {
            return;
        }
        opened.await;
    }
}

fn release(shared: &Shared, gate: &str) {
    shared.script.lock().unwrap().released.insert(gate.to_owned());
    shared.gate_opened.notify_waiters();
}

pub(crate) fn key_of(headers: &HeaderMap) -> String {
    if let Some(key) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return key.to_owned();
    }
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned()
}

/// Keys that begin so were never issued: a model list (unless public) or a key answer refuses
/// them as [`Reply::InvalidKey`] does, whatever is scripted.
pub const NEVER_ISSUED: &str = "invalid-";

/// The reply for a request that is not a completion (model lists, token counts): a queued
/// refusal is used up, queued replies meant for completions are left for them.
pub(crate) fn next_refusal_or_listing(shared: &Shared, seen: Seen) -> Reply {
    let mut script = shared.script.lock().unwrap();
    let key = seen.key.clone();
    let model_list = seen.path.ends_with("models");
    script.seen.push(seen);
    if model_list && script.public_models {
        return Reply::text(&[]);
    }
    if key.starts_with(NEVER_ISSUED) {
        return Reply::InvalidKey;
    }
    if model_list && script.restricted_keys.contains(&key) {
        return Reply::Status {
            status: 403,
            headers: Vec::new(),
            message: "You have insufficient permissions for this operation. Missing scopes: api.model.read.".into(),
        };
    }
    if script.listing_keys.contains(&key) {
        return Reply::text(&[]);
    }
    let refusal = |reply: &Reply| {
        matches!(
            reply,
            Reply::Status { .. }
                | Reply::Redirect { .. }
                | Reply::QuotaRefused { .. }
                | Reply::InvalidKey
                | Reply::Hold { .. }
        )
    };
    if let Some(queue) = script.queued.get_mut(&key) {
        if queue.front().is_some_and(refusal) {
            return queue.pop_front().expect("a front was seen");
        }
    }
    script.standing.get(&key).filter(|reply| refusal(reply)).cloned().unwrap_or_else(|| Reply::text(&[]))
}

pub(crate) fn next_reply(shared: &Shared, seen: Seen) -> Reply {
    let mut script = shared.script.lock().unwrap();
    let key = seen.key.clone();
    script.seen.push(seen);
    if let Some(reply) = script.queued.get_mut(&key).and_then(VecDeque::pop_front) {
        return reply;
    }
    script.standing.get(&key).cloned().unwrap_or_else(|| Reply::text(&["Hello", " from ", "the fake provider."]))
}

async fn openai(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, raw: Bytes) -> Response {
    complete(shared, Dialect::Openai, None, uri, headers, raw).await
}

async fn anthropic(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, raw: Bytes) -> Response {
    complete(shared, Dialect::Anthropic, None, uri, headers, raw).await
}

/// Anthropic's token count: a rough count of the body's characters, as `{ input_tokens }`.
async fn count_tokens(State(shared): State<Arc<Shared>>, headers: HeaderMap, raw: Bytes) -> Response {
    let key = key_of(&headers);
    let seen = Seen {
        key: key.clone(),
        path: "/v1/messages/count_tokens".into(),
        stream: false,
        model: serde_json::from_slice::<Value>(&raw)
            .ok()
            .and_then(|b| b["model"].as_str().map(str::to_owned))
            .unwrap_or_default(),
        messages: 0,
        system: None,
        last_user: String::new(),
        body: String::from_utf8_lossy(&raw).into_owned(),
        anthropic_version: headers.get("anthropic-version").and_then(|v| v.to_str().ok()).map(str::to_owned),
        images: Vec::new(),
        breakpoints: 0,
        hop: None,
    };
    match next_refusal_or_listing(&shared, seen) {
        Reply::Status { status, headers, message } => {
            error_response(Dialect::Anthropic, status, &headers, &with_key(&message, &key))
        }
        _ => Json(json!({ "input_tokens": raw.len() / 4 })).into_response(),
    }
}

async fn models(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    let key = key_of(&headers);
    let seen = Seen::listing(&key, "/v1/models");
    let dialect = if headers.contains_key("anthropic-version") { Dialect::Anthropic } else { Dialect::Openai };
    let mut reply = next_refusal_or_listing(&shared, seen);
    if let Reply::Hold { gate, .. } = &reply {
        // A held listing: the list once `gate` is released.
        released(&shared, gate).await;
        reply = Reply::text(&[]);
    }
    match reply {
        Reply::Status { status, headers, message } => {
            error_response(Dialect::Openai, status, &headers, &with_key(&message, &key))
        }
        // A revoked key: the model list refuses it as the completions do.
        Reply::InvalidKey => error_response(dialect, 401, &[], "invalid API key"),
        Reply::Redirect { status, to } => redirect(status, &to, &uri),
        _ => {
            let models = shared.script.lock().unwrap().models.clone().unwrap_or_else(|| vec!["fake-model".into()]);
            if headers.contains_key("anthropic-version") {
                return Json(anthropic_models_page(&models, uri.query().unwrap_or_default())).into_response();
            }
            let data: Vec<Value> = models.iter().map(|id| json!({ "id": id, "object": "model" })).collect();
            Json(json!({ "object": "list", "data": data })).into_response()
        }
    }
}

/// One page of Anthropic's model list: `limit` models after `after_id`, with `has_more` and
/// `last_id` as its docs give them.
fn anthropic_models_page(models: &[String], query: &str) -> Value {
    let param = |name: &str| {
        query.split('&').filter_map(|pair| pair.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.to_owned())
    };
    let limit = param("limit").and_then(|l| l.parse().ok()).unwrap_or(20usize).clamp(1, 1000);
    let start = param("after_id").and_then(|after| models.iter().position(|m| *m == after)).map_or(0, |i| i + 1);
    let page: Vec<&String> = models.iter().skip(start).take(limit).collect();
    let data: Vec<Value> = page
        .iter()
        .map(|id| json!({ "type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z" }))
        .collect();
    json!({
        "data": data,
        "has_more": start + page.len() < models.len(),
        "first_id": page.first(),
        "last_id": page.last(),
    })
}

/// `message` with the key the request carried written into it where the script asks.
pub(crate) fn with_key(message: &str, key: &str) -> String {
    let encoded: String = key
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    // Marked, so that the JSON writer's escaping of its backslashes is undone (see `raw_escapes`).
    let json_escaped: String = key.chars().map(|c| format!("{RAW}\\u{:04x}{RAW}", c as u32)).collect();
    let base64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"));
    message
        .replace("{key_urlencoded_lower}", &encoded.to_ascii_lowercase())
        .replace("{key_urlencoded}", &encoded)
        .replace("{key_json_escaped}", &json_escaped)
        .replace("{key_base64}", &base64)
        .replace("{key}", key)
}

/// Marks text that must reach the JSON body as written: `{key_json_escaped}`'s `\uXXXX` escapes,
/// which the JSON writer would otherwise escape again (`\\uXXXX`, no longer the key once decoded).
const RAW: char = '\u{E000}';

/// `json` with every marked stretch as it was written before the JSON writer escaped it.
fn raw_escapes(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for (i, part) in json.split(RAW).enumerate() {
        if i % 2 == 1 {
            out.push_str(&part.replace("\\\\", "\\"));
        } else {
            out.push_str(part);
        }
    }
    out
}

pub(crate) fn redirect(status: u16, to: &str, uri: &Uri) -> Response {
    let location = format!("{}{}", to.trim_end_matches('/'), uri.path_and_query().map_or("/", |p| p.as_str()));
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::TEMPORARY_REDIRECT))
        .header("location", location)
        .body(Body::empty())
        .expect("static response parts")
}

/// A completion in `dialect`; `gemini` says where a Gemini request goes (its model and key are
/// not in its body).
pub(crate) async fn complete(
    shared: Arc<Shared>,
    dialect: Dialect,
    gemini: Option<gemini::Target>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&raw) else {
        return (StatusCode::BAD_REQUEST, "the body is not JSON").into_response();
    };
    if let Some(target) = gemini {
        return complete_gemini(shared, target, uri, body, raw).await;
    }
    let stream = body["stream"].as_bool().unwrap_or(false);
    let key = key_of(&headers);
    let path = match dialect {
        // OpenRouter's, under its own prefix.
        Dialect::Openai if uri.path().starts_with("/api/v1/") => "/api/v1/chat/completions",
        Dialect::Openai => "/v1/chat/completions",
        Dialect::Anthropic | Dialect::Gemini => "/v1/messages",
    };
    let turns = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let read: Result<Vec<content::Read>, String> =
        turns.iter().filter(|t| t["role"] == "user").map(|t| content::read(dialect, &t["content"])).collect();
    let read = match read {
        Ok(read) => read,
        Err(problem) => return error_response(dialect, 400, &[], &problem),
    };
    let breakpoints = match dialect {
        Dialect::Anthropic => match breakpoints(&body) {
            Ok(count) => count,
            Err(problem) => return error_response(dialect, 400, &[], &problem),
        },
        _ => 0,
    };
    let seen = Seen {
        key: key.clone(),
        path: path.to_owned(),
        stream,
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        messages: turns.len(),
        system: system_text(&body),
        last_user: read.last().map(|r| r.text.clone()).unwrap_or_default(),
        body: String::from_utf8_lossy(&raw).into_owned(),
        anthropic_version: headers.get("anthropic-version").and_then(|v| v.to_str().ok()).map(str::to_owned),
        images: read.into_iter().flat_map(|r| r.images).collect(),
        breakpoints,
        hop: headers.get("x-keypool-hop").and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    if let Some(refused) = refuse_images(&shared, dialect, &seen) {
        return refused;
    }
    if body.get("stream_options").is_some() && shared.script.lock().unwrap().reject_stream_options {
        shared.script.lock().unwrap().seen.push(seen);
        let error = json!({ "error": { "message": "Unrecognized request argument supplied: stream_options",
            "type": "invalid_request_error", "param": null, "code": null } });
        return (StatusCode::BAD_REQUEST, Json(error)).into_response();
    }
    let clock = shared.script.lock().unwrap().provider_clock;
    let window = match admit(&shared, &key, &seen.model) {
        Admission::Unlimited => None,
        Admission::Admitted(announced) => Some(announced),
        Admission::Refused(announced) => {
            shared.script.lock().unwrap().seen.push(seen);
            return rate_limited(dialect, announced, clock);
        }
    };
    let reply = match next_reply(&shared, seen) {
        Reply::Status { status, headers, message } => {
            return error_response(dialect, status, &headers, &with_key(&message, &key));
        }
        Reply::Redirect { status, to } => return redirect(status, &to, &uri),
        Reply::QuotaExceeded => return quota_exceeded(dialect),
        Reply::QuotaRefused { .. } => return error_response(dialect, 429, &[], "Rate limit reached"),
        Reply::InvalidKey => return error_response(dialect, 401, &[], "invalid API key"),
        Reply::StreamError { chunks_before, error_type, message } => {
            Reply::StreamError { chunks_before, error_type, message: with_key(&message, &key) }
        }
        other => other,
    };
    if !stream {
        let mut response = whole_reply(dialect, reply);
        if let Some(announced) = window {
            announce(&mut response, dialect, announced, clock);
        }
        return response;
    }
    let include_usage = body["stream_options"]["include_usage"].as_bool().unwrap_or(false);
    let mut response = streamed(shared, dialect, reply, include_usage, Framing::AsSent);
    if let Some(announced) = window {
        announce(&mut response, dialect, announced, clock);
    }
    response
}

/// A Gemini completion: its project's quotas, then the scripted reply in Google's shapes.
async fn complete_gemini(shared: Arc<Shared>, target: gemini::Target, uri: Uri, body: Value, raw: Bytes) -> Response {
    let gemini::Target { key, model, streamed: how } = target;
    let method = if how.is_some() { "streamGenerateContent" } else { "generateContent" };
    let seen = match gemini::seen(key.clone(), &model, method, how.is_some(), &body, &raw) {
        Ok(seen) => seen,
        Err(problem) => {
            return gemini::refusal(Reply::Status { status: 400, headers: Vec::new(), message: problem }, &key, &model)
        }
    };
    if let Some(refused) = refuse_images(&shared, Dialect::Gemini, &seen) {
        return refused;
    }
    if let Some(refused) = gemini::admit(&shared, &key, &model) {
        shared.script.lock().unwrap().seen.push(seen);
        return refused;
    }
    let reply = match next_reply(&shared, seen) {
        reply @ (Reply::Status { .. } | Reply::QuotaRefused { .. } | Reply::InvalidKey) => {
            return gemini::refusal(reply, &key, &model)
        }
        Reply::Redirect { status, to } => return redirect(status, &to, &uri),
        Reply::QuotaExceeded => return quota_exceeded(Dialect::Gemini),
        Reply::StreamError { chunks_before, error_type, message } => {
            Reply::StreamError { chunks_before, error_type, message: with_key(&message, &key) }
        }
        other => other,
    };
    match how {
        None => whole_reply(Dialect::Gemini, reply),
        Some(gemini::Streamed::Sse) => streamed(shared, Dialect::Gemini, reply, true, Framing::Sse),
        Some(gemini::Streamed::Array) => streamed(shared, Dialect::Gemini, reply, true, Framing::JsonArray),
    }
}

/// A model that takes no images refuses a request with one (logged, so tests see it was sent).
fn refuse_images(shared: &Shared, dialect: Dialect, seen: &Seen) -> Option<Response> {
    let mut script = shared.script.lock().unwrap();
    if seen.images.is_empty() || !script.text_only.contains(&seen.model) {
        return None;
    }
    script.seen.push(seen.clone());
    let message = content::no_images_message(dialect, &seen.model);
    Some(match dialect {
        Dialect::Gemini => {
            gemini::refusal(Reply::Status { status: 400, headers: Vec::new(), message }, &seen.key, &seen.model)
        }
        _ => error_response(dialect, 400, &[], &message),
    })
}

/// How the pieces `play` sends are written into the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// As `play` made them (OpenAI's and Anthropic's SSE events).
    AsSent,
    /// Each piece (a JSON value) one SSE `data:` event.
    Sse,
    /// The pieces as the elements of one JSON array, closed when the reply ends (not when the
    /// connection drops).
    JsonArray,
}

/// A streamed reply: `play` in a task, its pieces framed into the body as they come.
fn streamed(shared: Arc<Shared>, dialect: Dialect, reply: Reply, include_usage: bool, framing: Framing) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(16);
    let (abort_tx, abort_rx) = mpsc::channel::<()>(1);
    tokio::spawn(play(shared, dialect, reply, include_usage, tx, abort_tx));
    // The state: the receivers, whether a piece was written, whether the body is complete.
    let body = futures_util::stream::unfold(
        (rx, abort_rx, false, false),
        move |(mut rx, mut abort_rx, started, ended)| async move {
            if ended {
                return None;
            }
            tokio::select! {
                biased;
                item = rx.recv() => match item {
                    Some(Ok(piece)) => {
                        let framed = match framing {
                            Framing::AsSent => piece,
                            Framing::Sse => Bytes::from([b"data: ".as_slice(), &piece, b"\r\n\r\n"].concat()),
                            Framing::JsonArray => Bytes::from([if started { b",\r\n".as_slice() } else { b"[" }, &piece].concat()),
                        };
                        Some((Ok(framed), (rx, abort_rx, true, false)))
                    }
                    Some(Err(never)) => match never {},
                    None if framing == Framing::JsonArray => {
                        let close: &'static [u8] = if started { b"]" } else { b"[]" };
                        Some((Ok(Bytes::from_static(close)), (rx, abort_rx, started, true)))
                    }
                    None => None,
                },
                Some(()) = abort_rx.recv() => Some((Err(std::io::Error::other("dropped by script")), (rx, abort_rx, started, true))),
            }
        },
    );
    let content_type = if framing == Framing::JsonArray { "application/json" } else { "text/event-stream" };
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", content_type)
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .expect("static response parts")
}

fn whole_reply(dialect: Dialect, reply: Reply) -> Response {
    let (text, output) = match reply {
        Reply::ToolCall { name, arguments } => return whole_call(dialect, &name, &arguments),
        Reply::Flood { bytes } => ("x".repeat(usize::try_from(bytes).unwrap_or(usize::MAX)), 1),
        Reply::Text { chunks } | Reply::Slow { chunks, .. } => (chunks.concat(), chunks.len()),
        Reply::StreamError { error_type, message, .. } => {
            return error_response(dialect, status_for(&error_type), &[], &message);
        }
        Reply::Blocked { prompt, .. } if dialect == Dialect::Gemini => {
            return Json(gemini::blocked(prompt)).into_response();
        }
        Reply::Unfinished { chunks } if dialect == Dialect::Gemini => {
            return Json(gemini::chunk(&chunks.concat())).into_response();
        }
        Reply::Drop { .. }
        | Reply::Hold { .. }
        | Reply::KeepAlive { .. }
        | Reply::Status { .. }
        | Reply::Redirect { .. }
        | Reply::QuotaExceeded
        | Reply::QuotaRefused { .. }
        | Reply::InvalidKey
        | Reply::Blocked { .. }
        | Reply::Unfinished { .. }
        | Reply::Endless { .. } => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "unsupported without streaming").into_response();
        }
    };
    match dialect {
        Dialect::Openai => Json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            "usage": openai_usage(output)
        }))
        .into_response(),
        Dialect::Anthropic => Json(json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": ANTHROPIC_MODEL,
            "content": [{ "type": "text", "text": text }], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": anthropic_usage(output)
        }))
        .into_response(),
        Dialect::Gemini => Json(gemini::whole(&text, output)).into_response(),
    }
}

/// A whole answer that calls a tool.
fn whole_call(dialect: Dialect, name: &str, arguments: &str) -> Response {
    let args: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
    match dialect {
        Dialect::Openai => Json(json!({ "id": "chatcmpl-fake", "object": "chat.completion",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": null, "tool_calls": [{
                "id": "call_fake", "type": "function", "function": { "name": name, "arguments": arguments } }] },
                "finish_reason": "tool_calls" }],
            "usage": openai_usage(1) }))
        .into_response(),
        Dialect::Anthropic => Json(json!({ "id": "msg_fake", "type": "message", "role": "assistant",
            "model": ANTHROPIC_MODEL, "content": [{ "type": "tool_use", "id": "toolu_fake", "name": name, "input": args }],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": anthropic_usage(1) }))
        .into_response(),
        Dialect::Gemini => Json(json!({ "candidates": [{ "content": { "role": "model",
            "parts": [{ "functionCall": { "name": name, "args": args } }] }, "finishReason": "STOP" }] }))
        .into_response(),
    }
}

/// A streamed answer's events that call a tool, its arguments in two pieces.
fn call_events(dialect: Dialect, name: &str, arguments: &str, include_usage: bool) -> Vec<Bytes> {
    let half = arguments.len() / 2;
    let half = (0..=half).rev().find(|i| arguments.is_char_boundary(*i)).unwrap_or(0);
    let (first, second) = arguments.split_at(half);
    match dialect {
        Dialect::Openai => {
            let call = |delta: Value| {
                event(dialect, "", json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [delta] } }] }))
            };
            let mut events = vec![
                call(
                    json!({ "index": 0, "id": "call_fake", "type": "function", "function": { "name": name, "arguments": "" } }),
                ),
                call(json!({ "index": 0, "function": { "arguments": first } })),
                call(json!({ "index": 0, "function": { "arguments": second } })),
                event(dialect, "", json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] })),
            ];
            if include_usage {
                events.push(event(dialect, "", json!({ "choices": [], "usage": openai_usage(1) })));
            }
            events.push(Bytes::from_static(b"data: [DONE]\n\n"));
            events
        }
        Dialect::Anthropic => {
            let delta = |json: &str| {
                event(
                    dialect,
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": 0,
                "delta": { "type": "input_json_delta", "partial_json": json } }),
                )
            };
            vec![
                event(
                    dialect,
                    "content_block_start",
                    json!({ "type": "content_block_start", "index": 0,
                    "content_block": { "type": "tool_use", "id": "toolu_fake", "name": name, "input": {} } }),
                ),
                delta(first),
                delta(second),
                event(dialect, "content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
                event(
                    dialect,
                    "message_delta",
                    json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" },
                    "usage": { "output_tokens": 1 } }),
                ),
                event(dialect, "message_stop", json!({ "type": "message_stop" })),
            ]
        }
        Dialect::Gemini => {
            let args: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
            vec![event(
                dialect,
                "",
                json!({ "candidates": [{ "content": { "role": "model",
                "parts": [{ "functionCall": { "name": name, "args": args } }] }, "finishReason": "STOP" }] }),
            )]
        }
    }
}

pub(crate) fn status_for(error_type: &str) -> u16 {
    match error_type {
        "overloaded_error" => 529,
        "rate_limit_error" => 429,
        "authentication_error" => 401,
        "permission_error" => 403,
        _ => 500,
    }
}

pub(crate) fn error_response(dialect: Dialect, status: u16, headers: &[(String, String)], message: &str) -> Response {
    let body = match dialect {
        Dialect::Openai => json!({ "error": { "message": message, "type": "fake_error", "code": status } }),
        Dialect::Anthropic => json!({ "type": "error", "error": { "type": "fake_error", "message": message } }),
        Dialect::Gemini => gemini::error_body(status, message),
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = raw_escapes(&body.to_string());
    let mut response = (status, [("content-type", "application/json")], body).into_response();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// One event of `dialect`'s stream; a Gemini event is its bare JSON, framed by [`Framing`].
fn event(dialect: Dialect, name: &str, data: Value) -> Bytes {
    let data = raw_escapes(&data.to_string());
    match dialect {
        Dialect::Openai => Bytes::from(format!("data: {data}\n\n")),
        Dialect::Anthropic => Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        Dialect::Gemini => Bytes::from(data.to_string()),
    }
}

fn text_event(dialect: Dialect, text: &str) -> Bytes {
    match dialect {
        Dialect::Openai => event(dialect, "", json!({ "choices": [{ "index": 0, "delta": { "content": text } }] })),
        Dialect::Anthropic => event(
            dialect,
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": text } }),
        ),
        Dialect::Gemini => event(dialect, "", gemini::chunk(text)),
    }
}

/// The model an Anthropic answer names (the real API names the one asked for; no client here
/// compares them).
const ANTHROPIC_MODEL: &str = "claude-fake";

/// Every reply reports this usage: 11 prompt tokens, 5 of them read from the prompt cache, and
/// one output token per piece of text.
pub const INPUT_TOKENS: u64 = 11;
pub const CACHED_TOKENS: u64 = 5;

fn openai_usage(output: usize) -> Value {
    json!({ "prompt_tokens": INPUT_TOKENS, "completion_tokens": output, "total_tokens": INPUT_TOKENS + output as u64,
            "prompt_tokens_details": { "cached_tokens": CACHED_TOKENS } })
}

/// Anthropic counts cached input apart: input_tokens + cache reads + cache writes = the prompt.
fn anthropic_usage(output: usize) -> Value {
    json!({ "input_tokens": INPUT_TOKENS - CACHED_TOKENS, "cache_read_input_tokens": CACHED_TOKENS,
            "cache_creation_input_tokens": 0, "output_tokens": output })
}

/// The end of a stream of `output` pieces; an OpenAI stream reports usage when it was asked to.
fn done_events(dialect: Dialect, output: usize, include_usage: bool) -> Vec<Bytes> {
    match dialect {
        Dialect::Openai => {
            let mut events =
                vec![event(dialect, "", json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] }))];
            if include_usage {
                events.push(event(dialect, "", json!({ "choices": [], "usage": openai_usage(output) })));
            }
            events.push(Bytes::from_static(b"data: [DONE]\n\n"));
            events
        }
        Dialect::Anthropic => vec![
            event(dialect, "content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
            event(
                dialect,
                "message_delta",
                json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": output } }),
            ),
            event(dialect, "message_stop", json!({ "type": "message_stop" })),
        ],
        Dialect::Gemini => vec![event(dialect, "", gemini::finish(output))],
    }
}

/// Plays a scripted streamed reply into the response body.
async fn play(
    shared: Arc<Shared>,
    dialect: Dialect,
    reply: Reply,
    include_usage: bool,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
    abort: mpsc::Sender<()>,
) {
    let send = |bytes: Bytes| {
        let tx = tx.clone();
        async move { tx.send(Ok(bytes)).await.is_ok() }
    };
    if dialect == Dialect::Anthropic {
        // As Anthropic documents a stream's start: the whole message, empty, then (for text) the
        // block the deltas fill. Claude Code refuses a stream without either.
        let start = json!({ "type": "message_start", "message": { "id": "msg_fake", "type": "message",
            "role": "assistant", "model": ANTHROPIC_MODEL, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": anthropic_usage(1) } });
        send(event(dialect, "message_start", start)).await;
        if !matches!(reply, Reply::ToolCall { .. }) {
            let block = json!({ "type": "content_block_start", "index": 0,
                "content_block": { "type": "text", "text": "" } });
            send(event(dialect, "content_block_start", block)).await;
        }
    }
    let texts = |chunks: &[String]| chunks.iter().map(|c| text_event(dialect, c)).collect::<Vec<_>>();
    match reply {
        Reply::Text { chunks } => {
            for bytes in texts(&chunks).into_iter().chain(done_events(dialect, chunks.len(), include_usage)) {
                if !send(bytes).await {
                    return;
                }
            }
        }
        Reply::Slow { chunks, delay_ms } => {
            for bytes in texts(&chunks) {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                if !send(bytes).await {
                    return;
                }
            }
            for bytes in done_events(dialect, chunks.len(), include_usage) {
                send(bytes).await;
            }
        }
        Reply::StreamError { chunks_before, error_type, message } => {
            for bytes in texts(&chunks_before) {
                send(bytes).await;
            }
            let error = match dialect {
                Dialect::Openai => json!({ "error": { "message": message, "type": error_type, "code": null } }),
                Dialect::Anthropic => json!({ "type": "error", "error": { "type": error_type, "message": message } }),
                Dialect::Gemini => gemini::error_body(status_for(&error_type), &message),
            };
            send(event(dialect, "error", error)).await;
        }
        Reply::Drop { chunks_before } => {
            for bytes in texts(&chunks_before) {
                send(bytes).await;
            }
            let _ = abort.send(()).await;
        }
        Reply::Hold { chunks_before, gate, chunks_after } => {
            for bytes in texts(&chunks_before) {
                send(bytes).await;
            }
            tokio::select! {
                _ = released(&shared, &gate) => {}
                _ = tx.closed() => return,
            }
            let output = chunks_before.len() + chunks_after.len();
            for bytes in texts(&chunks_after).into_iter().chain(done_events(dialect, output, include_usage)) {
                if !send(bytes).await {
                    return;
                }
            }
        }
        Reply::KeepAlive { comments, gate, chunks } => {
            for _ in 0..comments {
                send(Bytes::from_static(b": keep-alive\n\n")).await;
            }
            tokio::select! {
                _ = released(&shared, &gate) => {}
                _ = tx.closed() => return,
            }
            for bytes in texts(&chunks).into_iter().chain(done_events(dialect, chunks.len(), include_usage)) {
                if !send(bytes).await {
                    return;
                }
            }
        }
        Reply::Flood { bytes } => {
            if !send(Bytes::from_static(b"data: ")).await {
                return;
            }
            let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
            let mut sent = 0u64;
            while sent < bytes {
                if !send(chunk.clone()).await {
                    return;
                }
                sent += chunk.len() as u64;
                shared.script.lock().unwrap().flooded += chunk.len() as u64;
            }
        }
        Reply::Endless { piece } => {
            let event = text_event(dialect, &piece);
            while send(event.clone()).await {
                shared.script.lock().unwrap().flooded += event.len() as u64;
            }
        }
        Reply::Blocked { chunks_before, prompt } => {
            for bytes in texts(&chunks_before) {
                send(bytes).await;
            }
            if dialect == Dialect::Gemini {
                send(event(dialect, "", gemini::blocked(prompt))).await;
            }
        }
        Reply::Unfinished { chunks } => {
            for bytes in texts(&chunks) {
                send(bytes).await;
            }
        }
        Reply::ToolCall { name, arguments } => {
            for bytes in call_events(dialect, &name, &arguments, include_usage) {
                if !send(bytes).await {
                    return;
                }
            }
        }
        Reply::Status { .. }
        | Reply::Redirect { .. }
        | Reply::QuotaExceeded
        | Reply::QuotaRefused { .. }
        | Reply::InvalidKey => {
            unreachable!("answered before streaming")
        }
    }
}

/// What a key's window looks like after (or instead of) this request.
#[derive(Debug, Clone, Copy)]
struct Announced {
    limit: u32,
    remaining: u32,
    now: i64,
    reset_at: i64,
}

pub(crate) enum Admission {
    Unlimited,
    Admitted(Announced),
    Refused(Announced),
}

pub(crate) fn admit(shared: &Shared, key: &str, model: &str) -> Admission {
    let now = shared.provider_now();
    let mut script = shared.script.lock().unwrap();
    let Some(limit) = script.limits.get(key).copied() else { return Admission::Unlimited };
    let window = script.windows.entry((key.to_owned(), model.to_owned())).or_insert(Window { started: now, used: 0 });
    if now >= window.started + limit.window_ms as i64 {
        *window = Window { started: now, used: 0 };
    }
    let reset_at = window.started + limit.window_ms as i64;
    if window.used >= limit.requests {
        script.refused += 1;
        return Admission::Refused(Announced { limit: limit.requests, remaining: 0, now, reset_at });
    }
    window.used += 1;
    Admission::Admitted(Announced { limit: limit.requests, remaining: limit.requests - window.used, now, reset_at })
}

/// The window in the dialect's headers: OpenAI's Go-style durations, Anthropic's RFC 3339 instants.
pub(crate) fn announce(response: &mut Response, dialect: Dialect, a: Announced, clock: ProviderClock) {
    let announced_reset = a.reset_at.saturating_sub(i64::try_from(clock.early_resets_ms).unwrap_or(i64::MAX));
    let wait_ms = (announced_reset - a.now).max(0);
    let headers: Vec<(&str, String)> = match dialect {
        Dialect::Openai => vec![
            ("x-ratelimit-limit-requests", a.limit.to_string()),
            ("x-ratelimit-remaining-requests", a.remaining.to_string()),
            ("x-ratelimit-reset-requests", format!("{wait_ms}ms")),
        ],
        Dialect::Gemini => Vec::new(),
        Dialect::Anthropic => vec![
            ("anthropic-ratelimit-requests-limit", a.limit.to_string()),
            ("anthropic-ratelimit-requests-remaining", a.remaining.to_string()),
            ("anthropic-ratelimit-requests-reset", rfc3339(announced_reset, clock.whole_second_resets)),
        ],
    };
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
    }
}

pub(crate) fn quota_exceeded(dialect: Dialect) -> Response {
    let (status, body) = match dialect {
        // Gemini has no "out of credit" answer: its 429 says "billing" even for a rate limit.
        Dialect::Gemini => (
            StatusCode::TOO_MANY_REQUESTS,
            json!({ "error": { "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota, please check your plan and billing details." } }),
        ),
        Dialect::Openai => (
            StatusCode::TOO_MANY_REQUESTS,
            json!({ "error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota", "param": null, "code": "insufficient_quota" } }),
        ),
        Dialect::Anthropic => (
            StatusCode::BAD_REQUEST,
            json!({ "type": "error", "error": {
            "type": "invalid_request_error",
            "message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits." } }),
        ),
    };
    (status, Json(body)).into_response()
}

pub(crate) fn rate_limited(dialect: Dialect, a: Announced, clock: ProviderClock) -> Response {
    let retry_after = ((a.reset_at - a.now).max(0) as u64).div_ceil(1000).to_string();
    let body = match dialect {
        Dialect::Openai => json!({ "error": {
            "message": "Rate limit reached for requests", "type": "requests", "param": null, "code": "rate_limit_exceeded" } }),
        Dialect::Anthropic | Dialect::Gemini => json!({ "type": "error", "error": {
            "type": "rate_limit_error", "message": "This request would exceed the rate limit for your organization." } }),
    };
    let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
    response.headers_mut().insert("retry-after", HeaderValue::from_str(&retry_after).expect("digits"));
    announce(&mut response, dialect, a, clock);
    response
}

/// Milliseconds since the epoch as an RFC 3339 instant, e.g. `2027-01-15T08:00:02.500Z`, or
/// truncated to the second (`2027-01-15T08:00:02Z`).
fn rfc3339(ms: i64, whole_seconds: bool) -> String {
    let at = std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    if whole_seconds {
        humantime::format_rfc3339_seconds(at).to_string()
    } else {
        humantime::format_rfc3339_millis(at).to_string()
    }
}

/// Every answer carries the provider's `date` (whole seconds, truncated, as HTTP dates are),
/// from the provider's clock rather than the machine's.
async fn with_date(State(shared): State<Arc<Shared>>, mut response: Response) -> Response {
    let now = std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(shared.provider_now()).unwrap_or(0));
    if let Ok(date) = HeaderValue::from_str(&httpdate::fmt_http_date(now)) {
        response.headers_mut().insert(axum::http::header::DATE, date);
    }
    response
}

#[derive(Deserialize)]
struct CreditRequest {
    key: String,
    #[serde(flatten)]
    credit: openrouter::Credit,
}

async fn control_credit(State(shared): State<Arc<Shared>>, Json(request): Json<CreditRequest>) -> StatusCode {
    shared.script.lock().unwrap().credits.insert(request.key, request.credit);
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct BalanceRequest {
    key: String,
    #[serde(flatten)]
    balance: vendors::VendorBalance,
}

async fn control_balance(State(shared): State<Arc<Shared>>, Json(request): Json<BalanceRequest>) -> StatusCode {
    shared.script.lock().unwrap().balances.insert(request.key, request.balance);
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct WindowsRequest {
    key: String,
    #[serde(flatten)]
    windows: plans::PlanWindows,
}

async fn control_windows(State(shared): State<Arc<Shared>>, Json(request): Json<WindowsRequest>) -> StatusCode {
    shared.script.lock().unwrap().plan_windows.insert(request.key, request.windows);
    StatusCode::NO_CONTENT
}

async fn control_clock(State(shared): State<Arc<Shared>>, Json(clock): Json<ProviderClock>) -> StatusCode {
    shared.script.lock().unwrap().provider_clock = clock;
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct LimitRequest {
    key: String,
    #[serde(flatten)]
    limit: RateLimit,
}

async fn control_limit(State(shared): State<Arc<Shared>>, Json(request): Json<LimitRequest>) -> StatusCode {
    shared.script.lock().unwrap().limits.insert(request.key, request.limit);
    StatusCode::NO_CONTENT
}

/// `{key, project}`: the key belongs to the project.
async fn control_project(State(shared): State<Arc<Shared>>, Json(request): Json<Value>) -> StatusCode {
    match (request["key"].as_str(), request["project"].as_str()) {
        (Some(key), Some(project)) => {
            shared.script.lock().unwrap().projects.insert(key.to_owned(), project.to_owned());
            StatusCode::NO_CONTENT
        }
        _ => StatusCode::BAD_REQUEST,
    }
}

#[derive(Deserialize)]
struct ProjectLimitRequest {
    project: String,
    #[serde(flatten)]
    limit: gemini::ProjectLimit,
}

async fn control_project_limit(
    State(shared): State<Arc<Shared>>,
    Json(request): Json<ProjectLimitRequest>,
) -> StatusCode {
    shared.script.lock().unwrap().project_limits.insert(request.project, request.limit);
    StatusCode::NO_CONTENT
}

async fn control_models(State(shared): State<Arc<Shared>>, Json(models): Json<Vec<String>>) -> StatusCode {
    shared.script.lock().unwrap().models = Some(models);
    StatusCode::NO_CONTENT
}

async fn control_text_only(State(shared): State<Arc<Shared>>, Json(models): Json<Vec<String>>) -> StatusCode {
    shared.script.lock().unwrap().text_only = models.into_iter().collect();
    StatusCode::NO_CONTENT
}

async fn control_refused(State(shared): State<Arc<Shared>>) -> Json<u64> {
    Json(shared.script.lock().unwrap().refused)
}

#[derive(Deserialize)]
struct ScriptRequest {
    key: String,
    #[serde(default)]
    replies: Vec<Reply>,
    #[serde(default)]
    always: Option<Reply>,
}

async fn control_script(State(shared): State<Arc<Shared>>, Json(request): Json<ScriptRequest>) -> StatusCode {
    let mut script = shared.script.lock().unwrap();
    script.queued.entry(request.key.clone()).or_default().extend(request.replies);
    if let Some(reply) = request.always {
        script.standing.insert(request.key, reply);
    }
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct ReleaseRequest {
    gate: String,
}

async fn control_release(State(shared): State<Arc<Shared>>, Json(request): Json<ReleaseRequest>) -> StatusCode {
    release(&shared, &request.gate);
    StatusCode::NO_CONTENT
}

async fn control_requests(State(shared): State<Arc<Shared>>) -> Json<Vec<Seen>> {
    Json(shared.script.lock().unwrap().seen.clone())
}

async fn control_reset(State(shared): State<Arc<Shared>>) -> StatusCode {
    *shared.script.lock().unwrap() = Script::default();
    StatusCode::NO_CONTENT
}
