//! How the endpoint holds its connections: a bounded number of them, each under deadlines, so
//! that whoever can reach it cannot hold it with half-open sockets (slowloris). `axum::serve`
//! runs hyper without a timer (no header-read timeout, no idle timeout) and accepts without
//! bound; this serves each connection with hyper's HTTP/1 builder, given a timer, instead.
//!
//! - A client has [`Bounds::header_read`] to send each request head, counted from when the
//!   connection is ready for it: a new connection's first, a kept-alive one's next. So an idle
//!   kept-alive connection is closed after it too (hyper's header-read timer starts as soon as a
//!   connection waits for a head).
//! - A request's body must have arrived within [`Bounds::body`] of its head; else the answer is a
//!   408 and the connection closes.
//! - At most [`Bounds::max_connections`] connections are open at once, half the process's file
//!   descriptors by default, so it never runs out of them. When all are taken, the connection
//!   that has waited longest for a request head (one that never sent a whole head, or sits idle
//!   after its answer) is closed to make room; when every one is busy with a request, new ones
//!   wait in the listen backlog. A flood of half-open sockets so delays nobody's request.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::rt::{Sleep, Timer};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, Semaphore};

/// What the connections serve: the client a request is from, and the answer to it.
pub(crate) trait Served: Send + Sync + 'static {
    /// The client a request from `peer` with `headers` is from (a trusted proxy may name it).
    fn client_of(&self, peer: std::net::IpAddr, headers: &axum::http::HeaderMap) -> std::net::IpAddr;
    /// The answer to `request`.
    fn answer(self: Arc<Self>, request: Request) -> impl Future<Output = Response> + Send;
}

/// The bounds every connection is served under.
#[derive(Clone)]
pub struct Bounds {
    /// How long a client may take to send a request head, from when the connection waits for
    /// one (also how long a kept-alive connection may sit idle).
    pub header_read: Duration,
    /// How long a request's body may take to arrive, from its head.
    pub body: Duration,
    /// How many connections may be open at once.
    pub max_connections: usize,
    /// What the deadlines run on: real time, or a test's [`ManualTimer`].
    pub timer: ConnectionTimer,
}

/// How long a client may take to send a request head, or sit idle between requests.
pub const HEADER_READ: Duration = Duration::from_secs(20);

/// How long a request body may take to arrive (32 MiB at 1 MiB/s and then some).
pub const BODY_DEADLINE: Duration = Duration::from_secs(60);

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            header_read: HEADER_READ,
            body: BODY_DEADLINE,
            max_connections: max_connections(),
            timer: ConnectionTimer::real(),
        }
    }
}

/// Half the file descriptors this process may open (the rest are the store's, the log's and the
/// provider connections'), between 32 and 8192; 1024 where the limit cannot be read.
fn max_connections() -> usize {
    #[cfg(unix)]
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    #[cfg(not(unix))]
    let limit: Option<u64> = None;
    limit.map_or(1024, |fds| usize::try_from(fds / 2).unwrap_or(usize::MAX).clamp(32, 8192))
}

/// The timer hyper's deadlines and the body deadline run on.
#[derive(Clone)]
pub struct ConnectionTimer(Arc<dyn Timer + Send + Sync>);

impl ConnectionTimer {
    /// Real time (tokio's timer).
    pub fn real() -> Self {
        ConnectionTimer(Arc::new(TokioTimer::new()))
    }

    /// Deadlines that pass when `timer` says so.
    pub fn manual(timer: &ManualTimer) -> Self {
        ConnectionTimer(Arc::new(timer.clone()))
    }
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.0.sleep(duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        self.0.sleep_until(deadline)
    }

    fn now(&self) -> Instant {
        self.0.now()
    }
}

/// A timer for tests: every deadline set so far passes when [`ManualTimer::pass`] is called,
/// whatever its length; none passes otherwise.
#[derive(Clone, Default)]
pub struct ManualTimer(Arc<ManualTime>);

#[derive(Default)]
struct ManualTime {
    /// How many times time was passed.
    passes: AtomicU64,
    waiting: Mutex<Vec<Waker>>,
    /// How many deadlines were set so far.
    armed: AtomicU64,
    armed_more: Notify,
}

impl ManualTimer {
    pub fn new() -> Self {
        ManualTimer::default()
    }

    /// Every deadline set so far passes.
    pub fn pass(&self) {
        self.0.passes.fetch_add(1, Ordering::SeqCst);
        let waiting = std::mem::take(&mut *self.0.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        waiting.into_iter().for_each(Waker::wake);
    }

    /// Returns once `count` deadlines have been set in all (something the server does, not time).
    pub async fn armed(&self, count: u64) {
        loop {
            let more = self.0.armed_more.notified();
            if self.0.armed.load(Ordering::SeqCst) >= count {
                return;
            }
            more.await;
        }
    }

    fn deadline(&self) -> Pin<Box<dyn Sleep>> {
        // Set before it is announced: a test that passes time once it is armed passes it.
        let sleep = ManualSleep { time: self.0.clone(), set_at: self.0.passes.load(Ordering::SeqCst) };
        self.0.armed.fetch_add(1, Ordering::SeqCst);
        self.0.armed_more.notify_waiters();
        Box::pin(sleep)
    }
}

impl Timer for ManualTimer {
    fn sleep(&self, _: Duration) -> Pin<Box<dyn Sleep>> {
        self.deadline()
    }

    fn sleep_until(&self, _: Instant) -> Pin<Box<dyn Sleep>> {
        self.deadline()
    }
}

struct ManualSleep {
    time: Arc<ManualTime>,
    set_at: u64,
}

impl Future for ManualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let passed = || self.time.passes.load(Ordering::SeqCst) > self.set_at;
        if passed() {
            return Poll::Ready(());
        }
        self.time.waiting.lock().unwrap_or_else(|e| e.into_inner()).push(cx.waker().clone());
        if passed() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Sleep for ManualSleep {}

/// The connections of one endpoint, shared by its workers: the permits that bound them, and
/// those waiting for a request head, oldest first.
pub(crate) struct Slots {
    permits: Arc<Semaphore>,
    waiting: Mutex<BTreeMap<u64, Arc<Slot>>>,
    next: AtomicU64,
}

/// One connection's place among those waiting for a request head.
struct Slot {
    /// Its turn among the waiting, while it waits.
    turn: Mutex<Option<u64>>,
    evicted: Notify,
    /// The connection has ended: it never waits again.
    closed: AtomicBool,
}

impl Slots {
    pub(crate) fn new(max_connections: usize) -> Arc<Slots> {
        Arc::new(Slots {
            permits: Arc::new(Semaphore::new(max_connections.max(1))),
            waiting: Mutex::default(),
            next: AtomicU64::new(0),
        })
    }

    /// `slot` waits for a request head, after every connection waiting now.
    fn waits(&self, slot: &Arc<Slot>) {
        if slot.closed.load(Ordering::SeqCst) {
            return;
        }
        let turn = self.next.fetch_add(1, Ordering::Relaxed);
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        *slot.turn.lock().unwrap_or_else(|e| e.into_inner()) = Some(turn);
        waiting.insert(turn, slot.clone());
    }

    /// `slot` no longer waits (a head came, or it closed).
    fn heard(&self, slot: &Slot) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(turn) = slot.turn.lock().unwrap_or_else(|e| e.into_inner()).take() {
            waiting.remove(&turn);
        }
    }

    /// Closes the connection that has waited longest for a request head, if one does.
    fn evict_longest_waiting(&self) -> bool {
        let oldest = self.waiting.lock().unwrap_or_else(|e| e.into_inner()).pop_first();
        match oldest {
            Some((_, slot)) => {
                slot.turn.lock().unwrap_or_else(|e| e.into_inner()).take();
                slot.evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Serves `listener` with `app` under `bounds` until `stopped`, then until its connections have
/// ended (those in the middle of an answer finish it; idle ones close).
pub(crate) async fn serve<A: Served>(
    listener: tokio::net::TcpListener,
    app: Arc<A>,
    bounds: Bounds,
    slots: Arc<Slots>,
    stopped: impl Future<Output = ()> + Clone + Send + 'static,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let permit = match slots.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let evicted = slots.evict_longest_waiting();
                tracing::debug!(evicted, "every connection is taken");
                tokio::select! {
                    permit = slots.permits.clone().acquire_owned() => permit.expect("the permits are never closed"),
                    () = stopped.clone() => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors (another part of the process took them), or a
                    // connection that ended before it was accepted: try again shortly.
                    tracing::warn!(%error, "a connection could not be accepted");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopped.clone() => break,
        };
        // Streams are many small writes: without TCP_NODELAY, Nagle's algorithm and the client's
        // delayed ACKs hold each event back ~40 ms.
        let _ = stream.set_nodelay(true);
        let peer = stream.peer_addr().map(|address| address.ip()).ok();
        let connection = connection(stream, peer, app.clone(), bounds.clone(), slots.clone(), stopped.clone());
        connections.spawn(async move {
            connection.await;
            drop(permit);
        });
        while connections.try_join_next().is_some() {}
    }
    while connections.join_next().await.is_some() {}
}

/// One connection, until it closes, is evicted, or the endpoint stops.
async fn connection<A: Served>(
    stream: tokio::net::TcpStream,
    peer: Option<std::net::IpAddr>,
    app: Arc<A>,
    bounds: Bounds,
    slots: Arc<Slots>,
    stopped: impl Future<Output = ()>,
) {
    let slot = Arc::new(Slot { turn: Mutex::new(None), evicted: Notify::new(), closed: AtomicBool::new(false) });
    slots.waits(&slot);
    let service = {
        let (slot, slots, bounds) = (slot.clone(), slots.clone(), bounds.clone());
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            slots.heard(&slot);
            let again = WaitsAgain { slot: slot.clone(), slots: slots.clone() };
            // The guard locks out wrong tokens per client: it learns the client from here (the
            // peer, or the client a trusted proxy names).
            let client = peer.map(|peer| app.client_of(peer, request.headers()));
            let answered = answer(request, app.clone(), bounds.clone(), again);
            async move {
                match client {
                    Some(client) => crate::guard::PEER.scope(client, answered).await,
                    None => answered.await,
                }
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(bounds.timer.clone()).header_read_timeout(bounds.header_read).keep_alive(true);
    let mut served = Box::pin(http.serve_connection(TokioIo::new(stream), service));
    tokio::select! {
        _ = served.as_mut() => {}
        () = slot.evicted.notified() => tracing::debug!("a connection waiting for a request was closed to make room"),
        () = stopped => {
            served.as_mut().graceful_shutdown();
            let _ = served.as_mut().await;
        }
    }
    slot.closed.store(true, Ordering::SeqCst);
    drop(served);
    slots.heard(&slot);
}

/// Puts a connection back among those waiting for a head when its answer has been sent.
struct WaitsAgain {
    slot: Arc<Slot>,
    slots: Arc<Slots>,
}

impl Drop for WaitsAgain {
    fn drop(&mut self) {
        self.slots.waits(&self.slot);
    }
}

/// `app`'s answer to `request`, or a 408 when its body has not arrived within the deadline.
async fn answer<A: Served>(
    request: hyper::Request<hyper::body::Incoming>,
    app: Arc<A>,
    bounds: Bounds,
    again: WaitsAgain,
) -> Result<hyper::Response<Answer>, Infallible> {
    // The answer's future is the whole request's state machine, many KiB: boxed, hyper moves a
    // pointer into its dispatcher, not the state machine (its memcpy was 1.2% of the CPU a
    // relayed request costs, issue 44).
    let response = if request.body().is_end_stream() {
        Box::pin(app.answer(request.map(Body::new))).await
    } else {
        // The deadline runs from the head.
        let head_at = bounds.timer.now();
        let arrived = Arc::new(AtomicBool::new(false));
        let request: Request = request.map(|body| Body::new(Arriving { body, arrived: arrived.clone() }));
        let handled = Box::pin(app.answer(request));
        // A body that came with its head (most do) has arrived once the answer has first been
        // polled (`biased`: before this): it needs no deadline, and none is set (a timer per
        // request was an allocation and two turns of the runtime's timer wheel).
        let late = async {
            if !arrived.load(Ordering::SeqCst) {
                bounds.timer.sleep_until(head_at + bounds.body).await;
            }
            if arrived.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            biased;
            response = handled => response,
            () = late => too_slow(bounds.body),
        }
    };
    Ok(response.map(|body| Answer { body, _again: again }))
}

/// The answer to a body that did not arrive in time; the connection closes after it.
fn too_slow(deadline: Duration) -> Response {
    let message = format!("the request body did not arrive within {} s", deadline.as_secs());
    let body = serde_json::json!({ "error": { "message": message, "type": "request_timeout" } });
    axum::response::IntoResponse::into_response((
        axum::http::StatusCode::REQUEST_TIMEOUT,
        [(axum::http::header::CONNECTION, "close"), (axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    ))
}

/// A request body that says when it has all arrived.
struct Arriving {
    body: hyper::body::Incoming,
    arrived: Arc<AtomicBool>,
}

impl HttpBody for Arriving {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.arrived.store(true, Ordering::SeqCst);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// An answer's body; when hyper has sent it (or dropped it), the connection waits for a head.
struct Answer {
    body: Body,
    _again: WaitsAgain,
}

impl HttpBody for Answer {
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
