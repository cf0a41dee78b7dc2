//! Load: 200 chats at once against the fake provider, with revoked keys, rate-limited keys, and
//! random 500s, slow and dropped streams on the healthy ones. No deadlock, no panic, no key
//! handed out after the pool learned it was revoked or cooling, every revoked key disabled
//! exactly once, and a consistent database at the end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::json;

use crate::support::Harness;

const CHATS: usize = 200;

/// A small deterministic generator, so a failure replays.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_chats_with_faults() {
    let h = Arc::new(Harness::new());
    let fake = FakeProvider::start().await;
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Load", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["m"] }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let healthy = ["h1", "h2", "h3", "h4", "h5", "h6"];
    let revoked = ["r1", "r2"];
    let limited = ["l1", "l2"];
    for label in healthy.iter().chain(&revoked).chain(&limited) {
        h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label, "weight": 2 }),
        );
    }
    for label in revoked {
        fake.always(&format!("key-{label}"), Reply::status(401));
    }
    for label in limited {
        fake.always(&format!("key-{label}"), Reply::status_with(429, &[("retry-after", "600")]));
    }
    let mut rng = XorShift(0x5eed_cafe_f00d);
    for label in healthy {
        let replies: Vec<Reply> = (0..CHATS)
            .map(|_| match rng.next() % 10 {
                0 => Reply::status(500),
                1 => Reply::Drop { chunks_before: vec!["partial".into()] },
                2 => Reply::Drop { chunks_before: vec![] },
                3 | 4 => Reply::Slow { chunks: vec!["slow ".into(), "reply".into()], delay_ms: rng.next() % 5 },
                _ => Reply::text(&["fine ", "reply"]),
            })
            .collect();
        fake.script(&format!("key-{label}"), replies);
    }
    h.events.take();

    // A global order of what happened: `mark` before each selection can start, and the moment
    // after the pool took each refusal.
    let clock = Arc::new(AtomicU64::new(0));
    let refused_at: Arc<Mutex<HashMap<String, u64>>> = Arc::default();
    let violations: Arc<Mutex<Vec<String>>> = Arc::default();

    let mut tasks = Vec::new();
    for i in 0..CHATS {
        let h = h.clone();
        let (clock, refused_at, violations) = (clock.clone(), refused_at.clone(), violations.clone());
        let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
        tasks.push(tokio::spawn(async move {
            let mut mark = clock.fetch_add(1, Ordering::SeqCst);
            let result = h
                .send(&chat, Some(&format!("message {i}")), |event| {
                    let now = clock.fetch_add(1, Ordering::SeqCst);
                    let key_label = event["keyLabel"].as_str().unwrap_or_default().to_owned();
                    match event["type"].as_str() {
                        Some("keySelected") => {
                            if let Some(at) = refused_at.lock().unwrap().get(&key_label) {
                                if *at < mark {
                                    violations
                                        .lock()
                                        .unwrap()
                                        .push(format!("{key_label} handed out after its refusal"));
                                }
                            }
                        }
                        Some("failover") => {
                            refused_at.lock().unwrap().entry(key_label).or_insert(now);
                        }
                        _ => {}
                    }
                    mark = now;
                })
                .await;
            (chat, result.map(|(message, _)| message["status"].as_str().unwrap_or_default().to_owned()))
        }));
    }
    let results = tokio::time::timeout(Duration::from_secs(120), futures_join(tasks))
        .await
        .expect("200 chats finish: no deadlock");

    let mut statuses: HashMap<String, usize> = HashMap::new();
    for (chat, result) in results {
        let status = result.unwrap_or_else(|e| panic!("chat {chat} was refused: {e:?}"));
        *statuses.entry(status).or_default() += 1;
    }
    assert!(statuses.get("complete").copied().unwrap_or(0) > CHATS / 2, "most chats got a reply: {statuses:?}");
    assert!(violations.lock().unwrap().is_empty(), "{:?}", violations.lock().unwrap());
    let refused: Vec<String> = refused_at.lock().unwrap().keys().cloned().collect();
    for label in revoked.iter().chain(&limited) {
        assert!(
            refused.iter().any(|r| r == label),
            "{label} was refused during the run, so the check had teeth: {refused:?}"
        );
    }

    let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
    for key in keys.as_array().unwrap() {
        let label = key["label"].as_str().unwrap();
        let revoked_key = revoked.contains(&label);
        assert_eq!(key["enabled"], !revoked_key, "{label}: only revoked keys are disabled");
        if revoked_key {
            assert_eq!(key["disabledReason"], "HTTP 401", "{label}: disabled for its 401");
        }
    }
    let changes = h.events.take();
    assert_eq!(changes.len(), revoked.len(), "each revoked key was disabled exactly once: {changes:?}");
    let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
    for key in status["keys"].as_array().unwrap() {
        if limited.contains(&key["label"].as_str().unwrap()) {
            assert_eq!(key["state"], "cooling", "rate-limited keys cool down: {key}");
        }
    }
    for label in revoked.iter().chain(&limited) {
        let uses = fake.keys_used().iter().filter(|k| **k == format!("key-{label}")).count();
        assert!(uses <= CHATS, "{label} used {uses} times");
    }

    let conn = rusqlite::Connection::open(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok", "the database is sound");
    let (messages, chats): (i64, i64) = conn
        .query_row("SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM chats)", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((chats, messages), (CHATS as i64, 2 * CHATS as i64), "every chat has its question and its answer");
}

async fn futures_join<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await.expect("no chat task panicked"));
    }
    out
}
