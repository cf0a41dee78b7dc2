//! The `keypool-fake-provider` binary as the end-to-end tests and the benches run it: it says where
//! it listens, and a `--limit` given on its command line is enforced and announced.
//!
//! Being an integration test of the binary also makes `cargo test --workspace` build it, with the
//! workspace's features, so the end-to-end run after the Rust tests finds it built.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// The child is killed when the test ends, whether it passes or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_keypool-fake-provider"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fake provider's binary starts");
    let stdout = child.stdout.take().expect("its stdout is piped");
    let running = Running(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("it prints a line");
    let address = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("its first line names its address, got {line:?}"))
        .to_owned();
    (running, address)
}

/// One OpenAI-style completion with `key`; the status code and the head of the answer.
fn complete(address: &str, key: &str) -> (u16, String) {
    let body = r#"{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}"#;
    let mut stream = TcpStream::connect(address).expect("it accepts connections once it said so");
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("the request is written");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("the answer is read to its end");
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("an HTTP status line");
    let head = answer.split("\r\n\r\n").next().unwrap_or_default().to_ascii_lowercase();
    (status, head)
}

#[test]
fn a_limit_on_the_command_line_is_announced_then_enforced() {
    let (_running, address) = start(&["--limit", "key-one=1/60000"]);

    let (first, head) = complete(&address, "key-one");
    assert_eq!(first, 200, "the first request is inside the window of 1");
    assert!(head.contains("x-ratelimit-remaining-requests: 0"), "the answer announces the window it used up: {head}");

    let (second, _) = complete(&address, "key-one");
    assert_eq!(second, 429, "the second request in the same minute is over the limit");

    let (other, _) = complete(&address, "key-two");
    assert_eq!(other, 200, "a key the command line did not limit is not limited");
}
