//! Reading an answer's `usage` object by its members' names, and a whole answer's head.

use serde::Deserialize;
use serde_json::Value;

use super::Wire;
use crate::conversation::Usage;

/// An OpenAI or Anthropic `usage` object, read by the members' names: deserialized straight from
/// a reply (no `Value` built, its map and its strings allocated, on the local API's hot path),
/// or taken from a `Value` ([`UsageObject::of_value`]). Deserialized from an object only:
/// serde's derived structs read an array too, as their fields in order, where a `Value` has no
/// members (a `usage` written `[11, {...}, 5]` was counted so). A member named twice keeps its
/// last value, as in a `Value`; one of another type fails the read, and the caller reads a
/// `Value` instead.
#[derive(Debug, Default)]
pub(crate) struct UsageObject {
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) prompt_tokens_details: Option<PromptTokensDetails>,
    pub(crate) completion_tokens: Option<u64>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) cache_read_input_tokens: Option<u64>,
    pub(crate) cache_creation_input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    /// The Responses API's cached input.
    pub(crate) input_tokens_details: Option<PromptTokensDetails>,
}

/// A member's name as it is read: which of these names it is (`None`: another), matched where
/// it lies in the body, never copied out (serde reads a `Cow<str>` key into a new `String`).
struct MemberOf(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for MemberOf {
    type Value = Option<&'static str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for MemberOf {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a member's name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().copied().find(|known| *known == name))
    }
}

#[derive(Debug, Default)]
pub(crate) struct PromptTokensDetails {
    pub(crate) cached_tokens: Option<u64>,
}

impl<'de> Deserialize<'de> for PromptTokensDetails {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = PromptTokensDetails;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut details = PromptTokensDetails::default();
                while let Some(name) = map.next_key_seed(MemberOf(&["cached_tokens"]))? {
                    match name {
                        Some("cached_tokens") => details.cached_tokens = map.next_value()?,
                        _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                    }
                }
                Ok(details)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

impl<'de> Deserialize<'de> for UsageObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = UsageObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut usage = UsageObject::default();
                const MEMBERS: &[&str] = &[
                    "prompt_tokens",
                    "prompt_tokens_details",
                    "completion_tokens",
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                    "output_tokens",
                    "input_tokens_details",
                ];
                while let Some(name) = map.next_key_seed(MemberOf(MEMBERS))? {
                    match name {
                        Some("prompt_tokens") => usage.prompt_tokens = map.next_value()?,
                        Some("prompt_tokens_details") => usage.prompt_tokens_details = map.next_value()?,
                        Some("completion_tokens") => usage.completion_tokens = map.next_value()?,
                        Some("input_tokens") => usage.input_tokens = map.next_value()?,
                        Some("cache_read_input_tokens") => usage.cache_read_input_tokens = map.next_value()?,
                        Some("cache_creation_input_tokens") => usage.cache_creation_input_tokens = map.next_value()?,
                        Some("output_tokens") => usage.output_tokens = map.next_value()?,
                        Some("input_tokens_details") => usage.input_tokens_details = map.next_value()?,
                        _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                    }
                }
                Ok(usage)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

impl UsageObject {
    /// The members of `usage` that are counts; anything else (missing, `null`, text, a negative
    /// or fractional number) is none. Deserialized, such a member fails the whole read instead.
    pub(crate) fn of_value(usage: &Value) -> UsageObject {
        let count = |name: &str| usage[name].as_u64();
        UsageObject {
            prompt_tokens: count("prompt_tokens"),
            prompt_tokens_details: Some(PromptTokensDetails {
                cached_tokens: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
            }),
            completion_tokens: count("completion_tokens"),
            input_tokens: count("input_tokens"),
            cache_read_input_tokens: count("cache_read_input_tokens"),
            cache_creation_input_tokens: count("cache_creation_input_tokens"),
            output_tokens: count("output_tokens"),
            input_tokens_details: Some(PromptTokensDetails {
                cached_tokens: usage["input_tokens_details"]["cached_tokens"].as_u64(),
            }),
        }
    }
}

/// Whether a whole answer carries an error, and its `usage` object read by `usage_of`: of an
/// OpenAI or Anthropic object only `error` (as raw text) and `usage` are read; a body read so
/// fails (not one object, a member of another type) is parsed whole by `wire`, as before.
pub(crate) fn read_head(
    wire: &dyn Wire,
    body: &[u8],
    usage_of: fn(&UsageObject) -> Option<Usage>,
) -> (bool, Option<Usage>) {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        error: Option<&'a serde_json::value::RawValue>,
        /// Read by name; a member of another type fails this read, and the reply is read as a
        /// `Value` below.
        #[serde(default)]
        usage: Option<UsageObject>,
    }
    // An object (serde reads a struct from an array too, where a `Value` has no members).
    let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if let Some(head) = serde_json::from_slice::<Head>(body).ok().filter(|_| object) {
        // `"error": null` reads as none.
        return (head.error.is_some(), head.usage.as_ref().and_then(usage_of));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(reply) => (reply.get("error").is_some_and(|e| !e.is_null()), wire.usage_of_reply(&reply)),
        Err(_) => (false, None),
    }
}
