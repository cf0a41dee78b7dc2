//! Where a provider is and how to reach it: its endpoint, addressed and authenticated by its
//! kind's wire format (see [`crate::wire`]).

use std::sync::Arc;

use keypool::{ProviderId, Secret};
use serde_json::Value;

use crate::conversation::{ChatMessage, Conversation};
use crate::error::Breakage;
use crate::kind::ProviderKind;
use crate::wire::{join, Wire, WriteOptions};

/// Where and how to reach a provider.
#[derive(Debug, Clone)]
pub struct ProviderEndpoint {
    pub id: ProviderId,
    /// The name people know it by, for messages (ids of added providers are UUIDs). Shared, as
    /// the base URL is: an endpoint is cloned for every relayed request.
    pub name: Arc<str>,
    pub kind: ProviderKind,
    /// e.g. `https://api.openai.com/v1`, `https://api.anthropic.com` or
    /// `https://generativelanguage.googleapis.com` (Gemini: the host root, `v1beta/…` is added).
    pub base_url: Arc<str>,
    /// Used only while the provider's pool has no entries at all.
    pub provider_key: Option<Secret>,
}

impl ProviderEndpoint {
    /// Whether the provider is on this machine or a private network (Ollama for the built-in
    /// Local): the only place a request goes without a key while the provider has none.
    pub fn is_local(&self) -> bool {
        crate::net::is_local_url(&self.base_url)
    }

    /// This provider's wire format.
    pub fn wire(&self) -> &'static dyn Wire {
        self.kind.wire()
    }

    /// Where a reply of `model` is asked for, whole or streamed: one endpoint for OpenAI and
    /// Anthropic, a path per model and method for Gemini (`:generateContent`,
    /// `:streamGenerateContent?alt=sse`).
    pub fn completion_url(&self, model: &str, stream: bool) -> String {
        join(&self.base_url, &self.wire().reply_path(model, stream))
    }

    /// The cheapest authenticated request: listing models.
    pub fn models_url(&self) -> String {
        join(&self.base_url, self.wire().models_path())
    }

    /// Where `path` is under the base URL.
    pub(crate) fn url_of(&self, path: &str) -> String {
        join(&self.base_url, path)
    }

    /// Adds the key the way this kind expects it, as a sensitive header (kept out of debug
    /// output, and never re-sent on a redirect to another origin: the client follows none).
    pub fn authorize(&self, request: reqwest::RequestBuilder, key: &Secret) -> reqwest::RequestBuilder {
        self.authorize_with(request, Some(key))
    }

    /// Adds `key` as [`ProviderEndpoint::authorize`] does, or none as
    /// [`ProviderEndpoint::unauthorized`] does.
    pub fn authorize_with(&self, request: reqwest::RequestBuilder, key: Option<&Secret>) -> reqwest::RequestBuilder {
        let mut headers = reqwest::header::HeaderMap::new();
        self.authorize_headers(&mut headers, key);
        request.headers(headers)
    }

    /// A request with no key, the way this kind still expects its version header.
    pub fn unauthorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.authorize_with(request, None)
    }

    /// Puts `key` in `headers` the way this kind expects it (none: only the version header this
    /// kind still expects). A key that cannot be a header value is left out, and the provider
    /// refuses the request as one without a key.
    pub(crate) fn authorize_headers(&self, headers: &mut reqwest::header::HeaderMap, key: Option<&Secret>) {
        self.wire().authorize(headers, key);
    }

    /// The request body. A streamed OpenAI-compatible request asks for the usage in a last chunk
    /// (`stream_options.include_usage`) unless `stream_usage` is false (a server refused the field).
    pub fn completion_body(&self, model: &str, messages: &[ChatMessage], max_tokens: u32, stream: bool) -> Value {
        self.completion_body_with(model, messages, max_tokens, stream, true)
    }

    pub(crate) fn completion_body_with(
        &self,
        model: &str,
        messages: &[ChatMessage],
        max_tokens: u32,
        stream: bool,
        stream_usage: bool,
    ) -> Value {
        let options = WriteOptions { stream, max_tokens, stream_usage };
        self.wire().write_request(&Conversation::of_chat(messages), model, options)
    }

    /// The text of a whole (non-streamed) reply.
    pub fn reply_text(&self, body: &Value) -> Option<String> {
        self.wire().reply_text(body)
    }

    /// How a whole reply ends when it is not a reply: blocked by the provider's filter (Gemini).
    pub(crate) fn blocked(&self, body: &Value) -> Option<Breakage> {
        self.wire().blocked(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Role;

    #[test]
    fn anthropic_body_moves_system_prompt_out_of_messages() {
        let endpoint = ProviderEndpoint {
            id: ProviderId::new("a"),
            name: "A".into(),
            kind: ProviderKind::Anthropic,
            base_url: "http://x/".into(),
            provider_key: None,
        };
        let messages = [ChatMessage::new(Role::System, "be brief"), ChatMessage::new(Role::User, "hi")];
        let body = endpoint.completion_body("claude", &messages, 64, true);
        assert_eq!(body["system"][0]["text"], "be brief", "the system prompt is a top-level field");
        // A chat is cached after its system prompt and its newest turn.
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["messages"][0]["content"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["messages"].as_array().unwrap().len(), 1, "only turns remain in messages");
        assert_eq!(endpoint.completion_url("claude", true), "http://x/v1/messages", "the base URL is joined cleanly");
    }
}
