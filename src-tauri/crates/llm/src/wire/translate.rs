//! A request to a provider of another format (a route such as `claude-* → openai/gpt-5`): read
//! once into the one conversation in the client's format and written in the provider's. Its
//! answer is written back in the client's format by the relay itself, from the pieces it reads
//! anyway ([`crate::ForwardRequest::answer_in`]): a stream is decoded once.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use keypool::Timestamp;
use serde_json::Value;

use super::{Address, Delivery, Operation, Untranslatable, WireFormat, WriteOptions};

/// The bound a translated request asks for when the client set none (Anthropic requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// How a translated request's answer goes back: in the client's format, naming the model the
/// client asked for, under an id of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    pub client: WireFormat,
    pub model: String,
    pub id: AnswerId,
}

/// What one translated answer is called, and when it was made: unique per answer, and the same
/// in every event of one stream. Each format writes it in its own form (`chatcmpl-…`, `resp_…`,
/// `msg_…`, Gemini's `responseId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerId {
    pub number: u128,
    pub created: Timestamp,
}

impl AnswerId {
    /// The number as 32 hexadecimal digits.
    pub(crate) fn hex(&self) -> String {
        format!("{:032x}", self.number)
    }

    /// The number in base 62, 22 digits (Anthropic's ids are written so).
    pub(crate) fn base62(&self) -> String {
        const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut number = self.number;
        let mut out = [b'0'; 22];
        for digit in out.iter_mut().rev() {
            *digit = DIGITS[(number % 62) as usize];
            number /= 62;
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// When it was made, in whole seconds since the epoch.
    pub(crate) fn created_seconds(&self) -> i64 {
        self.created.as_millis().div_euclid(1000)
    }
}

/// Names the answers of one process: a random half drawn once (so two replicas, or two runs,
/// never name two answers alike), and a count for the other (so no two of its answers are named
/// alike, without a draw per answer).
#[derive(Debug)]
pub struct AnswerIds {
    seed: u64,
    next: AtomicU64,
}

impl AnswerIds {
    /// Names from `seed` (a test's fixed one, or [`AnswerIds::random`]'s).
    pub fn new(seed: u64) -> AnswerIds {
        AnswerIds { seed, next: AtomicU64::new(0) }
    }

    /// Names from a seed drawn from the system's randomness (the one std seeds its hash maps
    /// with).
    pub fn random() -> AnswerIds {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(std::process::id().into());
        AnswerIds::new(hasher.finish())
    }

    /// The next answer's name, made at `now`. The count is spread over the low half so that
    /// neighbouring answers do not share their last digits.
    pub fn next(&self, now: Timestamp) -> AnswerId {
        let count = self.next.fetch_add(1, Ordering::Relaxed);
        // An odd multiplier is a bijection on u64: distinct counts stay distinct.
        let spread = count.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        AnswerId { number: (u128::from(self.seed) << 64) | u128::from(spread), created: now }
    }
}

/// A request written for its provider.
#[derive(Debug)]
pub struct Translated {
    pub body: Bytes,
    /// Where it goes: the provider's format, a reply, delivered as the client asked.
    pub address: Address,
    pub answer_in: Translation,
}

/// The client's request `body` (of `client`'s address) to `model`, written for `provider` (its
/// name `provider_name`, for the refusal's words); its answers name `model` and are called `id`. Only replies are
/// translated; what has no place in the conversation (a vendor's server-side tools, a stored
/// response) is refused with why.
pub fn translate(
    client: Address,
    provider: WireFormat,
    provider_name: &str,
    model: &str,
    body: &[u8],
    id: AnswerId,
) -> Result<Translated, Untranslatable> {
    if client.operation != Operation::Reply || client.delivery == Delivery::Array {
        return Err(Untranslatable(format!(
            "this request cannot go to {provider_name}, which speaks another API: only conversations are translated"
        )));
    }
    let value: Value = serde_json::from_slice(body).map_err(|_| Untranslatable("the body is not JSON".into()))?;
    let read = client.format.wire().read_request(&value)?;
    // Gemini says in its path whether it streams; the others in the body.
    let stream = if client.format == WireFormat::GeminiGenerate { client.events() } else { read.stream };
    let max_tokens = read.conversation.sampling.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let options = WriteOptions { stream, max_tokens, stream_usage: true };
    let written = provider.wire().write_request(&read.conversation, model, options);
    Ok(Translated {
        body: Bytes::from(serde_json::to_vec(&written).unwrap_or_default()),
        address: Address::reply(provider, stream),
        answer_in: Translation { client: client.format, model: model.to_owned(), id },
    })
}
