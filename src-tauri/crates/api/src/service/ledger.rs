//! The usage ledger's writer: attempts go into a queue on the request's thread and are written
//! in batches, one transaction per batch, off the hot path: by a thread of its own, at the lowest
//! priority a process may give a thread (nice 19).
//!
//! The queue wakes the writer only for the first attempt of a batch or a full batch: under load
//! a request costs a push under a short lock, never a thread switch.
//!
//! Why the lowest priority: at nice 0, a batch written in one burst (0.8 ms for the 400 attempts
//! of 50 ms at one request at a time) kept the request the kernel woke on the writer's core
//! waiting that long behind it, the other core idle (`perf sched`): p99 0.9–1.2 ms at one request
//! at a time, where it was 0.25 ms without the ledger. At nice 19 the woken request runs first.
//! A writer that low can fall behind a machine busy with other work; then the thread recording
//! an attempt writes the backlog itself ([`BEHIND`]), and reading the ledger writes what waits
//! on the reader's thread ([`Ledger::flush`]), so neither waits on the writer's share of the CPU.
//!
//! A batch is two buffers, its attempts' numbers and their text, handed back emptied for the next
//! batch: recording allocates nothing once they have grown, and a writer frees nothing the
//! requests' threads allocated. Freed an attempt at a time on the writer's thread, each row's five
//! strings went back to the allocator arenas of the threads that made them, under those arenas'
//! locks, while those threads served requests (`__lll_lock_wait_private` on both sides).
//!
//! What a SIGKILL can lose, at most: the attempts waiting to be written, i.e. those recorded in
//! the last [`GATHER`] (never more than [`BEHIND`] of them), and the batch being written, which
//! its transaction keeps whole or out. A flush ([`Ledger::flush`], before every read of the
//! ledger, and as the app exits) writes everything recorded before it, and so does dropping the
//! last ledger, which also waits for the writer thread to end.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keypool_llm::{AttemptRecord, SentWith};
use keypool_store::usage::{self, AttemptRow};
use keypool_store::Database;

/// The writer wakes for a batch this full, without waiting for the rest of [`GATHER`].
const BATCH: usize = 512;
/// How long the writer gathers a batch after its first attempt.
const GATHER: Duration = Duration::from_millis(50);
/// With this many attempts waiting, the writer has fallen behind: the thread recording the last
/// one writes them.
const BEHIND: usize = 4 * BATCH;

/// Hands attempts to the writer thread. Cheap to clone; the thread ends with the last clone.
#[derive(Clone)]
pub struct Ledger {
    queue: Option<Arc<Closing>>,
}

/// What the recording side and the writers share.
struct Queue {
    db: Arc<Database>,
    pending: Mutex<Pending>,
    /// The writer thread waits here for attempts.
    wake: Condvar,
    /// A write in flight ends here.
    written: Condvar,
}

#[derive(Default)]
struct Pending {
    batch: Batch,
    /// The buffers of the batch written last, emptied: the next batch's.
    spare: Batch,
    /// A batch is being written (by the writer thread, a flush or a recording thread).
    writing: bool,
    /// The writer waits for a first attempt (and only then is woken for one).
    idle: bool,
    /// Every [`Ledger`] is gone: the writer writes what is left and ends.
    closed: bool,
}

/// The queue as the ledgers hold it, with the writer thread: the last one dropped writes what
/// waits, on its own thread, and returns once the writer has ended, its connection closed. An app
/// that quits, or opens the same database again, finds every attempt written and no write in flight.
struct Closing {
    queue: Arc<Queue>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Closing {
    fn drop(&mut self) {
        let mut pending = self.queue.write_waiting(lock(&self.queue));
        pending.closed = true;
        drop(pending);
        self.queue.wake.notify_one();
        if let Some(writer) = self.writer.take() {
            // A writer that panicked has nothing left to write: the batch was written above.
            let _ = writer.join();
        }
    }
}

fn lock(queue: &Queue) -> MutexGuard<'_, Pending> {
    // A writer that panicked mid-batch leaves rows that are still rows.
    queue.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Ledger {
    /// A ledger writing into `db` from a thread of its own.
    pub fn start(db: Arc<Database>) -> Ledger {
        let queue = Arc::new(Queue::new(db));
        let writer = queue.clone();
        let spawned = std::thread::Builder::new().name("keypool-ledger".into()).spawn(move || {
            lower_this_threads_priority();
            write(&writer)
        });
        match spawned {
            Ok(writer) => Ledger { queue: Some(Arc::new(Closing { queue, writer: Some(writer) })) },
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
        let queue = &queue.queue;
        let mut pending = lock(queue);
        pending.batch.push(attempt);
        let rows = pending.batch.len();
        if rows >= BEHIND {
            drop(queue.write_waiting(pending));
        } else if (pending.idle && rows == 1) || rows == BATCH {
            drop(pending);
            queue.wake.notify_one();
        }
    }

    /// Writes every attempt recorded so far, on this thread, once a write in flight has ended.
    pub fn flush(&self) {
        let Some(queue) = &self.queue else { return };
        drop(queue.queue.write_waiting(lock(&queue.queue)));
    }
}

impl Queue {
    fn new(db: Arc<Database>) -> Queue {
        Queue { db, pending: Mutex::default(), wake: Condvar::new(), written: Condvar::new() }
    }

    /// Writes the attempts waiting, once no other write is in flight, in one transaction. The
    /// lock is let go while the database is written, and held again when this returns.
    fn write_waiting<'a>(&'a self, mut pending: MutexGuard<'a, Pending>) -> MutexGuard<'a, Pending> {
        while pending.writing {
            pending = self.written.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if pending.batch.is_empty() {
            return pending;
        }
        let spare = std::mem::take(&mut pending.spare);
        let mut batch = std::mem::replace(&mut pending.batch, spare);
        pending.writing = true;
        drop(pending);
        let attempts = batch.attempts();
        let written = self.db.lock().and_then(|mut conn| Ok(usage::record(&mut conn, &attempts)?));
        if let Err(error) = written {
            tracing::error!(%error, attempts = attempts.len(), "could not write usage to the ledger");
        }
        drop(attempts);
        batch.clear();
        let mut pending = lock(self);
        pending.spare = batch;
        pending.writing = false;
        self.written.notify_all();
        pending
    }
}

/// Lowers the calling thread to nice 19 (Linux sets a nice value per thread), the lowest a
/// process may always choose. Elsewhere the thread keeps its priority.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority reads nothing of ours; `who` 0 is the calling thread.
        let lowered = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
        if lowered != 0 {
            tracing::info!(error = %std::io::Error::last_os_error(), "the usage ledger's writer keeps its priority");
        }
    }
}

/// Attempts waiting to be written: each one's numbers, and its text in one buffer.
#[derive(Default)]
struct Batch {
    rows: Vec<Row>,
    text: String,
}

/// An attempt of a [`Batch`]; its text as ranges of the batch's.
struct Row {
    at: i64,
    provider: Span,
    key: Option<Span>,
    model: Span,
    chat: Span,
    source: Span,
    member: Option<Span>,
    outcome: &'static str,
    status: Option<u16>,
    ttft_ms: Option<u64>,
    latency_ms: u64,
    usage: Option<keypool_llm::Usage>,
}

type Span = std::ops::Range<usize>;

impl Batch {
    fn push(&mut self, a: &AttemptRecord) {
        let mut put = |text: &str| {
            let start = self.text.len();
            self.text.push_str(text);
            start..self.text.len()
        };
        let row = Row {
            at: a.at.as_millis(),
            provider: put(a.provider.as_str()),
            key: match &a.key {
                SentWith::PoolKey(key) => Some(put(key.as_str())),
                SentWith::ProviderKey => None,
                SentWith::NoKey => Some(put(usage::NO_KEY)),
            },
            model: put(&a.model),
            chat: put(a.session.as_str()),
            source: put(&a.source),
            member: a.member.as_deref().map(&mut put),
            outcome: a.outcome.as_str(),
            status: a.status,
            ttft_ms: a.first_token_ms,
            latency_ms: a.latency_ms,
            usage: a.usage,
        };
        self.rows.push(row);
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The attempts as the store writes them, their text borrowed.
    fn attempts(&self) -> Vec<AttemptRow<&str>> {
        let text = |span: &Span| &self.text[span.clone()];
        let row = |r: &Row| AttemptRow {
            at: r.at,
            provider_id: text(&r.provider),
            key_id: r.key.as_ref().map(text),
            model: text(&r.model),
            chat_id: Some(text(&r.chat)),
            source: text(&r.source),
            member: r.member.as_ref().map(text),
            outcome: r.outcome,
            status: r.status,
            ttft_ms: r.ttft_ms,
            latency_ms: r.latency_ms,
            input_tokens: r.usage.map(|u| u.input),
            cached_tokens: r.usage.map(|u| u.cached),
            output_tokens: r.usage.map(|u| u.output),
        };
        self.rows.iter().map(row).collect()
    }

    /// Empty, its buffers kept for the next batch.
    fn clear(&mut self) {
        self.rows.clear();
        self.text.clear();
    }
}

/// The writer thread: a batch is what arrives within [`GATHER`] of its first attempt, up to
/// [`BATCH`].
fn write(queue: &Queue) {
    let mut pending = lock(queue);
    loop {
        while pending.batch.is_empty() && !pending.closed {
            pending.idle = true;
            pending = queue.wake.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        pending.idle = false;
        let due = Instant::now() + GATHER;
        while pending.batch.len() < BATCH && !pending.closed {
            let Some(left) = due.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()) else { break };
            pending = queue.wake.wait_timeout(pending, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
        let closed = pending.closed;
        pending = queue.write_waiting(pending);
        if closed && pending.batch.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use keypool::{KeyId, ProviderId, SessionId, Timestamp};
    use keypool_llm::{AttemptOutcome, Usage};

    use super::*;

    const START: i64 = 1_800_000_000_000;

    /// The `i`th attempt: its text and numbers its own.
    fn attempt(i: usize) -> AttemptRecord {
        AttemptRecord {
            at: Timestamp::from_millis(START + i as i64),
            provider: ProviderId::new(format!("provider-{}", i % 3)),
            key: match i % 8 {
                0 => SentWith::ProviderKey,
                4 => SentWith::NoKey,
                _ => SentWith::PoolKey(KeyId::new(format!("key-{i}"))),
            },
            model: format!("model-{}", i % 5).into(),
            session: SessionId::new(format!("chat-{i}")),
            source: format!("client {i}").into(),
            member: i.is_multiple_of(3).then(|| format!("member-{}", i % 2).into()),
            outcome: if i.is_multiple_of(7) { AttemptOutcome::RateLimited } else { AttemptOutcome::Ok },
            status: Some(200),
            first_token_ms: Some(i as u64),
            latency_ms: 10 + i as u64,
            usage: Some(Usage { input: i as u64, cached: 1, output: 2 }),
        }
    }

    fn written(db: &Database) -> Vec<AttemptRow> {
        usage::attempts(&db.lock().unwrap(), None, START, START + 1_000_000).unwrap()
    }

    /// A ledger whose writer thread never runs: what it has written, a recording thread or a
    /// flush wrote.
    fn without_writer(db: Arc<Database>) -> Ledger {
        Ledger { queue: Some(Arc::new(Closing { queue: Arc::new(Queue::new(db)), writer: None })) }
    }

    #[test]
    fn a_recording_thread_writes_the_backlog_when_the_writer_falls_behind() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Database::open(dir.path()).unwrap());
        let ledger = without_writer(db.clone());
        for i in 0..BEHIND - 1 {
            ledger.record(&attempt(i));
        }
        assert!(written(&db).is_empty(), "the attempts wait for the writer");
        ledger.record(&attempt(BEHIND - 1));
        let rows = written(&db);
        assert_eq!(rows.len(), BEHIND, "the thread recording the last one wrote them all");
        let seventh = &rows[7];
        assert_eq!(
            (seventh.provider_id.as_str(), seventh.key_id.as_deref(), seventh.model.as_str()),
            ("provider-1", Some("key-7"), "model-2"),
            "each attempt's own text, from the batch's one buffer"
        );
        assert_eq!((seventh.chat_id.as_deref(), seventh.source.as_str()), (Some("chat-7"), "client 7"));
        assert_eq!((seventh.outcome, seventh.latency_ms, seventh.input_tokens), ("rate_limited", 17, Some(7)));
        assert_eq!(rows[8].key_id, None, "the provider-level key has none");
        assert_eq!(rows[4].key_id.as_deref(), Some(usage::NO_KEY), "an attempt without a key is told apart");

        ledger.record(&attempt(BEHIND));
        ledger.flush();
        assert_eq!(written(&db).len(), BEHIND + 1, "a flush writes what waits, on its own thread");
    }

    #[test]
    fn the_last_ledger_dropped_has_written_everything_and_ended_its_writer() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Database::open(dir.path()).unwrap());
        let ledger = Ledger::start(db.clone());
        let copy = ledger.clone();
        // Fewer than a batch: the writer gathers them for GATHER after the first.
        for i in 0..10 {
            ledger.record(&attempt(i));
        }
        drop(ledger);
        copy.record(&attempt(10));
        drop(copy);
        assert_eq!(written(&db).len(), 11, "written by the time the last ledger is gone");
        assert_eq!(Arc::strong_count(&db), 1, "and the writer's hold on the database with it");
    }

    /// The nice value of this process's thread named `name`, once it runs.
    #[cfg(target_os = "linux")]
    fn nice_of(name: &str) -> Option<i32> {
        std::fs::read_dir("/proc/self/task").ok()?.flatten().find_map(|task| {
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            // The fields after the command's closing parenthesis: state first, nice 17th.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
            (comm.trim() == name).then(|| fields[16].parse().ok()).flatten()
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_writer_runs_at_the_lowest_priority() {
        let dir = tempfile::tempdir().unwrap();
        let _ledger = Ledger::start(Arc::new(Database::open(dir.path()).unwrap()));
        // The thread lowers itself as it starts: wait for that, not for any time to pass.
        let deadline = Instant::now() + Duration::from_secs(10);
        while nice_of("keypool-ledger") != Some(19) {
            assert!(Instant::now() < deadline, "the writer runs at nice 19: {:?}", nice_of("keypool-ledger"));
            std::thread::yield_now();
        }
    }
}
