//! The usage ledger through the commands: exact totals after scripted runs for both kinds,
//! streamed and whole; counts that follow the weights; series; costs where a price is known;
//! each reply's tokens and cache hit; CSV export; purge; consistency after a crash.

use std::time::Duration;

use keypool::SessionId;
use keypool_api::ipc::ErrorCode;
use keypool_fake_provider::{FakeProvider, Reply};
use keypool_llm::{CancellationToken, ChatMessage, CompletionRequest, Role};
use serde_json::{json, Value};

use crate::support::{Harness, START};

const HOUR: i64 = 3_600_000;

/// A provider "Fake" of `kind` on the fake with keys `key-<label>` (weights as given).
fn fake_provider(h: &Harness, fake: &FakeProvider, kind: &str, keys: &[(&str, u32)]) -> String {
    let base_url = if kind == "openai" { format!("{}/v1", fake.url()) } else { fake.url() };
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake", "kind": kind, "baseUrl": base_url, "models": ["m"], "defaultModel": "m" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (label, weight) in keys {
        h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": provider, "apiKey": format!("key-{label}"), "label": label, "weight": weight }),
        );
    }
    provider
}

fn totals(summary: &Value) -> [u64; 6] {
    let t = &summary["totals"];
    ["requests", "failures", "rateLimited", "inputTokens", "cachedTokens", "outputTokens"]
        .map(|f| t[f].as_u64().unwrap())
}

fn key_requests(summary: &Value) -> Vec<(String, u64)> {
    let mut keys: Vec<(String, u64)> = summary["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["label"].as_str().unwrap_or("").to_owned(), k["requests"].as_u64().unwrap()))
        .collect();
    keys.sort();
    keys
}

#[tokio::test(flavor = "multi_thread")]
async fn exact_totals_after_a_scripted_run_for_both_kinds_streamed_and_whole() {
    for kind in ["openai", "anthropic"] {
        for stream in [true, false] {
            let h = Harness::new();
            let fake = FakeProvider::start().await;
            let provider = fake_provider(&h, &fake, kind, &[("a", 1), ("b", 1), ("limited", 1)]);
            fake.always("key-limited", Reply::status(429));
            fake.always("key-a", Reply::text(&["one", " two"]));
            fake.always("key-b", Reply::text(&["three", " four", " five"]));
            let completions = h.ctx.completions().unwrap();
            let endpoint = h.ctx.providers().unwrap().endpoint(&provider).unwrap();
            for i in 0..6 {
                let request = CompletionRequest {
                    session: SessionId::new(format!("s{i}")),
                    endpoint: endpoint.clone(),
                    model: "m".into(),
                    messages: vec![ChatMessage::new(Role::User, "hello")],
                    max_tokens: 64,
                    stream,
                    source: "test".into(),
                    preferred_key: None,
                };
                let outcome = completions.complete(&request, &mut |_| {}, &CancellationToken::new()).await;
                assert!(outcome.usage.is_some(), "{kind} stream={stream}: the answer reported its usage");
            }
            let summary = h.ok("usage:getSummary", json!({ "providerId": provider }));
            // 6 answers; the limited key was tried once (it cools for 60 s after) and refused.
            let answered = key_requests(&summary).iter().filter(|(l, _)| l != "limited").map(|(_, n)| n).sum::<u64>();
            assert_eq!(answered, 6, "{kind} stream={stream}: six answers");
            let outputs: u64 = fake
                .seen()
                .iter()
                .filter(|s| s.key != "key-limited")
                .map(|s| if s.key == "key-a" { 2 } else { 3 })
                .sum();
            assert_eq!(
                totals(&summary),
                [7, 1, 1, 6 * 11, 6 * 5, outputs],
                "{kind} stream={stream}: requests, failures, 429s, input (cached included), cached, output"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn per_key_requests_follow_the_weights_and_replies_show_their_cache_hit() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "anthropic", &[("heavy", 3), ("light", 1)]);
    let mut last = Value::Null;
    for _ in 0..40 {
        let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
        last = h.send(&chat, Some("hi"), |_| {}).await.unwrap().0;
    }
    let summary = h.ok("usage:getSummary", json!({}));
    assert_eq!(key_requests(&summary), [("heavy".into(), 30), ("light".into(), 10)], "3:1 weights, 30 and 10 of 40");
    assert_eq!(
        last["usage"],
        json!({ "inputTokens": 11, "cachedTokens": 5, "outputTokens": 3 }),
        "each reply carries its tokens and cache hit: cached 5 of 11 input tokens"
    );
    let key = &summary["keys"][0];
    assert!(key["p50LatencyMs"].as_u64().is_some() && key["p95LatencyMs"].as_u64().is_some(), "latencies: {key}");
}

#[tokio::test(flavor = "multi_thread")]
async fn series_buckets_by_hour_and_day_and_costs_show_where_a_price_is_known() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &[("a", 1)]);
    let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
    for hours in [0u64, 0, 1, 26] {
        h.clock.advance(Duration::from_secs(hours * 3600));
        h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    }
    let from = START.as_millis();
    let to = from + 48 * HOUR;
    let hourly = h.ok("usage:getSeries", json!({ "bucket": "hour", "from": from, "to": to }));
    let counts: Vec<(i64, u64)> = hourly["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| ((p["at"].as_i64().unwrap() - from) / HOUR, p["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [(0, 2), (1, 1), (27, 1)], "requests per hour bucket, from `from`");
    let daily = h.ok("usage:getSeries", json!({ "bucket": "day", "from": from, "to": to }));
    let counts: Vec<u64> =
        daily["points"].as_array().unwrap().iter().map(|p| p["requests"].as_u64().unwrap()).collect();
    assert_eq!(counts, [3, 1], "and per day");

    let summary = h.ok("usage:getSummary", json!({ "from": from, "to": to }));
    assert_eq!(summary["totals"]["cost"], Value::Null, "no price known: no cost shown");
    assert_eq!(summary["unpricedModels"], json!(["m"]), "and the model that lacks one is named");
    h.ok(
        "usage:setPrice",
        json!({ "model": "m", "inputPerMillion": 2.0, "cachedInputPerMillion": 0.5, "outputPerMillion": 8.0 }),
    );
    let summary = h.ok("usage:getSummary", json!({ "from": from, "to": to }));
    // 4 replies: 6 fresh and 5 cached input tokens each, 3 output tokens each.
    let expected = 4.0 * (6.0 * 2.0 + 5.0 * 0.5 + 3.0 * 8.0) / 1_000_000.0;
    assert!(
        (summary["totals"]["cost"].as_f64().unwrap() - expected).abs() < 1e-12,
        "cost at the set prices: {summary}"
    );
    assert_eq!(summary["totals"]["costComplete"], true, "every model used has a price");
    assert_eq!(summary["unpricedModels"], json!([]), "none is missing");

    // A model that only failed spent no tokens: it needs no price, and the cost stays whole.
    fake.script("key-a", [Reply::status(500)]);
    let failing =
        h.ok("chat:create", json!({ "providerId": provider, "model": "n" }))["id"].as_str().unwrap().to_owned();
    h.send(&failing, Some("hi"), |_| {}).await.unwrap();
    let summary = h.ok("usage:getSummary", json!({ "from": from, "to": to }));
    assert_eq!(summary["totals"]["failures"], 1, "the failed attempt is counted");
    assert_eq!(summary["totals"]["costComplete"], true, "and costs nothing: {summary}");
    assert_eq!(summary["unpricedModels"], json!([]), "nor is it named as unpriced");
    for bad in [
        json!({ "model": "m", "inputPerMillion": -1, "outputPerMillion": 1 }),
        json!({ "model": " ", "inputPerMillion": 1, "outputPerMillion": 1 }),
    ] {
        assert_eq!(h.err("usage:setPrice", bad).code, ErrorCode::Validation);
    }
    assert_eq!(h.err("usage:getSeries", json!({ "bucket": "week", "from": 0, "to": 1 })).code, ErrorCode::Validation);
    assert_eq!(h.err("usage:getSummary", json!({ "from": 5, "to": 5 })).code, ErrorCode::Validation, "from before to");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_writes_csv_where_the_user_chooses_and_purge_forgets() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &[("a", 1)]);
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "sk-export-SECRETSECRETSECRET-01" }));
    let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    }
    let cancelled = h.call_async("usage:exportCsv", json!({})).await.unwrap();
    assert_eq!(cancelled, json!({ "path": null, "rows": 0 }), "a cancelled dialog writes nothing");
    let out = h.dir.path().join("export.csv");
    h.saves.answer(Some(out.clone()));
    let exported = h.call_async("usage:exportCsv", json!({})).await.unwrap();
    assert_eq!(exported["rows"], 3, "one row per attempt");
    let csv = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("time,provider,key,model"), "a header: {}", lines[0]);
    assert_eq!(lines.len(), 4, "header and three attempts");
    assert!(lines[1].contains(",Fake,a,m,"), "provider by name, key by label: {}", lines[1]);
    assert!(!csv.contains("SECRETSECRET"), "never a key");

    // With a second provider, an export of one provider holds its attempts alone.
    let other = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Other", "kind": "anthropic", "baseUrl": fake.url(), "models": ["m"], "defaultModel": "m" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    h.ok("llmConfig:addApiKey", json!({ "providerId": other, "apiKey": "sk-ant-other-0001", "label": "b" }));
    let other_chat = h.ok("chat:create", json!({ "providerId": other }))["id"].as_str().unwrap().to_owned();
    h.send(&other_chat, Some("hi"), |_| {}).await.unwrap();
    let rows_of = |csv: String| csv.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    for (filter, provider_name, expected) in [
        (json!({}), None, 4),
        (json!({ "providerId": provider }), Some(",Fake,a,"), 3),
        (json!({ "providerId": other }), Some(",Other,b,"), 1),
    ] {
        let exported = h.call_async("usage:exportCsv", filter.clone()).await.unwrap();
        assert_eq!(exported["rows"], expected, "rows of {filter}");
        let rows = rows_of(std::fs::read_to_string(&out).unwrap());
        assert_eq!(rows.len(), expected, "lines of {filter}");
        if let Some(name) = provider_name {
            assert!(rows.iter().all(|row| row.contains(name)), "{filter}: only {name}: {rows:?}");
        }
    }
    // A name that a spreadsheet would run as a formula is written as text.
    let formula = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "=HYPERLINK(\"http://evil.example\")", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()),
                "models": ["+cmd"], "defaultModel": "+cmd" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    h.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": formula, "apiKey": "sk-formula-0000000000001", "label": "@SUM(A1)" }),
    );
    let formula_chat = h.ok("chat:create", json!({ "providerId": formula }))["id"].as_str().unwrap().to_owned();
    h.send(&formula_chat, Some("hi"), |_| {}).await.unwrap();
    h.call_async("usage:exportCsv", json!({ "providerId": formula })).await.unwrap();
    let row = rows_of(std::fs::read_to_string(&out).unwrap()).remove(0);
    let cells: Vec<String> = csv_cells(&row);
    assert_eq!(cells[1], "'=HYPERLINK(\"http://evil.example\")", "the provider's name is text: {row}");
    assert_eq!(cells[2], "'@SUM(A1)", "so is the key's label: {row}");
    assert_eq!(cells[3], "'+cmd", "and the model: {row}");

    let blank = h.call_async("usage:exportCsv", json!({ "providerId": " " })).await.unwrap_err();
    assert_eq!(blank.code, ErrorCode::Validation, "a blank provider id");

    assert_eq!(h.ok("usage:purge", json!({})), json!({ "attempts": 5 }), "purge forgets the history");
    assert_eq!(totals(&h.ok("usage:getSummary", json!({})))[0], 0, "nothing left");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_sent_without_a_key_are_not_the_provider_keys() {
    // A server on this machine with no key at all (as Ollama is for Local) answers without one;
    // another provider answers with its provider-level key.
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let keyless = fake_provider(&h, &fake, "openai", &[]);
    let owned = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Owned", "kind": "anthropic", "baseUrl": fake.url(), "apiKey": "sk-ant-provider-0001",
                "models": ["m"], "defaultModel": "m" }),
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for provider in [&keyless, &owned] {
        let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
        h.send(&chat, Some("hi"), |_| {}).await.unwrap();
    }
    let summary = h.ok("usage:getSummary", json!({}));
    let mut rows: Vec<(String, String, bool)> = summary["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["providerId"].as_str().unwrap().to_owned(),
                k["sentWith"].as_str().unwrap().to_owned(),
                k["label"].is_null(),
            )
        })
        .collect();
    rows.sort();
    let mut expected =
        vec![(keyless.clone(), "noKey".to_owned(), true), (owned.clone(), "providerKey".to_owned(), true)];
    expected.sort();
    assert_eq!(rows, expected, "the keyless request is not credited to a provider-level key it does not have");
    let keys: Vec<&str> = summary["keys"].as_array().unwrap().iter().map(|k| k["keyId"].as_str().unwrap()).collect();
    assert!(keys.contains(&"") && keys.len() == 2 && keys[0] != keys[1], "two rows, apart: {keys:?}");
    let series = h.ok(
        "usage:getSeries",
        json!({ "bucket": "hour", "from": START.as_millis() - HOUR, "to": START.as_millis() + HOUR }),
    );
    let sent: Vec<&str> =
        series["points"].as_array().unwrap().iter().map(|p| p["sentWith"].as_str().unwrap()).collect();
    assert!(sent.contains(&"noKey") && sent.contains(&"providerKey"), "the series says so too: {series}");

    let out = h.dir.path().join("export.csv");
    h.saves.answer(Some(out.clone()));
    h.call_async("usage:exportCsv", json!({ "providerId": keyless })).await.unwrap();
    let row = std::fs::read_to_string(&out).unwrap().lines().nth(1).unwrap().to_owned();
    assert_eq!(csv_cells(&row)[2], "no key", "the export names it: {row}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_summary_says_when_its_first_request_was() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = fake_provider(&h, &fake, "openai", &[("a", 1)]);
    let empty = h.ok("usage:getSummary", json!({ "providerId": provider }));
    assert_eq!(empty["firstAt"], Value::Null, "no history, no first request");
    let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
    h.clock.advance(Duration::from_secs(3 * 3600));
    let first = START.as_millis() + 3 * HOUR;
    h.send(&chat, Some("one"), |_| {}).await.unwrap();
    h.clock.advance(Duration::from_secs(3600));
    h.send(&chat, Some("two"), |_| {}).await.unwrap();
    let summary = h.ok("usage:getSummary", json!({ "providerId": provider, "from": 0 }));
    assert_eq!(
        summary["firstAt"], first,
        "the earliest request of the range: the page opens on a period that holds it"
    );
    let later = h.ok("usage:getSummary", json!({ "from": first + 1 }));
    assert_eq!(later["firstAt"], first + HOUR, "within the range asked only");
}

/// The cells of one CSV line, as a spreadsheet would read them.
fn csv_cells(line: &str) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(line.as_bytes());
    reader.records().next().expect("one record").expect("valid CSV").iter().map(str::to_owned).collect()
}
