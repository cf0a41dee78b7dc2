//! The local API's way upstream: a client's request sent on as it came, and the answer read back,
//! on whichever client carries it.
//!
//! A provider over `https` is reached through reqwest (the `http` module: the proxy the user chose,
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
use std::sync::Arc;

use bytes::Bytes;
use hyper::header::{HeaderMap, LOCATION};
use hyper::{Method, StatusCode};

use crate::error::Breakage;
use crate::net::{breakage, MAX_REDIRECTS};

mod head;
mod plain;
#[cfg(test)]
mod tests;

pub(crate) use head::Outgoing;
use head::{Bodiless, HeadLines, Target};
pub(crate) use plain::{plain_client, PlainBody, PlainClient, PlainResponse};

/// The client a relayed request goes out on.
pub(crate) enum Sender {
    Plain(Arc<PlainClient>),
    Reqwest(reqwest::Client),
}

/// An upstream answer: its head, and its body still to read.
pub(crate) enum Response {
    Reqwest(reqwest::Response),
    Plain(PlainResponse),
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Response::Reqwest(response) => response.status(),
            Response::Plain(response) => response.status,
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Response::Reqwest(response) => response.headers(),
            Response::Plain(response) => &response.headers,
        }
    }

    pub(crate) fn into_body(self) -> Body {
        match self {
            Response::Reqwest(response) => Body::Reqwest(response),
            Response::Plain(response) => Body::Plain(response.body),
        }
    }
}

/// An answer's body, read a piece at a time.
pub(crate) enum Body {
    Reqwest(reqwest::Response),
    Plain(PlainBody),
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
            Body::Plain(body) => body.next().await,
        }
    }
}

impl Sender {
    /// Sends `body` to `url` with `headers`, following redirects within the origin: on a plain
    /// connection the headers are written into the request's head as they are (no map is built).
    /// `path` is under the `base` URL (joined by one slash).
    pub(crate) async fn post(
        &self,
        base: &str,
        path: &str,
        headers: &Outgoing<'_>,
        body: Bytes,
    ) -> Result<Response, Breakage> {
        match self {
            Sender::Reqwest(client) => {
                let url = crate::wire::join(base, path);
                // reqwest's own policy follows redirects within the origin (the `http` module).
                let response = client.post(url).headers(headers.to_map()).body(body).send().await;
                response.map(Response::Reqwest).map_err(|error| breakage(&error))
            }
            Sender::Plain(client) => {
                let target = Target::under(base, path).ok_or(Breakage::Request)?;
                post_plain_to(client, target, headers, body).await
            }
        }
    }
}

#[cfg(test)]
async fn post_plain(
    client: &Arc<PlainClient>,
    url: &str,
    headers: &dyn HeadLines,
    body: Bytes,
) -> Result<Response, Breakage> {
    post_plain_to(client, Target::of(url).ok_or(Breakage::Request)?, headers, body).await
}

/// Sends `body` to `first`, and on to where it redirects within its origin.
async fn post_plain_to(
    client: &Arc<PlainClient>,
    first: Target<'_>,
    headers: &dyn HeadLines,
    body: Bytes,
) -> Result<Response, Breakage> {
    let mut url: Option<String> = None;
    let (mut method, mut body) = (Method::POST, Some(body));
    for _ in 0..=MAX_REDIRECTS {
        let target = match &url {
            Some(url) => Target::of(url).ok_or(Breakage::Request)?,
            None => first,
        };
        let bodiless = Bodiless(headers);
        let sent: &dyn HeadLines = if body.is_none() { &bodiless } else { headers };
        let response = client.send(&method, &target, sent, body.as_ref().unwrap_or(&Bytes::new())).await?;
        let redirected = matches!(response.status.as_u16(), 301 | 302 | 303 | 307 | 308);
        let next =
            redirected.then(|| same_origin_redirect(&target.url(), response.status, &response.headers)).flatten();
        let Some(next) = next else {
            return Ok(Response::Plain(response));
        };
        // As browsers and reqwest do: 303, and 301/302 after a POST, ask again with a GET and no
        // body; 307 and 308 repeat the request as it was.
        if matches!(response.status, StatusCode::SEE_OTHER)
            || (matches!(response.status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND) && method == Method::POST)
        {
            (method, body) = (Method::GET, None);
        }
        url = Some(next);
    }
    tracing::info!("a plain-http upstream redirected more than {MAX_REDIRECTS} times");
    Err(Breakage::Request)
}

/// Where an answer to `url` with `status` and `headers` redirects to, when that is within
/// `url`'s origin.
fn same_origin_redirect(url: &str, status: StatusCode, headers: &HeaderMap) -> Option<String> {
    if !matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let from = url::Url::parse(url).ok()?;
    let to = from.join(headers.get(LOCATION)?.to_str().ok()?).ok()?;
    (to.origin() == from.origin()).then(|| to.into())
}
