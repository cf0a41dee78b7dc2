//! A whole session (key commands, chats with failovers, revoked and rate-limited keys, bad
//! input) with tracing at TRACE level for every crate, HTTP client included: no stored key may
//! appear in anything logged, returned or streamed.

use std::io::Write;
use std::sync::{Arc, Mutex};

use keypool::MapResolver;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::json;

use crate::support::Harness;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const SECRETS: [&str; 4] = [
    "sk-logtest-ALPHAALPHAALPHA0001",
    "sk-logtest-BRAVOBRAVOBRAVO0002",
    "sk-logtest-CHARLIECHARLIE0003",
    "sk-logtest-ENVIRONMENTVAR0004",
];

#[test]
fn no_key_appears_in_trace_logs_results_or_events() {
    // The HTTP client logs through the `log` crate, as it does in the app; bridge it to tracing.
    let _ = tracing_log::LogTracer::init();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();

    let transcript = tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let h = Harness::with_env(MapResolver::new().with("TEAM_KEY", SECRETS[3]));
            tracing::trace!("session starts");
            let fake = FakeProvider::start().await;
            let provider = h.ok(
                "llmConfig:addProvider",
                json!({ "name": "Fake", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["m"],
                        "apiKey": SECRETS[2] }),
            )["id"]
                .as_str()
                .unwrap()
                .to_owned();
            for secret in &SECRETS[..2] {
                h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": secret }));
            }
            h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "$TEAM_KEY", "label": "env" }));
            h.err("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": SECRETS[0] }));
            h.err(
                "llmConfig:addApiKey",
                json!({ "providerId": provider, "apiKey": format!("{} {}", SECRETS[1], SECRETS[0]) }),
            );
            h.err("llmConfig:addApiKey", json!({ "providerId": "nope", "apiKey": SECRETS[1] }));
            fake.always(SECRETS[0], Reply::status(401));
            fake.always(SECRETS[1], Reply::status_with(429, &[("retry-after", "30")]));
            fake.script(SECRETS[3], [Reply::text(&["fine"]), Reply::Drop { chunks_before: vec!["cut".into()] }]);

            let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
            h.send(&chat, Some("one"), |_| {}).await.unwrap();
            h.send(&chat, Some("two"), |_| {}).await.unwrap();
            h.send(&chat, Some("three"), |_| {}).await.unwrap();
            let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
            for key in keys.as_array().unwrap() {
                h.call_async("llmConfig:testApiKey", json!({ "id": key["id"] })).await.unwrap();
            }
            h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
            h.ok("llmConfig:getProviders", json!({}));
            tracing::trace!("session ends");
            assert!(fake.keys_used().len() >= 4, "requests really went out with the keys");
            h.transcript_text()
        })
    });

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("session ends"), "the capture worked");
    assert!(logs.contains("reqwest") || logs.contains("hyper"), "the HTTP client's own trace lines were captured");
    assert!(logs.lines().count() > 50, "trace level produced a real log ({} lines)", logs.lines().count());
    for secret in SECRETS {
        let core = &secret["sk-logtest-".len()..];
        assert!(!logs.contains(core), "{secret} appeared in the logs");
        assert!(!transcript.contains(core), "{secret} appeared in a result, error or event");
    }
}
