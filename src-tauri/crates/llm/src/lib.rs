//! Talking to LLM providers with pooled keys.
//!
//! [`CompletionService`] takes a chat (its session id, provider and messages), asks the
//! [`keypool::KeyPool`] for the session's key, sends the request (streaming or not), and on a
//! rate limit or an auth failure reports it to the pool and retries at once on the next key.
//! Each key is tried at most once per request; text already shown is never sent twice.
//! Each provider kind is a row of [`KINDS`]; each wire format a module of [`wire`], written from
//! and read into one [`conversation`]. Nothing here knows about Tauri or the database.

mod balance;
mod chat;
mod check;
pub mod conversation;
mod error;
mod expiry;
mod failover;
mod forward;
#[cfg(test)]
mod fuzz;
pub mod hop;
mod http;
mod kind;
mod models;
mod net;
mod plan;
mod probe;
pub mod provider;
mod provider_clock;
mod rate_limit;
mod record;
pub mod redact;
mod service;
pub mod sse;
mod stored;
mod stream;
pub mod team;
mod upstream;
mod verify;
mod wait;
pub mod wire;

pub use balance::{
    Balance, BalanceDialect, BalanceFound, BalanceProblem, BalanceRead, BalanceReading, ReadAt, ReadAuth,
    BALANCE_READ_GAP,
};
pub use chat::{estimate_tokens, CompletionOutcome, CompletionRequest, StopReason};
pub use check::KeyVerdict;
pub use conversation::{Attachment, ChatMessage, Finish, Reply, Role, Usage};
pub use error::{Breakage, CompletionError, Failure, Interruption, Meaning, NoKey, NoKeyReason};
pub use expiry::{bedrock_key_expiry, EXPIRY_WARNING};
pub use forward::{passed_headers, retry_after_of, AnswerHeaders, ForwardRequest, Forwarded, ForwardedBody, Queued};
pub use http::{ProxyChoice, ProxyError};
pub use kind::{
    every_key_shape, BaseUrlProblem, BaseUrlRule, KindRow, ProviderKind, QuotaSharing, Verification, ACCOUNT_GROUP,
    KINDS,
};
pub use models::MAX_MODEL_LIST;
pub use net::{is_local_address, is_local_host, is_local_url};
pub use plan::{PlanWindow, SpanUnit, WindowDialect, WindowRead, WindowReading, WindowSpan};
pub use probe::{Credit, ModelsFailure, ProbeProblem, ProbeResult};
pub use provider::ProviderEndpoint;
pub use provider_clock::{ClockOffset, ClockSkew, MAX_CLOCK_OFFSET};
pub use rate_limit::{announced_wait, provider_instant};
pub use record::{AttemptOutcome, AttemptRecord, SentWith};
pub use wire::BoundState;

/// The `tracing` target of the spans a server exports as traces (OpenTelemetry): a relayed
/// request's (the gateway's) and each of its attempts' (the failover loop's). They are at TRACE
/// level, so that a log filter at its default (`info`) never makes them: without an exporter
/// they cost a disabled callsite's check.
pub const SPAN_TARGET: &str = "keypool::trace";
pub use service::{scope_of, CompletionEvent, CompletionService, Recorder};
pub use stream::{Deadlines, MAX_WHOLE_ANSWER};
pub use team::{Admission, HandOut, Taught, TeamFuture, TeamHold, TeamLink, Wake};
pub use tokio_util::sync::CancellationToken;
pub use verify::{KeyTest, NO_SUCH_KEY};
pub use wait::{RealTime, SimulatedTime, Wait, Waiter};
