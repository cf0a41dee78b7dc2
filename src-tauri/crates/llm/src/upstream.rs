//! The local API's way upstream: a client's request sent on as it came, and the answer read back,
//! on whichever client carries it.
//!
//! A provider over `https` is reached through reqwest ([`crate::http`]: the proxy the user chose,
//! TLS, HTTP/2). A server over plain `http` (on this machine or its network: Ollama, vLLM, LM
//! Studio, a gateway) is reached through hyper's own client, under the rules reqwest's plain-http
//! client keeps: no proxy, a name resolved to addresses of this machine or its network only
//! ([`crate::net::local_addresses`]), redirects followed within the origin only. Where the
//! upstream answers in microseconds, the client is most of what relaying costs: under load a bare
//! relay spent 14.3 µs of CPU per request on hyper's client and 20.9 µs on reqwest's, whose layers
//! (its URL type, redirect and retry wrappers, a copy of the headers per request) run for every
//! request.
//!
//! Invariant: a request follows a redirect only to the same scheme, host and port, keeping its
//! headers (the key among them); any other redirect is the answer, which the relay refuses.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::error::Breakage;
use crate::net::{breakage, local_addresses, CONNECT_TIMEOUT, MAX_REDIRECTS};

/// The client for plain-http upstreams.
pub(crate) type PlainClient = Client<HttpConnector<LocalOnly>, Full<Bytes>>;

/// A new plain-http client; its connections are driven by tasks of the runtime that opens them.
pub(crate) fn plain_client() -> PlainClient {
    let mut connector = HttpConnector::new_with_resolver(LocalOnly);
    connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
    // Streams are many small writes: see the gateway's listener.
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).pool_timer(TokioTimer::new()).build(connector)
}

/// The client a relayed request goes out on.
pub(crate) enum Sender {
    Plain(std::sync::Arc<PlainClient>),
    Reqwest(reqwest::Client),
}

/// An upstream answer: its head, and its body still to read.
pub(crate) enum Response {
    Reqwest(reqwest::Response),
    Plain(hyper::Response<Incoming>),
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Response::Reqwest(response) => response.status(),
            Response::Plain(response) => response.status(),
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Response::Reqwest(response) => response.headers(),
            Response::Plain(response) => response.headers(),
        }
    }

    pub(crate) fn into_body(self) -> Body {
        match self {
            Response::Reqwest(response) => Body::Reqwest(response),
            Response::Plain(response) => Body::Plain(response.into_body()),
        }
    }
}

/// An answer's body, read a piece at a time.
pub(crate) enum Body {
    Reqwest(reqwest::Response),
    Plain(Incoming),
}

/// Where an answer's body comes from, a piece at a time: `None` at its end.
pub(crate) trait Chunks: Send {
    fn next_chunk(&mut self) -> impl Future<Output = Option<Result<Bytes, Breakage>>> + Send;
}

impl Chunks for reqwest::Response {
    async fn next_chunk(&mut self) -> Option<Result<Bytes, Breakage>> {
        self.chunk().await.map_err(|error| breakage(&error)).transpose()
    }
}

impl Chunks for Body {
    async fn next_chunk(&mut self) -> Option<Result<Bytes, Breakage>> {
        match self {
            Body::Reqwest(response) => response.next_chunk().await,
            Body::Plain(body) => loop {
                match body.frame().await? {
                    // Trailers carry nothing the relay passes on.
                    Ok(frame) => match frame.into_data() {
                        Ok(data) => return Some(Ok(data)),
                        Err(_) => continue,
                    },
                    Err(_) => return Some(Err(Breakage::Body)),
                }
            },
        }
    }
}

impl Sender {
    /// Sends `body` to `url` with `headers` (each hop's, from `headers()`), following redirects
    /// within the origin.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: impl Fn() -> HeaderMap,
        body: Bytes,
    ) -> Result<Response, Breakage> {
        match self {
            Sender::Reqwest(client) => {
                // reqwest's own policy follows redirects within the origin (`crate::http`).
                let response = client.post(url).headers(headers()).body(body).send().await;
                response.map(Response::Reqwest).map_err(|error| breakage(&error))
            }
            Sender::Plain(client) => post_plain(client, url, headers, body).await,
        }
    }
}

async fn post_plain(
    client: &PlainClient,
    url: &str,
    headers: impl Fn() -> HeaderMap,
    body: Bytes,
) -> Result<Response, Breakage> {
    let mut url = std::borrow::Cow::Borrowed(url);
    let (mut method, mut body) = (Method::POST, Some(body));
    for _ in 0..=MAX_REDIRECTS {
        let uri: Uri = url.parse().map_err(|_| Breakage::Request)?;
        let mut request = Request::builder()
            .method(method.clone())
            .uri(uri)
            .body(Full::new(body.clone().unwrap_or_default()))
            .map_err(|_| Breakage::Request)?;
        *request.headers_mut() = headers();
        if body.is_none() {
            request.headers_mut().remove(CONTENT_TYPE);
            request.headers_mut().remove(CONTENT_LENGTH);
        }
        let response = client.request(request).await.map_err(|error| plain_breakage(&error))?;
        let Some(next) = same_origin_redirect(&url, &response) else { return Ok(Response::Plain(response)) };
        // As browsers and reqwest do: 303, and 301/302 after a POST, ask again with a GET and no
        // body; 307 and 308 repeat the request as it was.
        if matches!(response.status(), StatusCode::SEE_OTHER)
            || (matches!(response.status(), StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && method == Method::POST)
        {
            (method, body) = (Method::GET, None);
        }
        url = std::borrow::Cow::Owned(next);
    }
    tracing::info!("a plain-http upstream redirected more than {MAX_REDIRECTS} times");
    Err(Breakage::Request)
}

/// Where `response` (an answer to `url`) redirects to, when that is within `url`'s origin.
fn same_origin_redirect(url: &str, response: &hyper::Response<Incoming>) -> Option<String> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let from = url::Url::parse(url).ok()?;
    let to = from.join(response.headers().get(LOCATION)?.to_str().ok()?).ok()?;
    (to.origin() == from.origin()).then(|| to.into())
}

/// A request hyper's client could not complete, as the relay tells it.
fn plain_breakage(error: &hyper_util::client::legacy::Error) -> Breakage {
    let timed_out = std::iter::successors(std::error::Error::source(error), |e| e.source())
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut));
    if timed_out {
        Breakage::Timeout
    } else if error.is_connect() {
        Breakage::Connect
    } else {
        Breakage::Request
    }
}

/// Resolves a name only to loopback and private addresses, as reqwest's plain-http client does.
#[derive(Clone, Copy)]
pub(crate) struct LocalOnly;

impl tower_service::Service<Name> for LocalOnly {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        Box::pin(async move { Ok(local_addresses(name.as_str()).await?.into_iter()) })
    }
}
