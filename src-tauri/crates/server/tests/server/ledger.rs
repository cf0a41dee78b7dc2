//! The team's ledger in a Postgres of the test's own (`initdb` into a temporary directory, its
//! own port, its socket in that directory; as the user `nobody` when the tests run as root, which
//! Postgres refuses to run as): replicas ship every attempt once, through an outage of Postgres
//! and a restart of a replica, and `usage` and `members list` sum the team's.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use keypool_api::service::LedgerRow;
use keypool_server::ledger::Postgres;

use crate::support::*;

/// A running `postgres` of one test, stopped (fast shutdown) when dropped.
struct TestPostgres {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

/// Where `initdb` and `postgres` are: on the PATH, or Debian's `/usr/lib/postgresql/N/bin`
/// (`.ci/ensure-deps.sh` installs the `postgresql` package).
fn postgres_bin() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file());
    if let Some(dir) = on_path {
        // Its own directory, where `pg_isready` is too (the PATH may have links to some only).
        let postgres = std::fs::canonicalize(dir.join("postgres")).expect("postgres is readable");
        return postgres.parent().expect("in a directory").to_owned();
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).filter(|bin| bin.join("initdb").is_file()).collect())
        .unwrap_or_default();
    versions.sort();
    versions.pop().expect("Postgres is installed (.ci/ensure-deps.sh installs the postgresql package)")
}

/// Whether the tests run as root (the owner of `/proc/self` is the process's user).
fn root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0
}

/// `nobody`, whom Postgres runs as when the tests run as root.
const NOBODY: u32 = 65534;

/// `command` as the user Postgres runs as: this one, or `nobody` for root.
fn as_postgres_user(command: &mut Command) -> &mut Command {
    if root() {
        std::os::unix::process::CommandExt::uid(command, NOBODY);
        std::os::unix::process::CommandExt::gid(command, NOBODY);
    }
    command
}

impl TestPostgres {
    fn start() -> TestPostgres {
        let dir = tempfile::tempdir().expect("a temporary directory");
        if root() {
            std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("the directory is nobody's");
        }
        let bin = postgres_bin();
        let made = as_postgres_user(Command::new(bin.join("initdb")).args(["-D"]).arg(dir.path().join("data")))
            .args(["-U", "keypool", "-A", "trust", "-E", "UTF8", "--no-sync"])
            .stdout(Stdio::null())
            .output()
            .expect("initdb runs");
        assert!(made.status.success(), "initdb: {}", String::from_utf8_lossy(&made.stderr));
        let mut postgres = TestPostgres { child: None, port: free_port(), dir, bin };
        postgres.launch();
        postgres
    }

    fn launch(&mut self) {
        let child =
            as_postgres_user(Command::new(self.bin.join("postgres")).arg("-D").arg(self.dir.path().join("data")))
                .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .arg("-k")
                .arg(self.dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("postgres starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        let ready = |port: u16| {
            Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
                .status()
                .is_ok_and(|status| status.success())
        };
        // Accepting connections, not only listening (it refuses them while it starts up).
        while !ready(self.port) {
            assert!(Instant::now() < deadline, "postgres accepts connections on port {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `postgres://keypool:$KP_TEST_LEDGER_PASSWORD@…`: the config's form (the password is
    /// read from the environment; trust auth ignores it).
    fn config_url(&self) -> String {
        format!("postgres://keypool:$KP_TEST_LEDGER_PASSWORD@127.0.0.1:{}/postgres?sslmode=disable", self.port)
    }

    fn url(&self) -> String {
        format!("postgres://keypool@127.0.0.1:{}/postgres?sslmode=disable", self.port)
    }

    /// Stops it (fast shutdown: its connections are cut, what they had not committed is lost).
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            let _ = child.wait();
        }
    }

    /// A client of its own, for the test's reads.
    async fn client(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url(), tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client
    }

    /// How many attempts it holds, and how many distinct (replica, number) keys.
    async fn attempts(&self) -> (i64, i64) {
        let client = self.client().await;
        match client.query_one("SELECT count(*), count(DISTINCT (replica_id, seq)) FROM ledger_attempts", &[]).await {
            Ok(row) => (row.get(0), row.get(1)),
            Err(_) => (0, 0),
        }
    }

    /// Every row of every table, as text: what a dump of the database shows.
    async fn dump(&self) -> String {
        let client = self.client().await;
        let tables = client
            .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'", &[])
            .await
            .unwrap();
        let mut out = String::new();
        for table in tables {
            let name: String = table.get(0);
            for row in client.query(&format!("SELECT t::text FROM {name} t"), &[]).await.unwrap() {
                out.push_str(&name);
                out.push(' ');
                out.push_str(row.get::<_, &str>(0));
                out.push('\n');
            }
        }
        out
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The config of a replica: the team ledger first, then the fake's provider and `rest`.
fn ledger_config(postgres: &TestPostgres, fake: &FakeProvider, rest: &str) -> String {
    format!("ledger = \"{}\"\n{}{rest}", postgres.config_url(), config(&fake.url(), &["x", "y"]))
}

const ENV: &[(&str, &str)] = &[("KP_TEST_LEDGER_PASSWORD", "not-needed"), ("KP_ALICE_TOKEN", ALICE)];
const ALICE: &str = "kp-member-test-alice-0123456789abcdef0123456789abcdef";
const ALICE_ENTRY: &str = "[[members]]\nname = \"alice\"\ntoken = \"$KP_ALICE_TOKEN\"\n";
const PRICES: &str =
    "[[prices]]\nmodel = \"fake-model\"\ninput_per_million = 1.0\ncached_per_million = 0.5\noutput_per_million = 2.0\n";

/// `keypool-server ARGS`, off the runtime.
async fn command(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_keypool-server")).args(args).envs(ENV.iter().copied()).output().unwrap()
    })
    .await
    .unwrap()
}

/// `keypool-server usage --data-dir DIR --config CONFIG --json ARGS`, as JSON.
async fn usage(server: &Server, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["usage".to_owned(), "--data-dir".into(), server.dir.display().to_string()];
    all.extend(["--config".to_owned(), server.config.display().to_string(), "--json".to_owned()]);
    all.extend(args.iter().map(|s| s.to_string()));
    let output = command(all).await;
    assert!(output.status.success(), "usage succeeds: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Waits (polling, up to a minute) until Postgres holds `rows` attempts.
async fn holds(postgres: &TestPostgres, rows: i64, servers: &[&Server]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (count, distinct) = postgres.attempts().await;
        assert_eq!(count, distinct, "no attempt is in Postgres twice");
        if count == rows {
            return;
        }
        assert!(count < rows, "more rows than attempts: {count} > {rows}");
        if Instant::now() > deadline {
            let logs: Vec<String> = servers.iter().map(|s| s.log()).collect();
            panic!("Postgres holds {count} attempts, not {rows}:\n{}", logs.join("\n----\n"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The sum of `field` over a report's rows.
fn total(report: &serde_json::Value, field: &str) -> u64 {
    report["rows"].as_array().expect("rows").iter().map(|row| row[field].as_u64().unwrap()).sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_of_a_team_ship_every_attempt_and_usage_sums_the_team() {
    let postgres = TestPostgres::start();
    let redis = keypool_team::test_redis::TestRedis::start();
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("team.secret");
    std::fs::write(&secret, keypool_team::TeamSecret::generate().to_hex()).unwrap();
    let text = ledger_config(&postgres, &fake, &format!("{ALICE_ENTRY}{PRICES}"));
    let team = ["--redis", &redis.url(), "--team", "blue", "--team-secret-file", secret.to_str().unwrap()];
    let start = |name: &str| Server::start_with(&tmp.path().join(name), &text, &team, ENV);
    // Started at once on an empty Postgres: both migrate, one after the other.
    let (a, b) = (start("a"), start("b"));
    for server in [&a, &b] {
        server.healthy().await;
        server.logged("the team ledger's Postgres is connected").await;
    }
    for turn in 0..6 {
        assert_eq!(a.ask_as(ALICE, &format!("a-alice-{turn}")).await.0, 200);
        assert_eq!(b.ask_as(ALICE, &format!("b-alice-{turn}")).await.0, 200);
    }
    for turn in 0..4 {
        assert_eq!(a.ask(&format!("a-own-{turn}")).await.0, 200);
    }
    holds(&postgres, 16, &[&a, &b]).await;

    let by_member = usage(&a, &["--by", "member"]).await;
    assert_eq!(by_member["ledger"], "team", "the team's ledger answers: {by_member}");
    let row = |report: &serde_json::Value, field: &str, name: Option<&str>| {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row[field].as_str() == name)
            .unwrap_or_else(|| panic!("a row for {name:?}: {report}"))
            .clone()
    };
    let alice = row(&by_member, "member", Some("alice"));
    assert_eq!(alice["attempts"], 12, "alice's requests on both replicas: {by_member}");
    assert_eq!(alice["input_tokens"], 12 * 11, "11 prompt tokens a reply");
    let cost = alice["cost_usd"].as_f64().unwrap();
    assert!((cost - 12.0 * 14.5e-6).abs() < 1e-9, "at the [[prices]] price: {cost}");
    assert_eq!(row(&by_member, "member", None)["attempts"], 4, "the owner's token names no member");
    let by_key = usage(&b, &["--by", "key"]).await;
    let keys: Vec<(String, u64)> = by_key["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["key"].as_str().unwrap().to_owned(), row["attempts"].as_u64().unwrap()))
        .collect();
    assert_eq!(keys.len(), 2, "a key is one, by its team identity, whichever replica sent with it: {by_key}");
    assert!(keys.iter().all(|(label, _)| label == "x" || label == "y"), "named by its label: {by_key}");
    assert_eq!(keys.iter().map(|(_, n)| n).sum::<u64>(), 16);
    let by_model = usage(&b, &["--by", "model"]).await;
    assert_eq!(row(&by_model, "model", Some(MODEL))["attempts"], 16, "{by_model}");
    let by_day = usage(&b, &["--by", "day"]).await;
    assert_eq!(total(&by_day, "attempts"), 16, "{by_day}");
    let today = keypool::Timestamp::from_millis(keypool::Clock::now(&keypool_api::SystemClock).as_millis()).to_string()
        [..10]
        .to_owned();
    assert!(by_day["rows"].as_array().unwrap().iter().any(|r| r["day"] == today.as_str()), "today, UTC: {by_day}");
    let by_source = usage(&b, &["--by", "source"]).await;
    assert_eq!(total(&by_source, "attempts"), 16, "every client's: {by_source}");
    let local = {
        let all = vec!["usage".to_owned(), "--data-dir".into(), a.dir.display().to_string(), "--json".into()];
        serde_json::from_slice::<serde_json::Value>(&command(all).await.stdout).unwrap()
    };
    assert_eq!(local["ledger"], "replica", "without --config: this replica's own");
    assert_eq!(total(&local, "attempts"), 10, "A's share alone: {local}");

    let listed = command(vec![
        "members".into(),
        "list".into(),
        "--data-dir".into(),
        b.dir.display().to_string(),
        "--config".into(),
        b.config.display().to_string(),
        "--json".into(),
    ])
    .await;
    assert!(listed.status.success(), "members list: {}", String::from_utf8_lossy(&listed.stderr));
    let members: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(members[0]["name"], "alice");
    assert_eq!(members[0]["used"]["attempts"], 12, "alice's month on both replicas: {members}");
    assert_eq!(members[0]["used"]["output_tokens"], 12 * 3);

    let dump = postgres.dump().await;
    assert!(dump.contains("ledger_keys") && dump.contains("alice"), "the dump has the ledger's rows");
    for secret in [key("x"), key("y"), ALICE.to_owned(), a.token(), b.token()] {
        for run in secret.as_bytes().windows(12) {
            let run = std::str::from_utf8(run).unwrap();
            assert!(!dump.contains(run), "no part of a key or a token is in Postgres: {run:?}");
        }
    }
}

/// `n` requests to `server`, each answered whatever Postgres does.
async fn ask(server: &Server, lane: &str, n: usize) {
    for i in 0..n {
        assert_eq!(server.ask(&format!("{lane}-{i}")).await.0, 200, "served whatever Postgres does:\n{}", server.log());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_of_postgres_loses_no_attempt_and_counts_none_twice() {
    let mut postgres = TestPostgres::start();
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let text = ledger_config(&postgres, &fake, "");
    let start = |name: &str| Server::start_with_env(&tmp.path().join(name), &text, ENV);
    let (a, mut b) = (start("a"), start("b"));
    for server in [&a, &b] {
        server.healthy().await;
        server.logged("the team ledger's Postgres is connected").await;
    }
    ask(&a, "a-before", 25).await;
    ask(&b, "b-before", 25).await;
    holds(&postgres, 50, &[&a, &b]).await;

    postgres.stop();
    ask(&a, "a-down", 50).await;
    ask(&b, "b-down", 50).await;
    for server in [&a, &b] {
        metric_reaches(server, "keypool_ledger_outbox_rows", 50.0, "rows waiting in the outbox").await;
    }
    // B stops while Postgres is down: its rows wait in its store for its next start, and the
    // numbers it took are never used again.
    b.signal("TERM");
    assert_eq!(b.exited().await, Some(0), "B drains and exits:\n{}", b.log());
    b = start("b");
    b.healthy().await;
    metric_reaches(&b, "keypool_ledger_outbox_rows", 50.0, "B's rows, kept across its restart").await;
    ask(&b, "b-again", 25).await;
    ask(&a, "a-again", 25).await;

    postgres.launch();
    holds(&postgres, 200, &[&a, &b]).await;
    for server in [&a, &b] {
        for _ in 0..500 {
            if metric(server, "keypool_ledger_outbox_rows").await == Some(0.0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(metric(server, "keypool_ledger_outbox_rows").await, Some(0.0), "the outbox is empty");
    }
    let client = postgres.client().await;
    let sums = client
        .query_one("SELECT sum(input_tokens)::bigint, sum(cached_tokens)::bigint, sum(output_tokens)::bigint FROM ledger_attempts", &[])
        .await
        .unwrap();
    assert_eq!((sums.get::<_, i64>(0), sums.get::<_, i64>(1), sums.get::<_, i64>(2)), (200 * 11, 200 * 5, 200 * 3));
    let by_replica: Vec<i64> = client
        .query("SELECT count(*) FROM ledger_attempts GROUP BY replica_id ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(by_replica, [100, 100], "each replica's hundred, once each");
    let report = usage(&a, &["--by", "provider"]).await;
    assert_eq!(total(&report, "attempts"), 200, "usage says what was answered: {report}");
}

/// Rows as a replica ships them: numbered `numbers`, at `at` milliseconds.
fn rows(numbers: std::ops::Range<i64>, at: i64) -> Vec<LedgerRow> {
    numbers
        .map(|seq| LedgerRow {
            seq,
            at: at + seq,
            provider: "fake".into(),
            key_identity: Some("local:k1".into()),
            key_label: Some("x".into()),
            model: MODEL.into(),
            source: "test".into(),
            member: Some("alice".into()),
            outcome: "ok".into(),
            status: Some(200),
            ttft_ms: Some(3),
            latency_ms: 9,
            input_tokens: Some(11),
            cached_tokens: Some(5),
            output_tokens: Some(3),
        })
        .collect()
}

/// 2027-03-01T00:00:00Z, in milliseconds.
const MARCH_2027: i64 = 1_803_859_200_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_shipped_again_after_its_answer_was_lost_is_counted_once() {
    let postgres = TestPostgres::start();
    let mut ledger = Postgres::connect(&postgres.url()).await.unwrap();
    assert_eq!(ledger.ship("replica-1", &rows(1..4, MARCH_2027)).await.unwrap(), 3, "three new rows");
    // Postgres committed, the answer never came: the replica keeps the batch and ships it again.
    assert_eq!(ledger.ship("replica-1", &rows(1..4, MARCH_2027)).await.unwrap(), 0, "nothing new the second time");
    assert_eq!(ledger.ship("replica-1", &rows(2..6, MARCH_2027)).await.unwrap(), 2, "only the two it lacked");
    let mut other = Postgres::connect(&postgres.url()).await.unwrap();
    assert_eq!(
        other.ship("replica-2", &rows(1..4, MARCH_2027)).await.unwrap(),
        3,
        "another replica's numbers are its own"
    );
    assert_eq!(postgres.attempts().await, (8, 8), "five of one replica and three of the other, once each");
}

#[tokio::test(flavor = "multi_thread")]
async fn partitions_are_made_per_month_and_retention_drops_the_months_past_it() {
    let postgres = TestPostgres::start();
    let mut ledger = Postgres::connect(&postgres.url()).await.unwrap();
    const DAY: i64 = 86_400_000;
    let january = MARCH_2027 - 59 * DAY;
    ledger.ship("replica-1", &rows(1..3, january)).await.unwrap();
    ledger.ship("replica-1", &rows(3..6, MARCH_2027 + DAY)).await.unwrap();
    assert_eq!(
        ledger.partitions().await.unwrap(),
        ["ledger_attempts_2027_01", "ledger_attempts_2027_03"],
        "a month's partition is made when its first row comes"
    );
    // Mid-June 2027, keeping three months before the current one: March on.
    let june = MARCH_2027 + (31 + 30 + 31 + 14) * DAY;
    let dropped = ledger.maintain(june, Some(3)).await.unwrap();
    assert_eq!(dropped, ["ledger_attempts_2027_01"], "January is past the retention");
    assert_eq!(
        ledger.partitions().await.unwrap(),
        ["ledger_attempts_2027_03", "ledger_attempts_2027_06", "ledger_attempts_2027_07"],
        "March kept, June and July made ahead"
    );
    assert_eq!(postgres.attempts().await, (3, 3), "March's rows are kept, January's went with its month");
    assert_eq!(ledger.maintain(june, None).await.unwrap(), Vec::<String>::new(), "no retention: nothing dropped");
}

#[tokio::test]
async fn a_bad_ledger_stops_the_start_naming_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("config.toml");
    let check = |text: &str| {
        std::fs::write(&file, text).unwrap();
        Command::new(env!("CARGO_BIN_EXE_keypool-server")).arg("check").arg("--config").arg(&file).output().unwrap()
    };
    let unset = check("drain_seconds = 5\nledger = \"postgres://keypool:$KP_TEST_UNSET_PASSWORD@db/keypool\"\n");
    assert_eq!(unset.status.code(), Some(2));
    let said = String::from_utf8_lossy(&unset.stderr);
    assert!(said.contains("line 2: ledger: the environment variable KP_TEST_UNSET_PASSWORD is not set"), "{said}");
    let scheme = check("ledger = \"mysql://keypool:hunter2@db/keypool\"\n");
    let said = String::from_utf8_lossy(&scheme.stderr);
    assert!(said.contains("line 1: ledger is a postgres:// URL") && !said.contains("hunter2"), "{said}");
}
