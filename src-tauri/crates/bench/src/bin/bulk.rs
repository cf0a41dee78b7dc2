//! `keypool-bulk-bench`: a 10 000-key pool brought in and read.
//!
//! ```text
//! cargo run --release -p keypool-bench --bin keypool-bulk-bench -- [--keys 10000] [--runs 5] [--reads 15]
//! ```
//! Through the command layer over a temporary store: `llmConfig:previewKeyImport` and the import
//! (`startKeyImport` to its end) of `keys` keys without validation, then with validation against
//! the fake provider on loopback (one key in ten revoked), each in a fresh store `runs` times;
//! then `llmConfig:getApiKeys` and `llmConfig:getPoolStatus` over the pool of `keys` keys, `reads`
//! times each. Prints the medians (and the least and most) and the process's peak RSS.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use keypool_api::ipc::{self, Run};
use keypool_api::service::NoEvents;
use keypool_api::{AppContext, Dirs, Wiring};
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(name = "keypool-bulk-bench", about = "Time importing and reading a large key pool")]
struct Args {
    #[arg(long, default_value_t = 10_000)]
    keys: usize,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    #[arg(long, default_value_t = 15)]
    reads: usize,
}

fn key(n: usize) -> String {
    format!("sk-proj-bench-AbCdEfGhIjKlMnOpQrStUvWxYz{n:08}")
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

struct Store {
    dir: std::path::PathBuf,
    ctx: AppContext,
}

impl Store {
    fn new() -> Store {
        let dir = std::env::temp_dir().join(format!("keypool-bulk-bench-{}", uuid::Uuid::new_v4()));
        let dirs = Dirs { data_dir: dir.clone(), log_dir: dir.join("logs") };
        let database = keypool_store::Database::open(&dir).expect("a temporary store");
        let ctx = AppContext::with_wiring("bench", dirs, Ok(database), Wiring::production(Arc::new(NoEvents)));
        Store { dir, ctx }
    }

    fn sync(&self, command: &str, args: Value) -> Value {
        self.timed_sync(command, args).1
    }

    /// A sync command's answer, and the time it took to the answer's JSON (as the shell gets it).
    fn timed_sync(&self, command: &str, args: Value) -> (Duration, Value) {
        let Some(Run::Blocking(run)) = ipc::command(command).map(|row| row.run) else { panic!("{command} is sync") };
        let started = Instant::now();
        let answer = run(&self.ctx, args).unwrap_or_else(|e| panic!("{command}: {e:?}"));
        let took = started.elapsed();
        (took, serde_json::from_str(answer.get()).expect("a command answers JSON"))
    }

    async fn call(&self, command: &str, args: Value) -> Value {
        let Some(Run::Async(run)) = ipc::command(command).map(|row| row.run) else { panic!("{command} is async") };
        let answer = run(&self.ctx, args).await.unwrap_or_else(|e| panic!("{command}: {e:?}"));
        serde_json::from_str(answer.get()).expect("a command answers JSON")
    }

    /// Preview and import `text` into `provider`: (preview time, import time, the end).
    async fn import(&self, provider: &str, text: &str, validate: bool) -> (Duration, Duration, Value) {
        let started = Instant::now();
        let preview = self.sync("llmConfig:previewKeyImport", json!({ "providerId": provider, "text": text }));
        let previewed = started.elapsed();
        let import_id = preview["importId"].as_str().unwrap().to_owned();
        let started = Instant::now();
        let args = json!({ "importId": import_id, "validate": validate, "keepRejectedDisabled": false, "labelPrefix": "bench" });
        self.call("llmConfig:startKeyImport", args).await;
        let end = self.ctx.bulk_keys().unwrap().finished(&import_id).await.unwrap();
        let imported = started.elapsed();
        (previewed, imported, serde_json::to_value(&end).unwrap())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sorted durations, shown as their median, least and most.
struct Timing(Vec<Duration>);

impl Timing {
    fn of(mut times: Vec<Duration>) -> Timing {
        times.sort();
        Timing(times)
    }
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        let t = &self.0;
        write!(
            f,
            "median {:.1} ms (min {:.1}, max {:.1}, {} runs)",
            ms(&t[t.len() / 2]),
            ms(&t[0]),
            ms(&t[t.len() - 1]),
            t.len()
        )
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let text: String = (0..args.keys).map(|n| format!("{}\n", key(n))).collect();
    let fake = FakeProvider::start().await;
    for n in (0..args.keys).step_by(10) {
        fake.always(&key(n), Reply::InvalidKey);
    }

    for validate in [false, true] {
        let (mut previews, mut imports) = (Vec::new(), Vec::new());
        let mut last = Value::Null;
        for _ in 0..args.runs.max(1) {
            let store = Store::new();
            let provider = store.sync(
                "llmConfig:addProvider",
                json!({ "name": "Fake", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["fake-model"] }),
            );
            let (previewed, imported, end) = store.import(provider["id"].as_str().unwrap(), &text, validate).await;
            assert_eq!(end["state"], "done", "the import ends: {end}");
            previews.push(previewed);
            imports.push(imported);
            last = end;
        }
        let what = if validate { "with validation (fake provider, concurrency 8)" } else { "without validation" };
        println!("previewKeyImport of {} keys: {}", args.keys, Timing::of(previews));
        println!(
            "import of {} keys {what}: {}; added {} of {}",
            args.keys,
            Timing::of(imports),
            last["added"],
            last["total"]
        );
    }

    let store = Store::new();
    let (_, _, end) = store.import("openai", &text, false).await;
    assert_eq!(end["added"], args.keys, "the pool holds every key");
    for command in ["llmConfig:getApiKeys", "llmConfig:getPoolStatus"] {
        let times = (0..args.reads.max(1))
            .map(|_| {
                let (took, answer) = store.timed_sync(command, json!({ "providerId": "openai" }));
                let count = answer.as_array().or_else(|| answer["keys"].as_array()).map_or(0, Vec::len);
                assert_eq!(count, args.keys, "{command} answers every key");
                took
            })
            .collect();
        println!("{command} at {} keys: {}", args.keys, Timing::of(times));
    }
    // The same reads below the command layer: what the store and the pool take, without the
    // answer's JSON.
    let keys = store.ctx.keys().unwrap();
    let times = (0..args.reads.max(1))
        .map(|_| {
            let started = Instant::now();
            let listed = keys.list("openai").unwrap();
            assert_eq!(listed.len(), args.keys, "the service lists every key");
            started.elapsed()
        })
        .collect();
    println!("Keys::list (the service, no JSON) at {} keys: {}", args.keys, Timing::of(times));
    let times = (0..args.reads.max(1))
        .map(|_| {
            let started = Instant::now();
            let status = keys.pool_status("openai").unwrap();
            assert_eq!(status.keys.len(), args.keys, "the service reads every key's status");
            started.elapsed()
        })
        .collect();
    println!("Keys::pool_status (the service, no JSON) at {} keys: {}", args.keys, Timing::of(times));
    println!("peak RSS of the bench process: {:.0} MiB", peak_rss_mib());
}
