//! A key goes only where the user sent it, even when the provider or a gateway misbehaves: a
//! whole session at TRACE level against a provider that repeats keys in its 401s and in errors
//! inside streams, and redirects to another server, for both provider kinds. No run of 12 or more
//! characters of any key may appear in a log line, an event, an IPC result, or a database column
//! other than the key's own; the other server receives no request at all.

use keypool::MapResolver;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::json;

use crate::support::{traced, Harness};

const ECHO_401: &str = "sk-gw-ECHO401ECHO401ECHO401ECHO-0001";
const ECHO_STREAM: &str = "sk-gw-STREAMERRSTREAMERRSTREAM-0002";
const REDIRECTED: &str = "sk-gw-REDIRECTEDREDIRECTEDREDI-0003";
const ENV_VALUE: &str = "sk-gw-ENVVALUEENVVALUEENVVALUE-0004";
const PROVIDER_LEVEL: &str = "sk-gw-PROVIDERLEVELPROVIDERLEV-0005";
const SECRETS: [&str; 5] = [ECHO_401, ECHO_STREAM, REDIRECTED, ENV_VALUE, PROVIDER_LEVEL];

/// The first run of 12 characters of a secret found in `text`.
fn leaked_run<'a>(text: &str, secret: &'a str) -> Option<&'a str> {
    (0..=secret.len() - 12).map(|i| &secret[i..i + 12]).find(|run| text.contains(run))
}

/// Every text cell of every table, except each key's own column.
fn database_text(h: &Harness) -> String {
    let conn = rusqlite::Connection::open(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = String::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for (i, name) in names.iter().enumerate() {
                let own_key = name == "api_key" && (table == "llm_provider_api_keys" || table == "providers");
                if let (false, Ok(text)) = (own_key, row.get::<_, String>(i)) {
                    out.push_str(&format!("{table}.{name}={text}\n"));
                }
            }
        }
    }
    out
}

#[test]
fn no_key_leaks_from_a_misbehaving_gateway_at_trace_level() {
    let (sessions, logs) = traced(|runtime| {
        ["openai", "anthropic"].map(|kind| {
            let session = runtime.block_on(async {
                let h = Harness::with_env(MapResolver::new().with("GATEWAY_KEY", ENV_VALUE));
                let fake = FakeProvider::start().await;
                let elsewhere = FakeProvider::start().await;
                let base_url = if kind == "openai" { format!("{}/v1", fake.url()) } else { fake.url() };
                let provider = h.ok(
                    "llmConfig:addProvider",
                    json!({ "name": "Gateway", "kind": kind, "baseUrl": base_url, "models": ["m"], "apiKey": PROVIDER_LEVEL }),
                )["id"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                for key in [ECHO_401, ECHO_STREAM, REDIRECTED, "$GATEWAY_KEY"] {
                    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": key }));
                }
                let echo = "Incorrect API key provided: {key}. You passed {key_urlencoded}.";
                fake.always(ECHO_401, Reply::Status { status: 401, headers: vec![], message: echo.into() });
                fake.always(
                    ECHO_STREAM,
                    Reply::StreamError {
                        chunks_before: vec![],
                        error_type: "rate_limit_error".into(),
                        message: "Rate limit reached for key {key}".into(),
                    },
                );
                fake.always(REDIRECTED, Reply::Redirect { status: 307, to: elsewhere.url() });
                fake.always(ENV_VALUE, Reply::Status { status: 500, headers: vec![], message: "upstream {key} broke".into() });

                for round in 0..4 {
                    let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
                    h.send(&chat, Some(&format!("message {round}")), |_| {}).await.unwrap();
                    h.send(&chat, None, |_| {}).await.unwrap();
                }
                let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
                for key in keys.as_array().unwrap() {
                    h.call_async("llmConfig:testApiKey", json!({ "id": key["id"] })).await.unwrap();
                }
                h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
                h.ok("llmConfig:getProviders", json!({}));
                assert!(fake.seen().iter().any(|s| s.key == ECHO_401), "{kind}: the echoing gateway was really asked");
                tracing::trace!("session ends");
                (h.transcript_text(), database_text(&h), elsewhere.seen())
            });
            (kind, session)
        })
    });
    for (kind, (transcript, database, elsewhere_seen)) in sessions {
        assert!(elsewhere_seen.is_empty(), "{kind}: a redirect carried requests to another origin: {elsewhere_seen:?}");
        assert!(
            transcript.contains("\"keyLabel\":\"$GATEWAY_KEY\""),
            "{kind}: an unlabeled $NAME key is named as written"
        );
        assert!(
            !transcript.contains("…0004"),
            "{kind}: never a preview of a resolved $NAME value: {}",
            transcript.lines().filter(|l| l.contains("…0004")).collect::<Vec<_>>().join("\n")
        );
        assert!(!database.contains("…0004"), "{kind}: nor in the saved messages");
        for secret in SECRETS {
            assert_eq!(
                leaked_run(&transcript, secret),
                None,
                "{kind}: {secret} leaked into a result or event:\n{transcript}"
            );
            assert_eq!(leaked_run(&database, secret), None, "{kind}: {secret} leaked into the database:\n{database}");
        }
    }

    assert!(logs.matches("session ends").count() == 2, "the capture worked for both kinds");
    assert!(logs.lines().count() > 100, "trace level produced a real log ({} lines)", logs.lines().count());
    for secret in SECRETS {
        assert_eq!(leaked_run(&logs, secret), None, "{secret} leaked into the logs");
    }
}

/// A replaced or deleted key leaves no copy in the database file or its WAL (free pages are
/// zeroed, the WAL is emptied after such a write).
#[test]
fn rotated_and_deleted_keys_leave_no_copy_on_disk() {
    let h = Harness::new();
    let (old, new, deleted, provider_key) = (
        "sk-rotate-OLDOLDOLDOLDOLDOLDOLD-0001",
        "sk-rotate-NEWNEWNEWNEWNEWNEWNEW-0002",
        "sk-rotate-GONEGONEGONEGONEGONE-0003",
        "sk-rotate-PROVPROVPROVPROVPROV-0004",
    );
    let id = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": old }))["id"].clone();
    let gone = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": deleted }))["id"].clone();
    h.ok("llmConfig:updateProvider", json!({ "id": "openai", "apiKey": provider_key }));
    let (file, wal) = h.file_bytes();
    let on_disk = |bytes: &[u8], secret: &str| bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
    assert!(on_disk(&file, old) || on_disk(&wal, old), "the check has teeth: a stored key is on disk");

    h.ok("llmConfig:updateApiKey", json!({ "id": id, "apiKey": new }));
    h.ok("llmConfig:deleteApiKey", json!({ "id": gone }));
    h.ok("llmConfig:updateProvider", json!({ "id": "openai", "apiKey": "" }));
    let (file, wal) = h.file_bytes();
    for secret in [old, deleted, provider_key] {
        assert!(!on_disk(&file, secret), "{secret} is still in the database file");
        assert!(!on_disk(&wal, secret), "{secret} is still in the WAL");
    }
}
