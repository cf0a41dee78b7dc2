//! `localApi:getRoutes`, `setRoutes`, `testRoute`: the routes of Settings → Local API, a glob over
//! the model a client asks for (first match wins) to a provider's model.

use garde::Validate;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::issues::{coded, IssueCode};
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{self, ModelRoute, RouteState, RouteTestOutcome, RouteView};
use crate::AppContext;

/// A route as the UI writes it.
#[derive(Debug, Clone, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(rename = "RouteInput")]
pub struct RouteArg {
    /// The models it takes: a glob, `*` any run of characters, `?` one (`claude-*`).
    #[garde(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank), custom(glob_rule))]
    pub model: String,
    /// The provider's id.
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider: String,
    /// The model the provider is asked for.
    #[garde(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank))]
    pub to_model: String,
}

impl From<RouteArg> for ModelRoute {
    fn from(route: RouteArg) -> Self {
        ModelRoute {
            model: route.model.trim().to_owned(),
            provider: route.provider.trim().to_owned(),
            to_model: route.to_model.trim().to_owned(),
        }
    }
}

/// Only `*` and `?` are wildcards; brackets and braces (other globs' classes and sets) would
/// match only themselves, and no model name holds spaces.
pub(super) fn glob_rule(value: &str, _: &()) -> garde::Result {
    let value = value.trim();
    if value.chars().any(|c| matches!(c, '[' | ']' | '{' | '}') || c.is_whitespace() || c.is_control()) {
        return Err(garde::Error::new(coded(IssueCode::BadGlob)));
    }
    Ok(())
}

/// Replaces every route (adding, editing, reordering and deleting are each a new list).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SetRoutesArgs {
    #[garde(length(max = LIMITS.routes.max_items), dive)]
    pub routes: Vec<RouteArg>,
}

impl CommandArgs for SetRoutesArgs {}

/// A route to try (saved or not).
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TestRouteArgs {
    #[garde(dive)]
    pub route: RouteArg,
}

impl CommandArgs for TestRouteArgs {}

/// A route with its provider's name and whether it can be answered now.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Route")]
pub struct RouteDto {
    pub model: String,
    pub provider: String,
    /// The provider's name, while it exists.
    pub provider_name: Option<String>,
    pub to_model: String,
    pub state: RouteStateDto,
}

/// Whether a route can be answered now.
#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "RouteState")]
pub enum RouteStateDto {
    Ready,
    /// Its provider has no key that can answer: a request it takes says so.
    NoUsableKey,
    /// Its provider was deleted: it matches nothing until changed.
    UnknownProvider,
}

impl From<RouteView> for RouteDto {
    fn from(view: RouteView) -> Self {
        RouteDto {
            model: view.route.model,
            provider: view.route.provider,
            provider_name: view.provider_name,
            to_model: view.route.to_model,
            state: match view.state {
                RouteState::Ready => RouteStateDto::Ready,
                RouteState::NoUsableKey => RouteStateDto::NoUsableKey,
                RouteState::UnknownProvider => RouteStateDto::UnknownProvider,
            },
        }
    }
}

/// What trying a route came to: the provider's reply, or why none came (as a chat says it).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "RouteTest")]
pub struct RouteTestDto {
    /// The provider's name and the model it was asked for.
    pub provider: String,
    pub model: String,
    pub outcome: RouteTestOutcomeDto,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "RouteTestOutcome")]
pub enum RouteTestOutcomeDto {
    /// The reply (its first 500 characters), the key that gave it, how long it took.
    Answered {
        reply: String,
        key_label: Option<String>,
        latency_ms: u64,
    },
    Failed {
        error: service::ReplyError,
    },
}

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<RouteDto>, IpcError> {
    Ok(ctx.local_api()?.route_views().into_iter().map(RouteDto::from).collect())
}

pub(super) fn set(ctx: &AppContext, args: SetRoutesArgs) -> Result<Vec<RouteDto>, IpcError> {
    let routes = args.routes.into_iter().map(ModelRoute::from).collect();
    Ok(ctx.local_api()?.set_routes(routes)?.into_iter().map(RouteDto::from).collect())
}

pub(super) async fn test(ctx: &AppContext, args: TestRouteArgs) -> Result<RouteTestDto, IpcError> {
    let tested = ctx.local_api()?.test_route(&ModelRoute::from(args.route)).await?;
    let outcome = match tested.outcome {
        RouteTestOutcome::Answered { reply, key_label, latency_ms } => {
            RouteTestOutcomeDto::Answered { reply, key_label, latency_ms }
        }
        RouteTestOutcome::Failed(error) => RouteTestOutcomeDto::Failed { error },
    };
    Ok(RouteTestDto { provider: tested.provider, model: tested.model, outcome })
}
