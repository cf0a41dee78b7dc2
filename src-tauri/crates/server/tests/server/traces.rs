//! OpenTelemetry traces, against an OTLP/HTTP receiver of the test's own (a small HTTP server
//! decoding the protobuf the exporter sends): one trace per request, a child span per upstream
//! attempt with its provider, key id, status, wait and tokens, and nothing secret in any of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::support::*;

/// What the receiver was sent: each export's headers and body.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(axum::http::HeaderMap, bytes::Bytes)>>>);

/// An OTLP/HTTP receiver on a free loopback port: `POST /v1/traces` answered 200 with an empty
/// `ExportTraceServiceResponse`, what came kept.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    let kept = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: bytes::Bytes| {
            let kept = kept.clone();
            async move {
                kept.0.lock().unwrap().push((headers, body));
                ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

impl Received {
    /// Every span of every export, and the resource attributes of the first.
    fn spans(&self) -> (Vec<Span>, HashMap<String, String>) {
        let mut spans = Vec::new();
        let mut resource = HashMap::new();
        for (headers, body) in self.0.lock().unwrap().iter() {
            assert_eq!(headers["content-type"], "application/x-protobuf", "OTLP/HTTP in protobuf");
            let request = ExportTraceServiceRequest::decode(body.as_ref()).expect("an OTLP export");
            for batch in request.resource_spans {
                if let Some(attributes) = batch.resource.map(|r| r.attributes) {
                    resource.extend(attributes.into_iter().map(|a| (a.key, text(a.value.and_then(|v| v.value)))));
                }
                spans.extend(batch.scope_spans.into_iter().flat_map(|scope| scope.spans));
            }
        }
        (spans, resource)
    }

    fn everything(&self) -> Vec<u8> {
        self.0.lock().unwrap().iter().flat_map(|(_, body)| body.to_vec()).collect()
    }
}

fn text(value: Option<Value>) -> String {
    match value {
        Some(Value::StringValue(text)) => text,
        Some(Value::IntValue(n)) => n.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// A span's attributes as text.
fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes.iter().map(|a| (a.key.clone(), text(a.value.clone().and_then(|v| v.value)))).collect()
}

const PROMPT: &str = "the canary prompt 7f3a9c";

#[tokio::test]
async fn each_request_is_a_trace_its_attempts_children_with_no_key_token_or_prompt_in_it() {
    let fake = FakeProvider::start().await;
    let (collector, received) = receiver().await;
    let tmp = tempfile::tempdir().unwrap();
    let otel = format!(
        "[otel]\nendpoint = \"{collector}\"\nservice_name = \"keypool-test\"\n\
         headers = {{ authorization = \"$KP_COLLECTOR_AUTH\" }}\n"
    );
    let text = format!("{}{otel}", config(&fake.url(), &["x", "y"]));
    let collector_token = "Bearer collector-secret-5e1d";
    let server = Server::start_with_env(tmp.path(), &text, &[("KP_COLLECTOR_AUTH", collector_token)]);
    server.healthy().await;
    fake.script(&key("x"), [Reply::status_with(429, &[("retry-after", "120")])]);
    for turn in 0..3 {
        assert_eq!(server.ask(&format!("{PROMPT} {turn}")).await.0, 200, "answered (one fails over)");
    }
    server.signal("TERM");
    assert_eq!(server.exited().await, Some(0), "the server stops, sending the spans it holds:\n{}", server.log());

    let (spans, resource) = received.spans();
    assert_eq!(resource.get("service.name").map(String::as_str), Some("keypool-test"), "the resource names it");
    let requests: Vec<&Span> = spans.iter().filter(|s| s.name == "POST /v1/chat/completions").collect();
    assert_eq!(requests.len(), 3, "one span per request: {:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    let attempts: Vec<&Span> = spans.iter().filter(|s| s.name == "attempt").collect();
    assert_eq!(attempts.len(), 4, "one span per attempt: three answers and one refusal");
    for request in &requests {
        let at = attributes(request);
        assert_eq!(request.kind, 2, "a server span");
        assert!(request.parent_span_id.is_empty(), "a request is a trace's root");
        assert_eq!(at["http.request.method"], "POST");
        assert_eq!(at["url.path"], "/v1/chat/completions");
        assert_eq!(at["http.response.status_code"], "200");
        assert_eq!(at["keypool.dialect"], "openai");
        assert_eq!(at["client.address"], "127.0.0.1");
        let children: Vec<&&Span> =
            attempts.iter().filter(|a| a.trace_id == request.trace_id && a.parent_span_id == request.span_id).collect();
        assert!(!children.is_empty(), "each request's attempts are its children");
        assert!(
            children.iter().all(|c| c.start_time_unix_nano >= request.start_time_unix_nano
                && c.end_time_unix_nano <= request.end_time_unix_nano),
            "and lie within it"
        );
    }
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_keypool-server"))
        .args(["keys", "list", "--data-dir", server.dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id_of = |label: &str| {
        keys.as_array().unwrap().iter().find(|k| k["label"] == label).unwrap()["id"].as_str().unwrap().to_owned()
    };
    let refused: Vec<HashMap<String, String>> =
        attempts.iter().map(|a| attributes(a)).filter(|a| a["http.response.status_code"] == "429").collect();
    assert_eq!(refused.len(), 1, "one attempt was refused");
    let refused = &refused[0];
    assert_eq!(refused["keypool.key_id"], id_of("x"), "by the key scripted to refuse, named by its id");
    assert_eq!(refused["keypool.outcome"], "rate_limited");
    assert_eq!(refused["keypool.provider"], "fake");
    assert_eq!(refused["keypool.attempt"], "1");
    let failed_over = attempts
        .iter()
        .find(|a| attributes(a)["keypool.attempt"] == "2")
        .expect("the refused request's second attempt");
    let second = attributes(failed_over);
    assert_eq!(second["keypool.key_id"], id_of("y"), "the second attempt went with the other key");
    assert_eq!(second["http.response.status_code"], "200");
    assert_eq!(
        (second["gen_ai.usage.input_tokens"].as_str(), second["gen_ai.usage.output_tokens"].as_str()),
        ("11", "3")
    );
    assert_eq!(second["keypool.usage.cached_tokens"], "5", "the tokens the fake reported");
    assert!(second["keypool.wait_ms"].parse::<u64>().is_ok(), "and the wait for the key: {second:?}");
    assert_eq!(second["gen_ai.request.model"], MODEL);
    let refused_span =
        attempts.iter().find(|a| attributes(a)["keypool.attempt"] == "1" && a.trace_id == failed_over.trace_id);
    assert_eq!(refused_span.map(|s| s.status.as_ref().map(|s| s.code)), Some(Some(2)), "the refusal is an error");

    let sent = received.everything();
    let headers = received.0.lock().unwrap()[0].0.clone();
    assert_eq!(headers["authorization"], collector_token, "the collector's token, read from $KP_COLLECTOR_AUTH");
    let contains = |needle: &str| sent.windows(needle.len()).any(|w| w == needle.as_bytes());
    for key in [key("x"), key("y")] {
        assert!(!contains(&key[..16]), "no run of a key in any span");
    }
    assert!(!contains(&server.token()[..16]), "nor of the server's token");
    assert!(!contains("canary prompt"), "nor of the prompt");
    assert!(!server.log().contains("collector-secret"), "the collector's token is never logged");
}
