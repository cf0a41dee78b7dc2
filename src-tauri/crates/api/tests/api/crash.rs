//! Crashes: the test re-runs its own binary as a writer, kills it with SIGKILL in the middle of
//! a run of writes, and checks that every acknowledged write survived and the file is sound.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use keypool_store::Database;
use serde_json::json;

use crate::support::Harness;

const CHILD_ENV: &str = "KEYPOOL_CRASH_WRITER_DIR";

/// Not a test on its own, so ignored: the writer process the crash test starts.
/// Writes keys and toggles through the commands, printing one `ACK` line per acknowledged write.
#[test]
#[ignore = "a helper process of acknowledged_writes_survive_sigkill, which runs it"]
fn crash_writer_child() {
    let dir = std::env::var_os(CHILD_ENV).expect("run by acknowledged_writes_survive_sigkill");
    let h = Harness::open_in(std::path::Path::new(&dir));
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let key = h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": format!("sk-crash-{}-{i:06}-abcdefgh", std::process::id()), "label": format!("k{i}"), "weight": i % 100 + 1 }),
        );
        writeln!(out, "ACK add {} {}", key["id"].as_str().unwrap(), i % 100 + 1).unwrap();
        out.flush().unwrap();
        if i % 3 == 0 {
            let toggled = h.ok("llmConfig:toggleApiKey", json!({ "id": key["id"], "enabled": false }));
            writeln!(out, "ACK off {}", toggled["id"].as_str().unwrap()).unwrap();
            out.flush().unwrap();
        }
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut acked: HashMap<String, (u64, bool)> = HashMap::new();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash::crash_writer_child", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the writer starts");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = 0;
        // Kill at a different point each round, in the middle of the stream of writes.
        let kill_after = 150 + round * 97;
        for line in lines {
            let line = line.unwrap();
            // libtest may print its own "test … ..." prefix on the first line.
            let Some(start) = line.find("ACK ") else { continue };
            let parts: Vec<&str> = line[start..].split_whitespace().collect();
            match parts.as_slice() {
                ["ACK", "add", id, weight] => {
                    acked.insert(id.to_string(), (weight.parse().unwrap(), true));
                }
                ["ACK", "off", id] => acked.get_mut(*id).expect("toggled after added").1 = false,
                _ => continue,
            }
            seen += 1;
            if seen == kill_after {
                child.kill().expect("SIGKILL the writer");
                break;
            }
        }
        child.wait().unwrap();
    }
    assert!(acked.len() > 300, "the writer acknowledged many writes before each kill ({})", acked.len());

    let db = Database::open(dir.path()).expect("the database opens after the crashes");
    let conn = db.lock().unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok", "the file is sound after SIGKILL");
    let mut stmt = conn.prepare("SELECT id, weight, enabled FROM llm_provider_api_keys").unwrap();
    let stored: HashMap<String, (u64, bool)> = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get::<_, i64>(1)? as u64, r.get::<_, bool>(2)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, expected) in &acked {
        assert_eq!(stored.get(id), Some(expected), "acknowledged write of {id} was lost or changed");
    }
}

const LEDGER_CHILD_ENV: &str = "KEYPOOL_CRASH_LEDGER_DIR";

/// Not a test on its own, so ignored: chats against the fake provider, as fast as they go, so
/// the usage ledger is written while the process is killed.
#[test]
#[ignore = "a helper process of the ledger_is_consistent_after_sigkill test, which runs it"]
fn crash_ledger_child() {
    let dir = std::env::var_os(LEDGER_CHILD_ENV).expect("run by ledger_is_consistent_after_sigkill");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let h = Harness::open_in(std::path::Path::new(&dir));
        let fake = keypool_fake_provider::FakeProvider::start().await;
        let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
        for label in ["a", "b"] {
            h.ok(
                "llmConfig:addApiKey",
                json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label }),
            );
        }
        let mut out = std::io::stdout().lock();
        for i in 1.. {
            let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
            h.send(&chat, Some(&format!("message {i}")), |_| {}).await.unwrap();
            writeln!(out, "ACK chat {i}").unwrap();
            // Reading the ledger writes what it gathered first: from here on, SIGKILL loses none
            // of these `i` attempts.
            if i % 40 == 0 {
                h.ok("usage:getSummary", json!({}));
                writeln!(out, "FLUSHED {i}").unwrap();
            }
            out.flush().unwrap();
        }
    });
}

/// The ledger's attempts and hourly totals are written in one transaction: after a SIGKILL in
/// the middle of a run they still agree, hour by hour, key by key. What the kill loses is at
/// most the batch being gathered (the attempts of the last 50 ms): every attempt recorded before
/// the ledger was last read (a flush) is there.
#[test]
fn ledger_is_consistent_after_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash::crash_ledger_child", "--ignored", "--nocapture", "--test-threads=1"])
        .env(LEDGER_CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the chatting process starts");
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut acked, mut flushed) = (0i64, 0i64);
    for line in lines.map_while(Result::ok) {
        if line.contains("ACK chat") {
            acked += 1;
        } else if let Some(n) = line.split("FLUSHED ").nth(1) {
            flushed = n.trim().parse::<i64>().expect("FLUSHED <count>");
        }
        // Between two flushes, so the kill falls while a batch is being gathered.
        if acked == 220 {
            break;
        }
    }
    child.kill().expect("SIGKILL the chatting process");
    child.wait().unwrap();
    assert_eq!(acked, 220, "the process chatted before it was killed");
    assert_eq!(flushed, 200, "the process read the ledger after its 200th chat");

    let db = Database::open(dir.path()).expect("the database opens after the crash");
    let conn = db.lock().unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok", "the file is sound after SIGKILL");
    let attempts: i64 = conn.query_row("SELECT COUNT(*) FROM usage_attempts", [], |r| r.get(0)).unwrap();
    assert!(
        (flushed..=acked + 1).contains(&attempts),
        "every attempt recorded before the last flush survives the kill ({attempts} of {acked} chats, {flushed} flushed)"
    );
    let disagreements: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (
                SELECT (at / 3600000) * 3600000 AS hour, provider_id, COALESCE(key_id, '') AS key_id, model,
                       COUNT(*) AS requests, SUM(COALESCE(input_tokens, 0)) AS input, SUM(COALESCE(output_tokens, 0)) AS output
                FROM usage_attempts GROUP BY 1, 2, 3, 4
             ) raw FULL OUTER JOIN usage_hourly h USING (hour, provider_id, key_id, model)
             WHERE raw.requests IS NOT h.requests OR raw.input IS NOT h.input_tokens OR raw.output IS NOT h.output_tokens",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(disagreements, 0, "every hour's totals equal the sum of its attempts");
}
