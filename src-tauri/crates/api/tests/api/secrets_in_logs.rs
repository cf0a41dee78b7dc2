//! A whole session (key commands, chats with failovers, revoked and rate-limited keys, bad
//! input) with tracing at TRACE level for every crate, HTTP client included: no stored key may
//! appear in anything logged, returned or streamed.

use keypool::MapResolver;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::json;

use crate::support::{traced, Harness};

const SECRETS: [&str; 4] = [
    "sk-logtest-ALPHAALPHAALPHA0001",
    "sk-logtest-BRAVOBRAVOBRAVO0002",
    "sk-logtest-CHARLIECHARLIE0003",
    "sk-logtest-ENVIRONMENTVAR0004",
];

#[test]
fn no_key_appears_in_trace_logs_results_or_events() {
    let (transcript, logs) = traced(|runtime| {
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

    assert!(logs.contains("session ends"), "the capture worked");
    assert!(logs.contains("reqwest") || logs.contains("hyper"), "the HTTP client's own trace lines were captured");
    assert!(logs.lines().count() > 50, "trace level produced a real log ({} lines)", logs.lines().count());
    for secret in SECRETS {
        let core = &secret["sk-logtest-".len()..];
        assert!(!logs.contains(core), "{secret} appeared in the logs");
        assert!(!transcript.contains(core), "{secret} appeared in a result, error or event");
    }
}
