//! Members of one server: tokens of their own (added on the command line or in the config
//! file), limits enforced before the pool, refusals in the client's dialect that name the limit
//! and say whether a retry can pass.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::*;

/// `keypool-server members ARGS --data-dir DIR`, off the runtime.
pub async fn members(dir: &Path, args: &[&str]) -> Output {
    let mut all: Vec<String> = vec!["members".into(), args[0].into(), "--data-dir".into(), dir.display().to_string()];
    all.extend(args[1..].iter().map(|s| s.to_string()));
    tokio::task::spawn_blocking(move || Command::new(env!("CARGO_BIN_EXE_keypool-server")).args(all).output().unwrap())
        .await
        .unwrap()
}

/// The token `members add` printed.
pub async fn add_member(dir: &Path, args: &[&str]) -> String {
    let output = members(dir, &[&["add"], args].concat()).await;
    assert!(output.status.success(), "members add succeeds: {}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert!(token.starts_with("kp-member-") && token.len() == 74, "one new token on stdout: {token:?}");
    token
}

/// A `[[members]]` entry whose token is in `dir/<name>.token` (written here, mode 0600).
pub fn member_entry(dir: &Path, name: &str, limits: &str) -> (String, String) {
    let token = format!("kp-member-test-{name}-0123456789abcdef0123456789abcdef");
    let file = dir.join(format!("{name}.token"));
    std::fs::write(&file, &token).unwrap();
    #[cfg(unix)]
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let entry = format!("[[members]]\nname = \"{name}\"\ntoken_file = \"{}\"\n{limits}\n", file.display());
    (entry, token)
}

/// Waits (up to 5 s) until a request with `token` gets `status`; how long it took.
pub async fn until_status(server: &Server, token: &str, status: u16, why: &str) -> Duration {
    let started = Instant::now();
    for turn in 0..500 {
        if server.ask_as(token, &format!("wait-{turn}")).await.0 == status {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{why}: never {status}\n{}", server.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_added_on_the_command_line_is_served_listed_without_its_token_and_revoked() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &config(&fake.url(), &["a"]), &[]);
    server.healthy().await;
    let token = add_member(&server.dir, &["alice", "--requests-per-minute", "50", "--model", "fake-*"]).await;
    let took = until_status(&server, &token, 200, "the serving process picks the new member up").await;
    assert!(took < Duration::from_secs(2), "within a couple of polls: {took:?}");
    assert_eq!(server.ask("owner").await.0, 200, "the server's own token keeps working");

    let listed = members(&server.dir, &["list", "--json"]).await;
    let text = String::from_utf8(listed.stdout).unwrap();
    let list: serde_json::Value = serde_json::from_str(&text).expect("members list prints JSON");
    assert_eq!(list[0]["name"], "alice");
    assert_eq!((list[0]["source"].as_str(), list[0]["requests_per_minute"].as_u64()), (Some("cli"), Some(50)));
    assert_eq!(list[0]["models"], json!(["fake-*"]));
    assert!(!text.contains(&token[10..30]), "no run of the token in the list: {text}");
    let fields: Vec<&String> = list[0].as_object().unwrap().keys().collect();
    assert!(
        !fields.iter().any(|f| f.contains("token_") || *f == "token" || f.contains("sha")),
        "nor its digest: {text}"
    );

    let unknown = format!("kp-member-{}", "0".repeat(64));
    let (status, headers, body) = server.ask_as(&unknown, "who").await;
    assert_eq!(status, 401, "a token nobody has is refused: {body}");
    assert!(headers.get("x-keypool-limit").is_none(), "and names no limit");

    let revoked = members(&server.dir, &["revoke", "alice"]).await;
    assert!(revoked.status.success(), "revoke: {}", String::from_utf8_lossy(&revoked.stderr));
    let took = until_status(&server, &token, 403, "the revocation reaches the serving process").await;
    assert!(took < Duration::from_secs(1), "within a second: {took:?}");
    let (_, headers, body) = server.ask_as(&token, "again").await;
    assert_eq!(headers["x-should-retry"], "false", "the SDKs are told not to retry: {body}");
    assert!(body.contains("revoked"), "the refusal says why: {body}");
    let log = server.log();
    assert!(!log.contains(&token[10..30]), "no run of the token in the server's log");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_members_limits_refuse_in_its_clients_dialect_naming_the_limit_and_when_it_lifts() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path()).unwrap();
    let (bob, bob_token) = member_entry(tmp.path(), "bob", "requests_per_minute = 2");
    // Each fake reply uses 11 prompt tokens and a few output ones: the second spends the budget.
    let (carol, carol_token) = member_entry(tmp.path(), "carol", "budget_tokens = 20\nbudget_period = \"day\"");
    let (dave, dave_token) = member_entry(tmp.path(), "dave", "models = [\"other-*\"]");
    let (erin, erin_token) = member_entry(tmp.path(), "erin", "expires = \"2020-01-01\"");
    let text = format!("{}{bob}{carol}{dave}{erin}", config(&fake.url(), &["a"]));
    let server = Server::start(tmp.path(), &text, &[]);
    server.healthy().await;

    for turn in 0..2 {
        assert_eq!(server.ask_as(&bob_token, &format!("bob-{turn}")).await.0, 200, "bob's burst of 2");
    }
    let (status, headers, body) = server.ask_as(&bob_token, "bob-3").await;
    assert_eq!(status, 429, "the third in the minute is a rate refusal: {body}");
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((29..=30).contains(&wait), "one every 30 s after the burst: retry-after {wait}");
    assert!(headers.contains_key("retry-after-ms"), "the SDKs' own header too");
    assert!(!headers.contains_key("x-should-retry"), "a retry after the wait can pass");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], "rate_limit_exceeded", "OpenAI's shape: {body}");
    assert!(body.contains("2 requests per minute"), "the limit is named: {body}");

    assert_eq!(server.ask_as(&carol_token, "carol-1").await.0, 200);
    assert_eq!(server.ask_as(&carol_token, "carol-2").await.0, 200, "13 of 20 tokens used: still under");
    let (status, headers, body) = server.ask_as(&carol_token, "carol-3").await;
    assert_eq!(status, 403, "the spent budget is a 403 no SDK retries: {body}");
    assert_eq!(headers["x-should-retry"], "false");
    assert_eq!(headers["x-keypool-limit"], "budget");
    assert!(body.contains("budget of 20 tokens per day is spent"), "names the budget: {body}");
    assert!(body.contains("it resets at ") && body.contains("T00:00:00.000Z"), "and when it resets: {body}");

    let (status, _, body) = server.ask_as(&dave_token, "dave").await;
    assert_eq!(status, 403, "a model outside dave's globs: {body}");
    assert!(body.contains("may not use the model `fake-model`") && body.contains("other-*"), "{body}");
    let models = client().get(server.url("/v1/models")).bearer_auth(&dave_token).send().await.unwrap();
    let models: serde_json::Value = models.json().await.unwrap();
    assert_eq!(models["data"], json!([]), "dave's model list holds only what he may ask for");
    let owner = client().get(server.url("/v1/models")).bearer_auth(server.token()).send().await.unwrap();
    let owner: serde_json::Value = owner.json().await.unwrap();
    let ids: Vec<&str> = owner["data"].as_array().unwrap().iter().filter_map(|m| m["id"].as_str()).collect();
    assert!(ids.contains(&MODEL), "the owner's holds every model: {ids:?}");

    // Refused before the body is read, in the dialect of the path called.
    let anthropic = client()
        .post(server.url("/v1/messages"))
        .header("x-api-key", &erin_token)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({ "model": MODEL, "max_tokens": 5, "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic.status().as_u16(), 401, "an expired token is a 401");
    let body: serde_json::Value = anthropic.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error", "in Anthropic's shape: {body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("expired at 2020-01-02T00:00:00.000Z"), "{body}");
    let gemini = client()
        .post(server.url(&format!("/v1beta/models/{MODEL}:generateContent")))
        .header("x-goog-api-key", &erin_token)
        .json(&json!({ "contents": [] }))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = gemini.json().await.unwrap();
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED", "and in Google's: {body}");

    // None of these counts as a guess: the right owner token still passes from this address.
    assert_eq!(server.ask("owner").await.0, 200, "refused members are no wrong tokens");
}

/// `keypool-server usage ARGS --data-dir DIR`: its stdout.
async fn usage(dir: &Path, args: &[&str]) -> String {
    let mut all: Vec<String> = vec!["usage".into(), "--data-dir".into(), dir.display().to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_keypool-server")).args(all).output().unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "usage succeeds: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ledger_names_each_requests_member_and_usage_sums_it_with_its_cost() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path()).unwrap();
    let (frank, frank_token) = member_entry(tmp.path(), "frank", "");
    let (grace, grace_token) = member_entry(tmp.path(), "grace", "budget_usd = 1.0");
    let prices = "[[prices]]\nmodel = \"fake-model\"\ninput_per_million = 1.0\ncached_per_million = 0.5\noutput_per_million = 2.0\n";
    let text = format!("{}{frank}{grace}{prices}", config(&fake.url(), &["a"]));
    let server = Server::start(tmp.path(), &text, &[]);
    server.healthy().await;
    for turn in 0..2 {
        assert_eq!(server.ask_as(&frank_token, &format!("frank-{turn}")).await.0, 200);
    }
    assert_eq!(server.ask_as(&grace_token, "grace").await.0, 200, "a dollar budget with a priced model");
    assert_eq!(server.ask("owner").await.0, 200);

    let mut report = serde_json::Value::Null;
    for _ in 0..500 {
        report = serde_json::from_str(&usage(&server.dir, &["--by", "member", "--json"]).await).unwrap();
        if report["rows"]
            .as_array()
            .is_some_and(|rows| rows.iter().map(|r| r["attempts"].as_u64().unwrap()).sum::<u64>() == 4)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rows = report["rows"].as_array().expect("rows");
    let row = |name: Option<&str>| {
        rows.iter().find(|r| r["member"].as_str() == name).unwrap_or_else(|| panic!("a row for {name:?}: {report}"))
    };
    assert_eq!(row(Some("frank"))["attempts"], 2, "frank's two requests are his in the ledger: {report}");
    assert_eq!(row(Some("grace"))["attempts"], 1);
    assert_eq!(row(None)["attempts"], 1, "the owner's request names no member");
    // Each fake reply: 11 prompt tokens (5 cached) and 3 output: 6 × $1 + 5 × $0.5 + 3 × $2 per million.
    let cost = row(Some("frank"))["cost_usd"].as_f64().expect("priced");
    assert!((cost - 2.0 * 14.5e-6).abs() < 1e-9, "frank's cost at the [[prices]] price: {cost}");
    assert_eq!(row(Some("frank"))["cost_complete"], true);

    let csv = usage(&server.dir, &["--by", "model", "--csv"]).await;
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("model,attempts,failed,input_tokens,cached_tokens,output_tokens,cost_usd,cost_complete")
    );
    assert!(
        lines.next().is_some_and(|line| line.starts_with("fake-model,4,0,44,20,")),
        "one model, four attempts: {csv}"
    );
    let table = usage(&server.dir, &["--by", "provider", "--since", "1h"]).await;
    assert!(table.starts_with("provider") && table.contains("fake"), "a table by default: {table}");
}
