//! What the completion service tells its owner about every upstream attempt, for the usage
//! ledger: when, with which key, for which chat and model, how it ended, how long it took and
//! what it used.

use std::sync::Arc;

use keypool::{KeyId, ProviderId, SessionId, Timestamp};

use crate::conversation::Usage;

/// How one upstream attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The reply came whole.
    Ok,
    /// 429 or 529.
    RateLimited,
    /// 401 or 403.
    AuthRejected,
    /// Out of credit.
    QuotaExhausted,
    /// Any other refusal (400, 500, a redirect elsewhere).
    ProviderError,
    /// The connection failed or the stream broke off.
    TransportError,
    /// The user stopped it.
    Stopped,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Ok => "ok",
            AttemptOutcome::RateLimited => "rate_limited",
            AttemptOutcome::AuthRejected => "auth_rejected",
            AttemptOutcome::QuotaExhausted => "quota_exhausted",
            AttemptOutcome::ProviderError => "provider_error",
            AttemptOutcome::TransportError => "transport_error",
            AttemptOutcome::Stopped => "stopped",
        }
    }
}

/// What an attempt was sent with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SentWith {
    /// A key of the pool.
    PoolKey(KeyId),
    /// The provider's own key, used while its pool is empty.
    ProviderKey,
    /// No key at all: a server on this machine or a private network (Ollama) while its
    /// provider has neither.
    NoKey,
}

impl SentWith {
    /// The pool key, if one was sent.
    pub fn pool_key(&self) -> Option<&KeyId> {
        match self {
            SentWith::PoolKey(key) => Some(key),
            SentWith::ProviderKey | SentWith::NoKey => None,
        }
    }
}

/// One upstream attempt. Its text is shared: a request's record is copied for each of its
/// attempts, and each copy goes to the ledger, the metrics and the members' book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// When it was sent.
    pub at: Timestamp,
    pub provider: ProviderId,
    /// The key it went with: a pool key, the provider-level key, or none.
    pub key: SentWith,
    pub model: Arc<str>,
    /// The chat (or the local endpoint's conversation) it served.
    pub session: SessionId,
    /// Who asked: `chat`, or a local API client's user agent.
    pub source: Arc<str>,
    /// The member of a server's endpoint whose token sent the request; `None` for the app and for
    /// the server's own token.
    pub member: Option<Arc<str>>,
    pub outcome: AttemptOutcome,
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    /// From sending to the first text.
    pub first_token_ms: Option<u64>,
    /// From sending to the end.
    pub latency_ms: u64,
    /// What it used, as the provider reported it.
    pub usage: Option<Usage>,
}

impl AttemptRecord {
    /// The record of an attempt as far as it is known before the key is chosen and the request
    /// sent; the failover loop fills in the rest.
    /// Model and source are cut to [`MAX_RECORDED_TEXT`] bytes: they come from clients.
    pub(crate) fn draft(provider: ProviderId, model: &Arc<str>, session: &SessionId, source: &Arc<str>) -> Self {
        AttemptRecord {
            at: Timestamp::EPOCH,
            provider,
            key: SentWith::NoKey,
            model: bounded(model),
            session: session.clone(),
            source: bounded(source),
            member: None,
            outcome: AttemptOutcome::Ok,
            status: None,
            first_token_ms: None,
            latency_ms: 0,
            usage: None,
        }
    }
}

/// The most of a client's text (a model name, a user agent) that the ledger keeps, in bytes.
pub const MAX_RECORDED_TEXT: usize = 256;

/// `text` itself when it is short enough (as almost every model and user agent is), else cut at
/// a character's boundary.
fn bounded(text: &Arc<str>) -> Arc<str> {
    if text.len() <= MAX_RECORDED_TEXT {
        return text.clone();
    }
    let mut end = MAX_RECORDED_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Arc::from(&text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_clients_name_is_recorded_bounded() {
        let long: Arc<str> = "é".repeat(300).into();
        let record = AttemptRecord::draft(ProviderId::from("p"), &long, &SessionId::from("s"), &long);
        assert!(record.model.len() <= MAX_RECORDED_TEXT && record.source.len() <= MAX_RECORDED_TEXT, "both cut");
        assert!(record.model.chars().all(|c| c == 'é'), "at a character's boundary");
        let (gpt, chat): (Arc<str>, Arc<str>) = ("gpt".into(), "chat".into());
        assert_eq!(&*AttemptRecord::draft(ProviderId::from("p"), &gpt, &SessionId::from("s"), &chat).model, "gpt");
    }
}
