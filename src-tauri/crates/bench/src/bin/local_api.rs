//! `keypool-local-api-bench`: what the local API adds to a request, against any OpenAI-
//! compatible upstream (the fake provider, a real gateway), and how many requests per second it
//! carries, beside the upstream called directly or another proxy.
//!
//! ```text
//! cargo run --release --bin keypool-local-api-bench -- --upstream http://127.0.0.1:18080/v1 \
//!     --keys k1,k2 --requests 2000 --concurrency 1 --through keypool|direct|URL [--token T] [--stream]
//! ```
//! `--through keypool` starts Keypool's local API in this process over a temporary store holding
//! the keys (each request a new conversation); `direct` calls the upstream with the first key;
//! a URL calls another OpenAI-compatible proxy there (e.g. LiteLLM's) with `--token`.
//! `--no-ledger` records no attempt, to measure what the usage ledger costs.
//! Prints `through=… concurrency=… ok=N failed=N p50_ms=… p90_ms=… rps=…`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use keypool::Secret;
use keypool_api::ipc::{self, Run};
use keypool_api::service::{NewKey, NewProvider, NoEvents};
use keypool_api::{AppContext, Dirs, Wiring};
use serde_json::json;

#[derive(Parser)]
#[command(name = "keypool-local-api-bench")]
struct Args {
    /// The upstream's OpenAI-compatible base URL (ending in /v1).
    #[arg(long)]
    upstream: String,
    /// Comma-separated keys for the upstream.
    #[arg(long, value_delimiter = ',', required = true)]
    keys: Vec<String>,
    #[arg(long)]
    requests: usize,
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// `keypool`, `direct`, or another proxy's base URL (ending in /v1).
    #[arg(long, default_value = "keypool")]
    through: String,
    /// The other proxy's key.
    #[arg(long, default_value = "")]
    token: String,
    #[arg(long, default_value = "bench-model")]
    model: String,
    #[arg(long)]
    stream: bool,
    /// Requests sent first and not measured (connections, caches).
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Only start Keypool's local API over the upstream and serve until killed, printing
    /// `url=… token=…` once it listens: for another load generator (wrk).
    #[arg(long)]
    serve: bool,
    /// Records no attempt in the usage ledger (to measure what recording costs).
    #[arg(long)]
    no_ledger: bool,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    // The HTTP client is built without a default TLS provider (as the app's is); install one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = std::env::temp_dir().join(format!("keypool-local-api-bench-{}", std::process::id()));
    if args.serve {
        let (_context, base, token) = start_keypool(&args, &dir).await;
        println!("url={} token={token}", base.trim_end_matches("/v1"));
        let _ = tokio::signal::ctrl_c().await;
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let (base, token, _context) = match args.through.as_str() {
        "direct" => (args.upstream.clone(), args.keys[0].clone(), None),
        "keypool" => {
            let (context, base, token) = start_keypool(&args, &dir).await;
            (base, token, Some(context))
        }
        other => (other.trim_end_matches('/').to_owned(), args.token.clone(), None),
    };
    let http = reqwest::Client::builder().pool_max_idle_per_host(args.concurrency * 2).build().unwrap();
    let url = format!("{base}/chat/completions");
    let send = |i: usize| {
        let body = json!({ "model": args.model, "stream": args.stream,
            "messages": [{ "role": "user", "content": format!("request {i}: say hi") }] });
        let request = http.post(&url).bearer_auth(&token).json(&body);
        async move {
            let started = Instant::now();
            let ok = match request.send().await {
                Ok(response) => response.status().is_success() && response.bytes().await.is_ok(),
                Err(_) => false,
            };
            (ok, started.elapsed())
        }
    };
    for i in 0..args.warmup {
        send(i).await;
    }
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..args.concurrency {
        let next = next.clone();
        let total = args.requests;
        workers.push(async move {
            let mut results = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    return results;
                }
                results.push(send(i + 1_000_000).await);
            }
        });
    }
    let results: Vec<(bool, Duration)> = futures_util::future::join_all(workers).await.into_iter().flatten().collect();
    let wall = started.elapsed();
    let ok = results.iter().filter(|(ok, _)| *ok).count();
    let mut latencies: Vec<f64> = results.iter().map(|(_, d)| d.as_secs_f64() * 1000.0).collect();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "through={} concurrency={} stream={} ok={} failed={} p50_ms={:.3} p90_ms={:.3} rps={:.0}",
        args.through,
        args.concurrency,
        args.stream,
        ok,
        results.len() - ok,
        at(0.5),
        at(0.9),
        results.len() as f64 / wall.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keypool over a temporary store with the upstream and its keys, its local API on a free port.
async fn start_keypool(args: &Args, dir: &std::path::Path) -> (AppContext, String, String) {
    std::fs::create_dir_all(dir).unwrap();
    let database = keypool_store::Database::open(dir);
    let dirs = Dirs { data_dir: dir.to_owned(), log_dir: dir.join("logs") };
    let wiring = Wiring { ledger: !args.no_ledger, ..Wiring::production(Arc::new(NoEvents)) };
    let context = AppContext::with_wiring("bench", dirs, database, wiring);
    let provider = context
        .providers()
        .unwrap()
        .add(NewProvider {
            name: "upstream".into(),
            kind: keypool_llm::ProviderKind::Openai,
            base_url: args.upstream.clone(),
            api_key: None,
            models: vec![args.model.clone()],
            default_model: Some(args.model.clone()),
            system_prompt: None,
            on_my_network: false,
        })
        .unwrap();
    for key in &args.keys {
        context
            .keys()
            .unwrap()
            .add(NewKey {
                provider_id: provider.id.clone(),
                label: None,
                api_key: Secret::new(key.as_str()),
                enabled: true,
                weight: 1,
                limits: Default::default(),
                quota_group: None,
            })
            .unwrap();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let Some(Run::Async(configure)) = ipc::command("localApi:configure").map(|row| row.run) else {
        panic!("localApi:configure is an async command")
    };
    let configured = configure(&context, json!({ "enabled": true, "port": port })).await.expect("the local API starts");
    let configured: serde_json::Value = serde_json::from_str(configured.get()).expect("the answer is JSON");
    let token = configured["token"].as_str().unwrap().to_owned();
    (context, format!("http://127.0.0.1:{port}/v1"), token)
}
