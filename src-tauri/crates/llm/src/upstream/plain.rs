//! The plain-http client: connections kept alive per origin, answers read as they come.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::Breakage;

use super::head::{write_head, HeadLines, Target};
use crate::net::{local_addresses, CONNECT_TIMEOUT};

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
    pub(super) async fn send(
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
pub(super) const ONE_WRITE: usize = 16 * 1024;

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

/// A failed read or write, as the relay tells it.
fn io_breakage(error: &std::io::Error) -> Breakage {
    match error.kind() {
        std::io::ErrorKind::TimedOut => Breakage::Timeout,
        _ => Breakage::Request,
    }
}

/// A plain-http answer: its head, and its body still to read.
pub(crate) struct PlainResponse {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: PlainBody,
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
    pub(super) async fn next(&mut self) -> Option<Result<Bytes, Breakage>> {
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
