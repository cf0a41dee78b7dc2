//! Waiting for a key to free up, with time injected: real time in the app, simulated time in
//! tests and simulations (which move a manual clock instead of sleeping).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use keypool::{Clock, ManualClock, Timestamp};

/// A future the waiter hands out.
pub type Wait<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// `read`, or `None` when it has not ended within `wait` of now. A read that ends as it is first
/// polled (a piece that had come already, the end of an answer read whole) sets no timer: most
/// pieces of a relayed answer are read so, and each timer was an allocation and a turn of the
/// runtime's timer wheel.
pub(crate) async fn within<F: Future>(waiter: &dyn Waiter, wait: Duration, read: F) -> Option<F::Output> {
    let mut read = std::pin::pin!(read);
    if let Poll::Ready(out) = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
        return Some(out);
    }
    deadline(waiter, wait, read).await
}

/// `work`, or `None` when it has not ended within `wait` of now. In real time the timer is
/// tokio's own, held in this future (no allocation); another waiter's is asked for.
pub(crate) async fn deadline<F: Future>(waiter: &dyn Waiter, wait: Duration, work: F) -> Option<F::Output> {
    match waiter.real_deadline(wait) {
        Some(at) => tokio::select! {
            out = work => Some(out),
            () = tokio::time::sleep_until(at) => None,
        },
        None => tokio::select! {
            out = work => Some(out),
            () = waiter.after(wait) => None,
        },
    }
}

/// How the completion service lets time pass.
pub trait Waiter: Send + Sync {
    /// Resolves at `until` (at once when it has passed).
    fn until(&self, until: Timestamp) -> Wait<'_>;

    /// Resolves at `deadline` while something else (a request in flight ending) is expected to
    /// end the wait first. Simulated time never ends such a wait by itself.
    fn bound(&self, deadline: Timestamp) -> Wait<'_>;

    /// Resolves `wait` from now: how long the provider may keep an attempt waiting (for its first
    /// byte, between two pieces). Simulated time never ends it by itself: a test of a deadline
    /// passes a waiter whose deadlines pass.
    fn after(&self, wait: Duration) -> Wait<'_>;

    /// When `wait` from now ends on tokio's timer, if this waiter's time is real time (its
    /// deadlines then need no boxed future); `None` for any other.
    fn real_deadline(&self, wait: Duration) -> Option<tokio::time::Instant> {
        let _ = wait;
        None
    }
}

/// Real time: tokio's timer against the app's clock.
pub struct RealTime {
    clock: Arc<dyn Clock>,
}

impl RealTime {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        RealTime { clock }
    }
}

impl Waiter for RealTime {
    fn until(&self, until: Timestamp) -> Wait<'_> {
        Box::pin(tokio::time::sleep(until.saturating_duration_since(self.clock.now())))
    }

    fn bound(&self, deadline: Timestamp) -> Wait<'_> {
        self.until(deadline)
    }

    fn after(&self, wait: Duration) -> Wait<'_> {
        Box::pin(tokio::time::sleep(wait))
    }

    fn real_deadline(&self, wait: Duration) -> Option<tokio::time::Instant> {
        Some(tokio::time::Instant::now() + wait)
    }
}

/// Simulated time: waiting until `t` moves the manual clock to `t` at once, so a test of
/// waits takes no time and never sleeps.
pub struct SimulatedTime {
    clock: Arc<ManualClock>,
}

impl SimulatedTime {
    pub fn new(clock: Arc<ManualClock>) -> Self {
        SimulatedTime { clock }
    }
}

impl Waiter for SimulatedTime {
    fn until(&self, until: Timestamp) -> Wait<'_> {
        self.clock.advance_to(until);
        Box::pin(std::future::ready(()))
    }

    fn bound(&self, _: Timestamp) -> Wait<'_> {
        Box::pin(std::future::pending())
    }

    fn after(&self, _: Duration) -> Wait<'_> {
        Box::pin(std::future::pending())
    }
}
