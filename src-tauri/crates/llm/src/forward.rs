//! A client's request forwarded as it came (the local API): the pool chooses the key exactly as
//! for a chat (affinity, budgets, waiting, cooldowns), a refusal the pool handles moves the
//! request to the next key before anything goes back, and the answer streams back unchanged.
//!
//! Invariant: nothing that identifies an upstream key or account reaches the client: the
//! answer's headers are an allow-list, and an error body has every key of the pool masked.

use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use keypool::{Demand, FailureKind, FailureOutcome, KeyId, SessionId, Timestamp};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{Breakage, CompletionError, Failure};
use crate::provider::{error_message, out_of_credit, parse_stream_event, ProviderEndpoint, StreamPiece, Usage};
use crate::rate_limit::{announced_limits, announced_wait};
use crate::record::{AttemptOutcome, AttemptRecord};
use crate::service::{Credential, NotAcquired, Target};
use crate::stream::{breakage, read_error_body, REDIRECT_REFUSED};
use crate::{scope_of, CompletionService, ProviderKind};

/// Which upstream endpoint a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamPath {
    /// OpenAI-compatible `chat/completions`.
    ChatCompletions,
    /// Anthropic `v1/messages`.
    Messages,
    /// Anthropic `v1/messages/count_tokens`.
    CountTokens,
}

/// A client's request, to forward as it is.
#[derive(Debug, Clone)]
pub struct ForwardRequest {
    pub endpoint: ProviderEndpoint,
    pub path: UpstreamPath,
    /// The model, as the provider knows it (for the budgets and the ledger).
    pub model: String,
    /// The conversation, for keeping it on one key.
    pub session: SessionId,
    /// The body, sent upstream byte for byte.
    pub body: Bytes,
    /// The client asked for a stream (`"stream": true`).
    pub stream: bool,
    /// Request headers passed upstream as the client sent them (`anthropic-version`,
    /// `anthropic-beta`, `openai-beta`); the key is Keypool's.
    pub headers: Vec<(String, String)>,
    /// Who asks, for the ledger: the client's user agent.
    pub source: String,
}

/// The answer to send back: the upstream status, the headers a client may see, the body.
pub struct Forwarded {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: BoxStream<'static, Result<Bytes, std::io::Error>>,
    /// How many upstream requests it took.
    pub attempts: u32,
}

/// Answer headers a client may see; everything else (cookies, organization and project ids,
/// the key's rate-limit windows) stays here.
const PASSED_ANSWER_HEADERS: [&str; 4] = ["content-type", "request-id", "x-request-id", "retry-after"];

/// The most of a whole (non-streamed) answer read for its usage.
const MAX_OBSERVED_BODY: usize = 8 * 1024 * 1024;

impl CompletionService {
    /// Forwards `request` with a pooled key. `Err` when no answer can be given: no key could
    /// serve it (within the pool's max wait), or the provider could not be reached. A refusal
    /// the pool does not handle (a 400, a 500) is an answer: it goes back as it came, its body
    /// with every key masked.
    pub async fn forward(&self, request: ForwardRequest) -> Result<Forwarded, CompletionError> {
        let provider = request.endpoint.id.clone();
        let kind = request.endpoint.kind;
        let scope = scope_of(kind, &request.model);
        let demand = Demand { scope: Some(&scope), tokens: u32::try_from(request.body.len() / 4).unwrap_or(u32::MAX) };
        let deadline = self.clock.now() + self.pool.max_wait();
        let url = upstream_url(&request.endpoint, request.path);
        let never = CancellationToken::new();
        let mut tried: Vec<KeyId> = Vec::new();
        let mut last_refusal: Option<(u16, String)> = None;
        let mut attempts = 0u32;
        loop {
            let target = Target { endpoint: &request.endpoint, session: &request.session, preferred_key: None };
            let acquired =
                self.acquire(&target, demand, &mut tried, deadline, last_refusal.clone(), &mut |_| {}, &never).await;
            let credential = match acquired {
                Ok(credential) => credential,
                Err(NotAcquired::Failed(error)) => return Err(error),
                Err(NotAcquired::Cancelled) => unreachable!("nothing cancels a forward"),
            };
            attempts += 1;
            let key = match &credential {
                Credential::Pooled(selection) => Some(selection.key_id.clone()),
                Credential::ProviderLevel(_) => None,
            };
            let record = AttemptRecord {
                at: self.clock.now(),
                provider: provider.clone(),
                key: key.clone(),
                model: request.model.clone(),
                session: request.session.clone(),
                source: request.source.clone(),
                outcome: AttemptOutcome::Ok,
                status: None,
                first_token_ms: None,
                latency_ms: 0,
                usage: None,
            };
            let started = tokio::time::Instant::now();
            let sent = self.send_as_is(&request, &url, &credential).await;
            let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let response = match sent {
                Ok(response) => response,
                Err(error) => {
                    let kind = breakage(&error);
                    tracing::info!(%provider, %kind, "the forwarded request could not reach the provider");
                    self.recorder.attempt(AttemptRecord {
                        outcome: AttemptOutcome::TransportError,
                        latency_ms: elapsed(),
                        ..record
                    });
                    return Err(CompletionError::Network(kind));
                }
            };
            let status = response.status().as_u16();
            let now = self.clock.now();
            let announced = announced_limits(kind, response.headers(), now);
            let headers = passed_headers(response.headers());
            if response.status().is_redirection() {
                self.recorder.attempt(AttemptRecord {
                    outcome: AttemptOutcome::ProviderError,
                    status: Some(status),
                    latency_ms: elapsed(),
                    ..record
                });
                return Err(CompletionError::Provider(Failure::new(status, REDIRECT_REFUSED)));
            }
            if !response.status().is_success() {
                let retry_after = announced_wait(response.headers(), now);
                let body =
                    self.redactor(&request.endpoint, credential.secret()).redact(&read_error_body(response).await);
                let failure = Failure {
                    status,
                    message: error_message(&body),
                    retry_after,
                    announced,
                    out_of_credit: out_of_credit(status, &body),
                };
                let pool_kind = failure.pool_kind();
                self.recorder.attempt(AttemptRecord {
                    outcome: outcome_of(pool_kind.as_ref()),
                    status: Some(status),
                    latency_ms: elapsed(),
                    ..record
                });
                if let (Some(key), Some(pool_kind)) = (&key, pool_kind) {
                    tracing::info!(%provider, %key, status, "key refused a forwarded request; failing over");
                    match self.report(&provider, key, status, pool_kind, &scope) {
                        Ok(FailureOutcome::Cooled { .. } | FailureOutcome::Spent { .. }) => {}
                        Ok(_) => tried.push(key.clone()),
                        Err(error) => return Err(error.into()),
                    }
                    last_refusal = Some((failure.status, failure.message));
                    // Reported first, then the reservation ends, then waiting requests look again.
                    drop(credential);
                    self.freed.notify_waiters();
                    continue;
                }
                drop(credential);
                self.freed.notify_waiters();
                let body = futures_util::stream::once(async move { Ok(Bytes::from(body)) }).boxed();
                return Ok(Forwarded { status, headers, body, attempts });
            }
            let relay = Relay {
                service: self.clone(),
                upstream: response.bytes_stream().boxed(),
                kind,
                stream: request.stream,
                observed: Observed::default(),
                started,
                ended: Some(Ending { credential, record, announced, scope: scope.clone() }),
            };
            return Ok(Forwarded { status, headers, body: relay.into_stream(), attempts });
        }
    }

    /// Sends the request's body untouched with `credential`'s key, the client's passed headers
    /// replacing Keypool's defaults of the same name.
    async fn send_as_is(
        &self,
        request: &ForwardRequest,
        url: &str,
        credential: &Credential,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let builder = request
            .endpoint
            .authorize(self.http.post(url), credential.secret())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(request.body.clone());
        let mut upstream = builder.build()?;
        for (name, value) in &request.headers {
            if let (Ok(name), Ok(value)) =
                (reqwest::header::HeaderName::try_from(name.as_str()), reqwest::header::HeaderValue::try_from(value))
            {
                upstream.headers_mut().insert(name, value);
            }
        }
        self.http.execute(upstream).await
    }
}

fn upstream_url(endpoint: &ProviderEndpoint, path: UpstreamPath) -> String {
    match path {
        UpstreamPath::ChatCompletions | UpstreamPath::Messages => endpoint.completion_url(),
        UpstreamPath::CountTokens => format!("{}/count_tokens", endpoint.completion_url()),
    }
}

fn passed_headers(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    PASSED_ANSWER_HEADERS
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), headers.get(*name)?.to_str().ok()?.to_owned())))
        .collect()
}

fn outcome_of(kind: Option<&FailureKind>) -> AttemptOutcome {
    match kind {
        Some(FailureKind::RateLimited { .. }) => AttemptOutcome::RateLimited,
        Some(FailureKind::AuthRejected) => AttemptOutcome::AuthRejected,
        Some(FailureKind::QuotaExhausted) => AttemptOutcome::QuotaExhausted,
        None => AttemptOutcome::ProviderError,
    }
}

/// What the relay read of the answer going by: its usage, when its first text came.
#[derive(Default)]
struct Observed {
    /// An incomplete SSE event (streams), or the whole answer so far (whole replies).
    pending: Vec<u8>,
    usage: Option<Usage>,
    first_token: Option<Duration>,
    /// The stream said it is complete (`[DONE]`, `message_stop`).
    done: bool,
}

/// What is left to do when the answer ends, however it ends: record the attempt, tell the pool
/// what the key has left, and give the key back.
struct Ending {
    credential: Credential,
    record: AttemptRecord,
    announced: keypool::Announced,
    scope: String,
}

/// The upstream answer on its way to the client.
struct Relay {
    service: CompletionService,
    upstream: BoxStream<'static, reqwest::Result<Bytes>>,
    kind: ProviderKind,
    stream: bool,
    observed: Observed,
    started: tokio::time::Instant,
    /// `None` once the attempt is recorded.
    ended: Option<Ending>,
}

impl Relay {
    fn into_stream(self) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
        futures_util::stream::unfold(self, |mut relay| async move {
            relay.ended.as_ref()?;
            match relay.upstream.next().await {
                Some(Ok(bytes)) => {
                    relay.observe(&bytes);
                    Some((Ok(bytes), relay))
                }
                // A stream that ends before saying it is complete broke off.
                None if relay.stream && !relay.observed.done => {
                    tracing::info!("a forwarded stream ended before it was complete");
                    relay.end(AttemptOutcome::TransportError);
                    Some((Ok(error_event(relay.kind, relay.stream, Breakage::EndedEarly)), relay))
                }
                None => {
                    relay.end(AttemptOutcome::Ok);
                    None
                }
                Some(Err(error)) => {
                    let kind = breakage(&error);
                    tracing::info!(%kind, "a forwarded answer broke off");
                    relay.end(AttemptOutcome::TransportError);
                    // Bytes already went out: the client learns it in its own dialect.
                    Some((Ok(error_event(relay.kind, relay.stream, kind)), relay))
                }
            }
        })
        .boxed()
    }

    fn observe(&mut self, bytes: &[u8]) {
        let observed = &mut self.observed;
        if !self.stream {
            if observed.pending.len() + bytes.len() <= MAX_OBSERVED_BODY {
                observed.pending.extend_from_slice(bytes);
            }
            return;
        }
        observed.pending.extend_from_slice(bytes);
        while let Some(end) = find_event_end(&observed.pending) {
            let event: Vec<u8> = observed.pending.drain(..end).collect();
            let text = String::from_utf8_lossy(&event);
            let (mut name, mut data) = (String::new(), String::new());
            for line in text.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_owned();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            match parse_stream_event(self.kind, &name, &data) {
                StreamPiece::Text(_) => {
                    observed.first_token.get_or_insert_with(|| self.started.elapsed());
                }
                StreamPiece::Usage(usage) => observed.usage = Some(usage),
                StreamPiece::OutputTokens(output) => observed.usage.get_or_insert_with(Usage::default).output = output,
                StreamPiece::Done => observed.done = true,
                _ => {}
            }
        }
    }

    fn end(&mut self, outcome: AttemptOutcome) {
        let Some(Ending { credential, record, announced, scope }) = self.ended.take() else { return };
        let service = &self.service;
        let mut usage = self.observed.usage;
        if !self.stream {
            usage = serde_json::from_slice::<Value>(&self.observed.pending)
                .ok()
                .and_then(|value| Usage::of_reply(self.kind, &value));
            self.observed.first_token = Some(self.started.elapsed());
        }
        if outcome == AttemptOutcome::Ok {
            if let Some(key) = &record.key {
                service.pool.report_answer(key, Some(&scope), &announced);
            }
        }
        service.recorder.attempt(AttemptRecord {
            outcome,
            status: Some(200),
            first_token_ms: self.observed.first_token.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            latency_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            usage,
            ..record
        });
        drop(credential);
        service.freed.notify_waiters();
    }
}

impl Drop for Relay {
    /// The client went away before the end: the attempt counts as stopped.
    fn drop(&mut self) {
        self.end(AttemptOutcome::Stopped);
    }
}

/// Where the first complete SSE event in `pending` ends (after its blank line).
fn find_event_end(pending: &[u8]) -> Option<usize> {
    let lf = pending.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = pending.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The end of a stream that broke off, in the dialect the client speaks.
fn error_event(kind: ProviderKind, stream: bool, broke: Breakage) -> Bytes {
    let message = format!("the provider's answer broke off ({broke})");
    let event = match kind {
        ProviderKind::Anthropic => {
            let body = serde_json::json!({ "type": "error", "error": { "type": "api_error", "message": message } });
            if stream {
                format!("event: error\ndata: {body}\n\n")
            } else {
                body.to_string()
            }
        }
        ProviderKind::Openai => {
            let body = serde_json::json!({ "error": { "message": message, "type": "server_error", "param": null, "code": null } });
            if stream {
                format!("data: {body}\n\n")
            } else {
                body.to_string()
            }
        }
    };
    Bytes::from(event)
}

/// When a forwarded request may try again after every key refused it: the first moment a key
/// frees up, if the error says so.
pub fn retry_after_of(error: &CompletionError, now: Timestamp) -> Option<Duration> {
    match error {
        CompletionError::NoAvailableKey(crate::NoKey {
            why: crate::NoKeyReason::Blocked(keypool::Unavailability::Blocked { first_free_at: Some(at), .. }),
            ..
        }) => Some(at.saturating_duration_since(now)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_end_at_a_blank_line_in_either_line_ending() {
        assert_eq!(find_event_end(b"data: a\n\ndata: b"), Some(9));
        assert_eq!(find_event_end(b"data: a\r\n\r\n"), Some(11));
        assert_eq!(find_event_end(b"data: a\n"), None, "not complete yet");
    }
}
