//! The routes the user writes on Settings → Local API: a glob over the model a client asks for
//! (first match wins) to a provider and the model it knows. Kept in the settings table as JSON
//! (`localApi.routes`, the provider by id so a rename keeps it), read when the app starts, and
//! applied to the running endpoint as soon as they are saved.

use std::sync::Arc;
use std::time::Instant;

use keypool::SessionId;
use keypool_gateway::{Dialect, Unrouted};
use keypool_llm::{CancellationToken, ChatMessage, CompletionRequest, Role, StopReason};
use serde::{Deserialize, Serialize};

use super::{LocalApi, ModelRoute, StoreRoutes};
use crate::service::error::{Result, ServiceError};
use crate::service::problem::{FieldError, Rule};
use crate::service::ReplyError;

/// The settings key the routes are kept under.
pub(super) const ROUTES: &str = "localApi.routes";

/// Who a route's test asks as, in the usage ledger.
pub const ROUTE_TEST_SOURCE: &str = "Keypool route test";

/// What a route's test asks: a reply of a word or two.
const TEST_PROMPT: &str = "Reply with the single word OK.";
/// Room for that word (and for the reasoning some models spend first).
const TEST_MAX_TOKENS: u32 = 64;
/// The most of a test's reply that is shown.
const TEST_REPLY_CHARS: usize = 500;

/// A route as the settings table keeps it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredRoute {
    model: String,
    provider: String,
    to_model: String,
}

/// The characters a glob may not hold besides `*` and `?`: those of other glob dialects
/// (`[a-z]`, `{a,b}`), which would match only themselves here, and spaces and controls, which no
/// model name holds.
fn breaks_glob(c: char) -> bool {
    matches!(c, '[' | ']' | '{' | '}') || c.is_whitespace() || c.is_control()
}

/// A route as Settings → Local API shows it: with its provider's name and whether it can be
/// answered now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Route")]
pub struct RouteView {
    #[serde(flatten)]
    pub route: ModelRoute,
    /// The provider's name, while it exists.
    pub provider_name: Option<String>,
    pub state: RouteState,
}

/// Whether a route can be answered now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum RouteState {
    /// Its provider has a usable key (or needs none).
    Ready,
    /// Its provider has no key that can answer: a request it takes says so, in its client's
    /// dialect.
    NoUsableKey,
    /// Its provider was deleted: the route matches nothing until it is changed.
    UnknownProvider,
}

/// Where a model asked for in a dialect goes, and why there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Resolution {
    /// To `provider`'s `model`; `usable`: it has a key that can answer.
    Routed { provider: String, model: String, via: Via, usable: bool },
    /// Only a provider of another dialect (another API) lists it: a route (or `provider/model`)
    /// sends it there.
    #[serde(rename = "otherApi")]
    OtherDialect { provider: String },
    /// No provider lists it and no route takes it.
    Unknown,
}

/// Why a model goes where it goes: a route (its glob), `provider/model`, or a provider's list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Via {
    /// The user's route with this glob matched first.
    Route { glob: String },
    /// It was asked for as `provider/model`.
    Prefix,
    /// A provider of the client's dialect lists it.
    Listed,
}

/// What a route's test came to: the provider's reply, or why none came (as a chat says it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RouteTest {
    /// The provider's name and the model asked.
    pub provider: String,
    pub model: String,
    pub outcome: RouteTestOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RouteTestOutcome {
    /// The reply (its first [`TEST_REPLY_CHARS`] characters), the key that gave it, how long
    /// it took.
    Answered { reply: String, key_label: Option<String>, latency_ms: u64 },
    /// Why no reply came, as a chat's reply says it.
    Failed { error: ReplyError },
}

/// The routes kept in the store; none when there are none or they cannot be read (logged).
pub(super) fn stored(json: Option<String>) -> Vec<ModelRoute> {
    let Some(json) = json else { return Vec::new() };
    match serde_json::from_str::<Vec<StoredRoute>>(&json) {
        Ok(routes) => routes
            .into_iter()
            .map(|r| ModelRoute { model: r.model, provider: r.provider, to_model: r.to_model })
            .collect(),
        Err(error) => {
            tracing::error!(%error, "the local API's routes cannot be read; none apply");
            Vec::new()
        }
    }
}

impl LocalApi {
    /// The routes the user wrote, in order.
    pub fn model_routes(&self) -> Vec<ModelRoute> {
        self.routes.model_routes.read().unwrap_or_else(|e| e.into_inner()).iter().map(|r| r.route.clone()).collect()
    }

    /// The routes with their providers' names and whether each can be answered now.
    pub fn route_views(&self) -> Vec<RouteView> {
        let served = self.routes.served();
        self.model_routes()
            .into_iter()
            .map(|route| {
                let provider = served.iter().find(|p| p.id == route.provider);
                let state = match provider {
                    None => RouteState::UnknownProvider,
                    Some(p) if p.usable => RouteState::Ready,
                    Some(_) => RouteState::NoUsableKey,
                };
                RouteView { provider_name: provider.map(|p| p.name.clone()), route, state }
            })
            .collect()
    }

    /// Replaces the routes with `routes` (each already trimmed), keeps them and applies them to
    /// the endpoint at once. Refused whole when a glob is not one this matcher reads, a model is
    /// empty, or a provider (by id) does not exist; nothing changes then.
    pub fn set_routes(&self, routes: Vec<ModelRoute>) -> Result<Vec<RouteView>> {
        let served = self.routes.served();
        let mut broken = Vec::new();
        for (i, route) in routes.iter().enumerate() {
            if route.model.is_empty() {
                broken.push(FieldError::new(&format!("routes[{i}].model"), Rule::Blank));
            } else if route.model.chars().any(breaks_glob) {
                broken.push(FieldError::new(&format!("routes[{i}].model"), Rule::BadGlob));
            }
            if !served.iter().any(|p| p.id == route.provider) {
                broken.push(FieldError::new(&format!("routes[{i}].provider"), Rule::UnknownProvider));
            }
            if route.to_model.is_empty() {
                broken.push(FieldError::new(&format!("routes[{i}].to_model"), Rule::Blank));
            }
        }
        if !broken.is_empty() {
            return Err(ServiceError::Invalid(broken));
        }
        let kept: Vec<StoredRoute> = routes
            .iter()
            .map(|r| StoredRoute { model: r.model.clone(), provider: r.provider.clone(), to_model: r.to_model.clone() })
            .collect();
        self.store(ROUTES, kept)?;
        self.set_model_routes(routes);
        Ok(self.route_views())
    }

    /// Where `model`, asked for by a client speaking `dialect`, goes now: as the endpoint would
    /// route it.
    pub fn resolve(&self, dialect: Dialect, model: &str) -> Resolution {
        match self.routes.resolve(dialect, model, true) {
            Ok((route, via)) => {
                let served = self.routes.served();
                let usable = served.iter().any(|p| p.id == route.endpoint.id.as_ref() && p.usable);
                Resolution::Routed {
                    provider: route.endpoint.name.to_string(),
                    model: route.model.to_string(),
                    via,
                    usable,
                }
            }
            Err(Unrouted::OtherDialect { provider }) => Resolution::OtherDialect { provider },
            Err(Unrouted::Unknown) => Resolution::Unknown,
        }
    }

    /// Sends a tiny request (a word asked, whole) to `route`'s provider and model through the
    /// pool, as the route would: the reply, or why none came. The route need not be saved.
    pub async fn test_route(&self, route: &ModelRoute) -> Result<RouteTest> {
        let served = self.routes.served();
        let Some(provider) = served.iter().find(|p| p.id == route.provider) else {
            return Err(ServiceError::invalid("route.provider", Rule::UnknownProvider));
        };
        let request = CompletionRequest {
            session: SessionId::new(format!("route-test:{}", uuid::Uuid::new_v4())),
            endpoint: provider.endpoint.clone(),
            model: route.to_model.clone(),
            messages: vec![ChatMessage::new(Role::User, TEST_PROMPT)],
            max_tokens: TEST_MAX_TOKENS,
            stream: false,
            source: ROUTE_TEST_SOURCE.to_owned(),
            preferred_key: None,
        };
        let started = Instant::now();
        let outcome = self.completions.complete(&request, &mut |_| {}, &CancellationToken::new()).await;
        let outcome = match &outcome.end {
            StopReason::Failed(error) => RouteTestOutcome::Failed { error: ReplyError::of_request(error, false) },
            StopReason::Finished | StopReason::Cancelled => RouteTestOutcome::Answered {
                reply: outcome.text.chars().take(TEST_REPLY_CHARS).collect(),
                key_label: outcome.key_label.clone(),
                latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            },
        };
        Ok(RouteTest { provider: provider.name.clone(), model: route.to_model.clone(), outcome })
    }
}

impl StoreRoutes {
    /// Where `model` goes for a client speaking `dialect`, and why: the user's first matching
    /// route (to its provider whatever its dialect: translated when another), then
    /// `provider/model`, then a provider of the dialect that lists it (one with keys first).
    /// The reason is told only when `explain` (a request needs none: a route's name is not
    /// copied for it).
    pub(super) fn resolve(
        &self,
        dialect: Dialect,
        model: &str,
        explain: bool,
    ) -> std::result::Result<(keypool_gateway::Route, Via), Unrouted> {
        let served = self.served();
        // A provider's name before another's id: a user's provider named `gemini` over the
        // built-in Google Gemini, whose id is `gemini`.
        let named = |name: &str| {
            served
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .or_else(|| served.iter().find(|p| p.id.eq_ignore_ascii_case(name)))
        };
        let routes = self.model_routes.read().unwrap_or_else(|e| e.into_inner());
        if let Some(routed) = routes.iter().find(|r| r.route.matches(model)) {
            if let Some(provider) = named(&routed.route.provider) {
                // Unexplained, the route's glob is not copied: a request needs none.
                let via = if explain { Via::Route { glob: routed.route.model.clone() } } else { Via::Listed };
                let routed =
                    keypool_gateway::Route { endpoint: provider.endpoint.clone(), model: routed.to_model.clone() };
                return Ok((routed, via));
            }
        }
        drop(routes);
        // `provider/model`, the provider by id or name (asked in its own dialect, translated when
        // it is another); otherwise the whole name is the model (ids may hold a `/` themselves).
        if let Some((prefix, rest)) = model.split_once('/') {
            if let Some(provider) = named(prefix) {
                let routed = keypool_gateway::Route { endpoint: provider.endpoint.clone(), model: Arc::from(rest) };
                return Ok((routed, Via::Prefix));
            }
        }
        let listing = |p: &&super::Served| p.models.iter().any(|m| **m == *model);
        // A provider with keys first; one without still answers, with why it cannot.
        let same_dialect =
            || served.iter().filter(|p| Dialect::of_wire(p.endpoint.kind.row().wire) == dialect).filter(listing);
        if let Some(provider) = same_dialect().find(|p| p.usable).or_else(|| same_dialect().next()) {
            let listed = provider.models.iter().find(|m| ***m == *model).cloned();
            let model = listed.unwrap_or_else(|| Arc::from(model));
            let routed = keypool_gateway::Route { endpoint: provider.endpoint.clone(), model };
            return Ok((routed, Via::Listed));
        }
        match served.iter().find(listing) {
            Some(other) => Err(Unrouted::OtherDialect { provider: other.name.clone() }),
            None => Err(Unrouted::Unknown),
        }
    }
}

/// The routes' own trait method goes through [`StoreRoutes::resolve`], so what Settings shows is
/// what the endpoint does.
pub(super) fn route(
    routes: &StoreRoutes,
    dialect: Dialect,
    model: &str,
) -> std::result::Result<keypool_gateway::Route, Unrouted> {
    routes.resolve(dialect, model, false).map(|(route, _)| route)
}
