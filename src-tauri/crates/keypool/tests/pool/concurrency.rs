//! Many threads, one pool: the invariants hold under real concurrency (no sleeps; a shared
//! manual clock moves time).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, RwLock};
use std::thread;
use std::time::Duration;

use keypool::*;

use crate::support::*;

const THREADS: usize = 8;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What callers know for certain once a report has returned: a rejected key is dead for good,
/// a rate-limited one rests at least `base` from the report's `now`. Each fact carries the
/// sequence number of its report, so a selection is only judged by facts that preceded it.
#[derive(Default)]
struct Oracle {
    seq: AtomicU64,
    dead: Mutex<HashMap<KeyId, u64>>,
    resting: Mutex<HashMap<KeyId, (Timestamp, u64)>>,
}

impl Oracle {
    fn check(&self, key: &KeyId, started: u64, now: Timestamp) {
        if let Some(&seq) = self.dead.lock().unwrap().get(key) {
            assert!(seq >= started, "{key} was handed out after its 401 report returned");
        }
        if let Some(&(until, seq)) = self.resting.lock().unwrap().get(key) {
            assert!(
                seq >= started || until <= now,
                "{key} was handed out at {now} while resting until at least {until}"
            );
        }
    }
}

#[test]
fn threads_never_get_unavailable_keys_and_disable_each_key_once() {
    let weights: Vec<u32> = (0..40).map(|i| 1 + i % 3).collect();
    let keys: Vec<KeyEntry> =
        weights.iter().enumerate().map(|(i, &w)| entry("openai", &format!("k{i:02}"), w, i as i64)).collect();
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    let oracle = Oracle::default();
    let rejected: Mutex<HashSet<KeyId>> = Mutex::default();
    let barrier = Barrier::new(THREADS);
    // Operations share the clock's reading; time moves only between them. Without this a thread
    // could call the pool with a `now` older than one another thread already passed (a sweep at
    // a later now legitimately ends a cooldown the stale caller thinks still runs).
    let time = RwLock::new(());

    thread::scope(|s| {
        for t in 0..THREADS {
            let (f, oracle, rejected, barrier, time) = (&f, &oracle, &rejected, &barrier, &time);
            s.spawn(move || {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1));
                let sessions: Vec<SessionId> = (0..25).map(|j| SessionId::from(format!("t{t}-s{j}"))).collect();
                barrier.wait();
                for _ in 0..2_000 {
                    let session = &sessions[rng.next() as usize % sessions.len()];
                    if rng.next() % 100 < 2 {
                        let _advancing = time.write().unwrap();
                        f.clock.advance(Duration::from_secs(rng.next() % 40));
                        continue;
                    }
                    let _reading = time.read().unwrap();
                    let now = f.now();
                    let started = oracle.seq.load(Ordering::SeqCst);
                    let roll = rng.next() % 1_000;
                    let req = SelectionRequest::new(&f.openai).for_session(session);
                    let Ok(got) = f.pool.select(req, now) else {
                        continue;
                    };
                    oracle.check(&got.key_id, started, now);
                    let status = match roll {
                        0..=2 => 401,
                        3..=150 => 429,
                        151..=170 => 500,
                        171..=180 => {
                            f.pool.release_session(session);
                            continue;
                        }
                        181..=185 => {
                            f.pool.sweep(now);
                            continue;
                        }
                        _ => continue,
                    };
                    let kind = FailureKind::of_status(status, None);
                    let outcome = kind.map(|kind| {
                        let failure =
                            Failure { provider: &f.openai, key: &got.key_id, status, kind, scope: None, sent_at: None };
                        f.pool.report_failure(failure, now).expect("no I/O fails here")
                    });
                    if let Some(FailureOutcome::Disabled { reason }) = outcome {
                        f.store.persist_disable(&got.key_id, &f.openai, reason, now);
                    }
                    let tried = [got.key_id.clone()];
                    let next = f.pool.select(req.excluding(&tried), now).ok();
                    let seq = oracle.seq.fetch_add(1, Ordering::SeqCst);
                    match status {
                        401 => {
                            rejected.lock().unwrap().insert(got.key_id.clone());
                            oracle.dead.lock().unwrap().entry(got.key_id.clone()).or_insert(seq);
                        }
                        429 => {
                            let lower_bound = now + Duration::from_secs(60);
                            let mut resting = oracle.resting.lock().unwrap();
                            let fact = resting.entry(got.key_id.clone()).or_insert((lower_bound, seq));
                            if lower_bound > fact.0 {
                                *fact = (lower_bound, seq);
                            }
                        }
                        _ => {}
                    }
                    if let Some(next) = next {
                        assert_ne!(next.key_id, got.key_id, "a failed key is not its own retry");
                    }
                }
            });
        }
    });

    let disabled = f.store.disabled_keys();
    let unique: HashSet<KeyId> = disabled.iter().cloned().collect();
    assert_eq!(unique.len(), disabled.len(), "a key was answered Disabled more than once: {disabled:?}");
    assert_eq!(unique, *rejected.lock().unwrap(), "every rejected key, and only those, was disabled in the store");
}

#[test]
fn concurrent_401s_for_one_key_ask_for_one_disable() {
    let keys: Vec<KeyEntry> = (0..30).map(|i| entry("openai", &format!("k{i:02}"), 1, i)).collect();
    let f = Fixture::build(PoolConfig::default(), keys, MapResolver::new());
    f.pick();
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        for _ in 0..THREADS {
            let (f, barrier) = (&f, &barrier);
            s.spawn(move || {
                for i in 0..30 {
                    let key = KeyId::from(format!("k{i:02}"));
                    barrier.wait(); // all threads report the same key at the same moment
                    let failure = Failure {
                        provider: &f.openai,
                        key: &key,
                        status: 401,
                        kind: FailureKind::AuthRejected,
                        scope: None,
                        sent_at: None,
                    };
                    let outcome = f.pool.report_failure(failure, f.now()).expect("no I/O fails here");
                    if let FailureOutcome::Disabled { reason } = outcome {
                        f.store.persist_disable(&key, &f.openai, reason, f.now());
                    }
                    let tried = [key.clone()];
                    if let Ok(next) = f.pool.select(SelectionRequest::new(&f.openai).excluding(&tried), f.now()) {
                        assert_ne!(next.key_id, key, "a rejected key is never the retry");
                    }
                }
            });
        }
    });
    let mut disabled = f.store.disabled_keys();
    disabled.sort();
    let expected: Vec<KeyId> = (0..30).map(|i| KeyId::from(format!("k{i:02}"))).collect();
    assert_eq!(disabled, expected, "each key disabled exactly once although {THREADS} threads reported it");
}

#[test]
fn cold_cache_is_loaded_once_under_concurrency() {
    let f = Fixture::new(&[1, 1, 1]);
    let barrier = Barrier::new(THREADS);
    let picked: Vec<String> = thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (f, barrier) = (&f, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    f.pick()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(f.store.loads(), 1, "concurrent first selections share one load instead of each reading the store");
    let mut counts: HashMap<String, usize> = HashMap::new();
    picked.into_iter().for_each(|k| *counts.entry(k).or_default() += 1);
    let mut shares: Vec<usize> = counts.into_values().collect();
    shares.sort();
    assert_eq!(shares, [2, 3, 3], "8 picks over 3 equal keys: no slot lost or repeated under contention");
}

#[test]
fn pool_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let f = Fixture::new(&[1]);
    assert_send_sync(&f.pool);
    let pool: Arc<KeyPool> = f.pool.clone();
    let openai = f.openai.clone();
    let now = f.now();
    let got = thread::spawn(move || pool.select(SelectionRequest::new(&openai), now).map(|s| s.key_id)).join().unwrap();
    assert_eq!(got.map(|k| k.to_string()).ok(), Some("A".into()), "an Arc<KeyPool> crosses threads");
}
