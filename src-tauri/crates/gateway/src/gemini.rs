//! The local API's Gemini dialect, so Google's SDKs and tools (`@google/genai` with
//! `httpOptions.baseUrl`) use the pool: `POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent` (SSE with `alt=sse`, one JSON array streamed without), `:countTokens`,
//! and `GET /v1beta/models`; the same under `/v1/`, Google's stable version, which
//! `@google/genai` calls unless told `apiVersion` (upstream they go to `v1beta`, which serves
//! every `v1` request). The token comes in `x-goog-api-key` (or any header the other dialects
//! take) or `?key=`; the model is in the path, the body goes upstream as it came, and errors are
//! in Google's shape.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::response::Response;
use keypool_llm::UpstreamPath;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::dialect::{error, Problem};
use crate::{bounded, failed, pass, refusal, Dialect, InFlight, Shared, Unrouted, Upstream, MAX_BODY};

/// `POST /v1beta/models/{model}:{method}` (or `/v1/models/…`).
pub(crate) async fn action(
    State(shared): State<Arc<Shared>>,
    Path(action): Path<String>,
    request: Request,
) -> Response {
    let in_flight = InFlight::new(&shared);
    let (parts, body) = request.into_parts();
    let query = parts.uri.query();
    let caller = match shared.guard.check(&parts.headers, query) {
        Ok(caller) => caller,
        Err(denied) => return failed(&shared, refusal(Dialect::Gemini, denied)),
    };
    let sse = query.is_some_and(|q| q.split('&').any(|pair| pair == "alt=sse"));
    let Some((model, path, stream)) = method_of(&action, sse) else {
        let message = format!("POST {} is not served here", parts.uri.path());
        return failed(&shared, error(Dialect::Gemini, Problem::NotFound, message, None));
    };
    let given_session = match bounded(model, &parts.headers) {
        Ok(session) => session,
        Err(message) => return failed(&shared, error(Dialect::Gemini, Problem::BadRequest, message, None)),
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        let message = format!("the request body is larger than {} MiB", MAX_BODY / (1024 * 1024));
        return failed(&shared, error(Dialect::Gemini, Problem::TooLarge, message, None));
    };
    let peek: Peek<'_> = match serde_json::from_slice(&bytes) {
        Ok(peek) => peek,
        Err(parse) => {
            let message = format!("the body must be a JSON object: {parse}");
            return failed(&shared, error(Dialect::Gemini, Problem::BadRequest, message, None));
        }
    };
    let route = match shared.route(Dialect::Gemini, model).await {
        Ok(route) => route,
        Err(Unrouted::Unknown) => {
            let message =
                format!("the model `{model}` does not exist here: GET /v1beta/models lists the models served");
            return failed(&shared, error(Dialect::Gemini, Problem::NotFound, message, None));
        }
        Err(Unrouted::OtherDialect { provider }) => {
            let message =
                format!("the model `{model}` is served by {provider}, through the OpenAI or the Anthropic API");
            return failed(&shared, error(Dialect::Gemini, Problem::BadRequest, message, None));
        }
    };
    let admitted = match shared.admit(caller, Dialect::Gemini, model, &route).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let session = given_session.unwrap_or_else(|| peek.conversation());
    let upstream = Upstream { route, path, session, body: bytes, stream, admitted, bound: None };
    pass(shared, Dialect::Gemini, in_flight, &parts.headers, upstream).await
}

/// The model, the upstream method and whether the answer is SSE, of `{model}:{method}`; `None`
/// for a method not served. A `models/` prefix, as some clients write it, is dropped.
fn method_of(action: &str, sse: bool) -> Option<(&str, UpstreamPath, bool)> {
    let (model, method) = action.rsplit_once(':')?;
    let model = model.strip_prefix("models/").unwrap_or(model);
    if model.is_empty() {
        return None;
    }
    let path = match method {
        "generateContent" => (UpstreamPath::GenerateContent, false),
        "streamGenerateContent" => (UpstreamPath::StreamGenerateContent { sse }, sse),
        "countTokens" => (UpstreamPath::CountGeminiTokens, false),
        _ => return None,
    };
    Some((model, path.0, path.1))
}

/// What affinity reads of a Gemini body: its system instruction and its first user turn.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peek<'a> {
    #[serde(default, borrow)]
    system_instruction: Option<&'a RawValue>,
    #[serde(default, borrow)]
    contents: Vec<Turn<'a>>,
}

#[derive(Debug, Deserialize)]
struct Turn<'a> {
    #[serde(default)]
    role: Option<String>,
    #[serde(default, borrow)]
    parts: Option<&'a RawValue>,
}

impl Peek<'_> {
    /// A stable name for the conversation, as for the other dialects: its system instruction and
    /// its first user turn (a turn without a role is the user's), hashed.
    fn conversation(&self) -> String {
        let first_user = self
            .contents
            .iter()
            .find(|t| t.role.as_deref().is_none_or(|role| role == "user"))
            .and_then(|t| t.parts.map(RawValue::get));
        let mut hash = Sha256::new();
        hash.update(self.system_instruction.map(RawValue::get).unwrap_or_default());
        hash.update([0]);
        hash.update(first_user.unwrap_or_default());
        crate::peek::conversation_name(hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_the_model_and_the_method() {
        assert_eq!(
            method_of("gemini-2.0-flash:generateContent", false),
            Some(("gemini-2.0-flash", UpstreamPath::GenerateContent, false))
        );
        assert_eq!(
            method_of("models/gemini-2.0-flash:streamGenerateContent", true),
            Some(("gemini-2.0-flash", UpstreamPath::StreamGenerateContent { sse: true }, true)),
            "SSE when alt=sse"
        );
        assert_eq!(
            method_of("gemini-2.0-flash:streamGenerateContent", false),
            Some(("gemini-2.0-flash", UpstreamPath::StreamGenerateContent { sse: false }, false)),
            "one JSON array without it, read whole for its usage"
        );
        assert_eq!(method_of("gemini-2.0-flash:embedContent", false), None, "not served");
        assert_eq!(method_of(":generateContent", false), None, "no model");
    }

    #[test]
    fn a_conversation_is_named_by_its_instruction_and_first_user_turn() {
        let name = |body: &str| serde_json::from_str::<Peek>(body).unwrap().conversation();
        let first = r#"{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
        let later = r#"{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},
            {"role":"model","parts":[{"text":"hello"}]},{"role":"user","parts":[{"text":"more"}]}]}"#;
        let other = r#"{"contents":[{"parts":[{"text":"something else"}]}]}"#;
        assert_eq!(name(first), name(later), "a later turn of the same conversation");
        assert_ne!(name(first), name(other), "another conversation");
    }
}
