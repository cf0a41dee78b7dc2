//! `keypool-server probe URL`: asks a plain-http URL (the server's own `/healthz` or `/readyz` on
//! loopback) and exits 0 when it answers 200, 1 otherwise. An image without a shell or curl (the
//! container's `HEALTHCHECK`) probes the server with the server's own binary.
//!
//! `keypool-server check --config FILE`: reads a config file as `serve` would and says whether
//! it would start (exit 0) or why not (exit 2), changing nothing; the deploy files' tests check
//! the configs they ship with it.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// How long a probe may take in all: connecting, and the answer's status line.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

pub fn run_probe(url: &str) -> ExitCode {
    match probe(url) {
        Ok(200) => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!("keypool-server: {url} answered {status}");
            ExitCode::FAILURE
        }
        Err(message) => {
            eprintln!("keypool-server: {url}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The status `url` answers a GET with.
fn probe(url: &str) -> Result<u16, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    if parsed.scheme() != "http" {
        return Err("a probe is plain http (the server on loopback)".into());
    }
    let host = parsed.host_str().ok_or("no host")?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let address = (host.trim_start_matches('[').trim_end_matches(']'), port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("the host names no address")?;
    let mut stream = TcpStream::connect_timeout(&address, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT)).map_err(|e| e.to_string())?;
    let host_header = match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let request = format!("GET {} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n", parsed.path());
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut head = [0u8; 64];
    let mut read = 0;
    // The status line is all that is read: `HTTP/1.1 200 OK`.
    while read < head.len() && !head[..read].contains(&b'\n') {
        match stream.read(&mut head[read..]).map_err(|e| e.to_string())? {
            0 => break,
            n => read += n,
        }
    }
    let line = String::from_utf8_lossy(&head[..read]);
    line.split_whitespace().nth(1).and_then(|status| status.parse().ok()).ok_or_else(|| "not an HTTP answer".into())
}

pub fn run_check(path: &Path) -> ExitCode {
    match crate::config::read(path) {
        Ok(config) => {
            let providers = config.providers.len();
            let members = config.resolved_members.len();
            println!(
                "{}: would start: {providers} providers, {members} members, drain {} s, {} trusted proxies, traces {}",
                path.display(),
                config.drain().as_secs(),
                config.proxies.networks.len(),
                if config.traces.is_some() { "on" } else { "off" },
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("keypool-server: {error}");
            ExitCode::from(2)
        }
    }
}
