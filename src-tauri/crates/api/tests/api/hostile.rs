//! Hostile input: arbitrary JSON thrown at every command. Never a panic, always either a
//! result or a structured error, and a rejected call leaves the database exactly as it was, byte
//! for byte (the file and its WAL).

use keypool_api::ipc::Kind;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::support::Harness;

const FIELDS: &[&str] = &[
    "providerId",
    "id",
    "apiKey",
    "label",
    "enabled",
    "weight",
    "ids",
    "chatId",
    "content",
    "title",
    "model",
    "name",
    "kind",
    "baseUrl",
    "models",
    "defaultModel",
];

/// Any JSON value, a few levels deep, with strings biased toward ones the commands know.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1000.0f64..1000.0).prop_map(|f| json!(f)),
        prop_oneof![
            Just("openai".to_owned()),
            Just("anthropic".to_owned()),
            Just("KNOWN_KEY".to_owned()),
            Just(String::new()),
            Just("  ".to_owned()),
            Just("$OPENAI_API_KEY".to_owned()),
            Just("https://example.com/v1".to_owned()),
            "\\PC{0,40}",
        ]
        .prop_map(Value::String),
        (1u32..=100).prop_map(|n| json!(n)),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,12}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An argument object made of known field names (and sometimes an unknown one) with any values.
fn argument_object() -> impl Strategy<Value = Value> {
    let field = prop::sample::select(FIELDS);
    (prop::collection::btree_map(field, any_json(), 0..5), prop::option::of(("[a-z]{1,8}", any_json()))).prop_map(
        |(known, unknown)| {
            let mut object: Map<String, Value> = known.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            if let Some((k, v)) = unknown {
                object.insert(k, v);
            }
            Value::Object(object)
        },
    )
}

fn payload() -> impl Strategy<Value = Value> {
    prop_oneof![3 => argument_object(), 1 => any_json()]
}

/// Replaces the placeholder `KNOWN_KEY` with a real key id, so lookups can succeed.
fn with_real_ids(value: Value, key_id: &str) -> Value {
    match value {
        Value::String(s) if s == "KNOWN_KEY" => Value::String(key_id.to_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| with_real_ids(v, key_id)).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, with_real_ids(v, key_id))).collect()),
        other => other,
    }
}

#[test]
fn every_command_survives_arbitrary_json() {
    let h = Harness::new();
    let key = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "sk-hostile-AAAAAAAAAAAA0001" }));
    let key_id = key["id"].as_str().unwrap().to_owned();
    h.ok("chat:create", json!({ "providerId": "openai" }));
    let commands: Vec<&str> =
        keypool_api::ipc::COMMANDS.iter().filter(|c| c.kind() == Kind::Sync).map(|c| c.name).collect();

    for command in commands {
        let mut runner =
            proptest::test_runner::TestRunner::new(ProptestConfig { cases: 64, ..ProptestConfig::default() });
        runner
            .run(&payload(), |payload| {
                let payload = with_real_ids(payload, &key_id);
                let bytes_before = h.file_bytes();
                let before = h.snapshot();
                let result = h.call(command, payload.clone());
                if let Err(error) = result {
                    let encoded = serde_json::to_value(&error).unwrap();
                    prop_assert!(encoded["code"].is_string(), "{command} {payload}: a structured error, got {encoded}");
                    prop_assert!(!error.message.is_empty(), "{command} {payload}: the error says something");
                    prop_assert!(
                        h.file_bytes() == bytes_before,
                        "{command} {payload}: a rejected call changed the file's bytes"
                    );
                    prop_assert_eq!(
                        h.snapshot(),
                        before,
                        "{} {}: a rejected call changed the database",
                        command,
                        payload
                    );
                }
                Ok(())
            })
            .unwrap_or_else(|failure| panic!("{command}: {failure}"));
    }
    let calls = h.transcript.lock().unwrap().len();
    assert!(calls >= 64 * 15, "every command got its share of cases, {calls} calls in all");
    assert!(!h.transcript_text().contains("AAAAAAAAAAAA0001"), "the stored secret never came back");
}
