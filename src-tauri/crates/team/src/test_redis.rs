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
