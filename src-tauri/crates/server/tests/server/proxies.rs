//! Behind a reverse proxy (a real nginx the test starts, in front of the server): the client's
//! address comes from the proxy's `X-Forwarded-For`, only when the proxy is trusted, so a
//! wrong-token flood through it locks out the flooding client and nobody else; a peer that is
//! not trusted cannot choose its address with the header.

use std::net::IpAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::support::*;

/// An nginx of the test's own: in a temporary directory, on a free loopback port, in the
/// foreground; killed when dropped.
struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Proxies everything to `upstream` (a loopback port), appending the client's address to
    /// `X-Forwarded-For` as nginx's documentation has it.
    async fn start(upstream: u16) -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let path = |name: &str| dir.path().join(name).display().to_string();
        let conf = format!(
            "worker_processes 1;\ndaemon off;\npid {pid};\nerror_log {log};\nevents {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {tmp}/body;\n  proxy_temp_path {tmp}/proxy;\n\
               fastcgi_temp_path {tmp}/fastcgi;\n  uwsgi_temp_path {tmp}/uwsgi;\n  scgi_temp_path {tmp}/scgi;\n\
               server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://127.0.0.1:{upstream};\n\
                   proxy_http_version 1.1;\n      proxy_set_header Host $host;\n\
                   proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n    }}\n  }}\n}}\n",
            pid = path("nginx.pid"),
            log = path("error.log"),
            tmp = dir.path().display(),
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx())
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(path("error.log"))
            .arg("-c")
            .arg(path("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx runs (.ci/ensure-deps.sh installs nginx-light)");
        let log = path("error.log");
        let mut nginx = Nginx { child, port, _dir: dir };
        until("nginx accepts connections", || {
            assert!(nginx.child.try_wait().unwrap().is_none(), "nginx exited:\n{}", read(Path::new(&log)));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
        .await;
        nginx
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx() -> &'static str {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("nginx")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A client whose connections come from `address` (any of 127.0.0.0/8 is this machine's).
fn client_from(address: &str) -> reqwest::Client {
    let _ = client();
    reqwest::Client::builder().local_address(address.parse::<IpAddr>().unwrap()).build().unwrap()
}

/// A model list asked of `url` with `token`, from `client`: its status.
async fn models(client: &reqwest::Client, url: &str, token: &str, forwarded: Option<&str>) -> u16 {
    let mut request = client.get(url).bearer_auth(token);
    if let Some(forwarded) = forwarded {
        request = request.header("x-forwarded-for", forwarded);
    }
    request.send().await.expect("answered").status().as_u16()
}

#[tokio::test]
async fn a_wrong_token_flood_through_a_trusted_proxy_locks_out_only_the_flooding_client() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("trusted_proxies = [\"127.0.0.1/32\"]\n{}", config(&fake.url(), &["a"]));
    let server = Server::start(tmp.path(), &text, &[]);
    server.healthy().await;
    let nginx = Nginx::start(server.port).await;
    let (flooder, honest) = (client_from("127.0.0.66"), client_from("127.0.0.77"));
    let url = nginx.url("/v1/models");
    for guess in 0..keypool_gateway::MAX_FAILURES {
        // What the flooder writes itself is on the left of what nginx appends: never read.
        let spoofed = format!("198.51.100.{guess}");
        assert_eq!(models(&flooder, &url, "wrong", Some(&spoofed)).await, 401, "guess {guess} is refused");
    }
    assert_eq!(models(&flooder, &url, "wrong", None).await, 429, "one too many: the flooder is locked out");
    assert_eq!(
        models(&flooder, &url, &server.token(), Some("198.51.100.200")).await,
        429,
        "the right token too, whatever address it writes in the header"
    );
    assert_eq!(
        models(&honest, &url, &server.token(), None).await,
        200,
        "another client through the same proxy is served"
    );
    let (status, _) = server.ask("a direct request").await;
    assert_eq!(status, 200, "and so is the proxy's own address");
    let log = server.log();
    assert!(
        log.contains("wrong local API tokens in a row: refusing the client for 30 s client=127.0.0.66"),
        "the lockout names the flooding client, not the proxy:\n{log}"
    );
    assert!(log.contains("client=127.0.0.77"), "each request's log line names its client:\n{log}");
    assert_eq!(metric(&server, "keypool_client_lockouts_total").await, Some(1.0), "one lockout, counted");
}

#[tokio::test]
async fn a_peer_that_is_no_trusted_proxy_cannot_choose_its_address_with_the_header() {
    let fake = FakeProvider::start().await;
    let tmp = tempfile::tempdir().unwrap();
    // Only nginx's address would be trusted; this client talks to the server directly.
    let text = format!("trusted_proxies = [\"10.0.0.0/8\"]\n{}", config(&fake.url(), &["a"]));
    let server = Server::start(tmp.path(), &text, &[]);
    server.healthy().await;
    let direct = client_from("127.0.0.88");
    let url = server.url("/v1/models");
    for guess in 0..keypool_gateway::MAX_FAILURES {
        // A new address each time would dodge a lockout that believed the header.
        let spoofed = format!("203.0.113.{guess}");
        assert_eq!(models(&direct, &url, "wrong", Some(&spoofed)).await, 401, "guess {guess} is refused");
    }
    assert_eq!(models(&direct, &url, "wrong", Some("203.0.113.99")).await, 429, "locked out by its own address");
    assert_eq!(
        metric(&server, "keypool_forwarded_ignored_total").await,
        Some(f64::from(keypool_gateway::MAX_FAILURES as u32 + 1)),
        "every header from the untrusted peer was ignored, and counted"
    );
    assert!(server.log().contains("client=127.0.0.88"), "the log names the peer:\n{}", server.log());
}
