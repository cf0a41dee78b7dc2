//! What is done to many of a provider's keys at once: importing a paste or a file (extracted,
//! de-duplicated, optionally validated, saved in batches), changing, deleting, testing and
//! exporting a selection. The app's commands and the server's CLI share this one implementation.
//!
//! Invariants:
//! - A text is read by the shapes of the provider's kind (its row's `key_shapes`): a `.env` or a
//!   CSV pasted into an OpenAI provider gives its OpenAI keys, never its Anthropic or Gemini keys
//!   or a GitHub token. Every token of a line is taken only when the caller asks for
//!   [`KeyReading::OnePerLine`] (the user chose it, for keys of no known shape), and nothing is
//!   sent before the preview listed what would be, masked, and the user could leave any out.
//! - An import's secrets stay here, under its id, from the preview to the end of the run: the
//!   preview, the progress and every error carry counts and masked previews only.
//! - Keys are saved in batches of [`BATCH`], each one transaction (and one `llmConfig:changed`);
//!   a cancel ends the run after the batch being saved, and every batch saved before stays.
//! - A bulk change or delete is all or nothing: one transaction, every id checked first.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keypool::{extract_keys, Clock, KeyId, ProviderId, Secret, Timestamp};
use keypool_llm::{CancellationToken, CompletionService, KeyVerdict, ProbeResult, ProviderEndpoint};
use keypool_store::api_keys::{self, ApiKeyPatch, NewApiKey};
use keypool_store::{providers, usage, Database};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::providers::{endpoint_of, require_provider};
use super::usage::SaveDialog;
use super::vault::{key_account, Vault};
use super::write_path::{Changed, WritePath, Written};
use super::{ApiKey, Keys, DAY_MS};
use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

/// Keys saved per transaction.
pub const BATCH: usize = 500;
/// Keys checked at once against the provider.
pub const CHECK_CONCURRENCY: usize = 8;
/// Progress is told at most this often (and after every batch, and at the end).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// A rate-limited key is checked again after the wait its provider announced, or this long
/// when it announced none; never later than [`MAX_RECHECK_WAIT`].
pub const DEFAULT_RECHECK_WAIT: Duration = Duration::from_secs(2);
pub const MAX_RECHECK_WAIT: Duration = Duration::from_secs(60);
/// Previews waiting to be started; the oldest is dropped beyond this.
const MAX_PENDING: usize = 8;

/// How a text is read for keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum KeyReading {
    /// Only keys of the shapes of the provider's kind.
    #[default]
    Shapes,
    /// Each line's longest key-like token, whatever its shape: only when the user chose it.
    OnePerLine,
}

/// What a text holds for a provider's pool, before anything is saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportPreview {
    pub import_id: String,
    /// Every key occurrence found, duplicates included.
    pub found: usize,
    /// The keys that would be added: their position among the keys the text gives (the same
    /// for every preview of one text read one way, so a key left out stays left out when the
    /// text is previewed again) and their masked preview.
    pub new: Vec<(usize, String)>,
    pub duplicates_in_paste: usize,
    pub duplicates_in_pool: usize,
    /// Lines (1-based) that seem to hold a key but gave none.
    pub unrecognised_lines: Vec<usize>,
}

/// How to import a previewed text.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub weight: u32,
    /// Labels are `"{prefix} #1"`, `#2`, … in the order saved; none without a prefix.
    pub label_prefix: Option<String>,
    pub quota_group: Option<String>,
    /// Check each key with the provider's model list before saving it.
    pub validate: bool,
    /// Save the keys validation rejected too, disabled with their reason.
    pub keep_rejected_disabled: bool,
    /// Keys of the preview the user left out, by their index there: never sent nor saved.
    pub left_out: HashSet<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "KeyImportState")]
pub enum ImportState {
    Running,
    Cancelled,
    Done,
    Failed,
}

/// How an import stands: the answer of starting and cancelling one, and the payload of
/// `llmConfig:keyImportProgress` (at most every 100 ms, after every batch saved, and at the end).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyImportProgress")]
pub struct ImportProgress {
    pub import_id: String,
    pub provider_id: String,
    /// Keys to import (new ones, after de-duplication: the preview's `new`).
    pub total: usize,
    /// Validated so far (0 without validation).
    pub checked: usize,
    pub valid: usize,
    /// The provider said the key is not valid (a 401, `invalid_api_key`, `API_KEY_INVALID`).
    pub invalid: usize,
    /// Still rate-limited when checked again after the announced wait.
    pub rate_limited: usize,
    /// Could not be checked: no answer, or one that says nothing of the key (a 5xx, a 403: a key
    /// restricted by scope may be refused the model list and still chat).
    pub unreachable: usize,
    /// Saved to the pool so far.
    pub added: usize,
    /// In the paste, in the pool at the preview, and found in the pool when saving.
    pub duplicates: usize,
    pub state: ImportState,
}

impl ImportProgress {
    pub fn is_running(&self) -> bool {
        self.state == ImportState::Running
    }
}

/// What a bulk change sets on every key named; `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct BulkPatch {
    pub enabled: Option<bool>,
    pub weight: Option<u32>,
    /// `Some(None)`: each key a group of its own.
    pub quota_group: Option<Option<String>>,
}

/// A previewed import, waiting to be started.
struct Pending {
    import_id: String,
    provider_id: String,
    keys: Vec<Secret>,
    /// Each key's index in the preview.
    indices: Vec<usize>,
    duplicates: usize,
}

impl Pending {
    /// Without the keys the user left out.
    fn without(mut self, left_out: &HashSet<usize>) -> Pending {
        if !left_out.is_empty() {
            let (keys, indices) =
                self.keys.into_iter().zip(self.indices).filter(|(_, index)| !left_out.contains(index)).unzip();
            (self.keys, self.indices) = (keys, indices);
        }
        self
    }
}

/// An import started: where its progress is, and how to stop it.
struct Running {
    progress: watch::Receiver<ImportProgress>,
    cancel: CancellationToken,
}

#[derive(Clone)]
pub struct BulkKeys {
    inner: Arc<Inner>,
}

struct Inner {
    db: Arc<Database>,
    writes: Arc<WritePath>,
    clock: Arc<dyn Clock>,
    completions: CompletionService,
    keys: Keys,
    save_dialog: Arc<dyn SaveDialog>,
    pending: Mutex<VecDeque<Pending>>,
    running: Mutex<HashMap<String, Running>>,
}

/// The verdict of one key, by its position in the import.
type Checked = (usize, KeyVerdict);

impl BulkKeys {
    pub(crate) fn new(
        db: Arc<Database>,
        writes: Arc<WritePath>,
        clock: Arc<dyn Clock>,
        completions: CompletionService,
        keys: Keys,
        save_dialog: Arc<dyn SaveDialog>,
    ) -> Self {
        let inner = Inner {
            db,
            writes,
            clock,
            completions,
            keys,
            save_dialog,
            pending: Mutex::new(VecDeque::new()),
            running: Mutex::new(HashMap::new()),
        };
        BulkKeys { inner: Arc::new(inner) }
    }

    /// Extracts the keys of `text` as `reading` says (by the shapes of `provider_id`'s kind, or
    /// one per line), drops those already in the paste or in the provider's pool (compared here:
    /// the pool's values never leave the backend) and keeps the rest under a new import id. A
    /// text with no key is refused and nothing is kept.
    pub fn preview(&self, provider_id: &str, text: &str, reading: KeyReading) -> Result<ImportPreview> {
        let shapes = match reading {
            KeyReading::Shapes => self.inner.kind_of(provider_id)?.row().key_shapes,
            KeyReading::OnePerLine => &[],
        };
        let extracted = extract_keys(text, shapes);
        if extracted.keys.is_empty() {
            return Err(ServiceError::invalid("text", Rule::NoKeysFound));
        }
        let existing = self.inner.pool_values(provider_id)?;
        let (mut keys, mut indices) = (Vec::with_capacity(extracted.keys.len()), Vec::new());
        let mut in_pool = 0;
        for (index, found) in extracted.keys.iter().enumerate() {
            if existing.holds(&found.secret) {
                in_pool += 1;
            } else {
                keys.push(found.secret.clone());
                indices.push(index);
            }
        }
        let import_id = uuid::Uuid::new_v4().to_string();
        let preview = ImportPreview {
            import_id: import_id.clone(),
            found: extracted.found(),
            new: indices.iter().zip(&keys).map(|(index, key)| (*index, key.preview())).collect(),
            duplicates_in_paste: extracted.duplicates,
            duplicates_in_pool: in_pool,
            unrecognised_lines: extracted.unrecognised_lines,
        };
        let mut pending = self.inner.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.push_back(Pending {
            import_id,
            provider_id: provider_id.to_owned(),
            keys,
            indices,
            duplicates: extracted.duplicates + in_pool,
        });
        while pending.len() > MAX_PENDING {
            pending.pop_front();
        }
        Ok(preview)
    }

    /// Starts the previewed import `import_id` on the current Tokio runtime and answers how it
    /// stands at once; progress follows through the event sink.
    pub fn start(&self, import_id: &str, options: ImportOptions) -> Result<ImportProgress> {
        let pending = self.take_pending(import_id)?.without(&options.left_out);
        let (first, receiver, progress) = self.register(&pending);
        let this = self.clone();
        tokio::spawn(async move { this.inner.run(pending, options, progress).await });
        drop(receiver);
        Ok(first)
    }

    /// Previews and imports `text` at once, to the end: the server's CLI.
    pub async fn import_now(
        &self,
        provider_id: &str,
        text: &str,
        reading: KeyReading,
        options: ImportOptions,
    ) -> Result<(ImportPreview, ImportProgress)> {
        let preview = self.preview(provider_id, text, reading)?;
        let pending = self.take_pending(&preview.import_id)?.without(&options.left_out);
        let (_, _, progress) = self.register(&pending);
        let end = self.inner.run(pending, options, progress).await;
        Ok((preview, end))
    }

    /// Stops the import after the batch being saved; what was saved stays. Answers how it
    /// ended (an import already ended answers its end).
    pub async fn cancel(&self, import_id: &str) -> Result<ImportProgress> {
        let cancel = self.with_run(import_id, |run| run.cancel.clone())?;
        cancel.cancel();
        self.finished(import_id).await
    }

    /// How import `import_id` stands now.
    pub fn progress(&self, import_id: &str) -> Result<ImportProgress> {
        self.with_run(import_id, |run| run.progress.borrow().clone())
    }

    /// Waits until import `import_id` has ended, and answers how.
    pub async fn finished(&self, import_id: &str) -> Result<ImportProgress> {
        let mut progress = self.watch(import_id)?;
        let ended = progress.wait_for(|p| !p.is_running()).await.map(|p| p.clone());
        Ok(ended.unwrap_or_else(|_| progress.borrow().clone()))
    }

    /// A receiver of import `import_id`'s progress, for tests and tools that follow it.
    pub fn watch(&self, import_id: &str) -> Result<watch::Receiver<ImportProgress>> {
        self.with_run(import_id, |run| run.progress.clone())
    }

    /// `read` of the started import `import_id`.
    fn with_run<T>(&self, import_id: &str, read: impl FnOnce(&Running) -> T) -> Result<T> {
        let running = self.inner.running.lock().unwrap_or_else(|e| e.into_inner());
        let run = running.get(import_id).ok_or_else(|| ServiceError::not_found("key import", import_id))?;
        Ok(read(run))
    }

    fn take_pending(&self, import_id: &str) -> Result<Pending> {
        let mut pending = self.inner.pending.lock().unwrap_or_else(|e| e.into_inner());
        let at = pending
            .iter()
            .position(|p| p.import_id == import_id)
            .ok_or_else(|| ServiceError::not_found("key import", import_id))?;
        Ok(pending.remove(at).expect("the position was found"))
    }

    fn register(&self, pending: &Pending) -> (ImportProgress, watch::Receiver<ImportProgress>, Progress) {
        let first = ImportProgress {
            import_id: pending.import_id.clone(),
            provider_id: pending.provider_id.clone(),
            total: pending.keys.len(),
            checked: 0,
            valid: 0,
            invalid: 0,
            rate_limited: 0,
            unreachable: 0,
            added: 0,
            duplicates: pending.duplicates,
            state: ImportState::Running,
        };
        let (sender, receiver) = watch::channel(first.clone());
        let cancel = CancellationToken::new();
        self.inner
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pending.import_id.clone(), Running { progress: receiver.clone(), cancel: cancel.clone() });
        let progress = Progress { sender, cancel, last_told: None, clock: self.inner.clock.clone() };
        (first, receiver, progress)
    }

    /// Sets `patch` on every key of `ids` (all of one provider) in one transaction: an id that
    /// does not exist changes nothing. Enabling clears why a key was disabled.
    pub fn update(&self, ids: &[String], patch: BulkPatch) -> Result<Written<Vec<ApiKey>>> {
        let now = self.inner.clock.now().as_millis();
        let enabling = patch.enabled == Some(true);
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let written = self.inner.writes.apply(|tx| {
            let provider_id = provider_of_all(tx, ids)?;
            let stored = ApiKeyPatch {
                label: None,
                api_key: None,
                enabled: patch.enabled,
                weight: patch.weight,
                quota_group: patch.quota_group.clone(),
            };
            api_keys::update_api_keys(tx, ids, &stored, now)?;
            let keys = api_keys::list_api_keys(tx, &provider_id)?
                .into_iter()
                .filter(|row| wanted.contains(row.id.as_str()))
                .map(ApiKey::from)
                .collect();
            Ok(Changed { provider_id, value: keys })
        })?;
        if enabling {
            for id in ids {
                self.inner.completions.key_enabled(&KeyId::new(id.as_str()));
            }
        }
        Ok(written)
    }

    /// Deletes every key of `ids` (all of one provider) in one transaction, and their keychain
    /// entries; an id that does not exist deletes nothing. Answers how many went.
    pub fn delete(&self, ids: &[String]) -> Result<Written<usize>> {
        let deleted = self.inner.writes.apply(|tx| {
            let provider_id = provider_of_all(tx, ids)?;
            let deleted = api_keys::delete_api_keys(tx, ids)?;
            Ok(Changed { provider_id, value: deleted.len() })
        })?;
        for id in ids {
            self.inner.writes.vault.forget(&key_account(id));
        }
        self.inner.writes.forget_removed_secrets();
        Ok(deleted)
    }

    /// Tests each key of `ids` as the single test does (states move the same way), at most
    /// [`CHECK_CONCURRENCY`] at once; the results in the order of `ids`.
    pub async fn test(&self, ids: &[String]) -> Result<Vec<Result<ProbeResult>>> {
        {
            let conn = self.inner.db.lock()?;
            provider_of_all(&conn, ids)?;
        }
        let mut results: Vec<Option<Result<ProbeResult>>> = (0..ids.len()).map(|_| None).collect();
        let mut tasks = JoinSet::new();
        let mut next = 0;
        while next < ids.len() || !tasks.is_empty() {
            while next < ids.len() && tasks.len() < CHECK_CONCURRENCY {
                let (keys, id, at) = (self.inner.keys.clone(), ids[next].clone(), next);
                tasks.spawn(async move { (at, keys.test(&id).await) });
                next += 1;
            }
            if let Some(Ok((at, result))) = tasks.join_next().await {
                results[at] = Some(result);
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(ServiceError::Unavailable("the test did not finish".into()))))
            .collect())
    }

    /// Writes the keys `ids` of `provider_id` where the user chooses (the native save dialog),
    /// file mode 0600: their metadata as CSV, or with `full` their values (CSV with a `key`
    /// column). `None` when the user cancelled.
    pub async fn export(&self, provider_id: &str, ids: &[String], full: bool) -> Result<Option<(PathBuf, usize)>> {
        let rows = self.inner.export_rows(provider_id, ids, full)?;
        let name = if full { "keypool-keys-full.csv" } else { "keypool-keys.csv" };
        let Some(path) = self.inner.save_dialog.choose(name).await else { return Ok(None) };
        write_private_csv(&path, &rows).map_err(|error| ServiceError::cannot_write(&path, error))?;
        Ok(Some((path, rows.len().saturating_sub(1))))
    }
}

/// The one provider all of `ids` belong to; every id must exist, and there must be one.
fn provider_of_all(conn: &keypool_store::rusqlite::Connection, ids: &[String]) -> Result<String> {
    let mut provider: Option<String> = None;
    for id in ids {
        let row = api_keys::get_api_key(conn, id)?.ok_or_else(|| ServiceError::not_found("API key", id))?;
        match &provider {
            None => provider = Some(row.provider_id),
            Some(p) if *p == row.provider_id => {}
            Some(_) => return Err(ServiceError::invalid("ids", Rule::KeysOfSeveralProviders)),
        }
    }
    provider.ok_or_else(|| ServiceError::invalid("ids", Rule::KeysOfSeveralProviders))
}

/// Sends an import's progress: to its watchers at once, to the event sink at most every
/// [`PROGRESS_EVERY`] (and when asked to, after a batch and at the end).
struct Progress {
    sender: watch::Sender<ImportProgress>,
    cancel: CancellationToken,
    last_told: Option<Timestamp>,
    clock: Arc<dyn Clock>,
}

impl Progress {
    fn update(&mut self, writes: &WritePath, force: bool, change: impl FnOnce(&mut ImportProgress)) {
        self.sender.send_modify(change);
        let now = self.clock.now();
        let due = self.last_told.is_none_or(|at| now.saturating_duration_since(at) >= PROGRESS_EVERY);
        if force || due {
            self.last_told = Some(now);
            writes.events.key_import_progress(&self.sender.borrow());
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// A key to save, and why it is disabled (`None`: it is enabled).
type ToSave = (Secret, Option<String>);

/// The values of a provider's keys, for comparing without sending them anywhere. Each key's
/// value is read (from the database or the keychain) once, the first time its id is seen, so
/// bringing it up to date before each batch of a 10 000-key import costs one listing.
#[derive(Default)]
struct PoolValues {
    /// Every key seen, by id; `None`: its value could not be read.
    by_id: HashMap<String, Option<String>>,
    values: HashSet<String>,
}

impl PoolValues {
    /// Reads the values of `provider_id`'s keys not seen before, and forgets those of keys
    /// deleted since. A value the vault cannot read is not compared (as a single add does).
    fn catch_up(&mut self, conn: &keypool_store::rusqlite::Connection, vault: &Vault, provider_id: &str) -> Result<()> {
        // The ids first (cheap); whole rows only when some are new (at the start, or after a
        // key was added meanwhile).
        let ids = api_keys::key_ids(conn, provider_id)?;
        let listed: HashSet<&str> = ids.iter().map(String::as_str).collect();
        if self.by_id.keys().any(|id| !listed.contains(id.as_str())) {
            self.by_id.retain(|id, _| listed.contains(id.as_str()));
            self.values = self.by_id.values().flatten().cloned().collect();
        }
        if ids.iter().all(|id| self.by_id.contains_key(id)) {
            return Ok(());
        }
        for row in api_keys::list_api_keys(conn, provider_id)? {
            if self.by_id.contains_key(&row.id) {
                continue;
            }
            match vault.reveal(&key_account(&row.id), &row.api_key) {
                Ok(secret) => self.record(row.id, &secret),
                Err(_) => _ = self.by_id.insert(row.id, None),
            }
        }
        Ok(())
    }

    fn record(&mut self, id: String, secret: &Secret) {
        self.values.insert(secret.expose().to_owned());
        self.by_id.insert(id, Some(secret.expose().to_owned()));
    }

    fn holds(&self, secret: &Secret) -> bool {
        self.values.contains(secret.expose())
    }
}

impl Inner {
    /// The kind of provider `provider_id`.
    fn kind_of(&self, provider_id: &str) -> Result<keypool_llm::ProviderKind> {
        let provider = providers::get_provider(&*self.db.lock()?, provider_id)?
            .ok_or_else(|| ServiceError::not_found("provider", provider_id))?;
        keypool_llm::ProviderKind::parse(&provider.kind)
            .ok_or_else(|| ServiceError::invalid("kind", Rule::UnknownKind(provider.kind.clone())))
    }

    /// The values of `provider_id`'s keys as they are now, for comparing.
    fn pool_values(&self, provider_id: &str) -> Result<PoolValues> {
        let conn = self.db.lock()?;
        require_provider(&conn, provider_id)?;
        let mut values = PoolValues::default();
        values.catch_up(&conn, &self.writes.vault, provider_id)?;
        Ok(values)
    }

    async fn run(&self, pending: Pending, options: ImportOptions, mut progress: Progress) -> ImportProgress {
        let result = self.import(&pending, &options, &mut progress).await;
        let state = match (&result, progress.cancelled()) {
            (Err(error), _) => {
                tracing::warn!(import = %pending.import_id, %error, "a key import failed; the batches saved stay");
                ImportState::Failed
            }
            (Ok(()), true) => ImportState::Cancelled,
            (Ok(()), false) => ImportState::Done,
        };
        progress.update(&self.writes, true, |p| p.state = state);
        let end = progress.sender.borrow().clone();
        tracing::info!(
            import = %end.import_id, provider = %end.provider_id, total = end.total, added = end.added,
            invalid = end.invalid, rate_limited = end.rate_limited, unreachable = end.unreachable, state = ?end.state,
            "key import ended"
        );
        end
    }

    async fn import(&self, pending: &Pending, options: &ImportOptions, progress: &mut Progress) -> Result<()> {
        let endpoint = if options.validate {
            let provider = providers::get_provider(&*self.db.lock()?, &pending.provider_id)?
                .ok_or_else(|| ServiceError::not_found("provider", &pending.provider_id))?;
            Some(endpoint_of(&provider, &self.writes.vault)?)
        } else {
            None
        };
        let mut label_number = 0usize;
        let mut retry: Vec<(usize, Option<Duration>)> = Vec::new();
        // The pool's values, each read once: those of the pool as the run starts now, those of
        // keys added meanwhile (by hand, by another import) as each batch is saved.
        let mut existing = self.pool_values(&pending.provider_id)?;
        for (chunk_index, chunk) in pending.keys.chunks(BATCH).enumerate() {
            if progress.cancelled() {
                return Ok(());
            }
            let offset = chunk_index * BATCH;
            let to_save: Vec<ToSave> = match &endpoint {
                None => chunk.iter().map(|k| (k.clone(), None)).collect(),
                Some(endpoint) => {
                    let checked = self.check_all(endpoint, chunk, offset, progress).await;
                    let mut keep = Vec::new();
                    for (at, verdict) in checked {
                        let key = &pending.keys[at];
                        match verdict {
                            KeyVerdict::RateLimited { retry_after, .. } => {
                                // Checked, and checked again later (counted once).
                                retry.push((at, retry_after));
                                progress.update(&self.writes, false, |p| p.checked += 1);
                            }
                            verdict => {
                                if let Some(saved) = self.tally(verdict, key, options, progress) {
                                    keep.push(saved);
                                }
                            }
                        }
                    }
                    keep
                }
            };
            self.save_batch(&pending.provider_id, to_save, options, &mut label_number, &mut existing, progress)?;
            // Lets a cancel (or the runtime's other work) in between two batches.
            tokio::task::yield_now().await;
        }
        if let (Some(endpoint), false) = (&endpoint, retry.is_empty()) {
            if progress.cancelled() {
                return Ok(());
            }
            // Checked again once, after the longest wait the provider announced.
            let wait = retry.iter().map(|(_, w)| w.unwrap_or(DEFAULT_RECHECK_WAIT)).max().unwrap_or_default();
            let until = self.clock.now() + wait.min(MAX_RECHECK_WAIT);
            tokio::select! {
                _ = self.completions.waiter().until(until) => {}
                () = progress.cancel.cancelled() => return Ok(()),
            }
            let again: Vec<Secret> = retry.iter().map(|(at, _)| pending.keys[*at].clone()).collect();
            let checked = self.check_all(endpoint, &again, 0, progress).await;
            let mut keep = Vec::new();
            for (at, verdict) in checked {
                // Counted as checked the first time.
                progress.sender.send_modify(|p| p.checked -= 1);
                if let Some(saved) = self.tally(verdict, &again[at], options, progress) {
                    keep.push(saved);
                }
            }
            for chunk in keep.chunks(BATCH) {
                if progress.cancelled() {
                    return Ok(());
                }
                self.save_batch(
                    &pending.provider_id,
                    chunk.to_vec(),
                    options,
                    &mut label_number,
                    &mut existing,
                    progress,
                )?;
            }
        }
        Ok(())
    }

    /// Counts `verdict` in its bucket; the key to save, if it is to be saved.
    fn tally(
        &self,
        verdict: KeyVerdict,
        key: &Secret,
        options: &ImportOptions,
        progress: &mut Progress,
    ) -> Option<ToSave> {
        let (reason, bucket): (Option<String>, fn(&mut ImportProgress)) = match verdict {
            KeyVerdict::Valid => (None, |p| p.valid += 1),
            KeyVerdict::Invalid { status } => (Some(format!("HTTP {status}")), |p| p.invalid += 1),
            KeyVerdict::RateLimited { status, .. } => (Some(format!("HTTP {status}")), |p| p.rate_limited += 1),
            KeyVerdict::Unchecked { status } => {
                (Some(status.map_or_else(|| "unreachable".to_owned(), |s| format!("not checked (HTTP {s})"))), |p| {
                    p.unreachable += 1
                })
            }
        };
        progress.update(&self.writes, false, |p| {
            p.checked += 1;
            bucket(p);
        });
        match reason {
            None => Some((key.clone(), None)),
            Some(reason) if options.keep_rejected_disabled => Some((key.clone(), Some(reason))),
            Some(_) => None,
        }
    }

    /// Checks `keys` (positions from `offset`) at most [`CHECK_CONCURRENCY`] at once; the
    /// verdicts in the order of `keys`. Stops starting checks on a cancel.
    async fn check_all(
        &self,
        endpoint: &ProviderEndpoint,
        keys: &[Secret],
        offset: usize,
        progress: &Progress,
    ) -> Vec<Checked> {
        let mut verdicts: Vec<Option<KeyVerdict>> = vec![None; keys.len()];
        let mut tasks = JoinSet::new();
        let mut next = 0;
        while (next < keys.len() && !progress.cancelled()) || !tasks.is_empty() {
            while next < keys.len() && tasks.len() < CHECK_CONCURRENCY && !progress.cancelled() {
                let (completions, endpoint, key, at) =
                    (self.completions.clone(), endpoint.clone(), keys[next].clone(), next);
                tasks.spawn(async move { (at, completions.check_key(&endpoint, &key).await) });
                next += 1;
            }
            // A cancel ends the checks in flight at once: what they would say is not waited for.
            let joined = tokio::select! {
                joined = tasks.join_next() => joined,
                () = progress.cancel.cancelled() => {
                    tasks.abort_all();
                    break;
                }
            };
            if let Some(Ok((at, verdict))) = joined {
                verdicts[at] = Some(verdict);
            }
        }
        verdicts.into_iter().enumerate().filter_map(|(i, v)| v.map(|v| (offset + i, v))).collect()
    }

    /// Saves one batch in one transaction. A key the pool holds by then (`existing`, brought up
    /// to date inside the transaction, so a key added by hand during the run is seen) is counted
    /// as a duplicate. The values are kept where the vault decides; keychain entries written
    /// for a transaction that fails are removed again.
    fn save_batch(
        &self,
        provider_id: &str,
        batch: Vec<ToSave>,
        options: &ImportOptions,
        label_number: &mut usize,
        existing: &mut PoolValues,
        progress: &mut Progress,
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let vault = &self.writes.vault;
        let mut accounts = Vec::new();
        let now = self.clock.now().as_millis();
        let saved = self.writes.apply(|tx| {
            require_provider(tx, provider_id)?;
            existing.catch_up(tx, vault, provider_id)?;
            let mut rows = Vec::with_capacity(batch.len());
            let mut again = 0;
            for (key, disabled) in &batch {
                if existing.holds(key) {
                    again += 1;
                    continue;
                }
                let id = uuid::Uuid::new_v4().to_string();
                let label =
                    options.label_prefix.as_ref().map(|prefix| format!("{prefix} #{}", *label_number + rows.len() + 1));
                accounts.push(key_account(&id));
                let new = NewApiKey {
                    api_key: vault.keep(&key_account(&id), key),
                    id: id.clone(),
                    provider_id: provider_id.to_owned(),
                    label,
                    enabled: true,
                    weight: options.weight,
                    rpm_limit: None,
                    max_concurrent: None,
                    quota_group: options.quota_group.clone(),
                };
                rows.push((new, disabled.clone()));
                // A key twice in one batch is saved once.
                existing.record(id, key);
            }
            api_keys::insert_api_keys(tx, &rows, now)?;
            Ok(Changed { provider_id: provider_id.to_owned(), value: (rows.len(), again) })
        });
        match saved.map(|written| written.value) {
            Ok((added, again)) => {
                *label_number += added;
                progress.update(&self.writes, true, |p| {
                    p.added += added;
                    p.duplicates += again;
                });
                Ok(())
            }
            Err(error) => {
                for account in &accounts {
                    vault.forget(account);
                }
                Err(error)
            }
        }
    }

    /// The CSV rows of an export, header first. Metadata: label, preview, weight, group, state,
    /// last error, today's requests and tokens (since midnight UTC); `full` adds the key.
    fn export_rows(&self, provider_id: &str, ids: &[String], full: bool) -> Result<Vec<Vec<String>>> {
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let now = self.clock.now().as_millis();
        let (rows, today) = {
            let conn = self.db.lock()?;
            require_provider(&conn, provider_id)?;
            let rows: Vec<_> = api_keys::list_api_keys(&conn, provider_id)?
                .into_iter()
                .filter(|row| wanted.contains(row.id.as_str()))
                .collect();
            let mut today: HashMap<String, (u64, u64)> = HashMap::new();
            for ((_, key, _), group) in usage::groups(&conn, Some(provider_id), now - now.rem_euclid(DAY_MS), now + 1)?
            {
                let entry = today.entry(key).or_default();
                entry.0 += group.totals.requests;
                entry.1 += group.totals.input_tokens + group.totals.output_tokens;
            }
            (rows, today)
        };
        if rows.len() != wanted.len() {
            let missing = ids.iter().find(|id| !rows.iter().any(|r| &r.id == *id)).cloned().unwrap_or_default();
            return Err(ServiceError::not_found("API key", &missing));
        }
        let statuses: HashMap<String, keypool::KeyStatus> = self
            .keys
            .pool()
            .status(&ProviderId::new(provider_id), Timestamp::from_millis(now))?
            .into_iter()
            .map(|s| (s.key_id.as_str().to_owned(), s))
            .collect();
        let mut header: Vec<String> =
            ["label", "preview", "weight", "group", "state", "last_error", "requests_today", "tokens_today"]
                .map(str::to_owned)
                .to_vec();
        if full {
            header.push("key".into());
        }
        let mut out = vec![header];
        for row in rows {
            let status = statuses.get(&row.id);
            let state = status.map_or("disabled", |s| s.state.as_str());
            let last_error = match (status.and_then(|s| s.last_error.as_ref()), &row.disabled_reason) {
                (Some(error), _) => key_error_text(error),
                (None, Some(reason)) => reason.clone(),
                (None, None) => String::new(),
            };
            let (requests, tokens) = today.get(&row.id).copied().unwrap_or_default();
            // Text a user or a provider wrote is written as a spreadsheet shows it, never runs it
            // (as the usage export does); a full key is written as it is, to be imported again.
            let mut line = vec![
                super::usage::spreadsheet_safe(row.label.clone().unwrap_or_default()),
                super::usage::spreadsheet_safe(row.api_key.preview()),
                row.weight.to_string(),
                super::usage::spreadsheet_safe(row.quota_group.clone().unwrap_or_default()),
                state.to_owned(),
                super::usage::spreadsheet_safe(last_error),
                requests.to_string(),
                tokens.to_string(),
            ];
            if full {
                let value =
                    self.writes.vault.reveal(&key_account(&row.id), &row.api_key).map_err(ServiceError::Keychain)?;
                line.push(value.expose().to_owned());
            }
            out.push(line);
        }
        Ok(out)
    }
}

fn key_error_text(error: &keypool::KeyError) -> String {
    match error {
        keypool::KeyError::RateLimited { status } => format!("rate limited (HTTP {status})"),
        keypool::KeyError::AuthRejected { status } => format!("rejected by the provider (HTTP {status})"),
        keypool::KeyError::QuotaExhausted { status } => format!("out of credit (HTTP {status})"),
        keypool::KeyError::UnresolvedEnv { var } => format!("environment variable {var} is not set"),
    }
}

/// Writes `rows` as CSV to `path`, readable by its owner only (mode 0600 on Unix, set before any
/// byte is written, also when the file was there before).
fn write_private_csv(path: &std::path::Path, rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        if path.exists() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    let file = options.open(path)?;
    let mut writer = csv::Writer::from_writer(file);
    for row in rows {
        writer.write_record(row).map_err(std::io::Error::other)?;
    }
    writer.flush()?;
    writer.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?.sync_all()
}
