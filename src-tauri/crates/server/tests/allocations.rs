//! What one relayed request costs `keypool-server` in heap allocations: a whole answer, a
//! 40-event stream, and that stream translated for an Anthropic client, each counted over many
//! requests and divided. A count does not move with the machine's load (CPU time does), so this
//! is a test: it fails when a change makes a request allocate more than [`LIMITS`] allow.
//!
//! Everything runs in this process, under a counting allocator: the server ([`keypool_server`],
//! as `keypool-server serve` runs it: its store, ledger, metrics, members and alerts), an
//! upstream answering like the bench's nginx (`tests/bench/local-api/upstream.conf`) and a
//! client sending the bench's requests (`chat.lua`), both of them written so that they allocate
//! nothing per request. What is counted is therefore the server's own: its handler, the pool,
//! the relay, the upstream client, the ledger's row (flushed before the count is read: SQLite's
//! own allocations counted too), the metrics. `KEYPOOL_ALLOCATION_SITES=N` prints the N call sites that allocate the most per
//! request (from a second, traced run), each by its first 5 frames (`KEYPOOL_ALLOCATION_FRAMES`).
//!
//! A harness of its own (`harness = false`): the test runner's threads would allocate too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most allocations one request may cost, by answer (whole, stream, translated stream): what
/// it costs now (23.3, 26.4, 75.4; two of them the boxes of the forward and its attempt, which
/// keep the request's future small: cheaper than the copies of a large one) and a little room
/// for what moves between runs (the background work a count also sees; a stream's body read in
/// one piece or in two).
const LIMITS: [(Answer, u64); 3] = [(Answer::Whole, 25), (Answer::Stream, 28), (Answer::Translated, 77)];

/// Requests counted per answer, after as many to warm up (connections, caches, the ledger's
/// buffers grown).
const REQUESTS: u64 = 400;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static REALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call goes to the system allocator with the same arguments; only counts are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        trace::note(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        trace::note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// SQLite's own allocations (the ledger's rows): its `malloc` and `realloc` counted too, through
/// its memory methods, set before it starts.
mod sqlite {
    use std::ffi::{c_int, c_void};
    use std::sync::atomic::Ordering;
    use std::sync::OnceLock;

    use keypool_store::rusqlite::ffi;

    /// SQLite's default methods (their `pAppData` is SQLite's, never touched here).
    struct Methods(ffi::sqlite3_mem_methods);
    // SAFETY: the methods are plain functions; the pointer they carry is only handed back to them.
    unsafe impl Send for Methods {}
    unsafe impl Sync for Methods {}

    static SYSTEM: OnceLock<Methods> = OnceLock::new();

    unsafe extern "C" fn malloc(size: c_int) -> *mut c_void {
        super::ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: SQLite's own method, with its own argument.
        unsafe { (SYSTEM.get().and_then(|m| m.0.xMalloc).expect("SQLite's malloc"))(size) }
    }

    unsafe extern "C" fn realloc(ptr: *mut c_void, size: c_int) -> *mut c_void {
        super::REALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { (SYSTEM.get().and_then(|m| m.0.xRealloc).expect("SQLite's realloc"))(ptr, size) }
    }

    /// Counts SQLite's allocations from now on; before any connection is opened.
    pub fn count() {
        // SAFETY: SQLite is not initialized yet (nothing of it has run); the methods it hands out
        // are kept for the process's life, and the ones given back call them.
        unsafe {
            let mut system: ffi::sqlite3_mem_methods = std::mem::zeroed();
            assert_eq!(ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETMALLOC, &mut system), ffi::SQLITE_OK);
            let counted = ffi::sqlite3_mem_methods { xMalloc: Some(malloc), xRealloc: Some(realloc), ..system };
            let _ = SYSTEM.set(Methods(system));
            assert_eq!(ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &counted), ffi::SQLITE_OK);
        }
    }
}

/// Call sites of allocations, recorded only while asked for (`KEYPOOL_ALLOCATION_SITES`).
mod trace {
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    pub static ON: AtomicBool = AtomicBool::new(false);
    static SITES: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

    thread_local! {
        /// Inside the tracer: its own allocations are not traced.
        static INSIDE: Cell<bool> = const { Cell::new(false) };
    }

    /// Frames that say nothing of who allocated: the allocator's, the standard collections'.
    const GENERIC: [&str; 20] = [
        "alloc::",
        "allocations::",
        "std::backtrace",
        "__rust",
        "__rdl",
        "core::ptr",
        "<alloc",
        "hashbrown",
        ": alloc",
        ": allocate",
        ": to_vec",
        ": to_owned",
        ": with_capacity",
        ": from",
        ": into",
        ": clone",
        ": grow",
        ": reserve",
        ": push",
        "core::convert",
    ];

    pub fn note(_size: usize) {
        if !ON.load(Ordering::Relaxed) {
            return;
        }
        let Ok(false) = INSIDE.try_with(|inside| inside.replace(true)) else { return };
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        // The first frames of Keypool's own crates (or hyper's, tokio's) below the allocator.
        let site: Vec<&str> = trace
            .lines()
            .map(str::trim)
            .filter(|line| !line.starts_with("at "))
            .filter(|line| !GENERIC.iter().any(|generic| line.contains(generic)))
            .take(frames())
            .collect();
        let mut sites = SITES.lock().unwrap_or_else(|e| e.into_inner());
        *sites.get_or_insert_with(HashMap::new).entry(site.join(" <- ")).or_default() += 1;
        drop(sites);
        INSIDE.with(|inside| inside.set(false));
    }

    /// How many frames name a site (`KEYPOOL_ALLOCATION_FRAMES`, 5 unless told).
    fn frames() -> usize {
        static FRAMES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *FRAMES
            .get_or_init(|| std::env::var("KEYPOOL_ALLOCATION_FRAMES").ok().and_then(|n| n.parse().ok()).unwrap_or(5))
    }

    /// The sites recorded, most first, and forgets them.
    pub fn take() -> Vec<(String, u64)> {
        let was = ON.swap(false, Ordering::SeqCst);
        let mut sites: Vec<_> =
            SITES.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default().into_iter().collect();
        ON.store(was, Ordering::SeqCst);
        sites.sort_by_key(|site| std::cmp::Reverse(site.1));
        sites
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Whole,
    Stream,
    Translated,
}

impl Answer {
    /// The request the bench's wrk sends for this answer (`tests/bench/local-api/chat.lua`).
    fn request(self, token: &str) -> Vec<u8> {
        let (path, auth, body) = match self {
            Answer::Whole => (
                "/v1/chat/completions",
                format!("Authorization: Bearer {token}\r\n"),
                r#"{"model":"bench-model","messages":[{"role":"user","content":"say hi"}]}"#,
            ),
            Answer::Stream => (
                "/v1/chat/completions",
                format!("Authorization: Bearer {token}\r\n"),
                r#"{"model":"bench-stream","stream":true,"messages":[{"role":"user","content":"say hi"}]}"#,
            ),
            Answer::Translated => (
                "/v1/messages",
                format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n"),
                r#"{"model":"claude-bench","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"say hi"}]}"#,
            ),
        };
        format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }
}

/// The upstream's answers, as the bench's nginx gives them.
fn whole_answer() -> Vec<u8> {
    let body = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":0,"model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the upstream."},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":5}}}"#;
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// 40 events: a role with the first word, 37 words, the end with its usage, `[DONE]`.
fn streamed_answer() -> Vec<u8> {
    let chunk = |delta: &str, finish: &str, usage: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"bench-model\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]{usage}}}\n\n"
        )
    };
    let mut body = chunk(r#"{"role":"assistant","content":"Hello"}"#, "null", "");
    for _ in 0..37 {
        body.push_str(&chunk(r#"{"content":" word"}"#, "null", ""));
    }
    body.push_str(&chunk(
        "{}",
        "\"stop\"",
        r#","usage":{"prompt_tokens":11,"completion_tokens":38,"total_tokens":49}"#,
    ));
    body.push_str("data: [DONE]\n\n");
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serves every connection on a thread of its own: reads a request (its head and its
/// `Content-Length` of body) into a fixed buffer, answers the whole or the streamed answer by its
/// path. Allocates nothing per request.
fn upstream(listener: TcpListener) {
    let answers: &'static [Vec<u8>; 2] = Box::leak(Box::new([whole_answer(), streamed_answer()]));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 1 << 16];
            while let Some(request) = read_request(&mut stream, &mut buffer) {
                let answer = if request.starts_with(b"POST /stream/") { &answers[1] } else { &answers[0] };
                if stream.write_all(answer).is_err() {
                    return;
                }
            }
        });
    }
}

/// One request's head and body into `buffer`; its first bytes. `None` once the peer closed.
fn read_request<'a>(stream: &mut TcpStream, buffer: &'a mut [u8]) -> Option<&'a [u8]> {
    let mut filled = 0;
    loop {
        let read = stream.read(&mut buffer[filled..]).ok().filter(|&n| n > 0)?;
        filled += read;
        let Some(head) = find(&buffer[..filled], b"\r\n\r\n") else { continue };
        let length = header(&buffer[..head], b"content-length").unwrap_or(0);
        while filled < head + 4 + length {
            filled += stream.read(&mut buffer[filled..]).ok().filter(|&n| n > 0)?;
        }
        return Some(&buffer[..filled]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// A header's value as a number, its name matched in any case.
fn header(head: &[u8], name: &[u8]) -> Option<usize> {
    head.split(|&b| b == b'\n').find_map(|line| {
        let (key, value) = line.split_at(line.iter().position(|&b| b == b':')?);
        if !key.eq_ignore_ascii_case(name) {
            return None;
        }
        std::str::from_utf8(&value[1..]).ok()?.trim().parse().ok()
    })
}

/// Sends `request` and reads its whole answer (by its length, or its chunks to the last) into
/// `buffer`; the answer's status.
fn exchange(stream: &mut TcpStream, request: &[u8], buffer: &mut [u8]) -> u16 {
    stream.write_all(request).expect("the server takes the request");
    let mut filled = 0;
    let head = loop {
        let read = stream.read(&mut buffer[filled..]).expect("the server answers");
        assert!(read > 0, "the server closed the connection");
        filled += read;
        if let Some(head) = find(&buffer[..filled], b"\r\n\r\n") {
            break head;
        }
    };
    let status = std::str::from_utf8(&buffer[9..12]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    match header(&buffer[..head], b"content-length") {
        Some(length) => {
            while filled < head + 4 + length {
                filled += stream.read(&mut buffer[filled..]).expect("the body comes");
            }
        }
        None => {
            // Chunked: until the last chunk's empty line.
            while !buffer[..filled].ends_with(b"\r\n0\r\n\r\n") && !buffer[head + 4..filled].starts_with(b"0\r\n\r\n") {
                let read = stream.read(&mut buffer[filled..]).expect("the stream goes on");
                assert!(read > 0, "the stream ended before its last chunk");
                filled += read;
            }
        }
    }
    status
}

fn main() {
    let sites = std::env::var("KEYPOOL_ALLOCATION_SITES").ok().and_then(|n| n.parse::<usize>().ok());
    // As the bench runs it: no log line per request.
    // SAFETY: set before any other thread of this process exists.
    unsafe { std::env::set_var("RUST_LOG", "warn") };
    sqlite::count();
    let upstream_listener = TcpListener::bind("127.0.0.1:0").expect("a port for the upstream");
    let upstream_port = upstream_listener.local_addr().expect("its address").port();
    std::thread::spawn(move || upstream(upstream_listener));

    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = format!(
        r#"
[[providers]]
name = "bench"
kind = "openai"
base_url = "http://127.0.0.1:{upstream_port}/v1"
models = ["bench-model"]
[[providers.keys]]
key = "k1"
[[providers.keys]]
key = "k2"
[[providers.keys]]
key = "k3"
[[providers]]
name = "bench-stream"
kind = "openai"
base_url = "http://127.0.0.1:{upstream_port}/stream/v1"
models = ["bench-stream"]
[[providers.keys]]
key = "k1"
[[providers.keys]]
key = "k2"
[[providers.keys]]
key = "k3"
[[routes]]
model = "claude-bench"
to = "bench-stream/bench-stream"
"#
    );
    let config_path = dir.path().join("server.toml");
    std::fs::write(&config_path, config).expect("the config is written");
    let token_path = dir.path().join("token");
    std::fs::write(&token_path, "allocations-test-token-0123456789abcdef").expect("the token is written");
    let data_dir = dir.path().join("data");

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let running = runtime
        .block_on(keypool_server::start_with_args([
            "--data-dir",
            data_dir.to_str().expect("a path"),
            "--listen",
            "127.0.0.1:0",
            "--config",
            config_path.to_str().expect("a path"),
            "--token-file",
            token_path.to_str().expect("a path"),
        ]))
        .expect("the server starts");
    let address = running.address();

    let mut failed = Vec::new();
    println!("allocations per relayed request (and reallocations), {REQUESTS} requests each:");
    for (answer, limit) in LIMITS {
        let request = answer.request("allocations-test-token-0123456789abcdef");
        let mut buffer = vec![0u8; 1 << 16];
        let mut client = TcpStream::connect(address).expect("the server listens");
        client.set_nodelay(true).expect("no delay");
        let mut round = |count: u64| {
            for _ in 0..count {
                let status = exchange(&mut client, &request, &mut buffer);
                assert_eq!(status, 200, "{answer:?}: {}", String::from_utf8_lossy(&buffer[..400]));
            }
            running.flush();
        };
        round(REQUESTS);
        let (before, re_before) = (ALLOCATIONS.load(Ordering::SeqCst), REALLOCATIONS.load(Ordering::SeqCst));
        round(REQUESTS);
        let allocations = (ALLOCATIONS.load(Ordering::SeqCst) - before) as f64 / REQUESTS as f64;
        let reallocations = (REALLOCATIONS.load(Ordering::SeqCst) - re_before) as f64 / REQUESTS as f64;
        println!("  {answer:?}: {allocations:.1} ({reallocations:.1}), at most {limit}");
        if allocations > limit as f64 + 0.5 {
            failed.push(format!("{answer:?}: {allocations:.1} allocations per request, more than {limit}"));
        }
        if let Some(top) = sites {
            trace::ON.store(true, Ordering::SeqCst);
            round(100);
            trace::ON.store(false, Ordering::SeqCst);
            for (site, count) in trace::take().into_iter().take(top) {
                println!("    {:>6.2}  {site}", count as f64 / 100.0);
            }
        }
    }
    if !failed.is_empty() {
        eprintln!("a relayed request allocates more than it may:\n  {}", failed.join("\n  "));
        std::process::exit(1);
    }
}
