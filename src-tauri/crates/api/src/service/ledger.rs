//! The usage ledger's writer: attempts go into a channel on the request's task and are written
//! in batches by a thread of their own, one transaction per batch, off the hot path.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use keypool_llm::AttemptRecord;
use keypool_store::usage::{self, AttemptRow};
use keypool_store::Database;

/// The most attempts written in one transaction.
const BATCH: usize = 512;
/// How long the writer gathers a batch after its first attempt.
const GATHER: Duration = Duration::from_millis(50);

enum Message {
    Attempt(Box<AttemptRow>),
    /// Answered once everything sent before it is written.
    Flush(Sender<()>),
}

/// Hands attempts to the writer thread. Cheap to clone; the thread ends with the last clone.
#[derive(Clone)]
pub struct Ledger {
    sender: Option<Sender<Message>>,
}

impl Ledger {
    /// A ledger writing into `db` from a thread of its own.
    pub fn start(db: Arc<Database>) -> Ledger {
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new().name("keypool-ledger".into()).spawn(move || write(&db, &receiver));
        match spawned {
            Ok(_) => Ledger { sender: Some(sender) },
            Err(error) => {
                tracing::error!(%error, "could not start the usage ledger; usage is not recorded");
                Ledger { sender: None }
            }
        }
    }

    /// A ledger that records nothing (benchmarks measure what recording costs against it).
    pub fn off() -> Ledger {
        Ledger { sender: None }
    }

    pub fn record(&self, attempt: &AttemptRecord) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(Message::Attempt(Box::new(row_of(attempt))));
        }
    }

    /// Waits until every attempt recorded so far is in the database.
    pub fn flush(&self) {
        if let Some(sender) = &self.sender {
            let (done, written) = mpsc::channel();
            if sender.send(Message::Flush(done)).is_ok() {
                let _ = written.recv();
            }
        }
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
/// [`BATCH`]; a flush writes what it has and answers.
fn write(db: &Database, receiver: &Receiver<Message>) {
    let mut batch: Vec<AttemptRow> = Vec::new();
    let mut flushes: Vec<Sender<()>> = Vec::new();
    // When the batch being gathered must be written: GATHER after its first attempt.
    let mut due = Instant::now();
    loop {
        let next = if batch.is_empty() {
            receiver.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            receiver.recv_timeout(due.saturating_duration_since(Instant::now()))
        };
        let disconnected = match next {
            Ok(Message::Attempt(row)) => {
                if batch.is_empty() {
                    due = Instant::now() + GATHER;
                }
                batch.push(*row);
                if batch.len() < BATCH && Instant::now() < due {
                    continue;
                }
                false
            }
            Ok(Message::Flush(done)) => {
                flushes.push(done);
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        if !batch.is_empty() {
            let written = db
                .lock()
                .map_err(|e| e.to_string())
                .and_then(|mut conn| usage::record(&mut conn, &batch).map_err(|e| e.to_string()));
            if let Err(error) = written {
                tracing::error!(%error, attempts = batch.len(), "could not write usage to the ledger");
            }
            batch.clear();
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
        if disconnected {
            return;
        }
    }
}
