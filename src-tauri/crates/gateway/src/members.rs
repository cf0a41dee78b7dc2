//! Members of a server's endpoint: people, agents or scripts, each with a token of its own and
//! limits the endpoint enforces before a request reaches the pool. The endpoint's own token (the
//! owner's) keeps every right; a member's token may be refused for a reason that names the limit
//! and when it lifts, in the client's dialect.
//!
//! The endpoint only asks ([`Members`]); what a member is and how its counts are kept (in this
//! process, or across a team's replicas in Redis) is the server's.
//!
//! Statuses, chosen by what the clients retry: the OpenAI and Anthropic SDKs (Python and
//! TypeScript) retry 408, 409, 429 and every status from 500, and obey an `x-should-retry`
//! header first; Codex retries 429 and 5xx; Gemini CLI 429 and 5xx. So a rate or a full
//! in-flight count is a 429 with `retry-after` (and `retry-after-ms`, which the SDKs prefer); a
//! spent budget, a revoked token or a model outside the member's list is a 403, an expired token
//! a 401, each with `x-should-retry: false`: a retry cannot succeed before a person acts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderValue;
use axum::response::Response;

use keypool_llm::wire::{Problem, WireFormat};

use crate::answers::error;

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The endpoint's own token.
    Owner,
    /// A member's token: the member's name.
    Member(Arc<str>),
}

impl Caller {
    /// The member's name; `None` for the owner.
    pub fn member(&self) -> Option<&Arc<str>> {
        match self {
            Caller::Owner => None,
            Caller::Member(name) => Some(name),
        }
    }
}

/// The limit a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The token's expiry date has passed.
    Expired,
    /// The member was revoked (disabled).
    Revoked,
    /// The model is not among those the member may ask for.
    Model,
    /// The member's budget (US dollars or tokens) for the period is spent.
    Budget,
    RequestsPerMinute,
    TokensPerMinute,
    /// As many of the member's requests are in flight as it may have.
    InFlight,
}

impl Limit {
    /// As it is named in the `x-keypool-limit` header and in `/metrics`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Expired => "expires",
            Limit::Revoked => "enabled",
            Limit::Model => "models",
            Limit::Budget => "budget",
            Limit::RequestsPerMinute => "requests_per_minute",
            Limit::TokensPerMinute => "tokens_per_minute",
            Limit::InFlight => "max_in_flight",
        }
    }

    fn problem(self) -> Problem {
        match self {
            Limit::Expired => Problem::Unauthorized,
            Limit::Revoked | Limit::Model => Problem::Forbidden,
            Limit::Budget => Problem::Spent,
            Limit::RequestsPerMinute | Limit::TokensPerMinute | Limit::InFlight => Problem::RateLimited,
        }
    }

    /// Whether waiting can make a retry succeed.
    pub fn passes_with_time(self) -> bool {
        matches!(self, Limit::RequestsPerMinute | Limit::TokensPerMinute | Limit::InFlight)
    }
}

/// Why a member's request is refused: the limit, a sentence naming it and when it lifts, and for
/// a rate, how long to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub limit: Limit,
    pub message: String,
    pub retry_after: Option<Duration>,
}

impl Refusal {
    /// The refusal in `format`'s error shape, with the headers that tell SDKs whether to retry.
    pub fn response(&self, format: WireFormat) -> Response {
        let seconds = self.retry_after.map(|wait| wait.as_secs_f64().ceil() as u64);
        let mut response = error(format, self.limit.problem(), self.message.clone(), seconds);
        let headers = response.headers_mut();
        headers.insert("x-keypool-limit", HeaderValue::from_static(self.limit.as_str()));
        match (self.limit.passes_with_time(), self.retry_after) {
            (true, Some(wait)) => {
                headers.insert("retry-after-ms", HeaderValue::from(wait.as_millis().max(1) as u64));
            }
            (true, None) => {}
            (false, _) => {
                headers.insert("x-should-retry", HeaderValue::from_static("false"));
            }
        }
        response
    }
}

/// The model a member's request asks for, and where it was routed.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// As the client named it (a route's name, `provider/model`, or a model).
    pub model: &'a str,
    /// The provider it was routed to, by name.
    pub provider: &'a str,
    /// The model as that provider knows it.
    pub routed: &'a str,
}

/// A member's admitted request: what its limits hold for it (its place among the requests in
/// flight) until it is dropped, when the answer has gone.
pub struct Pass(#[allow(dead_code)] Option<Box<dyn Send + Sync>>);

impl Pass {
    /// A pass that holds `held` until dropped.
    pub fn holding(held: impl Send + Sync + 'static) -> Pass {
        Pass(Some(Box::new(held)))
    }

    /// A pass that holds nothing.
    pub fn free() -> Pass {
        Pass(None)
    }
}

/// What the endpoint asks about members.
pub trait Members: Send + Sync {
    /// The member whose token's SHA-256 is `hash`: `None` when it is no member's token, `Err`
    /// when it is one that may not be used (expired, revoked). Called for every request with a
    /// token that is not the owner's: a lookup, no I/O.
    fn identify(&self, hash: &[u8; 32]) -> Option<Result<Arc<str>, Refusal>>;

    /// Whether `member` may send a request for `asked` now, counted against its limits if so.
    fn admit<'a>(
        &'a self,
        member: &'a str,
        asked: Asked<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Pass, Refusal>> + Send + 'a>>;

    /// Whether `member` may ask for `model` (as listed by `GET /v1/models`).
    fn lists(&self, member: &str, model: &str) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_whether_waiting_can_help_in_every_format() {
        let spent = Refusal { limit: Limit::Budget, message: "spent".into(), retry_after: None };
        let rate = Refusal {
            limit: Limit::RequestsPerMinute,
            message: "too fast".into(),
            retry_after: Some(Duration::from_millis(2_500)),
        };
        for format in WireFormat::ALL {
            let response = spent.response(format);
            assert_eq!(response.status().as_u16(), 403, "{format:?}: a spent budget is a status no SDK retries");
            assert_eq!(response.headers()["x-should-retry"], "false", "{format:?}: and the SDKs are told so");
            assert_eq!(response.headers()["x-keypool-limit"], "budget", "{format:?}: the limit is named");
            let response = rate.response(format);
            assert_eq!(response.status().as_u16(), 429, "{format:?}: a rate is a 429");
            assert_eq!(response.headers()["retry-after"], "3", "{format:?}: whole seconds, rounded up");
            assert_eq!(response.headers()["retry-after-ms"], "2500", "{format:?}: and the SDKs' own header");
            assert!(!response.headers().contains_key("x-should-retry"), "{format:?}: a retry after the wait passes");
        }
        let expired = Refusal { limit: Limit::Expired, message: "expired".into(), retry_after: None };
        assert_eq!(expired.response(WireFormat::OpenAiChat).status().as_u16(), 401, "an expired token is a 401");
    }
}
