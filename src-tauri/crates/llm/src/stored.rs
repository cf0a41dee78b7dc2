//! Which key made each stored response: a Responses API request that continues one
//! (`previous_response_id`) must go to a key of the organisation that stores it, so the relay
//! remembers the key of each response it passed on, for the most recent [`CAPACITY`] of them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use keypool::KeyId;
use serde_json::Value;

/// Responses remembered; the oldest is forgotten first (about 150 bytes each).
pub const CAPACITY: usize = 20_000;

/// Response ids longer than this are not remembered (OpenAI's are about 50 characters).
const MAX_ID_BYTES: usize = 256;

#[derive(Default)]
pub(crate) struct StoredResponses {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    keys: HashMap<String, KeyId>,
    order: VecDeque<String>,
}

impl StoredResponses {
    /// The key that made response `id`, if it is remembered.
    pub(crate) fn key_of(&self, id: &str) -> Option<KeyId> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).keys.get(id).cloned()
    }

    /// `key` made response `id`.
    pub(crate) fn learn(&self, id: &str, key: &KeyId) {
        if id.is_empty() || id.len() > MAX_ID_BYTES {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.keys.insert(id.to_owned(), key.clone()).is_none() {
            inner.order.push_back(id.to_owned());
            while inner.order.len() > CAPACITY {
                if let Some(oldest) = inner.order.pop_front() {
                    inner.keys.remove(&oldest);
                }
            }
        }
    }
}

/// The id of a Responses API answer: a whole response object's `id`, or in a stream the
/// `response.created` event's `response.id`.
pub(crate) fn response_id(event: &str, data: &str) -> Option<String> {
    if !event.is_empty() && event != "response.created" {
        return None;
    }
    let value: Value = serde_json::from_str(data).ok()?;
    let response = if event.is_empty() { &value } else { &value["response"] };
    (response["object"] == "response").then(|| response["id"].as_str().map(str::to_owned)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_response_is_forgotten_first() {
        let stored = StoredResponses::default();
        let key = KeyId::new("k");
        for i in 0..=CAPACITY {
            stored.learn(&format!("resp_{i}"), &key);
        }
        assert_eq!(stored.key_of("resp_0"), None, "beyond the capacity, the first is gone");
        assert_eq!(stored.key_of(&format!("resp_{CAPACITY}")), Some(key), "the latest is kept");
        stored.learn(&"x".repeat(MAX_ID_BYTES + 1), &KeyId::new("k"));
        assert_eq!(stored.key_of(&"x".repeat(MAX_ID_BYTES + 1)), None, "an id too long is not kept");
    }

    #[test]
    fn the_id_is_read_whole_and_from_the_stream_start() {
        let created =
            r#"{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress"}}"#;
        assert_eq!(response_id("response.created", created).as_deref(), Some("resp_1"));
        assert_eq!(response_id("response.output_text.delta", r#"{"delta":"hi"}"#), None);
        assert_eq!(response_id("", r#"{"id":"resp_2","object":"response","output":[]}"#).as_deref(), Some("resp_2"));
        assert_eq!(response_id("", r#"{"id":"chatcmpl-1","object":"chat.completion"}"#), None, "not a response");
    }
}
