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
        let Settlement { service, credential, hold, record, scope, .. } = self;
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
