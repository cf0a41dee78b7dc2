//! Transcripts of chosen scenarios: every command a scenario runs through the IPC layer, with its
//! arguments and the backend's answer or error, written to `ui/src/test/transcripts/`. The UI's
//! typed fake backend is replayed against them in Vitest (`ui/src/test/__tests__/transcripts.test.ts`),
//! so the fake cannot drift from what the backend answers.
//!
//! A scenario fails when its checked-in transcript is not what the backend answers now;
//! `UPDATE_TRANSCRIPTS=1` rewrites them (`npm run transcripts`), and the UI's replay then says
//! where the fake no longer agrees.
//!
//! What is not the backend's to decide is marked, not compared as it is:
//! - an id the backend made up (a string at a field named `id` or `…Id` that no argument gave
//!   before) becomes `<id:N>`, N in the order they first appear, wherever it appears (arguments,
//!   answers, words); the replay maps the fake's own ids the same way;
//! - a time (a number at a field named in `times`) is written as `<time>`: compared as set or
//!   null, not by value (the two backends' clocks differ, and the built-in providers' rows are
//!   dated by the wall clock);
//! - an error's `message` and its issues' are the English fallback: the UI words an error from
//!   its code, issues and details, which are compared.
//!
//! A scenario starts from the providers the backend starts with, written as `given.providers`:
//! the replay gives the fake the same ones. Scenarios probe bounds at `LIMITS`, so a changed
//! bound changes the transcript rather than breaking the scenario.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use keypool_api::ipc::{self, IpcError, Kind, LIMITS};
use serde_json::{json, Map, Value};

use crate::support::Harness;

/// Where the transcripts live, relative to this crate.
const TRANSCRIPTS_DIR: &str = "../../../ui/src/test/transcripts";

/// The fields that hold a time.
const TIMES: &[&str] = &["createdAt", "updatedAt", "disabledAt", "fetchedAt", "now"];

/// Every scenario, by the name of its transcript.
const SCENARIOS: &[&str] =
    &["keys", "providers", "base-urls", "chats", "settings", "usage", "local-api", "named-tokens", "preferences"];

/// A scenario being recorded.
struct Transcript {
    h: Harness,
    scenario: &'static str,
    about: &'static str,
    given: Value,
    steps: Vec<Value>,
    /// The ids the backend made up, each with its token, in the order they appeared.
    minted: Vec<(String, String)>,
    /// Every string an argument held, so an id the caller chose is not taken for a made-up one.
    given_strings: BTreeSet<String>,
}

impl Transcript {
    fn new(scenario: &'static str, about: &'static str) -> Self {
        assert!(SCENARIOS.contains(&scenario), "{scenario} is listed in SCENARIOS");
        let h = Harness::new();
        let providers = h.ok("llmConfig:getProviders", json!({}));
        Transcript {
            h,
            scenario,
            about,
            given: json!({ "providers": without_times(providers) }),
            steps: Vec::new(),
            minted: Vec::new(),
            given_strings: BTreeSet::new(),
        }
    }

    /// Runs `command`, which must succeed, and records it; the answer as the backend gave it.
    fn ok(&mut self, command: &str, args: Value) -> Value {
        let answer = self.run(command, args.clone());
        answer.unwrap_or_else(|error| panic!("{}: {command} {args} must succeed: {error:?}", self.scenario))
    }

    /// Runs `command`, which must fail, and records it; the error.
    fn err(&mut self, command: &str, args: Value) -> IpcError {
        match self.run(command, args.clone()) {
            Ok(value) => panic!("{}: {command} {args} must fail, answered {value}", self.scenario),
            Err(error) => error,
        }
    }

    fn run(&mut self, command: &str, args: Value) -> Result<Value, IpcError> {
        collect_strings(&args, &mut self.given_strings);
        let result = match ipc::command(command).map(|row| row.kind()) {
            Some(Kind::Async) => {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
                runtime.block_on(self.h.call_async(command, args.clone()))
            }
            _ => self.h.call(command, args.clone()),
        };
        let mut step = Map::new();
        step.insert("command".into(), command.into());
        step.insert("args".into(), self.tokens(args));
        match &result {
            Ok(answer) => {
                self.mint(answer, None);
                step.insert("answer".into(), self.tokens(answer.clone()));
            }
            Err(error) => {
                let error = serde_json::to_value(error).expect("an IpcError serializes");
                self.mint(&error, None);
                step.insert("error".into(), self.tokens(error));
            }
        }
        self.steps.push(Value::Object(step));
        result
    }

    /// Gives a token to every id in `value` that the backend made up.
    fn mint(&mut self, value: &Value, field: Option<&str>) {
        match value {
            Value::String(id)
                if field.is_some_and(is_id_field)
                    && !self.given_strings.contains(id)
                    && !self.minted.iter().any(|(minted, _)| minted == id) =>
            {
                let token = format!("<id:{}>", self.minted.len() + 1);
                self.minted.push((id.clone(), token));
            }
            Value::Array(items) => items.iter().for_each(|item| self.mint(item, field)),
            Value::Object(fields) => fields.iter().for_each(|(name, value)| self.mint(value, Some(name))),
            _ => {}
        }
    }

    /// `value` with every made-up id replaced by its token, inside words too, and its times
    /// marked.
    fn tokens(&self, value: Value) -> Value {
        match without_times(value) {
            Value::String(mut text) => {
                for (id, token) in &self.minted {
                    text = text.replace(id.as_str(), token);
                }
                Value::String(text)
            }
            Value::Array(items) => Value::Array(items.into_iter().map(|item| self.tokens(item)).collect()),
            Value::Object(fields) => Value::Object(fields.into_iter().map(|(k, v)| (k, self.tokens(v))).collect()),
            other => other,
        }
    }

    /// Writes the transcript (`UPDATE_TRANSCRIPTS=1`), or fails when the checked-in one differs.
    fn finish(self) {
        let transcript = json!({
            "scenario": self.scenario,
            "about": self.about,
            "times": TIMES,
            "given": self.given,
            "steps": self.steps,
        });
        let text = serde_json::to_string_pretty(&transcript).expect("a transcript serializes") + "\n";
        let path = transcripts_dir().join(format!("{}.json", self.scenario));
        if std::env::var_os("UPDATE_TRANSCRIPTS").is_some() {
            std::fs::create_dir_all(transcripts_dir()).expect("the transcripts directory can be made");
            std::fs::write(&path, &text).expect("the transcript is writable");
            return;
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == text,
            "{} is stale: the backend answers scenario {:?} differently now. Run `npm run transcripts`, \
             commit the result, and make the UI's fake backend agree (Vitest replays it).",
            path.display(),
            self.scenario
        );
    }
}

fn transcripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(TRANSCRIPTS_DIR)
}

/// `value` with every time written as `<time>`.
fn without_times(value: Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(without_times).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(name, value)| match value {
                    Value::Number(_) if TIMES.contains(&name.as_str()) => (name, Value::from("<time>")),
                    value => (name, without_times(value)),
                })
                .collect(),
        ),
        other => other,
    }
}

fn is_id_field(name: &str) -> bool {
    name == "id" || name.ends_with("Id")
}

fn collect_strings(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::String(text) => {
            into.insert(text.clone());
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, into)),
        Value::Object(fields) => fields.values().for_each(|value| collect_strings(value, into)),
        _ => {}
    }
}

fn id(value: &Value) -> String {
    value["id"].as_str().expect("an answer with an id").to_owned()
}

#[test]
fn every_transcript_is_a_scenario_of_this_file() {
    let mut files: Vec<String> = std::fs::read_dir(transcripts_dir())
        .map(|dir| dir.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    files.sort();
    let mut expected: Vec<String> = SCENARIOS.iter().map(|name| format!("{name}.json")).collect();
    expected.sort();
    if std::env::var_os("UPDATE_TRANSCRIPTS").is_some() {
        // The scenarios write theirs meanwhile; only what no scenario writes goes.
        for stale in files.iter().filter(|file| !expected.contains(file)) {
            std::fs::remove_file(transcripts_dir().join(stale)).expect("a stale transcript can be removed");
        }
        return;
    }
    assert_eq!(files, expected, "ui/src/test/transcripts/ holds one transcript per scenario and nothing else");
}

#[test]
fn keys() {
    let mut t = Transcript::new(
        "keys",
        "a provider's keys: add (trimmed, defaults, limits, quota groups), refuse, change, order, delete",
    );
    t.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
    let first = t.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "  sk-transcript-AAAA0001  ", "label": " prod " }),
    );
    t.err("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "sk-transcript-AAAA0001" }));
    t.err(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-BBBB0002", "weight": LIMITS.weight.max + 1 }),
    );
    t.err(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-BBBB0002", "weight": LIMITS.weight.min - 1 }),
    );
    t.err(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-BBBB0002", "rpmLimit": LIMITS.rpm_limit.min - 1 }),
    );
    t.err(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-BBBB0002", "maxConcurrent": LIMITS.max_concurrent.max + 1 }),
    );
    t.err(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-BBBB0002",
                "quotaGroup": "p".repeat(LIMITS.quota_group.max_chars + 1) }),
    );
    let grouped = t.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "sk-transcript-EEEE0005", "quotaGroup": "  org-acme  " }),
    );
    let (first, grouped) = (id(&first), id(&grouped));
    t.ok("llmConfig:updateApiKey", json!({ "id": first, "quotaGroup": "org-acme" }));
    t.ok("llmConfig:updateApiKey", json!({ "id": grouped, "quotaGroup": " " }));
    t.err("llmConfig:updateApiKey", json!({ "id": first, "quotaGroup": "p".repeat(LIMITS.quota_group.max_chars + 1) }));
    t.ok("llmConfig:getPoolStatus", json!({ "providerId": "openai" }));
    t.ok("llmConfig:deleteApiKey", json!({ "id": grouped }));
    let second = t.ok(
        "llmConfig:addApiKey",
        json!({ "providerId": "openai", "apiKey": "$TEAM_KEY", "weight": 3, "rpmLimit": 60, "enabled": false }),
    );
    let second = id(&second);
    t.ok("llmConfig:updateApiKey", json!({ "id": first, "label": "  " }));
    t.ok("llmConfig:updateApiKey", json!({ "id": first, "weight": LIMITS.weight.max }));
    t.err("llmConfig:updateApiKey", json!({ "id": first }));
    t.err("llmConfig:updateApiKey", json!({ "id": first, "weight": LIMITS.weight.max + 1 }));
    t.ok(
        "llmConfig:updateApiKey",
        json!({ "id": first, "label": "edited", "weight": 2, "apiKey": "sk-transcript-EEEE0005",
                "limits": { "rpmLimit": 30 }, "quotaGroup": " org-1 " }),
    );
    t.err(
        "llmConfig:updateApiKey",
        json!({ "id": first, "label": "not kept", "limits": { "maxConcurrent": LIMITS.max_concurrent.max + 1 } }),
    );
    t.err("llmConfig:updateApiKey", json!({ "id": first, "quotaGroup": "g".repeat(LIMITS.quota_group.max_chars + 1) }));
    t.ok("llmConfig:updateApiKey", json!({ "id": first, "limits": {}, "quotaGroup": "" }));
    t.ok("llmConfig:toggleApiKey", json!({ "id": second, "enabled": true }));
    t.ok("llmConfig:setKeyLimits", json!({ "id": first, "maxConcurrent": 2 }));
    t.err("llmConfig:setKeyLimits", json!({ "id": first, "rpmLimit": LIMITS.rpm_limit.max + 1 }));
    t.ok("llmConfig:reorderApiKeys", json!({ "providerId": "openai", "ids": [second, first] }));
    t.ok("llmConfig:resetCooldown", json!({ "id": first }));
    t.ok("llmConfig:deleteApiKey", json!({ "id": first }));
    t.err("llmConfig:deleteApiKey", json!({ "id": first }));
    t.ok("llmConfig:getApiKeys", json!({ "providerId": "openai" }));
    t.finish();
}

#[test]
fn providers() {
    let mut t =
        Transcript::new("providers", "providers: add, refuse, change, move to another host (asked first), delete");
    let added = t.ok(
        "llmConfig:addProvider",
        json!({ "name": "  Gateway  ", "kind": "openai", "baseUrl": " https://gateway.example/v1 ",
                "models": ["gpt-x", " gpt-y "], "defaultModel": "gpt-y", "systemPrompt": "Be brief." }),
    );
    t.err("llmConfig:addProvider", json!({ "name": "x".repeat(LIMITS.provider_name.max_chars + 1), "kind": "openai", "baseUrl": "https://a.example" }));
    t.err(
        "llmConfig:addProvider",
        json!({ "name": "Bad default", "kind": "openai", "baseUrl": "https://a.example", "models": ["a"], "defaultModel": "b" }),
    );
    t.err("llmConfig:addProvider", json!({ "name": "gateway", "kind": "anthropic", "baseUrl": "https://b.example" }));
    t.err("llmConfig:updateProvider", json!({ "id": "anthropic", "name": "OPENAI" }));
    let provider = id(&added);
    let gemini = t.ok(
        "llmConfig:addProvider",
        json!({ "name": "Gemini proxy", "kind": "gemini", "baseUrl": "https://gemini-proxy.example",
                "models": ["gemini-2.5-flash"] }),
    );
    t.ok("llmConfig:updateProvider", json!({ "id": id(&gemini), "kind": "openai" }));
    t.ok("llmConfig:deleteProvider", json!({ "id": id(&gemini) }));
    t.ok("llmConfig:addApiKey", json!({ "providerId": provider, "apiKey": "sk-transcript-CCCC0003", "label": "gw" }));
    t.err("llmConfig:updateProvider", json!({ "id": provider }));
    t.ok("llmConfig:updateProvider", json!({ "id": provider, "baseUrl": "https://gateway.example/openai/v1" }));
    t.err("llmConfig:updateProvider", json!({ "id": provider, "baseUrl": "https://elsewhere.example/v1" }));
    t.ok(
        "llmConfig:updateProvider",
        json!({ "id": provider, "baseUrl": "https://elsewhere.example/v1", "confirmHostChange": true }),
    );
    t.ok("llmConfig:updateProvider", json!({ "id": provider, "defaultModel": "", "systemPrompt": "" }));
    t.ok("llmConfig:deleteProvider", json!({ "id": provider }));
    t.err("llmConfig:deleteProvider", json!({ "id": provider }));
    t.finish();
}

/// The base URLs the UI's tests type, and the backend's verdict on each: the fake backend has no
/// URL rule of its own, it answers with these.
#[test]
fn base_urls() {
    let mut t = Transcript::new(
        "base-urls",
        "the base URL rule: https anywhere, plain http to this machine, or to a local network the user says is theirs",
    );
    for (i, url) in [
        "https://proxy.example",
        "not a url",
        "ftp://files.example",
        "http://api.example.com",
        "http://api.example.com/v1",
        "http://8.8.8.8/v1",
        "http://192.168.1.9:8000/v1",
        "http://gpu-box.local/v1",
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080",
    ]
    .into_iter()
    .enumerate()
    {
        // Each its own name: a name two providers share is refused before the URL is judged.
        let args = json!({ "name": format!("URL {i}"), "kind": "openai", "baseUrl": url });
        let _ = t.run("llmConfig:addProvider", args);
    }
    // Plain http to a host on the network needs the user's word that it is theirs.
    for (i, url) in ["http://192.168.1.9:8000/v1", "http://gpu-box.local/v1"].into_iter().enumerate() {
        let args = json!({ "name": format!("LAN {i}"), "kind": "openai", "baseUrl": url, "onMyNetwork": true });
        let _ = t.run("llmConfig:addProvider", args);
    }
    t.finish();
}

#[test]
fn chats() {
    let mut t =
        Transcript::new("chats", "chats: create (the provider's defaults), rename, refuse, stop, close, delete");
    let chat = t.ok("chat:create", json!({ "providerId": "anthropic" }));
    t.err("chat:create", json!({ "providerId": "no-such-provider" }));
    t.ok(
        "chat:create",
        json!({ "providerId": "openai", "model": " gpt-4o ", "title": " Trip ", "systemPrompt": "Be kind." }),
    );
    let chat = id(&chat);
    t.ok("chat:update", json!({ "id": chat, "title": "  Plans  ", "systemPrompt": "   " }));
    t.err("chat:update", json!({ "id": chat }));
    t.err("chat:update", json!({ "id": chat, "title": "t".repeat(LIMITS.chat_title.max_chars + 1) }));
    t.ok("chat:getMessages", json!({ "chatId": chat }));
    t.ok("chat:stop", json!({ "chatId": chat }));
    t.ok("chat:close", json!({ "id": chat }));
    t.ok("chat:delete", json!({ "id": chat }));
    t.err("chat:getMessages", json!({ "chatId": chat }));
    t.finish();
}

#[test]
fn settings() {
    let mut t = Transcript::new("settings", "the app's preferences: read, change within their bounds, refuse");
    t.ok("settings:get", json!({}));
    t.ok("settings:update", json!({ "maxWaitSeconds": 0, "usageRetentionDays": 30 }));
    t.err("settings:update", json!({}));
    t.err("settings:update", json!({ "maxWaitSeconds": LIMITS.max_wait_seconds.max + 1 }));
    t.err("settings:update", json!({ "bindingIdleMinutes": LIMITS.binding_idle_minutes.min - 1 }));
    t.err("settings:update", json!({ "usageRetentionDays": LIMITS.usage_retention_days.max + 1 }));
    t.ok("settings:update", json!({ "proxy": { "mode": "url", "url": "http://proxy.example:3128" } }));
    t.err("settings:update", json!({ "proxy": { "mode": "url", "url": "ftp://proxy.example" } }));
    t.err("settings:update", json!({ "proxy": { "mode": "url" } }));
    t.ok("settings:update", json!({ "proxy": { "mode": "system" } }));
    t.ok("settings:get", json!({}));
    t.finish();
}

#[test]
fn usage() {
    let mut t = Transcript::new("usage", "prices and the usage ledger's rules: set, refuse, delete, ranges");
    t.ok("usage:getPrices", json!({}));
    t.ok("usage:setPrice", json!({ "model": " gpt-4o ", "inputPerMillion": 2.5, "outputPerMillion": 10 }));
    t.err(
        "usage:setPrice",
        json!({ "model": "gpt-4o", "inputPerMillion": LIMITS.price.max + 0.5, "outputPerMillion": -1 }),
    );
    t.ok("usage:getPrices", json!({}));
    t.ok("usage:deletePrice", json!({ "model": "gpt-4o" }));
    t.err("usage:deletePrice", json!({ "model": "gpt-4o" }));
    t.err("usage:getSummary", json!({ "from": 2000, "to": 1000 }));
    t.err(
        "usage:getSeries",
        json!({ "bucket": "hour", "from": 0, "to": 3_600_000 * (LIMITS.series_buckets.max_items as i64 + 1) }),
    );
    t.finish();
}

#[test]
fn local_api() {
    let mut t = Transcript::new("local-api", "the local API's settings while it is off: the port and its bounds");
    t.ok("localApi:getStatus", json!({}));
    t.err("localApi:configure", json!({ "enabled": false, "port": LIMITS.port.min - 1 }));
    t.err("localApi:configure", json!({ "enabled": false, "port": u32::from(LIMITS.port.max) + 1 }));
    t.ok("localApi:configure", json!({ "enabled": false, "port": LIMITS.port.max }));
    t.ok("localApi:getStatus", json!({}));
    t.finish();
}

#[test]
fn named_tokens() {
    let mut t = Transcript::new(
        "named-tokens",
        "the local API's named tokens: none yet; names refused; an unknown one revoked",
    );
    t.ok("localApi:listTokens", json!({}));
    t.err("localApi:createToken", json!({ "name": "two words" }));
    t.err("localApi:createToken", json!({ "name": "  " }));
    t.err("localApi:createToken", json!({ "name": "x".repeat(LIMITS.token_name.max_chars + 1) }));
    t.err("localApi:createToken", json!({}));
    t.err("localApi:revokeToken", json!({ "name": "nobody" }));
    t.ok("localApi:listTokens", json!({}));
    t.finish();
}

#[test]
fn preferences() {
    let mut t = Transcript::new("preferences", "the UI's preferences in the data directory: none yet, keep, refuse");
    t.ok("app:getPreferences", json!({}));
    t.ok("app:setPreferences", json!({ "theme": "dark", "language": "ja" }));
    t.ok("app:setPreferences", json!({ "page": "settings/providers", "provider": "anthropic" }));
    t.err("app:setPreferences", json!({}));
    t.err("app:setPreferences", json!({ "theme": "sepia" }));
    t.err("app:setPreferences", json!({ "provider": "p".repeat(LIMITS.id.max_bytes + 1) }));
    t.ok("app:getPreferences", json!({}));
    t.finish();
}

/// The tokens never lose track: an id the backend made up is the same token wherever it is.
#[test]
fn made_up_ids_become_tokens_and_given_ones_stay() {
    let mut t = Transcript::new("keys", "");
    let key = t.ok("llmConfig:addApiKey", json!({ "providerId": "openai", "apiKey": "sk-transcript-DDDD0004" }));
    t.err("llmConfig:deleteApiKey", json!({ "id": "no-such-key" }));
    t.ok("llmConfig:deleteApiKey", json!({ "id": id(&key) }));
    let steps: HashMap<&str, &Value> = t.steps.iter().map(|s| (s["command"].as_str().unwrap(), s)).collect();
    assert_eq!(steps["llmConfig:addApiKey"]["answer"]["id"], "<id:1>", "the new key's id is a token");
    assert_eq!(steps["llmConfig:addApiKey"]["answer"]["providerId"], "openai", "an id the caller gave stays");
    assert_eq!(steps["llmConfig:deleteApiKey"]["args"]["id"], "<id:1>", "and the same token where it is used again");
    let refused = &t.steps[1]["error"];
    assert_eq!(refused["details"]["what"], "API key", "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("no-such-key"), "a given id stays in words too: {refused}");
}
