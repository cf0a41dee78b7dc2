//! One intake for every relayed request, whatever its format: the token, the body, what the
//! format reads of it (its model, whether it streams, its conversation), the route, the member's
//! limits, and then the pool: as it came to a provider of the client's dialect, translated to one
//! of another, and its answer back as it comes.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::StreamExt;
use keypool_llm::wire::{translate, with_model, Address, Delivery, Operation, Problem, Translated, WireFormat};
use keypool_llm::{
    passed_headers, retry_after_of, CompletionError, ForwardRequest, ForwardedBody, NoKeyReason, Queued,
};

use crate::answers::error;
use crate::drain::UntilCut;
use crate::members::{Asked, Caller, Pass};
use crate::session::Session;
use crate::{InFlight, Noted, Route, Shared, Unrouted, MAX_BODY, MAX_MODEL_BYTES};

/// Request headers passed upstream as the client sent them.
const PASSED_REQUEST_HEADERS: [&str; 3] = ["anthropic-version", "anthropic-beta", "openai-beta"];

/// What a request's path says it asks: an operation of its format (the body names the model and
/// whether it streams), or a format's action naming the model (Gemini's `{model}:{method}`).
#[derive(Debug, Clone)]
pub(crate) enum Asks {
    Operation(Operation),
    Action(String),
}

/// A request admitted: who sent it, and for a member the pass its limits hold until the answer
/// has gone.
struct Admitted {
    member: Option<Arc<str>>,
    _pass: Option<Pass>,
}

/// Answers a request of `format` to a path that `asks` what it does.
pub(crate) async fn relay(shared: Arc<Shared>, format: WireFormat, asks: Asks, request: Request) -> Response {
    match relay_noted(shared, format, asks, request).await {
        (mut response, Some(noted)) => {
            response.extensions_mut().insert(noted);
            response
        }
        (response, None) => response,
    }
}

/// [`relay`], and what the observer is told of the answer (none for a request refused before
/// its token was known).
pub(crate) async fn relay_noted(
    shared: Arc<Shared>,
    format: WireFormat,
    asks: Asks,
    request: Request,
) -> (Response, Option<Noted>) {
    let in_flight = InFlight::new(&shared);
    let (parts, body) = request.into_parts();
    let wire = format.wire();
    // Before the token: a request of this Keypool's own that came back says so, whatever key
    // the provider that sent it here holds.
    let hop = match crate::loops::hop(&shared.hops, &parts.headers) {
        Ok(hop) => hop,
        Err(message) => return (shared.failed(error(format, Problem::Loop, message, None)), None),
    };
    // Google's clients may send the token as `?key=`; the others' query is never read.
    let query = (format == WireFormat::GeminiGenerate).then(|| parts.uri.query()).flatten();
    let caller = match shared.guard.check(&parts.headers, query) {
        Ok(caller) => caller,
        Err(denied) => return (shared.failed(denied.response(format)), None),
    };
    let action = match &asks {
        Asks::Action(action) => match wire.action(action, parts.uri.query()) {
            Some(action) => Some(action),
            None => {
                let message = format!("POST {} is not served here", parts.uri.path());
                return (shared.failed(error(format, Problem::NotFound, message, None)), None);
            }
        },
        Asks::Operation(_) => None,
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        let message = format!("the request body is larger than {} MiB", MAX_BODY / (1024 * 1024));
        return (shared.failed(error(format, Problem::TooLarge, message, None)), None);
    };
    let peek = match wire.peek(&bytes) {
        Ok(peek) => peek,
        Err(message) => return (shared.failed(error(format, Problem::BadRequest, message, None)), None),
    };
    let (model, address) = match (action, &asks) {
        (Some((model, operation, delivery)), _) => (model, Address { format, operation, delivery }),
        (None, Asks::Operation(operation)) => {
            let delivery = if peek.stream { Delivery::Events } else { Delivery::Whole };
            (peek.model(), Address { format, operation: *operation, delivery })
        }
        (None, Asks::Action(_)) => unreachable!("an action is read above"),
    };
    let named = match bounded(model).and_then(|()| Session::named(&parts.headers)) {
        Ok(named) => named,
        Err(message) => return (shared.failed(error(format, Problem::BadRequest, message, None)), None),
    };
    let route = match shared.route(format.dialect(), model).await {
        Ok(route) => route,
        Err(Unrouted::Unknown) => {
            let listed = if format == WireFormat::GeminiGenerate { "/v1beta/models" } else { "/v1/models" };
            let message = format!("the model `{model}` does not exist here: GET {listed} lists the models served");
            return (shared.failed(error(format, Problem::NotFound, message, None)), None);
        }
        Err(Unrouted::OtherDialect { provider }) => {
            let message = format!(
                "the model `{model}` is served by {provider}, which speaks another API: call it through that API, \
                 or add a route to it in Settings → Local API"
            );
            return (shared.failed(error(format, Problem::BadRequest, message, None)), None);
        }
    };
    let admitted = match shared.admit(caller, format, model, &route).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let claude = peek.claude_code_session();
    let session = named
        .or_else(|| Session::of_agent(&parts.headers, &peek, &claude))
        .unwrap_or_else(|| Session::started(&peek, format))
        .id(&shared.sessions);
    // A Claude Code subagent goes where a route for `subagent:MODEL` sends it, on a session of
    // its own; the main route is its way back when that pool has no key.
    let (route, session, main) = match subagent_route(&shared, &parts.headers, format, model) {
        Some((agent, sub)) => {
            let own = keypool::SessionId::new(format!("{}#{agent}", session.as_str()));
            let back = MainRoute { renamed: *route.model != *model, route, session };
            (sub, own, Some(back))
        }
        None => (route, session, None),
    };
    let bound = (address.format == WireFormat::OpenAiResponses).then(|| peek.bound_state()).flatten();
    let renamed = *route.model != *model;
    drop(peek);
    let upstream = Upstream { route, address, session, body: bytes, renamed, admitted, bound, hop, main };
    pass(shared, format, in_flight, &parts.headers, upstream).await
}

/// Refuses a model name longer than [`MAX_MODEL_BYTES`]: it reaches the pool's budgets and the
/// ledger.
fn bounded(model: &str) -> Result<(), String> {
    match model.len() > MAX_MODEL_BYTES {
        true => Err(format!("the model name is longer than {MAX_MODEL_BYTES} bytes")),
        false => Ok(()),
    }
}

/// A request on its way upstream, routed and read.
struct Upstream {
    route: Route,
    /// Where the client asked: its format, operation, delivery.
    address: Address,
    session: keypool::SessionId,
    /// The body as the client sent it.
    body: bytes::Bytes,
    /// The route names the model otherwise: the body goes with the route's.
    renamed: bool,
    /// Who sent it, and what its limits hold for it until the answer has gone.
    admitted: Admitted,
    /// State it carries that lives in one organisation (a Responses request's stored response
    /// or encrypted reasoning), if any.
    bound: Option<keypool_llm::BoundState>,
    /// The hop marks it goes on with (see [`keypool_llm::hop`]).
    hop: keypool_llm::hop::HopHeader,
    /// A subagent's main route, taken when its own pool has no key.
    main: Option<MainRoute>,
}

/// Where a subagent's request goes when its own route's pool has no key: the main agent's.
struct MainRoute {
    route: Route,
    /// The route names the model otherwise than the client.
    renamed: bool,
    session: keypool::SessionId,
}

/// The header Claude Code sends on a subagent's requests (2.1: its agent's id).
const SUBAGENT_HEADER: &str = "x-claude-code-agent-id";

/// The route a user wrote for `subagent:MODEL`, when the request is a subagent's: its agent's
/// id and the route. Routed as written (no provider is asked what it lists for such a name).
fn subagent_route(shared: &Shared, headers: &HeaderMap, format: WireFormat, model: &str) -> Option<(String, Route)> {
    let agent = headers.get(SUBAGENT_HEADER)?.to_str().ok().filter(|id| !id.is_empty() && id.len() <= 128)?;
    let route = shared.routes.route(format.dialect(), &format!("subagent:{model}")).ok()?;
    Some((agent.to_owned(), route))
}

impl Shared {
    /// Whether `caller` may send a request for `model` (as asked) routed by `route`: the owner
    /// always may; a member within its limits. `Err`: the refusal, in `format`.
    async fn admit(
        &self,
        caller: Caller,
        format: WireFormat,
        model: &str,
        route: &Route,
    ) -> Result<Admitted, (Response, Option<Noted>)> {
        let (Caller::Member(member), Some(members)) = (caller, &self.members) else {
            return Ok(Admitted { member: None, _pass: None });
        };
        let asked = Asked { model, provider: &route.endpoint.name, routed: &route.model };
        match members.admit(&member, asked).await {
            Ok(pass) => Ok(Admitted { member: Some(member), _pass: Some(pass) }),
            Err(refused) => Err((self.failed(refused.response(format)), Some(Noted::of(Some(member), None)))),
        }
    }
}

/// Forwards a routed request through the pool and passes the answer back as it comes, or says
/// in `format` why no key could answer.
async fn pass(
    shared: Arc<Shared>,
    format: WireFormat,
    in_flight: InFlight,
    headers: &HeaderMap,
    upstream: Upstream,
) -> (Response, Option<Noted>) {
    let Upstream { route, address, session, body, renamed, admitted, bound, hop, main } = upstream;
    let original = body.clone();
    let member = admitted.member.clone();
    if crate::loops::points_at_itself(&route.endpoint.base_url, &shared.own) {
        let message = format!(
            "the provider {} points at this Keypool ({}): its requests would come back here. Set its base URL to \
             the service's own address",
            route.endpoint.name, route.endpoint.base_url
        );
        return (shared.failed(error(format, Problem::Loop, message, None)), Some(Noted::of(member, None)));
    }

    // Named in a failure as a chat names it: the provider, and where it was asked.
    let mut asked = route.endpoint.clone();
    let provider = route.endpoint.kind.row().wire;
    // A provider of another dialect is asked in its own words; its answer comes back in the
    // client's. A Responses request to a provider without that API goes to its chat completions;
    // one to a provider not known to lack it goes as it is, and is asked again that way after a
    // 404.
    let chat_only = shared.without_responses.knows(&route.endpoint);
    let responses = address.format == WireFormat::OpenAiResponses && address.operation == Operation::Reply;
    let to_chat = responses && provider == WireFormat::OpenAiChat;
    let fallback = (to_chat && !chat_only).then(|| (route.clone(), body.clone()));
    let translated = if provider.dialect() == format.dialect() && !(to_chat && chat_only) {
        None
    } else {
        // Read once from the body as it came, and written once for the provider.
        let id = shared.answer_ids.next(shared.completions.clock().now());
        match translate(address, provider, &route.endpoint.name, &route.model, &body, id) {
            Ok(translated) => Some(translated),
            Err(refused) => {
                let refused = shared.failed(error(format, Problem::BadRequest, refused.to_string(), None));
                return (refused, Some(Noted::of(member, None)));
            }
        }
    };
    // As it came, its model the route's when it names another.
    let body = match (&translated, renamed) {
        (None, true) => match with_model(&body, &route.model) {
            Some(renamed) => bytes::Bytes::from(renamed),
            None => {
                let refused = shared.failed(error(format, Problem::BadRequest, "the body is not a JSON object", None));
                return (refused, Some(Noted::of(member, None)));
            }
        },
        _ => body,
    };
    let source = shared.source(headers);
    let request = |route: Route, translated: Option<Translated>, session, source| {
        let (address, body, answer_in) = match translated {
            Some(Translated { body: written, address, answer_in }) => (address, written, Some(answer_in)),
            None => (address, body.clone(), None),
        };
        ForwardRequest {
            endpoint: route.endpoint,
            address,
            model: route.model,
            session,
            body,
            headers: passed_headers(headers, &PASSED_REQUEST_HEADERS),
            hop: Some(hop.clone()),
            source,
            member: member.clone(),
            // A translated request carries no such state (it is refused or left out).
            bound: if answer_in.is_none() { bound.clone() } else { None },
            answer_in,
        }
    };
    let names = fallback.as_ref().map(|_| (session.clone(), source.clone()));
    let now = shared.completions.clock().now();
    let calling = Instant::now();
    let (mut forwarded, mut queued) =
        shared.completions.forward_timed(request(route, translated, session, source)).await;
    let not_found = matches!(&forwarded, Ok(answer) if answer.status == 404);
    if let (Some((route, original)), Some((session, source)), true) = (fallback, names, not_found) {
        let chat = WireFormat::OpenAiChat;
        let id = shared.answer_ids.next(shared.completions.clock().now());
        if let Ok(translated) = translate(address, chat, &route.endpoint.name, &route.model, &original, id) {
            let endpoint = route.endpoint.clone();
            let (again, waited) =
                shared.completions.forward_timed(request(route, Some(translated), session, source)).await;
            if again.as_ref().is_ok_and(|a| a.status < 400) {
                shared.without_responses.learn(&endpoint);
            }
            (forwarded, queued) = (again, waited);
        }
    }
    let no_key = matches!(&forwarded, Err(CompletionError::NoAvailableKey(_)));
    if let (true, Some(main)) = (no_key, main) {
        tracing::info!(provider = %asked.name, back = %main.route.endpoint.name, "a subagent's pool has no key: back to the main route");
        let source = shared.source(headers);
        let provider = main.route.endpoint.kind.row().wire;
        let written = if provider.dialect() == format.dialect() {
            let body = if main.renamed {
                with_model(&original, &main.route.model).map(bytes::Bytes::from)
            } else {
                Some(original)
            };
            body.map(|body| (None, body))
        } else {
            let id = shared.answer_ids.next(shared.completions.clock().now());
            translate(address, provider, &main.route.endpoint.name, &main.route.model, &original, id)
                .ok()
                .map(|translated| (Some(translated), bytes::Bytes::new()))
        };
        if let Some((translated, body)) = written {
            asked = main.route.endpoint.clone();
            let mut again = request(main.route, translated, main.session, source);
            if again.answer_in.is_none() {
                again.body = body;
            }
            (forwarded, queued) = shared.completions.forward_timed(again).await;
        }
    }
    let answer = match forwarded {
        Ok(forwarded) => {
            if forwarded.status >= 400 {
                shared.count_failure();
            }
            let body = match forwarded.body {
                ForwardedBody::Whole(bytes) => Body::from(bytes),
                ForwardedBody::Stream(stream) => {
                    let events = address.delivery == Delivery::Events;
                    Body::from_stream(UntilCut::new(stream, &shared.drain, format, events).map(move |chunk| {
                        let _counted = (&in_flight, &admitted);
                        chunk
                    }))
                }
            };
            let mut response = Response::builder().status(forwarded.status);
            for (name, value) in forwarded.headers {
                response = response.header(name, value);
            }
            response.body(body).unwrap_or_else(|_| {
                error(format, Problem::Internal, "the provider's answer could not be passed on", None)
            })
        }
        Err(failure) => shared.failed(upstream_failure(format, &failure, now, &asked)),
    };
    (answer, Some(Noted::of(member, Some((calling, queued)))))
}

/// A request no key could answer, in the client's format: when keys are only resting, a 429
/// with when to come back, so SDKs retry on their own. A provider that cannot be reached is
/// named with its address, as the app's chat names it (a local server is most often not
/// running).
fn upstream_failure(
    format: WireFormat,
    failure: &CompletionError,
    now: keypool::Timestamp,
    endpoint: &keypool_llm::ProviderEndpoint,
) -> Response {
    match failure {
        CompletionError::NoAvailableKey(no_key) => match &no_key.why {
            NoKeyReason::Empty | NoKeyReason::ProviderKeyUnresolved { .. } => error(
                format,
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
                error(format, Problem::RateLimited, message, retry.or(Some(1)))
            }
        },
        CompletionError::Network(kind) => error(format, Problem::Upstream, unreachable(endpoint, *kind), None),
        CompletionError::Provider(refusal) => error(
            format,
            Problem::Upstream,
            format!("the provider answered HTTP {}: {}", refusal.status, refusal.message),
            None,
        ),
        other => error(format, Problem::Internal, other.to_string(), None),
    }
}

/// "could not reach Local at http://127.0.0.1:11434/v1 (connection failed): is its server
/// running?": the provider by name, where it was asked, what broke, and for a server on this
/// machine or network what most often is the matter.
fn unreachable(endpoint: &keypool_llm::ProviderEndpoint, kind: keypool_llm::Breakage) -> String {
    let hint = if endpoint.is_local() { ": is its server running?" } else { "" };
    format!("could not reach {} at {} ({kind}){hint}", endpoint.name, endpoint.base_url)
}

impl Noted {
    /// What the observer is told of an answer to `member` (none: the owner), and of its
    /// upstream attempts when the request went up, `forwarded` at `calling` and waited `queued`.
    pub(crate) fn of(member: Option<Arc<str>>, forwarded: Option<(Instant, Queued)>) -> Noted {
        let first_sent = forwarded.and_then(|(calling, queued)| Some(calling + queued.first_sent?));
        let waited = forwarded.is_some_and(|(_, queued)| queued.waited);
        Noted { member, first_sent, waited }
    }
}

#[cfg(test)]
mod tests {
    /// The size of the future an `async fn` of four arguments returns, without calling it.
    fn future_size<A, B, C, D, R>(_: fn(A, B, C, D) -> R) -> usize {
        std::mem::size_of::<R>()
    }

    #[test]
    fn a_relayed_request_s_future_stays_small() {
        // Every future that awaits another inline holds (and moves) a copy of its size: before
        // the forward and each attempt were boxed, this one was 12 KiB and the copies were 7% of
        // the CPU a relayed request costs. It is 4 KiB now.
        let size = future_size(super::relay_noted);
        assert!(size <= 6 * 1024, "relay_noted's future is {size} bytes");
    }
}
