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
use crate::error::{Breakage, CompletionError, Failure, NoKey, NoKeyReason};
use crate::probe::Verdict;
use crate::provider::ProviderEndpoint;
use crate::record::{AttemptOutcome, AttemptRecord, SentWith};
use crate::service::{CompletionEvent, CompletionService};
use crate::team::{Admission, HandOut, TeamHold};

mod decide;
mod settle;

pub(crate) use decide::{decide, Situation, Step};
pub(crate) use settle::{Lesson, Settlement};

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
    /// A relayed stream sent no event within its deadline ([`crate::Deadlines::first_event`]):
    /// nothing reached the client, so another key may answer.
    Stalled,
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
        // A key that refused this request with a 403 nothing shows to be the key's: another key
        // is asked; if it answers, the refused one rests for the scope, and if none is left the
        // request is refused as the first key was.
        let mut doubted: Option<Doubted> = None;
        let team_key = self.team_binding(&plan.target).await;
        let preferred = team_key.as_ref().or(plan.target.preferred_key);
        loop {
            let waiting = tokio::time::Instant::now();
            let acquired =
                self.acquire(plan, preferred, &mut tried, driven.last_refusal.as_ref(), on_event, cancel).await;
            let (credential, hold) = match acquired {
                Ok(acquired) => acquired,
                Err(Stop::Failed(CompletionError::NoAvailableKey(_))) if doubted.is_some() => {
                    let failure = doubted.take().map(|d| d.failure).expect("a doubted refusal");
                    return Driven { end: Err(Stop::Failed(CompletionError::Provider(Box::new(failure)))), ..driven };
                }
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
            let started = tokio::time::Instant::now();
            let sent_at = self.clock.now();
            let settlement = Settlement {
                service: self.clone(),
                credential,
                hold,
                span: settle::attempt_span(plan, key_id.as_ref(), driven.attempts, started - waiting),
                record: AttemptRecord { at: self.clock.now(), key: sent_with, ..plan.record.clone() },
                scope: plan.scope.clone(),
                started,
            };
            let Tried { ended, shown, announced, usage, first_token_ms } =
                // Boxed: the attempt's state machine (its upstream request's) is KiBs, and every
                // future that awaits it inline holds, and moves, a copy of its size.
                Box::pin(attempt.run(settlement.credential(), driven.attempts, on_event, cancel)).await;
            if let Ended::Answered(answer) = ended {
                if let Some(doubted) = doubted.take() {
                    // Another key answered what the doubted one refused: the refusal was the key's.
                    tracing::info!(provider = %plan.target.endpoint.id, key = %doubted.key, "another key answered what a 403 refused: the refused key rests");
                    let provider = &plan.target.endpoint.id;
                    let _ = self.report(provider, &doubted.key, 403, UNVERIFIED_REFUSAL, &plan.scope, doubted.sent_at);
                }
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
                        // Boxed: a rare path should not make every request's future larger.
                        let verdict = Box::pin(self.verify(plan.target.endpoint, key, secret, refused_at)).await;
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
                Ended::Broken(_) | Ended::Stalled => (AttemptOutcome::TransportError, None, Lesson::Nothing),
                Ended::Cancelled | Ended::Answered(_) => (AttemptOutcome::Stopped, None, Lesson::Nothing),
            };
            let taught = match lesson {
                Lesson::Refusal { kind, .. } => Some(kind),
                _ => None,
            };
            // A 403 the pool was not told of: the verdict called it the request's, not the key's.
            let doubtful = !shown
                && doubted.is_none()
                && matches!(lesson, Lesson::Nothing)
                && matches!(&ended, Ended::Refused(f) if f.status == 403 && f.pool_kind() == Some(FailureKind::AuthRejected));
            let reported = settlement.settle(outcome, status, usage, first_token_ms, lesson);
            let pool_outcome = match reported {
                Some(Ok(outcome)) => Some(outcome),
                Some(Err(error)) => return Driven { end: Err(Stop::Failed(error.into())), ..driven },
                None => None,
            };
            if let (true, Ended::Refused(failure), Some(key)) = (doubtful, &ended, &key_id) {
                tracing::info!(provider = %plan.target.endpoint.id, key = %key, "a 403 no check puts on the key: asking another key");
                tried.push(key.clone());
                driven.last_refusal = Some(failure.clone());
                doubted = Some(Doubted { key: key.clone(), sent_at, failure: failure.clone() });
                continue;
            }
            let step = decide(Situation::Attempted { end: ended.end(), shown, outcome: pool_outcome, keyless });
            match step {
                Step::Retry { exclude, failover } => {
                    if let (true, Some(key)) = (exclude, &key_id) {
                        tried.push(key.clone());
                    }
                    if let Ended::Stalled = ended {
                        let waited = self.deadlines.first_event.as_secs();
                        tracing::info!(provider = %plan.target.endpoint.id, key = ?key_id, waited, "no event came; failing over");
                        let message = format!("the provider sent no event within {waited} s");
                        driven.last_refusal = Some(Failure::new(504, &message));
                    } else if let (Ended::Refused(failure), true) = (ended, failover) {
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
            FailureOutcome::Cooled { until } => {
                if let FailureKind::RateLimited { quota: Some(keypool::Quota::PlanWindow { .. }), .. } = kind {
                    tracing::info!(%provider, %key, %until, "the key's plan window is used up: it rests until the reset");
                    self.recorder.key_window_used_up(provider, key, until, now);
                }
            }
            FailureOutcome::Unchanged => {}
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

/// A key that refused a request with a 403 nothing showed to be the key's, until another key
/// tells whose it was.
struct Doubted {
    key: KeyId,
    /// When its attempt was sent.
    sent_at: Timestamp,
    failure: Failure,
}

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
