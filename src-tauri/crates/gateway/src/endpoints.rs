//! What the local API serves, one row per path: its method, the dialect its clients speak, and
//! what is done with a request to it. The router is built from the rows, and the README's table
//! of paths is held to them by a test.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::routing::{get, post, MethodRouter};
use keypool_llm::wire::{Operation, WireFormat};

use crate::intake::{relay, Asks};
use crate::Shared;

/// What a request to an endpoint becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serves {
    /// A body of this format that names its model, asking this operation: relayed to the routed
    /// provider (as it is, or translated for one of another dialect).
    Relay(WireFormat, Operation),
    /// A format's `POST …/models/{action}`, the model and what is asked in the path (Google's
    /// `{model}:{method}`).
    Action(WireFormat),
    /// `GET`: the models a client of the request's dialect may ask for.
    Models,
}

/// One path the local API serves.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    /// As axum's router takes it (`{*action}` the rest of the path: Google's `{model}:{method}`,
    /// where the model may be `provider/model`).
    pub path: &'static str,
    pub serves: Serves,
}

/// Every path the local API serves.
pub const ENDPOINTS: [Endpoint; 9] = [
    Endpoint { path: "/v1/chat/completions", serves: Serves::Relay(WireFormat::OpenAiChat, Operation::Reply) },
    // OpenAI's Responses API (Codex CLI), relayed as it is to OpenAI-dialect providers.
    Endpoint { path: "/v1/responses", serves: Serves::Relay(WireFormat::OpenAiResponses, Operation::Reply) },
    Endpoint { path: "/v1/responses/compact", serves: Serves::Relay(WireFormat::OpenAiResponses, Operation::Compact) },
    Endpoint { path: "/v1/messages", serves: Serves::Relay(WireFormat::AnthropicMessages, Operation::Reply) },
    Endpoint {
        path: "/v1/messages/count_tokens",
        serves: Serves::Relay(WireFormat::AnthropicMessages, Operation::CountTokens),
    },
    // Shared by the dialects: which one asks is read from the request (see `dialect_of`).
    Endpoint { path: "/v1/models", serves: Serves::Models },
    // Google's stable version, which `@google/genai` calls unless told `apiVersion`.
    Endpoint { path: "/v1/models/{*action}", serves: Serves::Action(WireFormat::GeminiGenerate) },
    Endpoint { path: "/v1beta/models", serves: Serves::Models },
    Endpoint { path: "/v1beta/models/{*action}", serves: Serves::Action(WireFormat::GeminiGenerate) },
];

impl Endpoint {
    /// The method and the handler of this row.
    pub(crate) fn handler(self) -> MethodRouter<Arc<Shared>> {
        match self.serves {
            Serves::Relay(format, operation) => post(move |State(shared): State<Arc<Shared>>, request: Request| {
                relay(shared, format, Asks::Operation(operation), request)
            }),
            Serves::Action(format) => {
                post(move |State(shared): State<Arc<Shared>>, Path(action): Path<String>, request: Request| {
                    relay(shared, format, Asks::Action(action), request)
                })
            }
            Serves::Models => get(crate::lists::models),
        }
    }

    /// `POST` or `GET`.
    pub fn method(self) -> &'static str {
        match self.serves {
            Serves::Relay(..) | Serves::Action(_) => "POST",
            Serves::Models => "GET",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's table of paths names each endpoint's method and path (Google's actions as
    /// `…/models/{model}:…`), so what it promises is what the router serves.
    #[test]
    fn the_readme_names_every_endpoint() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        let readme = std::fs::read_to_string(path).expect("the gateway's README is readable");
        let table: String = readme.lines().filter(|line| line.starts_with("| `")).collect::<Vec<_>>().join("\n");
        for endpoint in ENDPOINTS {
            let written = endpoint.path.replace("{*action}", "{model}:");
            let shown = match endpoint.serves {
                Serves::Action(_) => written.trim_end_matches("{model}:").to_owned(),
                _ => format!("{} {written}", endpoint.method()),
            };
            assert!(table.contains(&shown), "the README's table names {shown}");
        }
    }
}
