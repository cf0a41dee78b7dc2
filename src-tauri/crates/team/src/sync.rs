//! The member's three tasks: the supervisor (connects, reconnects with backoff, merges the team's
//! state on every connect, beats), the writer (pipelines the queued writes in order), and the
//! receiver (applies what the channel brings).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use redis::{PushInfo, PushKind, Value};
use serde::Deserialize;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::layout::{self, field, Op, Target};
use crate::layout::{current_windows, millis, SCOPE_TTL};
use crate::mirror::LIVE;
use crate::scripts::{self, BEAT_SCRIPT, BIND_SCRIPT, MERGE_SCRIPT, READ_SCRIPT};
use crate::shared::{broken, Shared, Write};

/// The first wait before reconnecting; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a (re)connect with its read-back may take.
const RESYNC_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one batch of writes, or a heartbeat, may take before the connection counts as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// The most writes in one pipeline.
const BATCH: usize = 256;
/// The most facts kept to write again after a reconnect.
const MAX_BACKLOG: usize = 4096;
/// The most keys read back after a (re)connect.
const MAX_READ_BACK: usize = 200_000;
/// Members not seen for this long are dropped from the members' set.
const FORGET: Duration = Duration::from_secs(600);

/// Connects, and reconnects whenever the connection is lost, with backoff; beats while connected.
pub(crate) async fn supervise(shared: Arc<Shared>, stop: CancellationToken) {
    let mut backoff = MIN_BACKOFF;
    let mut subscribed = false;
    loop {
        if !shared.is_connected() {
            let joined = tokio::select! {
                joined = tokio::time::timeout(RESYNC_TIMEOUT, resync(&shared, &mut subscribed)) => joined,
                _ = stop.cancelled() => return,
            };
            match joined {
                Ok(Ok(())) => {
                    shared.seen.lock().connects += 1;
                    shared.connected.store(true, Ordering::Release);
                    backoff = MIN_BACKOFF;
                    tracing::info!(member = %shared.member, "team: connected");
                }
                failed => {
                    if let Ok(Err(error)) = failed {
                        tracing::debug!(%error, "team: Redis is not reachable yet");
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = stop.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(shared.heartbeat) => {}
            _ = shared.lost.notified() => continue,
            _ = stop.cancelled() => return,
        }
        if !shared.is_connected() {
            continue;
        }
        // Keys the pool loaded since (without a request through the team) get what the team
        // said of them.
        drop(shared.directory());
        match tokio::time::timeout(WRITE_TIMEOUT, beat(&shared)).await {
            Ok(Ok(())) => refresh_reserved(&shared),
            Ok(Err(error)) if !broken(&error) => tracing::debug!(%error, "team: the heartbeat was refused"),
            _ => shared.lose_connection(),
        }
    }
}

/// One (re)connect: the scripts loaded, the member seen, its own requests in flight and what it
/// could not write meanwhile written, the channel subscribed, and the team's state read back.
async fn resync(shared: &Shared, subscribed: &mut bool) -> redis::RedisResult<()> {
    let mut conn = shared.conn.clone();
    let mut load = redis::pipe();
    for script in scripts::all() {
        load.load_script(script);
    }
    load.query_async::<Vec<String>>(&mut conn).await?;
    if !*subscribed {
        conn.subscribe(shared.names.channel()).await?;
        *subscribed = true;
    }
    beat(shared).await?;
    let mut writes: Vec<Write> = shared.backlog.lock().drain(..).collect();
    writes.extend(
        shared.own.lock().published_scopes().into_iter().map(|(group, scope)| Write::Reserved { group, scope }),
    );
    for batch in writes.chunks(BATCH) {
        pipeline(shared, batch).query_async::<()>(&mut conn).await?;
    }
    read_back(shared).await?;
    refresh_reserved(shared);
    Ok(())
}

/// Reads every hash of the team and applies it.
async fn read_back(shared: &Shared) -> redis::RedisResult<()> {
    let mut conn = shared.conn.clone();
    let mut cursor: u64 = 0;
    let mut read = 0usize;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(shared.names.pattern())
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await?;
        let targets: Vec<(String, Target)> = keys
            .into_iter()
            .filter_map(|key| shared.names.target(&key).map(|target| (key, target)))
            .filter(|(_, target)| !matches!(target, Target::Binding(_)))
            .collect();
        for chunk in targets.chunks(100) {
            let mut invocation = READ_SCRIPT.prepare_invoke();
            for (key, _) in chunk {
                invocation.key(key);
            }
            let hashes: Vec<Value> = invocation.invoke_async(&mut conn).await?;
            let directory = shared.directory();
            for ((_, target), hash) in chunk.iter().zip(hashes) {
                let fields = pairs(hash);
                if !fields.is_empty() {
                    shared.apply(&directory, target, &fields);
                }
            }
        }
        read += 1000;
        cursor = next;
        if cursor == 0 || read >= MAX_READ_BACK {
            return Ok(());
        }
    }
}

/// A hash's fields from `HGETALL`'s flat list (or a RESP3 map), text only.
fn pairs(value: Value) -> Vec<(String, String)> {
    let text = |value: Value| match value {
        Value::BulkString(bytes) => String::from_utf8(bytes).ok(),
        Value::SimpleString(text) => Some(text),
        _ => None,
    };
    match value {
        Value::Array(items) => {
            let mut items = items.into_iter();
            let mut out = Vec::new();
            while let (Some(name), Some(value)) = (items.next(), items.next()) {
                if let (Some(name), Some(value)) = (text(name), text(value)) {
                    out.push((name, value));
                }
            }
            out
        }
        Value::Map(entries) => {
            entries.into_iter().filter_map(|(name, value)| Some((text(name)?, text(value)?))).collect()
        }
        _ => Vec::new(),
    }
}

/// The member's heartbeat; remembers who else is there.
async fn beat(shared: &Shared) -> redis::RedisResult<()> {
    let now = shared.clock.now();
    let mut conn = shared.conn.clone();
    let members: Vec<String> = BEAT_SCRIPT
        .key(shared.names.members())
        .arg(&shared.member)
        .arg(now.as_millis())
        .arg((now - LIVE).as_millis())
        .arg((now - FORGET).as_millis())
        .arg(millis(FORGET))
        .invoke_async(&mut conn)
        .await?;
    let mut mirror = shared.mirror.lock();
    let mut unique = HashSet::new();
    for member in members.iter().filter(|m| m.len() <= 64) {
        if unique.insert(member.as_str()) {
            mirror.heard(member, now);
        }
    }
    shared.seen.lock().members = unique.len();
    Ok(())
}

/// Tells the pool again what the other live members hold in flight, so the counts it holds do
/// not lapse, and those of members gone quiet are dropped.
fn refresh_reserved(shared: &Shared) {
    let now = shared.clock.now();
    let scopes = shared.mirror.lock().reserved_scopes();
    if scopes.is_empty() {
        return;
    }
    let directory = shared.directory();
    let mut changed = false;
    for (group, scope) in scopes {
        changed |= shared.merge_reserved(&directory, &group, &scope, now);
    }
    if changed {
        shared.wake();
    }
}

/// Takes the queued writes in order, a pipeline of them at a time.
pub(crate) async fn write(shared: Arc<Shared>, mut queue: UnboundedReceiver<Write>, stop: CancellationToken) {
    loop {
        let first = tokio::select! {
            write = queue.recv() => match write {
                Some(write) => write,
                None => return,
            },
            _ = stop.cancelled() => return,
        };
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match queue.try_recv() {
                Ok(write) => batch.push(write),
                Err(_) => break,
            }
        }
        shared.queued.fetch_sub(batch.len(), Ordering::Relaxed);
        if !shared.is_connected() {
            keep(&shared, batch);
            continue;
        }
        let mut conn = shared.conn.clone();
        let sent = tokio::time::timeout(WRITE_TIMEOUT, pipeline(&shared, &batch).query_async::<()>(&mut conn)).await;
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(error)) if !broken(&error) && error.code() != Some("NOSCRIPT") => {
                tracing::debug!(%error, "team: Redis refused a write");
            }
            _ => {
                shared.lose_connection();
                keep(&shared, batch);
            }
        }
    }
}

/// Keeps the facts of `batch` to write after the reconnect (counts in flight are written as they
/// are then, and bindings are refreshed by the next request).
fn keep(shared: &Shared, batch: Vec<Write>) {
    let mut backlog = shared.backlog.lock();
    for write in batch {
        if matches!(write, Write::Merge { .. }) {
            if backlog.len() >= MAX_BACKLOG {
                backlog.pop_front();
            }
            backlog.push_back(write);
        }
    }
}

/// The pipeline of `batch`: each write through its script; this member's counts in flight as
/// they are now, once per scope.
fn pipeline(shared: &Shared, batch: &[Write]) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    let mut counted = HashSet::new();
    for write in batch {
        match write {
            Write::Merge { target, fields, ttl } => {
                let mut invocation = MERGE_SCRIPT.prepare_invoke();
                invocation
                    .key(shared.names.key(target))
                    .arg(&shared.member)
                    .arg(shared.names.channel())
                    .arg(target.suffix())
                    .arg(millis(*ttl));
                let suffix = target.suffix();
                for (name, op, value) in fields {
                    invocation.arg(*name).arg(op.as_str()).arg(shared.secret.seal(&suffix, name, value));
                }
                pipe.invoke_script(&invocation).ignore();
            }
            Write::Reserved { group, scope } => {
                if !counted.insert((group, scope)) {
                    continue;
                }
                let Some((text, seq, requests, tokens)) = shared.own.lock().take(group, scope) else { continue };
                let target = Target::Scope(group.clone(), scope.clone());
                let name = format!("{}{}", field::RESERVED, shared.member);
                let mut invocation = MERGE_SCRIPT.prepare_invoke();
                invocation
                    .key(shared.names.key(&target))
                    .arg(&shared.member)
                    .arg(shared.names.channel())
                    .arg(target.suffix())
                    .arg(millis(SCOPE_TTL))
                    .arg(field::SCOPE)
                    .arg(Op::Set.as_str())
                    .arg(shared.secret.seal(&target.suffix(), field::SCOPE, &text))
                    .arg(&name)
                    .arg(Op::Max.as_str())
                    .arg(shared.secret.seal(&target.suffix(), &name, &layout::reserved(seq, requests, tokens)));
                // As with `ADMIT`: the count, read first, comes with the windows the requests it
                // no longer counts announced.
                for (window, value) in shared.windows_of(group, &text) {
                    invocation.arg(window).arg(Op::Window.as_str()).arg(shared.secret.seal(
                        &target.suffix(),
                        window,
                        &value,
                    ));
                }
                pipe.invoke_script(&invocation).ignore();
            }
            Write::Bind { session, key } => {
                let target = Target::Binding(session.clone());
                let mut invocation = BIND_SCRIPT.prepare_invoke();
                invocation
                    .key(shared.names.key(&target))
                    .arg(&shared.member)
                    .arg(shared.names.channel())
                    .arg(target.suffix())
                    .arg(millis(shared.pool.binding_idle()))
                    .arg(shared.secret.seal(&target.suffix(), field::BOUND, key));
                pipe.invoke_script(&invocation).ignore();
            }
        }
    }
    pipe
}

impl Shared {
    /// The windows this member's pool holds for `scope` of `group` that have not refilled, as the
    /// team stores them.
    fn windows_of(&self, group: &str, scope: &str) -> Vec<(&'static str, String)> {
        let now = self.clock.now();
        let key = self.directory().group(group).first().cloned();
        let facts = key.and_then(|key| self.pool.facts(&key, Some(scope), now)).and_then(|facts| facts.scope);
        facts.map(|facts| current_windows(&facts, now)).unwrap_or_default()
    }
}

/// One message of the team's channel.
#[derive(Deserialize)]
struct Message {
    m: String,
    k: String,
    f: std::collections::HashMap<String, String>,
}

/// The longest message read; anything longer is not one of ours.
const MAX_MESSAGE: usize = 64 * 1024;

/// Applies what the channel brings; a dropped connection is the supervisor's to mend.
pub(crate) async fn receive(shared: Arc<Shared>, mut pushed: UnboundedReceiver<PushInfo>, stop: CancellationToken) {
    loop {
        let push = tokio::select! {
            push = pushed.recv() => match push {
                Some(push) => push,
                None => return,
            },
            _ = stop.cancelled() => return,
        };
        match push.kind {
            PushKind::Disconnection => shared.lose_connection(),
            PushKind::Message => {
                if let Some(Value::BulkString(payload)) = push.data.get(1) {
                    take(&shared, payload);
                }
            }
            _ => {}
        }
    }
}

/// Applies one message, if it is one of another member's.
fn take(shared: &Shared, payload: &[u8]) {
    if payload.len() > MAX_MESSAGE {
        return;
    }
    let Ok(message) = serde_json::from_slice::<Message>(payload) else { return };
    if message.m == shared.member || message.m.len() > 64 {
        return;
    }
    let Some(target) = Target::parse(&message.k) else { return };
    let now = shared.clock.now();
    shared.mirror.lock().heard(&message.m, now);
    let fields: Vec<(String, String)> = message.f.into_iter().collect();
    let directory = shared.directory();
    shared.apply(&directory, &target, &fields);
    shared.seen.lock().last_change = Some(now);
    // Names only: the Redis key is made of identities, and the values are not logged.
    let names: Vec<&str> = fields.iter().map(|(field, _)| field.as_str()).collect();
    tracing::debug!(redis_key = %message.k, fields = ?names, "team: applied another member's change");
}
