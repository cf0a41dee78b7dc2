//! The lists the endpoint answers itself: the models a caller may ask for, in the dialect it
//! speaks.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::Response;
use keypool_llm::wire::Dialect;

use crate::answers::model_list;
use crate::{noted, InFlight, Shared};

/// `GET …/models`: the models a caller may ask for (a member's as its rules allow).
pub(crate) async fn models(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let _in_flight = InFlight::new(&shared);
    let dialect = dialect_of(request.headers(), request.uri());
    let query = (dialect == Dialect::Gemini).then(|| request.uri().query()).flatten();
    let caller = match shared.guard.check(request.headers(), query) {
        Ok(caller) => caller,
        Err(denied) => return shared.failed(denied.response(dialect.format())),
    };
    let mut models = shared.routes.models(dialect);
    if let (Some(member), Some(members)) = (caller.member(), &shared.members) {
        models.retain(|model| members.lists(member, &model.id));
    }
    noted(model_list(dialect.format(), &models), caller.member().cloned(), None)
}

/// The dialect of a request whose path several dialects share (`/v1/models`, a path not
/// served): Gemini under `/v1beta/`, or when it authenticates Google's way (`x-goog-api-key`,
/// `?key=`); Anthropic with an `anthropic-version` header; OpenAI otherwise.
pub(crate) fn dialect_of(headers: &HeaderMap, uri: &axum::http::Uri) -> Dialect {
    let googles_key = headers.contains_key("x-goog-api-key")
        || uri.query().is_some_and(|q| q.split('&').any(|pair| pair.starts_with("key=")));
    if uri.path().starts_with("/v1beta/") {
        Dialect::Gemini
    } else if headers.contains_key("anthropic-version") {
        Dialect::Anthropic
    } else if googles_key {
        Dialect::Gemini
    } else {
        Dialect::OpenAi
    }
}
