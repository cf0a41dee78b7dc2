//! A throwaway Redis for tests: `redis-server` on a free loopback port, in a temporary
//! directory, with nothing saved, stopped (and its directory removed) when dropped. Never a
//! system service: every test gets its own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a `redis-server` may take to answer after it is started.
const STARTUP: Duration = Duration::from_secs(20);

/// A running `redis-server` of one test.
pub struct TestRedis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl TestRedis {
    /// Starts one on a free port. Panics when `redis-server` is not installed (`.ci/ensure-deps.sh`
    /// installs it) or does not answer within 20 s.
    pub fn start() -> TestRedis {
        let dir = tempfile::tempdir().expect("a temporary directory");
        // A port just freed can be taken by someone else before the server binds it: try again.
        for _ in 0..5 {
            let port = free_port();
            if let Some(child) = launch(port, &dir) {
                return TestRedis { child: Some(child), port, dir };
            }
        }
        panic!("redis-server did not start on a free port (is it installed? .ci/ensure-deps.sh installs it)");
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server at once (SIGKILL: nothing is saved, connections drop).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, empty.
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Some(child) = launch(self.port, &self.dir) {
                self.child = Some(child);
                return;
            }
            assert!(Instant::now() < deadline, "redis-server did not come back on port {}", self.port);
        }
    }

    /// Runs one command (its words, sent as an inline command) and returns the raw reply, for
    /// tests that look at or meddle with what the server holds.
    pub fn command(&self, words: &[&str]) -> Vec<u8> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the server accepts connections");
        stream.set_read_timeout(Some(STARTUP)).expect("a read timeout");
        let mut request = format!("*{}\r\n", words.len()).into_bytes();
        for word in words {
            request.extend_from_slice(format!("${}\r\n", word.len()).as_bytes());
            request.extend_from_slice(word.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"QUIT\r\n");
        stream.write_all(&request).expect("the command is sent");
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply);
        reply
    }
}

impl TestRedis {
    /// Every key the server holds (by SCAN) under `{keypool:`.
    pub fn team_keys(&self) -> Vec<String> {
        let reply = String::from_utf8_lossy(&self.command(&["SCAN", "0", "COUNT", "100000"])).into_owned();
        reply.lines().filter(|line| line.starts_with("{keypool:")).map(str::to_owned).collect()
    }

    /// Every value the server holds, of every type, as it answers for it, with each key's DUMP:
    /// what a look at the whole Redis shows, for tests that no secret is in it.
    pub fn dump(&self) -> Vec<u8> {
        let scanned = self.command(&["SCAN", "0", "COUNT", "100000"]);
        let text = String::from_utf8_lossy(&scanned).into_owned();
        let keys: Vec<&str> = text.lines().filter(|line| line.starts_with('{')).collect();
        let mut all = scanned.clone();
        for key in keys {
            let kind = String::from_utf8_lossy(&self.command(&["TYPE", key])).into_owned();
            let read: &[&str] = match kind.trim_start_matches('+').split("\r\n").next().unwrap_or_default() {
                "string" => &["GET"],
                "hash" => &["HGETALL"],
                "list" => &["LRANGE", "0", "-1"],
                "set" => &["SMEMBERS"],
                "zset" => &["ZRANGE", "0", "-1", "WITHSCORES"],
                "stream" => &["XRANGE", "-", "+"],
                other => panic!("a type the team never writes: {other}"),
            };
            let mut command = vec![read[0], key];
            command.extend_from_slice(&read[1..]);
            all.extend(self.command(&command));
            all.extend(self.command(&["DUMP", key]));
        }
        all
    }

    /// What a hostile writer without the team secret can do to team `team`: every one of its keys
    /// replaced by a value of another type or by a hash of garbage in every field the team uses
    /// (words that are no numbers, huge values, deadlines years ahead, seals that are wrong), a
    /// forged hash beside each, messages that are not the team's on its channel, the scripts
    /// flushed, and every client's connection killed, so the members reconnect and read it all.
    pub fn garble(&self, team: &str) {
        let values: Vec<String> = vec![
            "garbage".into(),
            "99999999999999999 1 -".into(),
            "999999999999999 d 401 0123456789abcdef".into(),
            "9999999999999 x 99999999999999 99 fedcba9876543210".into(),
            "- 0 99999999999999 0000000000000000".into(),
            "1e308 inf nan".into(),
            "9".repeat(1 << 20),
        ];
        const FIELDS: [&str; 11] =
            ["auth", "credit", "rest", "scope", "rq", "tk", "spent", "day", "r.00ff", "key", "x"];
        let keys = self.team_keys();
        for (i, name) in keys.iter().enumerate() {
            self.command(&["DEL", name]);
            match i % 4 {
                0 => drop(self.command(&["SET", name, "garbage"])),
                1 => drop(self.command(&["RPUSH", name, "a", "b"])),
                2 => drop(self.command(&["ZADD", name, "1", "m"])),
                _ => {
                    for (j, field) in FIELDS.iter().enumerate() {
                        self.command(&["HSET", name, field, &values[(i + j) % values.len()]]);
                    }
                }
            }
            // The same key's hash, as a forger would write it, under a name next to the real one.
            let forged = format!("{name}0");
            for (j, field) in FIELDS.iter().enumerate() {
                self.command(&["HSET", &forged, field, &values[j % values.len()]]);
            }
        }
        let channel = format!("{{keypool:{team}}}:events");
        let group = keys.iter().find_map(|k| k.split(":g:").nth(1).map(str::to_owned)).unwrap_or_default();
        let messages = [
            "not json".to_owned(),
            "{}".to_owned(),
            r#"{"m":1,"k":[],"f":null}"#.to_owned(),
            format!(r#"{{"m":"ff","k":"g:{group}","f":{{"rest":"99999999999999999 9 - 0000000000000000"}}}}"#),
            format!(r#"{{"m":"ff","k":"k:{group}","f":{{"auth":"99999999999999 d 401 0000000000000000"}}}}"#),
            "x".repeat(1 << 20),
        ];
        for message in &messages {
            self.command(&["PUBLISH", &channel, message]);
        }
        self.command(&["SCRIPT", "FLUSH"]);
        // Subscribed RESP3 connections count as `pubsub` clients.
        for kind in ["normal", "pubsub"] {
            self.command(&["CLIENT", "KILL", "TYPE", kind]);
        }
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `redis-server` on `port` in `dir` and waits for its `PONG`; `None` when it exits first
/// (the port was taken) or does not answer in time.
fn launch(port: u16, dir: &tempfile::TempDir) -> Option<Child> {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        panic!("redis-server cannot be run (is it installed? .ci/ensure-deps.sh installs it)");
    };
    let deadline = Instant::now() + STARTUP;
    loop {
        if let Ok(Some(_exited)) = child.try_wait() {
            return None;
        }
        if ping(port) {
            return Some(child);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        // Polling for the server to answer: waiting for an event, bounded by STARTUP.
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free loopback port");
    listener.local_addr().expect("its address").port()
}

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}
