//! The way to a plain-http upstream (a server on this machine or its network): hyper's own client
//! under the rules reqwest's plain-http client keeps. A redirect is followed only within the
//! upstream's origin, and the key never goes anywhere else.

use std::sync::{Arc, Mutex};

use crate::support::*;

#[tokio::test]
async fn a_redirect_within_the_upstreams_origin_is_followed_with_the_request_as_it_was() {
    let api = LocalApi::start(&["a"]).await;
    let here = api.fake.url();
    api.fake.script("key-a", [Reply::Redirect { status: 307, to: here.clone() }, Reply::text(&["Hello ", "there"])]);
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 200, "answered after the redirect");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "Hello there");
    let seen = api.fake.seen();
    assert_eq!(seen.len(), 2, "asked once, then again where it was sent: {seen:?}");
    assert!(seen.iter().all(|s| s.key == "key-a" && s.model == "m"), "the same request, key and body: {seen:?}");
    assert_eq!(seen[0].path, seen[1].path);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_key_never_goes_there() {
    let api = LocalApi::start(&["a"]).await;
    let elsewhere = FakeProvider::start().await;
    api.fake.always("key-a", Reply::Redirect { status: 307, to: elsewhere.url() });
    for stream in [false, true] {
        let answer = api.chat(&chat_body("m", stream), &[]).await;
        assert_eq!(answer.status(), 502, "stream {stream}: no answer to pass on");
        let body: Value = answer.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("redirected to another origin"), "said plainly: {message}");
    }
    assert!(elsewhere.seen().is_empty(), "nothing reached the other server: {:?}", elsewhere.seen());
    assert_eq!(api.fake.seen().len(), 2, "each request went upstream once");
}

#[tokio::test]
async fn a_redirect_loop_within_the_origin_ends_after_five_redirects() {
    let api = LocalApi::start(&["a"]).await;
    api.fake.always("key-a", Reply::Redirect { status: 308, to: api.fake.url() });
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 502);
    assert_eq!(api.fake.seen().len(), 6, "the request and five redirects, no more");
}

#[tokio::test]
async fn an_upstream_that_refuses_connections_is_said_to_be_unreachable() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let api = LocalApi::over(&format!("http://127.0.0.1:{port}/v1"), &["a"]).await;
    let answer = api.chat(&chat_body("m", false), &[]).await;
    assert_eq!(answer.status(), 502);
    let body: Value = answer.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        format!("could not reach Fake at http://127.0.0.1:{port}/v1 (connection failed): is its server running?"),
        "the provider named with its address, as the chat names it"
    );
}

/// An upstream on a socket of its own that records each request's head (lower case) and answers
/// every one with a completion and `headers`. Its URL and the heads.
async fn recording_upstream(headers: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let heads = heads.clone();
            tokio::spawn(async move {
                let (mut read, mut buffer) = (Vec::new(), [0u8; 4096]);
                loop {
                    let n = socket.read(&mut buffer).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    read.extend_from_slice(&buffer[..n]);
                    let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                    let head = String::from_utf8_lossy(&read[..end]).to_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    if read.len() >= end + 4 + length {
                        heads.lock().unwrap().push(head);
                        break;
                    }
                }
                let body = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\n{headers}connection: close\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn the_clients_version_headers_go_upstream_and_only_the_allowed_answer_headers_come_back() {
    let answer_headers = "content-type: application/json\r\nx-request-id: req-42\r\nset-cookie: session=upstream\r\n\
                          openai-organization: acme\r\nx-ratelimit-remaining-requests: 9\r\n";
    let (url, heads) = recording_upstream(answer_headers).await;
    let api = LocalApi::over(&url, &["a"]).await;
    let sent = [("openai-beta", "assistants=v2"), ("anthropic-version", "2023-06-01"), ("x-client-secret", "mine")];
    let answer = api.chat(&chat_body("m", false), &sent).await;
    assert_eq!(answer.status(), 200);
    let passed: Vec<(String, String)> = answer
        .headers()
        .iter()
        .filter(|(name, _)| !["content-length", "date"].contains(&name.as_str()))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    let expected = [("content-type", "application/json"), ("x-request-id", "req-42")];
    assert_eq!(passed, expected.map(|(n, v)| (n.to_owned(), v.to_owned())), "the allow-list, as the upstream wrote it");
    let head = heads.lock().unwrap().pop().expect("the request reached the upstream");
    assert!(
        head.contains("\r\nopenai-beta: assistants=v2") && head.contains("\r\nanthropic-version: 2023-06-01"),
        "{head}"
    );
    assert!(head.contains("\r\nauthorization: bearer key-a"), "with the pool's key: {head}");
    assert!(!head.contains("x-client-secret") && !head.contains(TOKEN), "nothing else of the client's: {head}");
}
