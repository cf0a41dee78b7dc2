//! A command harness over a real database in a temporary directory, with a manual clock, a
//! map of environment variables and a recorder of the events the UI would receive.

use std::path::Path;
use std::sync::{Arc, Mutex};

use keypool::{ManualClock, MapResolver, PoolConfig, Timestamp};
use keypool_api::ipc::{self, IpcError, Run};
use keypool_api::service::{EventSink, KeychainProblem};
use keypool_api::{AppContext, Dirs, Wiring};
use keypool_keychain::Keychain;
use keypool_store::Database;
use serde_json::Value;

#[derive(Default)]
pub struct RecordedEvents(
    Mutex<Vec<(String, u64)>>,
    Mutex<Vec<Value>>,
    Mutex<Vec<Value>>,
    /// Why notifications cannot be shown (`None`: they can).
    Mutex<Option<String>>,
);

impl EventSink for RecordedEvents {
    fn llm_config_changed(&self, provider_id: &str, generation: u64) {
        self.0.lock().unwrap().push((provider_id.to_owned(), generation));
    }

    fn key_import_progress(&self, progress: &keypool_api::service::ImportProgress) {
        self.1.lock().unwrap().push(serde_json::to_value(progress).unwrap());
    }

    fn pool_alert(&self, alert: &keypool_api::service::PoolAlert) {
        self.2.lock().unwrap().push(serde_json::json!({ "alert": alert }));
    }

    fn notify(&self, title: &str, body: &str) {
        self.2.lock().unwrap().push(serde_json::json!({ "notification": { "title": title, "body": body } }));
    }

    fn notifications(&self) -> keypool_api::service::Notifications {
        match self.3.lock().unwrap().clone() {
            None => keypool_api::service::Notifications::Available,
            Some(detail) => keypool_api::service::Notifications::Unavailable { detail: Some(detail) },
        }
    }
}

impl RecordedEvents {
    /// The providers `llmConfig:changed` named so far, in order.
    pub fn take(&self) -> Vec<String> {
        self.take_changes().into_iter().map(|(provider, _)| provider).collect()
    }

    /// The `llmConfig:changed` payloads so far, in order: each provider with its write's generation.
    pub fn take_changes(&self) -> Vec<(String, u64)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// The `pool:alert` payloads (`{ "alert": … }`) and the notifications shown
    /// (`{ "notification": { title, body } }`) so far, in order.
    pub fn take_alerts(&self) -> Vec<Value> {
        std::mem::take(&mut *self.2.lock().unwrap())
    }

    /// From now on, no notification service answers (`detail`: what the system said).
    pub fn notifications_fail(&self, detail: &str) {
        *self.3.lock().unwrap() = Some(detail.to_owned());
    }

    /// The `llmConfig:keyImportProgress` payloads told so far, as the UI receives them.
    pub fn take_progress(&self) -> Vec<Value> {
        std::mem::take(&mut *self.1.lock().unwrap())
    }
}

/// A save dialog whose answer the test sets: where the next export goes (`None`: cancelled).
#[derive(Default)]
pub struct SaveTo(Mutex<Option<std::path::PathBuf>>);

impl SaveTo {
    pub fn answer(&self, path: Option<std::path::PathBuf>) {
        *self.0.lock().unwrap() = path;
    }
}

impl keypool_api::service::SaveDialog for SaveTo {
    fn choose<'a>(
        &'a self,
        _: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<std::path::PathBuf>> + Send + 'a>> {
        Box::pin(std::future::ready(self.0.lock().unwrap().clone()))
    }
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub ctx: AppContext,
    pub events: Arc<RecordedEvents>,
    pub clock: Arc<ManualClock>,
    /// The answers of the save dialog.
    pub saves: Arc<SaveTo>,
    /// Every JSON value a command returned or rejected with, to search for secrets.
    pub transcript: Mutex<Vec<String>>,
    /// The keychain the harness was opened with (kept across `reopen`).
    pub keychain: Option<Arc<dyn Keychain>>,
}

pub const START: Timestamp = Timestamp::from_millis(1_800_000_000_000);

impl Harness {
    pub fn new() -> Self {
        Self::with_env(MapResolver::new())
    }

    pub fn with_env(resolver: MapResolver) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::open(dir, resolver)
    }

    pub fn open(dir: tempfile::TempDir, resolver: MapResolver) -> Self {
        Self::open_with(dir, resolver, None)
    }

    /// A harness whose keys go to `keychain`.
    pub fn with_keychain(keychain: Arc<dyn Keychain>) -> Self {
        Self::open_with(tempfile::tempdir().unwrap(), MapResolver::new(), Some(keychain))
    }

    pub fn open_with(dir: tempfile::TempDir, resolver: MapResolver, keychain: Option<Arc<dyn Keychain>>) -> Self {
        let events = Arc::new(RecordedEvents::default());
        let clock = Arc::new(ManualClock::new(START));
        let saves = Arc::new(SaveTo::default());
        let wired = keychain.clone().ok_or(KeychainProblem::NotConfigured);
        let ctx = context_with(dir.path(), events.clone(), clock.clone(), resolver, saves.clone(), wired);
        Harness { dir, ctx, events, clock, saves, transcript: Mutex::new(Vec::new()), keychain }
    }

    /// A harness over an existing directory (kept by the caller).
    pub fn open_in(dir: &Path) -> Self {
        let events = Arc::new(RecordedEvents::default());
        let clock = Arc::new(ManualClock::new(START));
        let saves = Arc::new(SaveTo::default());
        let ctx = context(dir, events.clone(), clock.clone(), MapResolver::new(), saves.clone());
        Harness {
            dir: tempfile::tempdir().unwrap(),
            ctx,
            events,
            clock,
            saves,
            transcript: Mutex::new(Vec::new()),
            keychain: None,
        }
    }

    /// Closes the database and opens it again from the same directory.
    pub fn reopen(self) -> Self {
        let Harness { dir, ctx, keychain, .. } = self;
        drop(ctx);
        Self::open_with(dir, MapResolver::new(), keychain)
    }

    /// Closes the database and opens it again with `keychain` (or none).
    pub fn reopen_with(self, keychain: Option<Arc<dyn Keychain>>) -> Self {
        let Harness { dir, ctx, .. } = self;
        drop(ctx);
        Self::open_with(dir, MapResolver::new(), keychain)
    }

    pub fn call(&self, command: &str, args: Value) -> Result<Value, IpcError> {
        let result = dispatch(&self.ctx, command, args).unwrap_or_else(|| panic!("{command} must be a sync command"));
        self.record(&result);
        result
    }

    pub async fn call_async(&self, command: &str, args: Value) -> Result<Value, IpcError> {
        let Some(Run::Async(run)) = ipc::command(command).map(|row| row.run) else {
            panic!("{command} must be an async command")
        };
        let result = as_value(run(&self.ctx, args).await);
        self.record(&result);
        result
    }

    fn record(&self, result: &Result<Value, IpcError>) {
        let recorded = match result {
            Ok(value) => value.to_string(),
            Err(error) => serde_json::to_string(error).unwrap(),
        };
        self.transcript.lock().unwrap().push(recorded);
    }

    /// Sends a chat message through `chat:send`, as the page does; returns the final message and
    /// every event, all recorded in the transcript.
    pub async fn send(
        &self,
        chat_id: &str,
        content: Option<&str>,
        on: impl FnMut(&Value) + Send,
    ) -> Result<(Value, Vec<Value>), IpcError> {
        let mut request = serde_json::json!({ "chatId": chat_id });
        if let Some(content) = content {
            request["content"] = content.into();
        }
        self.send_request(request, on).await
    }

    /// `chat:send` with `request` as given (`chatId`, `content`, `edit`).
    pub async fn send_request(
        &self,
        request: Value,
        mut on: impl FnMut(&Value) + Send,
    ) -> Result<(Value, Vec<Value>), IpcError> {
        let mut events = Vec::new();
        let Some(Run::Stream(run)) = ipc::command("chat:send").map(|row| row.run) else {
            panic!("chat:send must be a stream command")
        };
        let result = as_value(
            run(&self.ctx, serde_json::json!({ "request": request }), &mut |event| {
                on(&event);
                events.push(event);
            })
            .await,
        );
        for event in &events {
            self.transcript.lock().unwrap().push(event.to_string());
        }
        self.record(&result);
        Ok((result?, events))
    }

    pub fn ok(&self, command: &str, args: Value) -> Value {
        self.call(command, args.clone()).unwrap_or_else(|e| panic!("{command} {args} must succeed: {e:?}"))
    }

    pub fn err(&self, command: &str, args: Value) -> IpcError {
        match self.call(command, args.clone()) {
            Ok(value) => panic!("{command} {args} must fail, returned {value}"),
            Err(error) => error,
        }
    }

    /// Every row of the key and provider tables, to prove that a rejected call wrote nothing.
    pub fn snapshot(&self) -> Vec<String> {
        let conn = rusqlite::Connection::open(self.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
        let mut rows = Vec::new();
        for table in ["providers", "llm_provider_api_keys", "settings"] {
            let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY 1")).unwrap();
            let columns = stmt.column_count();
            let mut query = stmt.query([]).unwrap();
            while let Some(row) = query.next().unwrap() {
                let values: Vec<String> = (0..columns).map(|i| format!("{:?}", row.get_ref(i).unwrap())).collect();
                rows.push(format!("{table}: {}", values.join(" | ")));
            }
        }
        rows
    }

    /// The bytes of the database file and its WAL, for byte-for-byte comparisons.
    pub fn file_bytes(&self) -> (Vec<u8>, Vec<u8>) {
        let path = self.dir.path().join(keypool_store::DATABASE_FILE_NAME);
        let wal = path.with_file_name(format!("{}-wal", keypool_store::DATABASE_FILE_NAME));
        (std::fs::read(&path).unwrap(), std::fs::read(&wal).unwrap_or_default())
    }

    pub fn transcript_text(&self) -> String {
        self.transcript.lock().unwrap().join("\n")
    }
}

/// Runs the sync command `command` as the shell would, on this thread; `None` when no sync
/// command has that name.
pub fn dispatch(ctx: &AppContext, command: &str, args: Value) -> Option<Result<Value, IpcError>> {
    match ipc::command(command)?.run {
        Run::Blocking(run) => Some(as_value(run(ctx, args))),
        Run::Async(_) | Run::Stream(_) => None,
    }
}

/// A command's answer as a `Value`, to look into.
pub fn as_value(answer: ipc::Answer) -> Result<Value, IpcError> {
    answer.map(|raw| serde_json::from_str(raw.get()).expect("a command answers JSON"))
}

pub fn context(
    dir: &Path,
    events: Arc<RecordedEvents>,
    clock: Arc<ManualClock>,
    resolver: MapResolver,
    saves: Arc<SaveTo>,
) -> AppContext {
    context_with(dir, events, clock, resolver, saves, Err(KeychainProblem::NotConfigured))
}

pub fn context_with(
    dir: &Path,
    events: Arc<RecordedEvents>,
    clock: Arc<ManualClock>,
    resolver: MapResolver,
    saves: Arc<SaveTo>,
    keychain: Result<Arc<dyn Keychain>, KeychainProblem>,
) -> AppContext {
    AppContext::with_wiring(
        "test",
        Dirs { data_dir: dir.to_owned(), log_dir: dir.join("logs") },
        Database::open(dir),
        Wiring {
            events,
            waiter: Arc::new(keypool_llm::SimulatedTime::new(clock.clone())),
            clock,
            resolver: Arc::new(resolver),
            pool: PoolConfig::default(),
            save_dialog: saves,
            ledger: true,
            keychain,
            team: None,
            tap: None,
            // The agents' files in the test's own folder, never the user's.
            agent_home: Some(keypool_api::service::AgentHome::in_home(&dir.join("home"))),
            pool_alerts: true,
            deadlines: keypool_llm::Deadlines::default(),
        },
    )
}

/// An OpenAI-compatible provider "Fake" on `fake` offering `models`; its id.
pub fn add_fake_provider(h: &Harness, fake: &keypool_fake_provider::FakeProvider, models: &[&str]) -> String {
    let provider = h.ok(
        "llmConfig:addProvider",
        serde_json::json!({ "name": "Fake", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": models }),
    );
    provider["id"].as_str().unwrap().to_owned()
}

/// Runs `session` on a current-thread runtime with every crate tracing at TRACE level (the HTTP
/// client's `log` records bridged in, as in the app) and returns its result with the log text.
pub fn traced<T>(session: impl FnOnce(&tokio::runtime::Runtime) -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let _ = tracing_log::LogTracer::init();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let result = tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        session(&runtime)
    });
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    (result, logs)
}
