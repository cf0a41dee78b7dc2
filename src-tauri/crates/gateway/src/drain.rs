//! A server's drain: from [`Drain::start`] the endpoint refuses new requests (503, retryable, in
//! the client's dialect) and says it is not ready, while the requests in flight, streams
//! included, run to their end; [`Drain::cut`] ends those still running (a stream with an error
//! event in its client's dialect, an answer not yet begun with a 503).
//!
//! What a request pays for being cuttable is an atomic load each time its answer is polled: a
//! request registers its waker once (and again only when its task changes), so nothing locks
//! per chunk of a stream.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::stream::Stream;
use keypool_llm::wire::WireFormat;
use tokio::sync::Notify;

/// What the client of a request cut off is told.
pub(crate) const CUT_MESSAGE: &str = "the server is shutting down: the answer was cut off; try again";

/// The drain's state, shared by every worker.
#[derive(Default)]
pub(crate) struct Drain {
    draining: AtomicBool,
    cut: AtomicBool,
    /// The requests that may be cut.
    waiting: Mutex<Waiting>,
    /// Told when the last request in flight ends while draining.
    idle: Notify,
}

impl Drain {
    pub(crate) fn start(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Ends every request still in flight: each is woken and finds itself cut.
    pub(crate) fn cut(&self) {
        self.draining.store(true, Ordering::SeqCst);
        self.cut.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> = lock(&self.waiting).wakers.iter_mut().filter_map(Option::take).collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// A request's in-flight count went from 1 to 0.
    pub(crate) fn went_idle(&self) {
        if self.draining() {
            self.idle.notify_waiters();
        }
    }

    /// Returns once `in_flight` says no request is in flight (checked again whenever the last one
    /// ends while draining).
    pub(crate) async fn idle(&self, in_flight: impl Fn() -> u64) {
        loop {
            let notified = self.idle.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }

    pub(crate) fn watch(self: &Arc<Self>) -> CutWatch {
        CutWatch { drain: self.clone(), place: None }
    }
}

/// The wakers of the requests that may be cut, by their place, and the places free.
#[derive(Default)]
struct Waiting {
    wakers: Vec<Option<Waker>>,
    free: Vec<usize>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One request's watch on [`Drain::cut`]: ready once the drain cuts.
pub(crate) struct CutWatch {
    drain: Arc<Drain>,
    /// Its place among the waiting, once it waits.
    place: Option<usize>,
}

impl CutWatch {
    /// Ready once cut; otherwise the task of `cx` is woken when it is.
    pub(crate) fn poll_cut(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.drain.cut.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let mut waiting = lock(&self.drain.waiting);
        match self.place {
            // Woken by the same task as before (hyper polls a connection's answers on its task):
            // nothing to change.
            Some(place) if waiting.wakers[place].as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) => {}
            Some(place) => waiting.wakers[place] = Some(cx.waker().clone()),
            None => {
                let place = waiting.free.pop().unwrap_or_else(|| {
                    waiting.wakers.push(None);
                    waiting.wakers.len() - 1
                });
                waiting.wakers[place] = Some(cx.waker().clone());
                self.place = Some(place);
            }
        }
        drop(waiting);
        // Cut meanwhile, after the wakers were taken: it is this one's turn now.
        if self.drain.cut.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for CutWatch {
    fn drop(&mut self) {
        if let Some(place) = self.place {
            let mut waiting = lock(&self.drain.waiting);
            waiting.wakers[place] = None;
            waiting.free.push(place);
        }
    }
}

/// `future`'s output, or `None` when the drain cuts first. Pinned where it lives (a request's
/// future is KiBs: taken by value, it would be held twice, as the argument and pinned).
pub(crate) async fn or_cut<F: Future>(mut future: std::pin::Pin<&mut F>, drain: &Arc<Drain>) -> Option<F::Output> {
    let mut watch: Option<CutWatch> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        watch.get_or_insert_with(|| drain.watch()).poll_cut(cx).map(|()| None)
    })
    .await
}

/// A stream passed on to a client until the drain cuts it; then an error event (or, for an
/// answer that is not a stream of events, an error body) in the client's format ends it.
pub(crate) struct UntilCut<S> {
    stream: S,
    watch: Option<CutWatch>,
    drain: Arc<Drain>,
    /// The client's format, and whether its answer is a stream of events.
    format: WireFormat,
    events: bool,
    ended: bool,
}

impl<S> UntilCut<S> {
    pub(crate) fn new(stream: S, drain: &Arc<Drain>, format: WireFormat, events: bool) -> Self {
        UntilCut { stream, watch: None, drain: drain.clone(), format, events, ended: false }
    }
}

impl<S> Stream for UntilCut<S>
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Unpin,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.stream).poll_next(cx) {
            return Poll::Ready(item);
        }
        let this = &mut *self;
        let watch = this.watch.get_or_insert_with(|| this.drain.watch());
        match watch.poll_cut(cx) {
            Poll::Ready(()) => {
                this.ended = true;
                this.watch = None;
                tracing::info!("a stream still running when the drain ended was cut off with an error event");
                Poll::Ready(Some(Ok(this.format.wire().broken_off(this.events, CUT_MESSAGE))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn a_stream_goes_on_until_cut_then_ends_with_its_formats_error_event() {
        let drain = Arc::new(Drain::default());
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
        let upstream = tokio_stream_of(receiver);
        let mut stream = UntilCut::new(upstream, &drain, WireFormat::AnthropicMessages, true);
        sender.send(Ok(Bytes::from_static(b"event: ping\n\n"))).unwrap();
        assert_eq!(stream.next().await.unwrap().unwrap(), Bytes::from_static(b"event: ping\n\n"), "passed as it came");
        drain.start();
        sender.send(Ok(Bytes::from_static(b"more"))).unwrap();
        assert_eq!(stream.next().await.unwrap().unwrap(), Bytes::from_static(b"more"), "a drain alone cuts nothing");
        let next = tokio::spawn(async move {
            let last = stream.next().await;
            (last, stream.next().await.is_none())
        });
        // The stream waits on its upstream, its waker registered; the cut must wake it.
        until_registered(&drain).await;
        drain.cut();
        let (last, ended) = next.await.unwrap();
        let last = String::from_utf8(last.unwrap().unwrap().to_vec()).unwrap();
        assert!(last.starts_with("event: error"), "Anthropic's error event ends it: {last}");
        assert!(last.contains("shutting down"), "saying why: {last}");
        assert!(ended, "and nothing comes after it");
        let waiting = lock(&drain.waiting);
        assert_eq!(waiting.free.len(), waiting.wakers.len(), "its place was given back");
    }

    #[tokio::test]
    async fn a_future_cut_before_it_ends_gives_none_and_idle_waits_for_the_last_request() {
        let drain = Arc::new(Drain::default());
        assert_eq!(or_cut(std::pin::pin!(async { 7 }), &drain).await, Some(7), "an answer that comes is the answer");
        let in_flight = Arc::new(std::sync::atomic::AtomicU64::new(1));
        drain.start();
        let idle = {
            let (drain, in_flight) = (drain.clone(), in_flight.clone());
            tokio::spawn(async move { drain.idle(|| in_flight.load(Ordering::SeqCst)).await })
        };
        let pending = {
            let drain = drain.clone();
            tokio::spawn(async move { or_cut(std::pin::pin!(std::future::pending::<()>()), &drain).await })
        };
        until_registered(&drain).await;
        assert!(!idle.is_finished(), "one request is in flight");
        in_flight.store(0, Ordering::SeqCst);
        drain.went_idle();
        idle.await.unwrap();
        drain.cut();
        assert_eq!(pending.await.unwrap(), None, "a request cut before its answer has none");
    }

    async fn until_registered(drain: &Drain) {
        while lock(&drain.waiting).wakers.iter().all(Option::is_none) {
            tokio::task::yield_now().await;
        }
    }

    fn tokio_stream_of(
        mut receiver: tokio::sync::mpsc::UnboundedReceiver<Result<Bytes, std::io::Error>>,
    ) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Unpin {
        Box::pin(futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx)))
    }
}
