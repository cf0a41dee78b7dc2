//! The balance reads of prepaid vendors, answered as each documents them: DeepSeek's
//! `GET /user/balance` (`is_available`, `balance_infos` with amounts written as text), Moonshot's
//! `GET /v1/users/me/balance` (`data.available_balance`, a number) and SiliconFlow's
//! `GET /v1/user/info` (`data.totalBalance`, text). A key's balance is scripted per key (a key
//! not scripted holds 100.00); a key scripted as invalid, or none, is refused with a 401; a key
//! may be scripted to answer any body instead (HTML, broken JSON), to test what a bad answer does.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{error_response, key_of, next_refusal_or_listing, redirect, with_key, Dialect, Reply, Seen, Shared};

/// What one key's account holds, as its vendor's balance read answers.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VendorBalance {
    pub amount: f64,
    /// DeepSeek's `currency` (the others' answers name none).
    #[serde(default = "yuan")]
    pub currency: String,
    /// DeepSeek's `is_available`.
    #[serde(default = "yes")]
    pub available: bool,
    /// Answered instead of the balance, as `content_type`, with status 200.
    #[serde(default)]
    pub raw: Option<String>,
}

fn yuan() -> String {
    "CNY".into()
}

fn yes() -> bool {
    true
}

impl VendorBalance {
    /// `amount` in `currency`, available.
    pub fn of(amount: f64, currency: &str) -> VendorBalance {
        VendorBalance { amount, currency: currency.into(), available: true, raw: None }
    }
}

impl Default for VendorBalance {
    fn default() -> Self {
        VendorBalance::of(100.0, "CNY")
    }
}

#[derive(Clone, Copy)]
enum Vendor {
    DeepSeek,
    Moonshot,
    SiliconFlow,
}

pub(crate) async fn deepseek(state: State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    answer(state, uri, headers, Vendor::DeepSeek)
}

pub(crate) async fn moonshot(state: State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    answer(state, uri, headers, Vendor::Moonshot)
}

pub(crate) async fn siliconflow(state: State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    answer(state, uri, headers, Vendor::SiliconFlow)
}

fn answer(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, vendor: Vendor) -> Response {
    let key = key_of(&headers);
    match next_refusal_or_listing(&shared, Seen::listing(&key, uri.path())) {
        Reply::Status { status, headers, message } => {
            error_response(Dialect::Openai, status, &headers, &with_key(&message, &key))
        }
        Reply::InvalidKey => error_response(Dialect::Openai, 401, &[], "Authentication Fails (invalid api key)"),
        Reply::Redirect { status, to } => redirect(status, &to, &uri),
        _ if key.is_empty() => error_response(Dialect::Openai, 401, &[], "Authentication Fails (no api key)"),
        _ => {
            let balance = shared.script.lock().unwrap().balances.get(&key).cloned().unwrap_or_default();
            if let Some(raw) = balance.raw {
                return (StatusCode::OK, [("content-type", "text/html")], raw).into_response();
            }
            let text = format!("{:.2}", balance.amount);
            let body = match vendor {
                Vendor::DeepSeek => json!({
                    "is_available": balance.available && balance.amount > 0.0,
                    "balance_infos": [{ "currency": balance.currency, "total_balance": text,
                        "granted_balance": "0.00", "topped_up_balance": text }],
                }),
                Vendor::Moonshot => json!({
                    "code": 0, "scode": "0x0", "status": true,
                    "data": { "available_balance": balance.amount, "voucher_balance": 0.0, "cash_balance": balance.amount },
                }),
                Vendor::SiliconFlow => json!({
                    "code": 20000, "message": "OK", "status": true,
                    "data": { "id": "", "name": "", "balance": "0.00", "status": "normal",
                        "chargeBalance": text, "totalBalance": text },
                }),
            };
            Json(body).into_response()
        }
    }
}
