//! What Keypool itself answers a client, in the client's own words: what went wrong (each format
//! writes it as its SDKs expect, [`super::Wire::error_body`]) and the models it serves
//! ([`super::Wire::model_list`]).

use super::Dialect;

/// What went wrong, as every format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    BadRequest,
    /// The request was meant for another host (`Host` is not this machine): HTTP 421.
    Misdirected,
    Unauthorized,
    Forbidden,
    /// A member's budget is spent: HTTP 403, which no SDK retries.
    Spent,
    NotFound,
    TooLarge,
    RateLimited,
    Upstream,
    Unavailable,
    Internal,
    /// The request came back to the Keypool that sent it (a provider or route pointing at it):
    /// HTTP 508.
    Loop,
}

impl Problem {
    /// Its HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Problem::BadRequest => 400,
            Problem::Misdirected => 421,
            Problem::Unauthorized => 401,
            Problem::Forbidden | Problem::Spent => 403,
            Problem::NotFound => 404,
            Problem::TooLarge => 413,
            Problem::RateLimited => 429,
            Problem::Upstream => 502,
            Problem::Unavailable => 503,
            Problem::Internal => 500,
            Problem::Loop => 508,
        }
    }

    /// What a provider's refusal with `status` is, said to a client of another format.
    pub fn of_status(status: u16) -> Problem {
        match status {
            400 | 422 => Problem::BadRequest,
            401 => Problem::Unauthorized,
            403 => Problem::Forbidden,
            404 => Problem::NotFound,
            413 => Problem::TooLarge,
            429 => Problem::RateLimited,
            503 | 529 => Problem::Unavailable,
            _ => Problem::Upstream,
        }
    }

    /// Anthropic's `error.type` for it.
    pub(crate) fn anthropic_type(self) -> &'static str {
        match self {
            Problem::BadRequest | Problem::Misdirected | Problem::Loop => "invalid_request_error",
            Problem::Unauthorized => "authentication_error",
            Problem::Forbidden | Problem::Spent => "permission_error",
            Problem::NotFound => "not_found_error",
            Problem::TooLarge => "request_too_large",
            Problem::RateLimited => "rate_limit_error",
            Problem::Upstream | Problem::Internal => "api_error",
            Problem::Unavailable => "overloaded_error",
        }
    }

    /// Google's `error.status` for it (the canonical gRPC code names).
    pub(crate) fn google_status(self) -> &'static str {
        match self {
            Problem::BadRequest | Problem::TooLarge | Problem::Misdirected => "INVALID_ARGUMENT",
            Problem::Loop => "FAILED_PRECONDITION",
            Problem::Unauthorized => "UNAUTHENTICATED",
            Problem::Forbidden | Problem::Spent => "PERMISSION_DENIED",
            Problem::NotFound => "NOT_FOUND",
            Problem::RateLimited => "RESOURCE_EXHAUSTED",
            Problem::Upstream | Problem::Unavailable => "UNAVAILABLE",
            Problem::Internal => "INTERNAL",
        }
    }

    /// OpenAI's `error.type` and `error.code` for it.
    pub(crate) fn openai_type_and_code(self) -> (&'static str, Option<&'static str>) {
        match self {
            Problem::BadRequest => ("invalid_request_error", None),
            Problem::Misdirected => ("invalid_request_error", Some("misdirected_request")),
            Problem::Loop => ("invalid_request_error", Some("loop_detected")),
            Problem::Unauthorized => ("invalid_request_error", Some("invalid_api_key")),
            Problem::Forbidden => ("invalid_request_error", Some("forbidden")),
            Problem::Spent => ("insufficient_quota", Some("insufficient_quota")),
            Problem::NotFound => ("invalid_request_error", Some("model_not_found")),
            Problem::TooLarge => ("invalid_request_error", Some("request_too_large")),
            Problem::RateLimited => ("requests", Some("rate_limit_exceeded")),
            Problem::Upstream | Problem::Unavailable | Problem::Internal => ("server_error", None),
        }
    }
}

/// A model an endpoint serves, as listed (Settings → Local API shows them as `ServedModel`s).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ServedModel"))]
pub struct ListedModel {
    #[serde(rename = "model")]
    pub id: String,
    /// The provider a request naming the model alone goes to, by the name people know it by.
    pub provider: String,
    /// The other providers of the dialect that can answer and list the model too: a client
    /// reaches one of them as `name/model`.
    pub others: Vec<String>,
    /// The API a client asking for it speaks.
    #[serde(rename = "api")]
    pub dialect: Dialect,
}
