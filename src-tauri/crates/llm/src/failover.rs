//! The failover loop, stated once for every kind of request: acquire a key → attempt → settle
//! (record the attempt, tell the pool what it taught while its reservation is still held, end the
//! reservation, wake the requests waiting for a key) → decide what comes next.
//!
//! What an attempt *is* differs: a chat parses the provider's stream into text as it comes; the
//! local API relays the answer as it came. Both are an [`Attempt`]; [`CompletionService::drive`]
//! runs either. What to do after an attempt, or when no key can take the request, is the pure
//! function [`decide`], tested as a table below.

use std::future::Future;
use std::sync::Arc;

use keypool::{
    Announced, Demand, FailureKind, FailureOutcome, KeyId, PoolError, ProviderId, Secret, Selection, SelectionRequest,
    SessionId, Timestamp, Unavailability,
};
use tokio_util::sync::CancellationToken;

use crate::conversation::Usage;
use crate::error::{Breakage, CompletionError, Failure, Interruption, NoKey, NoKeyReason};
use crate::probe::Verdict;
use crate::provider::ProviderEndpoint;
use crate::record::{AttemptOutcome, AttemptRecord, SentWith};
use crate::service::{CompletionEvent, CompletionService};
use crate::team::{Admission, HandOut, Taught, TeamHold};

/// How one attempt ended, as the attempt saw it.
pub(crate) enum Ended<A> {
    /// The provider answered; `A` is what the attempt made of the answer so far (a chat's finished
    /// text, the local API's response still to relay).
    Answered(A),
    /// The provider refused: an HTTP error status, or an error event inside the stream.
    Refused(Failure),
    /// The connection failed or the answer broke off.
    Broken(Breakage),
    /// The user stopped it.
    Cancelled,
    /// The provider refused something optional the attempt asked for and will leave out from now
    /// on (a server that does not know `stream_options`): ask again with the same key, at once.
    Again(Failure),
}

/// One attempt's end with what it learned on the way.
pub(crate) struct Tried<A> {
    pub ended: Ended<A>,
    /// Some of the reply already reached the user: another attempt would repeat it.
    pub shown: bool,
    /// The windows the answer announced (whatever the end), for the pool.
    pub announced: Announced,
    /// What the attempt used, as the provider reported it, when it did.
    pub usage: Option<Usage>,
    /// From sending to the first text.
    pub first_token_ms: Option<u64>,
}

impl<A> Tried<A> {
    pub(crate) fn ended(ended: Ended<A>) -> Self {
        Tried { ended, shown: false, announced: Announced::default(), usage: None, first_token_ms: None }
    }
}

/// What one kind of request sends with a key, and what it does with an answer.
pub(crate) trait Attempt: Send {
    /// What an answered attempt holds until [`Attempt::answered`] makes the result of it.
    type Answer: Send;
    /// What the request yields when answered.
    type Output: Send;

    /// Sends the request with `credential` and reads the answer as far as this kind of request
    /// reads it before it counts as answered. `on_event` hears the request's progress (a chat's
    /// text); `attempt` numbers it from 1.
    fn run(
        &mut self,
        credential: &Credential,
        attempt: u32,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> impl Future<Output = Tried<Self::Answer>> + Send;

    /// The answer stands: make the output of it. The attempt is settled here, now or once the
    /// answer has been passed on, through `settlement`.
    fn answered(&mut self, answer: Self::Answer, settlement: Settlement, tried: Tried<()>) -> Self::Output;
}

/// The request the loop runs: where it goes, what it needs of a key, how long it may wait.
pub(crate) struct Plan<'a> {
    pub target: Target<'a>,
    pub demand: Demand<'a>,
    /// Waiting for a key ends here.
    pub deadline: Timestamp,
    /// The ledger's record of each attempt, as far as it is known before sending.
    pub record: AttemptRecord,
    /// The demand's scope, shared with each attempt's settlement.
    pub scope: Arc<str>,
}

impl<'a> Plan<'a> {
    /// A request to `target` for `model` (its rate-limit `scope`, about `tokens` input tokens) on
    /// behalf of `source`, waiting for a key at most the pool's `max_wait` from `now`.
    pub(crate) fn new(
        service: &CompletionService,
        target: Target<'a>,
        scope: &'a Arc<str>,
        tokens: u32,
        model: &Arc<str>,
        source: &Arc<str>,
    ) -> Self {
        let record = AttemptRecord::draft(target.endpoint.id.clone(), model, target.session, source);
        Plan {
            target,
            demand: Demand { scope: Some(scope), tokens },
            scope: scope.clone(),
            deadline: service.clock.now() + service.pool.max_wait(),
            record,
        }
    }
}

/// How the loop ended.
pub(crate) struct Driven<O> {
    pub end: Result<O, Stop>,
    /// HTTP requests sent upstream.
    pub attempts: u32,
    /// The last key tried: its id (none for the provider-level key) and how people know it.
    pub last_key: Option<(Option<KeyId>, Arc<str>)>,
    /// The last refusal, for a request that gives up on it.
    pub last_refusal: Option<Failure>,
}

/// Why the loop ended without an output.
#[derive(Debug)]
pub(crate) enum Stop {
    Cancelled,
    Failed(CompletionError),
}

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
    fn into_error(self, provider: &str, last_refusal: Option<&Failure>) -> CompletionError {
        match self {
            GiveUp::Unreachable(broke) => CompletionError::Network(broke),
            GiveUp::CutOff(interruption) => CompletionError::Interrupted(interruption),
            GiveUp::Refused(failure) => CompletionError::Provider(failure),
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
}

impl<A> Ended<A> {
    fn end(&self) -> End<'_> {
        match self {
            Ended::Answered(_) => End::Answered,
            Ended::Refused(failure) => End::Refused(failure),
            Ended::Broken(breakage) => End::Broken(*breakage),
            Ended::Cancelled => End::Cancelled,
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

/// An attempt's key and ledger record, with what is left to do once the attempt's end is known.
/// [`Settlement::settle`] does it in the one order that keeps the pool truthful.
#[must_use = "an attempt must be settled: its key's reservation ends there"]
pub(crate) struct Settlement {
    service: CompletionService,
    credential: Credential,
    /// The attempt's share in the team's requests in flight, ended with the credential's.
    hold: TeamHold,
    record: AttemptRecord,
    scope: Arc<str>,
    started: tokio::time::Instant,
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

impl CompletionService {
    /// Runs `attempt` with pooled keys until it is answered, stopped, or has to give up.
    ///
    /// Each key is tried at most once per request, except one that only rests until a known time,
    /// which a request that may wait that long tries again. `on_event` hears the keys chosen, the
    /// failovers and the waits, as well as what the attempt itself reports.
    pub(crate) async fn drive<A: Attempt>(
        &self,
        plan: &Plan<'_>,
        attempt: &mut A,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> Driven<A::Output> {
        let mut tried: Vec<KeyId> = plan.target.outside.to_vec();
        let mut driven = Driven { end: Err(Stop::Cancelled), attempts: 0, last_key: None, last_refusal: None };
        let team_key = self.team_binding(&plan.target).await;
        let preferred = team_key.as_ref().or(plan.target.preferred_key);
        loop {
            let acquired =
                self.acquire(plan, preferred, &mut tried, driven.last_refusal.as_ref(), on_event, cancel).await;
            let (credential, hold) = match acquired {
                Ok(acquired) => acquired,
                Err(stop) => return Driven { end: Err(stop), ..driven },
            };
            driven.attempts += 1;
            let (key_id, provider_level, rebound) = match &credential {
                Credential::Pooled(s) => (Some(s.key_id.clone()), false, s.rebound),
                Credential::ProviderLevel(_) | Credential::None => {
                    (None, matches!(credential, Credential::ProviderLevel(_)), false)
                }
            };
            let keyless = matches!(credential, Credential::None);
            let sent_with = credential.sent_with();
            let label = credential.label();
            // A request sent without a key names none.
            driven.last_key = (!keyless).then(|| (key_id.clone(), label.clone()));
            on_event(CompletionEvent::KeySelected {
                key_id: key_id.clone(),
                key_label: label.clone(),
                provider_level,
                keyless,
                rebound,
                attempt: driven.attempts,
            });
            let settlement = Settlement {
                service: self.clone(),
                credential,
                hold,
                record: AttemptRecord { at: self.clock.now(), key: sent_with, ..plan.record.clone() },
                scope: plan.scope.clone(),
                started: tokio::time::Instant::now(),
            };
            let Tried { ended, shown, announced, usage, first_token_ms } =
                attempt.run(settlement.credential(), driven.attempts, on_event, cancel).await;
            if let Ended::Answered(answer) = ended {
                let rest = Tried { ended: Ended::Answered(()), shown, announced, usage, first_token_ms };
                let output = attempt.answered(answer, settlement, rest);
                return Driven { end: Ok(output), ..driven };
            }
            let (outcome, status, lesson) = match &ended {
                Ended::Refused(failure) => match (failure.pool_kind(), &key_id) {
                    (Some(FailureKind::AuthRejected), Some(key)) => {
                        // A 401/403 may be the request's: the key is disabled only if the refusal
                        // and the cheapest question about the key agree that it is not valid.
                        let secret = settlement.credential().secret().expect("a pooled key has a value");
                        let refused_at = self.clock.now();
                        let verdict = self.verify(plan.target.endpoint, key, secret, refused_at).await;
                        let status = Some(failure.status);
                        match (failure.says_key_invalid(), verdict) {
                            (true, Verdict::KeyInvalid) => (
                                AttemptOutcome::AuthRejected,
                                status,
                                Lesson::Refusal { status: failure.status, kind: FailureKind::AuthRejected },
                            ),
                            // The key answered a question that checks keys: the request's refusal.
                            (_, Verdict::KeyFine) => (AttemptOutcome::ProviderError, status, Lesson::Nothing),
                            // A 401 nothing confirms (the question answers any key, refuses only
                            // with a 403, or fails), or a 403 of a key the question calls invalid:
                            // the key rests instead of being disabled, and the request moves on.
                            (true, Verdict::Unknown) | (false, Verdict::KeyInvalid) => (
                                AttemptOutcome::AuthRejected,
                                status,
                                Lesson::Refusal { status: failure.status, kind: UNVERIFIED_REFUSAL },
                            ),
                            // A 403 that names no invalid key, of a key nothing shows bad (a
                            // restricted key, a flagged request): the request's, every key stays.
                            (false, Verdict::Unknown) => (AttemptOutcome::ProviderError, status, Lesson::Nothing),
                        }
                    }
                    (Some(kind), Some(_)) => (
                        ledger_outcome(failure),
                        Some(failure.status),
                        Lesson::Refusal { status: failure.status, kind },
                    ),
                    _ => (ledger_outcome(failure), Some(failure.status), Lesson::Nothing),
                },
                Ended::Again(failure) => (ledger_outcome(failure), Some(failure.status), Lesson::Nothing),
                Ended::Broken(_) => (AttemptOutcome::TransportError, None, Lesson::Nothing),
                Ended::Cancelled | Ended::Answered(_) => (AttemptOutcome::Stopped, None, Lesson::Nothing),
            };
            let taught = match lesson {
                Lesson::Refusal { kind, .. } => Some(kind),
                _ => None,
            };
            let reported = settlement.settle(outcome, status, usage, first_token_ms, lesson);
            let pool_outcome = match reported {
                Some(Ok(outcome)) => Some(outcome),
                Some(Err(error)) => return Driven { end: Err(Stop::Failed(error.into())), ..driven },
                None => None,
            };
            let step = decide(Situation::Attempted { end: ended.end(), shown, outcome: pool_outcome, keyless });
            match step {
                Step::Retry { exclude, failover } => {
                    if let (true, Some(key)) = (exclude, &key_id) {
                        tried.push(key.clone());
                    }
                    if let (Ended::Refused(failure), true) = (ended, failover) {
                        tracing::info!(provider = %plan.target.endpoint.id, key = ?key_id, status = failure.status, "key refused; failing over");
                        on_event(CompletionEvent::Failover {
                            key_label: label.to_string(),
                            status: failure.status,
                            reason: taught.expect("the pool was told of the refusal it acted on"),
                            message: failure.message.clone(),
                        });
                        driven.last_refusal = Some(failure);
                    }
                }
                Step::Stopped => return Driven { end: Err(Stop::Cancelled), ..driven },
                Step::GiveUp(give_up) => {
                    let error = give_up.into_error(&plan.target.endpoint.name, driven.last_refusal.as_ref());
                    return Driven { end: Err(Stop::Failed(error)), ..driven };
                }
                Step::Done | Step::Wait { .. } => {
                    unreachable!("an attempt that was not answered is never done or waiting")
                }
            }
        }
    }

    /// The key the team has the request's session bound to, when this member has no live
    /// binding for it: the conversation goes on where another member served it.
    async fn team_binding(&self, target: &Target<'_>) -> Option<KeyId> {
        let team = self.team()?;
        let provider = &target.endpoint.id;
        // Loaded first, so the link can merge what the team knows of the keys before they are
        // chosen among (a load error is the selection's to report).
        let _ = self.pool.load(provider);
        let bound = self.pool.bound_key(target.session, self.clock.now());
        let team_key = team.binding(provider, target.session, bound.as_ref()).await;
        team_key.filter(|_| bound.is_none())
    }

    /// The key for the next attempt (going back to `preferred` when the session has no live
    /// binding), skipping `tried` ones (and adding those it finds unusable), with its share in the
    /// team's requests in flight. When every key is spent, cooling or busy, [`decide`] says
    /// whether to wait (telling `on_event`) or to give up, naming `last_refusal` when there was
    /// one.
    async fn acquire(
        &self,
        plan: &Plan<'_>,
        preferred: Option<&KeyId>,
        tried: &mut Vec<KeyId>,
        last_refusal: Option<&Failure>,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<(Credential, TeamHold), Stop> {
        let mut team_refusals = 0;
        loop {
            // Armed before the pool is asked, so a request ending meanwhile is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let bound_before = if self.team.load().is_some() {
                self.pool.bound_key(plan.target.session, self.clock.now())
            } else {
                None
            };
            let why = match self.choose(&plan.target, plan.demand, tried, preferred) {
                Ok(credential) => match self.admit(plan, credential, bound_before.as_ref(), &mut team_refusals).await {
                    Some(admitted) => return Ok(admitted),
                    None => continue,
                },
                Err(Choice::Skip(key)) => {
                    tried.push(key);
                    continue;
                }
                Err(Choice::Fail(error)) => return Err(Stop::Failed(error)),
                Err(Choice::NoneLeft(why)) => why,
            };
            let now = self.clock.now();
            match decide(Situation::NoneLeft { why: &why, now, deadline: plan.deadline }) {
                Step::Wait { until } => {
                    on_event(CompletionEvent::Waiting { until, deadline: plan.deadline, now });
                    let wait = match until {
                        Some(until) => self.waiter.until(until),
                        None => self.waiter.bound(plan.deadline),
                    };
                    tokio::select! {
                        _ = wait => {}
                        _ = &mut freed => {}
                        _ = cancel.cancelled() => return Err(Stop::Cancelled),
                    }
                }
                Step::GiveUp(give_up) => {
                    return Err(Stop::Failed(give_up.into_error(&plan.target.endpoint.name, last_refusal)))
                }
                step => unreachable!("with no key free the request waits or gives up, not {step:?}"),
            }
        }
    }

    /// Tells the team a pooled key was handed out, and whether its traffic leaves room for the
    /// attempt: `None` when it does not (the team told the pool so; select again), at most
    /// [`MAX_TEAM_REFUSALS`] times per request, after which the member decides alone.
    async fn admit(
        &self,
        plan: &Plan<'_>,
        credential: Credential,
        bound_before: Option<&KeyId>,
        team_refusals: &mut u32,
    ) -> Option<(Credential, TeamHold)> {
        let (Some(team), Credential::Pooled(selection)) = (self.team(), &credential) else {
            return Some((credential, TeamHold::none()));
        };
        let hand_out = HandOut {
            provider: &plan.target.endpoint.id,
            key: &selection.key_id,
            session: plan.target.session,
            bound_before,
            scope: plan.demand.scope.unwrap_or_default(),
            tokens: plan.demand.tokens,
        };
        let (admission, hold) = team.hand_out(hand_out).await;
        if admission == Admission::Full && *team_refusals < MAX_TEAM_REFUSALS {
            *team_refusals += 1;
            tracing::debug!(provider = %plan.target.endpoint.id, key = %selection.key_id, "the team's requests in flight fill the key's window; selecting again");
            return None;
        }
        Some((credential, hold))
    }

    /// The key for the next attempt: the session's pooled key, the provider-level key while the
    /// pool is empty, or none at all while a local server (Ollama) has neither. A provider
    /// elsewhere with neither is not asked: it would refuse, or, offline, fail to connect, where
    /// what the user needs to hear is that it has no key.
    fn choose(
        &self,
        target: &Target<'_>,
        demand: Demand<'_>,
        tried: &[KeyId],
        preferred: Option<&KeyId>,
    ) -> Result<Credential, Choice> {
        let provider = &target.endpoint.id;
        let wanted = SelectionRequest::new(provider)
            .for_session(target.session)
            .excluding(tried)
            .needing(demand)
            .preferring(preferred);
        match self.pool.select(wanted, self.clock.now()) {
            Ok(selection) => Ok(Credential::Pooled(selection)),
            Err(PoolError::NoAvailableKey { reason: Unavailability::NoKeys, .. }) => {
                let no_key = |why| {
                    Choice::Fail(CompletionError::NoAvailableKey(NoKey {
                        provider: target.endpoint.name.to_string(),
                        why,
                        last: None,
                    }))
                };
                match &target.endpoint.provider_key {
                    Some(raw) => match self.resolver.resolve(raw) {
                        Ok(secret) => Ok(Credential::ProviderLevel(secret)),
                        Err(error) => Err(no_key(NoKeyReason::ProviderKeyUnresolved { var: error.var().to_owned() })),
                    },
                    None if target.endpoint.is_local() => Ok(Credential::None),
                    None => Err(no_key(NoKeyReason::Empty)),
                }
            }
            Err(PoolError::UnresolvedEnv { key_id, label, var, .. }) => {
                tracing::warn!(key = %key_id, var = %var, label = ?label, "pooled key refers to an unset variable; skipping it");
                Err(Choice::Skip(key_id))
            }
            Err(PoolError::NoAvailableKey { reason, .. }) => Err(Choice::NoneLeft(reason)),
            Err(error) => Err(Choice::Fail(error.into())),
        }
    }

    /// Tells the pool about a refusal of a request sent at `sent_at` and records what it decides
    /// that must outlive the process.
    pub(crate) fn report(
        &self,
        provider: &ProviderId,
        key: &KeyId,
        status: u16,
        kind: FailureKind,
        scope: &str,
        sent_at: Timestamp,
    ) -> Result<FailureOutcome, PoolError> {
        let now = self.clock.now();
        let failure = keypool::Failure { provider, key, status, kind, scope: Some(scope), sent_at: Some(sent_at) };
        let outcome = self.pool.report_failure(failure, now)?;
        match outcome {
            FailureOutcome::Disabled { reason } => self.recorder.key_disabled(provider, key, reason, now),
            FailureOutcome::Exhausted { probe_at } => {
                tracing::warn!(%provider, %key, %probe_at, "API key out of credit; out of rotation until a probe succeeds")
            }
            FailureOutcome::Spent { until } => {
                tracing::debug!(%provider, %key, scope, %until, "the key's budget for the model is spent")
            }
            FailureOutcome::ScopeCooled { until } => {
                tracing::debug!(%provider, %key, scope, %until, "the model's per-minute quota rests on the key's group")
            }
            FailureOutcome::UsedUpForTheDay { until } => {
                tracing::info!(%provider, %key, scope, %until, "the model's quota for the day is used up on the key's group")
            }
            FailureOutcome::Cooled { .. } | FailureOutcome::Unchanged => {}
        }
        Ok(outcome)
    }
}

/// How many times one request selects again because the team's requests in flight filled the
/// key's window; past it the member goes on what it knows (the pool already counts the team's
/// requests, so a second refusal is a race with the team's latest news, not a state).
const MAX_TEAM_REFUSALS: u32 = 4;

/// What a 401 does to a key that could be neither shown bad nor fine (or a 403 to one the question
/// calls invalid): it rests, as after a rate limit without an announced wait, rather than being
/// disabled on one request's word.
const UNVERIFIED_REFUSAL: FailureKind =
    FailureKind::RateLimited { retry_after: None, announced: Announced { requests: None, tokens: None }, quota: None };

/// How an attempt's refusal goes into the ledger.
fn ledger_outcome(failure: &Failure) -> AttemptOutcome {
    match failure.pool_kind() {
        Some(FailureKind::RateLimited { .. }) => AttemptOutcome::RateLimited,
        Some(FailureKind::AuthRejected) => AttemptOutcome::AuthRejected,
        Some(FailureKind::QuotaExhausted) => AttemptOutcome::QuotaExhausted,
        None => AttemptOutcome::ProviderError,
    }
}

/// Where a request goes, for choosing its key.
pub(crate) struct Target<'a> {
    pub endpoint: &'a ProviderEndpoint,
    pub session: &'a SessionId,
    /// The key the session had before, if it is to be kept.
    pub preferred_key: Option<&'a KeyId>,
    /// Keys the request may not use: those of other organisations, for a request carrying state
    /// that lives in one.
    pub outside: &'a [KeyId],
}

/// The key an attempt uses.
pub(crate) enum Credential {
    Pooled(Selection),
    /// The provider's own key, used only while its pool is empty.
    ProviderLevel(Secret),
    /// No key: the pool is empty, the provider has no key of its own, and it is on this machine
    /// or a private network, where servers (Ollama, LM Studio, vLLM) answer without one; one that
    /// needs a key refuses, and the request ends saying so.
    None,
}

impl Credential {
    /// What the ledger records the attempt as sent with.
    pub(crate) fn sent_with(&self) -> SentWith {
        match self {
            Credential::Pooled(selection) => SentWith::PoolKey(selection.key_id.clone()),
            Credential::ProviderLevel(_) => SentWith::ProviderKey,
            Credential::None => SentWith::NoKey,
        }
    }

    /// The key's value; `None` for a request sent without one.
    pub(crate) fn secret(&self) -> Option<&Secret> {
        match self {
            Credential::Pooled(selection) => Some(&selection.secret),
            Credential::ProviderLevel(secret) => Some(secret),
            Credential::None => None,
        }
    }

    /// How people know the key: never anything derived from a resolved `$NAME` value.
    pub(crate) fn label(&self) -> Arc<str> {
        static PROVIDER_KEY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from("provider key"));
        static NO_KEY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from("no key"));
        match self {
            Credential::Pooled(selection) => selection.name.clone(),
            Credential::ProviderLevel(_) => PROVIDER_KEY.clone(),
            Credential::None => NO_KEY.clone(),
        }
    }
}

enum Choice {
    /// This key cannot be used (its `$NAME` is unset); try the next.
    Skip(KeyId),
    /// No pooled key can serve the request.
    NoneLeft(Unavailability),
    Fail(CompletionError),
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use keypool::{BlockedKey, Blocker, DisableReason};

    use super::*;

    const NOW: Timestamp = Timestamp::from_millis(1_800_000_000_000);

    fn at(secs: u64) -> Timestamp {
        NOW + Duration::from_secs(secs)
    }

    fn refusal(status: u16) -> Failure {
        Failure::new(status, format!("scripted {status}"))
    }

    fn key(name: &str, why: Blocker, tried: bool) -> BlockedKey {
        BlockedKey { id: KeyId::from(name), name: name.to_owned(), why, tried }
    }

    fn blocked(keys: Vec<BlockedKey>) -> Unavailability {
        Unavailability::Blocked { keys, first_free_at: None }
    }

    /// After an attempt: (what ended it, whether text was shown, what the pool did) → the step.
    #[test]
    fn after_an_attempt() {
        let (r429, r401, r402, r400) = (refusal(429), refusal(401), refusal(402), refusal(400));
        let cooled = Some(FailureOutcome::Cooled { until: at(60) });
        let spent = Some(FailureOutcome::Spent { until: at(2) });
        let disabled = Some(FailureOutcome::Disabled { reason: DisableReason::AuthRejected { status: 401 } });
        let exhausted = Some(FailureOutcome::Exhausted { probe_at: at(900) });
        let cut = |f: &Failure| GiveUp::CutOff(Interruption::Refused { status: f.status, message: f.message.clone() });
        let retry = |exclude| Step::Retry { exclude, failover: true };
        #[rustfmt::skip]
        let table: Vec<(End<'_>, bool, Option<FailureOutcome>, Step, &str)> = vec![
            (End::Answered, false, None, Step::Done, "an answer stands"),
            (End::Answered, true, None, Step::Done, "a streamed answer stands"),
            (End::Cancelled, true, None, Step::Stopped, "the user stopped it"),
            (End::Again, false, None, Step::Retry { exclude: false, failover: false }, "ask again at once, same key, no failover said"),
            (End::Refused(&r429), false, cooled, retry(false), "a cooled key stays a candidate: wait it out if allowed"),
            (End::Refused(&r429), false, spent, retry(false), "so does one whose model budget is spent"),
            (End::Refused(&r429), false, Some(FailureOutcome::ScopeCooled { until: at(37) }), retry(false), "or whose model rests a minute"),
            (End::Refused(&r429), false, Some(FailureOutcome::UsedUpForTheDay { until: at(9 * 3600) }), retry(false), "or whose model's day is used up: its blocker says so"),
            (End::Refused(&r401), false, disabled, retry(true), "a disabled key is out for the request"),
            (End::Refused(&r402), false, exhausted, retry(true), "so is one out of credit"),
            (End::Refused(&r401), false, Some(FailureOutcome::Unchanged), retry(true), "a key already refused is out too"),
            (End::Refused(&r400), false, None, Step::GiveUp(GiveUp::Refused(r400.clone())), "the request's own fault: no key cures it"),
            (End::Refused(&r429), false, None, Step::GiveUp(GiveUp::Refused(r429.clone())), "the provider-level key has no other to fail over to"),
            (End::Refused(&r429), true, cooled, Step::GiveUp(cut(&r429)), "after text a retry would repeat it"),
            (End::Refused(&r400), true, None, Step::GiveUp(cut(&r400)), "after text any refusal cuts the reply off"),
            (End::Broken(Breakage::Connect), false, None, Step::GiveUp(GiveUp::Unreachable(Breakage::Connect)), "no answer came"),
            (End::Broken(Breakage::Stream), true, None, Step::GiveUp(GiveUp::CutOff(Interruption::Broken(Breakage::Stream))), "broke off after text"),
        ];
        for (end, shown, outcome, expected, why) in table {
            assert_eq!(decide(Situation::Attempted { end, shown, outcome, keyless: false }), expected, "{why}");
        }
    }

    /// After an attempt sent without a key: a refusal for want of a key says the provider needs
    /// one; anything else ends the request as it would with the provider-level key.
    #[test]
    fn after_an_attempt_without_a_key() {
        let (r401, r403, r429, r400) = (refusal(401), refusal(403), refusal(429), refusal(400));
        #[rustfmt::skip]
        let table: Vec<(End<'_>, bool, Step, &str)> = vec![
            (End::Answered, false, Step::Done, "a local server answers without a key"),
            (End::Refused(&r401), false, Step::GiveUp(GiveUp::NeedsKey(r401.clone())), "401: the provider wants a key"),
            (End::Refused(&r403), false, Step::GiveUp(GiveUp::NeedsKey(r403.clone())), "403 too"),
            (End::Refused(&r401), true, Step::GiveUp(GiveUp::CutOff(Interruption::Refused { status: 401, message: r401.message.clone() })), "after text it cuts the reply off"),
            (End::Refused(&r429), false, Step::GiveUp(GiveUp::Refused(r429.clone())), "a rate limit is the provider's answer: no key to fail over to"),
            (End::Refused(&r400), false, Step::GiveUp(GiveUp::Refused(r400.clone())), "the request's own fault"),
        ];
        for (end, shown, expected, why) in table {
            assert_eq!(decide(Situation::Attempted { end, shown, outcome: None, keyless: true }), expected, "{why}");
        }
        let error = GiveUp::NeedsKey(r401.clone()).into_error("Example", None);
        let CompletionError::NoAvailableKey(no_key) = error else {
            panic!("a keyless 401 ends with no key: {error:?}")
        };
        let expected = NoKey { provider: "Example".into(), why: NoKeyReason::Empty, last: Some((401, r401.message)) };
        assert_eq!(no_key, expected, "the request ends as one with no keys, naming what the provider said");
    }

    /// With no key free: (what stops each key, now, the deadline) → wait or give up.
    #[test]
    fn when_no_key_is_free() {
        let cooling = |secs| Blocker::Cooling { until: at(secs) };
        let spent = |secs| Blocker::Spent { until: at(secs) };
        let off = Blocker::Disabled { status: Some(401) };
        #[rustfmt::skip]
        let table: Vec<(Vec<BlockedKey>, Timestamp, Step, &str)> = vec![
            (vec![key("a", cooling(5), false), key("b", cooling(9), false)], at(20), Step::Wait { until: Some(at(5)) }, "the first to free up"),
            (vec![key("a", spent(3), false), key("b", off, false)], at(20), Step::Wait { until: Some(at(3)) }, "a spent window refills"),
            (vec![key("a", cooling(25), false)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", cooling(25), false)]))), "past the deadline"),
            (vec![key("a", cooling(20), false)], at(20), Step::Wait { until: Some(at(20)) }, "at the deadline still counts"),
            (vec![key("a", cooling(5), true)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", cooling(5), true)]))), "a key this request tried does not count"),
            (vec![key("a", Blocker::Busy, false)], at(20), Step::Wait { until: None }, "busy: wait for a request in flight to end"),
            (vec![key("a", Blocker::Busy, false)], NOW, Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", Blocker::Busy, false)]))), "busy with no time left"),
            (vec![key("a", off, false)], at(20), Step::GiveUp(GiveUp::NoKey(blocked(vec![key("a", off, false)]))), "nothing frees up by itself"),
        ];
        for (keys, deadline, expected, why) in table {
            let unavailable = blocked(keys);
            let step = decide(Situation::NoneLeft { why: &unavailable, now: NOW, deadline });
            assert_eq!(step, expected, "{why}");
        }
    }
}
