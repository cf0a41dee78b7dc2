//! One relayed attempt: the request sent with a key, the answer's head read, a refusal kept
//! to pass on (in the client's words when translated), an answer handed to the relay.

use std::sync::Arc;

use bytes::Bytes;
use keypool::KeyId;
use reqwest::header::{HeaderValue, CONTENT_TYPE};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::Usage;
use crate::error::{Breakage, Failure};
use crate::failover::{Attempt, Credential, Ended, Lesson, Settlement, Tried};
use crate::rate_limit::announced_wait;
use crate::record::AttemptOutcome;
use crate::service::{CompletionEvent, CompletionService};
use crate::sse::Decoder;
use crate::stored::{response_id, StoredResponses};
use crate::stream::{read_error_body, read_whole, MAX_WHOLE_ANSWER, REDIRECT_REFUSED};
use crate::upstream::{self};
use crate::wire::{error_message, Delivery, Operation, PieceMemo, Problem, StreamPiece, Translation, WireFormat};

use super::relay::{Observed, Relay};
use super::{AnswerHeaders, ForwardRequest, Forwarded, ForwardedBody};

/// An upstream answer whose headers said it is one: read whole already, or a stream to relay.
pub(super) enum Answer {
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
        /// What came of it so far: its first event at least.
        events: Decoder,
    },
    /// Passed on piece by piece as it comes, and read whole (up to [`MAX_WHOLE_ANSWER`]) for its
    /// usage: Gemini's stream written as one JSON array.
    Passed { status: u16, headers: AnswerHeaders, upstream: upstream::Body },
}

/// A local API client's request relayed as it came: the attempt ends with the answer's headers
/// (or a refusal's body); an answer is then streamed back by a [`Relay`], which settles it.
pub(super) struct RelayAttempt<'a> {
    pub(super) service: &'a CompletionService,
    pub(super) request: &'a ForwardRequest,
    /// Where under the provider's base URL it goes.
    pub(super) path: std::borrow::Cow<'static, str>,
    /// The last refusal as it came, to pass on as it is if the request gives up on it.
    pub(super) refusal: Option<Refusal>,
}

/// Reads `upstream` into `events` until they hold a complete event (comments are none). An
/// answer that ends first is left to the relay to tell.
async fn first_event_of(upstream: &mut upstream::Body, events: &mut Decoder) -> Result<(), Breakage> {
    use crate::upstream::Chunks;
    loop {
        if events.holds_event() {
            return Ok(());
        }
        match upstream.next_chunk().await {
            Some(Ok(bytes)) => events.push(&bytes),
            Some(Err(broke)) => return Err(broke),
            None => return Ok(()),
        }
    }
}

/// A refusal's answer as the client may see it.
pub(super) struct Refusal {
    status: u16,
    headers: AnswerHeaders,
    /// The body, every key of the pool masked.
    body: String,
}

impl Refusal {
    /// The refusal as the client gets it: as it came, or (`answer_in`) as the client's error.
    pub(super) fn answer(self, answer_in: Option<&Translation>) -> Forwarded {
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
        Some(reply) => (status, client.write_reply(&reply, &translation.model, translation.id)),
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
        // A stream's first event is due within its own deadline, from now: the answer's head
        // and the comments before any event count for nothing.
        let events = request.address.delivery == Delivery::Events;
        let real = events.then(|| waiter.real_deadline(deadlines.first_event)).flatten();
        let mut first_event = std::pin::pin!(async {
            match (events, real) {
                // Real time: a timer in place, no allocation per request.
                (true, Some(at)) => tokio::time::sleep_until(at).await,
                (true, None) => waiter.bound(sent + deadlines.first_event).await,
                (false, _) => std::future::pending().await,
            }
        });
        let response = tokio::select! {
            response = crate::wait::deadline(waiter, deadlines.first_byte, send) => response,
            () = &mut first_event => return Tried::ended(Ended::Stalled),
        };
        let Some(response) = response else {
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
            let mut upstream = response.into_body();
            let mut events = Decoder::default();
            tokio::select! {
                read = first_event_of(&mut upstream, &mut events) => match read {
                    Ok(()) => Ended::Answered(Answer::Stream { status, headers, upstream, events }),
                    Err(broke) => Ended::Broken(broke),
                },
                () = &mut first_event => Ended::Stalled,
            }
        };
        Tried { announced, ..Tried::ended(ended) }
    }

    fn answered(&mut self, answer: Answer, settlement: Settlement, tried: Tried<()>) -> Forwarded {
        let (status, headers, upstream, events) = match answer {
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
            Answer::Stream { status, headers, upstream, events } => (status, headers, upstream, Some(events)),
            Answer::Passed { status, headers, upstream } => (status, headers, upstream, None),
        };
        let (passing, events) = (events.is_none(), events.unwrap_or_default());
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
            writer: translation.map(|t| (t.client.wire(), t.client.wire().stream_writer(&t.model, t.id))),
            memo: PieceMemo::default(),
            upstream: Some(upstream),
            passed: passing.then(Vec::new),
            events,
            observed: Observed::default(),
            announced: tried.announced,
            settlement: Some(settlement),
        };
        Forwarded { status, headers, body: ForwardedBody::Stream(relay.into_stream()), attempts: 0 }
    }
}
