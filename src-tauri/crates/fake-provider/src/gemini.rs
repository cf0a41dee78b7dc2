//! The fake's Gemini dialect: `POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent` (SSE with `alt=sse`, one JSON array without), `:countTokens`, and
//! `GET /v1beta/models` in pages. Errors come in Google's shape, with the details Google sends:
//! `QuotaFailure` naming a per-minute or per-day quota, `RetryInfo`, `ErrorInfo` for an invalid
//! key. Quotas belong to a *project*, shared by every key of it, as Google counts them.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{complete, next_refusal_or_listing, redirect, with_key, Dialect, Reply, Seen, Shared};

/// The quota id of Google's per-minute request quota (free tier).
pub const PER_MINUTE_QUOTA: &str = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier";
/// The quota id of Google's per-day request quota (free tier).
pub const PER_DAY_QUOTA: &str = "GenerateRequestsPerDayPerProjectPerModel-FreeTier";
/// Thought tokens every Gemini reply reports (`thoughtsTokenCount`), besides one output token
/// per piece of text.
pub const THOUGHT_TOKENS: u64 = 2;

/// A project's quotas, per model, shared by every key of the project: `requests` per window of
/// `window_ms` (Google's per-minute quota; shorter windows make benchmarks quick) and at most
/// `per_day` a day (the day ends at midnight Pacific time).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProjectLimit {
    pub requests: u32,
    pub window_ms: u64,
    #[serde(default)]
    pub per_day: Option<u32>,
}

/// What a project has used of one model's quotas.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProjectUse {
    started: i64,
    used: u32,
    day_ends: i64,
    day_used: u32,
}

/// The key a Gemini request carries: `x-goog-api-key`, or `?key=`.
pub(crate) fn key_of(headers: &HeaderMap, uri: &Uri) -> String {
    if let Some(key) = headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()) {
        return key.to_owned();
    }
    uri.query()
        .and_then(|q| q.split('&').filter_map(|p| p.split_once('=')).find(|(name, _)| *name == "key"))
        .map(|(_, key)| key.to_owned())
        .unwrap_or_default()
}

/// Admits a request of `key` for `model` against its project's quotas (`None`), or answers the
/// 429 Google would.
pub(crate) fn admit(shared: &Shared, key: &str, model: &str) -> Option<Response> {
    let now = shared.provider_now();
    let mut script = shared.script.lock().unwrap();
    let project = script.projects.get(key).cloned().unwrap_or_else(|| key.to_owned());
    let limit = script.project_limits.get(&project).copied()?;
    let day_ends = || keypool::pacific_day_end(keypool::Timestamp::from_millis(now)).as_millis();
    let usage = script.project_usage.entry((project, model.to_owned())).or_insert_with(|| ProjectUse {
        started: now,
        used: 0,
        day_ends: day_ends(),
        day_used: 0,
    });
    if now >= usage.day_ends {
        usage.day_ends = day_ends();
        usage.day_used = 0;
    }
    if now >= usage.started + limit.window_ms as i64 {
        usage.started = now;
        usage.used = 0;
    }
    let refused = if limit.per_day.is_some_and(|per_day| usage.day_used >= per_day) {
        Some((PER_DAY_QUOTA, "0s".to_owned()))
    } else if usage.used >= limit.requests {
        let wait_ms = (usage.started + limit.window_ms as i64 - now).max(0) as u64;
        Some((PER_MINUTE_QUOTA, format!("{}s", wait_ms.div_ceil(1000))))
    } else {
        None
    };
    if let Some((quota_id, delay)) = refused {
        script.refused += 1;
        return Some(quota_refused(quota_id, Some(&delay), model));
    }
    usage.used += 1;
    usage.day_used += 1;
    None
}

/// Google's canonical status name for an HTTP status.
fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// An error object as Google writes it.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    json!({ "error": { "code": status, "message": message, "status": status_name(status) } })
}

/// A 429 naming `quota_id`, with `RetryInfo` when `retry_delay` is given, as Google sends it
/// (billing words included, whatever the quota).
pub(crate) fn quota_refused(quota_id: &str, retry_delay: Option<&str>, model: &str) -> Response {
    let mut details = vec![
        json!({ "@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": quota_id,
            "quotaDimensions": { "location": "global", "model": model },
            "quotaValue": "15" }] }),
        json!({ "@type": "type.googleapis.com/google.rpc.Help",
            "links": [{ "description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits" }] }),
    ];
    if let Some(delay) = retry_delay {
        details.push(json!({ "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay }));
    }
    let body = json!({ "error": { "code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": format!("You exceeded your current quota, please check your plan and billing details. \
            For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. \
            Quota exceeded for metric: {quota_id}"),
        "details": details } });
    (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response()
}

/// Google's answer to a key that is not one.
pub(crate) fn invalid_key() -> Response {
    let body = json!({ "error": { "code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
            "domain": "googleapis.com", "metadata": { "service": "generativelanguage.googleapis.com" } }] } });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// One GenerateContentResponse holding `text`.
pub(crate) fn chunk(text: &str) -> Value {
    json!({ "candidates": [{ "content": { "parts": [{ "text": text }], "role": "model" }, "index": 0 }],
            "modelVersion": "fake" })
}

/// The usage every reply of `output` pieces reports.
pub(crate) fn usage(output: usize) -> Value {
    json!({ "promptTokenCount": crate::INPUT_TOKENS, "cachedContentTokenCount": crate::CACHED_TOKENS,
            "candidatesTokenCount": output, "thoughtsTokenCount": THOUGHT_TOKENS,
            "totalTokenCount": crate::INPUT_TOKENS + output as u64 + THOUGHT_TOKENS })
}

/// The last GenerateContentResponse of a reply: its finish and its usage.
pub(crate) fn finish(output: usize) -> Value {
    json!({ "candidates": [{ "content": { "parts": [{ "text": "" }], "role": "model" }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": usage(output), "modelVersion": "fake" })
}

/// A reply blocked by the safety filter: the prompt (`promptFeedback.blockReason`) or the reply
/// (`finishReason: SAFETY`).
pub(crate) fn blocked(prompt: bool) -> Value {
    if prompt {
        json!({ "promptFeedback": { "blockReason": "SAFETY" }, "usageMetadata": usage(0) })
    } else {
        json!({ "candidates": [{ "finishReason": "SAFETY", "index": 0,
            "safetyRatings": [{ "category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH" }] }] })
    }
}

/// A whole reply.
pub(crate) fn whole(text: &str, output: usize) -> Value {
    json!({ "candidates": [{ "content": { "parts": [{ "text": text }], "role": "model" }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": usage(output), "modelVersion": "fake" })
}

/// What the fake saw of a Gemini request, or why its parts are not in Gemini's shape.
pub(crate) fn seen(
    key: String,
    model: &str,
    method: &str,
    stream: bool,
    body: &Value,
    raw: &[u8],
) -> Result<Seen, String> {
    let contents = body["contents"].as_array();
    let text_of = |parts: &Value| {
        parts.as_array().map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect::<String>())
    };
    let user_turns = contents.into_iter().flatten().filter(|t| t["role"].as_str().is_none_or(|r| r == "user"));
    let mut images = Vec::new();
    for turn in user_turns {
        images.extend(crate::content::read(crate::Dialect::Gemini, &turn["parts"])?.images);
    }
    Ok(Seen {
        key,
        path: format!("/v1beta/models/{model}:{method}"),
        stream,
        model: model.to_owned(),
        messages: contents.map_or(0, Vec::len),
        system: text_of(&body["systemInstruction"]["parts"]),
        last_user: contents
            .and_then(|turns| turns.iter().rev().find(|t| t["role"].as_str().is_none_or(|r| r == "user")))
            .and_then(|turn| text_of(&turn["parts"]))
            .unwrap_or_default(),
        body: String::from_utf8_lossy(raw).into_owned(),
        anthropic_version: None,
        images,
        breakpoints: 0,
        hop: None,
    })
}

/// How a Gemini reply is streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Streamed {
    /// `alt=sse`: each GenerateContentResponse one SSE event.
    Sse,
    /// One JSON array of GenerateContentResponses, written as they come.
    Array,
}

/// `POST /v1beta/models/{model}:{method}`.
pub(crate) async fn action(
    State(shared): State<Arc<Shared>>,
    Path(action): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let Some((model, method)) = action.rsplit_once(':') else {
        return (StatusCode::NOT_FOUND, Json(error_body(404, "no such method"))).into_response();
    };
    let model = model.strip_prefix("models/").unwrap_or(model).to_owned();
    let key = key_of(&headers, &uri);
    let sse = uri.query().is_some_and(|q| q.split('&').any(|p| p == "alt=sse"));
    match method {
        "generateContent" => {
            complete(shared, Dialect::Gemini, Some(Target { key, model, streamed: None }), uri, headers, raw).await
        }
        "streamGenerateContent" => {
            let streamed = Some(if sse { Streamed::Sse } else { Streamed::Array });
            complete(shared, Dialect::Gemini, Some(Target { key, model, streamed }), uri, headers, raw).await
        }
        "countTokens" => {
            let body = serde_json::from_slice::<Value>(&raw).unwrap_or(Value::Null);
            let seen = match seen(key.clone(), &model, method, false, &body, &raw) {
                Ok(seen) => seen,
                Err(message) => {
                    return refusal(Reply::Status { status: 400, headers: Vec::new(), message }, &key, &model)
                }
            };
            match next_refusal_or_listing(&shared, seen) {
                reply @ (Reply::Status { .. } | Reply::QuotaRefused { .. } | Reply::InvalidKey) => {
                    refusal(reply, &key, &model)
                }
                _ => Json(json!({ "totalTokens": raw.len() / 4 })).into_response(),
            }
        }
        _ => (StatusCode::NOT_FOUND, Json(error_body(404, &format!("method {method} is not served")))).into_response(),
    }
}

/// Where a Gemini completion goes: its key, its model, and how it streams (`None`: whole).
pub(crate) struct Target {
    pub key: String,
    pub model: String,
    pub streamed: Option<Streamed>,
}

/// A scripted refusal in Google's words.
pub(crate) fn refusal(reply: Reply, key: &str, model: &str) -> Response {
    match reply {
        Reply::Status { status, headers, message } => {
            crate::error_response(Dialect::Gemini, status, &headers, &with_key(&message, key))
        }
        Reply::QuotaRefused { quota_id, retry_delay } => quota_refused(&quota_id, retry_delay.as_deref(), model),
        Reply::InvalidKey => invalid_key(),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, Json(error_body(500, "not a refusal"))).into_response(),
    }
}

/// `GET /v1beta/models?pageSize=N&pageToken=T`: the scripted models (each generates content),
/// and an embedding model that does not, in pages.
pub(crate) async fn models(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    let key = key_of(&headers, &uri);
    let seen = Seen::listing(&key, "/v1beta/models");
    match next_refusal_or_listing(&shared, seen) {
        Reply::Redirect { status, to } => return redirect(status, &to, &uri),
        reply @ (Reply::Status { .. } | Reply::QuotaRefused { .. } | Reply::InvalidKey) => {
            return refusal(reply, &key, "")
        }
        _ => {}
    }
    let mut models: Vec<Value> = shared
        .script
        .lock()
        .unwrap()
        .models
        .clone()
        .unwrap_or_else(|| vec!["fake-model".into()])
        .iter()
        .map(|id| {
            json!({ "name": format!("models/{id}"), "displayName": id,
            "supportedGenerationMethods": ["generateContent", "countTokens"] })
        })
        .collect();
    models.push(json!({ "name": "models/text-embedding-fake", "supportedGenerationMethods": ["embedContent"] }));
    let param = |name: &str| {
        uri.query()?.split('&').filter_map(|p| p.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.to_owned())
    };
    let size = param("pageSize").and_then(|s| s.parse().ok()).unwrap_or(50usize).clamp(1, 1000);
    let start: usize = param("pageToken").and_then(|t| t.parse().ok()).unwrap_or(0);
    let page: Vec<&Value> = models.iter().skip(start).take(size).collect();
    let mut body = json!({ "models": page });
    if start + page.len() < models.len() {
        body["nextPageToken"] = Value::String((start + page.len()).to_string());
    }
    Json(body).into_response()
}
