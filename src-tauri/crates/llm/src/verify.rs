//! Whether a refusal is the key's or the request's. A 401 or 403 may belong to the request (a
//! model or beta the organisation may not use, a restricted key's scopes, moderation), and one
//! such request, from a chat or from any local API client, would otherwise disable every key it
//! fails over to. So before a key is disabled it is asked the cheapest authenticated question its
//! kind verifies keys with (the row's [`crate::kind::Verification`]: the model list; OpenRouter,
//! whose list is public, its `GET key`).
//!
//! A key is disabled only when the refusal and the question agree that the key is not valid
//! (401, `invalid_api_key`, `API_KEY_INVALID`): a 403 on the question proves nothing (a key
//! restricted by scope may be refused the model list and still chat). An answer shows the key
//! fine only where the question refuses a key that cannot be valid, which is learned once per
//! provider by asking it with one; where it answers any key (a public list, a gateway's page)
//! nothing is shown, and a 401 rests the key and fails over (see [`crate::failover`]).
//!
//! At most one verification per key is in flight: concurrent refusals of one key wait for it and
//! share its verdict.

use keypool::{FailureKind, FailureOutcome, KeyId, Secret, Timestamp};

use crate::probe::{ModelsFailure, ProbeProblem, ProbeResult, Verdict};
use crate::provider::ProviderEndpoint;
use crate::service::CompletionService;

/// What testing one key by hand found, and what it did to the key.
#[derive(Debug, Clone)]
pub struct KeyTest {
    pub probe: ProbeResult,
    /// The provider refused the key itself: the pool disabled it, as after a chat's refusal that
    /// the same question confirmed.
    pub disabled: bool,
}

impl CompletionService {
    /// Tests pool key `key` (its stored value `stored`) of `endpoint` by hand with the question a
    /// chat's 401/403 is verified with: its kind's verification (its model list, or its own key
    /// answer). So the two agree: a key refused as not valid (401, `invalid_api_key`, Gemini's
    /// `API_KEY_INVALID`) is disabled, persisted and announced as after a chat's confirmed refusal, and the verdict
    /// answers the refusals being verified meanwhile. A key whose credit the provider says is
    /// used up is out of credit, as after a chat's 402. Any other answer changes nothing in the
    /// pool.
    pub async fn test_key(&self, endpoint: &ProviderEndpoint, key: &KeyId, stored: &Secret) -> KeyTest {
        let Ok(secret) = self.resolver.resolve(stored) else {
            return KeyTest { probe: self.probe(endpoint, stored).await, disabled: false };
        };
        let cell = self.verifications.of(key);
        let mut last = cell.lock().await;
        let started = tokio::time::Instant::now();
        let listed = self.ask_about_key(endpoint, Some(&secret)).await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // A test by hand judges no refusal: it does not ask the provider with a key that cannot be
        // valid. What it leaves for refusals verified meanwhile shows a key fine only where the
        // provider is already known to check keys.
        let verdict = match Verdict::of(&listed) {
            Verdict::KeyFine if self.verifications.checks_keys(&endpoint.id, &endpoint.base_url) != Some(true) => {
                Verdict::Unknown
            }
            verdict => verdict,
        };
        let now = self.clock.now();
        *last = Some((now, verdict));
        drop(last);
        let mut disabled = false;
        if let (Verdict::KeyInvalid, Err(failure)) = (verdict, &listed) {
            let status = failure.status.unwrap_or(401);
            match self.report(&endpoint.id, key, status, FailureKind::AuthRejected, "", now) {
                Ok(FailureOutcome::Disabled { .. }) => disabled = true,
                Ok(_) => {}
                Err(error) => tracing::warn!(%key, %error, "a key refused in a test could not be reported to the pool"),
            }
            tracing::info!(provider = %endpoint.id, %key, status, disabled, "a key tested by hand was refused");
        }
        if let Ok(Some(credit)) = &listed {
            if credit.spent() {
                if let Err(error) = self.report(&endpoint.id, key, 402, FailureKind::QuotaExhausted, "", now) {
                    tracing::warn!(%key, %error, "a key out of credit could not be reported to the pool");
                }
                tracing::info!(provider = %endpoint.id, %key, "a key tested by hand has no credit left");
            }
        }
        KeyTest { probe: ProbeResult::of(listed, latency_ms), disabled }
    }

    /// Whether `key` (its resolved value `secret`), refused at `refused_at`, is bad: asks the
    /// provider about it the way its kind verifies keys, unless a verification that ended after
    /// the refusal already said.
    pub(crate) async fn verify(
        &self,
        endpoint: &ProviderEndpoint,
        key: &KeyId,
        secret: &Secret,
        refused_at: Timestamp,
    ) -> Verdict {
        let cell = self.verifications.of(key);
        let mut last = cell.lock().await;
        if let Some((at, verdict)) = *last {
            if at >= refused_at {
                return verdict;
            }
        }
        let listed = self.ask_about_key(endpoint, Some(secret)).await;
        let verdict = self.judge(endpoint, &listed).await;
        tracing::info!(provider = %endpoint.id, %key, ?verdict, "a refused key was asked again");
        *last = Some((self.clock.now(), verdict));
        verdict
    }

    /// What `listed`, the answer to asking about a key, says of it: an answer shows the key fine
    /// only where the question checks keys.
    async fn judge<T>(&self, endpoint: &ProviderEndpoint, listed: &Result<T, ModelsFailure>) -> Verdict {
        match Verdict::of(listed) {
            Verdict::KeyFine if !self.checks_keys(endpoint).await => Verdict::Unknown,
            verdict => verdict,
        }
    }

    /// Whether `endpoint`'s question about a key refuses a key that cannot be valid: learned once
    /// per provider and base URL by asking it with [`NO_SUCH_KEY`]. Refused (as invalid, or with
    /// a 403), it checks keys; answered, it answers any key; anything else (no answer, a 5xx, a
    /// 429) teaches nothing, and is asked again next time.
    async fn checks_keys(&self, endpoint: &ProviderEndpoint) -> bool {
        if let Some(known) = self.verifications.checks_keys(&endpoint.id, &endpoint.base_url) {
            return known;
        }
        let asked = self.ask_about_key(endpoint, Some(&Secret::new(NO_SUCH_KEY))).await;
        let learned = match asked {
            Err(ModelsFailure { key_invalid: true, .. })
            | Err(ModelsFailure { problem: ProbeProblem::Refused, status: Some(403), .. }) => Some(true),
            Ok(_) | Err(ModelsFailure { problem: ProbeProblem::Unreadable, .. }) => Some(false),
            Err(_) => None,
        };
        if let Some(checks_keys) = learned {
            tracing::info!(provider = %endpoint.id, checks_keys, "learned whether the provider's key question checks keys");
            self.verifications.learned(&endpoint.id, &endpoint.base_url, checks_keys);
        }
        learned.unwrap_or(false)
    }
}

/// A key no provider issued, to learn whether a provider's question about a key checks keys.
pub const NO_SUCH_KEY: &str = "invalid-key-keypool-asks-with-to-learn-whether-keys-are-checked";
