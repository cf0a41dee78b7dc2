//! Keypool's local API: an OpenAI-, Anthropic- and Gemini-compatible endpoint on loopback, so the tools
//! people already use (SDKs, coding agents, scripts) get the pool: its affinity, its rate-limit
//! awareness, its failover and its ledger.
//!
//! - `POST /v1/chat/completions` (OpenAI), `POST /v1/messages` and
//!   `POST /v1/messages/count_tokens` (Anthropic): the body goes upstream as it came (only a
//!   `provider/model` prefix is dropped from `model`), the answer streams back as it came.
//! - `GET /v1/models`: the models of every provider, in Anthropic's format when the request has
//!   an `anthropic-version` header, in Google's when it authenticates Google's way
//!   (`x-goog-api-key` or `?key=`), in OpenAI's otherwise.
//! - Gemini (see [`gemini`]): `POST /v1beta/models/{model}:generateContent`,
//!   `:streamGenerateContent` (with or without `alt=sse`), `:countTokens`, `GET /v1beta/models`,
//!   and the same under `/v1/` (Google's stable version, which `@google/genai` calls by default);
//!   the token also in `x-goog-api-key` or `?key=`, errors in Google's shape.
//!
//! - `GET /healthz` (only where a [`Serving::health`] is given, as by `keypool-server`): no token,
//!   `{"status":"ok","team":…}`.
//!
//! Invariants: the app's endpoint listens on 127.0.0.1 and ::1 only ([`Gateway::start`]); a
//! server's listens where it is told ([`Gateway::start_at`]). Every request but `/healthz` needs
//! the local token, none may come from a web page, and every one must name this machine (or an
//! allowed host) in `Host`; a body is at most [`MAX_BODY`].

mod connections;
mod dialect;
mod endpoints;
mod gemini;
mod guard;
mod members;
mod peek;
mod translate;

use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::StreamExt;
use keypool::{Clock, SessionId};
use keypool_llm::{
    passed_headers, retry_after_of, BoundState, CompletionError, CompletionService, ForwardRequest, ForwardedBody,
    NoKeyReason, ProviderEndpoint, Queued, UpstreamPath,
};
use shutdown::Shutdown;

pub use connections::{Bounds, ConnectionTimer, ManualTimer, BODY_DEADLINE, HEADER_READ};
pub use dialect::{Dialect, ListedModel};
pub use endpoints::{Endpoint, Serves, ENDPOINTS};
pub use guard::{token_hash, Denied, FAILURE_WINDOW, LOCKOUT, MAX_FAILURES};
pub use members::{Asked, Caller, Limit, Members, Pass, Refusal};

use dialect::{error, model_list, Problem};
use guard::Guard;
use peek::{with_model, Peek};

/// The largest request body accepted.
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// The longest model name accepted, in bytes: it reaches the pool's budgets and the ledger.
pub const MAX_MODEL_BYTES: usize = 256;

/// The longest `x-keypool-session` accepted, in bytes: every one is a binding the pool keeps.
pub const MAX_SESSION_BYTES: usize = 256;

/// The default port.
pub const DEFAULT_PORT: u16 = 4141;

/// Request headers passed upstream as the client sent them.
const PASSED_REQUEST_HEADERS: [&str; 3] = ["anthropic-version", "anthropic-beta", "openai-beta"];

/// Where a model goes.
#[derive(Debug, Clone)]
pub struct Route {
    pub endpoint: ProviderEndpoint,
    /// The model as the provider knows it (without a `provider/` prefix).
    pub model: String,
}

/// Why a model has no route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrouted {
    /// No provider lists it.
    Unknown,
    /// A provider of the other dialect serves it.
    OtherDialect { provider: String },
}

/// What the endpoint serves: the app's providers and their models.
pub trait Routes: Send + Sync {
    /// The provider serving `model` for a client speaking `dialect`: a provider of that kind
    /// that lists it, or `provider/model` naming the provider by id or name.
    fn route(&self, dialect: Dialect, model: &str) -> Result<Route, Unrouted>;
    /// Every model a client speaking `dialect` may ask for.
    fn models(&self, dialect: Dialect) -> Vec<ListedModel>;
    /// Asks the providers of `dialect` what they list, when [`Routes::route`] knew no provider of
    /// a model: a model the app offers may be one its provider lists but nobody has asked for
    /// since the app started. True when something was learned (worth routing again). By default
    /// nothing is.
    fn learn(&self, _dialect: Dialect) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(std::future::ready(false))
    }
}

/// Live counts, for the settings page.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Requests received (refused ones included).
    pub requests: u64,
    /// Requests being answered now (a stream counts until it ends).
    pub in_flight: u64,
    /// Answers that were not a success (refused, unknown model, upstream errors).
    pub failed: u64,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    in_flight: AtomicU64,
    failed: AtomicU64,
}

/// Why the endpoint could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("port {0} is already in use on 127.0.0.1")]
    PortInUse(u16),
    #[error("could not listen on 127.0.0.1:{port}: {reason}")]
    Bind { port: u16, reason: String },
    /// A server's address ([`Gateway::start_at`]) could not be listened on.
    #[error("could not listen on {address}: {reason}")]
    Listen { address: SocketAddr, reason: String },
}

/// The team's state as `/healthz` says it: `off`, `connected` or `disconnected`.
pub type Health = Arc<dyn Fn() -> &'static str + Send + Sync>;

/// Whether a server is ready to serve (`GET /readyz`): `Err` says why not.
pub type Readiness = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// `GET /metrics`: what renders the server's metrics (Prometheus' text format), and a token of its
/// own that may read them besides the owner's (a scraper need not hold the API's token).
#[derive(Clone)]
pub struct MetricsRoute {
    pub render: Arc<dyn Fn() -> String + Send + Sync>,
    pub token_hash: Option<[u8; 32]>,
}

/// How a server serves, beyond the app's endpoint.
#[derive(Clone, Default)]
pub struct Serving {
    /// Answers `GET /healthz` (without the token) with the team's state from this.
    pub health: Option<Health>,
    /// Logs one line per request at info level: method, path (never the query, which may hold a
    /// Gemini client's token), status and time.
    pub log_requests: bool,
    /// The bounds on connections: how many, and how long a request may take to arrive.
    pub bounds: Bounds,
    /// Members whose own tokens are served too, within their limits.
    pub members: Option<Arc<dyn Members>>,
    /// Told of every answer, for a server's metrics.
    pub observer: Option<Arc<dyn Observer>>,
    /// Answers `GET /metrics` to the owner's token or the metrics token.
    pub metrics: Option<MetricsRoute>,
    /// Answers `GET /readyz` (without the token).
    pub ready: Option<Readiness>,
}

/// A request answered, as a server's metrics count it.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    pub dialect: Dialect,
    pub status: u16,
    /// The member whose token sent it; `None` for the owner's, or a request refused before its
    /// token was known.
    pub member: Option<&'a str>,
    /// The time Keypool added: from the request's arrival until its first attempt went upstream
    /// (reading the body, routing, the member's limits, choosing a key, waiting for one); `None`
    /// when nothing went upstream.
    pub added: Option<std::time::Duration>,
    /// Every key was busy or resting for a while: the request waited for one to free up.
    pub waited: bool,
}

/// Told of every answer (its headers, for a stream), on the request's task: it must only count.
pub trait Observer: Send + Sync {
    fn answered(&self, answered: Answered<'_>);
}

/// What a handler notes on its answer for the [`Observer`].
#[derive(Clone)]
struct Noted {
    member: Option<Arc<str>>,
    /// When the first attempt went upstream.
    first_sent: Option<std::time::Instant>,
    waited: bool,
}

/// What a worker's handlers use: its own upstream connections ([`Shared::for_worker`]), and
/// the routes, guard and counters every worker shares.
struct Shared {
    routes: Arc<dyn Routes>,
    completions: CompletionService,
    guard: Arc<Guard>,
    counters: Arc<Counters>,
    members: Option<Arc<dyn Members>>,
    /// The providers found to have no Responses API (answered through their chat completions).
    without_responses: Arc<translate::WithoutResponses>,
}

impl Shared {
    /// The same endpoint for one more worker, with upstream connections of its own.
    fn for_worker(&self) -> Shared {
        Shared {
            routes: self.routes.clone(),
            completions: self.completions.with_own_connections(),
            guard: self.guard.clone(),
            counters: self.counters.clone(),
            members: self.members.clone(),
            without_responses: self.without_responses.clone(),
        }
    }

    /// Where `model` goes for `dialect`; a model no provider was known to list is routed again
    /// once the providers were asked what they list.
    async fn route(&self, dialect: Dialect, model: &str) -> Result<Route, Unrouted> {
        match self.routes.route(dialect, model) {
            Err(Unrouted::Unknown) if self.routes.learn(dialect).await => self.routes.route(dialect, model),
            routed => routed,
        }
    }
}

/// The running endpoint; stops when dropped.
///
/// It serves on threads of its own, one per core ([`workers`]), each a single-threaded Tokio
/// runtime accepting on every listener, with upstream connections of its own: a request is
/// read, forwarded and answered on one thread, its upstream connection's task beside it, with no
/// wake-up crossing to another thread (under load those cost more than the rest of the
/// request's work did). The runtime that starts it only binds.
pub struct Gateway {
    shared: Arc<Shared>,
    port: u16,
    addresses: Vec<SocketAddr>,
    shutdown: Shutdown,
    /// One per worker, closed when its thread has served its last connection.
    served: Vec<tokio::sync::oneshot::Receiver<()>>,
}

/// How many worker threads serve: one per core the process may run on.
fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Gateway {
    /// Listens on 127.0.0.1:`port` (0: any free port) and the same port on ::1 when this machine
    /// has IPv6, and serves until [`Gateway::stop`] or drop, on threads of its own.
    pub async fn start(
        port: u16,
        token_hash: [u8; 32],
        routes: Arc<dyn Routes>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
    ) -> Result<Gateway, StartError> {
        Gateway::start_serving(port, token_hash, routes, completions, clock, Serving::default()).await
    }

    /// As [`Gateway::start`], serving as `serving` says (the app's: its named tokens too).
    pub async fn start_serving(
        port: u16,
        token_hash: [u8; 32],
        routes: Arc<dyn Routes>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
        serving: Serving,
    ) -> Result<Gateway, StartError> {
        let v4 = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await.map_err(|error| {
            if error.kind() == std::io::ErrorKind::AddrInUse {
                StartError::PortInUse(port)
            } else {
                StartError::Bind { port, reason: error.to_string() }
            }
        })?;
        let port = v4.local_addr().map_err(|e| StartError::Bind { port, reason: e.to_string() })?.port();
        let mut listeners = vec![v4];
        match tokio::net::TcpListener::bind((Ipv6Addr::LOCALHOST, port)).await {
            Ok(v6) => listeners.push(v6),
            Err(error) => tracing::info!(%error, port, "the local API listens on IPv4 only"),
        }
        let gateway = Gateway::serve(listeners, token_hash, routes, completions, clock, serving)
            .map_err(|error| StartError::Bind { port, reason: error.to_string() })?;
        tracing::info!(port = gateway.port, "the local API listens on loopback");
        Ok(gateway)
    }

    /// Listens on `address` (any interface; the caller warns about one beyond loopback) and
    /// serves as `serving` says, until [`Gateway::shut_down`] or drop. `address` is also a
    /// `Host` the endpoint answers to.
    pub async fn start_at(
        address: SocketAddr,
        token_hash: [u8; 32],
        routes: Arc<dyn Routes>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
        serving: Serving,
    ) -> Result<Gateway, StartError> {
        let listen_error = |error: std::io::Error| StartError::Listen { address, reason: error.to_string() };
        let listener = tokio::net::TcpListener::bind(address).await.map_err(listen_error)?;
        let bound = listener.local_addr().map_err(listen_error)?;
        let gateway =
            Gateway::serve(vec![listener], token_hash, routes, completions, clock, serving).map_err(listen_error)?;
        gateway.shared.guard.listening_on(bound);
        Ok(gateway)
    }

    /// Serves `listeners` on [`workers`] threads until shut down. `Err`: a listener could not be
    /// handed to them, or no thread could be started.
    fn serve(
        listeners: Vec<tokio::net::TcpListener>,
        token_hash: [u8; 32],
        routes: Arc<dyn Routes>,
        completions: CompletionService,
        clock: Arc<dyn Clock>,
        serving: Serving,
    ) -> std::io::Result<Gateway> {
        let port = listeners.first().and_then(|l| l.local_addr().ok()).map_or(0, |a| a.port());
        let shared = Arc::new(Shared {
            routes,
            completions,
            guard: Arc::new(Guard::new(token_hash, clock).with_members(serving.members.clone())),
            counters: Arc::default(),
            members: serving.members.clone(),
            without_responses: Arc::default(),
        });
        let addresses = listeners.iter().filter_map(|l| l.local_addr().ok()).collect();
        // Out of the starting runtime, to be registered again with each worker's.
        let listeners = listeners.into_iter().map(|l| l.into_std()).collect::<std::io::Result<Vec<_>>>()?;
        let shutdown = Shutdown::default();
        // One bound on connections for every worker: the process's file descriptors are one.
        let slots = connections::Slots::new(serving.bounds.max_connections);
        let mut served = Vec::new();
        for worker in 0..workers() {
            let listeners = listeners.iter().map(|l| l.try_clone()).collect::<std::io::Result<Vec<_>>>()?;
            let app = Arc::new(router(Arc::new(shared.for_worker()), &serving));
            let stopped: Vec<_> = listeners.iter().map(|_| shutdown.subscribe()).collect();
            let (done, ended) = tokio::sync::oneshot::channel::<()>();
            let (bounds, slots) = (serving.bounds.clone(), slots.clone());
            let thread = std::thread::Builder::new().name(format!("keypool-api-{worker}")).spawn(move || {
                let _done = done;
                match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime.block_on(serve_on(listeners, app, stopped, bounds, slots)),
                    Err(error) => tracing::error!(%error, "a local API worker could not start its runtime"),
                }
            });
            match thread {
                Ok(_) => served.push(ended),
                // Fewer workers serve as well, more slowly; none is an error.
                Err(error) if !served.is_empty() => {
                    tracing::warn!(%error, workers = served.len(), "the local API serves on fewer threads");
                    break;
                }
                Err(error) => return Err(error),
            }
        }
        Ok(Gateway { shared, port, addresses, shutdown, served })
    }

    /// Stops accepting, and waits up to `grace` for the requests in flight (streams included) to
    /// finish. Whether they all did.
    pub async fn shut_down(mut self, grace: std::time::Duration) -> bool {
        self.shutdown.trigger();
        let served = std::mem::take(&mut self.served);
        // A worker's sender is dropped when its thread ends, which answers its receiver.
        tokio::time::timeout(grace, futures_util::future::join_all(served)).await.is_ok()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where it listens (127.0.0.1, and ::1 when available).
    pub fn addresses(&self) -> &[SocketAddr] {
        &self.addresses
    }

    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        Stats {
            requests: c.requests.load(Ordering::Relaxed),
            in_flight: c.in_flight.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        }
    }

    /// Answers requests addressed to `hosts` too, besides this machine's names (a server behind a
    /// reverse proxy, reached by its own name).
    pub fn allow_hosts(&self, hosts: impl IntoIterator<Item = String>) {
        self.shared.guard.allow_hosts(hosts);
    }

    /// Replaces the token (the old one stops working at once).
    pub fn set_token_hash(&self, hash: [u8; 32]) {
        self.shared.guard.set_hash(hash);
    }

    /// Stops listening; answers in progress finish.
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// The endpoint's routes over one worker's `shared`, and what is done around each request.
fn router(shared: Arc<Shared>, serving: &Serving) -> App {
    let app = ENDPOINTS.iter().fold(Router::new(), |app, endpoint| app.route(endpoint.path, endpoint.handler()));
    let app = app.fallback(not_found);
    let app = match serving.health.clone() {
        Some(health) => app.route(
            "/healthz",
            get(move |State(shared): State<Arc<Shared>>, headers: HeaderMap| healthz(shared, health.clone(), headers)),
        ),
        None => app,
    };
    let app = match serving.ready.clone() {
        Some(ready) => app.route(
            "/readyz",
            get(move |State(shared): State<Arc<Shared>>, headers: HeaderMap| readyz(shared, ready.clone(), headers)),
        ),
        None => app,
    };
    let app = match serving.metrics.clone() {
        Some(metrics) => app.route(
            "/metrics",
            get(move |State(shared): State<Arc<Shared>>, headers: HeaderMap| {
                metrics_answer(shared, metrics.clone(), headers)
            }),
        ),
        None => app,
    };
    App {
        router: app.with_state(shared.clone()),
        shared,
        observer: serving.observer.clone(),
        log_requests: serving.log_requests,
    }
}

/// One worker's endpoint: its router, and what is done around every request (the observer, the
/// log line), in one place rather than as layers of the router (each of which boxed the request's
/// future and cloned the routes again). A relayed path is handed to its handler directly.
pub(crate) struct App {
    router: Router,
    shared: Arc<Shared>,
    observer: Option<Arc<dyn Observer>>,
    log_requests: bool,
}

impl App {
    /// The answer to `request`.
    pub(crate) async fn answer(self: Arc<Self>, request: Request) -> Response {
        // One info line per request: method, path without the query, status, milliseconds.
        let logged = (self.log_requests && tracing::enabled!(tracing::Level::INFO))
            .then(|| (request.method().clone(), request.uri().path().to_owned()));
        let arrived = std::time::Instant::now();
        let path = request.uri().path();
        let relayed = ENDPOINTS.iter().find_map(|endpoint| match endpoint.serves {
            Serves::Relay(dialect, upstream) if endpoint.path == path => Some((dialect, upstream)),
            _ => None,
        });
        // Told of every answer to the API's paths (`/v1…`): its dialect, status, member and the
        // time Keypool added.
        let observed = match &self.observer {
            Some(observer) if path.starts_with("/v1") => {
                let gemini = path.starts_with("/v1beta/") || (path.starts_with("/v1/models/") && path.contains(':'));
                let dialect = relayed
                    .map(|(dialect, _)| dialect)
                    .or(gemini.then_some(Dialect::Gemini))
                    .unwrap_or_else(|| dialect_of(request.headers(), request.uri()));
                Some((observer, dialect))
            }
            _ => None,
        };
        let response = match relayed {
            // What the router would do with it, without its layers of boxed services.
            Some((dialect, upstream)) if request.method() == axum::http::Method::POST => {
                forward(self.shared.clone(), dialect, upstream, request).await
            }
            _ => {
                use tower::ServiceExt;
                self.router.clone().oneshot(request).await.unwrap_or_else(|never| match never {})
            }
        };
        if let Some((observer, dialect)) = observed {
            let noted = response.extensions().get::<Noted>();
            observer.answered(Answered {
                dialect,
                status: response.status().as_u16(),
                member: noted.and_then(|n| n.member.as_deref()),
                added: noted.and_then(|n| n.first_sent).map(|sent| sent.saturating_duration_since(arrived)),
                waited: noted.is_some_and(|n| n.waited),
            });
        }
        if let Some((method, path)) = logged {
            let ms = arrived.elapsed().as_millis();
            tracing::info!(%method, %path, status = response.status().as_u16(), ms, "request");
        }
        response
    }
}

/// One worker: serves every listener on this thread's runtime under `bounds` until its stop
/// signal, then until its connections have ended.
async fn serve_on(
    listeners: Vec<std::net::TcpListener>,
    app: Arc<App>,
    stopped: Vec<impl Future<Output = ()> + Send + 'static>,
    bounds: Bounds,
    slots: Arc<connections::Slots>,
) {
    let serving = listeners.into_iter().zip(stopped).map(|(listener, stopped)| {
        let (app, bounds, slots) = (app.clone(), bounds.clone(), slots.clone());
        async move {
            let listener = match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => listener,
                Err(error) => return tracing::error!(%error, "a local API worker could not listen"),
            };
            connections::serve(listener, app, bounds, slots, futures_util::FutureExt::shared(Box::pin(stopped))).await;
        }
    });
    futures_util::future::join_all(serving).await;
}

/// Counts a request in flight until dropped (for a stream: until its body ends).
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> InFlight {
        shared.counters.requests.fetch_add(1, Ordering::Relaxed);
        shared.counters.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(crate) async fn models(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let _in_flight = InFlight::new(&shared);
    let dialect = dialect_of(request.headers(), request.uri());
    let query = (dialect == Dialect::Gemini).then(|| request.uri().query()).flatten();
    let caller = match shared.guard.check(request.headers(), query) {
        Ok(caller) => caller,
        Err(denied) => return failed(&shared, refusal(dialect, denied)),
    };
    let mut models = shared.routes.models(dialect);
    if let (Some(member), Some(members)) = (caller.member(), &shared.members) {
        models.retain(|model| members.lists(member, &model.id));
    }
    noted(model_list(dialect, &models), caller.member().cloned(), None)
}

/// The dialect of a request whose path several dialects share (`/v1/models`, a path not
/// served): Gemini under `/v1beta/`, or when it authenticates Google's way (`x-goog-api-key`,
/// `?key=`); Anthropic with an `anthropic-version` header; OpenAI otherwise.
fn dialect_of(headers: &HeaderMap, uri: &axum::http::Uri) -> Dialect {
    let googles_key = headers.contains_key("x-goog-api-key")
        || uri.query().is_some_and(|q| q.split('&').any(|pair| pair.starts_with("key=")));
    if uri.path().starts_with("/v1beta/") {
        Dialect::Gemini
    } else if headers.contains_key("anthropic-version") {
        Dialect::Anthropic
    } else if googles_key {
        Dialect::Gemini
    } else {
        Dialect::OpenAi
    }
}

async fn not_found(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let _in_flight = InFlight::new(&shared);
    let dialect = dialect_of(request.headers(), request.uri());
    let query = (dialect == Dialect::Gemini).then(|| request.uri().query()).flatten();
    if let Err(denied) = shared.guard.check(request.headers(), query) {
        return failed(&shared, refusal(dialect, denied));
    }
    let message = format!("{} {} is not served here", request.method(), request.uri().path());
    failed(&shared, error(dialect, Problem::NotFound, message, None))
}

/// `GET /healthz`: the team's state, to this machine's names (and the allowed hosts) only.
async fn healthz(shared: Arc<Shared>, health: Health, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return refusal(Dialect::OpenAi, Denied::Host);
    }
    let body = serde_json::json!({ "status": "ok", "team": health() }).to_string();
    ([(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `GET /readyz`: 200 when the server says it is ready, 503 with why otherwise; to this machine's
/// names (and the allowed hosts) only, without the token.
async fn readyz(shared: Arc<Shared>, ready: Readiness, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return refusal(Dialect::OpenAi, Denied::Host);
    }
    let (status, body) = match ready() {
        Ok(()) => (axum::http::StatusCode::OK, serde_json::json!({ "status": "ready" })),
        Err(why) => {
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({ "status": "not ready", "why": why }))
        }
    };
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// `GET /metrics`: the server's metrics, to the owner's token or the metrics token (a member's
/// is refused); rendered off the worker's thread.
async fn metrics_answer(shared: Arc<Shared>, metrics: MetricsRoute, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return refusal(Dialect::OpenAi, Denied::Host);
    }
    let scraper = metrics.token_hash.is_some_and(|hash| shared.guard.offers(&headers, &hash));
    if !scraper {
        match shared.guard.check(&headers, None) {
            Ok(Caller::Owner) => {}
            Ok(Caller::Member(_)) => {
                return error(Dialect::OpenAi, Problem::Forbidden, "a member's token cannot read the metrics", None)
            }
            Err(denied) => return refusal(Dialect::OpenAi, denied),
        }
    }
    match tokio::task::spawn_blocking(move || (metrics.render)()).await {
        Ok(text) => {
            ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text).into_response()
        }
        Err(_) => error(Dialect::OpenAi, Problem::Internal, "the metrics could not be rendered", None),
    }
}

fn failed(shared: &Shared, response: Response) -> Response {
    shared.counters.failed.fetch_add(1, Ordering::Relaxed);
    response
}

fn refusal(dialect: Dialect, denied: Denied) -> Response {
    match denied {
        Denied::Host => {
            error(dialect, Problem::Misdirected, "this endpoint answers only to this machine's names", None)
        }
        Denied::Origin => error(dialect, Problem::Forbidden, "requests from web pages are refused", None),
        Denied::Token => error(dialect, Problem::Unauthorized, "the local API token is missing or wrong", None),
        Denied::LockedOut(seconds) => error(
            dialect,
            Problem::RateLimited,
            format!("too many wrong tokens: try again in {seconds} s"),
            Some(seconds),
        ),
        Denied::Member(refused) => refused.response(dialect),
    }
}

/// `response` with what the [`Observer`] is told of it.
fn noted(
    mut response: Response,
    member: Option<Arc<str>>,
    forwarded: Option<(std::time::Instant, Queued)>,
) -> Response {
    let first_sent = forwarded.and_then(|(calling, queued)| Some(calling + queued.first_sent?));
    let waited = forwarded.is_some_and(|(_, queued)| queued.waited);
    response.extensions_mut().insert(Noted { member, first_sent, waited });
    response
}

/// A request admitted: who sent it, and for a member the pass its limits hold until the answer
/// has gone.
struct Admitted {
    member: Option<Arc<str>>,
    _pass: Option<Pass>,
}

impl Shared {
    /// Whether `caller` may send a request for `model` (as asked) routed by `route`: the owner
    /// always may; a member within its limits. `Err`: the refusal, in `dialect`.
    async fn admit(&self, caller: Caller, dialect: Dialect, model: &str, route: &Route) -> Result<Admitted, Response> {
        let (Caller::Member(member), Some(members)) = (caller, &self.members) else {
            return Ok(Admitted { member: None, _pass: None });
        };
        let asked = Asked { model, provider: &route.endpoint.name, routed: &route.model };
        match members.admit(&member, asked).await {
            Ok(pass) => Ok(Admitted { member: Some(member), _pass: Some(pass) }),
            Err(refused) => Err(noted(failed(self, refused.response(dialect)), Some(member), None)),
        }
    }
}

pub(crate) async fn forward(shared: Arc<Shared>, dialect: Dialect, path: UpstreamPath, request: Request) -> Response {
    let in_flight = InFlight::new(&shared);
    let (parts, body) = request.into_parts();
    let caller = match shared.guard.check(&parts.headers, None) {
        Ok(caller) => caller,
        Err(denied) => return failed(&shared, refusal(dialect, denied)),
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        let message = format!("the request body is larger than {} MiB", MAX_BODY / (1024 * 1024));
        return failed(&shared, error(dialect, Problem::TooLarge, message, None));
    };
    let peek: Peek<'_> = match serde_json::from_slice(&bytes) {
        Ok(peek) => peek,
        Err(parse) => {
            let message = format!("the body must be a JSON object with a model: {parse}");
            return failed(&shared, error(dialect, Problem::BadRequest, message, None));
        }
    };
    let given_session = match bounded(&peek.model, &parts.headers) {
        Ok(session) => session,
        Err(message) => return failed(&shared, error(dialect, Problem::BadRequest, message, None)),
    };
    let route = match shared.route(dialect, &peek.model).await {
        Ok(route) => route,
        Err(Unrouted::Unknown) => {
            let message =
                format!("the model `{}` does not exist here: GET /v1/models lists the models served", peek.model);
            return failed(&shared, error(dialect, Problem::NotFound, message, None));
        }
        Err(Unrouted::OtherDialect { provider }) => {
            let other = match dialect {
                Dialect::OpenAi => "the Anthropic Messages API (/v1/messages)",
                Dialect::Anthropic => "the OpenAI Chat Completions API (/v1/chat/completions)",
                Dialect::Gemini => "the OpenAI or the Anthropic API",
            };
            let message = format!("the model `{}` is served by {provider}, through {other}", peek.model);
            return failed(&shared, error(dialect, Problem::BadRequest, message, None));
        }
    };
    let admitted = match shared.admit(caller, dialect, &peek.model, &route).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let session =
        given_session.or_else(|| agent_session(&parts.headers, &peek)).unwrap_or_else(|| peek.conversation(dialect));
    let stream = peek.stream;
    let body = if route.model == peek.model {
        bytes.clone()
    } else {
        match with_model(&bytes, &route.model) {
            Some(body) => body.into(),
            None => return failed(&shared, error(dialect, Problem::BadRequest, "the body is not a JSON object", None)),
        }
    };
    let bound = (path == UpstreamPath::Responses).then(|| peek.bound_state()).flatten();
    let upstream = Upstream { route, path, session, body, stream, admitted, bound };
    pass(shared, dialect, in_flight, &parts.headers, upstream).await
}

/// Checks what a client controls that the pool keeps: the model name (at most
/// [`MAX_MODEL_BYTES`]) and the conversation it names itself (`x-keypool-session`, text of at
/// most [`MAX_SESSION_BYTES`]), which it answers, if given. `Err`: why the request is refused.
fn bounded(model: &str, headers: &HeaderMap) -> Result<Option<String>, String> {
    if model.len() > MAX_MODEL_BYTES {
        return Err(format!("the model name is longer than {MAX_MODEL_BYTES} bytes"));
    }
    match headers.get("x-keypool-session").map(|v| v.to_str()) {
        None => Ok(None),
        Some(Ok(session)) if session.len() <= MAX_SESSION_BYTES => Ok(Some(format!("api:session:{session}"))),
        Some(_) => Err(format!("x-keypool-session must be text of at most {MAX_SESSION_BYTES} bytes")),
    }
}

/// The session a coding agent names, when the client named none with `x-keypool-session`:
/// Claude Code's `x-claude-code-session-id`, then the session in its `metadata.user_id`;
/// Codex's `session-id` header, then the body's `prompt_cache_key` (Codex: the same id). Each at
/// most [`MAX_SESSION_BYTES`]; a conversation is named by how it starts only when none of these
/// is given.
fn agent_session(headers: &HeaderMap, peek: &Peek<'_>) -> Option<String> {
    let fits = |id: &&str| !id.is_empty() && id.len() <= MAX_SESSION_BYTES;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).filter(fits).map(str::to_owned);
    let id = header("x-claude-code-session-id")
        .or_else(|| peek.claude_code_session().filter(|id| fits(&id.as_str())))
        .or_else(|| header("session-id"))
        .or_else(|| peek.prompt_cache_key.clone().filter(|id| fits(&id.as_str())))?;
    Some(format!("agent:session:{id}"))
}

/// A request on its way upstream, routed and read.
struct Upstream {
    route: Route,
    path: UpstreamPath,
    session: String,
    body: bytes::Bytes,
    /// The answer is SSE (see [`ForwardRequest::stream`]).
    stream: bool,
    /// Who sent it, and what its limits hold for it until the answer has gone.
    admitted: Admitted,
    /// State it carries that lives in one organisation (a Responses request's stored response
    /// or encrypted reasoning), if any.
    bound: Option<BoundState>,
}

/// Forwards a routed request through the pool and passes the answer back as it comes, or says
/// in `dialect` why no key could answer.
async fn pass(
    shared: Arc<Shared>,
    dialect: Dialect,
    in_flight: InFlight,
    headers: &HeaderMap,
    upstream: Upstream,
) -> Response {
    let Upstream { route, path, session, body, stream, admitted, bound } = upstream;
    let member = admitted.member.clone();
    // A provider of another dialect is asked in its own; its answer comes back in the client's.
    // A Responses request to a provider without that API goes to its chat completions; one to
    // a provider not known to lack it goes as it is, and is asked again that way after a 404.
    let chat_only = shared.without_responses.knows(&route.endpoint);
    let fallback = (path == UpstreamPath::Responses && !chat_only && translate::may_lack_responses(&route))
        .then(|| (route.clone(), body.clone()));
    let (path, body, stream, translation) = match translate::request(dialect, path, &route, &body, stream, chat_only) {
        Ok(Some(translated)) => (translated.path, translated.body, translated.stream, Some(translated.translation)),
        Ok(None) => (path, body, stream, None),
        Err(refused) => {
            let refused = failed(&shared, error(dialect, Problem::BadRequest, refused.to_string(), None));
            return noted(refused, member, None);
        }
    };
    let source = headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .map(|ua| ua.chars().take(200).collect())
        .unwrap_or_else(|| "local API".to_owned());
    let passed = passed_headers(headers, &PASSED_REQUEST_HEADERS);
    let names = fallback.as_ref().map(|_| (session.clone(), source.clone()));
    let request = ForwardRequest {
        endpoint: route.endpoint,
        path,
        model: route.model,
        session: SessionId::new(session),
        body,
        stream,
        headers: passed,
        source,
        member: member.as_deref().map(str::to_owned),
        // A translated request carries no such state (it is refused or left out).
        bound: if translation.is_none() { bound } else { None },
    };
    let now = shared.completions.clock().now();
    let calling = std::time::Instant::now();
    let (mut forwarded, mut queued) = shared.completions.forward_timed(request).await;
    let not_found = matches!(&forwarded, Ok(answer) if answer.status == 404);
    if let (Some((route, body)), Some((session, source))) = (fallback, names) {
        if not_found {
            if let Ok(Some(translated)) = translate::request(dialect, path, &route, &body, stream, true) {
                let request = ForwardRequest {
                    endpoint: route.endpoint.clone(),
                    path: translated.path,
                    model: route.model,
                    session: SessionId::new(session),
                    body: translated.body,
                    stream: translated.stream,
                    headers: passed_headers(headers, &PASSED_REQUEST_HEADERS),
                    source,
                    member: member.as_deref().map(str::to_owned),
                    bound: None,
                };
                let (again, waited) = shared.completions.forward_timed(request).await;
                if again.as_ref().is_ok_and(|a| a.status < 400) {
                    shared.without_responses.learn(&route.endpoint);
                }
                (forwarded, queued) = (again.map(|a| translated.translation.answer(a)), waited);
            }
        }
    }
    let answer = match forwarded {
        Ok(forwarded) => {
            let forwarded = match translation {
                Some(translation) => translation.answer(forwarded),
                None => forwarded,
            };
            if forwarded.status >= 400 {
                shared.counters.failed.fetch_add(1, Ordering::Relaxed);
            }
            let body = match forwarded.body {
                ForwardedBody::Whole(bytes) => Body::from(bytes),
                ForwardedBody::Stream(stream) => Body::from_stream(stream.map(move |chunk| {
                    let _counted = (&in_flight, &admitted);
                    chunk
                })),
            };
            let mut response = Response::builder().status(forwarded.status);
            for (name, value) in forwarded.headers {
                response = response.header(name, value);
            }
            response.body(body).unwrap_or_else(|_| {
                error(dialect, Problem::Internal, "the provider's answer could not be passed on", None)
            })
        }
        Err(failure) => failed(&shared, upstream_failure(dialect, &failure, now)),
    };
    noted(answer, member, Some((calling, queued)))
}

/// A request no key could answer, in the client's dialect: when keys are only resting, a 429
/// with when to come back, so SDKs retry on their own.
fn upstream_failure(dialect: Dialect, failure: &CompletionError, now: keypool::Timestamp) -> Response {
    match failure {
        CompletionError::NoAvailableKey(no_key) => match &no_key.why {
            NoKeyReason::Empty | NoKeyReason::ProviderKeyUnresolved { .. } => error(
                dialect,
                Problem::Unavailable,
                format!("Keypool has no usable API key for {}: add one in Settings → Providers", no_key.provider),
                None,
            ),
            NoKeyReason::Blocked(_) => {
                let retry = retry_after_of(failure, now).map(|wait| wait.as_secs_f64().ceil() as u64);
                let message = match retry {
                    Some(seconds) => format!(
                        "every Keypool key for {} is busy or rate-limited; one frees up in {seconds} s",
                        no_key.provider
                    ),
                    None => format!("no Keypool key for {} can take the request now", no_key.provider),
                };
                error(dialect, Problem::RateLimited, message, retry.or(Some(1)))
            }
        },
        CompletionError::Network(kind) => {
            error(dialect, Problem::Upstream, format!("could not reach the provider: {kind}"), None)
        }
        CompletionError::Provider(refusal) => error(
            dialect,
            Problem::Upstream,
            format!("the provider answered HTTP {}: {}", refusal.status, refusal.message),
            None,
        ),
        other => error(dialect, Problem::Internal, other.to_string(), None),
    }
}

/// A one-shot stop signal every listener waits on (a `watch` channel: late subscribers see it).
mod shutdown {
    use tokio::sync::watch;

    pub struct Shutdown(watch::Sender<bool>);

    impl Default for Shutdown {
        fn default() -> Self {
            Shutdown(watch::channel(false).0)
        }
    }

    impl Shutdown {
        pub fn subscribe(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
            let mut stopped = self.0.subscribe();
            async move {
                let _ = stopped.wait_for(|stopped| *stopped).await;
            }
        }

        pub fn trigger(&self) {
            self.0.send_replace(true);
        }
    }
}
