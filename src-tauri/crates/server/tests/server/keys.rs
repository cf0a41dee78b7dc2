//! `keypool-server keys import|list` as processes over a data dir the server made, against the
//! fake provider on loopback (the child process validates keys with it).

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{config, json, FakeProvider, Reply, Server};

fn key(n: usize) -> String {
    format!("sk-cli-abcdefghijklmnopqrstuvwx{n:04}")
}

/// `keypool-server ARGS`, run off the runtime (the fake provider answers on it meanwhile).
async fn cli(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || Command::new(env!("CARGO_BIN_EXE_keypool-server")).args(args).output().unwrap())
        .await
        .unwrap()
}

fn args(dir: &Path, rest: &[&str]) -> Vec<String> {
    let mut all = vec!["keys".to_owned(), rest[0].to_owned(), "--data-dir".into(), dir.display().to_string()];
    all.extend(rest[1..].iter().map(|s| s.to_string()));
    all
}

fn stdout_json(output: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("one JSON value on stdout ({e}): {text:?}"))
}

async fn list(dir: &Path) -> serde_json::Value {
    let output = cli(args(dir, &["list", "--provider", "fake", "--json"])).await;
    assert!(output.status.success(), "list succeeds: {}", String::from_utf8_lossy(&output.stderr));
    stdout_json(&output)
}

/// A data dir with the provider "fake" (no keys), made by a first run of the server.
async fn data_dir(fake: &FakeProvider) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &config(&fake.url(), &[]), &[]);
    server.healthy().await;
    server.signal("TERM");
    assert_eq!(server.exited().await, Some(0), "the first run stops cleanly");
    tmp
}

#[tokio::test(flavor = "multi_thread")]
async fn import_validates_the_keys_and_adds_only_the_valid_ones() {
    let fake = FakeProvider::start().await;
    let tmp = data_dir(&fake).await;
    let dir = &tmp.path().join("data");
    for n in [4, 5] {
        fake.always(&key(n), Reply::InvalidKey);
    }
    // Announced as free again at once: checked again at once, and still refused.
    fake.always(&key(6), Reply::status_with(429, &[("retry-after", "0")]));
    let file = tmp.path().join("keys.csv");
    let lines: Vec<String> = (0..7).map(|n| format!("key {n},{}", key(n))).chain([key(0)]).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let file = file.display().to_string();

    let output =
        cli(args(dir, &["import", "--provider", "FAKE", "--file", &file, "--weight", "4", "--group", "g1"])).await;
    assert!(output.status.success(), "the import succeeds: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        stdout_json(&output),
        json!({ "found": 8, "added": 4, "duplicates": 1, "invalid": 2, "rate_limited": 1, "unreachable": 0 }),
        "one JSON object with the buckets"
    );
    let listed = list(dir).await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 4, "the four valid keys are in the pool: {listed:?}");
    let first = listed[0].as_object().unwrap();
    let fields: Vec<&str> = first.keys().map(String::as_str).collect();
    for field in ["id", "label", "preview", "weight", "group", "enabled", "state"] {
        assert!(fields.contains(&field), "a listed key has {field}: {first:?}");
    }
    assert_eq!(
        (&first["weight"], &first["group"], &first["state"]),
        (&json!(4), &json!("g1"), &json!("active")),
        "{first:?}"
    );
    assert_eq!(first["preview"], keypool::preview(&key(0)), "masked");
    let everything = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!((0..7).all(|n| !everything.contains(&key(n))), "no key is printed or logged: {everything}");

    let again = cli(args(dir, &["import", "--provider", "fake", "--file", &file, "--no-validate"])).await;
    let again = stdout_json(&again);
    assert_eq!(
        (&again["added"], &again["duplicates"]),
        (&json!(3), &json!(5)),
        "the pool's keys are duplicates now: {again}"
    );
    assert_eq!(list(dir).await.as_array().unwrap().len(), 7, "--no-validate adds the rejected ones too");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_provider_file_or_text_exits_2_and_changes_nothing() {
    let fake = FakeProvider::start().await;
    let tmp = data_dir(&fake).await;
    let dir = &tmp.path().join("data");
    let good = tmp.path().join("good.txt");
    std::fs::write(&good, key(1)).unwrap();
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "# nothing here\n\n").unwrap();
    let missing = tmp.path().join("missing.txt");
    let before = list(dir).await;
    let cases = [
        (
            "an unknown provider",
            vec!["--provider", "nobody", "--file", good.to_str().unwrap()],
            "no provider is called \"nobody\"",
        ),
        ("an unreadable file", vec!["--provider", "fake", "--file", missing.to_str().unwrap()], "missing.txt"),
        ("a file with no key", vec!["--provider", "fake", "--file", empty.to_str().unwrap()], "no API key of fake"),
    ];
    for (what, rest, said) in cases {
        let mut all = vec!["import"];
        all.extend(rest);
        let output = cli(args(dir, &all)).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{what}: exit status 2 ({stderr})");
        assert!(stderr.contains(said), "{what}: a clear message: {stderr}");
        assert!(output.stdout.is_empty(), "{what}: nothing on stdout");
        assert_eq!(list(dir).await, before, "{what}: the pool is unchanged");
    }
}

/// OpenRouter from the config file: chats go to its `/api/v1`, and `keys test` shows what each
/// key may still spend, as OpenRouter's key answer says.
#[tokio::test(flavor = "multi_thread")]
async fn an_openrouter_pool_answers_and_its_keys_show_their_credit() {
    use keypool_fake_provider::openrouter::Credit;
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let config = config(&fake.url(), &["a"])
        .replace("kind = \"openai\"", "kind = \"openrouter\"")
        .replace(&format!("{}/v1", fake.url()), &format!("{}/api/v1", fake.url()));
    let server = Server::start(tmp.path(), &config, &[]);
    server.healthy().await;
    let (status, body) = server.ask("hello").await;
    assert_eq!(status, 200, "OpenRouter answers through the server: {body}");
    assert!(fake.seen().iter().any(|s| s.path == "/api/v1/chat/completions"), "under OpenRouter's base URL");
    server.signal("TERM");
    assert_eq!(server.exited().await, Some(0), "the server stops cleanly");

    fake.credit(&crate::support::key("a"), Credit { limit: Some(20.0), usage: 5.0 });
    let dir = tmp.path().join("data");
    let output = cli(args(&dir, &["test", "--provider", "fake"])).await;
    assert!(output.status.success(), "keys test succeeds: {}", String::from_utf8_lossy(&output.stderr));
    let tested = stdout_json(&output);
    assert_eq!(tested[0]["ok"], true, "the key is fine: {tested}");
    assert_eq!(tested[0]["credit"], json!({ "limit": 20.0, "remaining": 15.0, "usage": 5.0 }), "its credit: {tested}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains(&crate::support::key("a")), "never the key itself: {text}");
}

/// A project's `.env` imported into an OpenAI-compatible provider: `--list` shows what would be
/// sent, masked, and sends nothing; the import sends the provider only its keys' shape, never
/// the Anthropic or Gemini key or the GitHub token.
#[tokio::test(flavor = "multi_thread")]
async fn import_takes_only_the_providers_shape_and_lists_before_sending() {
    let fake = FakeProvider::start().await;
    let tmp = data_dir(&fake).await;
    let dir = &tmp.path().join("data");
    let (anthropic, gemini, github) = (
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AAAA",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "ghp_0123456789abcdefABCDEF0123456789abcd",
    );
    let file = tmp.path().join(".env");
    let env = format!(
        "OPENAI_API_KEY={}\nANTHROPIC_API_KEY={anthropic}\nGEMINI_API_KEY={gemini}\nGITHUB_TOKEN={github}\nOPENAI_OLD={}\n",
        key(1),
        key(2)
    );
    std::fs::write(&file, env).unwrap();
    let file = file.display().to_string();

    let listed = cli(args(dir, &["import", "--provider", "fake", "--file", &file, "--list"])).await;
    assert!(listed.status.success(), "--list succeeds: {}", String::from_utf8_lossy(&listed.stderr));
    assert_eq!(
        stdout_json(&listed),
        json!({
            "found": 2,
            "new": [{ "index": 0, "preview": keypool::preview(&key(1)) }, { "index": 1, "preview": keypool::preview(&key(2)) }],
            "duplicates": 0,
            "unrecognised_lines": [2, 3, 4],
        }),
        "only the OpenAI-shaped keys, masked; the other lines by number"
    );
    assert!(fake.seen().is_empty(), "--list sends nothing");
    assert!(list(dir).await.as_array().unwrap().is_empty(), "and saves nothing");

    let output = cli(args(dir, &["import", "--provider", "fake", "--file", &file])).await;
    assert!(output.status.success(), "the import succeeds: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output)["added"], 2, "the two OpenAI keys");
    let mut asked: Vec<String> = fake.seen().into_iter().map(|s| s.key).collect();
    asked.sort();
    asked.dedup();
    assert_eq!(asked, [key(1), key(2)], "the provider was asked about its kind's keys only");
}

/// Keys of no known shape: refused unless `--one-per-line` is given, and then any listed token
/// can be left out by its index.
#[tokio::test(flavor = "multi_thread")]
async fn tokens_of_another_shape_need_one_per_line_and_can_be_left_out() {
    let fake = FakeProvider::start().await;
    let tmp = data_dir(&fake).await;
    let dir = &tmp.path().join("data");
    let (groq, github) = ("gsk_0123456789abcdefghijklmnop", "ghp_0123456789abcdefABCDEF0123456789abcd");
    let file = tmp.path().join("keys.txt");
    std::fs::write(&file, format!("GROQ_API_KEY={groq}\nGITHUB_TOKEN={github}\n")).unwrap();
    let file = file.display().to_string();

    let refused = cli(args(dir, &["import", "--provider", "fake", "--file", &file])).await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "no key of the provider's shape: a usage problem ({stderr})");
    assert!(
        stderr.contains("sk-…") && stderr.contains("--one-per-line"),
        "it says which shape and what to do: {stderr}"
    );
    assert!(fake.seen().is_empty(), "nothing was sent");

    let listed = cli(args(dir, &["import", "--provider", "fake", "--file", &file, "--one-per-line", "--list"])).await;
    let listed = stdout_json(&listed);
    assert_eq!(listed["new"][1]["preview"], keypool::preview(github), "every line's token is listed: {listed}");
    let index = listed["new"][1]["index"].to_string();
    let output =
        cli(args(dir, &["import", "--provider", "fake", "--file", &file, "--one-per-line", "--leave-out", &index]))
            .await;
    assert!(output.status.success(), "the import succeeds: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output)["added"], 1, "the Groq key alone");
    assert!(fake.seen().iter().all(|s| s.key != github), "the token left out never reached the provider");
}

/// The two defects of a first-time user's import, through the command line: OpenRouter keys
/// that its `GET key` refuses are not called valid (its model list answers any key), and a
/// `.env` read one per line gives each variable's value, never its longer name.
#[tokio::test(flavor = "multi_thread")]
async fn openrouter_refusals_count_and_a_variables_name_is_never_the_key() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let config = config(&fake.url(), &[])
        .replace("kind = \"openai\"", "kind = \"openrouter\"")
        .replace(&format!("{}/v1", fake.url()), &format!("{}/api/v1", fake.url()));
    let server = Server::start(tmp.path(), &config, &[]);
    server.healthy().await;
    server.signal("TERM");
    assert_eq!(server.exited().await, Some(0), "the first run stops cleanly");
    let dir = &tmp.path().join("data");
    let router = |n: usize| format!("sk-or-v1-{n:064}");
    for n in [1, 2] {
        fake.always(&router(n), Reply::InvalidKey);
    }
    let file = tmp.path().join("router.txt");
    std::fs::write(&file, (0..3).map(router).collect::<Vec<_>>().join("\n")).unwrap();
    let output = cli(args(dir, &["import", "--provider", "fake", "--file", &file.display().to_string()])).await;
    assert!(output.status.success(), "the import succeeds: {}", String::from_utf8_lossy(&output.stderr));
    let imported = stdout_json(&output);
    assert_eq!(
        (&imported["invalid"], &imported["added"]),
        (&json!(2), &json!(1)),
        "two refused, one added: {imported}"
    );
    assert!(fake.seen().iter().all(|s| s.path == "/api/v1/key"), "asked at GET key: {:?}", fake.seen());

    let value = "Qz7Wx5Er3Ty1Ui9Op8As";
    let env = tmp.path().join("keys.env");
    std::fs::write(&env, format!("export ANTHROPIC_API_KEY_NUMBER_2=\"{value}\"\n")).unwrap();
    let env = env.display().to_string();
    let listed = cli(args(dir, &["import", "--provider", "fake", "--file", &env, "--one-per-line", "--list"])).await;
    let listed = stdout_json(&listed);
    assert_eq!(listed["new"].as_array().map(Vec::len), Some(1), "one candidate: {listed}");
    assert_eq!(listed["new"][0]["preview"], keypool::preview(value), "the value, not the name: {listed}");
}

/// A DeepSeek provider of the config file: its keys' balances are read at the start, shown in
/// `/metrics` and by `keys list`; the key with nothing left rests as out of credit.
#[tokio::test(flavor = "multi_thread")]
async fn deepseek_keys_have_their_balances_read_at_the_start_and_listed() {
    use keypool_fake_provider::vendors::VendorBalance;
    let fake = FakeProvider::start().await;
    let (empty, full) = ("sk-00000000000000000000000000000000", "sk-11111111111111111111111111111111");
    fake.balance(empty, VendorBalance::of(0.0, "USD"));
    fake.balance(full, VendorBalance::of(42.5, "CNY"));
    let config = format!(
        "[[providers]]\nname = \"deepseek\"\nkind = \"deepseek\"\nbase_url = \"{}\"\nmodels = [\"deepseek-chat\"]\n\
         [[providers.keys]]\nkey = \"{empty}\"\nlabel = \"empty\"\n[[providers.keys]]\nkey = \"{full}\"\nlabel = \"full\"\n",
        fake.url()
    );
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &config, &[]);
    server.healthy().await;
    server.logged("a key's balance is used up").await;
    let response = crate::support::client()
        .get(server.url("/metrics"))
        .bearer_auth(server.token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let line = |needle: &str| response.lines().find(|l| l.starts_with("keypool_key_balance{") && l.contains(needle));
    assert!(line("currency=\"CNY\"").is_some_and(|l| l.ends_with(" 42.5")), "{response}");
    assert!(line("currency=\"USD\"").is_some_and(|l| l.ends_with(" 0")), "{response}");
    assert!(response.contains("keypool_keys{provider=\"deepseek\",state=\"exhausted\"} 1"), "{response}");
    assert!(!server.log().contains(full) && !server.log().contains(empty), "no key is logged");
    server.signal("TERM");
    assert_eq!(server.exited().await, Some(0));

    let output = cli(args(&tmp.path().join("data"), &["list", "--provider", "deepseek"])).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed = stdout_json(&output);
    let of = |label: &str| listed.as_array().unwrap().iter().find(|k| k["label"] == label).unwrap().clone();
    assert_eq!((&of("full")["balance"]["amount"], &of("full")["balance"]["currency"]), (&json!(42.5), &json!("CNY")));
    assert_eq!(of("empty")["balance"]["usable"], false, "{listed}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(full), "masked");
}
