use super::plain::ONE_WRITE;
use super::*;
use hyper::header::{HeaderMap, HeaderValue};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A server on loopback that answers each request it reads with the next of `answers` (the
/// bytes, in pieces written apart, and whether the connection closes after it); what it read
/// and how many connections it accepted are told on the channels.
async fn server(
    answers: Vec<(Vec<&'static [u8]>, bool)>,
) -> (String, mpsc::UnboundedReceiver<String>, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
    let (heard, requests) = mpsc::unbounded_channel();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        let answers = Arc::new(Mutex::new(answers.into_iter()));
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let (answers, heard) = (answers.clone(), heard.clone());
            tokio::spawn(async move {
                let mut read = Vec::new();
                loop {
                    // A request: its head, then as many bytes as its content-length says.
                    let request = loop {
                        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&read[..end]).to_string();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length: "))
                                .map_or(0, |n| n.parse::<usize>().unwrap());
                            if read.len() >= end + 4 + length {
                                let request = String::from_utf8_lossy(&read[..end + 4 + length]).to_string();
                                read.drain(..end + 4 + length);
                                break Some(request);
                            }
                        }
                        let mut buf = [0u8; 4096];
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => break None,
                            Ok(n) => read.extend_from_slice(&buf[..n]),
                        }
                    };
                    let Some(request) = request else { return };
                    let _ = heard.send(request);
                    let next = answers.lock().unwrap().next();
                    let Some((pieces, close)) = next else { return };
                    for piece in pieces {
                        stream.write_all(piece).await.unwrap();
                        stream.flush().await.unwrap();
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    if close {
                        return;
                    }
                }
            });
        }
    });
    (url, requests, accepted)
}

fn headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert("authorization", HeaderValue::from_static("Bearer k1"));
    headers
}

/// Sends a POST of `body` to `url` and reads the whole answer: status, a header, the body.
async fn post(client: &Arc<PlainClient>, url: &str, body: &'static str) -> Result<(u16, Bytes), Breakage> {
    let response = post_plain(client, url, &headers(), Bytes::from_static(body.as_bytes())).await?;
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut read = Vec::new();
    while let Some(piece) = body.next_chunk().await {
        read.extend_from_slice(&piece?);
    }
    Ok((status, Bytes::from(read)))
}

#[test]
fn a_target_is_read_from_a_base_url_and_the_path_under_it() {
    fn written(target: Target<'_>) -> (String, u16, String, String) {
        let mut path = Vec::new();
        target.write_path(&mut path);
        (target.host.to_owned(), target.port, target.origin.to_owned(), String::from_utf8(path).unwrap())
    }
    let under = |base, path| written(Target::under(base, path).expect("a plain URL"));
    assert_eq!(
        under("http://127.0.0.1:8080/v1", "chat/completions"),
        ("127.0.0.1".to_owned(), 8080, "127.0.0.1:8080".to_owned(), "/v1/chat/completions".to_owned())
    );
    assert_eq!(under("http://[::1]:11434/", "/v1/models").3, "/v1/models", "one slash between");
    assert_eq!(under("http://[::1]:11434/", "v1/models").0, "[::1]", "an IPv6 host in its brackets");
    assert_eq!(under("http://localhost", "v1/x").1, 80, "port 80 unless told");
    assert_eq!(under("http://localhost", "").3, "/", "the root");
    assert_eq!(written(Target::of("http://h:1/a/b?c=d#e").unwrap()).3, "/a/b?c=d", "a query, no fragment");
    for refused in ["https://h/v1", "http://user:key@h/v1", "http:///v1", "http://h:port/v1", "ftp://h"] {
        assert_eq!(Target::of(refused), None, "{refused}");
    }
    assert_eq!(Target::under("http://h:1/v1", "x").unwrap().url(), "http://h:1/v1/x", "the whole URL");
}

#[tokio::test]
async fn a_length_answer_is_read_and_its_connection_kept() {
    let answer: &[u8] =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"id\":\"x\"}\n";
    let (url, mut requests, accepted) = server(vec![(vec![answer], false), (vec![answer], false)]).await;
    let client = Arc::new(plain_client());
    assert_eq!(post(&client, &url, "{\"model\":\"m\"}").await.unwrap(), (200, Bytes::from_static(b"{\"id\":\"x\"}\n")));
    let request = requests.recv().await.unwrap();
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"), "{request}");
    assert!(request.contains(&format!("host: 127.0.0.1:{port}\r\n")), "{request}");
    assert!(request.contains("authorization: Bearer k1\r\n"), "{request}");
    assert!(request.ends_with("content-length: 13\r\n\r\n{\"model\":\"m\"}"), "{request}");
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"{\"id\":\"x\"}\n"));
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1, "the second went on the first's connection");
}

#[tokio::test]
async fn a_head_is_read_by_its_tokens_in_any_case_and_its_values_as_they_came() {
    let interim_then_closing: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: Close\r\n\
        Content-Length: 2, 2\r\nx-ratelimit-remaining-requests: 99\r\nX-Request-Id: req_1\r\nx-empty:\r\n\
        x-blank:   \r\n\r\nok";
    let conflicting: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok";
    // Neither answer's connection is closed by the server: the client closes the first.
    let (url, _requests, accepted) =
        server(vec![(vec![interim_then_closing], false), (vec![conflicting], false)]).await;
    let client = Arc::new(plain_client());
    let response = post_plain(&client, &url, &headers(), Bytes::from_static(b"{}")).await.unwrap();
    assert_eq!(response.status(), 200, "the answer after the interim one");
    assert_eq!(response.headers()["x-ratelimit-remaining-requests"], "99");
    assert_eq!(response.headers()["x-request-id"], "req_1", "a name in any case, its value as written");
    assert_eq!(response.headers()["x-empty"], "", "an empty value");
    assert_eq!(response.headers()["x-blank"], "", "a value of spaces");
    let mut body = response.into_body();
    assert_eq!(body.next_chunk().await.unwrap().unwrap(), Bytes::from_static(b"ok"), "the length, given twice");
    assert!(body.next_chunk().await.is_none());
    assert!(matches!(post(&client, &url, "{}").await, Err(Breakage::Request)), "two lengths that differ");
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2, "`Connection: Close` was not kept");
}

#[tokio::test]
async fn a_large_body_goes_after_its_head_whole() {
    let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    let (url, mut requests, _accepted) = server(vec![(vec![answer], false)]).await;
    let client = Arc::new(plain_client());
    let large: &'static str = Box::leak(format!("{{\"text\":\"{}\"}}", "x".repeat(ONE_WRITE)).into_boxed_str());
    assert_eq!(post(&client, &url, large).await.unwrap().1, Bytes::from_static(b"ok"));
    let request = requests.recv().await.unwrap();
    assert!(request.contains(&format!("content-length: {}\r\n\r\n", large.len())), "{}", &request[..200]);
    assert!(request.ends_with(large), "the body whole, after the head");
}

#[tokio::test]
async fn a_chunked_answer_is_read_across_its_pieces() {
    let pieces: Vec<&'static [u8]> = vec![
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n",
        b"7\r\ndata: 1",
        b"\r\n",
        b"a;ext=1\r\n\n\ndata: 2\n",
        b"\r\n1",
        b"\r\n\n\r\n0\r\ntrailer: x\r\n",
        b"\r\n",
    ];
    let (url, _requests, accepted) =
        server(vec![(pieces, false), (vec![b"HTTP/1.1 204 No Content\r\n\r\n"], false)]).await;
    let client = Arc::new(plain_client());
    let (status, body) = post(&client, &url, "{}").await.unwrap();
    assert_eq!((status, &body[..]), (200, &b"data: 1\n\ndata: 2\n\n"[..]));
    assert_eq!(post(&client, &url, "{}").await.unwrap(), (204, Bytes::new()), "the connection kept");
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_answer_that_closes_is_read_to_its_end_and_not_kept() {
    let to_end: Vec<&'static [u8]> = vec![b"HTTP/1.1 200 OK\r\n\r\nall ", b"of it"];
    let closing: &[u8] = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok";
    let (url, _requests, accepted) = server(vec![(to_end, true), (vec![closing], true), (vec![closing], true)]).await;
    let client = Arc::new(plain_client());
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"all of it"));
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3, "a connection each");
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_not_used() {
    let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    // The server closes after the first answer although it did not say so.
    let (url, _requests, accepted) = server(vec![(vec![answer], true), (vec![answer], false)]).await;
    let client = Arc::new(plain_client());
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(post(&client, &url, "{}").await.unwrap().1, Bytes::from_static(b"ok"));
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn failures_before_the_answer_are_told_apart_from_a_broken_body() {
    let client = Arc::new(plain_client());
    // Nothing listens: the connection failed (the pool tries another key or provider).
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Connect));
    // A server that reads the request and closes without an answer.
    let (url, _requests, _) = server(vec![(vec![], true)]).await;
    assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Request));
    // A head that is not HTTP.
    let (url, _requests, _) = server(vec![(vec![b"SMTP ready\r\n\r\n"], true)]).await;
    assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Request));
    // A body shorter than its length, and a chunk that is not one.
    let short: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc";
    let (url, _requests, _) = server(vec![(vec![short], true)]).await;
    assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Body));
    let bad: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n";
    let (url, _requests, _) = server(vec![(vec![bad], false)]).await;
    assert_eq!(post(&client, &url, "{}").await, Err(Breakage::Body));
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_as_a_get() {
    let moved: &[u8] = b"HTTP/1.1 303 See Other\r\nlocation: /v1/elsewhere\r\ncontent-length: 0\r\n\r\n";
    let answer: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    let (url, mut requests, _) = server(vec![(vec![moved], false), (vec![answer], false)]).await;
    let client = Arc::new(plain_client());
    assert_eq!(post(&client, &url, "{}").await.unwrap(), (200, Bytes::from_static(b"ok")));
    let _ = requests.recv().await.unwrap();
    let again = requests.recv().await.unwrap();
    assert!(again.starts_with("GET /v1/elsewhere HTTP/1.1\r\n"), "{again}");
    assert!(!again.contains("content-length") && !again.contains("content-type"), "{again}");
}
