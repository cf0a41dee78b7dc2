//! The API dialects a client may speak, and how each says what went wrong.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Which provider API a request speaks, by the path it called (and for `GET /v1/models`, by
/// its `anthropic-version` header or Google's way of sending the token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    Anthropic,
    /// Google Gemini's native API (`/v1beta/models/…`, or `/v1/models/…` as `@google/genai` calls it).
    Gemini,
}

impl Dialect {
    /// The dialect a wire format is spoken in: a route's provider answers in it.
    pub fn of_wire(wire: keypool_llm::wire::WireFormat) -> Dialect {
        use keypool_llm::wire::WireFormat;
        match wire {
            WireFormat::OpenAiChat | WireFormat::OpenAiResponses => Dialect::OpenAi,
            WireFormat::AnthropicMessages => Dialect::Anthropic,
            WireFormat::GeminiGenerate => Dialect::Gemini,
        }
    }
}

/// What went wrong, as both dialects name it.
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
}

impl Problem {
    fn status(self) -> StatusCode {
        match self {
            Problem::BadRequest => StatusCode::BAD_REQUEST,
            Problem::Misdirected => StatusCode::MISDIRECTED_REQUEST,
            Problem::Unauthorized => StatusCode::UNAUTHORIZED,
            Problem::Forbidden | Problem::Spent => StatusCode::FORBIDDEN,
            Problem::NotFound => StatusCode::NOT_FOUND,
            Problem::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Problem::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Problem::Upstream => StatusCode::BAD_GATEWAY,
            Problem::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Problem::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Anthropic's `error.type` for it.
    fn anthropic_type(self) -> &'static str {
        match self {
            Problem::BadRequest | Problem::Misdirected => "invalid_request_error",
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
    fn google_status(self) -> &'static str {
        match self {
            Problem::BadRequest | Problem::TooLarge | Problem::Misdirected => "INVALID_ARGUMENT",
            Problem::Unauthorized => "UNAUTHENTICATED",
            Problem::Forbidden | Problem::Spent => "PERMISSION_DENIED",
            Problem::NotFound => "NOT_FOUND",
            Problem::RateLimited => "RESOURCE_EXHAUSTED",
            Problem::Upstream | Problem::Unavailable => "UNAVAILABLE",
            Problem::Internal => "INTERNAL",
        }
    }

    /// OpenAI's `error.type` and `error.code` for it.
    fn openai_type_and_code(self) -> (&'static str, Option<&'static str>) {
        match self {
            Problem::BadRequest => ("invalid_request_error", None),
            Problem::Misdirected => ("invalid_request_error", Some("misdirected_request")),
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

impl Problem {
    /// What a provider's refusal with `status` is, said to a client of another dialect.
    pub(crate) fn of_status(status: u16) -> Problem {
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

    pub(crate) fn status_code(self) -> u16 {
        self.status().as_u16()
    }
}

/// An error answer in `dialect`'s own shape, so SDKs raise their usual exception types.
pub fn error(dialect: Dialect, problem: Problem, message: impl Into<String>, retry_after: Option<u64>) -> Response {
    let body = error_body(dialect, problem, message.into());
    let mut response = (problem.status(), [("content-type", "application/json")], body.to_string()).into_response();
    if let Some(seconds) = retry_after {
        response.headers_mut().insert("retry-after", HeaderValue::from(seconds.max(1)));
    }
    response
}

/// An error body in `dialect`'s own shape.
pub(crate) fn error_body(dialect: Dialect, problem: Problem, message: String) -> serde_json::Value {
    match dialect {
        Dialect::Anthropic => {
            json!({ "type": "error", "error": { "type": problem.anthropic_type(), "message": message } })
        }
        Dialect::OpenAi => {
            let (kind, code) = problem.openai_type_and_code();
            json!({ "error": { "message": message, "type": kind, "param": null, "code": code } })
        }
        Dialect::Gemini => json!({ "error": {
            "code": problem.status().as_u16(), "message": message, "status": problem.google_status() } }),
    }
}

/// A model the endpoint serves, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedModel {
    pub id: String,
    /// The provider a request naming `id` alone goes to, by the name people know it by.
    pub provider: String,
    /// The other providers of the dialect that can answer and list `id` too: a client reaches
    /// one of them as `name/id`.
    pub others: Vec<String>,
    pub dialect: Dialect,
}

/// `GET /v1/models` in `dialect`'s list format. OpenAI's says who serves each model
/// (`owned_by`, the provider's name), and lists a model other providers list too once more per
/// other provider, as `provider/model`, the name that reaches it.
pub fn model_list(dialect: Dialect, models: &[ListedModel]) -> Response {
    let body = match dialect {
        Dialect::OpenAi => {
            let entry =
                |id: &str, provider: &str| json!({ "id": id, "object": "model", "created": 0, "owned_by": provider });
            let data: Vec<_> = models
                .iter()
                .flat_map(|m| {
                    let others = m.others.iter().map(|other| entry(&format!("{other}/{}", m.id), other));
                    std::iter::once(entry(&m.id, &m.provider)).chain(others)
                })
                .collect();
            json!({ "object": "list", "data": data })
        }
        Dialect::Anthropic => {
            let data: Vec<_> = models
                .iter()
                .map(|m| json!({ "type": "model", "id": m.id, "display_name": m.id, "created_at": "1970-01-01T00:00:00Z" }))
                .collect();
            json!({
                "data": data,
                "has_more": false,
                "first_id": models.first().map(|m| &m.id),
                "last_id": models.last().map(|m| &m.id),
            })
        }
        Dialect::Gemini => {
            let models: Vec<_> = models
                .iter()
                .map(|m| {
                    json!({ "name": format!("models/{}", m.id), "displayName": m.id,
                    "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"] })
                })
                .collect();
            json!({ "models": models })
        }
    };
    ([("content-type", "application/json")], body.to_string()).into_response()
}
