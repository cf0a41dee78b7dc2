//! One worker's endpoint: its routes (built from [`crate::ENDPOINTS`]), what is done around every
//! request (the observer, the log line), and the small answers that are not relayed: the model
//! lists, a path not served, `/healthz`, `/readyz`, `/metrics`.

use std::future::Future;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use keypool_llm::wire::{Dialect, Problem, WireFormat};
use tracing::Instrument;

use crate::answers::error;
use crate::drain::{or_cut, CUT_MESSAGE};
use crate::endpoints::{Serves, ENDPOINTS};
use crate::guard::Denied;
use crate::intake::{relay_noted, Asks};
use crate::lists::dialect_of;
use crate::members::Caller;
use crate::traces::{answered, request_span};
use crate::{
    connections, Answered, Bounds, Health, InFlight, MetricsRoute, Noted, Observer, Readiness, Serving, Shared,
};

/// The format of the answers that are no dialect's own (health, readiness, metrics).
const OPENAI: WireFormat = WireFormat::OpenAiChat;

/// The endpoint's routes over one worker's `shared`, and what is done around each request.
pub(crate) fn router(shared: Arc<Shared>, serving: &Serving) -> App {
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

impl connections::Served for App {
    /// See [`crate::forwarded`].
    fn client_of(&self, peer: std::net::IpAddr, headers: &HeaderMap) -> std::net::IpAddr {
        self.shared.guard.client_of(peer, headers)
    }

    fn answer(self: Arc<Self>, request: Request) -> impl Future<Output = Response> + Send {
        self.answered(request)
    }
}

impl App {
    /// The answer to `request`.
    async fn answered(self: Arc<Self>, request: Request) -> Response {
        // One info line per request: method, path without the query, status, milliseconds.
        let logged = (self.log_requests && tracing::enabled!(tracing::Level::INFO))
            .then(|| (request.method().clone(), request.uri().path().to_owned()));
        let arrived = std::time::Instant::now();
        let path = request.uri().path();
        let relayed = ENDPOINTS.iter().find_map(|endpoint| match endpoint.serves {
            Serves::Relay(format, operation) if endpoint.path == path => Some((format, Asks::Operation(operation))),
            Serves::Action(format) => {
                let prefix = endpoint.path.strip_suffix("{*action}")?;
                let action = path.strip_prefix(prefix).filter(|action| !action.is_empty())?;
                Some((format, Asks::Action(action.to_owned())))
            }
            _ => None,
        });
        // Told of every answer to the API's paths (`/v1…`): its dialect, status, member and the
        // time Keypool added.
        let observed = match &self.observer {
            Some(observer) if path.starts_with("/v1") => {
                let gemini = path.starts_with("/v1beta/") || (path.starts_with("/v1/models/") && path.contains(':'));
                let dialect = relayed
                    .as_ref()
                    .map(|(format, _)| format.dialect())
                    .or(gemini.then_some(Dialect::Gemini))
                    .unwrap_or_else(|| dialect_of(request.headers(), request.uri()));
                Some((observer, dialect))
            }
            _ => None,
        };
        // Not the probes': one span per request to the API.
        let span = if path.starts_with("/v1") { request_span(request.method(), path) } else { tracing::Span::none() };
        let draining = self.shared.drain.draining();
        // While draining, only the probes and the metrics are answered.
        let refused = (draining && !matches!(path, "/healthz" | "/readyz" | "/metrics")).then(|| {
            relayed
                .as_ref()
                .map_or_else(|| dialect_of(request.headers(), request.uri()).format(), |(format, _)| *format)
        });
        let (mut response, noted) = match (refused, relayed) {
            (Some(format), _) => (drain_refusal(format, "the server is shutting down: try again"), None),
            // What the router would do with it, without its layers of boxed services.
            (None, Some((format, asks))) if request.method() == axum::http::Method::POST => {
                let relayed =
                    std::pin::pin!(relay_noted(self.shared.clone(), format, asks, request).instrument(span.clone()));
                match or_cut(relayed, &self.shared.drain).await {
                    Some(answered) => answered,
                    None => (drain_refusal(format, CUT_MESSAGE), None),
                }
            }
            _ => {
                use tower::ServiceExt;
                let response = self.router.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
                (response, None)
            }
        };
        if draining || self.shared.drain.draining() {
            // A kept-alive connection's next request goes elsewhere.
            response.headers_mut().insert(axum::http::header::CONNECTION, HeaderValue::from_static("close"));
        }
        let noted = noted.as_ref().or_else(|| response.extensions().get::<Noted>());
        let member = noted.and_then(|n| n.member.clone());
        if let Some((observer, dialect)) = observed {
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
            let client = crate::guard::PEER.try_with(|client| *client).ok().map(tracing::field::display);
            tracing::info!(%method, %path, status = response.status().as_u16(), ms, client, "request");
        }
        let dialect = observed.map(|(_, dialect)| dialect_name(dialect));
        answered(span, response, dialect, member.as_deref())
    }
}

/// One worker: serves every listener on this thread's runtime under `bounds` until its stop
/// signal, then until its connections have ended.
pub(crate) async fn serve_on(
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

/// A dialect as traces and metrics name it.
fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAi => "openai",
        Dialect::Anthropic => "anthropic",
        Dialect::Gemini => "gemini",
    }
}

async fn not_found(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let _in_flight = InFlight::new(&shared);
    let dialect = dialect_of(request.headers(), request.uri());
    let query = (dialect == Dialect::Gemini).then(|| request.uri().query()).flatten();
    if let Err(denied) = shared.guard.check(request.headers(), query) {
        return shared.failed(denied.response(dialect.format()));
    }
    let message = format!("{} {} is not served here", request.method(), request.uri().path());
    shared.failed(error(dialect.format(), Problem::NotFound, message, None))
}

/// `GET /healthz`: the team's state, to this machine's names (and the allowed hosts) only.
async fn healthz(shared: Arc<Shared>, health: Health, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return Denied::Host.response(OPENAI);
    }
    let body = serde_json::json!({ "status": "ok", "team": health() }).to_string();
    ([(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `GET /readyz`: 200 when the server says it is ready, 503 with why otherwise; to this machine's
/// names (and the allowed hosts) only, without the token.
async fn readyz(shared: Arc<Shared>, ready: Readiness, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return Denied::Host.response(OPENAI);
    }
    let ready = if shared.drain.draining() { Err("draining: the server is shutting down".to_owned()) } else { ready() };
    let (status, body) = match ready {
        Ok(()) => (axum::http::StatusCode::OK, serde_json::json!({ "status": "ready" })),
        Err(why) => {
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({ "status": "not ready", "why": why }))
        }
    };
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// A request refused while draining (or cut off before its answer began): a 503 every SDK and
/// agent retries, on a connection that closes, so the retry may reach another replica.
fn drain_refusal(format: WireFormat, message: &str) -> Response {
    let mut response = error(format, Problem::Unavailable, message, Some(1));
    response.headers_mut().insert("x-should-retry", HeaderValue::from_static("true"));
    response
}

/// `GET /metrics`: the server's metrics, to the owner's token or the metrics token (a member's
/// is refused); rendered off the worker's thread.
async fn metrics_answer(shared: Arc<Shared>, metrics: MetricsRoute, headers: HeaderMap) -> Response {
    if !shared.guard.host_allowed(&headers) {
        return Denied::Host.response(OPENAI);
    }
    let scraper = metrics.token_hash.is_some_and(|hash| shared.guard.offers(&headers, &hash));
    if !scraper {
        match shared.guard.check(&headers, None) {
            Ok(Caller::Owner) => {}
            Ok(Caller::Member(_)) => {
                return error(OPENAI, Problem::Forbidden, "a member's token cannot read the metrics", None)
            }
            Err(denied) => return denied.response(OPENAI),
        }
    }
    match tokio::task::spawn_blocking(move || (metrics.render)()).await {
        Ok(text) => {
            ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text).into_response()
        }
        Err(_) => error(OPENAI, Problem::Internal, "the metrics could not be rendered", None),
    }
}
