//! What a client can hold of the endpoint: connections are bounded in number, a request head and
//! a request body must arrive within their deadlines, and an idle kept-alive connection closes.
//! The deadlines run on a manual timer: they pass when the test says so.

use std::net::SocketAddr;
use std::time::Duration;

use keypool_gateway::{token_hash, Bounds, ConnectionTimer, Gateway, ManualTimer, Serving};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

/// A failure bound, never waited for when the server does its part.
const GUARD: Duration = Duration::from_secs(20);

/// The local API with `max_connections` and its deadlines on `timer`.
async fn bounded(max_connections: usize, timer: &ManualTimer) -> LocalApi {
    let bounds = Bounds { max_connections, timer: ConnectionTimer::manual(timer), ..Bounds::default() };
    let serving = Serving { bounds, ..Serving::default() };
    LocalApi::started_by(keypool_llm::ProviderKind::Openai, None, &["a"], move |routes, service, clock| async move {
        let address: SocketAddr = "127.0.0.1:0".parse().unwrap();
        Gateway::start_at(address, token_hash(TOKEN), routes, service, clock, serving).await.expect("it listens")
    })
    .await
}

fn address(api: &LocalApi) -> SocketAddr {
    api.gateway.addresses()[0]
}

/// Reads until the server closes the connection; what it sent.
async fn closed(socket: &mut TcpStream, what: &str) -> String {
    let mut read = Vec::new();
    let ended = tokio::time::timeout(GUARD, socket.read_to_end(&mut read)).await;
    assert!(ended.is_ok(), "{what}: the server never closed the connection");
    String::from_utf8_lossy(&read).into_owned()
}

/// Returns once `count` deadlines are set (the server's doing, bounded by [`GUARD`]).
async fn armed(timer: &ManualTimer, count: u64) {
    let armed = tokio::time::timeout(GUARD, timer.armed(count)).await;
    assert!(armed.is_ok(), "the server never set {count} deadlines");
}

fn chat_body() -> String {
    json!({ "model": "fake-model", "messages": [{ "role": "user", "content": "Hi" }] }).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_half_sent_requests_is_closed_to_make_room_and_delays_no_request() {
    let timer = ManualTimer::new();
    let api = bounded(16, &timer).await;
    let mut flood = Vec::new();
    for _ in 0..48 {
        let mut socket = TcpStream::connect(address(&api)).await.unwrap();
        socket.write_all(b"POST /v1/chat/compl").await.unwrap();
        flood.push(socket);
    }
    let answer = tokio::time::timeout(GUARD, api.chat(&serde_json::from_str(&chat_body()).unwrap(), &[])).await;
    let answer = answer.expect("a whole request is answered while the half-sent ones hold every connection");
    assert_eq!(answer.status(), 200, "and answered well");
    for (i, socket) in flood.iter_mut().take(48 - 16).enumerate() {
        closed(socket, &format!("half-sent request {i}, among the oldest")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_that_does_not_arrive_in_time_closes_the_connection() {
    let timer = ManualTimer::new();
    let api = bounded(64, &timer).await;
    let mut socket = TcpStream::connect(address(&api)).await.unwrap();
    socket.write_all(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.unwrap();
    armed(&timer, 1).await;
    timer.pass();
    closed(&mut socket, "a head that never ends").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_closes_when_its_deadline_passes() {
    let timer = ManualTimer::new();
    let api = bounded(64, &timer).await;
    let mut socket = TcpStream::connect(address(&api)).await.unwrap();
    let request = format!("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    socket.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200", "the request is answered on a connection kept alive");
    // The first head's deadline (a GET has no body to wait for), then the next head's.
    armed(&timer, 2).await;
    timer.pass();
    let rest = closed(&mut socket, "an idle kept-alive connection").await;
    assert!(rest.contains("\"data\""), "after the whole answer: {rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_is_answered_408_and_closed() {
    let timer = ManualTimer::new();
    let api = bounded(64, &timer).await;
    let mut socket = TcpStream::connect(address(&api)).await.unwrap();
    let body = chat_body();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body.as_bytes()[..10]).await.unwrap();
    // The head's deadline, then the body's.
    armed(&timer, 2).await;
    timer.pass();
    let answer = closed(&mut socket, "a body that never ends").await;
    assert!(answer.starts_with("HTTP/1.1 408"), "a 408: {answer}");
    assert!(answer.contains("did not arrive within"), "saying why: {answer}");
}

/// Wrong tokens from one peer lock that peer out, the right token included, so a guesser cannot
/// test guesses at full speed while locked out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_locked_out_for_wrong_tokens_is_refused_with_the_right_one_too() {
    let api = LocalApi::start(&["a"]).await;
    let http = reqwest::Client::new();
    let status = |token: &'static str| {
        let request = http.get(api.url("/v1/models")).bearer_auth(token);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    for _ in 0..keypool_gateway::MAX_FAILURES {
        assert_eq!(status("guess").await, 401, "a wrong token");
    }
    assert_eq!(status("guess").await, 429, "one too many: locked out");
    assert_eq!(status(TOKEN).await, 429, "the right token from the same peer is locked out too");
}
