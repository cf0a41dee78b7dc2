//! Checking a key that is not in any pool yet (a bulk import): the request its kind verifies keys
//! with (its row's [`Verification`], as the key's Test asks): one authenticated model list, the
//! provider's free request (Gemini's documented `GET v1beta/models`), or the key's own answer
//! where the model list is public (OpenRouter's `GET key`), read for what it says of the key.
//! Nothing is reported to the pool and no binding moves.

use std::time::Duration;

use keypool::{FailureKind, Secret};

use crate::kind::Verification;
use crate::provider::ProviderEndpoint;
use crate::rate_limit::announced_wait;
use crate::service::CompletionService;
use crate::stream::read_error_body;

/// What one verification said of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyVerdict {
    /// The provider accepted the key (a 2xx, whatever the body).
    Valid,
    /// The provider said the key is not valid: a 401, an `invalid_api_key` or Gemini's
    /// `API_KEY_INVALID` (as a refusal that disables a pool key must say). A 403 is not this: a
    /// key restricted by scope may be refused the model list and still chat.
    Invalid { status: u16 },
    /// Refused for now: 429 (or the dialect's rate-limit words), with the wait the provider
    /// announced, if it did.
    RateLimited { status: u16, retry_after: Option<Duration> },
    /// Could not be checked: no answer, a redirect (the key is not sent on), or an answer that
    /// says nothing about the key (a 5xx, a 404, a 403), with its `status` when one came.
    Unchecked { status: Option<u16> },
}

impl CompletionService {
    /// Asks `endpoint` about `key` (already resolved: never a `$NAME`) the way its kind verifies
    /// keys, and says what the answer means for the key. Only a model list's first page is read.
    pub async fn check_key(&self, endpoint: &ProviderEndpoint, key: &Secret) -> KeyVerdict {
        // Asked the way the key's Test asks: a kind whose model list is public (OpenRouter's)
        // answers about a key only at its own request.
        let url = match endpoint.kind.row().verification {
            Verification::KeyInfo { path } => endpoint.url_of(path),
            Verification::ModelList => match endpoint.wire().models_paging() {
                Some((size, _)) => format!("{}?{size}=1", endpoint.models_url()),
                None => endpoint.models_url(),
            },
        };
        let request = endpoint.authorize(self.client(&url).get(&url), key);
        // The chat's deadline for an answer to begin: a provider that never answers holds no
        // import for ever.
        let sent = tokio::select! {
            sent = request.send() => sent,
            _ = self.waiter.after(self.deadlines.first_byte) => return KeyVerdict::Unchecked { status: None },
        };
        let Ok(response) = sent else { return KeyVerdict::Unchecked { status: None } };
        let status = response.status();
        if status.is_success() {
            return KeyVerdict::Valid;
        }
        if status.is_redirection() {
            return KeyVerdict::Unchecked { status: Some(status.as_u16()) };
        }
        let retry_after = announced_wait(response.headers(), self.clock.now(), Default::default());
        let body = read_error_body(response, self.deadlines.idle, &*self.waiter).await;
        let refusal = endpoint.wire().refusal(status.as_u16(), &body, retry_after, keypool::Announced::default());
        let status = status.as_u16();
        match refusal.pool_kind() {
            Some(FailureKind::AuthRejected) if refusal.says_key_invalid() => KeyVerdict::Invalid { status },
            Some(FailureKind::RateLimited { retry_after, .. }) => KeyVerdict::RateLimited { status, retry_after },
            // Out of credit is still a key the provider knows: it answers again when paid for.
            Some(FailureKind::QuotaExhausted) => KeyVerdict::Valid,
            _ => KeyVerdict::Unchecked { status: Some(status) },
        }
    }

    /// How this service lets time pass (real, or simulated in tests): for callers that wait
    /// between requests of their own (a bulk check waiting out a rate limit).
    pub fn waiter(&self) -> &std::sync::Arc<dyn crate::wait::Waiter> {
        &self.waiter
    }
}
