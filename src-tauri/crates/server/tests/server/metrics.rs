//! `GET /metrics` and `/readyz`: who may read the metrics, that `promtool` finds them well
//! formed, and that a real Prometheus (Debian's `prometheus`, started here on a free port with a
//! data folder of its own) scrapes them and answers queries over the key states.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::members::member_entry;
use crate::support::*;

/// A `prometheus` of the test's own; killed when dropped.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes `target` (`host:port`) every second with the bearer token in `token_file`.
    fn start(target: &str, token_file: &std::path::Path) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: keypool\n    scrape_interval: 1s\n    \
                 authorization:\n      credentials_file: {}\n    static_configs:\n      - targets: [\"{target}\"]\n",
                token_file.display()
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus runs (Debian's `prometheus` package; .ci/ensure-deps.sh installs it)");
        Prometheus { child, port, _dir: dir }
    }

    /// The result of the instant query `query`, once it has one (up to 30 s).
    async fn query(&self, query: &str) -> Vec<serde_json::Value> {
        let mut url = reqwest::Url::parse(&format!("http://127.0.0.1:{}/api/v1/query", self.port)).unwrap();
        url.query_pairs_mut().append_pair("query", query);
        for _ in 0..300 {
            if let Ok(response) = client().get(url.clone()).send().await {
                if let Ok(answer) = response.json::<serde_json::Value>().await {
                    if let Some(result) = answer["data"]["result"].as_array().filter(|r| !r.is_empty()) {
                        return result.clone();
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("Prometheus never answered {query:?} with a result");
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn get(url: &str, token: Option<&str>) -> (u16, String) {
    let request = client().get(url);
    let request = match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_are_the_owners_or_the_scrapers_well_formed_and_scraped_by_prometheus() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path()).unwrap();
    let (alice, alice_token) = member_entry(tmp.path(), "alice", "budget_tokens = 1000\nbudget_period = \"day\"");
    let scraper = tmp.path().join("metrics.token");
    std::fs::write(&scraper, "kp-metrics-0123456789abcdef0123456789abcdef\n").unwrap();
    #[cfg(unix)]
    std::fs::set_permissions(&scraper, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let metrics_port = free_port();
    let metrics_listen = format!("127.0.0.1:{metrics_port}");
    let server = Server::start(
        tmp.path(),
        &format!("{}{alice}", config(&fake.url(), &["x", "y"])),
        &["--metrics-token-file", scraper.to_str().unwrap(), "--metrics-listen", &metrics_listen],
    );
    server.healthy().await;
    let (status, body) = get(&server.url("/readyz"), None).await;
    assert_eq!((status, body.as_str()), (200, "{\"status\":\"ready\"}"), "ready without a team, no token needed");

    fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "120")])]);
    for turn in 0..3 {
        assert_eq!(server.ask(&format!("owner-{turn}")).await.0, 200, "the owner's requests (one fails over)");
    }
    assert_eq!(server.ask_as(&alice_token, "alice").await.0, 200, "alice's");

    assert_eq!(get(&server.url("/metrics"), None).await.0, 401, "the metrics need a token on --listen");
    let (status, body) = get(&server.url("/metrics"), Some(&alice_token)).await;
    assert_eq!(status, 403, "a member's token may not read them: {body}");
    let (status, text) = get(&server.url("/metrics"), Some(&server.token())).await;
    assert_eq!(status, 200, "the owner's token may");
    let scraper_token = std::fs::read_to_string(&scraper).unwrap();
    assert_eq!(get(&server.url("/metrics"), Some(scraper_token.trim())).await.0, 200, "and the scraper's");
    let (status, open) = get(&format!("http://{metrics_listen}/metrics"), None).await;
    assert_eq!(status, 200, "--metrics-listen serves them without a token");
    assert!(open.contains("keypool_key_state"), "the same metrics there");

    let line = |needle: &str| text.lines().any(|l| l.contains(needle));
    assert!(line("keypool_key_state{provider=\"fake\",key=\"") && line("label=\"y\",state=\"active\"} 1"), "{text}");
    assert!(line("label=\"x\",state=\"cooling\"} 1"), "the key refused with a 429 rests: {text}");
    assert!(line("keypool_keys{provider=\"fake\",state=\"cooling\"} 1"), "{text}");
    assert!(line("keypool_requests_total{dialect=\"openai\",status=\"200\",member=\"alice\"} 1"), "{text}");
    assert!(line("keypool_requests_total{dialect=\"openai\",status=\"200\",member=\"\"} 3"), "{text}");
    assert!(line("keypool_attempts_total{provider=\"fake\",outcome=\"rate_limited\"} 1"), "{text}");
    assert!(line("keypool_failovers_total{provider=\"fake\"} 1"), "{text}");
    assert!(
        line("keypool_tokens_total{provider=\"fake\",model=\"fake-model\",member=\"alice\",kind=\"output\"} 3"),
        "{text}"
    );
    assert!(line("keypool_member_budget_used_tokens{member=\"alice\"} 14"), "alice used 14 of her 1000: {text}");
    assert!(line("keypool_member_budget_remaining_tokens{member=\"alice\"} 986"), "{text}");
    assert!(line("keypool_added_seconds_count 4"), "every request that went upstream: {text}");
    for secret in [&key("x")[..14], &key("y")[..14], &alice_token[..20], &server.token()[..20]] {
        assert!(!text.contains(secret), "no key or token in the metrics");
    }

    let check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    use std::io::Write;
    check.stdin.as_ref().unwrap().write_all(text.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics passes:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    let prometheus = Prometheus::start(&format!("127.0.0.1:{}", server.port), &scraper);
    let states = prometheus.query("keypool_key_state{provider=\"fake\"}").await;
    let labels: Vec<(&str, &str)> = states
        .iter()
        .map(|s| (s["metric"]["label"].as_str().unwrap(), s["metric"]["state"].as_str().unwrap()))
        .collect();
    assert!(
        labels.contains(&("y", "active")) && labels.contains(&("x", "cooling")),
        "Prometheus holds the key states: {labels:?}"
    );
    let alice = prometheus.query("sum(keypool_requests_total{member=\"alice\"})").await;
    assert_eq!(alice[0]["value"][1], "1", "and alice's requests");
}
