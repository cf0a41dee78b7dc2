//! `keypool-bench`: measures the pool against a real endpoint, through the real completion
//! service over a temporary store holding the given keys.
//!
//! ```text
//! cargo run --release --bin keypool-bench -- --base-url URL --kind openai|anthropic|gemini|openrouter \
//!     --keys KEY:WEIGHT[:GROUP],... --requests N [--concurrency C] [--stream] [--same-session]
//! ```
//! A `GROUP` puts the key in that quota group (keys of one Google Cloud project, one OpenAI
//! organization).
//! Prints one line: `ok=N failed=N attempts=N refused=N wall_s=S per_req_ms=M`, where attempts
//! counts HTTP requests sent upstream, refused those that did not give the answer, and
//! per_req_ms is the median latency of one request.
//! `--image PATH` attaches that image (or text file) to every request, as a chat does: it is
//! checked and prepared once (a copy scaled to 2048 px when larger, a thumbnail) and the line
//! starts with `image_prepare_ms=M` (the median of 7 preparations of it; files already stored
//! are not written again, so this is decoding, scaling and encoding) and `image_sent_bytes=N`.
//! `--direct` sends the same requests straight to the endpoint with the first key, bypassing
//! the pool and the service, to measure what they add.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use keypool::{Secret, SessionId};
use keypool_api::service::{NewKey, NewProvider, NoEvents};
use keypool_api::{AppContext, Dirs, Wiring};
use keypool_llm::{
    CancellationToken, ChatMessage, CompletionRequest, ProviderEndpoint, ProviderKind, Role, StopReason,
};

/// A provider kind by its id (`openai`, `anthropic`, …).
fn kind(id: &str) -> Result<ProviderKind, String> {
    ProviderKind::parse(id).ok_or_else(|| format!("not a provider kind: {id}"))
}

#[derive(Parser)]
#[command(name = "keypool-bench", about = "Measure Keypool's key pool against an endpoint")]
struct Args {
    /// The provider's base URL (e.g. https://api.openai.com/v1, https://api.anthropic.com).
    #[arg(long)]
    base_url: String,
    /// The provider's kind: openai, anthropic, gemini or openrouter.
    #[arg(long, value_parser = kind)]
    kind: ProviderKind,
    /// Comma-separated KEY:WEIGHT or KEY:WEIGHT:GROUP (weight 1–100; `$NAME` reads the
    /// environment; GROUP: the key's quota group).
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_key)]
    keys: Vec<BenchKey>,
    #[arg(long)]
    requests: u32,
    #[arg(long, default_value_t = 1)]
    concurrency: u32,
    /// Stream replies (SSE) instead of taking them whole.
    #[arg(long)]
    stream: bool,
    /// All requests in one chat session (one sticky key) instead of a new chat each.
    #[arg(long)]
    same_session: bool,
    /// The model to ask for.
    #[arg(long, default_value = "bench-model")]
    model: String,
    /// Bypass the pool and the service: plain HTTP with the first key, for comparison.
    #[arg(long)]
    direct: bool,
    /// Do not record attempts in the usage ledger (to measure what recording costs).
    #[arg(long)]
    no_ledger: bool,
    /// Attach this image (PNG, JPEG, WebP, GIF) or text file to every request.
    #[arg(long)]
    image: Option<std::path::PathBuf>,
}

/// One key to bench: its value, its weight, its quota group.
#[derive(Clone, Debug)]
struct BenchKey {
    key: String,
    weight: u32,
    group: Option<String>,
}

/// A `KEY:WEIGHT[:GROUP]` that is not one.
#[derive(Debug)]
struct BadKey;

impl std::fmt::Display for BadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("expected KEY:WEIGHT or KEY:WEIGHT:GROUP, with a key and a weight from 1 to 100")
    }
}

impl std::error::Error for BadKey {}

/// Keys may hold `:` themselves: the weight is the last field that is a number, a group (which
/// is not one) may follow it.
fn parse_key(text: &str) -> Result<BenchKey, BadKey> {
    let (rest, last) = text.rsplit_once(':').ok_or(BadKey)?;
    let (key, weight, group) = match last.parse::<u32>() {
        Ok(weight) => (rest, weight, None),
        Err(_) => {
            let (key, weight) = rest.rsplit_once(':').ok_or(BadKey)?;
            (key, weight.parse().map_err(|_| BadKey)?, Some(last.trim().to_owned()).filter(|g| !g.is_empty()))
        }
    };
    if !(1..=100).contains(&weight) || key.trim().is_empty() {
        return Err(BadKey);
    }
    Ok(BenchKey { key: key.trim().to_owned(), weight, group })
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let keys = args.keys.clone();
    let kind = args.kind;

    let dir = std::env::temp_dir().join(format!("keypool-bench-{}", uuid::Uuid::new_v4()));
    let dirs = Dirs { data_dir: dir.clone(), log_dir: dir.join("logs") };
    let database = keypool_store::Database::open(&dirs.data_dir);
    let wiring = Wiring { ledger: !args.no_ledger, ..Wiring::production(Arc::new(NoEvents)) };
    let context = AppContext::with_wiring(env!("CARGO_PKG_VERSION"), dirs, database, wiring);
    let provider = context
        .providers()
        .and_then(|providers| {
            providers.add(NewProvider {
                name: "bench".into(),
                kind,
                base_url: args.base_url.clone(),
                api_key: None,
                models: vec![args.model.clone()],
                default_model: Some(args.model.clone()),
                system_prompt: None,
                on_my_network: false,
            })
        })
        .expect("the provider is stored");
    let keys_service = context.keys().expect("the temporary store opens");
    for (i, bench_key) in keys.iter().enumerate() {
        keys_service
            .add(NewKey {
                provider_id: provider.id.clone(),
                label: Some(format!("key{}", i + 1)),
                api_key: Secret::new(bench_key.key.as_str()),
                enabled: true,
                weight: bench_key.weight,
                limits: keypool::UserLimits::default(),
                quota_group: bench_key.group.clone(),
            })
            .expect("the key is stored");
    }
    let service = context.completions().expect("the temporary store opens").clone();
    let (attachment, image_line) = match &args.image {
        Some(path) => {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let chats = context.chats().expect("the temporary store opens");
            let mut times = Vec::new();
            let mut info = None;
            for _ in 0..7 {
                let began = Instant::now();
                info =
                    Some(chats.attach(&name, &bytes).unwrap_or_else(|e| panic!("{} is refused: {e}", path.display())));
                times.push(began.elapsed());
            }
            times.sort();
            let info = info.expect("attached");
            let sent = chats.attachments().to_send_by_id(&info.id, &name).expect("the attachment reads back");
            let sent_bytes = match &sent {
                keypool_llm::Attachment::Image { data, .. } => data.len(),
                keypool_llm::Attachment::Text { text, .. } => text.len(),
            };
            let line =
                format!("image_prepare_ms={:.1} image_sent_bytes={sent_bytes} ", times[3].as_secs_f64() * 1000.0);
            (Some(sent), line)
        }
        None => (None, String::new()),
    };
    let endpoint = ProviderEndpoint {
        id: keypool::ProviderId::new(provider.id.as_str()),
        name: provider.name.as_str().into(),
        kind,
        base_url: args.base_url.as_str().into(),
        provider_key: None,
    };
    let direct_key = Secret::new(keys[0].key.as_str());
    let http = reqwest::Client::new();

    let semaphore = Arc::new(tokio::sync::Semaphore::new(args.concurrency.max(1) as usize));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..args.requests {
        let permit = semaphore.clone().acquire_owned().await.expect("semaphore open");
        let request = CompletionRequest {
            session: SessionId::new(if args.same_session { "bench".to_owned() } else { format!("bench-{i}") }),
            endpoint: endpoint.clone(),
            model: args.model.clone(),
            messages: vec![ChatMessage {
                attachments: attachment.iter().cloned().collect(),
                ..ChatMessage::new(Role::User, "Say hello.")
            }],
            max_tokens: 64,
            stream: args.stream,
            source: "keypool-bench".into(),
            preferred_key: None,
        };
        let service = service.clone();
        let (http, direct_key, direct) = (http.clone(), direct_key.clone(), args.direct);
        tasks.push(tokio::spawn(async move {
            let _permit = permit;
            let began = Instant::now();
            let (ok, attempts) = if direct {
                (send_direct(&http, &request, &direct_key).await, 1)
            } else {
                let outcome = service.complete(&request, &mut |_| {}, &CancellationToken::new()).await;
                (matches!(outcome.end, StopReason::Finished), outcome.attempts)
            };
            (ok, attempts, began.elapsed())
        }));
    }
    let (mut ok, mut failed, mut attempts, mut latencies) = (0u32, 0u32, 0u32, Vec::<Duration>::new());
    // Attempts that did not give the answer: refused (or broken) upstream requests.
    let mut refused = 0u32;
    for task in tasks {
        let (success, tries, latency) = task.await.expect("a request task panicked");
        if success {
            ok += 1;
            refused += tries.saturating_sub(1);
        } else {
            failed += 1;
            refused += tries;
        }
        attempts += tries;
        latencies.push(latency);
    }
    let wall = started.elapsed();
    latencies.sort();
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{image_line}ok={ok} failed={failed} attempts={attempts} refused={refused} wall_s={:.3} per_req_ms={:.3}",
        wall.as_secs_f64(),
        median.as_secs_f64() * 1000.0
    );
}

/// The same request without Keypool: one key, no pool, no failover.
async fn send_direct(http: &reqwest::Client, request: &CompletionRequest, key: &Secret) -> bool {
    let endpoint = &request.endpoint;
    let body = endpoint.completion_body(&request.model, &request.messages, request.max_tokens, request.stream);
    let response = endpoint
        .authorize(http.post(endpoint.completion_url(&request.model, request.stream)), key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await;
    match response {
        Ok(response) if response.status().is_success() => response.bytes().await.is_ok(),
        _ => false,
    }
}
