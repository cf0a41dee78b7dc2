//! A client's request forwarded as it came (the local API): the pool chooses the key exactly as
//! for a chat (affinity, budgets, waiting, cooldowns), a refusal the pool handles moves the
//! request to the next key before anything goes back, and the answer streams back unchanged.
//!
//! Invariant: nothing that identifies an upstream key or account reaches the client: the
//! answer's headers are an allow-list, and an error body has every key of the pool masked.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use keypool::{KeyId, SessionId, Timestamp};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::Usage;
use crate::error::{Breakage, CompletionError, Failure};
use crate::failover::{Attempt, Credential, Ended, Lesson, Plan, Settlement, Stop, Target, Tried};
use crate::provider::ProviderEndpoint;
use crate::rate_limit::announced_wait;
use crate::record::AttemptOutcome;
use crate::service::{scope_of, CompletionEvent, CompletionService};
use crate::sse::{Decoder, EventRef};
use crate::stored::{response_id, StoredResponses};
use crate::stream::{read_error_body, read_whole, MAX_WHOLE_ANSWER, REDIRECT_REFUSED};
use crate::upstream::{self, Chunks};
use crate::wait::within;
use crate::wire::{
    error_message, may_signal, Address, Delivery, Operation, PieceMemo, Problem, StreamPiece, StreamWriter,
    Translation, Wire, WireFormat,
};

/// A client's request, to forward as it is (or as it was translated for its provider).
#[derive(Debug, Clone)]
pub struct ForwardRequest {
    pub endpoint: ProviderEndpoint,
    /// Where the body goes: the format it is written in (the path follows from it), what it
    /// asks, and how its answer comes (a stream of events is read event by event for its usage;
    /// anything else is read whole, a Gemini array stream still passed on as it comes).
    pub address: Address,
    /// The model, as the provider knows it (for the budgets and the ledger).
    pub model: Arc<str>,
    /// The conversation, for keeping it on one key.
    pub session: SessionId,
    /// The body, sent upstream byte for byte.
    pub body: Bytes,
    /// Request headers passed upstream as the client sent them (`anthropic-version`,
    /// `anthropic-beta`, `openai-beta`: see [`passed_headers`]); the key is Keypool's.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Who asks, for the ledger: the client's user agent.
    pub source: Arc<str>,
    /// The member of a server's endpoint whose token sent it (for the ledger), if any.
    pub member: Option<Arc<str>>,
    /// State the request carries that lives in one organisation, if any: it goes to a key of
    /// that organisation (the same quota group) or to none.
    pub bound: Option<BoundState>,
    /// The client's format, when the body was translated out of it: the answer (whole, streamed,
    /// or a refusal) is written back in it by the relay, from what it reads anyway.
    pub answer_in: Option<Translation>,
}

/// What binds a request to one organisation's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoundState {
    /// The Responses API's `previous_response_id`: stored by the organisation of the key that
    /// made it. Without it (encrypted reasoning items), the key the session is bound to stands
    /// for the organisation.
    pub previous_response_id: Option<String>,
}

/// How long a forwarded request waited in Keypool before its first attempt went upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Queued {
    /// From the call until the first attempt was sent; `None` when none was.
    pub first_sent: Option<std::time::Duration>,
    /// Every key was busy or resting at some point: the request waited for one to free up.
    pub waited: bool,
}

/// The answer to send back: the upstream status, the headers a client may see, the body.
pub struct Forwarded {
    pub status: u16,
    pub headers: AnswerHeaders,
    pub body: ForwardedBody,
    /// How many upstream requests it took.
    pub attempts: u32,
}

/// A forwarded answer's body.
pub enum ForwardedBody {
    /// Read whole and settled already: its length is known, so it goes out in one piece (one
    /// write, with a `content-length`, not a chunked stream that needs another write to end).
    Whole(Bytes),
    /// Relayed as it comes; the attempt is settled when it ends (or the client goes away).
    Stream(BoxStream<'static, Result<Bytes, std::io::Error>>),
}

/// Answer headers a client may see; everything else (cookies, organization and project ids,
/// the key's rate-limit windows) stays here.
const PASSED_ANSWER_HEADERS: [&str; 4] = ["content-type", "request-id", "x-request-id", "retry-after"];

/// The headers of an answer a client may see ([`PASSED_ANSWER_HEADERS`], and a content type a
/// translation sets), held inline: they are few, and a list of them was an allocation per answer.
#[derive(Debug, Clone, Default)]
pub struct AnswerHeaders {
    items: [Option<(HeaderName, HeaderValue)>; PASSED_ANSWER_HEADERS.len() + 1],
}

impl AnswerHeaders {
    /// Those of `headers` a client may see, as they are.
    fn of(headers: &HeaderMap) -> AnswerHeaders {
        let mut passed = AnswerHeaders::default();
        for name in PASSED_ANSWER_HEADERS {
            if let Some(value) = headers.get(name).filter(|value| value.to_str().is_ok()) {
                passed.push(HeaderName::from_static(name), value.clone());
            }
        }
        passed
    }

    /// Adds a header (none beyond the room there is: only the allow-list and a type are added).
    fn push(&mut self, name: HeaderName, value: HeaderValue) {
        if let Some(slot) = self.items.iter_mut().find(|slot| slot.is_none()) {
            *slot = Some((name, value));
        }
    }

    fn remove(&mut self, name: &HeaderName) {
        for slot in &mut self.items {
            if slot.as_ref().is_some_and(|(held, _)| held == name) {
                *slot = None;
            }
        }
    }

    /// Each header, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.items.iter().flatten().map(|(name, value)| (name, value))
    }
}

impl IntoIterator for AnswerHeaders {
    type Item = (HeaderName, HeaderValue);
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<(HeaderName, HeaderValue)>, 5>>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().flatten()
    }
}

impl CompletionService {
    /// The key whose organisation holds `bound`'s state (the key that made the previous
    /// response, else the key the session is bound to), and the keys of other organisations:
    /// those outside its quota group, or every other key when it has none. When neither is
    /// known (or the key is gone), any key may answer.
    fn organisation_of(&self, request: &ForwardRequest, bound: &BoundState) -> (Option<KeyId>, Vec<KeyId>) {
        let now = self.clock.now();
        let anchor = bound.previous_response_id.as_deref().and_then(|id| self.stored_responses.key_of(id));
        let Some(anchor) = anchor.or_else(|| self.pool.bound_key(&request.session, now)) else {
            return (None, Vec::new());
        };
        let keys = self.pool.status(&request.endpoint.id, now).unwrap_or_default();
        let Some(group) = keys.iter().find(|k| k.key_id == anchor).map(|k| k.quota_group.clone()) else {
            return (None, Vec::new());
        };
        let outside = keys
            .into_iter()
            .filter(|k| k.key_id != anchor && (group.is_none() || k.quota_group != group))
            .map(|k| k.key_id)
            .collect();
        (Some(anchor), outside)
    }

    /// Forwards `request` with a pooled key. `Err` when no answer can be given: no key could
    /// serve it (within the pool's max wait), or the provider could not be reached. A refusal
    /// the pool does not handle (a 400, a 500) is an answer: it goes back as it came, its body
    /// with every key masked. The loop is [`CompletionService::drive`]'s; this is what a relayed
    /// attempt is.
    pub async fn forward(&self, request: ForwardRequest) -> Result<Forwarded, CompletionError> {
        self.forward_timed(request).await.0
    }

    /// [`CompletionService::forward`], and how long the request waited in Keypool before its first
    /// attempt went upstream (choosing a key, waiting for one).
    pub async fn forward_timed(&self, request: ForwardRequest) -> (Result<Forwarded, CompletionError>, Queued) {
        let started = std::time::Instant::now();
        let mut queued = Queued::default();
        let forwarded = self
            .forward_noting(request, &mut |event| match event {
                CompletionEvent::KeySelected { .. } if queued.first_sent.is_none() => {
                    queued.first_sent = Some(started.elapsed());
                }
                CompletionEvent::Waiting { .. } => queued.waited = true,
                _ => {}
            })
            .await;
        (forwarded, queued)
    }

    async fn forward_noting(
        &self,
        request: ForwardRequest,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
    ) -> Result<Forwarded, CompletionError> {
        let scope = scope_of(request.endpoint.kind, &request.model);
        let (anchor, outside) = match &request.bound {
            Some(bound) => self.organisation_of(&request, bound),
            None => (None, Vec::new()),
        };
        let target = Target {
            endpoint: &request.endpoint,
            session: &request.session,
            preferred_key: anchor.as_ref(),
            outside: &outside,
        };
        let tokens = u32::try_from(request.body.len() / 4).unwrap_or(u32::MAX);
        let mut plan = Plan::new(self, target, &scope, tokens, &request.model, &request.source);
        plan.record.member = request.member.clone();
        let mut attempt = RelayAttempt {
            service: self,
            path: request
                .address
                .format
                .wire()
                .path(request.address.operation, &request.model, request.address.delivery)
                .unwrap_or_default(),
            request: &request,
            refusal: None,
        };
        // Nothing cancels a forward (the client going away drops it): one token for all of them.
        static NEVER: std::sync::LazyLock<CancellationToken> = std::sync::LazyLock::new(CancellationToken::new);
        let driven = self.drive(&plan, &mut attempt, on_event, &NEVER).await;
        match driven.end {
            Ok(forwarded) => Ok(Forwarded { attempts: driven.attempts, ..forwarded }),
            // A refusal no other key cures goes back as the provider gave it.
            Err(Stop::Failed(CompletionError::Provider(failure))) => match attempt.refusal.take() {
                // The refusal of the last attempt (each attempt starts without one), in the
                // client's words when it speaks another format.
                Some(refusal) => {
                    Ok(Forwarded { attempts: driven.attempts, ..refusal.answer(request.answer_in.as_ref()) })
                }
                _ => Err(CompletionError::Provider(failure)),
            },
            Err(Stop::Failed(error)) => Err(error),
            Err(Stop::Cancelled) => unreachable!("nothing cancels a forward"),
        }
    }

    /// Sends the request's body untouched with `credential`'s key, the client's passed headers
    /// replacing Keypool's defaults of the same name.
    async fn send_as_is(
        &self,
        request: &ForwardRequest,
        path: &str,
        credential: &Credential,
    ) -> Result<upstream::Response, Breakage> {
        let wire = request.endpoint.wire();
        let fixed = wire.fixed_header();
        let defaults = [("content-type", "application/json"), ("user-agent", crate::http::USER_AGENT)];
        let with_fixed;
        let defaults: &[(&'static str, &str)] = match fixed {
            Some(fixed) => {
                with_fixed = [defaults[0], defaults[1], fixed];
                &with_fixed
            }
            None => &defaults,
        };
        let key = credential.secret().map(|key| {
            let (name, prefix) = wire.key_header();
            (name, prefix, key.expose())
        });
        let headers = upstream::Outgoing { defaults, key, passed: &request.headers };
        let base = &request.endpoint.base_url;
        self.http.sender(base).post(base, path, &headers, request.body.clone()).await
    }
}

/// The headers of `headers` named in `names` (lower case) whose values are text, as they are:
/// names and values are shared, not copied.
pub fn passed_headers(headers: &HeaderMap, names: &[&'static str]) -> Vec<(HeaderName, HeaderValue)> {
    names
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name).filter(|value| value.to_str().is_ok())?;
            Some((HeaderName::from_static(name), value.clone()))
        })
        .collect()
}

/// What the relay read of the answer going by: its usage, when its first text came.
#[derive(Default)]
struct Observed {
    usage: Option<Usage>,
    first_token_ms: Option<u64>,
    /// The stream said it is complete (`[DONE]`, `message_stop`).
    done: bool,
}

impl Observed {
    /// Learns what `piece` says: the first text's time (the attempt's, from `settlement`), the
    /// usage, the end.
    fn learn(&mut self, piece: &StreamPiece, settlement: &Option<Settlement>) {
        match piece {
            StreamPiece::Text(_) if self.first_token_ms.is_none() => {
                self.first_token_ms = settlement.as_ref().map(Settlement::elapsed_ms);
            }
            StreamPiece::Usage(usage) => self.usage = Some(*usage),
            StreamPiece::OutputTokens(output) => self.usage.get_or_insert_with(Usage::default).output = *output,
            // A blocked reply is a complete answer to pass on: the client reads why.
            StreamPiece::Done | StreamPiece::Broken(_) => self.done = true,
            _ => {}
        }
    }
}

/// An upstream answer whose headers said it is one: read whole already, or a stream to relay.
enum Answer {
    Whole {
        status: u16,
        headers: AnswerHeaders,
        body: Bytes,
        /// Read from the body when it came.
        usage: Option<Usage>,
    },
    Stream {
        status: u16,
        headers: AnswerHeaders,
        upstream: upstream::Body,
    },
    /// Passed on piece by piece as it comes, and read whole (up to [`MAX_WHOLE_ANSWER`]) for its
    /// usage: Gemini's stream written as one JSON array.
    Passed {
        status: u16,
        headers: AnswerHeaders,
        upstream: upstream::Body,
    },
}

/// A streamed upstream answer on its way to the client: event by event, each as it came except
/// an error event, whose text has every key masked first.
struct Relay {
    service: CompletionService,
    endpoint: ProviderEndpoint,
    /// The answer's wire format (the request's, which may not be the provider's own).
    wire: &'static dyn Wire,
    /// For a translated request: the client's format, and the writer of the answer in it (every
    /// piece read is written so; nothing goes on as it came).
    writer: Option<(&'static dyn Wire, Box<dyn StreamWriter>)>,
    /// What the format's reader remembers of this stream's events.
    memo: PieceMemo,
    upstream: Option<upstream::Body>,
    /// What was passed on so far of an answer relayed as it comes, unparsed (its usage is read at
    /// the end); `None` for a stream of events.
    passed: Option<Vec<u8>>,
    events: Decoder,
    observed: Observed,
    /// The windows the answer announced, for the pool once the answer is complete.
    announced: keypool::Announced,
    /// `None` once the attempt is settled.
    settlement: Option<Settlement>,
    /// Where the id of the response streamed (a Responses API answer) is remembered with its
    /// key, until it is read.
    stored: Option<(Arc<StoredResponses>, KeyId)>,
}

impl Relay {
    fn into_stream(self) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
        futures_util::stream::unfold(self, |mut relay| async move {
            let out = relay.next_piece().await?;
            Some((Ok(out), relay))
        })
        .boxed()
    }

    /// The next bytes for the client, `None` once the answer is over.
    async fn next_piece(&mut self) -> Option<Bytes> {
        loop {
            self.settlement.as_ref()?;
            if self.passed.is_some() {
                return self.pass_through().await;
            }
            // The events are lent by the decoder, which is set aside meanwhile.
            let mut events = std::mem::take(&mut self.events);
            let mut out = Vec::with_capacity(events.buffered());
            let mut too_large = None;
            loop {
                match events.next() {
                    Ok(Some(event)) => self.pass(event, &mut out),
                    Ok(None) => break,
                    Err(error) => {
                        too_large = Some(error);
                        break;
                    }
                }
            }
            self.events = events;
            if let Some(too_large) = too_large {
                tracing::info!(%too_large, "a forwarded stream sent an event too large to pass on");
                return Some(self.break_off(out, Breakage::TooLarge));
            }
            if !out.is_empty() {
                return Some(Bytes::from(out));
            }
            let upstream = self.upstream.as_mut()?;
            let idle = self.service.deadlines.idle;
            let chunk = within(&*self.service.waiter, idle, upstream.next_chunk()).await;
            match chunk {
                Some(Some(Ok(bytes))) => self.events.push(&bytes),
                Some(None) => {
                    // What never ended as an event still goes out as it came.
                    let rest = self.events.unfinished().to_vec();
                    if self.observed.done {
                        self.end(AttemptOutcome::Ok);
                        return (!rest.is_empty()).then(|| Bytes::from(rest));
                    }
                    tracing::info!("a forwarded stream ended before it was complete");
                    return Some(self.break_off(rest, Breakage::EndedEarly));
                }
                Some(Some(Err(broke))) => {
                    tracing::info!(kind = %broke, "a forwarded answer broke off");
                    return Some(self.break_off(Vec::new(), broke));
                }
                None => {
                    tracing::info!("a forwarded stream went quiet past the deadline");
                    return Some(self.break_off(Vec::new(), Breakage::Timeout));
                }
            }
        }
    }

    /// The next piece of an answer relayed as it comes: at most [`MAX_WHOLE_ANSWER`] of it, within
    /// the idle deadline; at its end, its usage.
    async fn pass_through(&mut self) -> Option<Bytes> {
        let upstream = self.upstream.as_mut()?;
        let idle = self.service.deadlines.idle;
        let chunk = within(&*self.service.waiter, idle, upstream.next_chunk()).await;
        let passed = self.passed.as_mut()?;
        match chunk {
            Some(Some(Ok(bytes))) if passed.len() + bytes.len() <= MAX_WHOLE_ANSWER => {
                if self.observed.first_token_ms.is_none() {
                    self.observed.first_token_ms = self.settlement.as_ref().map(Settlement::elapsed_ms);
                }
                passed.extend_from_slice(&bytes);
                Some(bytes)
            }
            Some(Some(Ok(_))) => Some(self.break_off(Vec::new(), Breakage::TooLarge)),
            Some(None) => {
                self.observed.usage =
                    serde_json::from_slice::<Value>(passed).ok().and_then(|value| self.wire.usage_of_reply(&value));
                self.end(AttemptOutcome::Ok);
                None
            }
            Some(Some(Err(broke))) => Some(self.break_off(Vec::new(), broke)),
            None => Some(self.break_off(Vec::new(), Breakage::Timeout)),
        }
    }

    /// Passes `event` on to `out`, learning from it on the way: the first text, the usage, the end.
    /// After the first text, an event that cannot tell the rest ([`may_signal`]) goes on unread.
    fn pass(&mut self, event: EventRef<'_>, out: &mut Vec<u8>) {
        if event.name == "response.created" {
            if let Some((stored, key)) = self.stored.take() {
                if let Some(id) = response_id(event.name, event.data) {
                    stored.learn(&id, &key);
                }
            }
        }
        let wire = self.wire;
        if let Some((_, writer)) = &mut self.writer {
            let (observed, settlement) = (&mut self.observed, &self.settlement);
            wire.each_piece(event.name, event.data, &mut self.memo, &mut |piece| {
                observed.learn(piece, settlement);
                writer.piece(piece, out);
            });
            return;
        }
        if self.observed.first_token_ms.is_some() && !may_signal(wire, event.name, event.data) {
            out.extend_from_slice(event.raw);
            return;
        }
        let mut rewrite = false;
        let (observed, settlement) = (&mut self.observed, &self.settlement);
        wire.each_piece(event.name, event.data, &mut self.memo, &mut |piece| {
            // An error inside a 200 stream may repeat a key, in any of its forms.
            rewrite |= matches!(piece, StreamPiece::Error(_));
            observed.learn(piece, settlement);
        });
        if let (true, Some(settlement)) = (rewrite, &self.settlement) {
            let redactor = self.service.redactor(&self.endpoint, settlement.credential().secret());
            let data = redactor.redact_json(event.data);
            if data != event.data {
                out.extend_from_slice(&wire.write_event(event.name, &data));
                return;
            }
        }
        out.extend_from_slice(event.raw);
    }

    /// Ends the answer with `broke`: what is in `out`, then an error in the client's dialect
    /// (bytes already went out, so that is how the client learns it).
    fn break_off(&mut self, mut out: Vec<u8>, broke: Breakage) -> Bytes {
        self.end(AttemptOutcome::TransportError);
        // Events get an error event; an answer passed on unparsed gets the error as JSON; a
        // translated one, its client's error event.
        let message = format!("the provider's answer broke off ({broke})");
        let wire = self.writer.as_ref().map_or(self.wire, |(client, _)| *client);
        out.extend_from_slice(&wire.broken_off(self.passed.is_none(), &message));
        Bytes::from(out)
    }

    /// Settles the attempt, however the answer ended: the pool learns what the key has left only
    /// from an answer that came whole.
    fn end(&mut self, outcome: AttemptOutcome) {
        let Some(settlement) = self.settlement.take() else { return };
        let lesson = if outcome == AttemptOutcome::Ok { Lesson::Answer(&self.announced) } else { Lesson::Nothing };
        let _ = settlement.settle(outcome, Some(200), self.observed.usage, self.observed.first_token_ms, lesson);
    }
}

impl Drop for Relay {
    /// The client went away before the end: the attempt counts as stopped.
    fn drop(&mut self) {
        self.end(AttemptOutcome::Stopped);
    }
}

/// When a forwarded request may try again after every key refused it: the first moment a key
/// frees up, if the error says so.
pub fn retry_after_of(error: &CompletionError, now: Timestamp) -> Option<Duration> {
    match error {
        CompletionError::NoAvailableKey(crate::error::NoKey {
            why: crate::error::NoKeyReason::Blocked(keypool::Unavailability::Blocked { first_free_at: Some(at), .. }),
            ..
        }) => Some(at.saturating_duration_since(now)),
        _ => None,
    }
}

/// A local API client's request relayed as it came: the attempt ends with the answer's headers
/// (or a refusal's body); an answer is then streamed back by a [`Relay`], which settles it.
struct RelayAttempt<'a> {
    service: &'a CompletionService,
    request: &'a ForwardRequest,
    /// Where under the provider's base URL it goes.
    path: std::borrow::Cow<'static, str>,
    /// The last refusal as it came, to pass on as it is if the request gives up on it.
    refusal: Option<Refusal>,
}

/// A refusal's answer as the client may see it.
struct Refusal {
    status: u16,
    headers: AnswerHeaders,
    /// The body, every key of the pool masked.
    body: String,
}

impl Refusal {
    /// The refusal as the client gets it: as it came, or (`answer_in`) as the client's error.
    fn answer(self, answer_in: Option<&Translation>) -> Forwarded {
        let Some(translation) = answer_in else {
            return Forwarded {
                status: self.status,
                headers: self.headers,
                body: ForwardedBody::Whole(Bytes::from(self.body)),
                attempts: 0,
            };
        };
        let problem = Problem::of_status(self.status);
        let body = translation.client.wire().error_body(problem, &error_message(&self.body));
        Forwarded {
            status: problem.status(),
            headers: with_content_type(self.headers, "application/json"),
            body: ForwardedBody::Whole(Bytes::from(body.to_string())),
            attempts: 0,
        }
    }
}

/// A whole answer of `provider`'s format, written in the client's (`translation`); one that
/// cannot be read is a 502 in the client's words.
fn translated_whole(
    provider: WireFormat,
    translation: &Translation,
    status: u16,
    headers: AnswerHeaders,
    body: &[u8],
) -> Forwarded {
    let client = translation.client.wire();
    let reply = serde_json::from_slice::<Value>(body).ok().and_then(|value| provider.wire().read_reply(&value));
    let (status, body) = match reply {
        Some(reply) => (status, client.write_reply(&reply, &translation.model)),
        None => (
            Problem::Upstream.status(),
            client.error_body(Problem::Upstream, "the provider's answer could not be read"),
        ),
    };
    Forwarded {
        status,
        headers: with_content_type(headers, "application/json"),
        body: ForwardedBody::Whole(Bytes::from(body.to_string())),
        attempts: 0,
    }
}

/// `headers` with their content type replaced by `content_type`.
fn with_content_type(mut headers: AnswerHeaders, content_type: &'static str) -> AnswerHeaders {
    headers.remove(&CONTENT_TYPE);
    headers.push(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers
}

impl RelayAttempt<'_> {
    /// For a Responses API request answered with a pooled key: where its response's id is
    /// remembered, and that key.
    fn stores_responses(&self, settlement: &Settlement) -> Option<(Arc<StoredResponses>, KeyId)> {
        let responses = self.request.address.format == WireFormat::OpenAiResponses
            && self.request.address.operation == Operation::Reply;
        match (responses, settlement.credential()) {
            (true, Credential::Pooled(selection)) => {
                Some((self.service.stored_responses.clone(), selection.key_id.clone()))
            }
            _ => None,
        }
    }
}

impl Attempt for RelayAttempt<'_> {
    type Answer = Answer;
    type Output = Forwarded;

    async fn run(
        &mut self,
        credential: &Credential,
        _attempt: u32,
        _on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        _cancel: &CancellationToken,
    ) -> Tried<Answer> {
        self.refusal = None;
        let (service, request) = (self.service, self.request);
        let (wire, deadlines, waiter) = (request.address.format.wire(), service.deadlines, &*service.waiter);
        let sent = service.clock.now();
        let send = service.send_as_is(request, &self.path, credential);
        let Some(response) = crate::wait::deadline(waiter, deadlines.first_byte, send).await else {
            tracing::info!(provider = %request.endpoint.id, "no answer came within the deadline");
            return Tried::ended(Ended::Broken(Breakage::Timeout));
        };
        let response = match response {
            Ok(response) => response,
            Err(broke) => {
                tracing::info!(provider = %request.endpoint.id, kind = %broke, "the forwarded request could not reach the provider");
                return Tried::ended(Ended::Broken(broke));
            }
        };
        let status = response.status().as_u16();
        let now = service.clock.now();
        let skew = service.provider_clocks.observe(&request.endpoint.id, response.headers(), sent, now);
        // The windows are the provider's, whatever the request's format.
        let announced = request.endpoint.wire().announced_limits(response.headers(), now, skew);
        let headers = AnswerHeaders::of(response.headers());
        let ended = if response.status().is_redirection() {
            Ended::Refused(Failure::new(status, REDIRECT_REFUSED))
        } else if !response.status().is_success() {
            let retry_after = announced_wait(response.headers(), now, skew);
            let redactor = service.redactor(&request.endpoint, credential.secret());
            let body = redactor.redact_json(&read_error_body(response.into_body(), deadlines.idle, waiter).await);
            let refusal = wire.refusal(status, &body, retry_after, announced);
            // Redacted again once decoded: a key written with JSON escapes is plain only now.
            let failure = Failure { message: redactor.redact(&refusal.message), ..refusal };
            self.refusal = Some(Refusal { status, headers, body });
            Ended::Refused(failure)
        } else if request.address.delivery == Delivery::Array {
            // Gemini's stream as one JSON array: passed on as it is written, read for its usage.
            Ended::Answered(Answer::Passed { status, headers, upstream: response.into_body() })
        } else if !request.address.events() {
            match read_whole(response.into_body(), MAX_WHOLE_ANSWER, deadlines.idle, waiter).await {
                Err(broke) => Ended::Broken(broke),
                Ok(body) => {
                    let (carries_error, usage) = wire.read_reply_head(&body);
                    let pieces = if carries_error {
                        wire.stream_pieces("", &String::from_utf8_lossy(&body))
                    } else {
                        Vec::new()
                    };
                    match pieces.into_iter().find(|piece| matches!(piece, StreamPiece::Error(_))) {
                        // A 200 that carries an error (some gateways answer so) is the refusal it names.
                        Some(StreamPiece::Error(failure)) => {
                            let redactor = service.redactor(&request.endpoint, credential.secret());
                            let body = redactor.redact_json(&String::from_utf8_lossy(&body));
                            self.refusal = Some(Refusal { status, headers, body });
                            let message = redactor.redact(&failure.message);
                            Ended::Refused(Failure { message, announced, ..failure })
                        }
                        _ => Ended::Answered(Answer::Whole { status, headers, body: Bytes::from(body), usage }),
                    }
                }
            }
        } else {
            Ended::Answered(Answer::Stream { status, headers, upstream: response.into_body() })
        };
        Tried { announced, ..Tried::ended(ended) }
    }

    fn answered(&mut self, answer: Answer, settlement: Settlement, tried: Tried<()>) -> Forwarded {
        let (status, headers, upstream, passing) = match answer {
            Answer::Whole { status, headers, body, usage } => {
                if let Some((stored, key)) = self.stores_responses(&settlement) {
                    if let Some(id) = response_id("", &String::from_utf8_lossy(&body)) {
                        stored.learn(&id, &key);
                    }
                }
                // Complete already: settled now, as a relayed answer is at its end.
                let first_token_ms = Some(settlement.elapsed_ms());
                let lesson = Lesson::Answer(&tried.announced);
                let _ = settlement.settle(AttemptOutcome::Ok, Some(200), usage, first_token_ms, lesson);
                return match &self.request.answer_in {
                    Some(translation) => {
                        translated_whole(self.request.address.format, translation, status, headers, &body)
                    }
                    None => Forwarded { status, headers, body: ForwardedBody::Whole(body), attempts: 0 },
                };
            }
            Answer::Stream { status, headers, upstream } => (status, headers, upstream, false),
            Answer::Passed { status, headers, upstream } => (status, headers, upstream, true),
        };
        let translation = self.request.answer_in.as_ref();
        let headers = match translation {
            Some(_) => with_content_type(headers, "text/event-stream"),
            None => headers,
        };
        let relay = Relay {
            stored: self.stores_responses(&settlement),
            service: self.service.clone(),
            endpoint: self.request.endpoint.clone(),
            wire: self.request.address.format.wire(),
            writer: translation.map(|t| (t.client.wire(), t.client.wire().stream_writer(&t.model))),
            memo: PieceMemo::default(),
            upstream: Some(upstream),
            passed: passing.then(Vec::new),
            events: Decoder::default(),
            observed: Observed::default(),
            announced: tried.announced,
            settlement: Some(settlement),
        };
        Forwarded { status, headers, body: ForwardedBody::Stream(relay.into_stream()), attempts: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireFormat;

    /// What `wire` reads of a whole reply's head.
    fn read_reply(wire: WireFormat, body: &[u8]) -> (bool, Option<Usage>) {
        wire.wire().read_reply_head(body)
    }

    #[test]
    fn a_whole_reply_is_read_by_name_as_it_is_read_whole() {
        let replies = [
            (
                WireFormat::OpenAiChat,
                r#"{"id":"x","usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":5,"audio_tokens":0}}}"#,
            ),
            (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":11}}"#),
            (
                WireFormat::OpenAiChat,
                r#"{"usage":{"prompt_tokens":11,"completion_tokens":5.5,"prompt_tokens_details":null}}"#,
            ),
            (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":-1,"completion_tokens":5}}"#),
            (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":3,"prompt_tokens_details":"none"}}"#),
            (WireFormat::OpenAiChat, r#"{"usage":"none"}"#),
            (WireFormat::OpenAiChat, r#"{"usage":null,"error":null}"#),
            (WireFormat::OpenAiChat, r#"{"error":{"message":"no"},"usage":{"prompt_tokens":1}}"#),
            (
                WireFormat::AnthropicMessages,
                r#"{"usage":{"input_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":9}}"#,
            ),
            (
                WireFormat::AnthropicMessages,
                r#"{"usage":{"input_tokens":7,"cache_read_input_tokens":"many","output_tokens":9}}"#,
            ),
            (WireFormat::AnthropicMessages, r#"{"usage":{"output_tokens":9}}"#),
            // Arrays, from which serde would read a struct's fields in order.
            (WireFormat::OpenAiChat, r#"{"usage":[11,{"cached_tokens":3},5]}"#),
            (WireFormat::OpenAiChat, r#"{"usage":{"prompt_tokens":11,"prompt_tokens_details":[4]}}"#),
            (WireFormat::OpenAiChat, r#"[null,{"prompt_tokens":11}]"#),
        ];
        for (kind, body) in replies {
            let whole: Value = serde_json::from_str(body).unwrap();
            let expected = (whole.get("error").is_some_and(|e| !e.is_null()), kind.wire().usage_of_reply(&whole));
            assert_eq!(read_reply(kind, body.as_bytes()), expected, "{body}");
        }
        let read = |body: &str| read_reply(WireFormat::OpenAiChat, body.as_bytes()).1;
        assert_eq!(read(replies[0].1), Some(Usage { input: 11, cached: 5, output: 5 }), "the numbers themselves");
        assert_eq!(read(replies[2].1), Some(Usage { input: 11, cached: 0, output: 0 }), "a count that is no count");
        let anthropic = read_reply(WireFormat::AnthropicMessages, replies[8].1.as_bytes()).1;
        assert_eq!(anthropic, Some(Usage { input: 127, cached: 100, output: 9 }), "every input token counted");
    }
}
