//! `keypool-ledger-bench`: how fast the usage summary answers over a large ledger.
//!
//! ```text
//! cargo run --release -p keypool-bench --bin keypool-ledger-bench -- [--rows 1000000] [--days 180] [--runs 15]
//! ```
//! Fills a temporary store with `rows` attempts spread over `days` (10 keys, 3 models, mixed
//! outcomes), then times `usage:getSummary` over the whole range and over the last 30 days
//! through the command layer, and prints the medians.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use keypool_api::ipc::{self, Run};
use keypool_api::service::NoEvents;
use keypool_api::{AppContext, Dirs, Wiring};
use keypool_store::usage::{self, AttemptRow};
use serde_json::json;

#[derive(Parser)]
#[command(name = "keypool-ledger-bench", about = "Time the usage summary over a large ledger")]
struct Args {
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    #[arg(long, default_value_t = 180)]
    days: i64,
    #[arg(long, default_value_t = 15)]
    runs: usize,
}

const OUTCOMES: [&str; 5] = ["ok", "ok", "ok", "rate_limited", "provider_error"];

fn main() {
    let args = Args::parse();
    let dir = std::env::temp_dir().join(format!("keypool-ledger-bench-{}", uuid::Uuid::new_v4()));
    let dirs = Dirs { data_dir: dir.clone(), log_dir: dir.join("logs") };
    let database = keypool_store::Database::open(&dir).expect("a temporary store");
    let now = 1_800_000_000_000i64;
    let span = args.days * 86_400_000;
    let filled = Instant::now();
    {
        let mut conn = database.lock().expect("the store");
        let mut batch = Vec::with_capacity(10_000);
        for i in 0..args.rows {
            let key = i % 10;
            batch.push(AttemptRow {
                at: now - span + (i as i64 * span / args.rows as i64),
                provider_id: "openai".into(),
                key_id: Some(format!("key-{key}")),
                model: ["gpt-4o", "gpt-4o-mini", "gpt-4.1"][i % 3].into(),
                chat_id: Some(format!("chat-{}", i % 500)),
                source: "chat".into(),
                member: None,
                outcome: OUTCOMES[i % OUTCOMES.len()],
                status: Some(200),
                ttft_ms: Some(150 + (i % 700) as u64),
                latency_ms: 300 + (i % 5_000) as u64,
                input_tokens: Some(1_000 + (i % 2_000) as u64),
                cached_tokens: Some((i % 1_000) as u64),
                output_tokens: Some(100 + (i % 400) as u64),
            });
            if batch.len() == batch.capacity() {
                usage::record(&mut conn, &batch).expect("rows are written");
                batch.clear();
            }
        }
        usage::record(&mut conn, &batch).expect("rows are written");
    }
    eprintln!("filled {} attempts in {:.1} s", args.rows, filled.elapsed().as_secs_f64());
    let ctx = AppContext::with_wiring("bench", dirs, Ok(database), Wiring::production(Arc::new(NoEvents)));
    for (name, from) in [("whole range", now - span), ("last 30 days", now - 30 * 86_400_000)] {
        let (timing, summary) =
            time_command(&ctx, args.runs, "usage:getSummary", json!({ "from": from, "to": now + 1 }));
        assert!(summary["totals"]["requests"].as_u64().unwrap_or(0) > 0, "the summary counts the attempts");
        println!("usage:getSummary over {} attempts, {name}: {timing}", args.rows);
    }
    // The Usage page's series over its longest period, 90 days: by the day, as the page reads it
    // when every day is 24 hours long, and by the hour, as it reads it across a daylight-saving change.
    let from = now - 90 * 86_400_000;
    for bucket in ["day", "hour"] {
        let args_json = json!({ "bucket": bucket, "from": from, "to": now + 1 });
        let (timing, answer) = time_command(&ctx, args.runs, "usage:getSeries", args_json);
        // What crosses to the web view: the answer as JSON.
        let kilobytes = answer.to_string().len() / 1000;
        println!(
            "usage:getSeries over {} attempts, 90 days by the {bucket}: {timing}, {kilobytes} kB of JSON",
            args.rows
        );
    }
    drop(ctx);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `command` with `args` through the command layer, `runs` times: the timing and the last answer.
fn time_command(ctx: &AppContext, runs: usize, command: &str, args: serde_json::Value) -> (Timing, serde_json::Value) {
    let Some(Run::Blocking(run)) = ipc::command(command).map(|row| row.run) else {
        panic!("{command} is a sync command")
    };
    let mut answer = None;
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let started = Instant::now();
            answer = Some(run(ctx, args.clone()).expect("answers"));
            started.elapsed()
        })
        .collect();
    times.sort();
    let answer = answer.map_or(serde_json::Value::Null, |raw| serde_json::from_str(raw.get()).expect("JSON"));
    (Timing(times), answer)
}

/// Sorted durations, shown as their median, least and most.
struct Timing(Vec<Duration>);

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        let times = &self.0;
        write!(
            f,
            "median {:.1} ms (min {:.1}, max {:.1}, {} runs)",
            ms(&times[times.len() / 2]),
            ms(&times[0]),
            ms(&times[times.len() - 1]),
            times.len()
        )
    }
}
