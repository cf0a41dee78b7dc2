//! What asking a provider about a key found: a model list's failure, a probe's result, and the
//! verdict a verification reached, kept per key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use keypool::{KeyId, ProviderId, Timestamp};

use crate::error::Breakage;

/// The result of probing one key.
#[derive(Debug, Clone)]
pub struct ProbeResult {
    pub ok: bool,
    pub status: Option<u16>,
    /// What went wrong, when something did.
    pub problem: Option<ProbeProblem>,
    /// The provider's words on a refusal; otherwise the English for `problem`.
    pub message: String,
    pub latency_ms: u64,
    /// The key's credit, where the provider tells it (OpenRouter).
    pub credit: Option<Credit>,
}

impl ProbeResult {
    /// What asking about a key (its model list, or its own answer with its credit) says of it.
    pub(crate) fn of(asked: Result<Option<Credit>, ModelsFailure>, latency_ms: u64) -> ProbeResult {
        match asked {
            Ok(Some(credit)) if credit.spent() => ProbeResult {
                ok: false,
                status: Some(200),
                problem: Some(ProbeProblem::OutOfCredit),
                message: "the key's credit is used up".into(),
                latency_ms,
                credit: Some(credit),
            },
            // A server that answers 200 with something else still accepted the key.
            Ok(credit) => {
                ProbeResult { ok: true, status: Some(200), problem: None, message: "OK".into(), latency_ms, credit }
            }
            Err(ModelsFailure { problem: ProbeProblem::Unreadable, .. }) => ProbeResult {
                ok: true,
                status: Some(200),
                problem: None,
                message: "OK".into(),
                latency_ms,
                credit: None,
            },
            Err(failure) => ProbeResult {
                ok: false,
                status: failure.status,
                problem: Some(failure.problem),
                message: failure.message,
                latency_ms,
                credit: None,
            },
        }
    }
}

/// What a key may still spend, in US dollars, as the provider counts it (OpenRouter's
/// `GET /api/v1/key`: `data.limit`, `data.limit_remaining`, `data.usage`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Credit {
    /// The key's spending limit; none: unlimited.
    pub limit: Option<f64>,
    /// What is left of the limit; none: unlimited.
    pub remaining: Option<f64>,
    /// What the key spent so far.
    pub usage: f64,
}

impl Credit {
    /// The credit an answer about a key reports (`{"data": {…}}`), if it is one.
    pub(crate) fn of_key_info(answer: &serde_json::Value) -> Option<Credit> {
        let data = answer.get("data")?.as_object()?;
        let amount = |name: &str| data.get(name).and_then(serde_json::Value::as_f64).filter(|n| n.is_finite());
        Some(Credit {
            limit: amount("limit"),
            remaining: amount("limit_remaining"),
            usage: amount("usage").unwrap_or(0.0),
        })
    }

    /// Nothing is left to spend.
    pub fn spent(&self) -> bool {
        self.remaining.is_some_and(|left| left <= 0.0)
    }
}

/// Why a key test failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeProblem {
    /// The key is `$var`, which has no usable value.
    EnvUnset { var: String },
    /// The provider redirected to another origin; the key was not sent there.
    Redirected,
    /// The provider refused the key (`status`, its words in `message`).
    Refused,
    /// No answer came.
    Unreachable(Breakage),
    /// An answer came, but not a list of models.
    Unreadable,
    /// The key is accepted but still out of credit (a credit check failed).
    OutOfCredit,
}

/// Why a model list could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelsFailure {
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    pub problem: ProbeProblem,
    /// The provider's words on a refusal; otherwise the English for `problem`.
    pub message: String,
    /// The refusal says the key is not valid (401, OpenAI's `invalid_api_key`, Gemini's
    /// `API_KEY_INVALID`). A 403 does not: a key restricted by scope is refused the list and
    /// still chats.
    pub key_invalid: bool,
}

/// What asking the key again showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The provider said the key is not valid (401, `invalid_api_key`, `API_KEY_INVALID`).
    KeyInvalid,
    /// The key was answered by a question that checks keys: the refusal was the request's.
    KeyFine,
    /// No answer that says either: the question refused the key without saying it is invalid
    /// (a 403: a key restricted by scope), failed (404, 5xx, 429, no answer), or answered a
    /// question that answers any key (a public model list, a gateway's page).
    Unknown,
}

impl Verdict {
    /// The verdict asking about a key (its model list, or its own answer) gives, provided the
    /// question refuses a key that cannot be valid: where it answers any key, an answer is
    /// [`Verdict::Unknown`] (see [`crate::verify`]).
    pub(crate) fn of<T>(listed: &Result<T, ModelsFailure>) -> Verdict {
        match listed {
            Ok(_) | Err(ModelsFailure { problem: ProbeProblem::Unreadable, .. }) => Verdict::KeyFine,
            Err(ModelsFailure { key_invalid: true, .. }) => Verdict::KeyInvalid,
            Err(_) => Verdict::Unknown,
        }
    }
}

/// One key's last verdict and when it was reached, behind the lock a verification holds.
pub(crate) type LastVerdict = Arc<tokio::sync::Mutex<Option<(Timestamp, Verdict)>>>;

/// The verifications of every key, and what each provider's verification is worth.
#[derive(Default)]
pub(crate) struct Verifications {
    keys: Mutex<HashMap<KeyId, LastVerdict>>,
    /// Whether a provider's question about a key (at its base URL) refuses a key that cannot be
    /// valid, once learned.
    checks_keys: Mutex<HashMap<(ProviderId, String), bool>>,
}

impl Verifications {
    /// `key`'s last verdict, behind the lock a verification of it holds.
    pub(crate) fn of(&self, key: &KeyId) -> LastVerdict {
        let mut cells = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        cells.entry(key.clone()).or_default().clone()
    }

    /// Whether `provider`'s question about a key, at `base_url`, checks keys, if learned.
    pub(crate) fn checks_keys(&self, provider: &ProviderId, base_url: &str) -> Option<bool> {
        let learned = self.checks_keys.lock().unwrap_or_else(|e| e.into_inner());
        learned.get(&(provider.clone(), base_url.to_owned())).copied()
    }

    pub(crate) fn learned(&self, provider: &ProviderId, base_url: &str, checks_keys: bool) {
        let mut learned = self.checks_keys.lock().unwrap_or_else(|e| e.into_inner());
        learned.insert((provider.clone(), base_url.to_owned()), checks_keys);
    }
}
