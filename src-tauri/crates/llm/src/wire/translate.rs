//! A request to a provider of another format (a route such as `claude-* → openai/gpt-5`): read
//! once into the one conversation in the client's format and written in the provider's. Its
//! answer is written back in the client's format by the relay itself, from the pieces it reads
//! anyway ([`crate::ForwardRequest::answer_in`]): a stream is decoded once.

use bytes::Bytes;
use serde_json::Value;

use super::{Address, Delivery, Operation, Untranslatable, WireFormat, WriteOptions};

/// The bound a translated request asks for when the client set none (Anthropic requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// How a translated request's answer goes back: in the client's format, naming the model the
/// client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    pub client: WireFormat,
    pub model: String,
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
/// name `provider_name`, for the refusal's words); its answers name `model`. Only replies are
/// translated; what has no place in the conversation (a vendor's server-side tools, a stored
/// response) is refused with why.
pub fn translate(
    client: Address,
    provider: WireFormat,
    provider_name: &str,
    model: &str,
    body: &[u8],
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
        answer_in: Translation { client: client.format, model: model.to_owned() },
    })
}
