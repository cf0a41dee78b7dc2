//! SIGTERM drains: `/readyz` says no from the first moment, new requests are refused with a
//! retryable 503, the streams in flight run to their end (the fake provider holds them open until
//! the test releases them: no time passes for them), and what is still running when the drain
//! ends (its limit, or a second SIGTERM) ends with an error event in its client's dialect.

use futures_util::StreamExt;

use crate::support::*;

/// The fake's streams hold after "early" until the test releases this gate.
const GATE: &str = "drain";

fn held() -> Reply {
    Reply::Hold { chunks_before: vec!["early".into()], gate: GATE.into(), chunks_after: vec!["late".into()] }
}

/// A config serving the fake as "fake", with routes that bring Anthropic's and Google's clients
/// to it (translated), and `top` before it all.
fn drain_config(fake_url: &str, top: &str) -> String {
    let routes = "[[routes]]\nmodel = \"claude-*\"\nto = \"fake/fake-model\"\n\
                  [[routes]]\nmodel = \"gemini-*\"\nto = \"fake/fake-model\"\n";
    format!("{top}{}{routes}", config(fake_url, &["a"]))
}

#[derive(Clone, Copy, Debug)]
enum Dialect {
    OpenAi,
    Anthropic,
    Gemini,
}

/// A stream opened in `dialect`, read until its first text ("early") came: its status and what
/// came so far, and the rest of the response to read.
struct Open {
    status: u16,
    head: String,
    rest: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
}

impl Open {
    async fn start(server: &Server, dialect: Dialect, n: usize) -> Open {
        let client = client();
        let conversation = format!("stream {n}");
        let request = match dialect {
            Dialect::OpenAi => client.post(server.url("/v1/chat/completions")).bearer_auth(server.token()).json(
                &json!({ "model": MODEL, "stream": true, "messages": [{ "role": "user", "content": conversation }] }),
            ),
            Dialect::Anthropic => client
                .post(server.url("/v1/messages"))
                .header("x-api-key", server.token())
                .header("anthropic-version", "2023-06-01")
                .json(&json!({ "model": "claude-drain", "max_tokens": 64, "stream": true,
                               "messages": [{ "role": "user", "content": conversation }] })),
            Dialect::Gemini => client
                .post(server.url("/v1beta/models/gemini-drain:streamGenerateContent?alt=sse"))
                .header("x-goog-api-key", server.token())
                .json(&json!({ "contents": [{ "role": "user", "parts": [{ "text": conversation }] }] })),
        };
        let response = request.header("x-keypool-session", &conversation).send().await.expect("the server answers");
        let status = response.status().as_u16();
        let mut rest = response.bytes_stream().boxed();
        let mut head = String::new();
        while !head.contains("early") {
            match rest.next().await {
                Some(Ok(chunk)) => head.push_str(&String::from_utf8_lossy(&chunk)),
                other => panic!("{dialect:?} stream {n} ended before its first text ({other:?}): {head}"),
            }
        }
        Open { status, head, rest }
    }

    /// Reads the rest; the whole body.
    async fn finish(mut self) -> String {
        let mut body = self.head;
        while let Some(chunk) = self.rest.next().await {
            body.push_str(&String::from_utf8_lossy(&chunk.expect("the stream ends cleanly at its end")));
        }
        body
    }
}

async fn status_of(server: &Server, path: &str) -> (u16, String) {
    let response = client().get(server.url(path)).send().await.expect("the server answers");
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn sigterm_lets_twenty_streams_run_to_their_end_not_ready_from_its_first_moment() {
    let fake = FakeProvider::start().await;
    fake.always(&key("a"), held());
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &drain_config(&fake.url(), ""), &[]);
    server.healthy().await;
    assert_eq!(status_of(&server, "/readyz").await.0, 200, "ready before the drain");
    let mut streams = Vec::new();
    for n in 0..20 {
        let open = Open::start(&server, Dialect::OpenAi, n).await;
        assert_eq!(open.status, 200, "stream {n} is answered");
        streams.push(open);
    }
    assert_eq!(fake.seen().len(), 20, "twenty streams are held open upstream");

    server.signal("TERM");
    // The drain sets readiness off before it logs: once the line is there, /readyz must say no.
    server.logged("draining: not ready").await;
    let (ready, why) = status_of(&server, "/readyz").await;
    assert_eq!(ready, 503, "/readyz says no from the drain's first moment: {why}");
    assert!(why.contains("draining"), "and says why: {why}");
    let (healthy, health) = status_of(&server, "/healthz").await;
    assert_eq!(healthy, 200, "/healthz stays 200 while draining (the process is fine): {health}");
    let (status, headers, body) = server.ask_as(&server.token(), "after the drain began").await;
    assert_eq!(status, 503, "a new request is refused: {body}");
    assert_eq!(headers.get("retry-after").map(|v| v.to_str().unwrap()), Some("1"), "retryable, soon");
    assert_eq!(headers.get("x-should-retry").map(|v| v.to_str().unwrap()), Some("true"), "SDKs retry it");
    assert!(body.contains("shutting down"), "in OpenAI's error shape, saying why: {body}");
    assert_eq!(fake.seen().len(), 20, "the refused request never went upstream");
    assert!(server.running(), "the server waits for the twenty streams");

    fake.release(GATE);
    for (n, stream) in streams.into_iter().enumerate() {
        let body = stream.finish().await;
        assert!(body.contains("late") && body.contains("[DONE]"), "stream {n} ran to its end: {body}");
        assert!(!body.contains("shutting down"), "stream {n} was not cut: {body}");
    }
    assert_eq!(server.exited().await, Some(0), "then the server exits cleanly:\n{}", server.log());
    let log = server.log();
    assert!(log.contains("drained: every request in flight ran to its end"), "and says so:\n{log}");
}

#[tokio::test]
async fn a_second_sigterm_cuts_every_stream_off_at_once_with_an_error_event_in_its_dialect() {
    let fake = FakeProvider::start().await;
    fake.always(&key("a"), held());
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &drain_config(&fake.url(), ""), &[]);
    server.healthy().await;
    let mut streams = Vec::new();
    for (n, dialect) in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini].into_iter().enumerate() {
        let open = Open::start(&server, dialect, n).await;
        assert_eq!(open.status, 200, "the {dialect:?} stream is answered: {}", open.head);
        streams.push((dialect, open));
    }
    server.signal("TERM");
    server.logged("draining: not ready").await;
    server.signal("TERM");
    for (dialect, stream) in streams {
        // Google's events end with CRLF CRLF.
        let body = stream.finish().await.replace("\r\n", "\n");
        let last = body.trim_end().rsplit("\n\n").next().unwrap_or_default();
        assert!(last.contains("shutting down"), "the {dialect:?} stream ends saying why: {body}");
        let shaped = match dialect {
            Dialect::OpenAi => last.starts_with("data: {\"error\":"),
            Dialect::Anthropic => last.starts_with("event: error\ndata: {"),
            Dialect::Gemini => last.starts_with("data: {\"error\":") && last.contains("UNAVAILABLE"),
        };
        assert!(shaped, "in the {dialect:?} dialect's error event: {last:?}");
        assert!(!body.contains("late"), "cut before the held part: {body}");
    }
    assert_eq!(server.exited().await, Some(0), "the server exits without waiting for the streams");
    assert!(server.log().contains("asked again to stop"), "and says why:\n{}", server.log());
}

#[tokio::test]
async fn what_outlasts_drain_seconds_is_cut_off_with_an_error_event() {
    let fake = FakeProvider::start().await;
    fake.always(&key("a"), held());
    let tmp = tempfile::tempdir().unwrap();
    // No wait at all: the limit passes as the drain begins.
    let server = Server::start(tmp.path(), &drain_config(&fake.url(), "drain_seconds = 0\n"), &[]);
    server.healthy().await;
    let stream = Open::start(&server, Dialect::OpenAi, 0).await;
    server.signal("TERM");
    let body = stream.finish().await;
    assert!(body.trim_end().ends_with('}') && body.contains("shutting down"), "an error event ends it: {body}");
    assert_eq!(server.exited().await, Some(0), "and the server exits");
    assert!(server.log().contains("(drain_seconds): cutting them off"), "saying why:\n{}", server.log());
}
