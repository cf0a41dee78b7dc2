//! The `llmConfig:*` commands against a real SQLite file: every command, every validation rule
//! (each time proving nothing was written), selection after every kind of write, secrets never
//! in a result or an error, data surviving a reopen.

use std::time::Duration;

use keypool::{ProviderId, SelectionRequest};
use keypool_api::ipc::ErrorCode;
use serde_json::{json, Value};

use crate::support::Harness;

const SECRET_A: &str = "sk-test-AAAAAAAAAAAAAAAAAAAAAAAA1111";
const SECRET_B: &str = "sk-test-BBBBBBBBBBBBBBBBBBBBBBBB2222";
const SECRET_C: &str = "sk-ant-CCCCCCCCCCCCCCCCCCCCCCCCC3333";

fn add(h: &Harness, provider: &str, key: &str, label: &str, weight: u32) -> Value {
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": key, "label": label, "weight": weight }))
}

fn id_of(v: &Value) -> String {
    v["id"].as_str().expect("a key has an id").to_owned()
}

/// The label of the key the pool hands out next for `provider` (no session).
fn select_label(h: &Harness, provider: &str) -> Option<String> {
    let pool = h.ctx.keys().unwrap().pool();
    let provider = ProviderId::new(provider);
    pool.select(SelectionRequest::new(&provider), h.clock.now_ts()).ok().and_then(|s| s.label.map(|l| l.to_string()))
}

trait NowTs {
    fn now_ts(&self) -> keypool::Timestamp;
}
impl NowTs for keypool::ManualClock {
    fn now_ts(&self) -> keypool::Timestamp {
        keypool::Clock::now(self)
    }
}

mod reading {
    use super::*;

    #[test]
    fn builtin_providers_exist_with_empty_pools() {
        let h = Harness::new();
        for provider in ["openai", "anthropic", "gemini", "local"] {
            let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
            assert_eq!(keys, json!([]), "built-in provider {provider} starts with an empty pool");
        }
    }

    #[test]
    fn keys_come_back_in_sort_order_camel_case_and_masked() {
        let h = Harness::new();
        add(&h, "openai", SECRET_A, "first", 3);
        add(&h, "openai", "$TEAM_KEY", "env", 1);
        let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
        let keys = keys.as_array().unwrap();
        assert_eq!(keys.len(), 2, "both keys are listed");
        assert_eq!(keys[0]["label"], "first", "the first added key is first");
        assert_eq!(keys[0]["apiKeyPreview"], "sk-…1111", "a value is masked to its prefix and last 4");
        assert_eq!(keys[0]["isEnvRef"], false, "a value is not an env reference");
        assert_eq!(keys[1]["apiKeyPreview"], "$TEAM_KEY", "an env reference is shown as written");
        assert_eq!(keys[1]["isEnvRef"], true, "and flagged as one");
        let fields: Vec<&String> = keys[0].as_object().unwrap().keys().collect();
        for field in [
            "id",
            "providerId",
            "label",
            "apiKeyPreview",
            "isEnvRef",
            "enabled",
            "weight",
            "sortOrder",
            "disabledReason",
            "disabledAt",
            "createdAt",
            "updatedAt",
            "quotaGroup",
        ] {
            assert!(keys[0].get(field).is_some(), "field {field} is part of the contract, got {fields:?}");
        }
        assert!(keys[0].get("apiKey").is_none(), "the stored secret never crosses IPC");
    }

    #[test]
    fn providers_are_listed_with_their_pool_size() {
        let h = Harness::new();
        add(&h, "anthropic", SECRET_C, "c", 1);
        let providers = h.ok("llmConfig:getProviders", json!({}));
        let summary: Vec<(String, String, String, u64)> = providers
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap().into(),
                    p["kind"].as_str().unwrap().into(),
                    p["baseUrl"].as_str().unwrap().into(),
                    p["keyCount"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("openai".into(), "openai".into(), "https://api.openai.com/v1".into(), 0),
                ("anthropic".into(), "anthropic".into(), "https://api.anthropic.com".into(), 1),
                ("gemini".into(), "gemini".into(), "https://generativelanguage.googleapis.com".into(), 0),
                ("local".into(), "openai".into(), "http://127.0.0.1:11434/v1".into(), 0),
            ],
            "the built-in providers, in order, with their pool sizes"
        );
        assert_eq!(providers[0]["apiKeyPreview"], Value::Null, "no provider-level key yet");
        assert_eq!(providers[0]["name"], "OpenAI", "display names are stored");
    }

    #[test]
    fn unknown_provider_is_not_found() {
        let h = Harness::new();
        let err = h.err("llmConfig:getApiKeys", json!({ "providerId": "nope" }));
        assert_eq!(err.code, ErrorCode::NotFound, "an unknown provider is not_found: {err:?}");
    }
}

mod adding {
    use super::*;

    #[test]
    fn add_applies_defaults_and_returns_the_stored_entry() {
        let h = Harness::new();
        let key = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A }));
        assert_eq!(key["weight"], 1, "weight defaults to 1");
        assert_eq!(key["enabled"], true, "enabled defaults to true");
        assert_eq!(key["label"], Value::Null, "no label given, none stored");
        assert_eq!(key["providerId"], "openai", "the provider is recorded");
        assert_eq!(key["createdAt"], crate::support::START.as_millis(), "times come from the injected clock");
        let listed = h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
        let mut stored = key.clone();
        stored.as_object_mut().unwrap().remove("generation");
        assert_eq!(listed[0], stored, "add returns the entry exactly as stored, with its write's generation");
        assert_eq!(h.events.take(), vec!["openai"], "the UI is told the provider changed");
    }

    #[test]
    fn key_and_label_are_trimmed() {
        let h = Harness::new();
        let key = h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": "  sk-pasted-with-spaces-9999 \n", "label": "  prod  " }),
        );
        assert_eq!(key["label"], "prod", "labels are trimmed");
        assert_eq!(key["apiKeyPreview"], "sk-…9999", "surrounding whitespace of a pasted key is dropped");
    }

    #[test]
    fn adding_the_same_key_twice_is_a_conflict() {
        let h = Harness::new();
        add(&h, "openai", SECRET_A, "a", 1);
        let before = h.snapshot();
        let err = h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A }));
        assert_eq!(err.code, ErrorCode::Conflict, "a duplicate key in one pool is a conflict: {err:?}");
        assert_eq!(h.snapshot(), before, "nothing was written");
        // The same key may sit in another provider's pool.
        add(&h, "local", SECRET_A, "a", 1);
    }

    #[test]
    fn adding_to_an_unknown_provider_is_not_found_and_writes_nothing() {
        let h = Harness::new();
        let before = h.snapshot();
        let err = h.err("llmConfig:addApiKey", json!({ "providerId": "ghost", "apiKey": SECRET_A }));
        assert_eq!(err.code, ErrorCode::NotFound, "the provider does not exist: {err:?}");
        assert_eq!(h.snapshot(), before, "nothing was written");
        assert!(h.events.take().is_empty(), "no change event for a failed write");
    }
}

/// Every committed write gets the next generation; a key command answers it, and the
/// `llmConfig:changed` the write causes carries it, so the UI knows its own write's echo.
mod generations {
    use super::*;

    fn generation(answer: &Value) -> u64 {
        answer["generation"].as_u64().unwrap_or_else(|| panic!("the answer carries its write's generation: {answer}"))
    }

    #[test]
    fn each_key_write_answers_the_generation_its_event_carries() {
        let h = Harness::new();
        let added = h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A }));
        let id = id_of(&added);
        let answers = [
            added,
            h.ok("llmConfig:toggleApiKey", json!({ "id": id, "enabled": false })),
            h.ok("llmConfig:updateApiKey", json!({ "id": id, "weight": 2 })),
            h.ok("llmConfig:setKeyLimits", json!({ "id": id, "rpmLimit": 10 })),
            h.ok("llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [id] })),
            h.ok("llmConfig:updateApiKeys", json!({ "ids": [id], "weight": 3 })),
            h.ok("llmConfig:deleteApiKey", json!({ "id": id })),
        ];
        let answered: Vec<u64> = answers.iter().map(generation).collect();
        let told: Vec<(String, u64)> = answered.iter().map(|g| ("openai".to_owned(), *g)).collect();
        assert_eq!(h.events.take_changes(), told, "each event names the provider and its write's generation");
        assert!(
            answered.windows(2).all(|pair| pair[1] == pair[0] + 1),
            "one generation per write, in order: {answered:?}"
        );
        assert_eq!(answers[1]["enabled"], false, "the key row is answered beside the generation");
        assert_eq!(answers[4]["keys"][0]["id"], json!(id), "a list is answered as `keys`");
    }

    #[test]
    fn a_refused_write_takes_no_generation_and_other_writes_count() {
        let h = Harness::new();
        let first = generation(&h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A })));
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A }));
        h.ok("llmConfig:updateProvider", json!({ "id": "openai", "name": "OpenAI (work)" }));
        let (_, provider_write) = h.events.take_changes().pop().expect("the provider's write is told");
        assert_eq!(provider_write, first + 1, "the duplicate counted nothing; the provider's write counted one");
        let next = generation(&h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_B })));
        assert_eq!(next, provider_write + 1, "the next key write comes after it");
    }
}

mod validation {
    use super::*;

    /// Calls `command` with `args`, expects a validation error with an issue at `path`, and
    /// proves that nothing was written and no event was sent.
    fn rejects(h: &Harness, command: &str, args: Value, path: &str) {
        let before = h.snapshot();
        h.events.take();
        let err = h.err(command, args.clone());
        assert_eq!(err.code, ErrorCode::Validation, "{command} {args}: expected validation, got {err:?}");
        let issues = err.issues.clone().unwrap_or_default();
        assert!(
            issues.iter().any(|i| i.path == path),
            "{command} {args}: expected an issue at {path:?}, got {issues:?}"
        );
        assert_eq!(h.snapshot(), before, "{command} {args}: a rejected call must write nothing");
        assert!(h.events.take().is_empty(), "{command} {args}: a rejected call sends no event");
    }

    #[test]
    fn weight_must_be_an_integer_from_1_to_100() {
        let h = Harness::new();
        let existing = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        for weight in [json!(0), json!(101), json!(1.5), json!("3"), json!(null), json!(-1), json!(true), json!(1e12)] {
            rejects(
                &h,
                "llmConfig:addApiKey",
                json!({ "providerId": "openai", "apiKey": SECRET_B, "weight": weight }),
                "weight",
            );
            rejects(&h, "llmConfig:updateApiKey", json!({ "id": existing, "weight": weight }), "weight");
        }
        for weight in [1, 100] {
            let key = h.ok("llmConfig:updateApiKey", json!({ "id": existing, "weight": weight }));
            assert_eq!(key["weight"], weight, "the bounds {weight} are allowed");
        }
    }

    #[test]
    fn api_key_must_not_be_empty_or_blank() {
        let h = Harness::new();
        let existing = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        for key in [
            json!(""),
            json!("   "),
            json!("\n\t"),
            json!("sk-two words"),
            json!("$"),
            json!("$9BAD"),
            json!(42),
            json!(null),
        ] {
            rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": key }), "apiKey");
            rejects(&h, "llmConfig:updateApiKey", json!({ "id": existing, "apiKey": key }), "apiKey");
        }
        rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "x".repeat(5000) }), "apiKey");
    }

    #[test]
    fn label_is_at_most_100_characters() {
        let h = Harness::new();
        rejects(
            &h,
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": SECRET_A, "label": "x".repeat(101) }),
            "label",
        );
        rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A, "label": 7 }), "label");
        let key = h
            .ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A, "label": "é".repeat(100) }));
        assert_eq!(key["label"].as_str().unwrap().chars().count(), 100, "100 characters (not bytes) are allowed");
    }

    #[test]
    fn missing_unknown_and_mistyped_fields_are_rejected() {
        let h = Harness::new();
        let existing = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "openai" }), "apiKey");
        rejects(&h, "llmConfig:addApiKey", json!({ "apiKey": SECRET_B }), "providerId");
        rejects(
            &h,
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": SECRET_B, "colour": "red" }),
            "colour",
        );
        rejects(
            &h,
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": SECRET_B, "enabled": "yes" }),
            "enabled",
        );
        rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "", "apiKey": SECRET_B }), "providerId");
        rejects(&h, "llmConfig:addApiKey", json!({ "providerId": "  ", "apiKey": SECRET_B }), "providerId");
        rejects(&h, "llmConfig:getApiKeys", json!({}), "providerId");
        rejects(&h, "llmConfig:getApiKeys", json!({ "providerId": 5 }), "providerId");
        rejects(&h, "llmConfig:updateApiKey", json!({ "id": existing }), "");
        rejects(&h, "llmConfig:updateApiKey", json!({ "id": existing, "api_key": SECRET_B }), "api_key");
        rejects(&h, "llmConfig:deleteApiKey", json!({ "id": "" }), "id");
        rejects(&h, "llmConfig:deleteApiKey", json!({}), "id");
        rejects(&h, "llmConfig:toggleApiKey", json!({ "id": existing }), "enabled");
        rejects(&h, "llmConfig:toggleApiKey", json!({ "id": existing, "enabled": 1 }), "enabled");
        rejects(&h, "llmConfig:toggleApiKey", json!({ "id": existing, "enabled": "false" }), "enabled");
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": "x" }), "ids");
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [""] }), "ids[0]");
        rejects(&h, "llmConfig:resetCooldown", json!({ "id": null }), "id");
        rejects(&h, "llmConfig:getPoolStatus", json!({ "providerId": [] }), "providerId");
    }

    #[test]
    fn arguments_must_be_an_object() {
        let h = Harness::new();
        for payload in [json!([]), json!("openai"), json!(3), json!(true)] {
            rejects(&h, "llmConfig:getApiKeys", payload.clone(), "");
            rejects(&h, "llmConfig:addApiKey", payload, "");
        }
    }

    #[test]
    fn unknown_ids_are_not_found_and_write_nothing() {
        let h = Harness::new();
        add(&h, "openai", SECRET_A, "a", 1);
        let before = h.snapshot();
        let ghost = "00000000-0000-4000-8000-000000000000";
        for (command, args) in [
            ("llmConfig:updateApiKey", json!({ "id": ghost, "weight": 2 })),
            ("llmConfig:deleteApiKey", json!({ "id": ghost })),
            ("llmConfig:toggleApiKey", json!({ "id": ghost, "enabled": false })),
            ("llmConfig:resetCooldown", json!({ "id": ghost })),
            ("llmConfig:getPoolStatus", json!({ "providerId": "ghost" })),
            ("llmConfig:reorderApiKeys", json!({ "providerId": "ghost", "ids": [] })),
        ] {
            let err = h.err(command, args.clone());
            assert_eq!(err.code, ErrorCode::NotFound, "{command} {args}: got {err:?}");
            assert!(err.message.contains("does not exist"), "{command}: the message says what is missing");
        }
        assert_eq!(h.snapshot(), before, "nothing was written");
    }

    #[test]
    fn reorder_must_list_each_key_exactly_once() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        let b = id_of(&add(&h, "openai", SECRET_B, "b", 1));
        let other = id_of(&add(&h, "local", SECRET_C, "c", 1));
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [a] }), "ids");
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [a, a] }), "ids");
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [a, other] }), "ids");
        rejects(&h, "llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [a, b, other] }), "ids");
    }
}

mod writes_reach_the_pool {
    use super::*;

    #[test]
    fn selection_sees_an_added_key() {
        let h = Harness::new();
        add(&h, "openai", SECRET_A, "a", 1);
        assert_eq!(select_label(&h, "openai").as_deref(), Some("a"), "the only key is selected");
        add(&h, "openai", SECRET_B, "b", 1);
        let picks: Vec<_> = (0..4).map(|_| select_label(&h, "openai").unwrap()).collect();
        assert!(picks.contains(&"b".to_owned()), "the added key joins the rotation: {picks:?}");
    }

    #[test]
    fn selection_sees_a_toggle_and_an_update() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        add(&h, "openai", SECRET_B, "b", 1);
        select_label(&h, "openai");
        h.ok("llmConfig:toggleApiKey", json!({ "id": a, "enabled": false }));
        for _ in 0..4 {
            assert_eq!(select_label(&h, "openai").as_deref(), Some("b"), "a disabled key is never selected");
        }
        h.ok("llmConfig:updateApiKey", json!({ "id": a, "enabled": true, "weight": 3, "label": "a3" }));
        let picks: Vec<_> = (0..4).map(|_| select_label(&h, "openai").unwrap()).collect();
        assert_eq!(picks.iter().filter(|l| *l == "a3").count(), 3, "the new weight and label apply: {picks:?}");
    }

    #[test]
    fn selection_sees_a_delete() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        add(&h, "openai", SECRET_B, "b", 1);
        select_label(&h, "openai");
        let deleted = h.ok("llmConfig:deleteApiKey", json!({ "id": a }));
        assert_eq!(deleted["id"], json!(a), "delete returns the id: {deleted}");
        for _ in 0..3 {
            assert_eq!(select_label(&h, "openai").as_deref(), Some("b"), "a deleted key is never selected");
        }
        assert_eq!(h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" })).as_array().unwrap().len(), 1);
    }

    #[test]
    fn selection_sees_a_reorder() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        let b = id_of(&add(&h, "openai", SECRET_B, "b", 1));
        assert_eq!(select_label(&h, "openai").as_deref(), Some("a"), "slot 0 is the first key");
        let listed = h.ok("llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [b, a] }));
        assert_eq!(listed["keys"][0]["id"], json!(b), "the list comes back in the new order");
        assert_eq!(listed["keys"][0]["sortOrder"], 0, "positions become sortOrder");
        let after = h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
        assert_eq!(after[0]["id"], json!(b), "the order is stored");
        // a served last; in the pool's smooth order b catches up, then a takes its turns again.
        let picks: Vec<_> = (0..3).map(|_| select_label(&h, "openai").unwrap()).collect();
        assert!(picks.contains(&"b".to_owned()) && picks.contains(&"a".to_owned()), "both still rotate: {picks:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn auth_failure_disables_through_the_write_path() {
        let h = Harness::new();
        let fake = keypool_fake_provider::FakeProvider::start().await;
        let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
        let a = id_of(&add(&h, &provider, SECRET_A, "a", 1));
        add(&h, &provider, SECRET_B, "b", 1);
        fake.always(SECRET_A, keypool_fake_provider::Reply::status(401));
        let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
        h.events.take();

        let (reply, _) = h.send(&chat, Some("hi"), |_| {}).await.unwrap();
        assert_eq!(reply["keyLabel"], "b", "the chat fails over to the other key");
        let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
        assert_eq!(keys[0]["enabled"], false, "the rejected key is stored as disabled");
        assert_eq!(keys[0]["disabledReason"], "HTTP 401", "with the reason");
        assert_eq!(keys[0]["disabledAt"], crate::support::START.as_millis(), "and when");
        assert_eq!(h.events.take(), vec![provider.clone()], "the UI is told, once");

        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        assert_eq!(status["keys"][0]["state"], "disabled", "the pool status shows it disabled: {status}");

        // Enabling by hand clears the reason and returns the key to the rotation.
        let enabled = h.ok("llmConfig:toggleApiKey", json!({ "id": a, "enabled": true }));
        assert_eq!(enabled["disabledReason"], Value::Null, "enabling clears why it was disabled");
        let picks: Vec<_> = (0..2).map(|_| select_label(&h, &provider).unwrap()).collect();
        assert!(picks.contains(&"a".to_owned()), "the re-enabled key is selected again: {picks:?}");
    }
}

mod pool_status {
    use super::*;

    #[test]
    fn cooling_key_shows_until_when_and_reset_clears_it() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        add(&h, "openai", SECRET_B, "b", 1);
        let pool = h.ctx.keys().unwrap().pool().clone();
        let provider = ProviderId::new("openai");
        let first = pool.select(SelectionRequest::new(&provider), h.clock.now_ts()).unwrap();
        let refused = keypool::Failure {
            provider: &provider,
            key: &first.key_id,
            status: 429,
            kind: keypool::FailureKind::RateLimited {
                retry_after: None,
                announced: keypool::Announced::default(),
                quota: None,
            },
            scope: None,
            sent_at: None,
        };
        let _cooled = pool.report_failure(refused, h.clock.now_ts()).unwrap();
        h.clock.advance(Duration::from_secs(10));

        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": "openai" }));
        let key = &status["keys"][0];
        assert_eq!(key["id"], json!(a), "keys are in display order");
        assert_eq!(key["state"], "cooling", "a 429 puts the key in cooldown: {status}");
        assert_eq!(key["coolingUntil"], crate::support::START.as_millis() + 60_000, "60 s after the first 429");
        assert_eq!(key["consecutiveErrors"], 1, "one failure in a row");
        assert_eq!(key["failureCount"], 1, "one failure counted");
        assert_eq!(key["requestCount"], 1, "one hand-out counted");
        assert_eq!(key["lastError"]["status"], 429, "the last error is the 429");
        assert_eq!(key["lastUsedAt"], crate::support::START.as_millis(), "last used when selected");
        assert_eq!(status["now"], crate::support::START.as_millis() + 10_000, "the backend's now is included");
        assert_eq!(status["keys"][1]["state"], "active", "the other key is untouched");

        h.events.take();
        assert_eq!(h.ok("llmConfig:resetCooldown", json!({ "id": a }))["id"], json!(a));
        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": "openai" }));
        assert_eq!(status["keys"][0]["state"], "active", "reset ends the cooldown");
        assert_eq!(status["keys"][0]["consecutiveErrors"], 0, "and the failure streak");
        assert_eq!(h.events.take(), vec!["openai"], "the UI is told");
    }
}

mod secrets {
    use super::*;
    use keypool::MapResolver;

    #[test]
    fn no_result_or_error_ever_contains_a_stored_secret() {
        let env_secret = "sk-from-env-ZZZZZZZZZZZZZZZZZZZZ9999";
        let h = Harness::with_env(MapResolver::new().with("TEAM_KEY", env_secret));
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        add(&h, "openai", "$TEAM_KEY", "env", 2);
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_A }));
        h.err("llmConfig:addApiKey", json!({ "providerId": "ghost", "apiKey": SECRET_B }));
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_B, "weight": 0 }));
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": format!("{SECRET_C} x") }));
        h.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": SECRET_C, "oops": SECRET_C }));
        h.ok("llmConfig:updateApiKey", json!({ "id": a, "apiKey": SECRET_B }));
        h.err("llmConfig:updateApiKey", json!({ "id": a, "apiKey": 5 }));
        h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
        h.ok("llmConfig:getPoolStatus", json!({ "providerId": "openai" }));
        h.ok("llmConfig:toggleApiKey", json!({ "id": a, "enabled": false }));

        let text = h.transcript_text();
        for secret in [SECRET_A, SECRET_B, SECRET_C, env_secret] {
            // Any 12-character window of the secret past its public prefix would be a leak.
            let tail = &secret[secret.len() - 12..];
            assert!(!text.contains(tail), "a secret leaked into IPC output:\n{text}");
        }
    }
}

mod persistence {
    use super::*;

    #[test]
    fn data_survives_closing_and_reopening() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "kept", 7));
        add(&h, "anthropic", SECRET_C, "claude", 2);
        h.ok("llmConfig:toggleApiKey", json!({ "id": a, "enabled": false }));
        let before_openai = h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
        let before_anthropic = h.ok("llmConfig:getApiKeys", json!({ "providerId": "anthropic" }));

        let h = h.reopen();
        assert_eq!(
            h.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" })),
            before_openai,
            "openai's pool survives"
        );
        assert_eq!(
            h.ok("llmConfig:getApiKeys", json!({ "providerId": "anthropic" })),
            before_anthropic,
            "anthropic's too"
        );
        assert_eq!(select_label(&h, "anthropic").as_deref(), Some("claude"), "and the pool loads it again");
    }
}

/// Each issue names the broken rule as a code with the numbers the UI words it with, so the
/// settings page can say it in the user's language.
#[test]
fn issues_carry_codes_and_parameters_for_the_ui() {
    let h = Harness::new();
    let key = json!({ "providerId": "openai", "apiKey": "sk-abcdefghijklmnop" });
    let with = |extra: Value| {
        let mut args = key.clone();
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        args
    };
    let cases = [
        (
            "llmConfig:addApiKey",
            with(json!({ "weight": 101 })),
            "weight",
            json!({ "code": "too_large", "params": { "max": 100 } }),
        ),
        (
            "llmConfig:addApiKey",
            with(json!({ "weight": 0 })),
            "weight",
            json!({ "code": "too_small", "params": { "min": 1 } }),
        ),
        (
            "llmConfig:addApiKey",
            with(json!({ "weight": "3" })),
            "weight",
            json!({ "code": "wrong_type", "params": { "expected": "integer", "got": "string \"3\"" } }),
        ),
        ("llmConfig:addApiKey", with(json!({ "colour": "red" })), "colour", json!({ "code": "unknown_field" })),
        ("llmConfig:addApiKey", with(json!({ "label": null })), "label", json!({ "code": "not_null" })),
        ("llmConfig:addApiKey", json!({ "providerId": "openai" }), "apiKey", json!({ "code": "required" })),
        ("llmConfig:addApiKey", with(json!({ "apiKey": "sk-a sk-b" })), "apiKey", json!({ "code": "key_has_spaces" })),
        ("llmConfig:addApiKey", with(json!({ "apiKey": "$1X" })), "apiKey", json!({ "code": "bad_env_name" })),
        ("llmConfig:addApiKey", with(json!({ "providerId": "  " })), "providerId", json!({ "code": "blank" })),
        (
            "llmConfig:addProvider",
            json!({ "name": "x", "kind": "openai", "baseUrl": "http://api.example.com/v1" }),
            "baseUrl",
            json!({ "code": "http_not_local" }),
        ),
        (
            "llmConfig:addProvider",
            json!({ "name": "x", "kind": "openai", "baseUrl": "https://x", "models": ["a"], "defaultModel": "b" }),
            "defaultModel",
            json!({ "code": "not_a_model" }),
        ),
        (
            "llmConfig:updateApiKey",
            json!({ "id": "whatever" }),
            "",
            json!({ "code": "nothing_to_change", "params": { "fields": ["label", "apiKey", "enabled", "weight", "limits", "quotaGroup"] } }),
        ),
        (
            "llmConfig:reorderApiKeys",
            json!({ "providerId": "openai", "ids": ["nope"] }),
            "ids",
            json!({ "code": "ids_mismatch", "params": { "count": 0 } }),
        ),
    ];
    for (command, args, path, want) in cases {
        let err = h.err(command, args.clone());
        assert_eq!(err.code, ErrorCode::Validation, "{command} {args}: {err:?}");
        let issues = serde_json::to_value(err.issues.unwrap_or_default()).unwrap();
        let issue = issues.as_array().unwrap().iter().find(|i| i["path"] == path);
        let issue = issue.unwrap_or_else(|| panic!("{command} {args}: an issue at {path:?}, got {issues}"));
        assert_eq!(issue["code"], want["code"], "{command} {args}: {issue}");
        assert_eq!(issue.get("params"), want.get("params"), "{command} {args}: the numbers to word it with");
        assert!(!issue["message"].as_str().unwrap().is_empty(), "{command} {args}: an English fallback");
    }
}

mod editing {
    use super::*;

    #[test]
    fn one_update_changes_label_weight_limits_quota_group_and_secret_together() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "old", 1));
        h.events.take();
        let edited = h.ok(
            "llmConfig:updateApiKey",
            json!({ "id": a, "label": " Production ", "weight": 7, "apiKey": SECRET_B,
                    "limits": { "rpmLimit": 60 }, "quotaGroup": " org-1 " }),
        );
        assert_eq!(edited["label"], "Production", "the label, trimmed");
        assert_eq!(edited["weight"], 7, "the weight");
        assert_eq!(
            (edited["rpmLimit"].clone(), edited["maxConcurrent"].clone()),
            (json!(60), Value::Null),
            "both limits replaced"
        );
        assert_eq!(edited["quotaGroup"], "org-1", "the quota group, trimmed");
        assert_eq!(edited["apiKeyPreview"], "sk-…2222", "the new secret, masked");
        assert_eq!(h.events.take(), vec!["openai"], "the UI is told once");
        let pool = h.ctx.keys().unwrap().pool();
        let secrets = pool.secrets(&ProviderId::new("openai")).unwrap();
        assert_eq!(secrets[0].expose(), SECRET_B, "the pool sends the new secret from now on");

        let cleared = h.ok("llmConfig:updateApiKey", json!({ "id": a, "limits": {}, "quotaGroup": "" }));
        assert_eq!((cleared["rpmLimit"].clone(), cleared["quotaGroup"].clone()), (Value::Null, Value::Null), "removed");
        assert_eq!(cleared["label"], "Production", "what was not given stays");
    }

    #[test]
    fn a_bad_field_refuses_the_whole_edit() {
        let h = Harness::new();
        let a = id_of(&add(&h, "openai", SECRET_A, "a", 1));
        add(&h, "openai", SECRET_B, "b", 1);
        let before = h.snapshot();
        for (args, path) in [
            (json!({ "id": a, "label": "x", "limits": { "rpmLimit": 0 } }), "limits.rpmLimit"),
            (json!({ "id": a, "label": "x", "limits": { "perDay": 3 } }), "limits.perDay"),
            (json!({ "id": a, "label": "x", "quotaGroup": "g".repeat(65) }), "quotaGroup"),
            (json!({ "id": a, "label": "x", "apiKey": "two words" }), "apiKey"),
        ] {
            let err = h.err("llmConfig:updateApiKey", args.clone());
            assert_eq!(err.code, ErrorCode::Validation, "{args}");
            assert_eq!(err.issues.expect("issues")[0].path, path, "{args}: at the field");
        }
        let err = h.err("llmConfig:updateApiKey", json!({ "id": a, "label": "x", "apiKey": SECRET_B }));
        assert_eq!(err.code, ErrorCode::Conflict, "a secret another key holds is a conflict");
        assert_eq!(h.snapshot(), before, "nothing was written, not even the label");
    }
}

mod testing {
    use super::*;
    use keypool_fake_provider::{FakeProvider, Reply};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_test_refused_as_the_key_disables_it_as_a_chat_would() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
        let a = id_of(&add(&h, &provider, SECRET_A, "a", 1));
        let b = id_of(&add(&h, &provider, SECRET_B, "b", 1));
        fake.always(SECRET_A, Reply::status(401));
        h.events.take();

        let tested = h.call_async("llmConfig:testApiKey", json!({ "id": a })).await.unwrap();
        assert_eq!((tested["ok"].clone(), tested["status"].clone()), (json!(false), json!(401)), "refused: {tested}");
        let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
        assert_eq!(keys[0]["enabled"], false, "the key is switched off, as after a chat's confirmed 401");
        assert_eq!(keys[0]["disabledReason"], "HTTP 401", "with the reason the toggle will warn about");
        assert_eq!(h.events.take(), vec![provider.clone()], "the UI is told");
        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        assert_eq!(status["keys"][0]["state"], "disabled", "and the pool agrees: {status}");

        let fine = h.call_async("llmConfig:testApiKey", json!({ "id": b })).await.unwrap();
        assert_eq!(fine["ok"], true, "a key that answers is left as it is");
        let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
        assert_eq!(keys[1]["enabled"], true, "still on");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_test_that_fails_otherwise_changes_nothing() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
        let a = id_of(&add(&h, &provider, SECRET_A, "a", 1));
        fake.always(SECRET_A, Reply::status(500));
        let tested = h.call_async("llmConfig:testApiKey", json!({ "id": a })).await.unwrap();
        assert_eq!(tested["ok"], false, "the server failed");
        let keys = h.ok("llmConfig:getApiKeys", json!({ "providerId": provider }));
        assert_eq!(keys[0]["enabled"], true, "a server's failure is not the key's: it stays on");
    }
}

mod last_use {
    use super::*;
    use keypool_fake_provider::FakeProvider;

    #[tokio::test(flavor = "multi_thread")]
    async fn a_key_used_before_a_restart_says_when() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = crate::support::add_fake_provider(&h, &fake, &["m"]);
        add(&h, &provider, SECRET_A, "a", 1);
        let never = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        assert_eq!(never["keys"][0]["lastUsedAt"], Value::Null, "not used yet");
        let chat = h.ok("chat:create", json!({ "providerId": provider }))["id"].as_str().unwrap().to_owned();
        h.clock.advance(Duration::from_secs(90));
        let used_at = keypool::Clock::now(&*h.clock).as_millis();
        h.send(&chat, Some("hi"), |_| {}).await.unwrap();
        // The ledger writes on its own thread: summaries wait for it, as the page's reads do.
        h.ok("usage:getSummary", json!({}));

        let h = h.reopen();
        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        assert_eq!(status["keys"][0]["lastUsedAt"], used_at, "after a restart the ledger says when: {status}");
        assert_eq!(status["keys"][0]["requestCount"], 0, "while the pool's own counts start again");
    }
}
