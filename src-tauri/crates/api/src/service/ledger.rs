//! The usage ledger's writer: attempts go into a queue on the request's task and are written
//! in batches by a thread of their own, one transaction per batch, off the hot path.
//!
//! The queue wakes the writer only for the first attempt of a batch, a full batch or a flush:
//! under load a request costs a push under a short lock, never a thread switch.
//!
//! What a SIGKILL can lose, at most: the batch being gathered, i.e. the attempts recorded in
//! the last [`GATHER`] (never more than [`BATCH`] of them), and the batch being written, which
//! its transaction keeps whole or out. A flush ([`Ledger::flush`], before every read of the
//! ledger) writes everything recorded before it.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keypool_llm::AttemptRecord;
use keypool_store::usage::{self, AttemptRow};
use keypool_store::Database;

/// The most attempts written in one transaction.
const BATCH: usize = 512;
/// How long the writer gathers a batch after its first attempt.
const GATHER: Duration = Duration::from_millis(50);

/// Hands attempts to the writer thread. Cheap to clone; the thread ends with the last clone.
#[derive(Clone)]
pub struct Ledger {
    queue: Option<Arc<Closing>>,
}

/// What the recording side and the writer share.
#[derive(Default)]
struct Queue {
    pending: Mutex<Pending>,
    wake: Condvar,
}

#[derive(Default)]
struct Pending {
    rows: Vec<AttemptRow>,
    /// Answered once everything recorded before them is written.
    flushes: Vec<Sender<()>>,
    /// The writer waits for a first attempt (and only then is woken for one).
    idle: bool,
    /// Every [`Ledger`] is gone: the writer writes what is left and ends.
    closed: bool,
}

/// The queue as the ledgers hold it: the last one dropped closes it.
struct Closing(Arc<Queue>);

impl Drop for Closing {
    fn drop(&mut self) {
        lock(&self.0).closed = true;
        self.0.wake.notify_one();
    }
}

fn lock(queue: &Queue) -> MutexGuard<'_, Pending> {
    // A writer that panicked mid-batch leaves rows that are still rows.
    queue.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Ledger {
    /// A ledger writing into `db` from a thread of its own.
    pub fn start(db: Arc<Database>) -> Ledger {
        let queue = Arc::new(Queue::default());
        let writer = queue.clone();
        let spawned = std::thread::Builder::new().name("keypool-ledger".into()).spawn(move || write(&db, &writer));
        match spawned {
            Ok(_) => Ledger { queue: Some(Arc::new(Closing(queue))) },
            Err(error) => {
                tracing::error!(%error, "could not start the usage ledger; usage is not recorded");
                Ledger { queue: None }
            }
        }
    }

    /// A ledger that records nothing (benchmarks measure what recording costs against it).
    pub fn off() -> Ledger {
        Ledger { queue: None }
    }

    pub fn record(&self, attempt: &AttemptRecord) {
        let Some(queue) = &self.queue else { return };
        let row = row_of(attempt);
        let wake = {
            let mut pending = lock(&queue.0);
            pending.rows.push(row);
            (pending.idle && pending.rows.len() == 1) || pending.rows.len() == BATCH
        };
        if wake {
            queue.0.wake.notify_one();
        }
    }

    /// Waits until every attempt recorded so far is in the database.
    pub fn flush(&self) {
        let Some(queue) = &self.queue else { return };
        let (done, written) = mpsc::channel();
        lock(&queue.0).flushes.push(done);
        queue.0.wake.notify_one();
        let _ = written.recv();
    }
}

fn row_of(a: &AttemptRecord) -> AttemptRow {
    let usage = a.usage;
    AttemptRow {
        at: a.at.as_millis(),
        provider_id: a.provider.to_string(),
        key_id: a.key.as_ref().map(ToString::to_string),
        model: a.model.clone(),
        chat_id: Some(a.session.to_string()),
        source: a.source.clone(),
        outcome: a.outcome.as_str(),
        status: a.status,
        ttft_ms: a.first_token_ms,
        latency_ms: a.latency_ms,
        input_tokens: usage.map(|u| u.input),
        cached_tokens: usage.map(|u| u.cached),
        output_tokens: usage.map(|u| u.output),
    }
}

/// The writer thread: a batch is what arrives within [`GATHER`] of its first attempt, up to
/// [`BATCH`]; a flush writes what there is at once and answers.
fn write(db: &Database, queue: &Queue) {
    let mut pending = lock(queue);
    loop {
        while pending.rows.is_empty() && pending.flushes.is_empty() && !pending.closed {
            pending.idle = true;
            pending = queue.wake.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        pending.idle = false;
        let due = Instant::now() + GATHER;
        while pending.flushes.is_empty() && pending.rows.len() < BATCH && !pending.closed {
            let Some(left) = due.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()) else { break };
            pending = queue.wake.wait_timeout(pending, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
        let batch = std::mem::take(&mut pending.rows);
        let flushes = std::mem::take(&mut pending.flushes);
        let closed = pending.closed;
        drop(pending);
        if !batch.is_empty() {
            let written = db
                .lock()
                .map_err(|e| e.to_string())
                .and_then(|mut conn| usage::record(&mut conn, &batch).map_err(|e| e.to_string()));
            if let Err(error) = written {
                tracing::error!(%error, attempts = batch.len(), "could not write usage to the ledger");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
        pending = lock(queue);
        if closed && pending.rows.is_empty() && pending.flushes.is_empty() {
            return;
        }
    }
}
