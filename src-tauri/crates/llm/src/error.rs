use std::time::Duration;

use keypool::PoolError;

/// A provider's refusal of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: u16,
    /// The provider's words, one line at most; never a key.
    pub message: String,
    pub retry_after: Option<Duration>,
}

/// Why a completion ended without a full reply. Messages never contain a key.
#[derive(Debug, thiserror::Error)]
pub enum CompletionError {
    /// No key can serve the request; the pool's reason says why (all cooling: until when; all
    /// disabled: which ones to fix).
    #[error("{0}")]
    NoAvailableKey(String),
    /// The provider refused the request for a reason failover cannot fix (e.g. 400, 500), or
    /// refused the provider-level key.
    #[error("the provider answered HTTP {}: {}", .0.status, .0.message)]
    Provider(Failure),
    /// The connection failed before a reply began.
    #[error("could not reach the provider: {0}")]
    Network(String),
    /// The reply broke off after text was shown; the text so far stands, nothing is repeated.
    #[error("the reply was cut off: {0}")]
    Interrupted(String),
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
