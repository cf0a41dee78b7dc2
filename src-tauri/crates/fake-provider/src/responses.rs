//! OpenAI's Responses API (`POST /v1/responses`, Codex CLI's), whole and streamed, as OpenAI
//! documents it: a stream of named events (`response.created`, `response.output_item.added`,
//! `response.output_text.delta`, …, `response.completed` with the usage), errors as `error`
//! events, refusals in OpenAI's error shape with its rate-limit headers. The answer follows the
//! key's script as the other dialects' do (text, a tool call, a refusal, an error in the stream,
//! a dropped connection).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde_json::{json, Value};

use crate::{
    admit, announce, error_response, key_of, next_reply, quota_exceeded, rate_limited, redirect, status_for, with_key,
    Admission, Dialect, Reply, Seen, Shared, CACHED_TOKENS, INPUT_TOKENS,
};

/// The usage every answer reports: as the other dialects', in the Responses API's names.
fn usage(output: usize) -> Value {
    json!({ "input_tokens": INPUT_TOKENS, "input_tokens_details": { "cached_tokens": CACHED_TOKENS },
            "output_tokens": output, "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": INPUT_TOKENS + output as u64 })
}

/// A response object with `output` items.
fn response(model: &str, status: &str, output: Vec<Value>, usage: Option<Value>) -> Value {
    json!({ "id": "resp_fake", "object": "response", "created_at": 0, "status": status, "model": model,
            "output": output, "usage": usage })
}

fn message(text: &str) -> Value {
    json!({ "type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }] })
}

/// One named event, numbered.
fn event(sequence: &mut u64, mut data: Value) -> Bytes {
    data["sequence_number"] = json!(*sequence);
    *sequence += 1;
    let name = data["type"].as_str().unwrap_or_default().to_owned();
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// `POST /v1/responses` (and `/v1/responses/compact`, answered the same way).
pub(crate) async fn respond(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, raw: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&raw) else {
        return (StatusCode::BAD_REQUEST, "the body is not JSON").into_response();
    };
    let key = key_of(&headers);
    if shared.script.lock().unwrap().without_responses {
        let mut seen = Seen::listing(&key, uri.path());
        seen.body = String::from_utf8_lossy(&raw).into_owned();
        shared.script.lock().unwrap().seen.push(seen);
        return (StatusCode::NOT_FOUND, "404 page not found").into_response();
    }
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let stream = body["stream"].as_bool().unwrap_or(false);
    let last_user = match &body["input"] {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .rev()
            .find(|item| item["role"] == "user")
            .and_then(|item| item["content"].as_array())
            .and_then(|parts| parts.iter().find_map(|part| part["text"].as_str()))
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    };
    let seen = Seen {
        key: key.clone(),
        path: uri.path().to_owned(),
        stream,
        model: model.clone(),
        messages: body["input"].as_array().map_or(1, Vec::len),
        system: body["instructions"].as_str().map(str::to_owned),
        last_user,
        body: String::from_utf8_lossy(&raw).into_owned(),
        anthropic_version: None,
        images: Vec::new(),
        breakpoints: 0,
        hop: headers.get("x-keypool-hop").and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    let clock = shared.script.lock().unwrap().provider_clock;
    let window = match admit(&shared, &key, &model) {
        Admission::Unlimited => None,
        Admission::Admitted(announced) => Some(announced),
        Admission::Refused(announced) => {
            shared.script.lock().unwrap().seen.push(seen);
            return rate_limited(Dialect::Openai, announced, clock);
        }
    };
    let reply = next_reply(&shared, seen);
    let mut answer = match reply {
        Reply::Status { status, headers, message } => {
            return error_response(Dialect::Openai, status, &headers, &with_key(&message, &key))
        }
        Reply::InvalidKey => return error_response(Dialect::Openai, 401, &[], "Incorrect API key provided"),
        Reply::QuotaExceeded => return quota_exceeded(Dialect::Openai),
        Reply::QuotaRefused { .. } => return rate_limited_plain(),
        Reply::Redirect { status, to } => return redirect(status, &to, &uri),
        reply if stream => streamed(&model, reply, &key),
        reply => whole(&model, reply, &key),
    };
    if let Some(announced) = window {
        announce(&mut answer, Dialect::Openai, announced, clock);
    }
    answer
}

fn rate_limited_plain() -> Response {
    error_response(Dialect::Openai, 429, &[("retry-after".into(), "1".into())], "Rate limit reached")
}

fn whole(model: &str, reply: Reply, key: &str) -> Response {
    match reply {
        Reply::Text { chunks } | Reply::Slow { chunks, .. } => {
            Json(response(model, "completed", vec![message(&chunks.concat())], Some(usage(chunks.len()))))
                .into_response()
        }
        Reply::StreamError { error_type, message, .. } => {
            error_response(Dialect::Openai, status_for(&error_type), &[], &with_key(&message, key))
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "unsupported without streaming").into_response(),
    }
}

/// The events of a streamed answer, all at once (the fake's other dialects stream piece by piece
/// for the tests of pauses and holds; a Responses answer needs none of those).
fn streamed(model: &str, reply: Reply, key: &str) -> Response {
    let mut sequence = 0;
    let mut events = vec![
        event(
            &mut sequence,
            json!({ "type": "response.created", "response": response(model, "in_progress", vec![], None) }),
        ),
        event(
            &mut sequence,
            json!({ "type": "response.in_progress", "response": response(model, "in_progress", vec![], None) }),
        ),
    ];
    let mut text_events = |chunks: &[String], sequence: &mut u64| {
        events.push(event(sequence, json!({ "type": "response.output_item.added", "output_index": 0,
            "item": { "type": "message", "id": "msg_fake", "status": "in_progress", "role": "assistant", "content": [] } })));
        events.push(event(
            sequence,
            json!({ "type": "response.content_part.added", "item_id": "msg_fake",
            "output_index": 0, "content_index": 0, "part": { "type": "output_text", "text": "", "annotations": [] } }),
        ));
        for chunk in chunks {
            events.push(event(
                sequence,
                json!({ "type": "response.output_text.delta", "item_id": "msg_fake",
                "output_index": 0, "content_index": 0, "delta": chunk }),
            ));
        }
    };
    let ending: Option<Bytes> = match reply {
        Reply::Text { chunks } | Reply::Slow { chunks, .. } => {
            text_events(&chunks, &mut sequence);
            let text = chunks.concat();
            events.push(event(
                &mut sequence,
                json!({ "type": "response.output_text.done", "item_id": "msg_fake",
                "output_index": 0, "content_index": 0, "text": text }),
            ));
            events.push(event(
                &mut sequence,
                json!({ "type": "response.output_item.done", "output_index": 0, "item": message(&text) }),
            ));
            let done = response(model, "completed", vec![message(&text)], Some(usage(chunks.len())));
            Some(event(&mut sequence, json!({ "type": "response.completed", "response": done })))
        }
        Reply::StreamError { chunks_before, error_type, message } => {
            text_events(&chunks_before, &mut sequence);
            let code = match status_for(&error_type) {
                429 => "rate_limit_exceeded",
                401 => "invalid_api_key",
                _ => "server_error",
            };
            Some(event(
                &mut sequence,
                json!({ "type": "error", "code": code, "message": with_key(&message, key), "param": null }),
            ))
        }
        // The connection ends before the response is complete.
        Reply::Drop { chunks_before } | Reply::Unfinished { chunks: chunks_before } => {
            text_events(&chunks_before, &mut sequence);
            None
        }
        _ => return (StatusCode::INTERNAL_SERVER_ERROR, "unsupported by the fake's Responses API").into_response(),
    };
    events.extend(ending);
    let body: Vec<u8> = events.concat();
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(Body::from(body))
        .expect("static response parts")
}
