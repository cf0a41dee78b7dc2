//! The local API: Keypool's pool for the tools people already use, off by default. Its settings
//! (on or off, the port, the token's hash) live in the database; the endpoint itself is
//! `keypool-gateway`, routed by the providers and their models.
//!
//! The token is shown twice at most: when the endpoint is first enabled and when it is
//! regenerated. Only its SHA-256 is kept; a lost token is replaced, never recovered.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use keypool::Clock;
use keypool_gateway::{token_hash, Dialect, Gateway, ListedModel, Route, Routes, Serving, StartError, Stats, Unrouted};
use keypool_llm::{CompletionService, ProviderEndpoint};
use keypool_store::{providers, settings, Database};

use super::members::{hex, unhex, MemberBook};
use super::providers::{address_of, answerable, endpoint_of};
use super::{Providers, Vault, WritePath};
use crate::service::error::{Result, ServiceError};

mod routes;
mod tokens;

pub use keypool_gateway::DEFAULT_PORT;
pub use routes::{Resolution, RouteState, RouteTest, RouteTestOutcome, RouteView, Via, ROUTE_TEST_SOURCE};
pub use tokens::{NamedToken, NamedTokens, TokenRules, TokenSpend};

const ENABLED: &str = "localApi.enabled";
const PORT: &str = "localApi.port";
const TOKEN_HASH: &str = "localApi.tokenHash";

/// How the local API stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalApiStatus {
    pub enabled: bool,
    pub running: bool,
    pub port: u16,
    /// `http://127.0.0.1:PORT` while running.
    pub address: Option<String>,
    pub stats: Stats,
    /// Why it is enabled but not running.
    pub error: Option<StartError>,
    /// The models it can answer for now, in each dialect (see [`LocalApi::served_models`]).
    pub served: Vec<ListedModel>,
}

pub struct LocalApi {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
    completions: CompletionService,
    routes: Arc<StoreRoutes>,
    /// The named tokens it serves beside its own.
    tokens: Arc<NamedTokens>,
    /// What it enforces of their limits.
    book: MemberBook,
    running: Mutex<Option<Gateway>>,
    error: Mutex<Option<StartError>>,
    /// Held by every change of the endpoint's settings (on, off, port, token), so that each sees
    /// the others whole: a restart that read the old token's hash cannot outlive a regenerate.
    changing: tokio::sync::Mutex<()>,
}

impl LocalApi {
    pub(crate) fn new(
        db: Arc<Database>,
        clock: Arc<dyn Clock>,
        completions: CompletionService,
        writes: Arc<WritePath>,
        vault: Arc<Vault>,
        providers: Arc<Providers>,
        book: MemberBook,
    ) -> Self {
        // The routes the user kept apply from the start (a server replaces them with its file's).
        let kept = db.lock().map_err(ServiceError::from).and_then(|c| Ok(settings::get(&c, routes::ROUTES)?));
        let kept = kept.unwrap_or_else(|error| {
            tracing::error!(%error, "the local API's routes cannot be read; none apply");
            None
        });
        let routes = Arc::new(StoreRoutes {
            db: db.clone(),
            vault,
            writes,
            providers,
            snapshot: Mutex::new(None),
            model_routes: std::sync::RwLock::new(Routed::all(routes::stored(kept))),
        });
        LocalApi {
            tokens: Arc::new(NamedTokens::new(db.clone(), clock.clone(), book.clone())),
            book,
            db,
            clock,
            completions,
            routes,
            running: Mutex::new(None),
            error: Mutex::new(None),
            changing: tokio::sync::Mutex::new(()),
        }
    }

    fn stored<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let json = settings::get(&*self.db.lock()?, key)?;
        Ok(json.and_then(|json| serde_json::from_str(&json).ok()))
    }

    fn store(&self, key: &str, value: impl serde::Serialize) -> Result<()> {
        let json = serde_json::to_string(&value).expect("settings serialize");
        Ok(settings::set(&*self.db.lock()?, key, &json, self.clock.now().as_millis())?)
    }

    /// Sends the models `routes` name to their providers from now on, before any provider's own
    /// list is consulted; a provider of another dialect than the client's is asked in its own,
    /// the request and its answer translated.
    pub fn set_model_routes(&self, routes: Vec<ModelRoute>) {
        *self.routes.model_routes.write().unwrap_or_else(|e| e.into_inner()) = Routed::all(routes);
    }

    /// The model a request for `model` reaches: the first route's that matches it, else itself.
    pub fn routed_model(&self, model: &str) -> String {
        let routes = self.routes.model_routes.read().unwrap_or_else(|e| e.into_inner());
        routes.iter().find(|r| r.route.matches(model)).map_or_else(|| model.to_owned(), |r| r.route.to_model.clone())
    }

    /// The models a client can be answered for now, dialect by dialect, each with its provider:
    /// what `GET /v1/models` lists, and what an example should ask for.
    pub fn served_models(&self) -> Vec<ListedModel> {
        [Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini].into_iter().flat_map(|d| self.routes.models(d)).collect()
    }

    pub fn status(&self) -> Result<LocalApiStatus> {
        let enabled = self.stored::<bool>(ENABLED)?.unwrap_or(false);
        let port = self.stored::<u16>(PORT)?.unwrap_or(DEFAULT_PORT);
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        Ok(LocalApiStatus {
            enabled,
            running: running.is_some(),
            port: running.as_ref().map_or(port, Gateway::port),
            address: running.as_ref().map(|g| format!("http://127.0.0.1:{}", g.port())),
            stats: running.as_ref().map(Gateway::stats).unwrap_or_default(),
            error: self.error.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            served: self.served_models(),
        })
    }

    /// Turns the endpoint on (on `port`, or the stored one) or off, and keeps the choice. The
    /// first time it is enabled a token is made: it is returned this once. The endpoint serves on
    /// threads of its own (see [`Gateway`]), whichever runtime this runs on.
    pub async fn configure(&self, enabled: bool, port: Option<u16>) -> Result<(LocalApiStatus, Option<String>)> {
        let _changing = self.changing.lock().await;
        if let Some(port) = port {
            self.store(PORT, port)?;
        }
        self.store(ENABLED, enabled)?;
        let mut token = None;
        if enabled && self.stored::<String>(TOKEN_HASH)?.is_none() {
            token = Some(self.new_token()?);
        }
        // Already serving as asked: it goes on (a restart would drop the clients' connections,
        // and their kept-alive ones can hold the port past the stop).
        let wanted = self.stored::<u16>(PORT)?.unwrap_or(DEFAULT_PORT);
        let serving = self.running.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(Gateway::port);
        if enabled && token.is_none() && (serving == Some(wanted) || (port.is_none() && serving.is_some())) {
            return Ok((self.status()?, None));
        }
        // Moving while serving: the new port is bound before the old one is let go, so a port
        // that is taken (a typo) leaves the endpoint serving where it was, and kept there.
        if let (true, None, Some(old)) = (enabled, &token, serving) {
            self.move_to(old, wanted).await?;
            return Ok((self.status()?, None));
        }
        self.stop();
        if enabled {
            self.start().await?;
        }
        Ok((self.status()?, token))
    }

    /// Starts the endpoint if the settings say it is on (at app start).
    pub async fn start_if_enabled(&self) -> Result<()> {
        let _changing = self.changing.lock().await;
        if self.stored::<bool>(ENABLED)?.unwrap_or(false) {
            self.start().await?;
        }
        Ok(())
    }

    /// A new token; the old one stops working at once, whatever else changes the endpoint at
    /// the same time. Returned this once.
    pub async fn regenerate_token(&self) -> Result<String> {
        let _changing = self.changing.lock().await;
        let token = self.new_token()?;
        if let Some(gateway) = &*self.running.lock().unwrap_or_else(|e| e.into_inner()) {
            gateway.set_token_hash(token_hash(&token));
        }
        Ok(token)
    }

    /// The named tokens: one per agent, script or person, each revoked alone.
    pub fn tokens(&self) -> &NamedTokens {
        &self.tokens
    }

    /// How the app's endpoint serves: its named tokens beside its own, within their limits.
    fn serving(&self) -> Serving {
        self.book.follow();
        let tokens: Arc<dyn keypool_gateway::Members> = Arc::new(self.book.clone());
        Serving { members: Some(tokens), ..Serving::default() }
    }

    /// Whether `token` is the endpoint's token now, compared by its SHA-256 (the token itself
    /// is not kept); none is before the endpoint was first enabled.
    pub fn is_current_token(&self, token: &str) -> Result<bool> {
        let kept = self.stored::<String>(TOKEN_HASH)?.and_then(|h| unhex(&h));
        Ok(kept.is_some_and(|hash| hash == token_hash(token)))
    }

    fn new_token(&self) -> Result<String> {
        let token = new_token_value();
        self.store(TOKEN_HASH, hex(&token_hash(&token)))?;
        Ok(token)
    }

    /// Serves the providers and keys of the store at `address` with `token`, as a server does
    /// (the app's settings of the endpoint, on or off, port and token, are not used): the caller
    /// owns the returned endpoint.
    pub async fn serve_at(
        &self,
        address: std::net::SocketAddr,
        token: &str,
        serving: Serving,
    ) -> std::result::Result<Gateway, StartError> {
        let routes: Arc<dyn Routes> = self.routes.clone();
        let hash = token_hash(token);
        Gateway::start_at(address, hash, routes, self.completions.clone(), self.clock.clone(), serving).await
    }

    async fn start(&self) -> Result<()> {
        let port = self.stored::<u16>(PORT)?.unwrap_or(DEFAULT_PORT);
        let Some(hash) = self.stored::<String>(TOKEN_HASH)?.and_then(|h| unhex(&h)) else {
            return Ok(());
        };
        let routes: Arc<dyn Routes> = self.routes.clone();
        let started =
            Gateway::start_serving(port, hash, routes, self.completions.clone(), self.clock.clone(), self.serving())
                .await;
        match started {
            Ok(gateway) => {
                *self.error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(gateway);
            }
            Err(error) => {
                tracing::warn!(%error, "the local API could not start");
                *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            }
        }
        Ok(())
    }

    /// Serves on `wanted` instead of `old`: the old endpoint stops only once the new one is
    /// bound. When `wanted` cannot be bound, `old` goes on serving and stays the kept port, and
    /// the status says why the move failed.
    async fn move_to(&self, old: u16, wanted: u16) -> Result<()> {
        let Some(hash) = self.stored::<String>(TOKEN_HASH)?.and_then(|h| unhex(&h)) else {
            return Ok(());
        };
        let routes: Arc<dyn Routes> = self.routes.clone();
        let serving = self.serving();
        match Gateway::start_serving(wanted, hash, routes, self.completions.clone(), self.clock.clone(), serving).await
        {
            Ok(gateway) => {
                let previous = self.running.lock().unwrap_or_else(|e| e.into_inner()).replace(gateway);
                if let Some(previous) = previous {
                    previous.stop();
                }
                *self.error.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
            Err(error) => {
                tracing::warn!(%error, old, wanted, "the local API stays where it was: the new port could not be bound");
                self.store(PORT, old)?;
                *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            }
        }
        Ok(())
    }

    fn stop(&self) {
        if let Some(gateway) = self.running.lock().unwrap_or_else(|e| e.into_inner()).take() {
            gateway.stop();
        }
        *self.error.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// A new token of the local API (its own, or a named one): 32 random bytes, in hex.
fn new_token_value() -> String {
    let mut random = [0u8; 32];
    // Only fails without an OS random source, where nothing secure (TLS included) works.
    getrandom::fill(&mut random).expect("the operating system provides randomness");
    format!("kp-local-{}", hex(&random))
}

/// The providers and their models, as routes: every model the app itself offers for a
/// provider (its list, its default, and what its models endpoint was found to list). Read from
/// the database again only after a write to providers or keys, or after a model list was fetched.
struct StoreRoutes {
    db: Arc<Database>,
    vault: Arc<Vault>,
    writes: Arc<WritePath>,
    providers: Arc<Providers>,
    snapshot: Mutex<Option<Snapshot>>,
    /// Routes the user wrote, first match first.
    model_routes: std::sync::RwLock<Vec<Routed>>,
}

/// A route as requests use it: the user's, and the model it sends to, shared with every request.
struct Routed {
    route: ModelRoute,
    to_model: Arc<str>,
}

impl Routed {
    fn all(routes: Vec<ModelRoute>) -> Vec<Routed> {
        routes.into_iter().map(|route| Routed { to_model: Arc::from(route.to_model.as_str()), route }).collect()
    }
}

/// A model sent to a provider whatever it lists: `model` (a glob, `*` any run of characters,
/// `?` one) goes to `provider` (its name in any case, or its id) as `to_model`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelRoute {
    pub model: String,
    pub provider: String,
    pub to_model: String,
}

impl ModelRoute {
    /// Whether the requested `model` matches this route's glob.
    pub fn matches(&self, model: &str) -> bool {
        keypool::glob_matches(&self.model, model)
    }
}

/// The providers as last read, with what they were read after.
struct Snapshot {
    /// The store's write generation.
    writes: u64,
    /// How many model lists had been fetched.
    lists: u64,
    served: Arc<Vec<Served>>,
}

/// A provider as routing sees it.
struct Served {
    id: String,
    name: String,
    endpoint: ProviderEndpoint,
    /// Its own list, its default, then what its models endpoint listed; each once (shared with
    /// the requests routed to one).
    models: Vec<Arc<str>>,
    /// Its models endpoint has been asked this run.
    fetched: bool,
    /// It can answer now, as far as its stored keys tell (see [`answerable`]).
    usable: bool,
}

impl StoreRoutes {
    fn served(&self) -> Arc<Vec<Served>> {
        let generation = self.writes.generation.load(Ordering::Acquire);
        let lists = self.providers.fetched().generation();
        let mut snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = &*snapshot {
            if last.writes == generation && last.lists == lists {
                return last.served.clone();
            }
        }
        let rows = match self.db.lock().map_err(ServiceError::from).and_then(|c| Ok(providers::list_providers(&c)?)) {
            Ok(rows) => rows,
            Err(error) => {
                tracing::error!(%error, "the local API could not read the providers");
                return Arc::new(Vec::new());
            }
        };
        let served: Vec<Served> = rows
            .into_iter()
            .filter_map(|row| {
                let endpoint = endpoint_of(&row, &self.vault).ok()?;
                let usable = answerable(&row);
                let listed = self.providers.fetched().get(&row.id, &address_of(&row));
                let fetched = listed.is_some();
                let mut models: Vec<Arc<str>> = Vec::with_capacity(row.models.len());
                let offered =
                    row.models.iter().chain(&row.default_model).chain(listed.iter().flat_map(|list| &list.models));
                for model in offered {
                    if !models.iter().any(|m| **m == **model) {
                        models.push(Arc::from(model.as_str()));
                    }
                }
                Some(Served { id: row.id, name: row.name, models, fetched, endpoint, usable })
            })
            .collect();
        let served = Arc::new(served);
        *snapshot = Some(Snapshot { writes: generation, lists, served: served.clone() });
        served
    }
}

impl Routes for StoreRoutes {
    fn route(&self, dialect: Dialect, model: &str) -> std::result::Result<Route, Unrouted> {
        routes::route(self, dialect, model)
    }

    /// Asks each provider of `dialect` that can answer, and whose models endpoint was not asked
    /// yet this run, what it lists (as the New-chat dialog does).
    fn learn(&self, dialect: Dialect) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(async move {
            let unasked: Vec<String> = self
                .served()
                .iter()
                .filter(|p| p.usable && !p.fetched && Dialect::of_wire(p.endpoint.kind.row().wire) == dialect)
                .map(|p| p.id.clone())
                .collect();
            let mut learned = false;
            for id in unasked {
                match self.providers.models(&id, false).await {
                    Ok(list) => learned |= !list.models.is_empty(),
                    Err(error) => {
                        tracing::info!(provider = %id, %error, "the local API could not list a provider's models")
                    }
                }
            }
            learned
        })
    }

    /// Only what can be answered: the models of providers with a key (or needing none), each
    /// once, under the provider a bare name goes to as [`StoreRoutes::resolve`] routes it (the
    /// first that lists it, unless one of the user's routes sends it elsewhere), with the others
    /// that list it too.
    fn models(&self, dialect: Dialect) -> Vec<ListedModel> {
        let mut listed: Vec<ListedModel> = Vec::new();
        for provider in
            self.served().iter().filter(|p| p.usable && Dialect::of_wire(p.endpoint.kind.row().wire) == dialect)
        {
            for model in &provider.models {
                match listed.iter_mut().find(|m| *m.id == **model) {
                    Some(first) => first.others.push(provider.name.clone()),
                    None => listed.push(ListedModel {
                        id: model.to_string(),
                        provider: provider.name.clone(),
                        others: Vec::new(),
                        dialect,
                    }),
                }
            }
        }
        for model in &mut listed {
            if let Ok((route, Via::Route { .. })) = self.resolve(dialect, &model.id, true) {
                if *route.endpoint.name != *model.provider {
                    let first = std::mem::replace(&mut model.provider, route.endpoint.name.to_string());
                    model.others.retain(|other| *other != model.provider);
                    model.others.insert(0, first);
                }
            }
        }
        listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routes_glob_matches_the_models_it_names() {
        let route = |model: &str| ModelRoute { model: model.into(), provider: "p".into(), to_model: "m".into() };
        assert!(route("claude-*").matches("claude-sonnet-4-6"));
        assert!(route("claude-*").matches("claude-"), "a star matches nothing too");
        assert!(!route("claude-*").matches("gpt-5"));
        assert!(
            route("gpt-5?").matches("gpt-5o") && !route("gpt-5?").matches("gpt-5"),
            "a question mark is one character"
        );
        assert!(route("*").matches("anything/at-all"));
        assert!(
            route("gemini-2.5-pro").matches("gemini-2.5-pro") && !route("gemini-2.5-pro").matches("gemini-2.5-pro-x")
        );
    }
}
