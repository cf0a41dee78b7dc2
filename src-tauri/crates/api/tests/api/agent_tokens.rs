//! A token per agent, and named tokens with limits, below Tauri: Connect gives each coding agent
//! a named token of its own in a file only its owner can read (or, for Claude Code, behind a key
//! helper), Disconnect revokes it and puts the file's bytes and mode back; a named token's
//! expiry, budget, rates and cap on requests in flight are enforced by the app's endpoint in the
//! client's dialect, exactly under concurrent requests.

use std::time::Duration;

use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::agents::{agent, home, local_api_on, token_in, users_files, CLAUDE_BEFORE};
use crate::support::{Harness, START};

const KEY: &str = "sk-tokens-AAAAAAAAAAAAAAAAAAAAAAAA-0001";

#[cfg(unix)]
use crate::agents::{mode, set_mode};

/// An OpenAI-kind provider on the fake with `KEY`, routes from Anthropic's and Gemini's model
/// names to its model, and the local API on: the endpoint's address.
async fn served(h: &Harness, fake: &FakeProvider) -> String {
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake OpenAI", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["gpt-fake"] }),
    );
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider["id"], "apiKey": KEY }));
    local_api_on(h).await;
    h.ok(
        "localApi:setRoutes",
        json!({ "routes": [
            { "model": "claude-*", "provider": provider["id"], "toModel": "gpt-fake" },
            { "model": "gemini-*", "provider": provider["id"], "toModel": "gpt-fake" },
        ] }),
    );
    h.ok("localApi:getStatus", json!({}))["address"].as_str().unwrap().to_owned()
}

/// The three dialects a client may speak to the local API.
#[derive(Debug, Clone, Copy)]
enum Dialect {
    OpenAi,
    Anthropic,
    Gemini,
}

const DIALECTS: [Dialect; 3] = [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini];

/// One request in `dialect` with `token`, as that dialect's SDK sends it.
async fn ask(address: &str, dialect: Dialect, token: &str) -> reqwest::Response {
    ask_with(address, dialect, token, false).await
}

/// [`ask`], streamed when `stream`.
async fn ask_with(address: &str, dialect: Dialect, token: &str, stream: bool) -> reqwest::Response {
    let http = reqwest::Client::new();
    let request = match dialect {
        Dialect::OpenAi => http.post(format!("{address}/v1/chat/completions")).bearer_auth(token).json(
            &json!({ "model": "gpt-fake", "stream": stream, "messages": [{ "role": "user", "content": "hi" }] }),
        ),
        Dialect::Anthropic => http
            .post(format!("{address}/v1/messages"))
            .header("x-api-key", token)
            .header("anthropic-version", "2023-06-01")
            .json(&json!({ "model": "claude-sonnet-4-6", "max_tokens": 10, "stream": stream, "messages": [{ "role": "user", "content": "hi" }] })),
        Dialect::Gemini => {
            let method = if stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
            http.post(format!("{address}/v1beta/models/gemini-2.5-pro:{method}"))
                .header("x-goog-api-key", token)
                .json(&json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }] }))
        }
    };
    request.send().await.unwrap()
}

/// The error's words, as `dialect` puts them.
fn message_of(dialect: Dialect, body: &Value) -> String {
    let message = match dialect {
        Dialect::OpenAi | Dialect::Anthropic => &body["error"]["message"],
        Dialect::Gemini => &body["error"]["message"],
    };
    message.as_str().unwrap_or_default().to_owned()
}

/// The shape each dialect's SDK reads an error from: OpenAI's `error.type`, Anthropic's
/// `type: "error"` and `error.type`, Gemini's `error.status`.
fn kind_of(dialect: Dialect, body: &Value) -> String {
    let kind = match dialect {
        Dialect::OpenAi => &body["error"]["type"],
        Dialect::Anthropic => {
            assert_eq!(body["type"], "error", "Anthropic's envelope: {body}");
            &body["error"]["type"]
        }
        Dialect::Gemini => &body["error"]["status"],
    };
    kind.as_str().unwrap_or_default().to_owned()
}

/// A named token made with `rules`: its value.
fn token_with(h: &Harness, name: &str, rules: Value) -> String {
    let made = h.ok("localApi:createToken", json!({ "name": name, "rules": rules }));
    made["token"].as_str().unwrap().to_owned()
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn connect_over_a_0644_settings_file_leaves_it_0600_and_disconnect_puts_the_mode_back() {
    let h = Harness::new();
    local_api_on(&h).await;
    let files = users_files(&h);
    let settings = &files[0].0;
    set_mode(settings, 0o644);

    let connected = h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(
        connected["tightened"],
        json!([{ "path": settings.display().to_string(), "mode": 0o644 }]),
        "the dialog is told which file was tightened, and from what"
    );
    assert_eq!(mode(settings), 0o600, "the file holding the token is readable by its owner only");
    let written: Value = serde_json::from_slice(&std::fs::read(settings).unwrap()).unwrap();
    assert!(written["env"]["ANTHROPIC_AUTH_TOKEN"].as_str().unwrap().starts_with("kp-local-"), "with the token");
    assert_eq!(written["env"]["DISABLE_TELEMETRY"], "1", "the user's own env stays");
    assert_eq!(written["permissions"]["allow"][0], "Bash(ls:*)", "and their other settings");
    let again = h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(again["tightened"], json!([]), "already private: nothing to tell again");

    h.ok("localApi:disconnectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(std::fs::read(settings).unwrap(), CLAUDE_BEFORE, "Disconnect puts its bytes back");
    assert_eq!(mode(settings), 0o644, "and its mode");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn with_the_key_helper_no_settings_file_holds_the_token() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.always(KEY, Reply::text(&["Hello"]));
    let address = served(&h, &fake).await;
    let files = users_files(&h);
    let settings = &files[0].0;
    set_mode(settings, 0o644);

    let connected = h.ok("localApi:connectAgent", json!({ "agent": "claudeCode", "keyHelper": true }));
    assert_eq!(connected["tightened"], json!([]), "nothing secret was written into it: its mode stays");
    assert_eq!(mode(settings), 0o644);
    let written: Value = serde_json::from_slice(&std::fs::read(settings).unwrap()).unwrap();
    assert!(written["env"].get("ANTHROPIC_AUTH_TOKEN").is_none(), "no token in the settings file: {written}");
    let helper = written["apiKeyHelper"].as_str().expect("Claude Code is told to run Keypool's helper");
    let printed = std::process::Command::new("/bin/sh").args(["-c", helper]).output().unwrap();
    assert!(printed.status.success(), "the helper runs in /bin/sh as Claude Code runs it");
    let token = String::from_utf8(printed.stdout).unwrap();
    assert!(token.starts_with("kp-local-") && !token.contains('\n'), "it prints the token alone");
    let kept = h.dir.path().join("agents/claude-code/token");
    assert_eq!(mode(&kept), 0o600, "Keypool's copy is readable by its owner only");
    assert_eq!(ask(&address, Dialect::Anthropic, &token).await.status(), 200, "and the token it prints answers");
    let overview = h.ok("localApi:getAgents", json!({}));
    let claude = agent(&overview, "claudeCode");
    assert_eq!((&claude["token"], &claude["connection"]["keyHelper"]), (&json!("own"), &json!(true)), "{claude}");

    // Back to the token in the file: the helper goes, and so does Keypool's copy.
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    let written: Value = serde_json::from_slice(&std::fs::read(settings).unwrap()).unwrap();
    assert!(written.get("apiKeyHelper").is_none(), "Keypool's helper is taken out again: {written}");
    assert_eq!(written["env"]["ANTHROPIC_AUTH_TOKEN"], token.as_str(), "the same token, now in the file");
    assert!(!kept.exists(), "the helper's copy is gone");
    h.ok("localApi:disconnectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(std::fs::read(settings).unwrap(), CLAUDE_BEFORE, "put back byte for byte");
    assert_eq!(mode(settings), 0o644);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disconnected_agents_token_is_refused_at_once_while_the_others_answer() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.always(KEY, Reply::text(&["Hello"]));
    let address = served(&h, &fake).await;
    for name in ["claudeCode", "codex", "geminiCli"] {
        h.ok("localApi:connectAgent", json!({ "agent": name }));
    }
    let home = home(&h);
    let claude = token_in(&home.join(".claude/settings.json"), "\"ANTHROPIC_AUTH_TOKEN\": \"");
    let codex = token_in(&home.join(".codex/config.toml"), "experimental_bearer_token = \"");
    let gemini = token_in(&home.join(".gemini/.env"), "GEMINI_API_KEY=");
    for (dialect, token) in [(Dialect::Anthropic, &claude), (Dialect::OpenAi, &codex), (Dialect::Gemini, &gemini)] {
        assert_eq!(ask(&address, dialect, token).await.status(), 200, "{dialect:?}: each agent's token answers");
    }

    h.ok("localApi:disconnectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(ask(&address, Dialect::Anthropic, &claude).await.status(), 401, "Claude Code's token stops at once");
    assert_eq!(ask(&address, Dialect::OpenAi, &codex).await.status(), 200, "Codex's goes on");
    assert_eq!(ask(&address, Dialect::Gemini, &gemini).await.status(), 200, "and Gemini CLI's");

    // Reconnecting Codex with a new token: the old value stops, the new one answers.
    h.ok("localApi:connectAgent", json!({ "agent": "codex", "newToken": true }));
    let renewed = token_in(&home.join(".codex/config.toml"), "experimental_bearer_token = \"");
    assert_eq!(ask(&address, Dialect::OpenAi, &codex).await.status(), 401, "the old value is refused");
    assert_eq!(ask(&address, Dialect::OpenAi, &renewed).await.status(), 200, "the new one answers");

    let by_token = h.ok("usage:getByToken", json!({ "from": 0, "to": START.as_millis() + 1 }));
    let requests = |name: &str| {
        by_token.as_array().unwrap().iter().find(|l| l["name"] == name).map(|l| l["requests"].as_u64().unwrap())
    };
    assert_eq!(
        (requests("claude-code"), requests("codex"), requests("gemini-cli")),
        (Some(1), Some(3), Some(2)),
        "usage by agent is by its token, whatever headers it sent: {by_token}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_or_spent_token_is_refused_in_each_dialect() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.always(KEY, Reply::text(&["Hello"]));
    let address = served(&h, &fake).await;

    let error = h.err("localApi:createToken", json!({ "name": "late", "rules": { "expiresAt": START.as_millis() } }));
    assert_eq!(error.issues.unwrap()[0].code.name(), "expiry_passed", "an expiry must be ahead of now");
    let error = h.err("localApi:createToken", json!({ "name": "odd", "rules": { "requestsPerMinute": 0 } }));
    assert_eq!(error.issues.unwrap()[0].path, "rules.requestsPerMinute", "a rate of 0 is refused, by its field");
    let error = h.err("localApi:createToken", json!({ "name": "odd", "rules": { "models": ["gpt [5]"] } }));
    assert_eq!(error.issues.unwrap()[0].code.name(), "bad_glob");
    assert_eq!(h.ok("localApi:listTokens", json!({})), json!([]), "nothing was made");

    for dialect in DIALECTS {
        let name = format!("budget-{dialect:?}").to_lowercase();
        let token = token_with(&h, &name, json!({ "budget": { "tokens": 1 }, "budgetPeriod": "day" }));
        assert_eq!(
            ask(&address, dialect, &token).await.status(),
            200,
            "{dialect:?}: the first answer is within budget"
        );
        let mut spent = 0;
        for _ in 0..10_000 {
            let tokens = h.ok("localApi:listTokens", json!({}));
            spent = tokens.as_array().unwrap().iter().find(|t| t["name"] == name.as_str()).unwrap()["spent"]
                ["monthTokens"]
                .as_u64()
                .unwrap();
            if spent > 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(spent > 0, "{dialect:?}: the answer was charged to the token");
        let refused = ask(&address, dialect, &token).await;
        assert_eq!(refused.status(), 403, "{dialect:?}: the budget is spent");
        assert_eq!(refused.headers()["x-keypool-limit"], "budget");
        assert_eq!(refused.headers()["x-should-retry"], "false", "{dialect:?}: no SDK retries a spent budget");
        let body: Value = refused.json().await.unwrap();
        let want = match dialect {
            Dialect::OpenAi => "insufficient_quota",
            Dialect::Anthropic => "permission_error",
            Dialect::Gemini => "PERMISSION_DENIED",
        };
        assert_eq!(kind_of(dialect, &body), want, "{dialect:?}: in the client's own error shape: {body}");
        assert!(message_of(dialect, &body).contains("budget"), "{dialect:?}: the message says why: {body}");
    }

    let expiring = token_with(&h, "expiring", json!({ "expiresAt": START.as_millis() + 60_000 }));
    for dialect in DIALECTS {
        assert_eq!(ask(&address, dialect, &expiring).await.status(), 200, "{dialect:?}: before its expiry");
    }
    h.clock.advance(Duration::from_secs(61));
    for dialect in DIALECTS {
        let refused = ask(&address, dialect, &expiring).await;
        assert_eq!(refused.status(), 401, "{dialect:?}: past its expiry");
        assert_eq!(refused.headers()["x-keypool-limit"], "expires");
        let body: Value = refused.json().await.unwrap();
        assert!(message_of(dialect, &body).contains("expired"), "{dialect:?}: it says so: {body}");
    }
    let listed = h.ok("localApi:listTokens", json!({}));
    let expired = listed.as_array().unwrap().iter().find(|t| t["name"] == "expiring").unwrap();
    assert_eq!(expired["usable"], false, "the list shows it no longer serves: {expired}");

    // Renewed: a later expiry serves it again, with the same value.
    let later = START.as_millis() + 3_600_000;
    h.ok("localApi:updateToken", json!({ "name": "expiring", "rules": { "expiresAt": later } }));
    assert_eq!(ask(&address, Dialect::OpenAi, &expiring).await.status(), 200, "a new expiry serves it again");
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_hold_exactly_under_32_parallel_requests() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    fake.always(KEY, Reply::text(&["Hello"]));
    let address = served(&h, &fake).await;

    // Requests per minute: the clock stands still, so exactly the minute's allowance passes.
    let rated = token_with(&h, "rated", json!({ "requestsPerMinute": 10 }));
    let mut asked = tokio::task::JoinSet::new();
    for i in 0..32 {
        let (address, rated) = (address.clone(), rated.clone());
        asked.spawn(async move {
            let answer = ask(&address, DIALECTS[i % 3], &rated).await;
            let limit = answer.headers().get("x-keypool-limit").map(|v| v.to_str().unwrap().to_owned());
            (answer.status().as_u16(), limit, answer.headers().contains_key("retry-after"))
        });
    }
    let statuses: Vec<_> = asked.join_all().await;
    assert_eq!(statuses.iter().filter(|s| s.0 == 200).count(), 10, "ten answered: {statuses:?}");
    let refused: Vec<_> = statuses.iter().filter(|s| s.0 != 200).collect();
    assert_eq!(refused.len(), 22, "the rest were refused: {statuses:?}");
    assert!(
        refused.iter().all(|s| s.0 == 429 && s.1.as_deref() == Some("requests_per_minute") && s.2),
        "as a rate, saying when to come back: {refused:?}"
    );

    // In flight: four held at the provider at once, no fifth reaches it.
    fake.always(KEY, Reply::Hold { chunks_before: vec![], gate: "capped".into(), chunks_after: vec!["ok".into()] });
    let capped = token_with(&h, "capped", json!({ "maxInFlight": 4 }));
    let before = fake.seen().len();
    let mut asked = tokio::task::JoinSet::new();
    for i in 0..32 {
        let (address, capped) = (address.clone(), capped.clone());
        // Streamed (what an agent asks), each read to its end.
        asked.spawn(async move {
            let answer = ask_with(&address, DIALECTS[i % 3], &capped, true).await;
            let status = answer.status().as_u16();
            answer.bytes().await.unwrap();
            status
        });
    }
    // The four admitted are held until the release: the first 28 to end are the refused.
    let mut ended = Vec::new();
    while ended.len() < 28 {
        ended.push(asked.join_next().await.unwrap().unwrap());
    }
    assert!(ended.iter().all(|s| *s == 429), "28 refused at once: {ended:?}");
    while fake.seen().len() - before < 4 {
        tokio::task::yield_now().await;
    }
    assert_eq!((asked.len(), fake.seen().len() - before), (4, 4), "four in flight, and only four reached the provider");
    fake.release("capped");
    assert_eq!(asked.join_all().await, vec![200; 4], "the four held are answered once released");
    let again = ask_with(&address, Dialect::OpenAi, &capped, true).await;
    assert_eq!(again.status(), 200, "their places are free again");
    again.bytes().await.unwrap();
}
