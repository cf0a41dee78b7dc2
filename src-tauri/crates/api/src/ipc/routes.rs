//! `localApi:getRoutes`, `setRoutes`, `testRoute`: the routes of Settings → Local API, a glob over
//! the model a client asks for (first match wins) to a provider's model.

use garde::Validate;
use serde::Deserialize;
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::issues::{coded, IssueCode};
use super::limits::LIMITS;
use super::rules::not_blank;
use crate::service::{ModelRoute, RouteTest, RouteView};
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

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<RouteView>, IpcError> {
    Ok(ctx.local_api()?.route_views())
}

pub(super) fn set(ctx: &AppContext, args: SetRoutesArgs) -> Result<Vec<RouteView>, IpcError> {
    let routes = args.routes.into_iter().map(ModelRoute::from).collect();
    Ok(ctx.local_api()?.set_routes(routes)?)
}

pub(super) async fn test(ctx: &AppContext, args: TestRouteArgs) -> Result<RouteTest, IpcError> {
    Ok(ctx.local_api()?.test_route(&ModelRoute::from(args.route)).await?)
}
