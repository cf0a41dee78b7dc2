//! A streamed answer on its way to the client: event by event, each as it came (or, for a
//! translated request, in the client's words), its usage and end learnt on the way.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use keypool::KeyId;
use serde_json::Value;

use crate::conversation::Usage;
use crate::error::Breakage;
use crate::failover::{Lesson, Settlement};
use crate::provider::ProviderEndpoint;
use crate::record::AttemptOutcome;
use crate::service::CompletionService;
use crate::sse::{Decoder, EventRef};
use crate::stored::{response_id, StoredResponses};
use crate::stream::MAX_WHOLE_ANSWER;
use crate::upstream::{self, Chunks};
use crate::wait::within;
use crate::wire::{may_signal, PieceMemo, StreamPiece, StreamWriter, Wire};

/// What the relay read of the answer going by: its usage, when its first text came.
#[derive(Default)]
pub(super) struct Observed {
    pub(super) usage: Option<Usage>,
    pub(super) first_token_ms: Option<u64>,
    /// The stream said it is complete (`[DONE]`, `message_stop`).
    pub(super) done: bool,
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

/// A streamed upstream answer on its way to the client: event by event, each as it came except
/// an error event, whose text has every key masked first.
pub(super) struct Relay {
    pub(super) service: CompletionService,
    pub(super) endpoint: ProviderEndpoint,
    /// The answer's wire format (the request's, which may not be the provider's own).
    pub(super) wire: &'static dyn Wire,
    /// For a translated request: the client's format, and the writer of the answer in it (every
    /// piece read is written so; nothing goes on as it came).
    pub(super) writer: Option<(&'static dyn Wire, Box<dyn StreamWriter>)>,
    /// What the format's reader remembers of this stream's events.
    pub(super) memo: PieceMemo,
    pub(super) upstream: Option<upstream::Body>,
    /// What was passed on so far of an answer relayed as it comes, unparsed (its usage is read at
    /// the end); `None` for a stream of events.
    pub(super) passed: Option<Vec<u8>>,
    pub(super) events: Decoder,
    pub(super) observed: Observed,
    /// The windows the answer announced, for the pool once the answer is complete.
    pub(super) announced: keypool::Announced,
    /// `None` once the attempt is settled.
    pub(super) settlement: Option<Settlement>,
    /// Where the id of the response streamed (a Responses API answer) is remembered with its
    /// key, until it is read.
    pub(super) stored: Option<(Arc<StoredResponses>, KeyId)>,
}

impl Relay {
    pub(super) fn into_stream(self) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
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
