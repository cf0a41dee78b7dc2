//! Many keys at once, through the IPC layer over a real SQLite file and the fake provider on
//! loopback: importing a paste (preview, validation buckets, batches, cancel), bulk changes,
//! deletes, tests and exports. Time is the harness's manual clock: waiting out an announced
//! rate limit moves it, nothing sleeps.

use keypool_api::ipc::ErrorCode;
use keypool_api::service::BATCH;
use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::support::{add_fake_provider, Harness};

/// A key of a known shape (`sk-` and 20 more), different for each `n`, in its preview too.
fn key(n: usize) -> String {
    format!("sk-bulk-abcdefghijklmnopqrstuv{n:06}")
}

fn keys_text(range: std::ops::Range<usize>) -> String {
    range.map(key).collect::<Vec<_>>().join("\n")
}

fn preview(h: &Harness, provider: &str, text: &str) -> Value {
    h.ok("llmConfig:previewKeyImport", json!({ "providerId": provider, "text": text }))
}

/// OpenAI-shaped keys, an Anthropic key, a Gemini key, a GitHub token and a password, as a
/// project's `.env` holds them.
const OPENAI_1: &str = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123456789";
const OPENAI_2: &str = "sk-abcdefghijklmnopqrstuvwx1234";
const ANTHROPIC: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AAAA";
const GEMINI: &str = "AIzaSyA1234567890abcdefghijklmnopqrstuv";
const GITHUB: &str = "ghp_0123456789abcdefABCDEF0123456789abcd";
const PASSWORD: &str = "correct-horse-battery-staple-42";

fn dotenv() -> String {
    format!(
        "# the project's secrets\nOPENAI_API_KEY={OPENAI_1}\nANTHROPIC_API_KEY={ANTHROPIC}\nGEMINI_API_KEY=\"{GEMINI}\"\n\
         GITHUB_TOKEN={GITHUB}\nDB_PASSWORD={PASSWORD}\nOPENAI_FALLBACK={OPENAI_2}\n"
    )
}

async fn import(h: &Harness, import_id: &str, options: Value) -> Value {
    let mut args = json!({ "importId": import_id, "validate": false, "keepRejectedDisabled": false });
    args.as_object_mut().unwrap().extend(options.as_object().unwrap().clone());
    let started = h.call_async("llmConfig:startKeyImport", args).await.expect("the import starts");
    assert_eq!(started["state"], "running", "start answers at once, running: {started}");
    let ended = h.ctx.bulk_keys().unwrap().finished(import_id).await.expect("the import is known");
    serde_json::to_value(&ended).unwrap()
}

fn pool(h: &Harness, provider: &str) -> Vec<Value> {
    h.ok("llmConfig:getApiKeys", json!({ "providerId": provider })).as_array().unwrap().clone()
}

fn ids(keys: &[Value]) -> Vec<String> {
    keys.iter().map(|k| k["id"].as_str().unwrap().to_owned()).collect()
}

/// Every secret of `secrets` is absent from everything the UI was sent.
fn assert_no_secret_sent(h: &Harness, secrets: &[String], progress: &[Value]) {
    let sent = format!("{}\n{}", h.transcript_text(), serde_json::to_string(progress).unwrap());
    for secret in secrets {
        assert!(!sent.contains(secret.as_str()), "a full key never reaches the UI: {secret} was sent");
    }
}

mod preview {
    use super::*;

    #[test]
    fn a_paste_is_extracted_and_deduplicated_against_itself_and_the_pool() {
        let h = Harness::new();
        h.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": key(1) }));
        let text = format!(
            "# keys for the team\nlabel,key\nold,{}\nnew,\"{}\"\nagain,{}\ngarbage-that-is-long-enough-0000\n{}\n",
            key(1),
            key(2),
            key(2),
            key(3)
        );
        let before = h.snapshot();
        let got = preview(&h, "openai", &text);
        assert_eq!(got["found"], 4, "four key occurrences: {got}");
        assert_eq!(got["duplicatesInPaste"], 1, "key 2 twice in the paste");
        assert_eq!(got["duplicatesInPool"], 1, "key 1 is in the pool already (compared in the backend)");
        assert_eq!(got["unrecognisedLines"], json!([6]), "the garbage line, by number");
        let new = got["new"].as_array().unwrap();
        assert_eq!(new.len(), 2, "keys 2 and 3 are new");
        assert_eq!(
            new[0],
            json!({ "index": 1, "preview": keypool::preview(&key(2)) }),
            "masked as ApiKey previews are, by its place among the keys found (key 1, in the pool, is 0)"
        );
        assert_eq!(h.snapshot(), before, "a preview saves nothing");
        assert_no_secret_sent(&h, &[key(1), key(2), key(3), "garbage-that-is-long-enough-0000".into()], &[]);
    }

    #[test]
    fn a_dotenv_gives_an_openai_provider_only_its_openai_keys() {
        let h = Harness::new();
        let got = preview(&h, "openai", &dotenv());
        let previews: Vec<&str> =
            got["new"].as_array().unwrap().iter().map(|k| k["preview"].as_str().unwrap()).collect();
        assert_eq!(
            previews,
            [keypool::preview(OPENAI_1), keypool::preview(OPENAI_2)],
            "only the keys of OpenAI's shape: {got}"
        );
        assert_eq!(got["found"], 2, "the other kinds' keys are not found for this provider: {got}");
        assert_eq!(
            got["unrecognisedLines"],
            json!([3, 4, 5, 6]),
            "the Anthropic, Gemini, GitHub and password lines are named, by number: {got}"
        );
        let anthropic = preview(&h, "anthropic", &dotenv());
        assert_eq!(
            anthropic["new"],
            json!([{ "index": 0, "preview": keypool::preview(ANTHROPIC) }]),
            "Anthropic's provider takes only its key: {anthropic}"
        );
        assert_no_secret_sent(&h, &[OPENAI_1, OPENAI_2, ANTHROPIC, GEMINI, GITHUB, PASSWORD].map(String::from), &[]);
    }

    /// A provider whose keys have no known shape: nothing is taken by shape, and every line's
    /// token only once the user chose "one key per line" (listed, masked, before anything is sent).
    #[test]
    fn tokens_of_no_known_shape_are_taken_only_one_per_line_when_asked() {
        let h = Harness::new();
        let text = format!("GROQ_API_KEY=gsk_0123456789abcdefghijklmnop\nGITHUB_TOKEN={GITHUB}\n");
        let error = h.err("llmConfig:previewKeyImport", json!({ "providerId": "openai", "text": text }));
        let issues = error.issues.as_ref().expect("it names the field");
        assert_eq!(issues[0].code.name(), "no_keys_found", "no OpenAI key, and no fallback to any token: {error:?}");
        let got = h.ok(
            "llmConfig:previewKeyImport",
            json!({ "providerId": "openai", "text": text, "reading": "one_per_line" }),
        );
        let previews: Vec<&str> =
            got["new"].as_array().unwrap().iter().map(|k| k["preview"].as_str().unwrap()).collect();
        assert_eq!(
            previews,
            [keypool::preview("gsk_0123456789abcdefghijklmnop"), keypool::preview(GITHUB)],
            "one per line takes each line's token, for the user to leave out what is not a key: {got}"
        );
    }

    #[test]
    fn a_text_without_keys_or_for_no_provider_is_refused_and_changes_nothing() {
        let h = Harness::new();
        let before = h.snapshot();
        let error =
            h.err("llmConfig:previewKeyImport", json!({ "providerId": "openai", "text": "\n# only a comment\n" }));
        assert_eq!(error.code, ErrorCode::Validation, "no key is a validation error: {error:?}");
        let issues = error.issues.as_ref().expect("it names the field");
        assert_eq!((issues[0].path.as_str(), issues[0].code.name().as_str()), ("text", "no_keys_found"), "{error:?}");
        let error = h.err("llmConfig:previewKeyImport", json!({ "providerId": "nobody", "text": key(1) }));
        assert_eq!(error.code, ErrorCode::NotFound, "an unknown provider: {error:?}");
        assert!(!error.message.contains(&key(1)), "the error does not echo the key");
        let error = h.err("llmConfig:previewKeyImport", json!({ "providerId": "openai", "text": key(1), "extra": 1 }));
        assert_eq!(error.code, ErrorCode::Validation, "unknown fields are refused: {error:?}");
        assert_eq!(h.snapshot(), before, "nothing was written by the refused previews");
    }
}

mod import_without_validation {
    use super::*;

    #[tokio::test]
    async fn keys_are_saved_in_batches_with_labels_weight_and_group() {
        let h = Harness::new();
        let count = 2 * BATCH + 3;
        let got = preview(&h, "openai", &keys_text(0..count));
        h.events.take();
        let end = import(
            &h,
            got["importId"].as_str().unwrap(),
            json!({ "weight": 3, "labelPrefix": " batch-1 ", "quotaGroup": "org-a" }),
        )
        .await;
        assert_eq!((end["state"].as_str(), end["added"].as_u64()), (Some("done"), Some(count as u64)), "{end}");
        let keys = pool(&h, "openai");
        assert_eq!(keys.len(), count, "every key is in the pool");
        assert_eq!(keys[0]["label"], "batch-1 #1", "labels count from 1 after the trimmed prefix");
        assert_eq!(keys[count - 1]["label"], format!("batch-1 #{count}"), "and go on across batches");
        assert!(
            keys.iter().all(|k| k["weight"] == 3 && k["quotaGroup"] == "org-a" && k["enabled"] == true),
            "all alike"
        );
        assert_eq!(h.events.take().len(), 3, "one llmConfig:changed per batch saved (500, 500, 3)");
        let progress = h.events.take_progress();
        assert_eq!(progress.last().unwrap()["state"], "done", "the last progress told is the end");
        assert!(progress.iter().any(|p| p["added"] == BATCH), "progress is told after the first batch: {progress:?}");
        assert_no_secret_sent(&h, &(0..count).map(key).collect::<Vec<_>>(), &progress);
    }

    #[tokio::test]
    async fn a_cancel_keeps_the_batches_already_saved() {
        let h = Harness::new();
        let count = 3 * BATCH;
        let got = preview(&h, "openai", &keys_text(0..count));
        let import_id = got["importId"].as_str().unwrap().to_owned();
        let args = json!({ "importId": import_id, "validate": false, "keepRejectedDisabled": false });
        h.call_async("llmConfig:startKeyImport", args).await.unwrap();
        let mut watch = h.ctx.bulk_keys().unwrap().watch(&import_id).unwrap();
        // On this one-thread runtime the import runs while the test waits, and lets the test in
        // between two batches.
        watch.wait_for(|p| p.added >= BATCH).await.unwrap();
        let end = h.call_async("llmConfig:cancelKeyImport", json!({ "importId": import_id })).await.unwrap();
        assert_eq!(end["state"], "cancelled", "the import ends cancelled: {end}");
        let added = end["added"].as_u64().unwrap() as usize;
        assert!(added >= BATCH && added < count, "some batches were saved, not all: {end}");
        assert_eq!(added % BATCH, 0, "whole batches only: each is one transaction");
        assert_eq!(pool(&h, "openai").len(), added, "exactly the saved batches stay in the pool");
        let again = h.call_async("llmConfig:cancelKeyImport", json!({ "importId": import_id })).await.unwrap();
        assert_eq!(again["added"], end["added"], "a second cancel answers the same end");
    }

    /// A provider that never answers the checks: a cancel ends the import at once, without
    /// waiting for the checks in flight.
    #[tokio::test]
    async fn a_cancel_ends_the_checks_in_flight_at_once() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        for n in 0..3 {
            let hold = Reply::Hold { chunks_before: vec![], gate: "never".into(), chunks_after: vec![] };
            fake.always(&key(n), hold);
        }
        let got = preview(&h, &provider, &keys_text(0..3));
        let import_id = got["importId"].as_str().unwrap().to_owned();
        let args = json!({ "importId": import_id, "validate": true, "keepRejectedDisabled": false });
        h.call_async("llmConfig:startKeyImport", args).await.unwrap();
        // Until the checks are in flight (the fake saw them), not until time passes.
        while fake.seen().is_empty() {
            tokio::task::yield_now().await;
        }
        let cancel = h.call_async("llmConfig:cancelKeyImport", json!({ "importId": import_id }));
        let end = tokio::time::timeout(std::time::Duration::from_secs(30), cancel).await;
        let end = end.expect("a cancel ends the import at once").unwrap();
        assert_eq!(end["state"], "cancelled", "the import ends cancelled: {end}");
        assert!(pool(&h, &provider).is_empty(), "no key was saved");
    }

    #[tokio::test]
    async fn an_unknown_import_or_bad_options_start_nothing() {
        let h = Harness::new();
        let got = preview(&h, "openai", &keys_text(0..3));
        let before = h.snapshot();
        let error = h
            .call_async(
                "llmConfig:startKeyImport",
                json!({ "importId": "nope", "validate": false, "keepRejectedDisabled": false }),
            )
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::NotFound, "an import id never previewed: {error:?}");
        let args =
            json!({ "importId": got["importId"], "weight": 0, "validate": false, "keepRejectedDisabled": false });
        let error = h.call_async("llmConfig:startKeyImport", args).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::Validation, "weight 0 is refused: {error:?}");
        assert_eq!(h.snapshot(), before, "nothing was saved");
        let end = import(&h, got["importId"].as_str().unwrap(), json!({})).await;
        assert_eq!(end["added"], 3, "the preview is still there to start after a refused start: {end}");
        let error = h
            .call_async(
                "llmConfig:startKeyImport",
                json!({ "importId": got["importId"], "validate": false, "keepRejectedDisabled": false }),
            )
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::NotFound, "an import runs once: {error:?}");
    }
}

mod import_with_validation {
    use super::*;

    /// Keys 0..4 valid, 4..6 revoked, 6 rate-limited once (valid when checked again), 7 always
    /// rate-limited, 8 refused with a status that says nothing of the key.
    fn scripted(fake: &FakeProvider) {
        for n in 4..6 {
            fake.always(&key(n), Reply::InvalidKey);
        }
        fake.script(&key(6), [Reply::status_with(429, &[("retry-after", "7")])]);
        fake.always(&key(7), Reply::status_with(429, &[("retry-after", "3")]));
        fake.always(&key(8), Reply::status(500));
    }

    #[tokio::test]
    async fn each_key_lands_in_its_bucket_and_only_valid_ones_are_added() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        scripted(&fake);
        let got = preview(&h, &provider, &keys_text(0..9));
        let started_at = keypool::Clock::now(&*h.clock);
        let end = import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true })).await;
        assert_eq!(
            [&end["checked"], &end["valid"], &end["invalid"], &end["rateLimited"], &end["unreachable"], &end["added"]],
            [&json!(9), &json!(5), &json!(2), &json!(1), &json!(1), &json!(5)],
            "valid: 0-3 and the one rate-limited once; invalid: the two revoked: {end}"
        );
        let waited = keypool::Clock::now(&*h.clock).saturating_duration_since(started_at);
        assert_eq!(waited.as_secs(), 7, "the rate-limited keys were checked again after the longest announced wait");
        let listed: Vec<String> =
            fake.seen().iter().filter(|s| s.path.ends_with("models")).map(|s| s.key.clone()).collect();
        assert_eq!(listed.iter().filter(|k| **k == key(6)).count(), 2, "a rate-limited key is checked twice");
        assert_eq!(listed.iter().filter(|k| **k == key(4)).count(), 1, "a revoked key once");
        let previews: Vec<String> =
            pool(&h, &provider).iter().map(|k| k["apiKeyPreview"].as_str().unwrap().into()).collect();
        let want: Vec<String> = [0, 1, 2, 3, 6].iter().map(|n| keypool::preview(&key(*n))).collect();
        assert_eq!(previews, want, "exactly the valid keys are in the pool, in the paste's order");
        let progress = h.events.take_progress();
        assert_no_secret_sent(&h, &(0..9).map(key).collect::<Vec<_>>(), &progress);
    }

    /// OpenRouter's model list answers any key: an import asks each key's own answer (`GET key`),
    /// as the key's Test does, so keys OpenRouter refuses there are not called valid.
    #[tokio::test]
    async fn openrouter_keys_are_checked_where_openrouter_tells_a_refused_key() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = h.ok(
            "llmConfig:addProvider",
            json!({ "name": "Router", "kind": "openrouter", "baseUrl": format!("{}/api/v1", fake.url()), "models": ["m"] }),
        );
        let provider = provider["id"].as_str().unwrap().to_owned();
        let router = |n: usize| format!("sk-or-v1-{n:064}");
        fake.script(&router(1), [Reply::InvalidKey]);
        fake.script(&router(2), [Reply::InvalidKey]);
        let text = (0..3).map(router).collect::<Vec<_>>().join("\n");
        let got = preview(&h, &provider, &text);
        let end = import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true })).await;
        assert_eq!(
            [&end["checked"], &end["valid"], &end["invalid"], &end["added"]],
            [&json!(3), &json!(1), &json!(2), &json!(1)],
            "the two keys OpenRouter refuses are invalid: {end}"
        );
        let asked: Vec<String> = fake.seen().iter().map(|s| s.path.clone()).collect();
        assert!(asked.iter().all(|path| path == "/api/v1/key"), "each key was asked at GET key only: {asked:?}");
        assert_eq!(pool(&h, &provider).len(), 1, "only the valid key is in the pool");
    }

    /// A `.env` imported into an OpenAI provider: the provider is asked about its OpenAI keys and
    /// nothing else (not the Anthropic or Gemini key, nor the GitHub token or the password).
    #[tokio::test]
    async fn a_dotenv_sends_the_provider_only_keys_of_its_kind() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        let got = preview(&h, &provider, &dotenv());
        let end = import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true })).await;
        assert_eq!((&end["valid"], &end["added"]), (&json!(2), &json!(2)), "the two OpenAI keys: {end}");
        let mut asked: Vec<String> = fake.seen().iter().map(|s| s.key.clone()).collect();
        asked.sort();
        asked.dedup();
        assert_eq!(asked, [OPENAI_2, OPENAI_1], "the provider saw only the keys of its kind");
        let previews: Vec<String> =
            pool(&h, &provider).iter().map(|k| k["apiKeyPreview"].as_str().unwrap().into()).collect();
        assert_eq!(previews, [keypool::preview(OPENAI_1), keypool::preview(OPENAI_2)], "and only those are saved");
    }

    /// The keys the user removed from the preview's list are neither checked nor saved, and keep
    /// their index when the text is previewed again.
    #[tokio::test]
    async fn keys_left_out_of_the_list_are_never_sent() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        let got = preview(&h, &provider, &keys_text(0..4));
        let index_of = |got: &Value, n: usize| {
            got["new"].as_array().unwrap().iter().find(|k| k["preview"] == keypool::preview(&key(n))).unwrap()["index"]
                .clone()
        };
        let left_out = [index_of(&got, 1), index_of(&got, 3)];
        let end = import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true, "leftOut": left_out })).await;
        assert_eq!((&end["total"], &end["added"]), (&json!(2), &json!(2)), "two keys left out: {end}");
        assert!(fake.seen().iter().all(|s| s.key != key(1) && s.key != key(3)), "the provider never saw them");
        let again = preview(&h, &provider, &keys_text(0..4));
        assert_eq!(
            [index_of(&again, 1), index_of(&again, 3)],
            left_out,
            "a key keeps its index in a later preview of the same text: {again}"
        );
    }

    /// A 403 on the model list proves nothing about the key (a key restricted by scope may be
    /// refused the list and still chat): it could not be checked; it is not invalid.
    #[tokio::test]
    async fn a_403_on_the_check_is_not_checked_not_invalid() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        fake.always(&key(1), Reply::status(403));
        let got = preview(&h, &provider, &keys_text(0..2));
        let end =
            import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true, "keepRejectedDisabled": true }))
                .await;
        assert_eq!(
            [&end["valid"], &end["invalid"], &end["unreachable"]],
            [&json!(1), &json!(0), &json!(1)],
            "the 403 is counted as not checked: {end}"
        );
        let keys = pool(&h, &provider);
        let refused = keys.iter().find(|k| k["apiKeyPreview"] == keypool::preview(&key(1))).unwrap();
        assert_eq!(refused["disabledReason"], "not checked (HTTP 403)", "kept with why: {refused}");
    }

    #[tokio::test]
    async fn a_key_added_by_hand_during_the_import_is_not_saved_twice() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        // Key 2's check is answered once the test has added key 0 by hand.
        fake.script(&key(2), [Reply::Hold { chunks_before: vec![], gate: "added".into(), chunks_after: vec![] }]);
        let got = preview(&h, &provider, &keys_text(0..3));
        let import_id = got["importId"].as_str().unwrap().to_owned();
        let args = json!({ "importId": import_id, "validate": true, "keepRejectedDisabled": false });
        h.call_async("llmConfig:startKeyImport", args).await.unwrap();
        // The run has read the pool (it reads it before any check) once key 2 is being checked.
        for _ in 0..1_000_000 {
            if fake.seen().iter().any(|s| s.key == key(2)) {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(fake.seen().iter().any(|s| s.key == key(2)), "key 2's check reached the provider");
        h.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": key(0) }));
        fake.release("added");
        let end = h.ctx.bulk_keys().unwrap().finished(&import_id).await.unwrap();
        assert_eq!((end.added, end.duplicates), (2, 1), "key 0, added meanwhile, counts as a duplicate: {end:?}");
        let previews: Vec<String> =
            pool(&h, &provider).iter().map(|k| k["apiKeyPreview"].as_str().unwrap().into()).collect();
        let want: Vec<String> = [0, 1, 2].iter().map(|n| keypool::preview(&key(*n))).collect();
        assert_eq!(previews, want, "each key is in the pool once, key 0 where the hand put it");
    }

    #[tokio::test]
    async fn kept_rejected_keys_are_added_disabled_with_their_reason() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        scripted(&fake);
        let got = preview(&h, &provider, &keys_text(0..9));
        let end =
            import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true, "keepRejectedDisabled": true }))
                .await;
        assert_eq!(end["added"], 9, "every key is added: {end}");
        let keys = pool(&h, &provider);
        let by_preview =
            |n: usize| keys.iter().find(|k| k["apiKeyPreview"] == keypool::preview(&key(n))).unwrap().clone();
        assert_eq!(
            (&by_preview(0)["enabled"], &by_preview(0)["disabledReason"]),
            (&json!(true), &Value::Null),
            "valid: on"
        );
        assert_eq!(
            (&by_preview(4)["enabled"], &by_preview(4)["disabledReason"]),
            (&json!(false), &json!("HTTP 401")),
            "revoked"
        );
        assert_eq!(by_preview(7)["disabledReason"], "HTTP 429", "still rate-limited after the second check");
        assert_eq!(by_preview(8)["disabledReason"], "not checked (HTTP 500)", "a status that says nothing of the key");
        let status = h.ok("llmConfig:getPoolStatus", json!({ "providerId": provider }));
        let active = status["keys"].as_array().unwrap().iter().filter(|k| k["state"] == "active").count();
        assert_eq!(active, 5, "the pool selects only the valid ones: {status}");
    }

    #[tokio::test]
    async fn a_gemini_key_google_calls_invalid_is_invalid() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = h.ok(
            "llmConfig:addProvider",
            json!({ "name": "Gem", "kind": "gemini", "baseUrl": fake.url(), "models": ["fake-model"] }),
        );
        let provider = provider["id"].as_str().unwrap();
        let (good, bad) = ("AIzaSyGOOD5678901234567890abcdefghijklm", "AIzaSyBAD45678901234567890abcdefghijklm");
        fake.always(bad, Reply::InvalidKey);
        let got = preview(&h, provider, &format!("{good}\n{bad}"));
        assert_eq!(got["new"].as_array().unwrap().len(), 2, "both Gemini keys are found by shape: {got}");
        let end = import(&h, got["importId"].as_str().unwrap(), json!({ "validate": true })).await;
        assert_eq!((&end["valid"], &end["invalid"], &end["added"]), (&json!(1), &json!(1), &json!(1)), "{end}");
        let seen = fake.seen();
        assert!(seen.iter().all(|s| s.path == "/v1beta/models"), "Gemini's documented model list is asked");
    }
}

mod bulk_changes {
    use super::*;

    async fn pool_of(h: &Harness, n: usize) -> Vec<String> {
        let got = preview(h, "openai", &keys_text(0..n));
        import(h, got["importId"].as_str().unwrap(), json!({})).await;
        ids(&pool(h, "openai"))
    }

    #[tokio::test]
    async fn update_sets_every_named_key_in_one_write() {
        let h = Harness::new();
        let all = pool_of(&h, 5).await;
        h.events.take();
        let chosen = &all[1..4];
        let changed =
            h.ok("llmConfig:updateApiKeys", json!({ "ids": chosen, "enabled": false, "weight": 7, "quotaGroup": "g" }));
        assert_eq!(ids(changed["keys"].as_array().unwrap()), chosen, "the changed keys come back");
        assert_eq!(h.events.take(), vec!["openai".to_owned()], "one llmConfig:changed for the whole change");
        let keys = pool(&h, "openai");
        assert!(
            keys[1..4].iter().all(|k| k["enabled"] == false && k["weight"] == 7 && k["quotaGroup"] == "g"),
            "{keys:?}"
        );
        assert!(keys[0]["enabled"] == true && keys[4]["weight"] == 1, "the others are untouched");
        h.ok("llmConfig:updateApiKeys", json!({ "ids": chosen, "quotaGroup": "" }));
        assert!(pool(&h, "openai")[1..4].iter().all(|k| k["quotaGroup"].is_null()), "an empty group clears it");
    }

    #[tokio::test]
    async fn a_bad_update_or_delete_changes_nothing() {
        let h = Harness::new();
        let all = pool_of(&h, 3).await;
        h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": "anthropic", "apiKey": "sk-ant-other-0123456789012345678901" }),
        );
        let other = ids(&pool(&h, "anthropic"));
        let before = h.snapshot();
        let mut with_unknown = all.clone();
        with_unknown.push("no-such-key".into());
        let error = h.err("llmConfig:updateApiKeys", json!({ "ids": with_unknown, "enabled": false }));
        assert_eq!(error.code, ErrorCode::NotFound, "one unknown id refuses the whole change: {error:?}");
        let error = h.err("llmConfig:updateApiKeys", json!({ "ids": all, "weight": 0 }));
        assert_eq!(error.code, ErrorCode::Validation, "a weight out of range: {error:?}");
        let error = h.err("llmConfig:updateApiKeys", json!({ "ids": all }));
        assert_eq!(error.code, ErrorCode::Validation, "nothing to change: {error:?}");
        let error = h.err("llmConfig:updateApiKeys", json!({ "ids": [], "enabled": true }));
        assert_eq!(error.code, ErrorCode::Validation, "no ids: {error:?}");
        let mut mixed = all.clone();
        mixed.extend(other);
        let error = h.err("llmConfig:deleteApiKeys", json!({ "ids": mixed }));
        let issues = error.issues.as_ref().expect("an issue");
        assert_eq!(issues[0].code.name(), "keys_of_several_providers", "keys of two providers: {error:?}");
        let error = h.err("llmConfig:deleteApiKeys", json!({ "ids": with_unknown }));
        assert_eq!(error.code, ErrorCode::NotFound, "one unknown id deletes nothing: {error:?}");
        assert_eq!(h.snapshot(), before, "none of the refused calls wrote anything");
    }

    #[tokio::test]
    async fn delete_removes_the_keys_and_their_keychain_entries() {
        let keychain = keypool_keychain::MemoryKeychain::new();
        let h = Harness::with_keychain(keychain.clone() as std::sync::Arc<dyn keypool_keychain::Keychain>);
        let all = pool_of(&h, 4).await;
        assert_eq!(
            keypool_keychain::Keychain::accounts(&*keychain).unwrap().len(),
            4,
            "imported keys go to the keychain"
        );
        h.events.take();
        let deleted = h.ok("llmConfig:deleteApiKeys", json!({ "ids": all[..3] }));
        assert_eq!(deleted["deleted"], 3, "three deleted: {deleted}");
        assert_eq!(h.events.take().len(), 1, "one llmConfig:changed");
        assert_eq!(ids(&pool(&h, "openai")), all[3..].to_vec(), "the fourth stays");
        assert_eq!(
            keypool_keychain::Keychain::accounts(&*keychain).unwrap(),
            vec![all[3].clone()],
            "the deleted keys' keychain entries are gone"
        );
    }

    #[tokio::test]
    async fn testing_many_keys_moves_their_states_as_one_test_does() {
        let h = Harness::new();
        let fake = FakeProvider::start().await;
        let provider = add_fake_provider(&h, &fake, &["fake-model"]);
        let got = preview(&h, &provider, &keys_text(0..10));
        import(&h, got["importId"].as_str().unwrap(), json!({})).await;
        fake.always(&key(3), Reply::status(401));
        let all = ids(&pool(&h, &provider));
        let results = h.call_async("llmConfig:testApiKeys", json!({ "ids": all })).await.unwrap();
        let oks: Vec<bool> = results.as_array().unwrap().iter().map(|r| r["ok"].as_bool().unwrap()).collect();
        assert_eq!(oks, (0..10).map(|n| n != 3).collect::<Vec<_>>(), "results in the order of the ids");
        let keys = pool(&h, &provider);
        assert_eq!(
            (&keys[3]["enabled"], &keys[3]["disabledReason"]),
            (&json!(false), &json!("HTTP 401")),
            "refused: off"
        );
        assert!(keys.iter().enumerate().all(|(i, k)| i == 3 || k["enabled"] == true), "the others stay on");
    }

    #[tokio::test]
    async fn an_export_writes_metadata_or_full_keys_readable_by_the_owner_only() {
        let h = Harness::new();
        let all = pool_of(&h, 3).await;
        let path = h.dir.path().join("keys.csv");
        h.saves.answer(Some(path.clone()));
        let written = h
            .call_async("llmConfig:exportApiKeys", json!({ "providerId": "openai", "ids": all[..2], "full": false }))
            .await
            .unwrap();
        assert_eq!(written, json!({ "path": path.display().to_string(), "count": 2 }), "two keys written");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "label,preview,weight,group,state,last_error,requests_today,tokens_today", "the header");
        assert_eq!(lines[1], format!(",{},1,,active,,0,0", keypool::preview(&key(0))), "a key's metadata");
        assert!(!text.contains(&key(0)), "metadata has no full key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the export is readable by its owner only");
        }
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
        h.call_async("llmConfig:exportApiKeys", json!({ "providerId": "openai", "ids": all, "full": true }))
            .await
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().next().unwrap().ends_with(",key"), "a full export has a key column");
        assert!((0..3).all(|n| text.contains(&key(n))), "with every chosen key in full");
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o777;
        assert_eq!(mode, 0o600, "an existing file is made private before the keys are written");
        h.saves.answer(None);
        let cancelled = h
            .call_async("llmConfig:exportApiKeys", json!({ "providerId": "openai", "ids": all, "full": true }))
            .await
            .unwrap();
        assert_eq!(cancelled, json!({ "path": null, "count": 0 }), "a cancelled dialog writes nothing");
        assert_no_secret_sent(&h, &(0..3).map(key).collect::<Vec<_>>(), &[]);
    }

    /// A label or a group a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) is written as
    /// text, as the usage export writes it.
    #[tokio::test]
    async fn an_export_writes_formulas_as_text() {
        let h = Harness::new();
        pool_of(&h, 1).await;
        let added = h.ok(
            "llmConfig:addApiKey",
            json!({ "providerId": "openai", "apiKey": key(7), "label": "=HYPERLINK(\"http://evil.example\")",
                    "quotaGroup": "@SUM(A1)" }),
        );
        let id = added["id"].as_str().unwrap().to_owned();
        let path = h.dir.path().join("formulas.csv");
        h.saves.answer(Some(path.clone()));
        h.call_async("llmConfig:exportApiKeys", json!({ "providerId": "openai", "ids": [id], "full": false }))
            .await
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let row = reader.records().next().expect("one key").unwrap();
        assert_eq!(&row[0], "'=HYPERLINK(\"http://evil.example\")", "the label is text: {text}");
        assert_eq!(&row[3], "'@SUM(A1)", "so is the group: {text}");
    }
}
