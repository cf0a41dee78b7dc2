//! Asking a provider about itself and about a key: its model list (paged as its wire pages it),
//! a key's own answer where the kind has one (OpenRouter's `GET key`, with its credit), a key
//! test, and whether an out-of-credit key can answer again. Nothing here reports to the pool;
//! [`crate::verify`] does, from what these found.

use std::collections::HashSet;

use keypool::Secret;
use serde_json::Value;

use crate::conversation::{ChatMessage, Role};
use crate::error::Breakage;
use crate::kind::Verification;
use crate::probe::{Credit, ModelsFailure, ProbeProblem, ProbeResult};
use crate::provider::ProviderEndpoint;
use crate::redact::Redactor;
use crate::service::CompletionService;
use crate::stream::{read_error_body, read_whole, REDIRECT_REFUSED};

/// Which keys a refusal's words are masked of.
#[derive(Clone, Copy)]
pub(crate) enum Masking {
    /// Every key of the endpoint's pool, and its own key (a saved provider).
    Pool,
    /// The key the list was asked with (a provider not saved: it has no pool).
    KeyInUse,
}

/// The most of one page of a model list that is read: far more than any provider's list.
pub const MAX_MODEL_LIST: usize = 8 * 1024 * 1024;

/// Anthropic and Gemini page their model lists; more than this many pages is not a real list.
const MAX_MODEL_PAGES: usize = 20;

impl CompletionService {
    /// Whether an out-of-credit key can answer again: where the kind reads a key's credit, its
    /// credit left; elsewhere the smallest real completion (one token of `model`), since listing
    /// models succeeds without credit. Touches no binding, reports nothing to the pool.
    pub async fn probe_credit(&self, endpoint: &ProviderEndpoint, key: &Secret, model: &str) -> bool {
        let Ok(key) = self.resolver.resolve(key) else { return false };
        if let Verification::KeyInfo { .. } = endpoint.kind.row().verification {
            return matches!(self.ask_about_key(endpoint, Some(&key)).await, Ok(Some(credit)) if !credit.spent());
        }
        let messages = [ChatMessage::new(Role::User, "Hi")];
        let body = endpoint.completion_body(model, &messages, 1, false);
        let request = endpoint
            .authorize(self.client(&endpoint.base_url).post(endpoint.completion_url(model, false)), &key)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let sent = tokio::select! {
            sent = request.send() => sent,
            _ = self.waiter.after(self.deadlines.first_byte) => return false,
        };
        matches!(sent, Ok(response) if response.status().is_success())
    }

    /// Probes `key` with the cheapest authenticated request its kind verifies keys with (its
    /// model list, or its own key answer). Touches no chat's binding and reports nothing to the
    /// pool.
    pub async fn probe(&self, endpoint: &ProviderEndpoint, key: &Secret) -> ProbeResult {
        let started = tokio::time::Instant::now();
        let asked = match self.resolved_for_listing(Some(key)) {
            Ok(key) => self.ask_about_key(endpoint, key.as_ref()).await,
            Err(failure) => Err(failure),
        };
        ProbeResult::of(asked, started.elapsed().as_millis() as u64)
    }

    /// The models `endpoint` lists (OpenAI-compatible `GET models`, Anthropic `GET v1/models`,
    /// Gemini `GET v1beta/models` (only those that generate content, without `models/`),
    /// following their pages), asked with `key`, or with no key at all (local servers).
    pub async fn list_models(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        let key = self.resolved_for_listing(key)?;
        self.fetch_models(endpoint, key.as_ref()).await
    }

    /// The models a provider that is not saved yet lists (a form being filled in), asked with
    /// `key` (resolved here when it is a `$NAME`) or none. As [`CompletionService::list_models`]
    /// does, redirects are followed only within the origin, and the provider's words are
    /// returned with the key masked; nothing is kept, and no pool is consulted.
    pub async fn list_models_unsaved(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        let key = self.resolved_for_listing(key)?;
        self.fetch_models_masking(endpoint, key.as_ref(), Masking::KeyInUse).await
    }

    /// The value a model list is asked with: `key` with its `$NAME` resolved.
    fn resolved_for_listing(&self, key: Option<&Secret>) -> Result<Option<Secret>, ModelsFailure> {
        key.map(|key| self.resolver.resolve(key)).transpose().map_err(|error| ModelsFailure {
            key_invalid: false,
            status: None,
            problem: ProbeProblem::EnvUnset { var: error.var().to_owned() },
            message: format!("environment variable {} has no usable value", error.var()),
        })
    }

    /// What the provider says of `key` (already resolved) when asked the way its kind verifies
    /// keys: its model list answered (no credit known), or its key answer with the key's credit.
    pub(crate) async fn ask_about_key(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Option<Credit>, ModelsFailure> {
        match endpoint.kind.row().verification {
            Verification::ModelList => self.fetch_models(endpoint, key).await.map(|_| None),
            Verification::KeyInfo { path } => {
                let url = reqwest::Url::parse(&endpoint.url_of(path)).map_err(|_| unreachable(Breakage::Request))?;
                let (status, body) = self.ask(endpoint, url, key, Masking::Pool).await?;
                let info: Value = serde_json::from_slice(&body).map_err(|_| unreadable(status))?;
                Credit::of_key_info(&info).map(Some).ok_or_else(|| unreadable(status))
            }
        }
    }

    /// [`CompletionService::list_models`] with `key` already resolved. Each page is read to at
    /// most [`MAX_MODEL_LIST`] bytes, and a model listed twice is kept once.
    pub(crate) async fn fetch_models(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
    ) -> Result<Vec<String>, ModelsFailure> {
        self.fetch_models_masking(endpoint, key, Masking::Pool).await
    }

    async fn fetch_models_masking(
        &self,
        endpoint: &ProviderEndpoint,
        key: Option<&Secret>,
        masking: Masking,
    ) -> Result<Vec<String>, ModelsFailure> {
        let mut models: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let mut url = reqwest::Url::parse(&endpoint.models_url()).map_err(|_| unreachable(Breakage::Request))?;
            if let Some((size, cursor)) = endpoint.wire().models_paging() {
                url.query_pairs_mut().append_pair(size, "1000");
                if let Some(after) = &after {
                    url.query_pairs_mut().append_pair(cursor, after);
                }
            }
            let (status, body) = self.ask(endpoint, url, key, masking).await?;
            let page: Value = serde_json::from_slice(&body).map_err(|_| unreadable(status))?;
            let (ids, next) = endpoint.wire().models_page(&page).ok_or_else(|| unreadable(status))?;
            for id in ids {
                if seen.insert(id.clone()) {
                    models.push(id);
                }
            }
            match next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        Ok(models)
    }

    /// `GET url` with `key`: the answer's body (at most [`MAX_MODEL_LIST`]), or why there is
    /// none, the provider's words masked of the keys `masking` names.
    pub(crate) async fn ask(
        &self,
        endpoint: &ProviderEndpoint,
        url: reqwest::Url,
        key: Option<&Secret>,
        masking: Masking,
    ) -> Result<(u16, Vec<u8>), ModelsFailure> {
        let request = endpoint.authorize_with(self.client(url.as_str()).get(url), key);
        self.asked(endpoint, request, key, masking).await
    }

    /// `GET url` with `key` alone as the `Authorization` header (Z.ai's monitor takes it so), as
    /// [`CompletionService::ask`].
    pub(crate) async fn ask_raw(
        &self,
        endpoint: &ProviderEndpoint,
        url: reqwest::Url,
        key: &Secret,
    ) -> Result<(u16, Vec<u8>), ModelsFailure> {
        let mut value =
            reqwest::header::HeaderValue::from_str(key.expose()).map_err(|_| unreachable(Breakage::Request))?;
        value.set_sensitive(true);
        let request = self.client(url.as_str()).get(url).header(reqwest::header::AUTHORIZATION, value);
        self.asked(endpoint, request, Some(key), Masking::Pool).await
    }

    async fn asked(
        &self,
        endpoint: &ProviderEndpoint,
        request: reqwest::RequestBuilder,
        key: Option<&Secret>,
        masking: Masking,
    ) -> Result<(u16, Vec<u8>), ModelsFailure> {
        // The chat's deadline for an answer to begin: a provider that never answers holds no
        // verification (and the key's lock with it), Test or import for ever.
        let sent = tokio::select! {
            sent = request.send() => sent,
            _ = self.waiter.after(self.deadlines.first_byte) => return Err(unreachable(Breakage::Timeout)),
        };
        let response = sent.map_err(|error| unreachable(crate::net::breakage(&error)))?;
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            return Err(ModelsFailure {
                status: Some(status),
                problem: ProbeProblem::Redirected,
                message: REDIRECT_REFUSED.into(),
                key_invalid: false,
            });
        }
        if !response.status().is_success() {
            let body = read_error_body(response, self.deadlines.idle, &*self.waiter).await;
            let refusal = endpoint.wire().refusal(status, &body, None, keypool::Announced::default());
            let key_invalid = refusal.says_key_invalid();
            let message = match (key, masking) {
                // Decoded words may hold a key written with escapes: masked again.
                (Some(key), Masking::Pool) => self.redactor(endpoint, Some(key)).redact(&refusal.message),
                (Some(key), Masking::KeyInUse) => Redactor::new([key]).redact(&refusal.message),
                (None, _) => refusal.message,
            };
            return Err(ModelsFailure { status: Some(status), problem: ProbeProblem::Refused, message, key_invalid });
        }
        let body = read_whole(response, MAX_MODEL_LIST, self.deadlines.idle, &*self.waiter).await;
        body.map(|body| (status, body)).map_err(|_| unreadable(status))
    }
}

/// No answer came.
fn unreachable(broke: Breakage) -> ModelsFailure {
    ModelsFailure {
        status: None,
        problem: ProbeProblem::Unreachable(broke),
        message: broke.to_string(),
        key_invalid: false,
    }
}

/// An answer came, but not what was asked for.
fn unreadable(status: u16) -> ModelsFailure {
    ModelsFailure {
        status: Some(status),
        problem: ProbeProblem::Unreadable,
        message: "the provider's answer is not a list of models".into(),
        key_invalid: false,
    }
}
