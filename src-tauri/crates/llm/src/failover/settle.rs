//! An attempt's settlement: what the pool, the team and the ledger learn from its end, in the
//! one order that keeps the pool truthful.

use std::sync::Arc;

use keypool::{Announced, FailureKind, FailureOutcome, PoolError};

use crate::conversation::Usage;
use crate::record::{AttemptOutcome, AttemptRecord};
use crate::service::CompletionService;
use crate::team::{Taught, TeamHold};

use super::Credential;

/// An attempt's key and ledger record, with what is left to do once the attempt's end is known.
/// [`Settlement::settle`] does it in the one order that keeps the pool truthful.
#[must_use = "an attempt must be settled: its key's reservation ends there"]
pub(crate) struct Settlement {
    pub(super) service: CompletionService,
    pub(super) credential: Credential,
    /// The attempt's share in the team's requests in flight, ended with the credential's.
    pub(super) hold: TeamHold,
    pub(super) record: AttemptRecord,
    pub(super) scope: Arc<str>,
    pub(super) started: tokio::time::Instant,
    /// The attempt's span (see [`crate::SPAN_TARGET`]), ended when it is settled.
    pub(super) span: tracing::Span,
}

/// The span of attempt `attempt` of `plan`, with `key` after a wait of `waited` for it: its
/// provider, key id (never the key), model and wait; its status, outcome and tokens are recorded
/// when it is settled. A disabled span (no exporter) when nothing exports traces.
pub(super) fn attempt_span(
    plan: &super::Plan<'_>,
    key: Option<&keypool::KeyId>,
    attempt: u32,
    waited: std::time::Duration,
) -> tracing::Span {
    let endpoint = plan.target.endpoint;
    tracing::trace_span!(
        target: crate::SPAN_TARGET,
        "attempt",
        otel.name = "attempt",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        keypool.attempt = attempt,
        keypool.provider = &*endpoint.name,
        keypool.provider_id = endpoint.id.as_str(),
        keypool.key_id = key.map(|key| key.as_str()),
        keypool.wait_ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        gen_ai.request.model = &*plan.record.model,
        http.response.status_code = tracing::field::Empty,
        keypool.outcome = tracing::field::Empty,
        keypool.first_token_ms = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        keypool.usage.cached_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
    )
}

/// What the pool learns from an attempt's end.
pub(crate) enum Lesson<'a> {
    /// The key answered, and the answer announced these windows.
    Answer(&'a Announced),
    /// The provider refused the key in a way the pool acts on.
    Refusal { status: u16, kind: FailureKind },
    /// Nothing about the key (it broke off, was stopped, or the refusal was the request's).
    Nothing,
}

impl Settlement {
    pub(crate) fn credential(&self) -> &Credential {
        &self.credential
    }

    /// Milliseconds since the attempt was sent.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Ends the attempt: tells the pool `lesson` while the attempt still holds its reservation
    /// (and the team what the pool learned, before the team hears the request ended), records the
    /// attempt for the ledger (`outcome`, `status`, `usage`, `first_token_ms`), ends the
    /// reservation, and wakes the requests waiting for a key. Released first, a request selecting
    /// in between would go on what was known before (a window thought full, a key not yet known
    /// refused). Answers what the pool did about a refusal.
    pub(crate) fn settle(
        self,
        outcome: AttemptOutcome,
        status: Option<u16>,
        usage: Option<Usage>,
        first_token_ms: Option<u64>,
        lesson: Lesson<'_>,
    ) -> Option<Result<FailureOutcome, PoolError>> {
        let latency_ms = self.elapsed_ms();
        let Settlement { service, credential, hold, record, scope, span, .. } = self;
        if !span.is_disabled() {
            span.record("keypool.outcome", outcome.as_str());
            span.record("http.response.status_code", status);
            span.record("keypool.first_token_ms", first_token_ms);
            if let Some(usage) = usage {
                span.record("gen_ai.usage.input_tokens", usage.input);
                span.record("keypool.usage.cached_tokens", usage.cached);
                span.record("gen_ai.usage.output_tokens", usage.output);
            }
            if outcome != AttemptOutcome::Ok {
                span.record("otel.status_code", "ERROR");
            }
        }
        let key = record.key.pool_key().cloned();
        let reported = match (lesson, &key) {
            (Lesson::Answer(announced), Some(key)) => {
                service.pool.report_answer(key, Some(&scope), announced);
                if let Some(team) = service.team() {
                    team.taught(&record.provider, key, &scope, Taught::Answer(announced));
                }
                None
            }
            (Lesson::Refusal { status, kind }, Some(key)) => {
                let reported = service.report(&record.provider, key, status, kind, &scope, record.at);
                if let (Some(team), Ok(outcome)) = (service.team(), &reported) {
                    team.taught(&record.provider, key, &scope, Taught::Refusal(*outcome));
                }
                Some(reported)
            }
            _ => None,
        };
        service.recorder.attempt(AttemptRecord { outcome, status, usage, first_token_ms, latency_ms, ..record });
        drop(credential);
        drop(hold);
        service.freed.notify_waiters();
        reported
    }
}
