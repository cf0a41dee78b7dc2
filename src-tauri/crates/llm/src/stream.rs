//! One attempt: send the request with one key and read the reply, whole or streamed.

use std::time::Duration;

use futures_util::StreamExt;
use keypool::Secret;
use tokio_util::sync::CancellationToken;

use keypool::Announced;

use crate::conversation::Usage;
use crate::error::{Breakage, Failure};
use crate::net::breakage;
use crate::provider::ProviderEndpoint;
use crate::provider_clock::ProviderClocks;
use crate::rate_limit::announced_wait;
use crate::sse::Decoder;
use crate::upstream::Chunks;
use crate::wait::{within, Waiter};
use crate::wire::StreamPiece;

/// What an attempt learned besides its text, whatever its end: the windows the answer
/// announced, the tokens it used, when its first text came.
#[derive(Debug, Default)]
pub(crate) struct AttemptReport {
    pub announced: Announced,
    pub usage: Option<Usage>,
    pub first_token: Option<std::time::Duration>,
}

/// How an attempt ended.
pub(crate) enum AttemptEnd {
    Finished,
    Cancelled,
    /// The provider refused (an HTTP error status, or an error event inside the stream).
    Refused(Failure),
    /// The connection failed or the stream broke off.
    Broken(Breakage),
}

/// One request to the provider with one key, and its reply read whole or as a stream.
pub(crate) struct Exchange<'a> {
    pub http: &'a reqwest::Client,
    pub endpoint: &'a ProviderEndpoint,
    /// `None`: sent without a key.
    pub key: Option<&'a Secret>,
    /// The model asked for (Gemini addresses each model by its own path).
    pub model: &'a str,
    pub body: &'a [u8],
    pub stream: bool,
    /// Read when the answer's headers arrive: relative resets count from then, as the
    /// provider's do (a time taken before sending would make them early by the latency).
    pub clock: &'a dyn keypool::Clock,
    /// Learns from each answer's `date` how the provider's clock stands, for its reset instants.
    pub provider_clocks: &'a ProviderClocks,
    /// How long the provider may keep the attempt waiting, measured by `waiter`.
    pub deadlines: Deadlines,
    pub waiter: &'a dyn Waiter,
    /// Masks every key of the pool in upstream text; applied before the text goes anywhere.
    pub redact: &'a (dyn Fn(&str) -> String + Sync),
}

/// The most of an error body that is read: enough for any provider's message, bounded against
/// a server that answers an error with an endless body.
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;

/// The largest answer: taken whole (a reply not streamed), or all the bytes of a streamed one.
/// More is no chat reply, and is refused rather than held in memory.
pub const MAX_WHOLE_ANSWER: usize = 32 * 1024 * 1024;

/// How long a provider may keep an attempt waiting. The connection itself must be made within
/// the HTTP client's connect timeout (15 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadlines {
    /// From sending until the answer's headers arrive. A reply taken whole arrives only once it
    /// is written, so this is long.
    pub first_byte: Duration,
    /// Between two pieces of an answer (a stream's events, a whole reply's chunks). A relayed
    /// stream's SSE comments (keep-alives) are no pieces.
    pub idle: Duration,
    /// A relayed stream (the local API's): from sending until its first event. Past it, with
    /// nothing sent to the client yet, the request goes to another key; SSE comments (the
    /// keep-alives of a provider holding a queued request open) do not count.
    pub first_event: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(120),
            first_event: Duration::from_secs(45),
        }
    }
}

/// Reads a whole answer of at most `limit` bytes, each piece within `idle` of the last.
pub(crate) async fn read_whole(
    mut response: impl Chunks,
    limit: usize,
    idle: Duration,
    waiter: &dyn Waiter,
) -> Result<Vec<u8>, Breakage> {
    let mut body = Vec::new();
    loop {
        let Some(chunk) = within(waiter, idle, response.next_chunk()).await else {
            return Err(Breakage::Timeout);
        };
        match chunk {
            None => return Ok(body),
            Some(Ok(chunk)) if body.len() + chunk.len() > limit => return Err(Breakage::TooLarge),
            // A body in one piece (most whole answers) is taken as it came.
            Some(Ok(chunk)) if body.is_empty() => body = Vec::from(chunk),
            Some(Ok(chunk)) => body.extend_from_slice(&chunk),
            Some(Err(broke)) => return Err(broke),
        }
    }
}

/// What a redirect to another origin is reported as. Keys are never sent there.
pub(crate) const REDIRECT_REFUSED: &str = "the provider redirected to another origin; Keypool does not send keys there";

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error body, as text, each piece within `idle` of
/// the last (what came by then is the body).
pub(crate) async fn read_error_body(mut response: impl Chunks, idle: Duration, waiter: &dyn Waiter) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        let Some(chunk) = within(waiter, idle, response.next_chunk()).await else {
            break;
        };
        match chunk {
            Some(Ok(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(MAX_ERROR_BODY - body.len())]),
            None | Some(Err(_)) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

impl Exchange<'_> {
    /// The attempt broke on `error`: the log gets its details (redacted), the user its kind.
    fn broken(&self, error: &reqwest::Error) -> AttemptEnd {
        let kind = breakage(error);
        let host = error.url().map(|url| format!("{}{}", url.host_str().unwrap_or_default(), url.path()));
        tracing::info!(%kind, host = %(self.redact)(&host.unwrap_or_default()), "the attempt broke");
        AttemptEnd::Broken(kind)
    }

    /// Runs the attempt, appending text to `text` and passing each new piece to `on_text`;
    /// `report` receives what the answer announced and used, whatever the end.
    pub(crate) async fn run(
        &self,
        text: &mut String,
        on_text: &mut (dyn FnMut(&str) + Send),
        report: &mut AttemptReport,
        cancel: &CancellationToken,
    ) -> AttemptEnd {
        let started = tokio::time::Instant::now();
        let sent = self.clock.now();
        let request = self
            .endpoint
            .authorize_with(self.http.post(self.endpoint.completion_url(self.model, self.stream)), self.key)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(self.body.to_vec());
        let response = tokio::select! {
            response = request.send() => response,
            _ = self.waiter.after(self.deadlines.first_byte) => return self.timed_out("no answer came"),
            _ = cancel.cancelled() => return AttemptEnd::Cancelled,
        };
        let response = match response {
            Ok(response) => response,
            Err(error) => return self.broken(&error),
        };
        let status = response.status();
        let now = self.clock.now();
        let skew = self.provider_clocks.observe(&self.endpoint.id, response.headers(), sent, now);
        report.announced = self.endpoint.wire().announced_limits(response.headers(), now, skew);
        if status.is_redirection() {
            // The client follows redirects only within the origin; this one leads elsewhere.
            return AttemptEnd::Refused(Failure::new(status.as_u16(), REDIRECT_REFUSED));
        }
        if !status.is_success() {
            let retry_after = announced_wait(response.headers(), now, skew);
            let body = tokio::select! {
                body = read_error_body(response, self.deadlines.idle, self.waiter) => body,
                _ = cancel.cancelled() => return AttemptEnd::Cancelled,
            };
            let body = (self.redact)(&body);
            let refusal = self.endpoint.wire().refusal(status.as_u16(), &body, retry_after, report.announced);
            // Redacted again once decoded: a key written with JSON escapes is plain only now.
            return AttemptEnd::Refused(Failure { message: (self.redact)(&refusal.message), ..refusal });
        }

        if !self.stream {
            let body = tokio::select! {
                body = read_whole(response, MAX_WHOLE_ANSWER, self.deadlines.idle, self.waiter) => body,
                _ = cancel.cancelled() => return AttemptEnd::Cancelled,
            };
            let body = match body {
                Ok(body) => body,
                Err(broke) => {
                    tracing::info!(kind = %broke, "the whole answer could not be read");
                    return AttemptEnd::Broken(broke);
                }
            };
            let value: serde_json::Value = match serde_json::from_slice(&body) {
                Ok(value) => value,
                Err(_) => return AttemptEnd::Broken(Breakage::NotJson),
            };
            let pieces = self.endpoint.wire().stream_pieces("", &value.to_string());
            if let Some(StreamPiece::Error(failure)) = pieces.into_iter().find(|p| matches!(p, StreamPiece::Error(_))) {
                return AttemptEnd::Refused(Failure { message: (self.redact)(&failure.message), ..failure });
            }
            report.usage = self.endpoint.wire().usage_of_reply(&value);
            if let Some(broke) = self.endpoint.blocked(&value) {
                return AttemptEnd::Broken(broke);
            }
            return match self.endpoint.reply_text(&value) {
                Some(reply) => {
                    report.first_token = Some(started.elapsed());
                    text.push_str(&reply);
                    on_text(&reply);
                    AttemptEnd::Finished
                }
                None => AttemptEnd::Broken(Breakage::NoText),
            };
        }

        let mut chunks = response.bytes_stream();
        let mut events = Decoder::default();
        // A stream is read to at most what a whole answer is: a runaway model or a hostile
        // server ends the reply with an error, not Keypool's memory.
        let mut read = 0usize;
        loop {
            let event = match events.next_event() {
                Ok(Some(event)) => event,
                Ok(None) => {
                    let chunk = tokio::select! {
                        chunk = chunks.next() => chunk,
                        _ = self.waiter.after(self.deadlines.idle) => return self.timed_out("the stream went quiet"),
                        _ = cancel.cancelled() => return AttemptEnd::Cancelled,
                    };
                    match chunk {
                        None => return AttemptEnd::Broken(Breakage::EndedEarly),
                        Some(Err(error)) => {
                            tracing::info!(error = %(self.redact)(&error.to_string()), "the stream broke");
                            return AttemptEnd::Broken(Breakage::Stream);
                        }
                        Some(Ok(bytes)) => {
                            read = read.saturating_add(bytes.len());
                            if read > MAX_WHOLE_ANSWER {
                                tracing::info!(limit = MAX_WHOLE_ANSWER, "the stream passed the most an answer may be");
                                return AttemptEnd::Broken(Breakage::TooLarge);
                            }
                            events.push(&bytes);
                        }
                    }
                    continue;
                }
                Err(too_large) => {
                    tracing::info!(%too_large, "the stream sent an event too large to read");
                    return AttemptEnd::Broken(Breakage::TooLarge);
                }
            };
            for piece in self.endpoint.wire().stream_pieces(&event.name, &event.data) {
                match piece {
                    StreamPiece::Text(piece) => {
                        report.first_token.get_or_insert_with(|| started.elapsed());
                        text.push_str(&piece);
                        on_text(&piece);
                    }
                    StreamPiece::Usage(usage) => report.usage = Some(usage),
                    StreamPiece::OutputTokens(output) => {
                        report.usage.get_or_insert_with(Usage::default).output = output;
                    }
                    StreamPiece::Done => return AttemptEnd::Finished,
                    StreamPiece::Broken(broke) => return AttemptEnd::Broken(broke),
                    StreamPiece::Error(failure) => {
                        return AttemptEnd::Refused(Failure { message: (self.redact)(&failure.message), ..failure });
                    }
                    StreamPiece::Nothing | StreamPiece::ToolCall { .. } | StreamPiece::ToolArguments { .. } => {}
                }
            }
        }
    }

    fn timed_out(&self, what: &str) -> AttemptEnd {
        tracing::info!(provider = %self.endpoint.id, "{what} within the deadline: the attempt timed out");
        AttemptEnd::Broken(Breakage::Timeout)
    }
}
