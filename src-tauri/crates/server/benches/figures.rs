//! keypool-server's members and metrics, measured on loopback against the fake provider (and a
//! redis-server of the run's own for the team):
//! - the time a member's check adds to a request, team off and on: requests one at a time
//!   through the same server with the owner's token (no check) and with a member's token whose
//!   every limit is set (budget, both rates, in flight, a model glob; set high, so none refuses),
//!   the median of each and their difference;
//! - what `GET /metrics` costs with 10 000 keys in the pool: its time (median of the scrapes)
//!   and its size.
//!
//! Run with `cargo bench -p keypool-server --bench figures` (a release build, `harness = false`).

#[allow(dead_code, unused_imports)]
#[path = "../tests/server/support.rs"]
mod support;

use std::time::{Duration, Instant};

use keypool_team::test_redis::TestRedis;
use keypool_team::TeamSecret;
use support::*;

/// Requests per token and setting.
const REQUESTS: usize = 2_000;
/// Scrapes of `/metrics`.
const SCRAPES: usize = 20;
/// Keys in the pool for the metrics' figure.
const KEYS: usize = 10_000;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Median and p99 in milliseconds.
fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

/// The member's config entry: every limit set, none reached in the run.
fn member(dir: &std::path::Path) -> (String, String) {
    let token = "kp-member-bench-0123456789abcdef0123456789abcdef".to_owned();
    let file = dir.join("bench.token");
    std::fs::write(&file, &token).unwrap();
    let entry = format!(
        "[[members]]\nname = \"bench\"\ntoken_file = \"{}\"\nrequests_per_minute = 1000000\n\
         tokens_per_minute = 1000000000\nmax_in_flight = 64\nbudget_tokens = 1000000000000\n\
         budget_period = \"month\"\nmodels = [\"fake-*\"]\n",
        file.display()
    );
    (entry, token)
}

/// One request at a time with `token`, interleaved with the other token's so the machine's
/// drift hits both alike; each request's time in ms.
async fn timed(server: &Server, tokens: [&str; 2]) -> [Vec<f64>; 2] {
    let mut samples = [Vec::with_capacity(REQUESTS), Vec::with_capacity(REQUESTS)];
    for i in 0..REQUESTS * 2 {
        let which = i % 2;
        let started = Instant::now();
        let (status, _, _) = server.ask_as(tokens[which], &format!("bench-{i}")).await;
        let took = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(status, 200, "every request is answered");
        if i >= 200 {
            samples[which].push(took);
        }
    }
    samples
}

async fn member_check(team: bool) {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    let (entry, token) = member(dir.path());
    let text = format!("{}{entry}", config(&fake.url(), &["x", "y", "z"]));
    let redis = team.then(TestRedis::start);
    let secret = dir.path().join("team.secret");
    std::fs::write(&secret, TeamSecret::generate().to_hex()).unwrap();
    let url = redis.as_ref().map(TestRedis::url).unwrap_or_default();
    let args: Vec<&str> = match team {
        true => vec!["--redis", &url, "--team", "bench", "--team-secret-file", secret.to_str().unwrap()],
        false => vec![],
    };
    let server = Server::start(dir.path(), &text, &args);
    for _ in 0..1000 {
        if server.healthy().await["team"] == if team { "connected" } else { "off" } {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let owner = server.token();
    let [by_owner, by_member] = timed(&server, [&owner, &token]).await;
    let (owner_median, owner_p99) = summary(by_owner);
    let (member_median, member_p99) = summary(by_member);
    println!(
        "member check, team {}: owner median {owner_median:.3} ms (p99 {owner_p99:.3}), member median \
         {member_median:.3} ms (p99 {member_p99:.3}): the check adds {:.3} ms at the median (n = {} each)",
        if team { "on " } else { "off" },
        member_median - owner_median,
        REQUESTS - 100
    );
    let metrics = client().get(server.url("/metrics")).bearer_auth(&owner).send().await.unwrap();
    let text = metrics.text().await.unwrap();
    for line in text.lines().filter(|l| l.starts_with("keypool_team_member_check")) {
        println!("  {line}");
    }
}

async fn metrics_cost() {
    let fake = FakeProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &config(&fake.url(), &[]), &[]);
    server.healthy().await;
    server.signal("TERM");
    server.exited().await;
    let file = dir.path().join("keys.txt");
    let keys: Vec<String> = (0..KEYS).map(|i| format!("sk-bench-{i:06}-QwErTyUiOpLkJhGzXsVbNm")).collect();
    std::fs::write(&file, keys.join("\n")).unwrap();
    let imported = std::process::Command::new(env!("CARGO_BIN_EXE_keypool-server"))
        .args(["keys", "import", "--data-dir", dir.path().join("data").to_str().unwrap(), "--provider", "fake"])
        .args(["--file", file.to_str().unwrap(), "--no-validate"])
        .output()
        .unwrap();
    assert!(imported.status.success(), "the keys are imported: {}", String::from_utf8_lossy(&imported.stderr));
    let server = Server::start(dir.path(), &config(&fake.url(), &[]), &[]);
    server.healthy().await;
    assert_eq!(server.ask("load the pool").await.0, 200, "the pool answers");
    let client = client();
    let owner = server.token();
    let mut samples = Vec::new();
    let mut size = 0;
    for i in 0..SCRAPES + 2 {
        let started = Instant::now();
        let response = client.get(server.url("/metrics")).bearer_auth(&owner).send().await.unwrap();
        let text = response.text().await.unwrap();
        let took = started.elapsed().as_secs_f64() * 1e3;
        if i >= 2 {
            samples.push(took);
        }
        size = text.len();
        assert_eq!(text.lines().filter(|l| l.starts_with("keypool_key_state{")).count(), KEYS, "every key's state");
    }
    let (median, p99) = summary(samples);
    println!(
        "/metrics with {KEYS} keys: median {median:.1} ms, slowest {p99:.1} ms, {:.2} MB (n = {SCRAPES})",
        size as f64 / 1e6
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        member_check(false).await;
        member_check(true).await;
        metrics_cost().await;
    });
}
