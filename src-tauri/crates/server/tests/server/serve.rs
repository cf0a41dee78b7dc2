//! One server: it serves through the pool, guards its door, reloads on SIGHUP, refuses a bad
//! config before touching anything, and stops gracefully.

use crate::support::*;

#[tokio::test]
async fn serves_chat_through_the_pool_and_answers_healthz_without_the_token() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &config(&fake.url(), &["a"]), &[]);
    let health = server.healthy().await;
    assert_eq!(health, json!({ "status": "ok", "team": "off" }), "healthy, no team, and no token needed");
    let (status, body) = server.ask("hello").await;
    assert_eq!(status, 200, "the config's key answers through the pool: {body}");
    assert_eq!(fake.keys_used(), vec![key("a")], "upstream saw the key the config declared");
    let client = client();
    let no_token = client.get(server.url("/v1/models")).send().await.unwrap();
    assert_eq!(no_token.status().as_u16(), 401, "the API itself needs the token");
    let rebound = client.get(server.url("/healthz")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(rebound.status().as_u16(), 421, "a Host that is not this server's gets 421, even on /healthz");
    server.logged("path=/v1/chat/completions status=200").await;
    let log = server.log();
    assert!(!log.contains(&key("a")[..12]), "no run of the key in the log:\n{log}");
    assert!(!log.contains(&server.token()[9..21]), "nor of the token:\n{log}");
}

/// Every file under `dir` (its folders too, e.g. the attachments) and its bytes.
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if path.is_dir() {
            files.push((format!("{}/", path.display()), Vec::new()));
            files.extend(snapshot(&path));
        } else {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

#[tokio::test]
async fn a_bad_config_stops_the_start_naming_the_line_and_changes_nothing() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let first = Server::start(tmp.path(), &config(&fake.url(), &["a"]), &[]);
    first.healthy().await;
    first.signal("TERM");
    assert_eq!(first.exited().await, Some(0), "the first run stops cleanly");
    let before = snapshot(&first.dir);
    let cases = [
        // Appended after the key's label, on line 9: part of the key's table.
        ("weight = 0", 9, "weight"),
        ("bogus = 1", 9, "unknown field `bogus`"),
        ("kind = \"mystery\"", 3, "unknown variant `mystery`"),
        // Before the tables, on line 1.
        ("drain_seconds = \"ten\"", 1, "invalid type"),
        ("drain_seconds = 100000", 1, "drain_seconds is at most 86400"),
        ("first_event_seconds = 0", 1, "first_event_seconds is 1 to 300"),
        ("trusted_proxies = [\"10.0.0.0/8\",\n  \"10.0.0.0/33\"]", 2, "trusted_proxies holds \"10.0.0.0/33\""),
        ("forwarded_header = \"x-real-ip\"", 1, "forwarded_header is \"x-forwarded-for\" or \"forwarded\""),
        // A table of its own after the key's, from line 9.
        ("[otel]\nendpoint = \"ftp://collector\"", 10, "[otel] endpoint is an http:// or https:// address"),
        (
            "[otel]\nendpoint = \"http://collector:4318\"\nheaders = { authorization = \"$KP_UNSET_FOR_THE_TEST\" }",
            11,
            "the environment variable KP_UNSET_FOR_THE_TEST is not set",
        ),
    ];
    for (change, line, what) in cases {
        let mut text = config(&fake.url(), &["a"]);
        if change.starts_with("kind") {
            text = text.replace("kind = \"openai\"", change);
        } else if ["drain_seconds", "first_event_seconds", "trusted_proxies", "forwarded_header"]
            .iter()
            .any(|top| change.starts_with(top))
        {
            text = format!("{change}\n{text}");
        } else {
            text.push_str(change);
            text.push('\n');
        }
        let bad = Server::start(tmp.path(), &text, &[]);
        assert_eq!(bad.exited().await, Some(1), "{change}: the start stops");
        let log = bad.log();
        assert!(log.contains(&format!("line {line}: ")), "{change}: the message names line {line}:\n{log}");
        assert!(log.contains(what), "{change}: and says what is wrong:\n{log}");
        assert_eq!(snapshot(&first.dir), before, "{change}: nothing in the data dir changed");
    }
    let provider =
        |name: &str| format!("[[providers]]\nname = \"{name}\"\nkind = \"openai\"\nbase_url = \"{}/v1\"\n", fake.url());
    // Lines 1 to 4, then the second provider's name on line 6.
    let twice = format!("{}{}", provider("fake"), provider("FAKE"));
    let bad = Server::start(tmp.path(), &twice, &[]);
    assert_eq!(bad.exited().await, Some(1), "two providers of one name stop the start");
    assert!(bad.log().contains("line 6: a second provider named \"FAKE\""), "named, with its line:\n{}", bad.log());
}

#[tokio::test]
async fn sighup_reapplies_the_config_removing_the_keys_it_no_longer_lists() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &config(&fake.url(), &["a", "b"]), &[]);
    server.healthy().await;
    for i in 0..4 {
        assert_eq!(server.ask(&format!("before-{i}")).await.0, 200, "served");
    }
    let used: std::collections::HashSet<String> = fake.keys_used().into_iter().collect();
    assert_eq!(used.len(), 2, "both keys of the file are in rotation");
    server.rewrite(&format!("{}weight = 0\n", config(&fake.url(), &["a"])));
    server.signal("HUP");
    server.logged("SIGHUP: the config file was not applied").await;
    assert_eq!(server.ask("after-bad").await.0, 200, "a bad file on SIGHUP changes nothing; the server serves on");
    server.rewrite(&config(&fake.url(), &["a"]));
    server.signal("HUP");
    server.logged("SIGHUP: config applied").await;
    let before = fake.keys_used().len();
    for i in 0..4 {
        assert_eq!(server.ask(&format!("after-{i}")).await.0, 200, "served");
    }
    let after: Vec<String> = fake.keys_used().split_off(before);
    assert!(after.iter().all(|k| *k == key("a")), "the key the file dropped is gone from rotation: {after:?}");
}

#[tokio::test]
async fn listening_beyond_loopback_is_warned_about_naming_the_address() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let server =
        Server::start_listening(tmp.path(), &config(&fake.url(), &["a"]), &format!("0.0.0.0:{port}"), port, &[]);
    server.healthy().await;
    let log = server.log();
    assert!(
        log.contains("WARN") && log.contains(&format!("listening beyond loopback on 0.0.0.0:{port}")),
        "warned:\n{log}"
    );
}

/// Slowloris: 1 100 sockets that each send half a request line, against a server allowed 1 024
/// open files. Without a bound on connections it ran out of file descriptors and answered
/// nobody; now the half-sent ones are closed to make room, and a whole request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_on_1100_sockets_delay_no_request_under_1024_open_files() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with_fd_limit(dir.path(), &config(&fake.url(), &["a"]), 1024);
    server.healthy().await;
    let mut sockets = Vec::new();
    for _ in 0..1100 {
        let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut socket, b"POST /v1/chat/compl").await.unwrap();
        sockets.push(socket);
    }
    let answered = tokio::time::timeout(std::time::Duration::from_secs(30), server.ask("still served")).await;
    let (status, body) = answered.expect("a whole request is answered while 1 100 sockets hang");
    assert_eq!(status, 200, "and answered well: {body}");
    assert!(server.running(), "the server still runs:\n{}", server.log());
    drop(sockets);
}

/// A token file whose token is shorter than 32 characters stops the start: a network-facing
/// token must not be guessable. The token itself is never logged.
#[tokio::test]
async fn a_token_shorter_than_32_characters_stops_the_start() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "hunter2-guessable\n").unwrap();
    let args = ["--token-file", token.to_str().unwrap()];
    let server = Server::start(&dir.path().join("server"), &config(&fake.url(), &["a"]), &args);
    assert_eq!(server.exited().await, Some(1), "the server does not start:\n{}", server.log());
    assert!(server.log().contains("at least 32"), "and says why:\n{}", server.log());
    assert!(!server.log().contains("hunter2"), "without the token:\n{}", server.log());
}

/// The team's Redis URL, password included, read from a file stays out of the process list and
/// the log; a token file others can read is warned about.
#[tokio::test]
async fn a_redis_password_from_a_file_stays_out_of_the_process_list_and_open_files_are_warned_about() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("redis.url");
    // Nobody listens there: the team is disconnected, and the server serves all the same.
    std::fs::write(&url_file, "redis://:s3cret-redis-pw@127.0.0.1:1\n").unwrap();
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, keypool_team::TeamSecret::generate().to_hex()).unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "kp-local-0123456789abcdef0123456789abcdef0123456789\n").unwrap();
    #[cfg(unix)]
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let args = [
        "--redis-url-file",
        url_file.to_str().unwrap(),
        "--team",
        "blue",
        "--team-secret-file",
        secret.to_str().unwrap(),
        "--token-file",
        token.to_str().unwrap(),
    ];
    let server = Server::start(&dir.path().join("server"), &config(&fake.url(), &["a"]), &args);
    let health = server.healthy().await;
    assert_ne!(health["team"], "off", "the team is joined with the file's URL: {health}");
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.pid())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("s3cret"), "no password in the process list");
    assert!(!server.log().contains("s3cret"), "nor in the log:\n{}", server.log());
    assert!(server.log().contains("the token file can be read by others"), "warned:\n{}", server.log());
}

/// Plain http to a public IP address is refused, as the app refuses it: the local-only resolver
/// never sees an address written as one, so the keys would go out in cleartext.
#[tokio::test]
async fn a_config_with_plain_http_to_a_public_address_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[[providers]]\nname = \"far\"\nkind = \"openai\"\nbase_url = \"http://203.0.113.9/v1\"\n\
                [[providers.keys]]\nkey = \"sk-far-QwErTyUiOpLkJhGzXsVb-far\"\n";
    let server = Server::start(dir.path(), text, &[]);
    assert_eq!(server.exited().await, Some(1), "the start stops:\n{}", server.log());
    assert!(server.log().contains("\"far\""), "naming the provider:\n{}", server.log());
    let private = "[[providers]]\nname = \"near\"\nkind = \"openai\"\nbase_url = \"http://10.1.2.3:8000/v1\"\n";
    let server = Server::start(&dir.path().join("near"), private, &[]);
    server.healthy().await;
    assert!(server.running(), "a private address is the operator's own network: served");
}

/// Provider names match as the app matches them (Unicode case), and an apply that fails removes
/// what it added: no key is left that a later file could never remove.
#[tokio::test]
async fn names_match_in_unicode_case_and_a_failed_apply_leaves_nothing_it_added() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", fake.url());
    let named = |name: &str, base: &str, label: &str| {
        format!("[[providers]]\nname = \"{name}\"\nkind = \"openai\"\nbase_url = \"{base}\"\n[[providers.keys]]\nkey = \"{}\"\n", key(label))
    };
    let run = |text: String| {
        let server = Server::start(dir.path(), &text, &[]);
        async move {
            server.healthy().await;
            server.signal("TERM");
            assert_eq!(server.exited().await, Some(0), "it ran:\n{}", server.log());
        }
    };
    run(named("ärzte", &base, "a")).await;
    // The same provider in other (Unicode) case: matched, not added a second time.
    run(named("ÄRZTE", &base, "a")).await;
    let bad = format!("{}{}", named("zeta", &base, "z"), named("far", "http://203.0.113.9/v1", "f"));
    let failed = Server::start(dir.path(), &bad, &[]);
    assert_eq!(failed.exited().await, Some(1), "the apply fails:\n{}", failed.log());
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_keypool-server"))
        .args(["keys", "list", "--data-dir", failed.dir.to_str().unwrap(), "--provider", "zeta", "--json"])
        .output()
        .unwrap();
    assert!(!listed.status.success(), "the provider the failed apply added is gone, with its key");
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_keypool-server"))
        .args(["keys", "list", "--data-dir", failed.dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(keys.as_array().map(Vec::len), Some(1), "only the first run's key is left: {keys}");
}
