//! Selection costs on a warm cache.
//!
//! Targets (default strategy): a bound session's lookup ≤ 100 ns; a new selection with 10 keys
//! ≤ 200 ns. The default, smooth weighted round-robin, is one pass over the available keys (three
//! dense arrays), so a new selection grows with them: on 2 cores, 0.14 µs at 10 keys, 0.84 µs at
//! 1 000, 8 µs at 10 000, where the runs strategy (`StrategyKind::WeightedRoundRobin`, a binary
//! search over prefix sums) stays at 0.14 µs; its runs were the price (issue 45).
//!
//! Run: `CARGO_TARGET_DIR=/tmp/kp-target cargo bench -p keypool -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use keypool::*;

const NOW: Timestamp = Timestamp::from_millis(1_700_000_000_000);

struct Store(Vec<KeyEntry>);

impl KeyLoader for Store {
    fn load(&self, _: &ProviderId) -> Result<Vec<KeyEntry>, LoadError> {
        Ok(self.0.clone())
    }
}

/// A warm pool of `n` keys with mixed weights and UUID-sized ids, as the store would give.
fn pool(n: usize) -> (KeyPool, ProviderId) {
    let provider = ProviderId::from("openai");
    let keys = (0..n)
        .map(|i| KeyEntry {
            id: KeyId::from(format!("0193b7c2-5a1e-7f00-8000-{i:012x}")),
            provider_id: provider.clone(),
            label: Some(format!("key {i}")),
            api_key: Secret::from(format!("sk-proj-{i:040}")),
            enabled: true,
            weight: 1 + (i % 7) as u32,
            sort_order: i as i64,
            created_at: NOW,
            limits: UserLimits::default(),
            sealed: false,
            quota_group: None,
        })
        .collect();
    let store = Arc::new(Store(keys));
    let pool = KeyPool::new(PoolConfig::default(), store, Arc::new(EnvResolver));
    pool.select(SelectionRequest::new(&provider), NOW).expect("warm the cache");
    (pool, provider)
}

fn bound_session(c: &mut Criterion) {
    let (pool, provider) = pool(10);
    let session = SessionId::from("0193b7c2-5a1e-7f00-8000-00000000abcd");
    let req = SelectionRequest::new(&provider).for_session(&session);
    pool.select(req, NOW).expect("bind");
    c.bench_function("bound_session_hit", |b| {
        b.iter(|| black_box(pool.select(black_box(req), NOW).expect("bound key")))
    });
}

fn new_selection(c: &mut Criterion) {
    let mut group = c.benchmark_group("new_selection_no_session");
    for n in [2, 10, 100, 1_000, 10_000] {
        let (pool, provider) = pool(n);
        let req = SelectionRequest::new(&provider);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| black_box(pool.select(black_box(req), NOW).expect("a key")))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("new_selection_fresh_session_then_release");
    for n in [10, 10_000] {
        let (pool, provider) = pool(n);
        let sessions: Vec<SessionId> =
            (0..1024).map(|i| SessionId::from(format!("0193b7c2-5a1e-7f00-9000-{i:012x}"))).collect();
        let mut i = 0;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let session = &sessions[i % sessions.len()];
                i += 1;
                let got = pool.select(SelectionRequest::new(&provider).for_session(session), NOW);
                pool.release_session(session);
                black_box(got.expect("a key"))
            })
        });
    }
    group.finish();
}

/// Two threads selecting from one pool at once: the measured thread's time per selection while
/// a second thread selects from the same pool in a tight loop.
fn two_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("two_threads");
    for (name, bound) in [("new_selection_10_keys", false), ("bound_session_10_keys", true)] {
        let (pool, provider) = pool(10);
        let stop = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                let session = SessionId::from("bench-background");
                let req = request(&provider, bound.then_some(&session));
                while !stop.load(Ordering::Relaxed) {
                    black_box(pool.select(black_box(req), NOW).expect("a key"));
                }
            });
            let session = SessionId::from("bench-measured");
            let req = request(&provider, bound.then_some(&session));
            group.bench_function(name, |b| b.iter(|| black_box(pool.select(black_box(req), NOW).expect("a key"))));
            stop.store(true, Ordering::Relaxed);
        });
    }
    group.finish();
}

fn request<'a>(provider: &'a ProviderId, session: Option<&'a SessionId>) -> SelectionRequest<'a> {
    SelectionRequest { provider, session, exclude: &[], demand: Demand::default(), preferred: None }
}

criterion_group!(benches, bound_session, new_selection, two_threads);
criterion_main!(benches);
