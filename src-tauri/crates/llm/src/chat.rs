//! A chat's reply: the request written from the conversation, the provider's answer read into
//! text as it comes, each key tried at most once ([`CompletionService::drive`] is the loop).

use keypool::{KeyId, SessionId};
use tokio_util::sync::CancellationToken;

use crate::conversation::{ChatMessage, Usage};
use crate::error::{CompletionError, Failure};
use crate::failover::{Attempt, Credential, Ended, Lesson, Plan, Settlement, Stop, Target, Tried};
use crate::provider::ProviderEndpoint;
use crate::record::AttemptOutcome;
use crate::service::{scope_of, CompletionEvent, CompletionService};
use crate::stream::{AttemptEnd, AttemptReport, Exchange};

/// One request for a reply in a chat.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The chat: the pool keeps it on one key.
    pub session: SessionId,
    pub endpoint: ProviderEndpoint,
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Required by Anthropic; ignored by OpenAI-compatible providers and Gemini.
    pub max_tokens: u32,
    /// Stream the reply (SSE) or take it whole.
    pub stream: bool,
    /// Who asks, for the usage ledger: `chat`, or a local API client's user agent.
    pub source: String,
    /// The key the session had before (a chat remembers it across restarts).
    pub preferred_key: Option<KeyId>,
}

/// How a completion ended.
#[derive(Debug)]
pub enum StopReason {
    Finished,
    /// The user stopped it; the text so far stands.
    Cancelled,
    Failed(CompletionError),
}

/// The reply and how it came about.
#[derive(Debug)]
pub struct CompletionOutcome {
    /// All text received (on failure or cancel: what was shown before).
    pub text: String,
    /// The key that produced the text (the last one tried).
    pub key_id: Option<KeyId>,
    pub key_label: Option<String>,
    /// HTTP requests sent upstream.
    pub attempts: u32,
    /// What the answering attempt used, as the provider reported it.
    pub usage: Option<Usage>,
    pub end: StopReason,
}

impl CompletionService {
    /// Produces a reply for `request`, trying each available key at most once.
    ///
    /// Keys whose announced budget for the request's model is spent are skipped without a
    /// refused request. When every key is spent, cooling or busy and one frees up within the
    /// pool's `max_wait`, the request waits for it (a [`CompletionEvent::Waiting`]) and goes.
    /// A refusal is reported to the pool (cooldown, per-model spend, disable, out of credit)
    /// and the next key is tried at once, the chat re-bound to it. A failure after text was
    /// shown ends the reply: retrying would repeat the text. The loop itself is
    /// [`CompletionService::drive`]'s; this is what a chat's attempt is.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> CompletionOutcome {
        let scope = scope_of(request.endpoint.kind, &std::sync::Arc::from(request.model.as_str()));
        let target = Target {
            endpoint: &request.endpoint,
            session: &request.session,
            preferred_key: request.preferred_key.as_ref(),
            outside: &[],
        };
        let tokens = estimate_tokens(&request.messages);
        let (model, source) =
            (std::sync::Arc::from(request.model.as_str()), std::sync::Arc::from(request.source.as_str()));
        let plan = Plan::new(self, target, &scope, tokens, &model, &source);
        let mut attempt = ChatAttempt { service: self, request, text: String::new(), usage: None };
        let driven = self.drive(&plan, &mut attempt, on_event, cancel).await;
        let (key_id, key_label) = driven.last_key.map_or((None, None), |(id, label)| (id, Some(label.to_string())));
        let end = match driven.end {
            Ok(()) => StopReason::Finished,
            Err(Stop::Cancelled) => StopReason::Cancelled,
            Err(Stop::Failed(error)) => StopReason::Failed(error),
        };
        CompletionOutcome {
            text: attempt.text,
            key_id,
            key_label,
            attempts: driven.attempts,
            usage: attempt.usage,
            end,
        }
    }
}

/// Whether a refusal is a server saying it does not know `stream_options`.
fn rejects_stream_options(failure: &Failure) -> bool {
    failure.status == 400 && failure.message.contains("stream_options")
}

/// A request's input tokens, estimated as characters / 4 (rounded up) over every message: the
/// usual rule of thumb for English text, close enough to admit requests against a token window.
pub fn estimate_tokens(messages: &[ChatMessage]) -> u32 {
    let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

/// A chat's attempt: the request built from the conversation, the provider's stream parsed into
/// text as it comes and passed on as [`CompletionEvent::Delta`]s.
struct ChatAttempt<'a> {
    service: &'a CompletionService,
    request: &'a CompletionRequest,
    /// The reply's text so far (what was shown, when a later failure ends it).
    text: String,
    /// What the answering attempt used.
    usage: Option<Usage>,
}

impl Attempt for ChatAttempt<'_> {
    type Answer = ();
    type Output = ();

    async fn run(
        &mut self,
        credential: &Credential,
        _attempt: u32,
        on_event: &mut (dyn FnMut(CompletionEvent) + Send),
        cancel: &CancellationToken,
    ) -> Tried<()> {
        let (service, request) = (self.service, self.request);
        let provider = &request.endpoint.id;
        let stream_usage = !service.no_stream_usage.lock().unwrap_or_else(|e| e.into_inner()).contains(provider);
        let body = serde_json::to_vec(&request.endpoint.completion_body_with(
            &request.model,
            &request.messages,
            request.max_tokens,
            request.stream,
            stream_usage,
        ))
        .expect("a JSON value always serializes");
        let redact = |text: &str| service.redactor(&request.endpoint, credential.secret()).redact(text);
        let exchange = Exchange {
            http: &service.client(&request.endpoint.base_url),
            endpoint: &request.endpoint,
            key: credential.secret(),
            model: &request.model,
            body: &body,
            stream: request.stream,
            clock: &*service.clock,
            provider_clocks: &service.provider_clocks,
            deadlines: service.deadlines,
            waiter: &*service.waiter,
            redact: &redact,
        };
        let mut on_text = |piece: &str| on_event(CompletionEvent::Delta { text: piece.to_owned() });
        let mut report = AttemptReport::default();
        let end = exchange.run(&mut self.text, &mut on_text, &mut report, cancel).await;
        let ended = match end {
            AttemptEnd::Finished => Ended::Answered(()),
            AttemptEnd::Cancelled => Ended::Cancelled,
            AttemptEnd::Broken(broke) => Ended::Broken(broke),
            AttemptEnd::Refused(failure) if stream_usage && request.stream && rejects_stream_options(&failure) => {
                // A server that does not know `stream_options`: remember it, ask again without.
                tracing::info!(%provider, "the provider refuses stream_options; streams go without usage there");
                service.no_stream_usage.lock().unwrap_or_else(|e| e.into_inner()).insert(provider.clone());
                Ended::Again(failure)
            }
            AttemptEnd::Refused(failure) => Ended::Refused(failure),
        };
        Tried {
            ended,
            shown: !self.text.is_empty(),
            announced: report.announced,
            usage: report.usage,
            first_token_ms: report.first_token.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    fn answered(&mut self, (): (), settlement: Settlement, tried: Tried<()>) {
        self.usage = tried.usage;
        let lesson = Lesson::Answer(&tried.announced);
        let _ = settlement.settle(AttemptOutcome::Ok, Some(200), tried.usage, tried.first_token_ms, lesson);
    }
}
