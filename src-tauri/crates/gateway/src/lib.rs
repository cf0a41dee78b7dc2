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

mod answers;
mod app;
mod connections;
mod drain;
mod endpoints;
mod forwarded;
mod guard;
mod intake;
mod lists;
mod loops;
mod members;
mod responses;
mod session;
mod traces;

use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::response::Response;
use keypool::Clock;
use keypool_llm::{CompletionService, ProviderEndpoint, Queued};
use shutdown::Shutdown;

pub use answers::{error, model_list};
pub use connections::{Bounds, ConnectionTimer, ManualTimer, BODY_DEADLINE, HEADER_READ};
pub use endpoints::{Endpoint, Serves, ENDPOINTS};
pub use forwarded::{ForwardedHeader, TrustedProxies};
pub use guard::{token_hash, Denied, FAILURE_WINDOW, LOCKOUT, MAX_FAILURES};
pub use keypool_llm::wire::{Dialect, ListedModel, Problem};
pub use members::{Asked, Caller, Limit, Members, Pass, Refusal};

use app::{router, serve_on};
use guard::Guard;

/// The largest request body accepted.
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// The longest model name accepted, in bytes: it reaches the pool's budgets and the ledger.
pub const MAX_MODEL_BYTES: usize = 256;

/// The longest `x-keypool-session` accepted, in bytes: every one is a binding the pool keeps.
pub const MAX_SESSION_BYTES: usize = 256;

/// The default port.
pub const DEFAULT_PORT: u16 = 4141;

/// Where a model goes.
#[derive(Debug, Clone)]
pub struct Route {
    pub endpoint: ProviderEndpoint,
    /// The model as the provider knows it (without a `provider/` prefix).
    pub model: Arc<str>,
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
    /// A client was locked out for wrong tokens (see [`LOCKOUT`]).
    fn locked_out(&self) {}
    /// A peer that is not a trusted proxy sent a forwarded header, which was ignored.
    fn forwarded_ignored(&self) {}
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
    without_responses: Arc<responses::WithoutResponses>,
    /// The user agents this worker saw lately, as the ledger records them (a client sends the
    /// same one with every request: its text is made once).
    sources: std::sync::Mutex<Vec<Arc<str>>>,
    /// The sessions this worker served lately (see [`session::Session::id`]).
    sessions: std::sync::Mutex<Vec<keypool::SessionId>>,
    /// A server's drain, every worker's.
    drain: Arc<drain::Drain>,
    /// The names of translated answers, unique across workers.
    answer_ids: Arc<keypool_llm::wire::AnswerIds>,
    /// Where the endpoint listens: a provider there would send its requests back here.
    own: Arc<[SocketAddr]>,
    /// The marks its relayed requests carry, to know one that comes back.
    hops: Arc<keypool_llm::hop::HopMarks>,
}

/// How many user agents a worker keeps.
const SOURCES: usize = 32;

/// The longest user agent recorded, in characters.
const MAX_SOURCE_CHARS: usize = 200;

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
            sources: std::sync::Mutex::default(),
            sessions: std::sync::Mutex::default(),
            drain: self.drain.clone(),
            answer_ids: self.answer_ids.clone(),
            own: self.own.clone(),
            hops: self.hops.clone(),
        }
    }

    /// Who sent a request with `headers`, for the ledger: its user agent (its first
    /// [`MAX_SOURCE_CHARS`] characters), or `local API`.
    fn source(&self, headers: &axum::http::HeaderMap) -> Arc<str> {
        static ANONYMOUS: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from("local API"));
        let Some(agent) = headers.get("user-agent").and_then(|v| v.to_str().ok()) else {
            return ANONYMOUS.clone();
        };
        let agent = match agent.char_indices().nth(MAX_SOURCE_CHARS) {
            Some((end, _)) => &agent[..end],
            None => agent,
        };
        let mut sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = sources.iter().find(|known| ***known == *agent) {
            return known.clone();
        }
        let source: Arc<str> = Arc::from(agent);
        if sources.len() >= SOURCES {
            sources.remove(0);
        }
        sources.push(source.clone());
        source
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

impl Shared {
    /// Counts `response` as a failed answer.
    fn failed(&self, response: Response) -> Response {
        self.count_failure();
        response
    }

    fn count_failure(&self) {
        self.counters.failed.fetch_add(1, Ordering::Relaxed);
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
        let addresses: Vec<SocketAddr> = listeners.iter().filter_map(|l| l.local_addr().ok()).collect();
        let shared = Arc::new(Shared {
            routes,
            completions,
            guard: Arc::new(
                Guard::new(token_hash, clock)
                    .with_members(serving.members.clone())
                    .with_observer(serving.observer.clone()),
            ),
            counters: Arc::default(),
            members: serving.members.clone(),
            without_responses: Arc::default(),
            sources: std::sync::Mutex::default(),
            sessions: std::sync::Mutex::default(),
            drain: Arc::default(),
            answer_ids: Arc::new(keypool_llm::wire::AnswerIds::random()),
            own: addresses.clone().into(),
            hops: Arc::default(),
        });
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

    /// Starts draining (a server's SIGTERM): from now on `/readyz` answers 503, every new request
    /// to the API is refused with a 503 in its dialect (`retry-after`, `x-should-retry: true`,
    /// `connection: close`: a client retries, through a load balancer on another replica), and the
    /// requests in flight, streams included, go on. `/healthz` and `/metrics` still answer.
    pub fn drain(&self) {
        self.shared.drain.start();
    }

    /// Returns once no request is in flight (for a stream: once its last byte went), after
    /// [`Gateway::drain`]; at once when none is.
    pub async fn idle(&self) {
        let counters = &self.shared.counters;
        self.shared.drain.idle(|| counters.in_flight.load(Ordering::SeqCst)).await;
    }

    /// Ends the requests still in flight: a stream with an error event in its client's dialect
    /// (a body that is no stream of events, with an error body), a request whose answer has not
    /// begun with a 503 in its dialect. Drains too, if it was not draining.
    pub fn cut_off(&self) {
        self.shared.drain.cut();
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

    /// Reads each request's client from `proxies`' forwarded header when it comes from one of
    /// them, for the lockout, the log line and the metrics (replacing those trusted before).
    pub fn trust_proxies(&self, proxies: TrustedProxies) {
        self.shared.guard.trust_proxies(proxies);
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

/// Counts a request in flight until dropped (for a stream: until its body ends).
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> InFlight {
        shared.counters.requests.fetch_add(1, Ordering::Relaxed);
        shared.counters.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Sequentially consistent with the drain's flag: the last request to end sees it, or
        // the drain sees none in flight.
        if self.0.counters.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.drain.went_idle();
        }
    }
}

/// `response` with what the [`Observer`] is told of it.
fn noted(
    mut response: Response,
    member: Option<Arc<str>>,
    forwarded: Option<(std::time::Instant, Queued)>,
) -> Response {
    response.extensions_mut().insert(Noted::of(member, forwarded));
    response
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
