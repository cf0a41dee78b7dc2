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
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, HOST, LOCATION, TRANSFER_ENCODING,
};
use hyper::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::Breakage;
use crate::net::{breakage, local_addresses, CONNECT_TIMEOUT, MAX_REDIRECTS};

/// How long a kept-alive connection may wait unused for its next request (hyper's client's own).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The most kept-alive connections one client keeps unused; beyond, the oldest is closed.
const MAX_IDLE: usize = 1024;

/// The largest answer head read (hyper's client's own bound), and the most headers in it.
const MAX_HEAD: usize = 8192 + 4096 * 100;
const MAX_HEADERS: usize = 100;

/// The client for plain-http upstreams: HTTP/1.1 over connections kept alive per origin, each
/// written and read by the task whose request it carries, when that task runs: no task, channel
/// or shared pool of its own per connection (hyper's client drives each connection from a task
/// of its own, through a channel, and keeps them in a locked pool: under load that was most of
/// what the client cost). Each worker of the local API has one ([`crate::CompletionService::with_own_connections`]).
pub(crate) struct PlainClient {
    idle: Mutex<Vec<Idle>>,
    /// The origins this client has kept connections to, each made once (a kept connection names
    /// its origin).
    origins: Mutex<Vec<Arc<str>>>,
    /// Whether a task closes connections left unused past [`IDLE_TIMEOUT`].
    swept: std::sync::atomic::AtomicBool,
}

/// A connection waiting for its next request.
struct Idle {
    origin: Arc<str>,
    connection: Connection,
    since: Instant,
}

/// One connection to an origin, and what was read from it and not yet used.
struct Connection {
    stream: TcpStream,
    read: BytesMut,
}

/// A new plain-http client.
pub(crate) fn plain_client() -> PlainClient {
    PlainClient {
        idle: Mutex::new(Vec::new()),
        origins: Mutex::new(Vec::new()),
        swept: std::sync::atomic::AtomicBool::new(false),
    }
}

impl PlainClient {
    /// A kept-alive connection to `origin` that is still open, the most recently used first.
    fn take(&self, origin: &str) -> Option<Connection> {
        loop {
            let mut connection = {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                let at = idle.iter().rposition(|idle| &*idle.origin == origin)?;
                let idle = idle.remove(at);
                if idle.since.elapsed() >= IDLE_TIMEOUT {
                    continue;
                }
                idle.connection
            };
            if connection.still_open() {
                return Some(connection);
            }
        }
    }

    /// `origin`, shared with the connections kept to it before.
    fn origin(&self, origin: &str) -> Arc<str> {
        let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = origins.iter().find(|known| ***known == *origin) {
            return known.clone();
        }
        let made: Arc<str> = Arc::from(origin);
        if origins.len() >= MAX_IDLE {
            origins.clear();
        }
        origins.push(made.clone());
        made
    }

    /// Keeps `connection` to `origin` for a next request.
    fn keep(self: &Arc<Self>, origin: Arc<str>, connection: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let stale = idle.iter().take_while(|idle| idle.since.elapsed() >= IDLE_TIMEOUT).count();
        idle.drain(..stale);
        if idle.len() >= MAX_IDLE {
            idle.remove(0);
        }
        idle.push(Idle { origin, connection, since: Instant::now() });
        drop(idle);
        if !self.swept.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.sweep();
        }
    }

    /// Closes, every little while, the connections left unused past [`IDLE_TIMEOUT`], for as long
    /// as the client is in use: on the runtime that first kept one.
    fn sweep(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.swept.store(false, std::sync::atomic::Ordering::Relaxed);
            return;
        };
        let client: Weak<PlainClient> = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(IDLE_TIMEOUT / 3).await;
                let Some(client) = client.upgrade() else { return };
                let mut idle = client.idle.lock().unwrap_or_else(|e| e.into_inner());
                idle.retain(|idle| idle.since.elapsed() < IDLE_TIMEOUT);
            }
        });
    }

    /// Sends `method` to `uri` with `headers` and `body` on a kept-alive connection to its origin,
    /// or a new one; the answer's head, its body still to read.
    async fn send(
        self: &Arc<Self>,
        method: &Method,
        target: &Target<'_>,
        headers: &dyn HeadLines,
        body: &Bytes,
    ) -> Result<PlainResponse, Breakage> {
        let Target { host, port, origin, .. } = *target;
        let request = Request::of(method, target, headers, body);
        let connection = match self.take(origin) {
            Some(mut kept) => match kept.write(&request, body).await {
                Ok(()) => kept,
                // Closed as it was taken, before any of the request went: it goes on a new one.
                Err(_) => Connection::open(host, port).await?.sent(&request, body).await?,
            },
            None => Connection::open(host, port).await?.sent(&request, body).await?,
        };
        let (status, headers, framing, keep_alive, connection) = connection.answer_head().await?;
        let body = PlainBody {
            connection: Some(connection),
            framing,
            keep: keep_alive.then(|| (self.clone(), self.origin(origin))),
        };
        Ok(PlainResponse { status, headers, body })
    }
}

impl Connection {
    /// A new connection to `host`:`port`: an address literal as it is, a name resolved to this
    /// machine's or its network's addresses only, each tried in turn within [`CONNECT_TIMEOUT`].
    async fn open(host: &str, port: u16) -> Result<Connection, Breakage> {
        let literal = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok();
        let connect = async {
            let addresses = match literal {
                Some(ip) => vec![SocketAddr::new(ip, port)],
                None => local_addresses(host)
                    .await
                    .map_err(|_| Breakage::Connect)?
                    .into_iter()
                    .map(|address| SocketAddr::new(address.ip(), port))
                    .collect(),
            };
            for address in addresses {
                if let Ok(stream) = TcpStream::connect(address).await {
                    return Ok(stream);
                }
            }
            Err(Breakage::Connect)
        };
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, connect).await.map_err(|_| Breakage::Timeout)??;
        // Streams are many small writes: see the gateway's listener.
        let _ = stream.set_nodelay(true);
        Ok(Connection { stream, read: BytesMut::with_capacity(8192) })
    }

    /// Whether a kept-alive connection is still open: the other end has neither closed it nor
    /// sent anything unasked. Only a connection the runtime saw become readable is read.
    fn still_open(&mut self) -> bool {
        if !self.read.is_empty() {
            return false;
        }
        let waker = futures_util::task::noop_waker();
        match self.stream.poll_read_ready(&mut Context::from_waker(&waker)) {
            Poll::Pending => true,
            Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(())) => {
                let mut probe = [0u8; 1];
                matches!(self.stream.try_read(&mut probe), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
            }
        }
    }

    /// Writes `request`, whose body is `body`.
    async fn write(&mut self, request: &Request, body: &Bytes) -> std::io::Result<()> {
        self.stream.write_all(&request.written).await?;
        if !request.whole {
            self.stream.write_all(body).await?;
        }
        Ok(())
    }

    /// This connection with `request` written on it.
    async fn sent(mut self, request: &Request, body: &Bytes) -> Result<Connection, Breakage> {
        self.write(request, body).await.map_err(|error| io_breakage(&error))?;
        Ok(self)
    }

    /// Reads the head of the answer to the request written.
    async fn answer_head(mut self) -> Result<(StatusCode, HeaderMap, Framing, bool, Connection), Breakage> {
        loop {
            match Head::read(&mut self.read)? {
                // An interim answer (100 Continue): the answer follows it.
                Some(head) if (100..200).contains(&head.status.as_u16()) => {
                    if head.status == StatusCode::SWITCHING_PROTOCOLS {
                        return Err(Breakage::Request);
                    }
                }
                Some(head) => return Ok((head.status, head.headers, head.framing, head.keep_alive, self)),
                None if self.read.len() >= MAX_HEAD => return Err(Breakage::Request),
                None => {
                    if self.fill().await.map_err(|error| io_breakage(&error))? == 0 {
                        return Err(Breakage::Request);
                    }
                }
            }
        }
    }

    /// Reads what has come into the buffer: how many bytes (0 at the end of the stream).
    async fn fill(&mut self) -> std::io::Result<usize> {
        if self.read.capacity() - self.read.len() < 4096 {
            self.read.reserve(8192);
        }
        self.stream.read_buf(&mut self.read).await
    }
}

/// An answer's head as read.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
    framing: Framing,
    keep_alive: bool,
}

/// Where a header's name and value are in the head read: byte ranges, as (start, end).
#[derive(Clone, Copy, Default)]
struct HeaderSpan {
    name: (usize, usize),
    value: (usize, usize),
}

impl Head {
    /// The head at the start of `read`, taken out of it once it has all come; `None` until then.
    fn read(read: &mut BytesMut) -> Result<Option<Head>, Breakage> {
        let mut spans = [HeaderSpan::default(); MAX_HEADERS];
        let (code, version, count, length) = {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(read) {
                Ok(httparse::Status::Complete(length)) => {
                    // httparse's slices are of `read` (an empty one may be anywhere: it is none).
                    let start = read.as_ptr() as usize;
                    let at = |part: &[u8]| match part.as_ptr() as usize {
                        _ if part.is_empty() => (0, 0),
                        at => (at - start, at - start + part.len()),
                    };
                    for (span, header) in spans.iter_mut().zip(response.headers.iter()) {
                        *span = HeaderSpan { name: at(header.name.as_bytes()), value: at(header.value) };
                    }
                    (response.code, response.version, response.headers.len(), length)
                }
                Ok(httparse::Status::Partial) => return Ok(None),
                Err(_) => return Err(Breakage::Request),
            }
        };
        // The header values are the read buffer's own bytes, not copies of them.
        Head::of(code, version, &spans[..count], &read.split_to(length).freeze()).map(Some)
    }

    /// The head `head`, as httparse read it: its status `code`, its HTTP/1 minor `version`, and
    /// where its headers are. A header's value is a slice of `head`, not a copy.
    fn of(code: Option<u16>, version: Option<u8>, spans: &[HeaderSpan], head: &Bytes) -> Result<Head, Breakage> {
        let status = code.and_then(|code| StatusCode::from_u16(code).ok()).ok_or(Breakage::Request)?;
        let mut headers = HeaderMap::with_capacity(spans.len());
        for span in spans {
            let name = HeaderName::from_bytes(&head[span.name.0..span.name.1]).map_err(|_| Breakage::Request)?;
            let value = HeaderValue::from_maybe_shared(head.slice(span.value.0..span.value.1))
                .map_err(|_| Breakage::Request)?;
            headers.append(name, value);
        }
        let http11 = version == Some(1);
        // The comma-separated tokens of every `name` header, trimmed.
        let tokens = |name: HeaderName| {
            headers
                .get_all(name)
                .into_iter()
                .flat_map(|value| value.as_bytes().split(|&b| b == b','))
                .map(<[u8]>::trim_ascii)
        };
        let mut keep_alive = if http11 {
            !tokens(CONNECTION).any(|token| token.eq_ignore_ascii_case(b"close"))
        } else {
            tokens(CONNECTION).any(|token| token.eq_ignore_ascii_case(b"keep-alive"))
        };
        let framing = if matches!(status.as_u16(), 100..200 | 204 | 304) {
            Framing::Length(0)
        } else if headers.contains_key(TRANSFER_ENCODING) {
            // Chunked when it is the last coding; else the body runs to the connection's end.
            if tokens(TRANSFER_ENCODING).next_back().is_some_and(|coding| coding.eq_ignore_ascii_case(b"chunked")) {
                // A length beside it is ignored, and the connection not trusted again.
                keep_alive &= !headers.contains_key(CONTENT_LENGTH);
                Framing::Chunked(Chunk::Size)
            } else {
                keep_alive = false;
                Framing::ToEnd
            }
        } else if headers.contains_key(CONTENT_LENGTH) {
            let mut lengths = tokens(CONTENT_LENGTH)
                .map(|token| std::str::from_utf8(token).ok().and_then(|token| token.parse::<u64>().ok()));
            let length = lengths.next().flatten().ok_or(Breakage::Request)?;
            if lengths.any(|other| other != Some(length)) {
                return Err(Breakage::Request);
            }
            Framing::Length(length)
        } else {
            keep_alive = false;
            Framing::ToEnd
        };
        Ok(Head { status, headers, framing, keep_alive })
    }
}

/// How an answer's body is delimited, and how much of it is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// So many bytes are left.
    Length(u64),
    /// `Transfer-Encoding: chunked`, at this point of a chunk.
    Chunked(Chunk),
    /// Until the connection ends.
    ToEnd,
    /// It has all been read.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// A chunk's size line comes next.
    Size,
    /// So many bytes of a chunk's data are left.
    Data(u64),
    /// The line end after a chunk's data.
    DataEnd,
    /// The trailers after the last chunk, up to an empty line.
    Trailers,
}

/// The most of a body written in one piece with its head.
const ONE_WRITE: usize = 16 * 1024;

/// A request as it is written: its head, and its body after it when the body is at most
/// [`ONE_WRITE`] bytes (`whole`): one write for both, from one buffer. A larger body is written
/// on its own, after the head.
struct Request {
    written: Vec<u8>,
    whole: bool,
}

impl Request {
    /// `method` to `target` with `headers` and `body`.
    fn of(method: &Method, target: &Target<'_>, headers: &dyn HeadLines, body: &Bytes) -> Request {
        let whole = body.len() <= ONE_WRITE;
        let mut written = Vec::with_capacity(512 + if whole { body.len() } else { 0 });
        write_head(&mut written, method, target, headers, body.len());
        if whole {
            written.extend_from_slice(body);
        }
        Request { written, whole }
    }
}

/// Writes the head of a request into `head`: origin-form target, `Host`, `headers`, and the
/// body's `length`.
fn write_head(head: &mut Vec<u8>, method: &Method, target: &Target<'_>, headers: &dyn HeadLines, length: usize) {
    use std::io::Write;
    head.extend_from_slice(method.as_str().as_bytes());
    head.push(b' ');
    target.write_path(head);
    head.extend_from_slice(b" HTTP/1.1\r\n");
    if !headers.has_host() {
        head.extend_from_slice(b"host: ");
        head.extend_from_slice(target.host.as_bytes());
        if target.port != 80 {
            let _ = write!(head, ":{}", target.port);
        }
        head.extend_from_slice(b"\r\n");
    }
    headers.each(&mut |name, value| {
        if name.eq_ignore_ascii_case(b"content-length") || name.eq_ignore_ascii_case(b"transfer-encoding") {
            return;
        }
        head.extend_from_slice(name);
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    });
    // As hyper writes it: a length, but none for a GET or HEAD without a body.
    if length > 0 || !matches!(*method, Method::GET | Method::HEAD) {
        let _ = write!(head, "content-length: {length}\r\n");
    }
    head.extend_from_slice(b"\r\n");
}

/// A failed read or write, as the relay tells it.
fn io_breakage(error: &std::io::Error) -> Breakage {
    match error.kind() {
        std::io::ErrorKind::TimedOut => Breakage::Timeout,
        _ => Breakage::Request,
    }
}

/// A plain-http answer: its head, and its body still to read.
pub(crate) struct PlainResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: PlainBody,
}

/// A plain-http answer's body, read from its connection as it is asked for; the connection is
/// kept for a next request once the body has been read to its end (and closed if the body is
/// dropped before).
pub(crate) struct PlainBody {
    connection: Option<Connection>,
    framing: Framing,
    /// Where the connection goes back once the body is read, when it may be used again.
    keep: Option<(Arc<PlainClient>, Arc<str>)>,
}

impl PlainBody {
    /// The body's next piece; `None` at its end.
    async fn next(&mut self) -> Option<Result<Bytes, Breakage>> {
        loop {
            let connection = self.connection.as_mut()?;
            let read = &mut connection.read;
            match self.framing {
                Framing::Done => {
                    let connection = self.connection.take()?;
                    if let Some((client, origin)) = self.keep.take() {
                        if connection.read.is_empty() {
                            client.keep(origin, connection);
                        }
                    }
                    return None;
                }
                Framing::Length(0) => self.framing = Framing::Done,
                Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) if !read.is_empty() => {
                    let take = usize::try_from(left).unwrap_or(usize::MAX).min(read.len());
                    let piece = read.split_to(take).freeze();
                    let left = left - take as u64;
                    self.framing = match self.framing {
                        Framing::Length(_) => Framing::Length(left),
                        _ if left == 0 => Framing::Chunked(Chunk::DataEnd),
                        _ => Framing::Chunked(Chunk::Data(left)),
                    };
                    return Some(Ok(piece));
                }
                Framing::ToEnd if !read.is_empty() => return Some(Ok(read.split().freeze())),
                Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(read) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        read.advance(used);
                        self.framing = Framing::Chunked(if size == 0 { Chunk::Trailers } else { Chunk::Data(size) });
                        continue;
                    }
                    Ok(httparse::Status::Partial) if read.len() < MAX_HEAD => {}
                    _ => return self.broken(),
                },
                Framing::Chunked(Chunk::DataEnd) if read.len() >= 2 => {
                    if &read[..2] != b"\r\n" {
                        return self.broken();
                    }
                    read.advance(2);
                    self.framing = Framing::Chunked(Chunk::Size);
                    continue;
                }
                Framing::Chunked(Chunk::Trailers) => match read.windows(2).position(|end| end == b"\r\n") {
                    Some(0) => {
                        read.advance(2);
                        self.framing = Framing::Done;
                        continue;
                    }
                    // A trailer: nothing the relay passes on.
                    Some(line) => {
                        read.advance(line + 2);
                        continue;
                    }
                    None if read.len() < MAX_HEAD => {}
                    None => return self.broken(),
                },
                _ => {}
            }
            if self.framing == Framing::Done {
                continue;
            }
            // More is needed from the connection.
            let connection = self.connection.as_mut()?;
            match connection.fill().await {
                Ok(0) if self.framing == Framing::ToEnd => {
                    self.keep = None;
                    self.framing = Framing::Done;
                }
                Ok(0) | Err(_) => return self.broken(),
                Ok(_) => {}
            }
        }
    }

    /// The body broke off: the connection is closed.
    fn broken(&mut self) -> Option<Result<Bytes, Breakage>> {
        self.connection = None;
        self.keep = None;
        Some(Err(Breakage::Body))
    }
}

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
                // reqwest's own policy follows redirects within the origin (`crate::http`).
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

/// A relayed request's headers, as text: written straight into its head on a plain connection
/// (a header map was three allocations per request), made a map for reqwest.
pub(crate) struct Outgoing<'a> {
    /// Keypool's own, each left out when the client passed one of the same name.
    pub defaults: &'a [(&'static str, &'a str)],
    /// The key's header: its name, the prefix of its value, the key. A key that cannot be a
    /// header's value is left out (the provider refuses the request as one without a key).
    pub key: Option<(&'static str, &'static str, &'a str)>,
    /// The client's, as it sent them.
    pub passed: &'a [(HeaderName, HeaderValue)],
}

impl Outgoing<'_> {
    fn passes(&self, name: &str) -> bool {
        self.passed.iter().any(|(passed, _)| passed.as_str().eq_ignore_ascii_case(name))
    }

    /// Whether `value` can be a header's value as it is (what `HeaderValue::from_str` takes).
    fn valid(value: &str) -> bool {
        value.bytes().all(|b| b == b'\t' || (32..127).contains(&b))
    }

    /// The same headers as a map (the key's value marked sensitive).
    pub(crate) fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.defaults.len() + self.passed.len() + 1);
        for (name, value) in self.defaults {
            if let (false, Ok(value)) = (self.passes(name), HeaderValue::from_str(value)) {
                map.insert(HeaderName::from_static(name), value);
            }
        }
        if let Some((name, prefix, key)) = self.key {
            if let Ok(mut value) = HeaderValue::try_from(format!("{prefix}{key}")) {
                value.set_sensitive(true);
                map.insert(HeaderName::from_static(name), value);
            }
        }
        for (name, value) in self.passed {
            map.insert(name.clone(), value.clone());
        }
        map
    }
}

/// Header lines for a request's head: each name and value, in order.
trait HeadLines: Sync {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8]));
    fn has_host(&self) -> bool;
}

impl HeadLines for HeaderMap {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        for (name, value) in self {
            line(name.as_str().as_bytes(), value.as_bytes());
        }
    }

    fn has_host(&self) -> bool {
        self.contains_key(HOST)
    }
}

/// The headers of a hop that carries no body (a redirect answered with a GET): no type of one.
struct Bodiless<'a>(&'a dyn HeadLines);

impl HeadLines for Bodiless<'_> {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        self.0.each(&mut |name, value| {
            if !name.eq_ignore_ascii_case(b"content-type") {
                line(name, value);
            }
        });
    }

    fn has_host(&self) -> bool {
        self.0.has_host()
    }
}

impl HeadLines for Outgoing<'_> {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        for (name, value) in self.defaults {
            if !self.passes(name) && Self::valid(value) {
                line(name.as_bytes(), value.as_bytes());
            }
        }
        if let Some((name, prefix, key)) = self.key.filter(|(_, prefix, key)| Self::valid(prefix) && Self::valid(key)) {
            // Joined on the stack, not on the heap (a key longer than that is rare).
            let mut value = [0u8; 256];
            let length = prefix.len() + key.len();
            if length <= value.len() {
                value[..prefix.len()].copy_from_slice(prefix.as_bytes());
                value[prefix.len()..length].copy_from_slice(key.as_bytes());
                line(name.as_bytes(), &value[..length]);
            } else {
                line(name.as_bytes(), format!("{prefix}{key}").as_bytes());
            }
        }
        for (name, value) in self.passed {
            line(name.as_str().as_bytes(), value.as_bytes());
        }
    }

    fn has_host(&self) -> bool {
        self.passes("host")
    }
}

/// Where a plain-http request goes, read from its URL: the host, port and origin (`host:port` as
/// written), and the path with its query, in two pieces (a base URL's path and the path under
/// it: written joined by one slash, never joined in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target<'a> {
    host: &'a str,
    port: u16,
    origin: &'a str,
    path: &'a str,
    under: &'a str,
}

impl<'a> Target<'a> {
    /// `url`, an `http://` URL; `None` for any other, or one without a host.
    fn of(url: &'a str) -> Option<Target<'a>> {
        let scheme = url.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("http://"))?;
        let rest = &url[scheme.len()..];
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (origin, path) = rest.split_at(end);
        let path = path.split('#').next().unwrap_or_default();
        let path = if path.is_empty() { "/" } else { path };
        // A user's part is no origin's: refused, as a key could ride in it.
        if origin.contains('@') || origin.is_empty() {
            return None;
        }
        let (host, port) = match origin.strip_prefix('[') {
            Some(inside) => {
                let (address, after) = inside.split_once(']')?;
                (&origin[..address.len() + 2], after.strip_prefix(':'))
            }
            None => match origin.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (origin, None),
            },
        };
        let port = match port {
            Some(port) => port.parse().ok()?,
            None => 80,
        };
        (!host.is_empty()).then_some(Target { host, port, origin, path, under: "" })
    }

    /// `base` (an `http://` URL) with `path` under it.
    fn under(base: &'a str, path: &'a str) -> Option<Target<'a>> {
        let base = Target::of(base)?;
        let under = path.trim_start_matches('/');
        let path = if under.is_empty() { base.path } else { base.path.trim_end_matches('/') };
        Some(Target { path, under, ..base })
    }

    /// Writes the path (with its query) into a request's head.
    fn write_path(&self, head: &mut Vec<u8>) {
        head.extend_from_slice(self.path.as_bytes());
        if !self.under.is_empty() {
            head.push(b'/');
            head.extend_from_slice(self.under.as_bytes());
        }
    }

    /// The whole URL, for a redirect's resolution.
    fn url(&self) -> String {
        let mut url = format!("http://{}", self.origin);
        let mut path = Vec::new();
        self.write_path(&mut path);
        url.push_str(&String::from_utf8_lossy(&path));
        url
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;
    use tokio::sync::mpsc;

    /// A server on loopback that answers each request it reads with the next of `answers` (the
    /// bytes, in pieces written apart, and whether the connection closes after it); what it read
    /// and how many connections it accepted are told on the channels.
    async fn server(
        answers: Vec<(Vec<&'static [u8]>, bool)>,
    ) -> (String, mpsc::UnboundedReceiver<String>, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
        let (heard, requests) = mpsc::unbounded_channel();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = accepted.clone();
        tokio::spawn(async move {
            let answers = Arc::new(Mutex::new(answers.into_iter()));
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let (answers, heard) = (answers.clone(), heard.clone());
                tokio::spawn(async move {
                    let mut read = Vec::new();
                    loop {
                        // A request: its head, then as many bytes as its content-length says.
                        let request = loop {
                            if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                                let head = String::from_utf8_lossy(&read[..end]).to_string();
                                let length = head
                                    .lines()
                                    .find_map(|l| l.strip_prefix("content-length: "))
                                    .map_or(0, |n| n.parse::<usize>().unwrap());
                                if read.len() >= end + 4 + length {
                                    let request = String::from_utf8_lossy(&read[..end + 4 + length]).to_string();
                                    read.drain(..end + 4 + length);
                                    break Some(request);
                                }
                            }
                            let mut buf = [0u8; 4096];
                            match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => break None,
                                Ok(n) => read.extend_from_slice(&buf[..n]),
                            }
                        };
                        let Some(request) = request else { return };
                        let _ = heard.send(request);
                        let next = answers.lock().unwrap().next();
                        let Some((pieces, close)) = next else { return };
                        for piece in pieces {
                            stream.write_all(piece).await.unwrap();
                            stream.flush().await.unwrap();
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        (url, requests, accepted)
    }

    fn headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert("authorization", HeaderValue::from_static("Bearer k1"));
        headers
    }

    /// Sends a POST of `body` to `url` and reads the whole answer: status, a header, the body.
    async fn post(client: &Arc<PlainClient>, url: &str, body: &'static str) -> Result<(u16, Bytes), Breakage> {
        let response = post_plain(client, url, &headers(), Bytes::from_static(body.as_bytes())).await?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut read = Vec::new();
        while let Some(piece) = body.next_chunk().await {
            read.extend_from_slice(&piece?);
        }
        Ok((status, Bytes::from(read)))
    }

    #[test]
    fn a_target_is_read_from_a_base_url_and_the_path_under_it() {
        fn written(target: Target<'_>) -> (String, u16, String, String) {
            let mut path = Vec::new();
            target.write_path(&mut path);
            (target.host.to_owned(), target.port, target.origin.to_owned(), String::from_utf8(path).unwrap())
        }
        let under = |base, path| written(Target::under(base, path).expect("a plain URL"));
        assert_eq!(
            under("http://127.0.0.1:8080/v1", "chat/completions"),
            ("127.0.0.1".to_owned(), 8080, "127.0.0.1:8080".to_owned(), "/v1/chat/completions".to_owned())
        );
        assert_eq!(under("http://[::1]:11434/", "/v1/models").3, "/v1/models", "one slash between");
        assert_eq!(under("http://[::1]:11434/", "v1/models").0, "[::1]", "an IPv6 host in its brackets");
        assert_eq!(under("http://localhost", "v1/x").1, 80, "port 80 unless told");
        assert_eq!(under("http://localhost", "").3, "/", "the root");
        assert_eq!(written(Target::of("http://h:1/a/b?c=d#e").unwrap()).3, "/a/b?c=d", "a query, no fragment");
        for refused in ["https://h/v1", "http://user:key@h/v1", "http:///v1", "http://h:port/v1", "ftp://h"] {
            assert_eq!(Target::of(refused), None, "{refused}");
        }
        assert_eq!(Target::under("http://h:1/v1", "x").unwrap().url(), "http://h:1/v1/x", "the whole URL");
    }

    #[tokio::test]
    async fn a_length_answer_is_read_and_its_connection_kept() {
        let answer: &[u8] =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"id\":\"x\"}\n";
        let (url, mut requests, accepted) = server(vec![(vec![answer], false), (vec![answer], false)]).await;
        let client = Arc::new(plain_client());
        assert_eq!(
            post(&client, &url, "{\"model\":\"m\"}").await.unwrap(),
            (200, Bytes::from_static(b"{\"id\":\"x\"}\n"))
        );
        let request = requests.recv().await.unwrap();
        let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
        assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"), "{request}");
        assert!(request.contains(&format!("host: 127.0.0.1:{port}\r\n")), "{request}");
        assert!(request.contains("authorization: Bearer k1\r\n"), "{request}");
        assert!(request.ends_with("content-length: 13\r\n\r\n{\"model\":\"m\"}"), "{request}");
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"{\"id\":\"x\"}\n"));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1, "the second went on the first's connection");
    }

    #[tokio::test]
    async fn a_head_is_read_by_its_tokens_in_any_case_and_its_values_as_they_came() {
        let interim_then_closing: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: Close\r\n\
            Content-Length: 2, 2\r\nx-ratelimit-remaining-requests: 99\r\nX-Request-Id: req_1\r\nx-empty:\r\n\
            x-blank:   \r\n\r\nok";
        let conflicting: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok";
        // Neither answer's connection is closed by the server: the client closes the first.
        let (url, _requests, accepted) =
            server(vec![(vec![interim_then_closing], false), (vec![conflicting], false)]).await;
        let client = Arc::new(plain_client());
        let response = post_plain(&client, &url, &headers(), Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(response.status(), 200, "the answer after the interim one");
        assert_eq!(response.headers()["x-ratelimit-remaining-requests"], "99");
        assert_eq!(response.headers()["x-request-id"], "req_1", "a name in any case, its value as written");
        assert_eq!(response.headers()["x-empty"], "", "an empty value");
        assert_eq!(response.headers()["x-blank"], "", "a value of spaces");
        let mut body = response.into_body();
        assert_eq!(body.next_chunk().await.unwrap().unwrap(), Bytes::from_static(b"ok"), "the length, given twice");
        assert!(body.next_chunk().await.is_none());
        assert!(matches!(post(&client, &url, "{}").await, Err(Breakage::Request)), "two lengths that differ");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2, "`Connection: Close` was not kept");
    }

    #[tokio::test]
    async fn a_large_body_goes_after_its_head_whole() {
        let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let (url, mut requests, _accepted) = server(vec![(vec![answer], false)]).await;
        let client = Arc::new(plain_client());
        let large: &'static str = Box::leak(format!("{{\"text\":\"{}\"}}", "x".repeat(ONE_WRITE)).into_boxed_str());
        assert_eq!(post(&client, &url, large).await.unwrap().1, Bytes::from_static(b"ok"));
        let request = requests.recv().await.unwrap();
        assert!(request.contains(&format!("content-length: {}\r\n\r\n", large.len())), "{}", &request[..200]);
        assert!(request.ends_with(large), "the body whole, after the head");
    }

    #[tokio::test]
    async fn a_chunked_answer_is_read_across_its_pieces() {
        let pieces: Vec<&'static [u8]> = vec![
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n",
            b"7\r\ndata: 1",
            b"\r\n",
            b"a;ext=1\r\n\n\ndata: 2\n",
            b"\r\n1",
            b"\r\n\n\r\n0\r\ntrailer: x\r\n",
            b"\r\n",
        ];
        let (url, _requests, accepted) =
            server(vec![(pieces, false), (vec![b"HTTP/1.1 204 No Content\r\n\r\n"], false)]).await;
        let client = Arc::new(plain_client());
        let (status, body) = post(&client, &url, "{}").await.unwrap();
        assert_eq!((status, &body[..]), (200, &b"data: 1\n\ndata: 2\n\n"[..]));
        assert_eq!(post(&client, &url, "{}").await.unwrap(), (204, Bytes::new()), "the connection kept");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_answer_that_closes_is_read_to_its_end_and_not_kept() {
        let to_end: Vec<&'static [u8]> = vec![b"HTTP/1.1 200 OK\r\n\r\nall ", b"of it"];
        let closing: &[u8] = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok";
        let (url, _requests, accepted) =
            server(vec![(to_end, true), (vec![closing], true), (vec![closing], true)]).await;
        let client = Arc::new(plain_client());
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"all of it"));
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3, "a connection each");
    }

    #[tokio::test]
    async fn a_kept_connection_the_server_closed_is_not_used() {
        let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        // The server closes after the first answer although it did not say so.
        let (url, _requests, accepted) = server(vec![(vec![answer], true), (vec![answer], false)]).await;
        let client = Arc::new(plain_client());
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn failures_before_the_answer_are_told_apart_from_a_broken_body() {
        let client = Arc::new(plain_client());
        // Nothing listens: the connection failed (the pool tries another key or provider).
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", closed.local_addr().unwrap());
        drop(closed);
        assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Connect));
        // A server that reads the request and closes without an answer.
        let (url, _requests, _) = server(vec![(vec![], true)]).await;
        assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Request));
        // A head that is not HTTP.
        let (url, _requests, _) = server(vec![(vec![b"SMTP ready\r\n\r\n"], true)]).await;
        assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Request));
        // A body shorter than its length, and a chunk that is not one.
        let short: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc";
        let (url, _requests, _) = server(vec![(vec![short], true)]).await;
        assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Body));
        let bad: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n";
        let (url, _requests, _) = server(vec![(vec![bad], false)]).await;
        assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Body));
    }

    #[tokio::test]
    async fn a_redirect_within_the_origin_is_followed_as_a_get() {
        let moved: &[u8] = b"HTTP/1.1 303 See Other\r\nlocation: /v1/elsewhere\r\ncontent-length: 0\r\n\r\n";
        let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let (url, mut requests, _) = server(vec![(vec![moved], false), (vec![answer], false)]).await;
        let client = Arc::new(plain_client());
        assert_eq!(post(&client, &url, "{}").await.unwrap(), (200, Bytes::from_static(b"ok")));
        let _ = requests.recv().await.unwrap();
        let again = requests.recv().await.unwrap();
        assert!(again.starts_with("GET /v1/elsewhere HTTP/1.1\r\n"), "{again}");
        assert!(!again.contains("content-length") && !again.contains("content-type"), "{again}");
    }
}
