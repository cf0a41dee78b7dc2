//! A request routed to a provider of another dialect (a route such as `claude-* →
//! openai/gpt-5`): read into the one conversation in the client's dialect, written in the
//! provider's, forwarded through the pool like any other request, and its answer (whole,
//! streamed, or a refusal) written back in the client's dialect.

use axum::http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use bytes::Bytes;
use futures_util::stream::StreamExt;
use keypool_llm::sse::Decoder;
use keypool_llm::wire::{error_message, Untranslatable, Wire, WireFormat, WriteOptions};
use keypool_llm::{Forwarded, ForwardedBody, ProviderEndpoint, UpstreamPath};
use serde_json::Value;

use crate::dialect::{error_body, Problem};
use crate::{Dialect, Route};

/// The bound a translated request asks for when the client set none (Anthropic requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// How a translated request's answer goes back: the two dialects, and the model the client
/// asked for.
pub(crate) struct Translation {
    client_dialect: Dialect,
    client: &'static dyn Wire,
    provider: &'static dyn Wire,
    model: String,
}

/// A request written for its provider: the path, the body, whether it streams.
pub(crate) struct Translated {
    pub path: UpstreamPath,
    pub body: Bytes,
    pub stream: bool,
    pub translation: Translation,
}

/// The providers found to have no Responses API (many OpenAI-compatible servers have only chat
/// completions and answer it 404), by id and address: a Responses request to one of them goes
/// to its chat completions, translated. Learnt by this process, for as long as it runs.
#[derive(Default)]
pub(crate) struct WithoutResponses(std::sync::RwLock<std::collections::HashSet<(String, String)>>);

impl WithoutResponses {
    fn name(endpoint: &ProviderEndpoint) -> (String, String) {
        (endpoint.id.to_string(), endpoint.base_url.to_string())
    }

    pub(crate) fn knows(&self, endpoint: &ProviderEndpoint) -> bool {
        let known = self.0.read().unwrap_or_else(|e| e.into_inner());
        !known.is_empty() && known.contains(&Self::name(endpoint))
    }

    pub(crate) fn learn(&self, endpoint: &ProviderEndpoint) {
        tracing::info!(provider = %endpoint.name, "the provider has no Responses API: its chat completions answer");
        self.0.write().unwrap_or_else(|e| e.into_inner()).insert(Self::name(endpoint));
    }
}

/// Whether `route`'s provider speaks OpenAI's chat completions and might have no Responses API:
/// one whose Responses request comes back 404 is asked again through its chat completions.
pub(crate) fn may_lack_responses(route: &Route) -> bool {
    route.endpoint.kind.row().wire == WireFormat::OpenAiChat
}

/// The request for `route`'s provider, when it speaks another dialect than the client
/// (`path`'s), or when `chat_only` and a Responses request goes to its chat completions;
/// `Ok(None)` when it goes as it came.
pub(crate) fn request(
    dialect: Dialect,
    path: UpstreamPath,
    route: &Route,
    body: &[u8],
    stream: bool,
    chat_only: bool,
) -> Result<Option<Translated>, Untranslatable> {
    let provider_format = route.endpoint.kind.row().wire;
    // The provider speaks the client's dialect (an OpenAI-compatible one its Responses API too,
    // unless it is known to lack it): the request goes as it came.
    let responses_to_chat = chat_only && path == UpstreamPath::Responses;
    if Dialect::of_wire(provider_format) == dialect && !responses_to_chat {
        return Ok(None);
    }
    if !matches!(
        path,
        UpstreamPath::ChatCompletions
            | UpstreamPath::Responses
            | UpstreamPath::Messages
            | UpstreamPath::GenerateContent
            | UpstreamPath::StreamGenerateContent { sse: true }
    ) {
        return Err(Untranslatable(format!(
            "this request cannot go to {}, which speaks another API: only conversations are translated",
            route.endpoint.name
        )));
    }
    let client = path.wire().wire();
    let value: Value = serde_json::from_slice(body).map_err(|_| Untranslatable("the body is not JSON".into()))?;
    let read = client.read_request(&value)?;
    let stream = if path.wire() == WireFormat::GeminiGenerate { stream } else { read.stream };
    let provider = provider_format.wire();
    let max_tokens = read.conversation.sampling.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let options = WriteOptions { stream, max_tokens, stream_usage: true };
    let written = provider.write_request(&read.conversation, &route.model, options);
    let path = match provider_format {
        WireFormat::OpenAiChat => UpstreamPath::ChatCompletions,
        WireFormat::OpenAiResponses => UpstreamPath::Responses,
        WireFormat::AnthropicMessages => UpstreamPath::Messages,
        WireFormat::GeminiGenerate if stream => UpstreamPath::StreamGenerateContent { sse: true },
        WireFormat::GeminiGenerate => UpstreamPath::GenerateContent,
    };
    let model = if read.model.is_empty() { route.model.clone() } else { read.model };
    Ok(Some(Translated {
        path,
        body: Bytes::from(written.to_string()),
        stream,
        translation: Translation { client_dialect: dialect, client, provider, model },
    }))
}

impl Translation {
    /// The provider's answer in the client's dialect: a refusal as the client's error, a whole
    /// answer as the client's, a stream event by event.
    pub(crate) fn answer(self, forwarded: Forwarded) -> Forwarded {
        let Forwarded { status, headers, body, attempts } = forwarded;
        let passed = |content_type: &'static str| {
            let mut kept: Vec<(HeaderName, HeaderValue)> =
                headers.iter().filter(|(name, _)| *name != CONTENT_TYPE).cloned().collect();
            kept.push((CONTENT_TYPE, HeaderValue::from_static(content_type)));
            kept
        };
        // A whole answer: the status and the JSON the client gets.
        let whole = |status: u16, body: String| Forwarded {
            status,
            headers: passed("application/json"),
            body: ForwardedBody::Whole(Bytes::from(body)),
            attempts,
        };
        let failed = |problem: Problem, message: String| {
            whole(problem.status_code(), error_body(self.client_dialect, problem, message).to_string())
        };
        match body {
            ForwardedBody::Whole(bytes) if status >= 400 => {
                failed(Problem::of_status(status), error_message(&String::from_utf8_lossy(&bytes)))
            }
            ForwardedBody::Whole(bytes) => {
                let reply =
                    serde_json::from_slice::<Value>(&bytes).ok().and_then(|value| self.provider.read_reply(&value));
                match reply {
                    Some(reply) => whole(status, self.client.write_reply(&reply, &self.model).to_string()),
                    None => failed(Problem::Upstream, "the provider's answer could not be read".to_owned()),
                }
            }
            ForwardedBody::Stream(upstream) => {
                let mut writer = self.client.stream_writer(&self.model);
                let provider = self.provider;
                let mut events = Decoder::default();
                let translated = upstream.map(move |chunk| {
                    let chunk = chunk?;
                    events.push(&chunk);
                    let mut out = Vec::with_capacity(chunk.len());
                    while let Ok(Some(event)) = events.next() {
                        for piece in provider.stream_pieces(event.name, event.data) {
                            writer.piece(&piece, &mut out);
                        }
                    }
                    Ok(Bytes::from(out))
                });
                Forwarded {
                    status,
                    headers: passed("text/event-stream"),
                    body: ForwardedBody::Stream(translated.boxed()),
                    attempts,
                }
            }
        }
    }
}
