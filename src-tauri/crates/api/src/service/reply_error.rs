//! Why a reply failed, as a code with parameters: the UI words it in the user's language, with
//! local times and countdowns. Stored as JSON with the failed message, so a chat reopened later
//! says the same; a row from before this existed (or a kind this build does not know) reads as
//! [`ReplyError::Other`] with the English saved beside it.

use keypool::{Blocker, PoolError, Unavailability};
use keypool_llm::{Breakage, CompletionError, Interruption, NoKey, NoKeyReason};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Why a reply failed, with what the UI needs to word it in the user's language, with local
/// times and countdowns. The IPC layer passes it as it is (its TypeScript is generated from it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ReplyError {
    /// The provider has no keys in its pool and no key of its own.
    NoKeys { provider: String },
    /// The pool is empty and the provider's own key is `$var`, which has no usable value.
    ProviderKeyUnresolved { provider: String, var: String },
    /// Every key is blocked: why, key by key. `firstFreeAt`: when one frees up by itself
    /// (milliseconds since the epoch), if one will. `last`: the last refusal of this request.
    AllBlocked { provider: String, keys: Vec<BlockedKeyInfo>, first_free_at: Option<i64>, last: Option<LastAnswer> },
    /// A key is `$var`, which has no usable value (`key`: its name as written).
    KeyUnresolved { key: String, var: String },
    /// The provider refused the request for a reason another key cannot fix (`message`: its
    /// own words, keys masked).
    Refused { status: u16, message: String },
    /// The provider refused a request that carried images (a 400): most likely the model takes
    /// no images. Like any refusal of the request itself, it changed nothing in the pool.
    ImagesRefused { status: u16, message: String },
    /// The provider redirected to another host; Keypool sent no key there.
    Redirected { status: u16 },
    /// No answer came.
    Unreachable { breakage: BreakageKind },
    /// The reply broke off after text was shown; the text so far stands. Either how the
    /// connection broke, or the provider's refusal (`status`, `message`).
    Interrupted {
        #[ts(optional)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        breakage: Option<BreakageKind>,
        #[ts(optional)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[ts(optional)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The pool's keys could not be read from the database.
    Storage,
    /// Saved before errors were structured: the English as it was saved.
    Other { message: String },
}

/// One key that could not serve the reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlockedKeyInfo {
    /// Its label, or its masked preview (`$NAME` as written).
    pub name: String,
    pub state: BlockedState,
    /// When a cooling, spent or used-up key frees up, when an exhausted one is checked again.
    pub until: Option<i64>,
    /// The HTTP status that disabled it, when that is why it is off.
    pub status: Option<u16>,
    /// This reply already tried it.
    pub tried: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BlockedState {
    /// This reply tried it and it failed.
    Tried,
    /// Resting after rate limits.
    Cooling,
    /// Its budget for the model is used up until the window refills.
    Spent,
    /// The model's quota for the day is used up (its quota group's), until the provider's day
    /// ends (midnight in Los Angeles for Gemini); back by itself then.
    UsedUp,
    /// As many of its requests are in flight as it may have at once.
    Busy,
    /// Switched off by hand, or by the provider's refusal (`status`).
    Disabled,
    /// Out of credit; checked again in the background.
    Exhausted,
    /// Kept in the keychain, which is not reachable now.
    Unavailable,
}

/// The last refusal of a request: status and the provider's words (keys masked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LastAnswer {
    pub status: u16,
    pub message: String,
}

/// How a connection or a reply broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum BreakageKind {
    Connect,
    Timeout,
    Body,
    Request,
    NotJson,
    NoText,
    EndedEarly,
    Stream,
    /// The answer, or one event of a stream, is larger than Keypool reads.
    TooLarge,
    /// The provider's safety filter blocked the prompt: no reply was written.
    PromptBlocked,
    /// The provider's safety filter stopped the reply.
    ReplyBlocked,
}

impl From<Breakage> for BreakageKind {
    fn from(breakage: Breakage) -> Self {
        match breakage {
            Breakage::Connect => BreakageKind::Connect,
            Breakage::Timeout => BreakageKind::Timeout,
            Breakage::Body => BreakageKind::Body,
            Breakage::Request => BreakageKind::Request,
            Breakage::NotJson => BreakageKind::NotJson,
            Breakage::NoText => BreakageKind::NoText,
            Breakage::EndedEarly => BreakageKind::EndedEarly,
            Breakage::Stream => BreakageKind::Stream,
            Breakage::TooLarge => BreakageKind::TooLarge,
            Breakage::PromptBlocked => BreakageKind::PromptBlocked,
            Breakage::ReplyBlocked => BreakageKind::ReplyBlocked,
        }
    }
}

impl ReplyError {
    /// Why a request failed, knowing whether it carried images: a 400 to one that did is worded
    /// as the model not taking them.
    pub fn of_request(error: &CompletionError, carried_images: bool) -> ReplyError {
        match (ReplyError::from(error), carried_images) {
            (ReplyError::Refused { status: 400, message }, true) => ReplyError::ImagesRefused { status: 400, message },
            (other, _) => other,
        }
    }
}

impl From<&CompletionError> for ReplyError {
    fn from(error: &CompletionError) -> Self {
        match error {
            CompletionError::NoAvailableKey(no_key) => no_key.into(),
            CompletionError::Provider(failure) if (300..400).contains(&failure.status) => {
                ReplyError::Redirected { status: failure.status }
            }
            CompletionError::Provider(failure) => {
                ReplyError::Refused { status: failure.status, message: failure.message.clone() }
            }
            CompletionError::Network(breakage) => ReplyError::Unreachable { breakage: (*breakage).into() },
            CompletionError::Interrupted(Interruption::Broken(breakage)) => {
                ReplyError::Interrupted { breakage: Some((*breakage).into()), status: None, message: None }
            }
            CompletionError::Interrupted(Interruption::Refused { status, message }) => {
                ReplyError::Interrupted { breakage: None, status: Some(*status), message: Some(message.clone()) }
            }
            CompletionError::Pool(PoolError::NoAvailableKey { provider, reason }) => {
                blocked(provider.to_string(), reason, None)
            }
            CompletionError::Pool(PoolError::UnresolvedEnv { key_id, label, var, .. }) => {
                ReplyError::KeyUnresolved { key: label.clone().unwrap_or_else(|| key_id.to_string()), var: var.clone() }
            }
            CompletionError::Pool(PoolError::Load { .. }) => ReplyError::Storage,
        }
    }
}

impl From<&NoKey> for ReplyError {
    fn from(no_key: &NoKey) -> Self {
        let provider = no_key.provider.clone();
        match &no_key.why {
            NoKeyReason::Empty => ReplyError::NoKeys { provider },
            NoKeyReason::ProviderKeyUnresolved { var } => {
                ReplyError::ProviderKeyUnresolved { provider, var: var.clone() }
            }
            NoKeyReason::Blocked(reason) => {
                let last = no_key.last.clone().map(|(status, message)| LastAnswer { status, message });
                blocked(provider, reason, last)
            }
        }
    }
}

fn blocked(provider: String, reason: &Unavailability, last: Option<LastAnswer>) -> ReplyError {
    let Unavailability::Blocked { keys, first_free_at } = reason else {
        return ReplyError::NoKeys { provider };
    };
    let keys = keys
        .iter()
        .map(|key| {
            let (state, until, status) = match key.why {
                Blocker::Tried => (BlockedState::Tried, None, None),
                Blocker::Cooling { until } => (BlockedState::Cooling, Some(until.as_millis()), None),
                Blocker::Spent { until } => (BlockedState::Spent, Some(until.as_millis()), None),
                Blocker::UsedUpForTheDay { until } => (BlockedState::UsedUp, Some(until.as_millis()), None),
                Blocker::Busy => (BlockedState::Busy, None, None),
                Blocker::Disabled { status } => (BlockedState::Disabled, None, status),
                Blocker::Exhausted { next_probe_at } => {
                    (BlockedState::Exhausted, Some(next_probe_at.as_millis()), None)
                }
                Blocker::Unavailable => (BlockedState::Unavailable, None, None),
            };
            BlockedKeyInfo { name: key.name.clone(), state, until, status, tried: key.tried }
        })
        .collect();
    ReplyError::AllBlocked { provider, keys, first_free_at: first_free_at.map(|t| t.as_millis()), last }
}

impl ReplyError {
    /// The error saved with a message, read back; `english` is what was saved beside it.
    pub fn stored(details: Option<&str>, english: Option<&str>) -> Option<ReplyError> {
        match details.map(serde_json::from_str::<ReplyError>) {
            Some(Ok(error)) => Some(error),
            _ => english.map(|message| ReplyError::Other { message: message.to_owned() }),
        }
    }

    /// The JSON saved with a message.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).expect("a ReplyError serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_errors_read_back_and_old_rows_keep_their_words() {
        let error = ReplyError::Refused { status: 400, message: "bad model".into() };
        assert_eq!(ReplyError::stored(Some(&error.to_stored()), Some("x")), Some(error), "round-trips");
        assert_eq!(
            ReplyError::stored(None, Some("old words")),
            Some(ReplyError::Other { message: "old words".into() }),
            "a row from before keeps its English"
        );
        assert_eq!(
            ReplyError::stored(Some(r#"{"kind":"fromTheFuture"}"#), Some("words")),
            Some(ReplyError::Other { message: "words".into() }),
            "an unknown kind falls back too"
        );
        assert_eq!(ReplyError::stored(None, None), None, "no error, no details");
    }
}
