//! A client's request forwarded as it came (the local API): the pool chooses the key exactly as
//! for a chat (affinity, budgets, waiting, cooldowns), a refusal the pool handles moves the
//! request to the next key before anything goes back, and the answer streams back unchanged.
//!
//! Invariant: nothing that identifies an upstream key or account reaches the client: the
//! answer's headers are an allow-list, and an error body has every key of the pool masked.

use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use keypool::{SessionId, Timestamp};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{Breakage, CompletionError, Failure};
use crate::failover::{Attempt, Credential, Ended, Lesson, Plan, Settlement, Stop, Target, Tried};
use crate::provider::{refusal_of, stream_pieces, ProviderEndpoint, StreamPiece, Usage};
use crate::rate_limit::{announced_limits, announced_wait};
use crate::record::AttemptOutcome;
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
    /// Gemini `v1beta/models/{model}:generateContent`.
    GenerateContent,
    /// Gemini `v1beta/models/{model}:streamGenerateContent`, as SSE (`alt=sse`) or as one JSON
    /// array streamed as it is written.
    StreamGenerateContent { sse: bool },
    /// Gemini `v1beta/models/{model}:countTokens`.
    CountGeminiTokens,
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
    /// The answer is a stream of SSE events (`"stream": true`, Gemini's `alt=sse`), read event by
    /// event for its usage; otherwise it is read whole (a Gemini JSON-array stream included,
    /// still passed on as it comes).
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
    /// with every key masked. The loop is [`CompletionService::drive`]'s; this is what a relayed
    /// attempt is.
    pub async fn forward(&self, request: ForwardRequest) -> Result<Forwarded, CompletionError> {
        let scope = scope_of(request.endpoint.kind, &request.model);
        let target = Target { endpoint: &request.endpoint, session: &request.session, preferred_key: None };
        let tokens = u32::try_from(request.body.len() / 4).unwrap_or(u32::MAX);
        let plan = Plan::new(self, target, &scope, tokens, &request.model, &request.source);
        let mut attempt = RelayAttempt {
            service: self,
            url: upstream_url(&request.endpoint, request.path, &request.model),
            request: &request,
            refusal: None,
        };
        let driven = self.drive(&plan, &mut attempt, &mut |_| {}, &CancellationToken::new()).await;
        match driven.end {
            Ok(forwarded) => Ok(Forwarded { attempts: driven.attempts, ..forwarded }),
            // A refusal no other key cures goes back as the provider gave it.
            Err(Stop::Failed(CompletionError::Provider(failure))) => match attempt.refusal.take() {
                Some(refusal) if refusal.status == failure.status => {
                    let body = futures_util::stream::once(async move { Ok(Bytes::from(refusal.body)) }).boxed();
                    Ok(Forwarded { status: refusal.status, headers: refusal.headers, body, attempts: driven.attempts })
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

fn upstream_url(endpoint: &ProviderEndpoint, path: UpstreamPath, model: &str) -> String {
    match path {
        UpstreamPath::ChatCompletions | UpstreamPath::Messages => endpoint.completion_url(model, false),
        UpstreamPath::CountTokens => format!("{}/count_tokens", endpoint.completion_url(model, false)),
        UpstreamPath::GenerateContent => endpoint.completion_url(model, false),
        UpstreamPath::StreamGenerateContent { sse: true } => endpoint.completion_url(model, true),
        UpstreamPath::StreamGenerateContent { sse: false } => endpoint.model_method_url(model, "streamGenerateContent"),
        UpstreamPath::CountGeminiTokens => endpoint.model_method_url(model, "countTokens"),
    }
}

fn passed_headers(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    PASSED_ANSWER_HEADERS
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), headers.get(*name)?.to_str().ok()?.to_owned())))
        .collect()
}

/// What the relay read of the answer going by: its usage, when its first text came.
#[derive(Default)]
struct Observed {
    /// An incomplete SSE event (streams), or the whole answer so far (whole replies).
    pending: Vec<u8>,
    usage: Option<Usage>,
    first_token_ms: Option<u64>,
    /// The stream said it is complete (`[DONE]`, `message_stop`).
    done: bool,
}

/// The upstream answer on its way to the client.
struct Relay {
    upstream: BoxStream<'static, reqwest::Result<Bytes>>,
    kind: ProviderKind,
    stream: bool,
    observed: Observed,
    /// The windows the answer announced, for the pool once the answer is complete.
    announced: keypool::Announced,
    /// `None` once the attempt is settled.
    settlement: Option<Settlement>,
}

impl Relay {
    fn into_stream(self) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
        futures_util::stream::unfold(self, |mut relay| async move {
            relay.settlement.as_ref()?;
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
            for piece in stream_pieces(self.kind, &name, &data) {
                match piece {
                    StreamPiece::Text(_) if observed.first_token_ms.is_none() => {
                        observed.first_token_ms = self.settlement.as_ref().map(Settlement::elapsed_ms);
                    }
                    StreamPiece::Usage(usage) => observed.usage = Some(usage),
                    StreamPiece::OutputTokens(output) => {
                        observed.usage.get_or_insert_with(Usage::default).output = output
                    }
                    // A blocked reply is a complete answer to pass on: the client reads why.
                    StreamPiece::Done | StreamPiece::Broken(_) => observed.done = true,
                    _ => {}
                }
            }
        }
    }

    /// Settles the attempt, however the answer ended: the pool learns what the key has left only
    /// from an answer that came whole.
    fn end(&mut self, outcome: AttemptOutcome) {
        let Some(settlement) = self.settlement.take() else { return };
        let mut usage = self.observed.usage;
        if !self.stream {
            usage = serde_json::from_slice::<Value>(&self.observed.pending)
                .ok()
                .and_then(|value| Usage::of_reply(self.kind, &value));
            self.observed.first_token_ms = Some(settlement.elapsed_ms());
        }
        let lesson = if outcome == AttemptOutcome::Ok { Lesson::Answer(&self.announced) } else { Lesson::Nothing };
        let _ = settlement.settle(outcome, Some(200), usage, self.observed.first_token_ms, lesson);
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
        ProviderKind::Gemini => {
            let body = serde_json::json!({ "error": { "code": 502, "message": message, "status": "UNAVAILABLE" } });
            if stream {
                format!("data: {body}\n\n")
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

/// A local API client's request relayed as it came: the attempt ends with the answer's headers
/// (or a refusal's body); an answer is then streamed back by a [`Relay`], which settles it.
struct RelayAttempt<'a> {
    service: &'a CompletionService,
    request: &'a ForwardRequest,
    url: String,
    /// The last refusal as it came, to pass on as it is if the request gives up on it.
    refusal: Option<Refusal>,
}

/// A refusal's answer as the client may see it.
struct Refusal {
    status: u16,
    headers: Vec<(String, String)>,
    /// The body, every key of the pool masked.
    body: String,
}

/// An upstream answer whose headers said it is one.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    upstream: BoxStream<'static, reqwest::Result<Bytes>>,
}

impl Attempt for RelayAttempt<'_> {
    type Answer = Answer;
    type Output = Forwarded;

    async fn run(
        &mut self,
        credential: &Credential,
        _attempt: u32,
        _on_event: &mut (dyn FnMut(crate::CompletionEvent) + Send),
        _cancel: &CancellationToken,
    ) -> Tried<Answer> {
        self.refusal = None;
        let (service, request) = (self.service, self.request);
        let kind = request.endpoint.kind;
        let sent = service.clock.now();
        let response = match service.send_as_is(request, &self.url, credential).await {
            Ok(response) => response,
            Err(error) => {
                let broke = breakage(&error);
                tracing::info!(provider = %request.endpoint.id, kind = %broke, "the forwarded request could not reach the provider");
                return Tried::ended(Ended::Broken(broke));
            }
        };
        let status = response.status().as_u16();
        let now = service.clock.now();
        let skew = service.provider_clocks.observe(&request.endpoint.id, response.headers(), sent, now);
        let announced = announced_limits(kind, response.headers(), now, skew);
        let headers = passed_headers(response.headers());
        let ended = if response.status().is_redirection() {
            Ended::Refused(Failure::new(status, REDIRECT_REFUSED))
        } else if !response.status().is_success() {
            let retry_after = announced_wait(response.headers(), now, skew);
            let body =
                service.redactor(&request.endpoint, credential.secret()).redact(&read_error_body(response).await);
            let failure = refusal_of(kind, status, &body, retry_after, announced);
            self.refusal = Some(Refusal { status, headers, body });
            Ended::Refused(failure)
        } else {
            Ended::Answered(Answer { status, headers, upstream: response.bytes_stream().boxed() })
        };
        Tried { announced, ..Tried::ended(ended) }
    }

    fn answered(&mut self, answer: Answer, settlement: Settlement, tried: Tried<()>) -> Forwarded {
        let relay = Relay {
            upstream: answer.upstream,
            kind: self.request.endpoint.kind,
            stream: self.request.stream,
            observed: Observed::default(),
            announced: tried.announced,
            settlement: Some(settlement),
        };
        Forwarded { status: answer.status, headers: answer.headers, body: relay.into_stream(), attempts: 0 }
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
