//! The ledger's batch write: every attempt of a batch lands whole, whatever the batch's size
//! (the rows go in several to a statement), and the hourly totals sum them.

use keypool_store::usage::{self, AttemptRow, HOUR_MS};
use keypool_store::Database;

const START: i64 = 1_800_000_000_000;

/// The `i`th attempt: every column differs from its neighbours', the optional ones are
/// sometimes empty, and the attempts span two hours.
fn attempt(i: usize) -> AttemptRow {
    let n = i as u64;
    AttemptRow {
        at: START + i as i64 * 60_000,
        provider_id: format!("p{}", i % 2),
        key_id: (!i.is_multiple_of(3)).then(|| format!("k{}", i % 4)),
        model: format!("m{}", i % 5),
        chat_id: (!i.is_multiple_of(7)).then(|| format!("chat-{i}")),
        source: format!("client {i}"),
        member: (i.is_multiple_of(2)).then(|| format!("member-{}", i % 3)),
        outcome: ["ok", "rate_limited", "provider_error"][i % 3],
        status: (!i.is_multiple_of(11)).then_some(200 + (i % 3) as u16),
        ttft_ms: (i.is_multiple_of(2)).then_some(n * 3),
        latency_ms: 100 + n,
        input_tokens: Some(n * 10),
        cached_tokens: (!i.is_multiple_of(5)).then_some(n),
        output_tokens: Some(n * 2),
    }
}

#[test]
fn every_attempt_of_a_batch_of_any_size_is_written_whole_and_summed() {
    // Around the rows written per statement (32): fewer, exactly, one more, and two and a bit.
    for size in [1, 31, 32, 33, 70] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let batch: Vec<AttemptRow> = (0..size).map(attempt).collect();
        usage::record(&mut db.lock().unwrap(), &batch).unwrap();

        let end = START + 3 * HOUR_MS;
        let read = usage::attempts(&db.lock().unwrap(), None, START, end).unwrap();
        assert_eq!(read, batch, "a batch of {size}: every attempt, every column, in order");
        let groups = usage::groups(&db.lock().unwrap(), None, START, end).unwrap();
        let requests: u64 = groups.values().map(|g| g.totals.requests).sum();
        let output: u64 = groups.values().map(|g| g.totals.output_tokens).sum();
        assert_eq!(requests, size as u64, "a batch of {size}: the hourly totals count each once");
        assert_eq!(output, batch.iter().map(|a| a.output_tokens.unwrap()).sum::<u64>(), "and sum its tokens");
    }
}

#[test]
fn a_batch_with_a_bad_attempt_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut batch: Vec<AttemptRow> = (0..40).map(attempt).collect();
    batch[35].outcome = "exploded"; // refused by the table's CHECK
    assert!(usage::record(&mut db.lock().unwrap(), &batch).is_err(), "the batch is refused");
    let read = usage::attempts(&db.lock().unwrap(), None, START, START + 3 * HOUR_MS).unwrap();
    assert!(read.is_empty(), "and its first 32, already inserted, were rolled back: {}", read.len());
}
