//! The span of each request to the API (see [`keypool_llm::SPAN_TARGET`]): what a server exports
//! as one trace per request, its attempts' spans (the failover loop's) its children. It holds
//! the method, the path (never the query, where a Gemini client may put its token), the dialect,
//! the member's name, the client's address and the status: never a key, a token or what was
//! asked. It ends when the answer's last byte has gone (a stream's included).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::Method;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tracing::field::Empty;
use tracing::Span;

/// A request's span; disabled (and free) when nothing exports traces.
pub(crate) fn request_span(method: &Method, path: &str) -> Span {
    tracing::trace_span!(
        target: keypool_llm::SPAN_TARGET,
        "request",
        otel.name = %route_of(method, path),
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = method.as_str(),
        url.path = path,
        http.response.status_code = Empty,
        keypool.dialect = Empty,
        keypool.member = Empty,
        client.address = Empty,
    )
}

/// `METHOD /path`, a Gemini model named in the path made `{model}` (one name for every model's
/// requests, as OpenTelemetry wants a span's name).
fn route_of(method: &Method, path: &str) -> String {
    let route = match path.split_once("/models/") {
        Some((base, rest)) => match rest.split_once(':') {
            Some((_, action)) => format!("{base}/models/{{model}}:{action}"),
            None => format!("{base}/models/{{model}}"),
        },
        None => path.to_owned(),
    };
    format!("{method} {route}")
}

/// Records what is known once `response` is made, and keeps the span open until its body has
/// gone.
pub(crate) fn answered(
    span: Span,
    response: Response,
    dialect: Option<&'static str>,
    member: Option<&str>,
) -> Response {
    if span.is_disabled() {
        return response;
    }
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    span.record("keypool.dialect", dialect);
    span.record("keypool.member", member);
    if let Ok(client) = crate::guard::PEER.try_with(|client| *client) {
        span.record("client.address", tracing::field::display(client));
    }
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
    response.map(|body| Body::new(Traced { body, _span: span }))
}

/// An answer's body holding its request's span until it ends.
struct Traced {
    body: Body,
    _span: Span,
}

impl HttpBody for Traced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_named_by_its_route_not_by_the_model_in_it() {
        assert_eq!(route_of(&Method::POST, "/v1/chat/completions"), "POST /v1/chat/completions");
        assert_eq!(
            route_of(&Method::POST, "/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            "POST /v1beta/models/{model}:streamGenerateContent"
        );
        assert_eq!(route_of(&Method::GET, "/v1beta/models/gemini-2.5-pro"), "GET /v1beta/models/{model}");
    }
}
