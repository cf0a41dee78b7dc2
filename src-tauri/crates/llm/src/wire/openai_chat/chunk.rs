//! A stream chunk read by its members' names, and the buffer its text is lent in.

use serde_json::{json, Value};

use super::super::{StreamPiece, UsageObject};
use super::{pieces_of_value, usage_of};

/// A stream chunk read by the names its pieces come from, borrowing its text: the common
/// shape without a `Value` (a translated stream read every chunk into one, a fifth of what
/// relaying it cost). Any other shape fails this read (a member of another type, one named
/// twice) or is declined by [`Chunk::pieces`], and the chunk is read as a `Value`, as before.
#[derive(serde::Deserialize)]
pub(super) struct Chunk<'a> {
    /// `null` reads as none.
    #[serde(borrow, default)]
    error: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    choices: Option<FirstOf<Object<Choice<'a>>>>,
    #[serde(default)]
    usage: Option<UsageObject>,
}

#[derive(serde::Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Object<Delta<'a>>>,
}

#[derive(serde::Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<super::read::Text<'a>>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a serde_json::value::RawValue>,
}

/// A struct read from a JSON object only: serde reads one from an array too (its fields in
/// order), where a `Value` has no such members.
struct Object<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// The first element of an array, the others skipped unread; `None` for an empty one.
struct FirstOf<T>(Option<T>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for FirstOf<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = FirstOf<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<FirstOf<T>, A::Error> {
                let first = items.next_element()?;
                while items.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirstOf(first))
            }
        }
        deserializer.deserialize_seq(Visitor(std::marker::PhantomData))
    }
}

impl Chunk<'_> {
    /// Gives `piece` the pieces [`pieces_of_value`] reads from this chunk; false (and gives none)
    /// where only a `Value` reads them as it does (an error; tool calls are read from their own
    /// `Value`).
    pub(super) fn pieces(&self, piece: &mut dyn FnMut(&StreamPiece)) -> bool {
        if self.error.is_some() {
            return false;
        }
        let delta = self.choices.as_ref().and_then(|c| c.0.as_ref()).and_then(|c| c.0.delta.as_ref()).map(|d| &d.0);
        if let Some(calls) = delta.and_then(|d| d.tool_calls) {
            let Ok(calls) = serde_json::from_str::<Value>(calls.get()) else { return false };
            if calls.is_array() {
                let chunk = json!({ "choices": [{ "delta": { "tool_calls": calls } }] });
                pieces_of_value("", &chunk).iter().for_each(piece);
                return true;
            }
        }
        match delta.and_then(|d| d.content.as_deref()) {
            Some(text) if !text.is_empty() => with_text(text, piece),
            _ => piece(&match self.usage.as_ref().and_then(usage_of) {
                Some(usage) => StreamPiece::Usage(usage),
                None => StreamPiece::Nothing,
            }),
        }
        true
    }
}

thread_local! {
    /// The buffer each text piece of this thread's streams is lent in, used again.
    static TEXT: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// Lends `piece` a text piece of `text`, in this thread's buffer (a text piece per event of a
/// translated stream was an allocation each).
pub(super) fn with_text(text: &str, piece: &mut dyn FnMut(&StreamPiece)) {
    let mut buffer = TEXT.take();
    buffer.clear();
    buffer.push_str(text);
    let lent = StreamPiece::Text(buffer);
    piece(&lent);
    if let StreamPiece::Text(mut buffer) = lent {
        // A long text's buffer is not kept.
        if buffer.capacity() <= 4096 {
            buffer.clear();
            TEXT.set(buffer);
        }
    }
}
