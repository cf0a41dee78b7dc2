//! The team's ledger (`ledger = "postgres://…"`): every replica's attempts in one Postgres, beside
//! each replica's own SQLite ledger, which goes on as before (the key views, retention).
//!
//! The request's thread only pushes the attempt's record (reference-counted names, no copy of
//! their text) into a bounded queue. A writer thread of its own (a small Tokio runtime, one
//! connection) takes a batch (up to [`BATCH`] rows, gathered for [`GATHER`] after the first),
//! names it (a provider by its name, a key by its team identity and label, never its value),
//! numbers it and ships it in one statement. While Postgres cannot take a batch, it goes to the
//! store's outbox, and while the outbox holds rows every new batch goes there too, behind them:
//! once Postgres answers again the outbox is shipped oldest first, each batch deleted only after
//! Postgres committed it.
//!
//! Each row once: a row's key in Postgres is the replica's id and the row's number, numbers come
//! from blocks reserved in the store before use (a restart never reuses one), and a batch shipped
//! again (Postgres committed, the answer was lost or late) adds nothing (`ON CONFLICT DO
//! NOTHING`). Nothing lost: a full queue ([`QUEUE`]) is written to the outbox by the recording
//! thread; at stop ([`TeamLedger::close`]) the writer ships or keeps what waits, and what it had
//! not finished by the deadline is kept in the outbox by the closing thread, the batch in flight
//! included (shipped again at the next start, and counted once). A SIGKILL loses what was in the
//! queue, as it does for the SQLite ledger.

pub mod postgres;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use keypool::{Clock, KeyId, ProviderId};
use keypool_api::service::LedgerRow;
use keypool_api::AppContext;
use keypool_llm::{AttemptRecord, SentWith};
use keypool_team::Allowance;

use crate::observe::Observe;
pub use postgres::{LedgerError, Postgres};

/// The writer ships this many rows at once at most.
const BATCH: usize = 512;
/// How long the writer gathers a batch after its first row.
const GATHER: Duration = Duration::from_millis(50);
/// With this many rows waiting, the recording thread keeps them in the outbox itself.
const QUEUE: usize = 16 * BATCH;
/// Attempt numbers reserved in the store at once.
const NUMBERS: i64 = 4096;
/// The longest one shipment may take before it counts as failed (its rows then go to the
/// outbox; had Postgres committed them, shipping them again adds nothing).
const SHIP_TIMEOUT: Duration = Duration::from_secs(10);
/// Between two tries to reach Postgres: doubled from the first to the last.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_LAST: Duration = Duration::from_secs(5);
/// How often the partitions are made ahead and the old ones dropped.
const MAINTAIN: Duration = Duration::from_secs(3600);

/// `ledger` and `ledger_retention_months` of the config, read.
#[derive(Clone)]
pub struct LedgerConfig {
    /// The URL, its `$NAME`s read from the environment.
    pub url: String,
    /// The months kept before the current one; all when `None`.
    pub retention_months: Option<u32>,
}

impl std::fmt::Debug for LedgerConfig {
    /// Without the URL's user and password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LedgerConfig")
            .field("server", &server_of(&self.url))
            .field("retention_months", &self.retention_months)
            .finish()
    }
}

/// The Postgres server of `url` as a log line may name it: host, port and database.
pub fn server_of(url: &str) -> String {
    let Ok(config) = url.parse::<tokio_postgres::Config>() else { return "?".to_owned() };
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or_default())
}

/// The team ledger of this replica: an observer of every attempt, and the writer shipping them.
/// Cheap to clone.
#[derive(Clone)]
pub struct TeamLedger {
    inner: Arc<Inner>,
}

struct Inner {
    config: LedgerConfig,
    /// This replica's id (`server-replica-id`).
    replica: String,
    queue: Mutex<Vec<AttemptRecord>>,
    /// The writer waits here for rows.
    wake: tokio::sync::Notify,
    closing: AtomicBool,
    attached: OnceLock<Attached>,
    /// The batch being shipped, kept by [`TeamLedger::close`] if the writer does not finish.
    in_flight: Mutex<Option<Arc<Vec<LedgerRow>>>>,
    /// The writer's end, told once it has shipped or kept everything.
    ended: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    /// Rows in the outbox (as the writer and the recording threads last left it).
    outbox: AtomicU64,
    /// Rows Postgres committed that it did not have.
    shipped: AtomicU64,
    connected: AtomicBool,
}

/// What naming and numbering rows needs, from [`TeamLedger::attach`] on.
struct Attached {
    context: Weak<AppContext>,
    allowance: Option<Arc<Allowance>>,
    names: Mutex<Names>,
    numbers: Mutex<Numbers>,
}

/// Names learnt from the store: providers by id, keys by id (their team identity and label).
#[derive(Default)]
struct Names {
    providers: HashMap<ProviderId, String>,
    keys: HashMap<KeyId, (String, Option<String>)>,
}

/// The reserved block of attempt numbers: `next..end`.
#[derive(Default)]
struct Numbers {
    next: i64,
    end: i64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl TeamLedger {
    /// A ledger for replica `replica`, recording from now on; it ships once attached.
    pub fn new(config: LedgerConfig, replica: String) -> TeamLedger {
        TeamLedger {
            inner: Arc::new(Inner {
                config,
                replica,
                queue: Mutex::new(Vec::with_capacity(BATCH)),
                wake: tokio::sync::Notify::new(),
                closing: AtomicBool::new(false),
                attached: OnceLock::new(),
                in_flight: Mutex::new(None),
                ended: Mutex::new(None),
                outbox: AtomicU64::new(0),
                shipped: AtomicU64::new(0),
                connected: AtomicBool::new(false),
            }),
        }
    }

    /// Starts the writer: names come from `context`'s store (and a key's team identity from
    /// `allowance`), the outbox is its store's.
    pub fn attach(&self, context: &Arc<AppContext>, allowance: Option<Arc<Allowance>>) -> Result<(), String> {
        let waiting = context.ledger_outbox().and_then(|outbox| outbox.waiting()).map_err(|e| e.to_string())?;
        self.inner.outbox.store(waiting, Ordering::SeqCst);
        let attached = Attached {
            context: Arc::downgrade(context),
            allowance,
            names: Mutex::default(),
            numbers: Mutex::default(),
        };
        if self.inner.attached.set(attached).is_err() {
            return Ok(());
        }
        let (end, ended) = tokio::sync::oneshot::channel();
        *lock(&self.inner.ended) = Some(ended);
        let inner = self.inner.clone();
        std::thread::Builder::new()
            .name("keypool-team-ledger".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime.block_on(write(&inner)),
                    Err(error) => tracing::error!(%error, "the team ledger's writer has no runtime"),
                }
                let _ = end.send(());
            })
            .map_err(|e| format!("the team ledger's writer: {e}"))?;
        tracing::info!(
            server = %server_of(&self.inner.config.url),
            waiting,
            "the team ledger is Postgres; rows that cannot reach it wait in the store"
        );
        Ok(())
    }

    /// Ships or keeps everything recorded so far and ends the writer, waiting for it up to
    /// `limit`; whatever it had not finished then (the batch in flight too) is kept in the outbox
    /// here, to be shipped at the next start.
    pub async fn close(&self, limit: Duration) {
        self.inner.closing.store(true, Ordering::SeqCst);
        self.inner.wake.notify_one();
        let ended = lock(&self.inner.ended).take();
        if let Some(ended) = ended {
            if tokio::time::timeout(limit, ended).await.is_ok() {
                return;
            }
            tracing::warn!(
                "the team ledger's writer did not finish within {} s: its rows wait in the store",
                limit.as_secs()
            );
        }
        let in_flight = lock(&self.inner.in_flight).take();
        if let Some(rows) = in_flight {
            self.inner.keep(&rows);
        }
        let records = std::mem::take(&mut *lock(&self.inner.queue));
        self.inner.keep_records(records);
    }

    /// The ledger's samples for `/metrics`.
    pub fn render(&self, out: &mut String) {
        let inner = &self.inner;
        let _ = writeln!(out, "# HELP keypool_ledger_outbox_rows Attempts waiting in the store for the team ledger.");
        let _ = writeln!(out, "# TYPE keypool_ledger_outbox_rows gauge");
        let _ = writeln!(out, "keypool_ledger_outbox_rows {}", inner.outbox.load(Ordering::SeqCst));
        let _ = writeln!(out, "# HELP keypool_ledger_shipped_total Attempts the team ledger committed.");
        let _ = writeln!(out, "# TYPE keypool_ledger_shipped_total counter");
        let _ = writeln!(out, "keypool_ledger_shipped_total {}", inner.shipped.load(Ordering::SeqCst));
        let _ = writeln!(out, "# HELP keypool_ledger_connected 1 while the team ledger's Postgres is connected.");
        let _ = writeln!(out, "# TYPE keypool_ledger_connected gauge");
        let _ = writeln!(out, "keypool_ledger_connected {}", u8::from(inner.connected.load(Ordering::SeqCst)));
    }
}

impl Observe for TeamLedger {
    fn attempted(&self, record: &AttemptRecord) {
        let mut queue = lock(&self.inner.queue);
        queue.push(record.clone());
        let waiting = queue.len();
        if waiting >= QUEUE && self.inner.attached.get().is_some() {
            let records = std::mem::take(&mut *queue);
            drop(queue);
            self.inner.keep_records(records);
            self.inner.wake.notify_one();
        } else if waiting == 1 || waiting == BATCH {
            drop(queue);
            self.inner.wake.notify_one();
        }
    }
}

impl Inner {
    /// `records` as rows, named and numbered (empty before [`TeamLedger::attach`], or when the
    /// store cannot number them: then they are logged as lost).
    fn rows(&self, records: Vec<AttemptRecord>) -> Vec<LedgerRow> {
        let Some(attached) = self.attached.get() else { return Vec::new() };
        if records.is_empty() {
            return Vec::new();
        }
        let Some(context) = attached.context.upgrade() else { return Vec::new() };
        let first = {
            let mut numbers = lock(&attached.numbers);
            let wanted = records.len() as i64;
            if numbers.end - numbers.next < wanted {
                let block = NUMBERS.max(wanted);
                match context.ledger_outbox().and_then(|outbox| outbox.reserve(block)) {
                    Ok(first) => *numbers = Numbers { next: first, end: first + block },
                    Err(error) => {
                        tracing::error!(%error, rows = records.len(), "the team ledger's rows could not be numbered: they are lost");
                        return Vec::new();
                    }
                }
            }
            numbers.next += wanted;
            numbers.next - wanted
        };
        let mut names = lock(&attached.names);
        records
            .into_iter()
            .enumerate()
            .map(|(i, record)| {
                let provider = names.provider(&context, &record.provider);
                let (key_identity, key_label) = match &record.key {
                    SentWith::PoolKey(key) => {
                        let (identity, label) =
                            names.key(&context, attached.allowance.as_deref(), &record.provider, key);
                        (Some(identity), label)
                    }
                    SentWith::ProviderKey => (None, None),
                    SentWith::NoKey => (Some(keypool_store::usage::NO_KEY.to_owned()), None),
                };
                LedgerRow {
                    seq: first + i as i64,
                    at: record.at.as_millis(),
                    provider: text(&provider),
                    key_identity,
                    key_label: key_label.as_deref().map(text),
                    model: text(&record.model),
                    source: text(&record.source),
                    member: record.member.as_deref().map(text),
                    outcome: record.outcome.as_str().to_owned(),
                    status: record.status,
                    ttft_ms: record.first_token_ms,
                    latency_ms: record.latency_ms,
                    input_tokens: record.usage.map(|u| u.input),
                    cached_tokens: record.usage.map(|u| u.cached),
                    output_tokens: record.usage.map(|u| u.output),
                }
            })
            .collect()
    }

    /// Keeps `rows` in the outbox.
    fn keep(&self, rows: &[LedgerRow]) {
        if rows.is_empty() {
            return;
        }
        let kept = self
            .attached
            .get()
            .and_then(|attached| attached.context.upgrade())
            .ok_or_else(|| "the store is closed".to_owned())
            .and_then(|context| context.ledger_outbox().and_then(|o| o.keep(rows)).map_err(|e| e.to_string()));
        match kept {
            Ok(()) => {
                self.outbox.fetch_add(rows.len() as u64, Ordering::SeqCst);
            }
            Err(error) => {
                tracing::error!(%error, rows = rows.len(), "the team ledger's rows could not be kept: they are lost")
            }
        }
    }

    fn keep_records(&self, records: Vec<AttemptRecord>) {
        self.keep(&self.rows(records));
    }

    fn context(&self) -> Option<Arc<AppContext>> {
        self.attached.get()?.context.upgrade()
    }
}

/// `name` as Postgres' text can hold it: a NUL (a client may send one in a model's name) would
/// fail its batch, and every batch queued behind it, for good.
fn text(name: &str) -> String {
    name.replace('\0', "\u{FFFD}")
}

impl Names {
    fn provider(&mut self, context: &AppContext, id: &ProviderId) -> String {
        if !self.providers.contains_key(id) {
            let listed = context.providers().and_then(|providers| providers.list()).unwrap_or_default();
            self.providers.extend(listed.into_iter().map(|p| (ProviderId::new(p.id), p.name)));
        }
        self.providers.get(id).cloned().unwrap_or_else(|| id.to_string())
    }

    /// A key's team identity (`local:` and its id without a team, or while the team does not
    /// know it yet: then it is asked again next time) and its label.
    fn key(
        &mut self,
        context: &AppContext,
        allowance: Option<&Allowance>,
        provider: &ProviderId,
        key: &KeyId,
    ) -> (String, Option<String>) {
        if let Some(known) = self.keys.get(key) {
            return known.clone();
        }
        let label = context
            .keys()
            .and_then(|keys| keys.list(provider.as_str()))
            .ok()
            .and_then(|list| list.into_iter().find(|k| k.id == key.as_str()))
            .and_then(|k| k.label);
        let identity = match allowance {
            // Without a team, its id is all there is.
            None => Some(format!("local:{key}")),
            Some(allowance) => allowance.key_identity(key),
        };
        match identity {
            Some(identity) => {
                self.keys.insert(key.clone(), (identity.clone(), label.clone()));
                (identity, label)
            }
            // The team does not know it yet: asked again next time.
            None => (format!("local:{key}"), label),
        }
    }
}

/// The writer: batches from the queue, shipped or kept; the outbox shipped whenever Postgres
/// answers; the partitions kept up.
async fn write(inner: &Inner) {
    let mut link: Option<Postgres> = None;
    let mut retry = RETRY_FIRST;
    let mut next_try = Instant::now();
    let mut maintained: Option<Instant> = None;
    let mut outage_logged = false;
    loop {
        let closing = inner.closing.load(Ordering::SeqCst);
        if !closing && lock(&inner.queue).is_empty() {
            let waiting = inner.outbox.load(Ordering::SeqCst) > 0 || link.is_none();
            let nap =
                if waiting { next_try.saturating_duration_since(Instant::now()).max(RETRY_FIRST) } else { MAINTAIN };
            let _ = tokio::time::timeout(nap, inner.wake.notified()).await;
        }
        if !inner.closing.load(Ordering::SeqCst) && !lock(&inner.queue).is_empty() {
            let due = Instant::now() + GATHER;
            while lock(&inner.queue).len() < BATCH && !inner.closing.load(Ordering::SeqCst) {
                let left = due.saturating_duration_since(Instant::now());
                if left.is_zero() || tokio::time::timeout(left, inner.wake.notified()).await.is_err() {
                    break;
                }
            }
        }
        let records: Vec<AttemptRecord> = {
            let mut queue = lock(&inner.queue);
            let take = queue.len().min(BATCH);
            queue.drain(..take).collect()
        };
        let rows = inner.rows(records);

        if link.as_ref().is_some_and(Postgres::is_closed) {
            link = None;
        }
        if link.is_none() && Instant::now() >= next_try {
            match Postgres::connect(&inner.config.url).await {
                Ok(connected) => {
                    tracing::info!(server = %server_of(&inner.config.url), "the team ledger's Postgres is connected");
                    link = Some(connected);
                    outage_logged = false;
                }
                Err(error) => {
                    if !outage_logged {
                        tracing::warn!(%error, "the team ledger's Postgres cannot be reached: rows wait in the store");
                        outage_logged = true;
                    }
                    next_try = Instant::now() + retry;
                    retry = (retry * 2).min(RETRY_LAST);
                }
            }
        }
        if let Some(postgres) = link.as_mut() {
            if maintained.is_none_or(|at| at.elapsed() >= MAINTAIN) {
                let now = keypool_api::SystemClock.now().as_millis();
                maintained = Some(Instant::now());
                match postgres.maintain(now, inner.config.retention_months).await {
                    Ok(dropped) => {
                        for partition in dropped {
                            tracing::info!(partition, "the team ledger dropped a month past its retention");
                        }
                    }
                    Err(error) => tracing::warn!(%error, "the team ledger's partitions could not be kept up"),
                }
            }
        }
        inner.connected.store(link.is_some(), Ordering::SeqCst);
        let linked = link.is_some();

        if !rows.is_empty() {
            let direct = link.is_some() && inner.outbox.load(Ordering::SeqCst) == 0;
            let rows = Arc::new(rows);
            let shipped = direct && ship(inner, &mut link, &rows).await.is_ok();
            if !shipped {
                inner.keep(&rows);
            }
        }
        // The outbox, oldest first, a batch at a time (new rows queue behind it meanwhile).
        let drained = match link.is_some() && inner.outbox.load(Ordering::SeqCst) > 0 {
            true => ship_oldest(inner, &mut link).await,
            false => Ok(()),
        };
        // A link that took its rows keeps the first delay; one that connected and then failed
        // waits as a failed connection does (Postgres is not hammered with reconnections).
        if link.is_some() {
            retry = RETRY_FIRST;
        } else if linked {
            next_try = Instant::now() + retry;
            retry = (retry * 2).min(RETRY_LAST);
        }
        inner.connected.store(link.is_some(), Ordering::SeqCst);
        if inner.closing.load(Ordering::SeqCst) && lock(&inner.queue).is_empty() {
            let more = link.is_some() && inner.outbox.load(Ordering::SeqCst) > 0;
            if !more || drained.is_err() {
                return;
            }
        }
    }
}

/// Ships the oldest batch of the outbox and deletes it there once Postgres committed it; then
/// wakes the writer for the next. `Err`: the outbox cannot be read or written.
async fn ship_oldest(inner: &Inner, link: &mut Option<Postgres>) -> Result<(), ()> {
    let context = inner.context().ok_or(())?;
    let outbox = context.ledger_outbox().map_err(|_| ())?;
    let oldest = match outbox.oldest(BATCH) {
        Ok(oldest) => Arc::new(oldest),
        Err(error) => {
            tracing::error!(%error, "the team ledger's outbox cannot be read");
            return Err(());
        }
    };
    if oldest.is_empty() {
        inner.outbox.store(0, Ordering::SeqCst);
        return Ok(());
    }
    if ship(inner, link, &oldest).await.is_err() {
        return Ok(());
    }
    let numbers: Vec<i64> = oldest.iter().map(|row| row.seq).collect();
    if let Err(error) = outbox.remove(&numbers) {
        // Shipped again later, they add nothing.
        tracing::error!(%error, "rows Postgres has could not be deleted from the outbox");
        return Err(());
    }
    let left = inner.outbox.fetch_sub(numbers.len() as u64, Ordering::SeqCst).saturating_sub(numbers.len() as u64);
    if left == 0 {
        tracing::info!("the team ledger's outbox is shipped: every row that waited is in Postgres");
    }
    inner.wake.notify_one();
    Ok(())
}

/// Ships `rows`; on a failure (or no answer within [`SHIP_TIMEOUT`]) the link is dropped.
async fn ship(inner: &Inner, link: &mut Option<Postgres>, rows: &Arc<Vec<LedgerRow>>) -> Result<(), ()> {
    let Some(postgres) = link.as_mut() else { return Err(()) };
    *lock(&inner.in_flight) = Some(rows.clone());
    let shipped = tokio::time::timeout(SHIP_TIMEOUT, postgres.ship(&inner.replica, rows)).await;
    *lock(&inner.in_flight) = None;
    match shipped {
        Ok(Ok(new)) => {
            inner.shipped.fetch_add(new, Ordering::SeqCst);
            Ok(())
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, rows = rows.len(), "the team ledger's Postgres did not take a batch: it waits in the store");
            *link = None;
            Err(())
        }
        Err(_) => {
            tracing::warn!(
                rows = rows.len(),
                "the team ledger's Postgres did not answer within {} s: the batch waits in the store",
                SHIP_TIMEOUT.as_secs()
            );
            *link = None;
            Err(())
        }
    }
}

/// `ledger` and `ledger_retention_months` as written, checked and read: every `$NAME` in the URL
/// is taken from the environment (percent-encoded when it is part of a longer URL, as a password
/// is: `postgres://keypool:$PGPASSWORD@db/keypool`; a value that is `$NAME` alone is the whole
/// URL). `Err` names the line (`line_of` a byte offset), never the URL or a variable's value.
pub fn resolve(
    url: &toml::Spanned<String>,
    retention: Option<&toml::Spanned<u32>>,
    line_of: impl Fn(usize) -> usize,
) -> Result<LedgerConfig, String> {
    let line = line_of(url.span().start);
    let written = url.get_ref().trim();
    let whole = written.strip_prefix('$').filter(|name| is_variable(name));
    let url = match whole {
        Some(name) => {
            variable(name).ok_or_else(|| format!("line {line}: ledger: the environment variable {name} is not set"))?
        }
        None => {
            let mut out = String::with_capacity(written.len());
            let mut rest = written;
            while let Some(at) = rest.find('$') {
                out.push_str(&rest[..at]);
                let after = &rest[at + 1..];
                let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                let name = &after[..end];
                if is_variable(name) {
                    let value = variable(name)
                        .ok_or_else(|| format!("line {line}: ledger: the environment variable {name} is not set"))?;
                    out.push_str(&percent_encoded(&value));
                } else {
                    out.push('$');
                }
                rest = &after[end..];
            }
            out.push_str(rest);
            out
        }
    };
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    if !matches!(scheme, Some("postgres" | "postgresql")) {
        return Err(format!("line {line}: ledger is a postgres:// URL (postgres://user:$PASSWORD@host:5432/database)"));
    }
    if let Err(error) = url.parse::<tokio_postgres::Config>() {
        return Err(format!("line {line}: ledger: {error}"));
    }
    let retention_months = match retention {
        Some(months) if *months.get_ref() == 0 => {
            return Err(format!("line {}: ledger_retention_months is 1 or more", line_of(months.span().start)))
        }
        Some(months) => Some(*months.get_ref()),
        None => None,
    };
    Ok(LedgerConfig { url, retention_months })
}

fn is_variable(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// `text` with every byte but RFC 3986's unreserved ones percent-encoded: a password in a URL.
fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(byte as char),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spanned(text: &str) -> toml::Spanned<String> {
        toml::Spanned::new(0..0, text.to_owned())
    }

    #[test]
    fn a_password_from_the_environment_is_encoded_into_the_url() {
        std::env::set_var("KP_LEDGER_TEST_PASSWORD", "p@ss/word");
        let config =
            resolve(&spanned("postgres://keypool:$KP_LEDGER_TEST_PASSWORD@db:5433/team"), None, |_| 3).unwrap();
        assert_eq!(config.url, "postgres://keypool:p%40ss%2Fword@db:5433/team", "the password may hold any byte");
        assert_eq!(server_of(&config.url), "db:5433/team", "a log line names the server without the password");
        assert!(!format!("{config:?}").contains("p%40ss"), "nor does Debug: {config:?}");
    }

    #[test]
    fn a_nul_a_client_sent_cannot_reach_postgres() {
        assert_eq!(text("gpt\0-5"), "gpt\u{FFFD}-5", "Postgres' text refuses NUL: the batch would never ship");
    }

    #[test]
    fn a_bad_ledger_names_its_line_and_never_its_value() {
        let unset = resolve(&spanned("postgres://k:$KP_LEDGER_TEST_UNSET@db/x"), None, |_| 7).unwrap_err();
        assert_eq!(unset, "line 7: ledger: the environment variable KP_LEDGER_TEST_UNSET is not set");
        let scheme = resolve(&spanned("mysql://k:secret@db/x"), None, |_| 2).unwrap_err();
        assert!(scheme.starts_with("line 2: ledger is a postgres:// URL") && !scheme.contains("secret"), "{scheme}");
        let months = toml::Spanned::new(0..0, 0);
        let zero = resolve(&spanned("postgres://db/x"), Some(&months), |_| 4).unwrap_err();
        assert_eq!(zero, "line 4: ledger_retention_months is 1 or more");
    }
}
