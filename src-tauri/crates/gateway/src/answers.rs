//! What the endpoint itself answers, in the client's own words: its refusals and errors, and the
//! models it serves, each written by the client's format (the format knows its shapes; this
//! only makes them HTTP answers).

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use keypool_llm::wire::{ListedModel, Problem, WireFormat};

/// An error answer in `format`'s own shape, so SDKs raise their usual exception types; with a
/// `retry-after` of `retry_after` seconds (at least 1) when given.
pub fn error(format: WireFormat, problem: Problem, message: impl Into<String>, retry_after: Option<u64>) -> Response {
    let body = format.wire().error_body(problem, &message.into());
    let status = StatusCode::from_u16(problem.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, [("content-type", "application/json")], body.to_string()).into_response();
    if let Some(seconds) = retry_after {
        response.headers_mut().insert("retry-after", HeaderValue::from(seconds.max(1)));
    }
    if problem == Problem::Loop {
        // It would come back again: the SDKs that retry a 5xx are told not to.
        response.headers_mut().insert("x-should-retry", HeaderValue::from_static("false"));
    }
    response
}

/// `GET …/models` in `format`'s list format.
pub fn model_list(format: WireFormat, models: &[ListedModel]) -> Response {
    ([("content-type", "application/json")], format.wire().model_list(models).to_string()).into_response()
}
