//! What a member's tasks and its request path share: the state, the queue of writes, the
//! directory of keys, and the recorder told of other members' decisions.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, DisableReason, KeyId, KeyPool, ProviderId, SecretResolver, SessionId, Timestamp};
use keypool_llm::{Recorder, Wake};
use parking_lot::{Mutex, RwLock};
use redis::aio::ConnectionManager;
use tokio::sync::{mpsc, Notify};

use crate::admissions::Admissions;
use crate::directory::Directory;
use crate::layout::{Names, Op, Target};
use crate::mirror::Mirror;
use crate::secret::TeamSecret;

/// Whether an error means the connection is gone (not a refusal of one command).
pub(crate) fn broken(error: &redis::RedisError) -> bool {
    error.is_io_error() || error.is_connection_dropped() || error.is_connection_refusal()
}

/// What the member's tasks and its request path share.
pub(crate) struct Shared {
    pub names: Names,
    /// This member's id in the team: random for every start.
    pub member: String,
    pub secret: TeamSecret,
    pub pool: Arc<KeyPool>,
    pub resolver: Arc<dyn SecretResolver>,
    pub clock: Arc<dyn Clock>,
    pub recorder: Arc<dyn Recorder>,
    pub wake: Mutex<Option<Wake>>,
    pub conn: ConnectionManager,
    pub request_timeout: Duration,
    pub heartbeat: Duration,
    /// Redis answered the last time it was asked, and the member's state was merged since the
    /// last (re)connect. While false the request path does not ask it.
    pub connected: AtomicBool,
    /// The connection broke: the supervisor reconnects at once.
    pub lost: Notify,
    pub stopped: AtomicBool,
    pub seen: Mutex<Seen>,
    pub directory: RwLock<Directory>,
    pub own: Mutex<Own>,
    pub mirror: Mutex<Mirror>,
    pub sessions: Mutex<Sessions>,
    /// Identities of scopes asked for, kept (a MAC per request is cheap, but not free).
    pub scope_ids: Mutex<HashMap<Arc<str>, String>>,
    pub writes: mpsc::UnboundedSender<Write>,
    /// Writes queued and not yet taken by the writer.
    pub queued: AtomicUsize,
    /// Facts that could not be written while Redis was away, written again on reconnect.
    pub backlog: Mutex<VecDeque<Write>>,
    /// How hand-outs went, per path.
    pub admissions: Admissions,
    /// What other members decided, for the recorder once no reading of the directory is held.
    pub told: Mutex<Vec<Told>>,
}

/// A decision of another member, for the member's recorder (which persists it, and may tell
/// more: alerts, the UI). Told once no reading of the directory is held: what the recorder does
/// may reload the pool, which makes the directory rebuild itself, and a rebuild waits for every
/// reading to end (a reading of the same thread's would wait forever).
pub(crate) enum Told {
    Disabled { provider: ProviderId, key: KeyId, reason: DisableReason, at: Timestamp },
    Enabled { provider: ProviderId, key: KeyId, at: Timestamp },
}

/// A reading of the directory ([`Shared::directory`]). When this thread's last reading of it
/// ends, what other members decided meanwhile is told to the recorder. Other threads' readings
/// do not hold it back: a rebuild the recorder causes waits only for them to end.
pub(crate) struct DirectoryRead<'a> {
    guard: Option<parking_lot::RwLockReadGuard<'a, Directory>>,
    shared: &'a Shared,
}

thread_local! {
    /// The members (by address) whose directory this thread is reading, once per reading.
    static READING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'a> DirectoryRead<'a> {
    fn new(guard: parking_lot::RwLockReadGuard<'a, Directory>, shared: &'a Shared) -> Self {
        READING.with(|reading| reading.borrow_mut().push(shared as *const Shared as usize));
        DirectoryRead { guard: Some(guard), shared }
    }
}

impl std::ops::Deref for DirectoryRead<'_> {
    type Target = Directory;

    fn deref(&self) -> &Directory {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl Drop for DirectoryRead<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let me = self.shared as *const Shared as usize;
        let still_reading = READING.with(|reading| {
            let mut reading = reading.borrow_mut();
            if let Some(at) = reading.iter().rposition(|&shared| shared == me) {
                reading.swap_remove(at);
            }
            reading.contains(&me)
        });
        // A reading of this thread's further up: its end tells.
        if !still_reading {
            self.shared.tell_recorder();
        }
    }
}

/// What the heartbeat and the channel said of the others.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub members: usize,
    pub last_change: Option<Timestamp>,
    pub connects: u64,
}

/// A write for the writer task.
#[derive(Debug, Clone)]
pub(crate) enum Write {
    /// Fields merged into a hash by the `MERGE` script, which lives `ttl` without writes.
    Merge { target: Target, fields: Vec<(&'static str, Op, String)>, ttl: Duration },
    /// This member's requests in flight on a scope changed: written as they are when written.
    Reserved { group: String, scope: String },
    /// A conversation's binding, refreshed.
    Bind { session: String, key: String },
}

/// This member's requests in flight, per scope of a group, as the team has been told them.
#[derive(Debug, Default)]
pub(crate) struct Own {
    seq: u64,
    scopes: HashMap<(String, String), OwnScope>,
}

#[derive(Debug)]
pub(crate) struct OwnScope {
    pub scope: Arc<str>,
    /// Bumped with every change, so the team keeps the latest whatever order writes arrive in.
    pub seq: u64,
    pub requests: u64,
    pub tokens: u64,
    /// The team has been told of this scope's count (it had a window): changes are written
    /// until a zero is.
    pub published: bool,
}

impl Own {
    /// One more request in flight on `(group, scope_id)`: its new count and sequence number.
    pub fn reserve(&mut self, group: &str, scope_id: &str, scope: &str, tokens: u64) -> (u64, u64, u64) {
        self.seq += 1;
        let entry = self.scopes.entry((group.to_owned(), scope_id.to_owned())).or_insert_with(|| OwnScope {
            scope: Arc::from(scope),
            seq: 0,
            requests: 0,
            tokens: 0,
            published: false,
        });
        entry.seq = self.seq;
        entry.requests += 1;
        entry.tokens = entry.tokens.saturating_add(tokens);
        (entry.seq, entry.requests, entry.tokens)
    }

    /// A request on `(group, scope_id)` ended: whether the team must be told.
    pub fn release(&mut self, group: &str, scope_id: &str, tokens: u64) -> bool {
        self.seq += 1;
        let key = (group.to_owned(), scope_id.to_owned());
        let Some(entry) = self.scopes.get_mut(&key) else { return false };
        entry.seq = self.seq;
        entry.requests = entry.requests.saturating_sub(1);
        entry.tokens = entry.tokens.saturating_sub(tokens);
        let tell = entry.published;
        if entry.requests == 0 && !tell {
            self.scopes.remove(&key);
        }
        tell
    }

    /// The team now knows the count of `(group, scope_id)`.
    pub fn published(&mut self, group: &str, scope_id: &str) {
        if let Some(entry) = self.scopes.get_mut(&(group.to_owned(), scope_id.to_owned())) {
            entry.published = true;
        }
    }

    /// Whether the team has been told of `(group, scope_id)`'s count.
    pub fn is_published(&self, group: &str, scope_id: &str) -> bool {
        self.scopes.get(&(group.to_owned(), scope_id.to_owned())).is_some_and(|s| s.published)
    }

    /// What to write for `(group, scope_id)` now: `(scope, seq, requests, tokens)`. A zero once
    /// taken is forgotten (the team is being told so).
    pub fn take(&mut self, group: &str, scope_id: &str) -> Option<(Arc<str>, u64, u64, u64)> {
        let key = (group.to_owned(), scope_id.to_owned());
        let entry = self.scopes.get(&key)?;
        let taken = (entry.scope.clone(), entry.seq, entry.requests, entry.tokens);
        if entry.requests == 0 {
            self.scopes.remove(&key);
        }
        Some(taken)
    }

    /// Every scope with requests in flight the team knows of, to write again after a reconnect.
    pub fn published_scopes(&self) -> Vec<(String, String)> {
        self.scopes.iter().filter(|(_, s)| s.published).map(|(k, _)| k.clone()).collect()
    }
}

/// The conversations this member served: their identities back to their ids (a binding message
/// names only the identity), and when each binding was last written.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    by_identity: HashMap<String, (SessionId, ProviderId, Option<Timestamp>)>,
    order: VecDeque<String>,
}

/// The most conversations remembered; past it the oldest are forgotten (their bindings are then
/// only read back when they come again).
const MAX_SESSIONS: usize = 20_000;

impl Sessions {
    /// Remembers `session` (of `provider`) by its `identity`.
    pub fn remember(&mut self, identity: &str, session: &SessionId, provider: &ProviderId) {
        if self.by_identity.contains_key(identity) {
            return;
        }
        self.by_identity.insert(identity.to_owned(), (session.clone(), provider.clone(), None));
        self.order.push_back(identity.to_owned());
        while self.order.len() > MAX_SESSIONS {
            if let Some(old) = self.order.pop_front() {
                self.by_identity.remove(&old);
            }
        }
    }

    pub fn get(&self, identity: &str) -> Option<(SessionId, ProviderId)> {
        self.by_identity.get(identity).map(|(s, p, _)| (s.clone(), p.clone()))
    }

    /// Whether the binding of `identity` is due to be written again at `now` (never written, or
    /// last written `every` ago); marks it written when it is.
    pub fn due(&mut self, identity: &str, every: Duration, now: Timestamp) -> bool {
        let Some((_, _, written)) = self.by_identity.get_mut(identity) else { return true };
        let due = written.is_none_or(|at| now.saturating_duration_since(at) >= every);
        if due {
            *written = Some(now);
        }
        due
    }
}

impl Shared {
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// Redis did not answer: the request path stops asking it, and the supervisor reconnects.
    pub fn lose_connection(&self) {
        if self.connected.swap(false, Ordering::AcqRel) {
            tracing::warn!(member = %self.member, "team: Redis is not reachable; deciding alone until it is back");
        }
        self.lost.notify_one();
    }

    /// Queues `write` for the writer (dropped when far too many are waiting: the team is then
    /// told again after the next reconnect, or by the next lesson).
    pub fn queue(&self, write: Write) {
        if self.queued.load(Ordering::Relaxed) >= MAX_QUEUED {
            return;
        }
        self.queued.fetch_add(1, Ordering::Relaxed);
        if self.writes.send(write).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Wakes the service's requests waiting for a key.
    pub fn wake(&self) {
        if let Some(wake) = self.wake.lock().as_ref() {
            wake();
        }
    }

    /// The identity of `scope`.
    pub fn scope_id(&self, scope: &str) -> String {
        let mut ids = self.scope_ids.lock();
        if let Some(id) = ids.get(scope) {
            return id.clone();
        }
        let id = self.secret.scope_identity(scope);
        if ids.len() >= 4096 {
            ids.clear();
        }
        ids.insert(Arc::from(scope), id.clone());
        drop(ids);
        self.mirror.lock().name_scope(&id, scope);
        id
    }

    /// The directory, rebuilt first if the pool loaded since; what the team said before of keys
    /// new to it is applied then.
    pub fn directory(&self) -> DirectoryRead<'_> {
        {
            let directory = self.directory.read();
            if !directory.stale(&self.pool) {
                return DirectoryRead::new(directory, self);
            }
        }
        let arrived = {
            let mut directory = self.directory.write();
            if !directory.stale(&self.pool) {
                None
            } else {
                Some(directory.rebuild(&self.pool, &*self.resolver, &self.secret))
            }
        };
        let directory = DirectoryRead::new(self.directory.read(), self);
        if let Some(arrived) = arrived {
            self.apply_arrived(&directory, &arrived);
        }
        directory
    }

    /// Tells the recorder what other members decided since it was last told.
    pub fn tell_recorder(&self) {
        loop {
            let told = std::mem::take(&mut *self.told.lock());
            if told.is_empty() {
                return;
            }
            for told in told {
                match told {
                    Told::Disabled { provider, key, reason, at } => {
                        self.recorder.key_disabled(&provider, &key, reason, at)
                    }
                    Told::Enabled { provider, key, at } => self.recorder.key_enabled(&provider, &key, at),
                }
            }
        }
    }
}

/// The most writes waiting for the writer.
const MAX_QUEUED: usize = 100_000;
