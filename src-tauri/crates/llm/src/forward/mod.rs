//! A client's request forwarded as it came (the local API): the pool chooses the key exactly as
//! for a chat (affinity, budgets, waiting, cooldowns), a refusal the pool handles moves the
//! request to the next key before anything goes back, and the answer streams back unchanged.
//!
//! Invariant: nothing that identifies an upstream key or account reaches the client: the
//! answer's headers are an allow-list, and an error body has every key of the pool masked.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use keypool::{KeyId, SessionId, Timestamp};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::error::{Breakage, CompletionError};
use crate::failover::{Credential, Plan, Stop, Target};
use crate::provider::ProviderEndpoint;
use crate::service::{scope_of, CompletionEvent, CompletionService};
use crate::upstream;
use crate::wire::{Address, BoundState, Translation};

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
    /// The marks of the Keypools it passed, this one's last (see [`crate::hop`]); none for a
    /// request of no endpoint's.
    pub hop: Option<crate::hop::HopHeader>,
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
        // Boxed, as the attempts are: the callers' futures (the gateway's, up to the
        // connection's) stay small instead of each holding a copy of this one's KiBs.
        let forwarded = Box::pin(self.forward_noting(request, &mut |event| match event {
            CompletionEvent::KeySelected { .. } if queued.first_sent.is_none() => {
                queued.first_sent = Some(started.elapsed());
            }
            CompletionEvent::Waiting { .. } => queued.waited = true,
            _ => {}
        }))
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
        let hop = request.hop.as_ref().map(|hop| (crate::hop::HOP_HEADER, hop.as_str()));
        let mut defaults =
            [("content-type", "application/json"), ("user-agent", crate::http::USER_AGENT), ("", ""), ("", "")];
        let mut count = 2;
        for extra in [fixed, hop].into_iter().flatten() {
            defaults[count] = extra;
            count += 1;
        }
        let defaults: &[(&'static str, &str)] = &defaults[..count];
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

mod attempt;
mod relay;
#[cfg(test)]
mod tests;

use attempt::RelayAttempt;
