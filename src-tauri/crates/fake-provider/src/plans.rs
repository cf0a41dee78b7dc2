//! Coding plans' window reads, answered as their vendors do: Z.ai's
//! `GET /api/monitor/usage/quota/limit` (the key alone as `Authorization`, no `Bearer`; a 5-hour
//! `TOKENS_LIMIT` window, `unit` 3 × `number` 5, and a weekly one, `unit` 6, each with its
//! `percentage` used and `nextResetTime` in milliseconds; the tools' `TIME_LIMIT` beside them),
//! and MiniMax's `GET /v1/api/openplatform/coding_plan/remains` (`model_remains`, whose
//! `current_interval_usage_count` is what is left). Scripted per key (`POST /__fake/windows`);
//! a key not scripted has used nothing; `raw` answers any body instead.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{error_response, key_of, next_refusal_or_listing, Dialect, Reply, Seen, Shared};

/// One key's plan windows: the share used of each, and when each resets (milliseconds since the
/// epoch; none: five hours, or a week, from the fake's clock).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PlanWindows {
    pub five_hours_used: f64,
    #[serde(default)]
    pub five_hours_reset: Option<i64>,
    #[serde(default)]
    pub week_used: f64,
    #[serde(default)]
    pub week_reset: Option<i64>,
    /// Answered instead, as `text/html`, with status 200.
    #[serde(default)]
    pub raw: Option<String>,
}

pub(crate) async fn zhipu(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    // The key alone, as Z.ai's monitor takes it.
    let key = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    if key.is_empty() || key.starts_with("Bearer ") {
        return (StatusCode::UNAUTHORIZED, Json(json!({ "code": 401, "msg": "token expired", "success": false })))
            .into_response();
    }
    match next_refusal_or_listing(&shared, Seen::listing(&key, uri.path())) {
        Reply::InvalidKey => {
            (StatusCode::OK, Json(json!({ "code": 1001, "msg": "Authorization Token非法", "success": false })))
                .into_response()
        }
        _ => {
            let (windows, now) = scripted(&shared, &key);
            if let Some(raw) = windows.raw {
                return (StatusCode::OK, [("content-type", "text/html")], raw).into_response();
            }
            let percentage = |used: f64| (used * 100.0).round();
            Json(json!({ "code": 200, "msg": "操作成功", "success": true, "data": { "level": "lite", "limits": [
                { "type": "TOKENS_LIMIT", "unit": 3, "number": 5, "percentage": percentage(windows.five_hours_used),
                  "nextResetTime": windows.five_hours_reset.unwrap_or(now + 5 * 3_600_000) },
                { "type": "TOKENS_LIMIT", "unit": 6, "number": 1, "percentage": percentage(windows.week_used),
                  "nextResetTime": windows.week_reset.unwrap_or(now + 7 * 24 * 3_600_000) },
                { "type": "TIME_LIMIT", "unit": 5, "number": 1, "usage": 100, "currentValue": 0, "remaining": 100,
                  "percentage": 0 },
            ] } }))
            .into_response()
        }
    }
}

pub(crate) async fn minimax(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    let key = key_of(&headers);
    match next_refusal_or_listing(&shared, Seen::listing(&key, uri.path())) {
        Reply::InvalidKey => error_response(Dialect::Openai, 401, &[], "invalid api key"),
        _ if key.is_empty() => error_response(Dialect::Openai, 401, &[], "no api key"),
        _ => {
            let (windows, now) = scripted(&shared, &key);
            if let Some(raw) = windows.raw {
                return (StatusCode::OK, [("content-type", "text/html")], raw).into_response();
            }
            let end = windows.five_hours_reset.unwrap_or(now + 5 * 3_600_000);
            let total = 1500.0;
            Json(json!({ "base_resp": { "status_code": 0, "status_msg": "success" }, "model_remains": [{
                "model_name": "MiniMax-M2", "start_time": end - 5 * 3_600_000, "end_time": end,
                "remains_time": end - now, "current_interval_total_count": total,
                "current_interval_usage_count": (total * (1.0 - windows.five_hours_used)).round(),
            }] }))
            .into_response()
        }
    }
}

fn scripted(shared: &Shared, key: &str) -> (PlanWindows, i64) {
    let windows = shared.script.lock().unwrap().plan_windows.get(key).cloned().unwrap_or_default();
    (windows, shared.provider_now())
}
