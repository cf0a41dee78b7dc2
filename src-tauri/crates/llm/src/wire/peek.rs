//! What is read of a client's request body without changing it: the model, whether it streams,
//! and what identifies its conversation; each format's own members, borrowed from the body
//! (read for every relayed request, a coding agent's body holds hundreds of turns). And the body
//! with another model, every other member kept as written.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::anthropic::BILLING_BLOCK;
use super::read::Text;
use super::WireFormat;

/// What binds a request to one organisation's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoundState {
    /// The Responses API's `previous_response_id`: stored by the organisation of the key that
    /// made it. Without it (encrypted reasoning items), the key the session is bound to stands
    /// for the organisation.
    pub previous_response_id: Option<String>,
}

/// The members routing and affinity need, of any format; everything else stays unread. Text is
/// borrowed from the body where it holds no escapes.
#[derive(Debug, Deserialize)]
pub struct Peek<'a> {
    /// The model the body names (Gemini names it in the path: none here).
    #[serde(borrow, default)]
    model: Option<Text<'a>>,
    #[serde(default)]
    pub stream: bool,
    /// Anthropic's system prompt.
    #[serde(default, borrow)]
    system: Option<&'a RawValue>,
    #[serde(default, borrow)]
    messages: Turns<'a>,
    /// The Responses API's system prompt and its turns (a string, or items).
    #[serde(default, borrow)]
    instructions: Option<&'a RawValue>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    /// The conversation the Responses API's client names for the provider's prompt cache
    /// (Codex: the session's id).
    #[serde(default, borrow)]
    prompt_cache_key: Option<Text<'a>>,
    /// The Responses API's stored response this request continues (it lives in the organisation
    /// of the key that made it).
    #[serde(default)]
    previous_response_id: Option<String>,
    /// Anthropic's request metadata: Claude Code names its session in `user_id`.
    #[serde(default)]
    metadata: Option<Metadata>,
    /// Gemini's system instruction and turns.
    #[serde(default, borrow, rename = "systemInstruction")]
    system_instruction: Option<&'a RawValue>,
    #[serde(default, borrow)]
    contents: GeminiTurns<'a>,
}

/// Of a conversation's turns, what names it: the first system (or developer) turn's content and
/// the first user turn's, read as the turns go by (none of them is kept).
#[derive(Debug, Default)]
struct Turns<'a> {
    any: bool,
    system: Option<&'a RawValue>,
    first_user: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Turns<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Turns<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of turns")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut turns: A) -> Result<Turns<'a>, A::Error> {
                let mut read = Turns::default();
                while let Some(turn) = turns.next_element::<Turn<'de>>()? {
                    read.any = true;
                    let system = turn.role == "system" || turn.role == "developer";
                    if system && read.system.is_none() {
                        read.system = turn.content;
                    } else if turn.role == "user" && read.first_user.is_none() {
                        read.first_user = turn.content;
                    }
                }
                Ok(read)
            }
        }
        deserializer.deserialize_seq(Visit(std::marker::PhantomData))
    }
}

/// Gemini's turns: the first user turn's parts (a turn without a role is the user's).
#[derive(Debug, Default)]
struct GeminiTurns<'a> {
    first_user: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for GeminiTurns<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = GeminiTurns<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of turns")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut turns: A) -> Result<GeminiTurns<'a>, A::Error> {
                let mut read = GeminiTurns::default();
                while let Some(turn) = turns.next_element::<GeminiTurn<'de>>()? {
                    let user = turn.role.as_deref().is_none_or(|role| role == "user");
                    if user && read.first_user.is_none() {
                        read.first_user = turn.parts;
                    }
                }
                Ok(read)
            }
        }
        deserializer.deserialize_seq(Visit(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
struct Metadata {
    #[serde(default)]
    user_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Turn<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

#[derive(Debug, Deserialize)]
struct GeminiTurn<'a> {
    #[serde(default, borrow)]
    role: Option<Text<'a>>,
    #[serde(default, borrow)]
    parts: Option<&'a RawValue>,
}

impl<'a> Peek<'a> {
    /// `body` read as a request of `format`: a JSON object, with a `model` unless the format
    /// names it in the path. `Err`: why it is not one, for the client.
    pub fn of(format: WireFormat, body: &'a [u8]) -> Result<Peek<'a>, String> {
        let peek: Peek<'a> = serde_json::from_slice(body).map_err(|e| match format {
            WireFormat::GeminiGenerate => format!("the body must be a JSON object: {e}"),
            _ => format!("the body must be a JSON object with a model: {e}"),
        })?;
        if peek.model.is_none() && format != WireFormat::GeminiGenerate {
            return Err("the body must be a JSON object with a model: missing field `model`".into());
        }
        Ok(peek)
    }

    /// The model the body names; empty where the path names it (Gemini).
    pub fn model(&self) -> &str {
        self.model.as_deref().unwrap_or_default()
    }

    /// The conversation the client names for the provider's prompt cache (Codex: its session).
    pub fn prompt_cache_key(&self) -> Option<&str> {
        self.prompt_cache_key.as_deref()
    }

    /// What binds a Responses request to one organisation's keys: the stored response it
    /// continues, or reasoning encrypted for one organisation (Codex sends its earlier turns'
    /// reasoning so when it stores nothing).
    pub fn bound_state(&self) -> Option<BoundState> {
        let encrypted = self.input.is_some_and(|input| {
            let text = input.get();
            text.contains(r#""encrypted_content":""#) || text.contains(r#""encrypted_content": ""#)
        });
        (self.previous_response_id.is_some() || encrypted)
            .then(|| BoundState { previous_response_id: self.previous_response_id.clone() })
    }

    /// The session Claude Code names in `metadata.user_id`: a JSON object's `session_id`
    /// (2.x), or what follows `_session_` (`user_<hash>_account_<uuid>_session_<uuid>`, 1.x).
    pub fn claude_code_session(&self) -> Option<String> {
        let user_id = self.metadata.as_ref()?.user_id.as_deref()?;
        #[derive(Deserialize)]
        struct UserId {
            session_id: Option<String>,
        }
        match serde_json::from_str::<UserId>(user_id) {
            Ok(parsed) => parsed.session_id,
            Err(_) => user_id.rsplit_once("_session_").map(|(_, id)| id.to_owned()),
        }
        .filter(|id| !id.is_empty())
    }

    /// A stable name for the conversation, from how it starts: its system prompt and its first
    /// user message (a Responses request: its instructions and its first input item; Gemini: its
    /// system instruction and first user turn), hashed. Every later turn of one conversation
    /// starts the same way, so it keeps its key.
    pub fn conversation(&self, format: WireFormat) -> ConversationName {
        if format == WireFormat::GeminiGenerate {
            return self.gemini_conversation();
        }
        let system = match format {
            WireFormat::AnthropicMessages | WireFormat::GeminiGenerate => self.system.map(RawValue::get),
            WireFormat::OpenAiChat | WireFormat::OpenAiResponses => self.messages.system.map(RawValue::get),
        };
        let first_user = self.messages.first_user.map(RawValue::get);
        let responses = !self.messages.any && (self.instructions.is_some() || self.input.is_some());
        // A Responses request: its instructions, and its first input item (or its text).
        let first_item = |input: &'_ RawValue| match serde_json::from_str::<Vec<&RawValue>>(input.get()) {
            Ok(items) => items.first().map(|item| item.get().to_owned()),
            Err(_) => Some(input.get().to_owned()),
        };
        let first_input = self.input.filter(|_| responses).and_then(first_item);
        let (system, first_user) = match responses {
            true => (self.instructions.map(RawValue::get), first_input.as_deref()),
            false => (system, first_user),
        };
        let mut hash = Sha256::new();
        match system.and_then(without_billing_block) {
            Some(blocks) => blocks.iter().for_each(|block| hash.update(block.get())),
            None => hash.update(system.unwrap_or_default()),
        }
        hash.update([0]);
        hash.update(first_user.unwrap_or_default());
        conversation_name(hash)
    }

    /// Gemini's: its system instruction and its first user turn (a turn without a role is the
    /// user's).
    fn gemini_conversation(&self) -> ConversationName {
        let first_user = self.contents.first_user.map(RawValue::get);
        let mut hash = Sha256::new();
        hash.update(self.system_instruction.map(RawValue::get).unwrap_or_default());
        hash.update([0]);
        hash.update(first_user.unwrap_or_default());
        conversation_name(hash)
    }
}

/// A system prompt's blocks without Claude Code's billing block (its values, a per-request
/// `cch=` among them, change from one request to the next), when it has one (`None`: the
/// prompt is hashed as written).
fn without_billing_block(system: &str) -> Option<Vec<&RawValue>> {
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(default, borrow)]
        text: Option<Text<'a>>,
    }
    let billing = |block: &&RawValue| {
        serde_json::from_str::<Block>(block.get()).is_ok_and(|b| b.text.is_some_and(|t| t.starts_with(BILLING_BLOCK)))
    };
    let blocks: Vec<&RawValue> = serde_json::from_str(system).ok()?;
    blocks.iter().any(billing).then(|| blocks.into_iter().filter(|block| !billing(block)).collect())
}

/// A conversation's session name from the hash of how it starts: `api:` and the first 12 bytes
/// of the digest in hex. Written into one string: a `format!` per byte was a tenth of a relayed
/// request's allocations.
pub fn conversation_name(hash: Sha256) -> ConversationName {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = hash.finalize();
    let mut name = [0u8; 28];
    name[..4].copy_from_slice(b"api:");
    for (i, byte) in digest[..12].iter().enumerate() {
        name[4 + 2 * i] = HEX[usize::from(byte >> 4)];
        name[5 + 2 * i] = HEX[usize::from(byte & 0xf)];
    }
    ConversationName(name)
}

/// A conversation's name: `api:` and 24 hex digits, held where it is made (it becomes the pool's
/// session id, made once from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversationName([u8; 28]);

impl ConversationName {
    pub fn as_str(&self) -> &str {
        // ASCII, as written above.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Display for ConversationName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ConversationName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// `body` with its top-level `model` replaced, every other member kept as written and in order.
pub fn with_model(body: &[u8], model: &str) -> Option<Vec<u8>> {
    let members: Members<'_> = serde_json::from_slice(body).ok()?;
    let mut out = Vec::with_capacity(body.len());
    out.push(b'{');
    for (i, (name, value)) in members.0.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(serde_json::to_string(name).ok()?.as_bytes());
        out.push(b':');
        if name == "model" {
            out.extend_from_slice(serde_json::to_string(model).ok()?.as_bytes());
        } else {
            out.extend_from_slice(value.get().as_bytes());
        }
    }
    out.push(b'}');
    Some(out)
}

/// An object's members in order, each value as its raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((name, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_is_named_by_how_it_starts() {
        let first =
            br#"{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}"#;
        let later = br#"{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},
            {"role":"assistant","content":"hello"},{"role":"user","content":"more"}]}"#;
        let other = br#"{"model":"m","messages":[{"role":"user","content":"something else"}]}"#;
        let name = |body: &[u8]| Peek::of(WireFormat::OpenAiChat, body).unwrap().conversation(WireFormat::OpenAiChat);
        assert_eq!(name(first), name(later), "a later turn of the same conversation");
        assert_ne!(name(first), name(other), "another conversation");
        // The name is SHA-256 of the system prompt, a zero byte and the first user message, as
        // written: the same across versions, so a conversation keeps its key through an upgrade.
        assert_eq!(name(first), "api:dc0ba83828b482b79752aeed");
        let anthropic = br#"{"model":"m","system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
        let peek = Peek::of(WireFormat::AnthropicMessages, anthropic).unwrap();
        assert!(
            peek.conversation(WireFormat::AnthropicMessages).as_str().starts_with("api:"),
            "Anthropic's system is top-level"
        );
    }

    #[test]
    fn a_responses_conversation_is_named_by_its_instructions_and_first_item() {
        let first = br#"{"model":"m","instructions":"you are codex","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}]}"#;
        let later = br#"{"model":"m","instructions":"you are codex","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]},
            {"type":"function_call","call_id":"c","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}"#;
        let other = br#"{"model":"m","instructions":"you are codex","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"other"}]}]}"#;
        let name = |body: &[u8]| Peek::of(WireFormat::OpenAiChat, body).unwrap().conversation(WireFormat::OpenAiChat);
        assert_eq!(name(first), name(later), "a later turn of the same conversation");
        assert_ne!(name(first), name(other), "not every Responses request one session");
        let text = br#"{"model":"m","input":"hello","prompt_cache_key":"019a-session"}"#;
        let peek = Peek::of(WireFormat::OpenAiResponses, text).unwrap();
        assert_eq!(peek.prompt_cache_key(), Some("019a-session"), "the client's cache key is read");
        assert_ne!(peek.conversation(WireFormat::OpenAiResponses), name(other), "a text input names its own");
    }

    #[test]
    fn claude_codes_billing_block_does_not_name_the_conversation() {
        // As Claude Code 2.1 sends it: a first system block whose values change on every request.
        let body = |cch: &str| {
            format!(
                r#"{{"model":"m","system":[{{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328.593; cc_entrypoint=sdk-cli; cch={cch};"}},
                {{"type":"text","text":"You are Claude Code.","cache_control":{{"type":"ephemeral"}}}}],
                "messages":[{{"role":"user","content":"hi"}}]}}"#
            )
        };
        let name = |body: &str| {
            Peek::of(WireFormat::AnthropicMessages, body.as_bytes())
                .unwrap()
                .conversation(WireFormat::AnthropicMessages)
        };
        assert_eq!(name(&body("a1b2c")), name(&body("f9e8d")), "the same conversation, whatever the nonce");
        let other = body("a1b2c").replace("You are Claude Code.", "You are another agent.");
        assert_ne!(name(&body("a1b2c")), name(&other), "the rest of the system prompt still counts");
    }

    #[test]
    fn claude_codes_session_is_read_from_its_metadata() {
        let peek = |user_id: &str| {
            let body = serde_json::json!({ "model": "m", "metadata": { "user_id": user_id } }).to_string();
            Peek::of(WireFormat::AnthropicMessages, body.as_bytes()).unwrap().claude_code_session()
        };
        let v2 = r#"{"device_id":"c3d4","account_uuid":"","session_id":"88bd35f3-dfcf-47bb-b455-0403e8427af0"}"#;
        assert_eq!(peek(v2).as_deref(), Some("88bd35f3-dfcf-47bb-b455-0403e8427af0"), "2.x: a JSON object");
        let v1 = "user_5f2a_account_1c9e_session_0b7d-41aa";
        assert_eq!(peek(v1).as_deref(), Some("0b7d-41aa"), "1.x: the id after _session_");
        assert_eq!(peek("user-42"), None, "another client's user id names no session");
        assert_eq!(peek(r#"{"session_id":""}"#), None, "an empty id names none");
    }

    #[test]
    fn only_the_model_changes_when_a_prefix_is_dropped() {
        let body = br#"{"stream":true,"model":"fake/m-1","tools":[{"type":"function","function":{"name":"f","parameters":{"b":1,"a":2}}}],"x":1.50}"#;
        let out = with_model(body, "m-1").unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"stream":true,"model":"m-1","tools":[{"type":"function","function":{"name":"f","parameters":{"b":1,"a":2}}}],"x":1.50}"#,
            "every other member byte for byte, in order"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
            std::env::var("KEYPOOL_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(500)
        ))]

        /// Whatever a client sends, peeking at it never panics, and rewriting its model keeps it
        /// one JSON object with every other member as it was.
        #[test]
        fn any_body_is_peeked_safely(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..1024),
            json in "\\{(\"[a-z]{1,6}\":(\"\\PC{0,12}\"|[0-9]{1,4}|true|null|\\[\\]|\\{\\}),){0,6}\"model\":\"\\PC{0,12}\"\\}",
            model in "\\PC{0,40}",
        ) {
            for body in [bytes.as_slice(), json.as_bytes()] {
                for format in WireFormat::ALL {
                    if let Ok(peek) = Peek::of(format, body) {
                        let _ = peek.conversation(format);
                    }
                }
                if let Some(out) = with_model(body, &model) {
                    let value: serde_json::Value = serde_json::from_slice(&out).expect("still JSON");
                    proptest::prop_assert_eq!(value["model"].as_str(), Some(model.as_str()));
                }
            }
        }
    }

    #[test]
    fn a_conversation_is_named_by_its_instruction_and_first_user_turn() {
        let name = |body: &str| {
            Peek::of(WireFormat::GeminiGenerate, body.as_bytes()).unwrap().conversation(WireFormat::GeminiGenerate)
        };
        let first = r#"{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let later = r#"{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},
            {"role":"model","parts":[{"text":"hello"}]},{"role":"user","parts":[{"text":"more"}]}]}"#;
        let other = r#"{"contents":[{"parts":[{"text":"something else"}]}]}"#;
        assert_eq!(name(first), name(later), "a later turn of the same conversation");
        assert_ne!(name(first), name(other), "another conversation");
    }
}
