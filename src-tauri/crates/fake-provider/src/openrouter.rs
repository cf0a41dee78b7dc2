//! OpenRouter's part of the fake: its OpenAI-compatible API under `/api/v1`, its model list
//! (public: answered whatever key a request carries, or none), and `GET /api/v1/key`, which
//! answers what a key may spend as OpenRouter documents it (`data.limit`, `data.limit_remaining`,
//! `data.usage`, in US dollars) and refuses a key scripted as invalid with a 401.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{error_response, key_of, next_refusal_or_listing, redirect, with_key, Dialect, Reply, Seen, Shared};

/// What a key may spend, as `GET /api/v1/key` answers it.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq)]
pub struct Credit {
    /// The key's limit in US dollars; none: unlimited.
    pub limit: Option<f64>,
    /// What it spent so far.
    pub usage: f64,
}

/// `GET /api/v1/models`: the list, whatever the key (OpenRouter's is public).
pub(crate) async fn models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let mut script = shared.script.lock().unwrap();
    script.seen.push(Seen::listing(&key_of(&headers), "/api/v1/models"));
    let models = script.models.clone().unwrap_or_else(|| vec!["fake-model".into()]);
    let data: Vec<_> = models.iter().map(|id| json!({ "id": id, "name": id })).collect();
    Json(json!({ "data": data })).into_response()
}

/// `GET /api/v1/key`: the key's credit, or its scripted refusal.
pub(crate) async fn key(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    let key = key_of(&headers);
    match next_refusal_or_listing(&shared, Seen::listing(&key, "/api/v1/key")) {
        Reply::Status { status, headers, message } => {
            error_response(Dialect::Openai, status, &headers, &with_key(&message, &key))
        }
        Reply::InvalidKey => error_response(Dialect::Openai, 401, &[], "No auth credentials found"),
        Reply::Redirect { status, to } => redirect(status, &to, &uri),
        _ if key.is_empty() => error_response(Dialect::Openai, 401, &[], "No auth credentials found"),
        _ => {
            let credit = shared.script.lock().unwrap().credits.get(&key).copied().unwrap_or_default();
            let remaining = credit.limit.map(|limit| limit - credit.usage);
            let label = format!("{}...{}", &key[..key.len().min(11)], &key[key.len().saturating_sub(3)..]);
            Json(json!({ "data": {
                "label": label, "limit": credit.limit, "limit_reset": null, "limit_remaining": remaining,
                "include_byok_in_limit": false, "usage": credit.usage, "usage_daily": credit.usage,
                "usage_weekly": credit.usage, "usage_monthly": credit.usage, "is_free_tier": false,
            } }))
            .into_response()
        }
    }
}
