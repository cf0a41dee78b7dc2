//! What a request does next after an attempt, or when no key can take it: the loop's one
//! decision, a pure function, tested as a table (`tests.rs`).

use keypool::{FailureKind, FailureOutcome, Timestamp, Unavailability};

use crate::error::{Breakage, CompletionError, Failure, Interruption, NoKey, NoKeyReason};

use super::Ended;

/// What the request does next: the loop's one decision, pure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The answer stands.
    Done,
    /// Select a key again at once: another one when `exclude` (the refused key is out for this
    /// request for good), else any, the refused one included once it frees up. `failover`: the
    /// user is told a key refused.
    Retry { exclude: bool, failover: bool },
    /// Every key is resting: wait until `until`, when one frees up by itself, or with `None` until
    /// a request in flight ends (never past the deadline), then select again.
    Wait { until: Option<Timestamp> },
    /// The request ends without a reply.
    GiveUp(GiveUp),
    /// The user stopped it.
    Stopped,
}

/// Why a request ends without a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// No answer came, and nothing was shown.
    Unreachable(Breakage),
    /// The reply broke off after text was shown: that text stands, nothing is repeated.
    CutOff(Interruption),
    /// The provider refused the request for a reason no other key cures (a 400, a 500), or the
    /// provider-level key, which has no other to fail over to.
    Refused(Failure),
    /// A request sent without a key (the pool is empty, the provider has no key of its own) was
    /// refused for want of one: the provider needs a key after all.
    NeedsKey(Failure),
    /// No key can take the request within the wait allowed, for this reason.
    NoKey(Unavailability),
}

impl GiveUp {
    /// The error the request ends with; `last_refusal` is named when no key is left after it.
    pub(super) fn into_error(self, provider: &str, last_refusal: Option<&Failure>) -> CompletionError {
        match self {
            GiveUp::Unreachable(broke) => CompletionError::Network(broke),
            GiveUp::CutOff(interruption) => CompletionError::Interrupted(interruption),
            GiveUp::Refused(failure) => CompletionError::Provider(Box::new(failure)),
            GiveUp::NeedsKey(failure) => CompletionError::NoAvailableKey(NoKey {
                provider: provider.to_owned(),
                why: NoKeyReason::Empty,
                last: Some((failure.status, failure.message)),
            }),
            GiveUp::NoKey(why) => CompletionError::NoAvailableKey(NoKey {
                provider: provider.to_owned(),
                why: NoKeyReason::Blocked(why),
                last: last_refusal.map(|f| (f.status, f.message.clone())),
            }),
        }
    }
}

/// What the decision looks at.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Situation<'a> {
    /// An attempt ended. `outcome`: what the pool did about a refusal it was told of (`None` when
    /// it was not: an answer, a refusal that is the request's business, the provider-level key,
    /// no key). `keyless`: the attempt was sent without a key.
    Attempted { end: End<'a>, shown: bool, outcome: Option<FailureOutcome>, keyless: bool },
    /// No key can take the request now, for `why`; waiting may last until `deadline`.
    NoneLeft { why: &'a Unavailability, now: Timestamp, deadline: Timestamp },
}

/// An attempt's end, without what the attempt made of an answer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum End<'a> {
    Answered,
    Refused(&'a Failure),
    Broken(Breakage),
    Cancelled,
    Again,
    Stalled,
}

impl<A> Ended<A> {
    pub(super) fn end(&self) -> End<'_> {
        match self {
            Ended::Answered(_) => End::Answered,
            Ended::Refused(failure) => End::Refused(failure),
            Ended::Broken(breakage) => End::Broken(*breakage),
            Ended::Cancelled => End::Cancelled,
            Ended::Stalled => End::Stalled,
            Ended::Again(_) => End::Again,
        }
    }
}

/// The next step of a request in `situation`.
///
/// * A refusal the pool acted on moves the request to another key, unless text was shown. The
///   refused key stays a candidate when it only rests until a known time ([`FailureOutcome::Cooled`],
///   [`FailureOutcome::Spent`], [`FailureOutcome::ScopeCooled`], and [`FailureOutcome::UsedUpForTheDay`],
///   whose end the request will hardly wait for but whose blocker then says why): a request that may wait that long tries it again, so a one-key
///   pool loses no reply to a 429. A key disabled or out of credit is out for the request.
/// * Anything else that goes wrong ends the request: retrying a 400 on another key fails the same
///   way, and after text was shown a retry would repeat it. A request sent without a key that is
///   refused as unauthenticated says the provider needs a key.
/// * With no key free, the request waits for the first one that frees up by itself within the
///   deadline, or for a request in flight to end when only those hold the keys; else it gives up.
pub(crate) fn decide(situation: Situation<'_>) -> Step {
    match situation {
        Situation::Attempted { end, shown, outcome, keyless } => match end {
            End::Answered => Step::Done,
            End::Cancelled => Step::Stopped,
            End::Again => Step::Retry { exclude: false, failover: false },
            // Nothing reached the client: another key, and this one no more for this request.
            End::Stalled => Step::Retry { exclude: true, failover: true },
            End::Broken(broke) if shown => Step::GiveUp(GiveUp::CutOff(Interruption::Broken(broke))),
            End::Broken(broke) => Step::GiveUp(GiveUp::Unreachable(broke)),
            End::Refused(failure) if shown => Step::GiveUp(GiveUp::CutOff(Interruption::Refused {
                status: failure.status,
                message: failure.message.clone(),
            })),
            End::Refused(failure) if keyless && failure.pool_kind() == Some(FailureKind::AuthRejected) => {
                Step::GiveUp(GiveUp::NeedsKey(failure.clone()))
            }
            End::Refused(failure) => match outcome {
                None => Step::GiveUp(GiveUp::Refused(failure.clone())),
                Some(
                    FailureOutcome::Cooled { .. }
                    | FailureOutcome::Spent { .. }
                    | FailureOutcome::ScopeCooled { .. }
                    | FailureOutcome::UsedUpForTheDay { .. },
                ) => Step::Retry { exclude: false, failover: true },
                Some(_) => Step::Retry { exclude: true, failover: true },
            },
        },
        Situation::NoneLeft { why, now, deadline } => match why.retry_at(deadline) {
            Some(until) => Step::Wait { until: Some(until) },
            None if why.busy() && now < deadline => Step::Wait { until: None },
            None => Step::GiveUp(GiveUp::NoKey(why.clone())),
        },
    }
}

#[cfg(test)]
mod tests;
