use std::time::Duration;

use keypool::{Announced, FailureKind, PoolError, Quota, Unavailability};

/// A provider's refusal of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: u16,
    /// The provider's words, one line at most; never a key.
    pub message: String,
    pub retry_after: Option<Duration>,
    /// The windows the refusal announced (which limit was hit).
    pub announced: Announced,
    /// The provider said the account is out of credit.
    pub out_of_credit: bool,
    /// What the error's details say the refusal means to the pool, when they say more than its
    /// status does (Gemini's `error.details`: the quota hit, an invalid key answered with a 400,
    /// an overloaded model); `None`: its status says it.
    pub meaning: Option<Meaning>,
}

/// What a refusal's details say it means to the pool, whatever its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// A rate limit (with [`Failure::retry_after`] and [`Failure::announced`]), naming which quota
    /// of the request's scope it hit, if it does.
    RateLimit(Option<Quota>),
    /// The key is not valid, whatever the status (Gemini's 400 `API_KEY_INVALID`, an
    /// `invalid_api_key` code).
    KeyRefused,
}

impl Failure {
    /// A refusal with nothing announced.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
            retry_after: None,
            announced: Announced::default(),
            out_of_credit: false,
            meaning: None,
        }
    }

    /// What the refusal means to the pool, if anything: out of credit, a rate limit (with the
    /// windows it announced), an auth rejection; `None` for the request's own problems.
    pub fn pool_kind(&self) -> Option<FailureKind> {
        if self.out_of_credit {
            return Some(FailureKind::QuotaExhausted);
        }
        let (retry_after, announced) = (self.retry_after, self.announced);
        match self.meaning {
            Some(Meaning::RateLimit(quota)) => Some(FailureKind::RateLimited { retry_after, announced, quota }),
            Some(Meaning::KeyRefused) => Some(FailureKind::AuthRejected),
            None => match FailureKind::of_status(self.status, retry_after)? {
                FailureKind::RateLimited { retry_after, quota, .. } => {
                    Some(FailureKind::RateLimited { retry_after, announced, quota })
                }
                kind => Some(kind),
            },
        }
    }
}

impl Failure {
    /// The refusal says the key is not valid (401, an `invalid_api_key` or `API_KEY_INVALID`
    /// code), not merely that it may not do this (a 403: a model, a scope, moderation). Only
    /// such a refusal, confirmed by asking about the key, disables it.
    pub fn says_key_invalid(&self) -> bool {
        self.pool_kind() == Some(FailureKind::AuthRejected)
            && (self.status == 401 || self.meaning == Some(Meaning::KeyRefused))
    }
}

/// No key of a provider could serve a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoKey {
    /// The provider's name, as people know it.
    pub provider: String,
    pub why: NoKeyReason,
    /// The last refusal of this request (status and the provider's words), when there was one.
    pub last: Option<(u16, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoKeyReason {
    /// The pool is empty and the provider has no key of its own.
    Empty,
    /// The pool is empty and the provider key is a `$NAME` with no usable value.
    ProviderKeyUnresolved { var: String },
    /// Every key is blocked; why, key by key.
    Blocked(Unavailability),
}

impl std::fmt::Display for NoKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let provider = &self.provider;
        match &self.why {
            NoKeyReason::Empty => {
                write!(f, "{provider} has no API keys: add one in Settings → Providers → {provider} → API Key Pool")?
            }
            NoKeyReason::ProviderKeyUnresolved { var } => {
                write!(f, "the provider key of {provider} refers to ${var}, which has no usable value")?
            }
            NoKeyReason::Blocked(reason) => write!(f, "{provider}: {reason}")?,
        }
        if let Some((status, message)) = &self.last {
            write!(f, "; last answer: HTTP {status} {message}")?;
        }
        Ok(())
    }
}

/// How a connection or a reply broke. The details (hosts, the client's words) go to the log,
/// redacted; this is what the user is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Breakage {
    #[error("connection failed")]
    Connect,
    #[error("timed out")]
    Timeout,
    #[error("the reply broke off")]
    Body,
    #[error("request failed")]
    Request,
    #[error("the provider's reply was not JSON")]
    NotJson,
    #[error("the provider's reply held no text")]
    NoText,
    #[error("the stream ended before the reply was complete")]
    EndedEarly,
    #[error("the stream broke")]
    Stream,
    /// The answer (or one event of a stream) is larger than Keypool reads.
    #[error("the provider's answer is too large")]
    TooLarge,
    /// The provider's filter blocked the prompt (Gemini's `promptFeedback.blockReason`).
    #[error("the provider blocked the prompt (safety filter)")]
    PromptBlocked,
    /// The provider's filter stopped the reply (Gemini's `finishReason: SAFETY` and the like).
    #[error("the provider's safety filter stopped the reply")]
    ReplyBlocked,
}

/// What cut a reply off after text was shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Interruption {
    #[error("{0}")]
    Broken(Breakage),
    /// The provider sent an error (an error event in the stream, or refused a failover).
    #[error("the provider answered HTTP {status}: {message}")]
    Refused { status: u16, message: String },
}

/// Why a completion ended without a full reply. Messages never contain a key.
#[derive(Debug, thiserror::Error)]
pub enum CompletionError {
    /// No key can serve the request; the reason says why, key by key.
    #[error("{0}")]
    NoAvailableKey(NoKey),
    /// The provider refused the request for a reason failover cannot fix (e.g. 400, 500), or
    /// refused the provider-level key.
    #[error("the provider answered HTTP {}: {}", .0.status, .0.message)]
    Provider(Box<Failure>),
    /// The connection failed before a reply began.
    #[error("could not reach the provider: {0}")]
    Network(Breakage),
    /// The reply broke off after text was shown; the text so far stands, nothing is repeated.
    #[error("the reply was cut off: {0}")]
    Interrupted(Interruption),
    #[error(transparent)]
    Pool(#[from] PoolError),
}

impl CompletionError {
    /// A stable code for the UI: one of the IPC error codes.
    pub fn code(&self) -> &'static str {
        match self {
            CompletionError::NoAvailableKey(_) => "no_available_key",
            CompletionError::Provider(_) | CompletionError::Network(_) | CompletionError::Interrupted(_) => "provider",
            CompletionError::Pool(PoolError::NoAvailableKey { .. }) => "no_available_key",
            CompletionError::Pool(PoolError::UnresolvedEnv { .. }) => "provider",
            CompletionError::Pool(PoolError::Load { .. }) => "storage",
        }
    }
}
