//! `keypool-server` processes of the tests: each with a data dir of its own, a config naming the
//! fake provider, its stderr collected, and stopped (SIGKILL) when dropped.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use keypool_fake_provider::{FakeProvider, Reply};
pub use serde_json::json;

pub const MODEL: &str = "fake-model";

/// The value of the key labelled `label`.
pub fn key(label: &str) -> String {
    format!("sk-server-{label}-QwErTyUiOpLkJhGzXsVb-{label}")
}

/// A config file serving `labels` of the fake at `fake_url` as the provider "fake".
pub fn config(fake_url: &str, labels: &[&str]) -> String {
    let mut text = format!(
        "[[providers]]\nname = \"fake\"\nkind = \"openai\"\nbase_url = \"{fake_url}/v1\"\nmodels = [\"{MODEL}\"]\n"
    );
    for label in labels {
        text.push_str(&format!("[[providers.keys]]\nkey = \"{}\"\nlabel = \"{label}\"\n", key(label)));
    }
    text
}

/// An HTTP client for the tests (the workspace's reqwest comes without a crypto provider: the
/// one the llm crate installs).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Server {
    child: Mutex<Option<Child>>,
    pub port: u16,
    pub dir: PathBuf,
    pub config: PathBuf,
    lines: Arc<Mutex<Vec<String>>>,
    /// Reads `lines` from the server's stderr until it closes.
    reader: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Server {
    /// `keypool-server serve` on a free loopback port over `dir`, with `config` written to
    /// `dir/config.toml` and `extra` arguments.
    pub fn start(dir: &Path, config: &str, extra: &[&str]) -> Server {
        let port = free_port();
        Server::start_listening(dir, config, &format!("127.0.0.1:{port}"), port, extra)
    }

    pub fn start_listening(dir: &Path, config: &str, listen: &str, port: u16, extra: &[&str]) -> Server {
        Server::spawn(dir, config, listen, port, extra, None, &[])
    }

    /// [`Server::start`] with `env` set in the process's environment (the `$NAME`s of its config).
    pub fn start_with_env(dir: &Path, config: &str, env: &[(&str, &str)]) -> Server {
        let port = free_port();
        Server::spawn(dir, config, &format!("127.0.0.1:{port}"), port, &[], None, env)
    }

    /// [`Server::start`] with `extra` arguments and `env` in the process's environment.
    pub fn start_with(dir: &Path, config: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let port = free_port();
        Server::spawn(dir, config, &format!("127.0.0.1:{port}"), port, extra, None, env)
    }

    /// The same on a free loopback port, the process allowed at most `fds` open files
    /// (`ulimit -n`).
    pub fn start_with_fd_limit(dir: &Path, config: &str, fds: u32) -> Server {
        let port = free_port();
        Server::spawn(dir, config, &format!("127.0.0.1:{port}"), port, &[], Some(fds), &[])
    }

    fn spawn(
        dir: &Path,
        config: &str,
        listen: &str,
        port: u16,
        extra: &[&str],
        fds: Option<u32>,
        env: &[(&str, &str)],
    ) -> Server {
        std::fs::create_dir_all(dir).unwrap();
        let config_path = dir.join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let data = dir.join("data");
        let binary = env!("CARGO_BIN_EXE_keypool-server");
        let mut command = match fds {
            None => Command::new(binary),
            Some(fds) => {
                let mut shell = Command::new("sh");
                shell.arg("-c").arg(format!("ulimit -n {fds} && exec \"$0\" \"$@\"")).arg(binary);
                shell
            }
        };
        let mut child = command
            .arg("serve")
            .arg("--data-dir")
            .arg(&data)
            .arg("--config")
            .arg(&config_path)
            .args(["--listen", listen])
            .args(extra)
            // The team's debug lines say when a member applied another's change.
            .env("RUST_LOG", "info,keypool_team=debug")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("keypool-server starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let collected = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                collected.lock().unwrap().push(line);
            }
        });
        let reader = Mutex::new(Some(reader));
        Server { child: Mutex::new(Some(child)), port, dir: data, config: config_path, lines, reader }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.dir.join("local-api.token")).unwrap().trim().to_owned()
    }

    /// Everything the server logged so far.
    pub fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Waits until the log has a line with `text` (something the server does, not time).
    pub async fn logged(&self, text: &str) {
        until(&format!("the server logs {text:?}"), || self.log().contains(text)).await;
    }

    /// Waits until `/healthz` answers, and returns its JSON.
    pub async fn healthy(&self) -> serde_json::Value {
        let client = client();
        // Up to a minute: a debug build's start on a loaded 2-core machine took over 10 s once.
        for _ in 0..2400 {
            if let Ok(response) = client.get(self.url("/healthz")).send().await {
                return response.json().await.expect("/healthz is JSON");
            }
            assert!(self.running(), "the server exited early:\n{}", self.log());
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("/healthz never answered:\n{}", self.log());
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap().as_ref().expect("the server runs").id()
    }

    pub fn running(&self) -> bool {
        self.child.lock().unwrap().as_mut().is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    /// Sends `signal` (SIGHUP, SIGTERM) to the process.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.lock().unwrap().as_ref().expect("the server runs").id().to_string();
        let sent = Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
        assert!(sent.success(), "kill -{signal} {pid}");
    }

    /// Waits for the process to exit; its status code.
    pub async fn exited(&self) -> Option<i32> {
        for _ in 0..6000 {
            let status = self.child.lock().unwrap().as_mut().expect("the server ran").try_wait().unwrap();
            if let Some(status) = status {
                // Every line it wrote is read before its log is looked at.
                if let Some(reader) = self.reader.lock().unwrap().take() {
                    let _ = reader.join();
                }
                return status.code();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the server did not exit:\n{}", self.log());
    }

    /// A chat request of `conversation`: status and body.
    pub async fn ask(&self, conversation: &str) -> (u16, String) {
        let body =
            json!({ "model": MODEL, "stream": false, "messages": [{ "role": "user", "content": conversation }] });
        let response = client()
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(self.token())
            .header("x-keypool-session", conversation)
            .json(&body)
            .send()
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    /// A chat request of `conversation` with `token` (a member's): status, headers and body.
    pub async fn ask_as(&self, token: &str, conversation: &str) -> (u16, reqwest::header::HeaderMap, String) {
        let body =
            json!({ "model": MODEL, "stream": false, "messages": [{ "role": "user", "content": conversation }] });
        let response = client()
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(token)
            .header("x-keypool-session", conversation)
            .json(&body)
            .send()
            .await
            .expect("the server answers");
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        (status, headers, response.text().await.unwrap())
    }

    /// Rewrites the config file.
    pub fn rewrite(&self, config: &str) {
        let mut file = std::fs::File::create(&self.config).unwrap();
        file.write_all(config.as_bytes()).unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.lock().unwrap().take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits until `done` holds, polling: for something a process does, never for time to pass.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..6000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

/// `server`'s `/metrics` sample of `name` (one without labels), if it has one.
pub async fn metric(server: &Server, name: &str) -> Option<f64> {
    let response = client().get(server.url("/metrics")).bearer_auth(server.token()).send().await.ok()?;
    let text = response.text().await.ok()?;
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Waits until `server`'s `name` is at least `value` (`what` it counts, for the failure).
pub async fn metric_reaches(server: &Server, name: &str, value: f64, what: &str) {
    let mut last = None;
    for _ in 0..1500 {
        last = metric(server, name).await;
        if last.is_some_and(|last| last >= value) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server never reached {value} {what} (last: {last:?}):\n{}", server.log());
}
