//! Providers: where a pool's keys are sent, and how.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use keypool::{Clock, KeyState, ProviderId, Secret};
use keypool_llm::{CompletionService, ModelsFailure, ProbeProblem, ProviderEndpoint, ProviderKind};
use keypool_store::providers::{self, ProviderRow};
use keypool_store::{api_keys, Database, StoredKey};

use super::vault::{key_account, provider_account};
use super::write_path::{Changed, WritePath, Written};
use super::Vault;
use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

/// Where a request may go without a key, and which hosts are local: the completion service's
/// rules (keypool-llm), so what the UI calls answerable and what is sent agree.
pub use keypool_llm::{is_local_host as is_local, is_local_url};

pub struct Providers {
    db: Arc<Database>,
    writes: Arc<WritePath>,
    clock: Arc<dyn Clock>,
    completions: CompletionService,
    /// The model lists fetched so far.
    fetched: FetchedModels,
}

/// The model lists fetched this run, by provider, each with the address (kind and base URL) it
/// came from: a list from another address is not the provider's any more.
#[derive(Default)]
pub(crate) struct FetchedModels {
    lists: Mutex<HashMap<String, (String, ModelList)>>,
    /// Counts the lists put, so a reader can tell whether what it built from them is current.
    generation: AtomicU64,
}

impl FetchedModels {
    /// What `provider` at `address` was last found to list.
    pub(crate) fn get(&self, provider: &str, address: &str) -> Option<ModelList> {
        let lists = self.lists.lock().unwrap_or_else(|e| e.into_inner());
        lists.get(provider).filter(|(at, _)| at == address).map(|(_, list)| list.clone())
    }

    fn put(&self, provider: &str, address: String, list: ModelList) {
        self.lists.lock().unwrap_or_else(|e| e.into_inner()).insert(provider.to_owned(), (address, list));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// How many lists were put so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

/// Where a provider's models are listed from: its kind and base URL.
pub(crate) fn address_of(row: &ProviderRow) -> String {
    format!("{} {}", row.kind, row.base_url)
}

/// A provider as the services show it; its own key only as a masked preview.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Provider {
    /// `openai`, `anthropic`, `gemini`, `local` for the built-in ones, a UUID for the others.
    pub id: String,
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// The provider-level key, masked; used while the pool is empty.
    pub api_key_preview: Option<String>,
    pub builtin: bool,
    pub sort_order: i64,
    /// The models offered when starting a chat with this provider.
    pub models: Vec<String>,
    pub default_model: Option<String>,
    /// The system prompt new chats with this provider start with.
    pub system_prompt: Option<String>,
    /// How many keys the pool holds; while 0, the provider-level key is used (or, without one,
    /// no key at all).
    pub key_count: u32,
    /// Its base URL is on this machine or a private network: a server there commonly needs no
    /// key, and requests go without one while the pool is empty and no provider key is set.
    pub local: bool,
    /// A request can be answered as far as the stored keys tell: an enabled pool key, or while
    /// the pool is empty the provider key, or none for a local server. A key may still be
    /// resting (see [`answerable`]).
    pub answerable: bool,
    /// The last request sent to it without any key (while it has none) was refused with this
    /// status, 401 or 403: the server needs a key after all, whatever its address suggests.
    /// `None`: the last one was answered, or none was sent.
    pub keyless_refused: Option<u16>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<ProviderRow> for Provider {
    fn from(row: ProviderRow) -> Self {
        let (local, answerable) = (is_local_url(&row.base_url), answerable(&row));
        Provider {
            api_key_preview: row.api_key.as_ref().map(StoredKey::preview),
            // The store's CHECK admits only the kinds this build knows.
            kind: ProviderKind::parse(&row.kind).unwrap_or(ProviderKind::Openai),
            id: row.id,
            name: row.name,
            base_url: row.base_url,
            builtin: row.builtin,
            sort_order: row.sort_order,
            models: row.models,
            default_model: row.default_model,
            system_prompt: row.system_prompt,
            key_count: row.key_count,
            local,
            answerable,
            keyless_refused: row.keyless_refused,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// Whether a request to the provider of `row` can be answered, as far as its stored keys tell
/// (a key may still be resting, or the server down): an enabled pool key, or while the pool is
/// empty its own key, or no key at all for a server on this machine or a private network.
/// Remote providers with nothing are sent requests without a key too, but they refuse them.
pub(crate) fn answerable(row: &ProviderRow) -> bool {
    row.enabled_key_count > 0 || (row.key_count == 0 && (row.api_key.is_some() || is_local_url(&row.base_url)))
}

/// A provider to add, validated and normalized by the caller.
#[derive(Debug, Clone)]
pub struct NewProvider {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// Its own key (or `$NAME`), used while the pool is empty; kept where the vault decides.
    pub api_key: Option<Secret>,
    pub models: Vec<String>,
    /// One of `models`, when it lists any.
    pub default_model: Option<String>,
    pub system_prompt: Option<String>,
    /// The user said the base URL's host is on their own network: needed for plain `http` to
    /// any host but this machine (see [`needs_network_consent`]).
    pub on_my_network: bool,
}

/// What to change in a provider; `None` keeps a field, `Some(None)` removes an optional one.
#[derive(Debug, Clone, Default)]
pub struct ProviderPatch {
    pub name: Option<String>,
    pub kind: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub api_key: Option<Option<Secret>>,
    pub models: Option<Vec<String>>,
    pub default_model: Option<Option<String>>,
    pub system_prompt: Option<Option<String>>,
    /// As in [`NewProvider::on_my_network`], for a new base URL.
    pub on_my_network: bool,
}

/// Whether keys sent to `base_url` travel unencrypted beyond this machine: plain `http` to a
/// host other than loopback (a LAN server, `*.local`, a single-label name, a private address).
/// The user must say the host is on their own network; the HTTP client then connects only to
/// loopback and private addresses (see keypool-llm's `LocalOnly` resolver).
pub fn needs_network_consent(base_url: &str) -> bool {
    let Ok(url) = url::Url::parse(base_url.trim()) else { return false };
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    };
    url.scheme() == "http" && !loopback
}

/// Plain `http` beyond this machine needs the user's consent, and is refused to a public IP
/// address whatever they said: the HTTP client's local-only resolver checks the addresses a name
/// resolves to, and an address written as one is never resolved.
/// The base URL is one `kind` takes (an Azure resource's v1 address, a Bedrock region's).
fn require_kinds_url(kind: ProviderKind, base_url: &str) -> Result<()> {
    kind.row().base_url_rule.check(base_url).map_err(|problem| {
        let rule = match problem {
            keypool_llm::BaseUrlProblem::AzureResource => Rule::AzureResourceUrl,
            keypool_llm::BaseUrlProblem::BedrockRegion => Rule::BedrockRegionUrl,
        };
        ServiceError::invalid("base_url", rule)
    })
}

fn require_network_consent(base_url: &str, consent: bool) -> Result<()> {
    if needs_network_consent(base_url) && (!consent || names_public_address(base_url)) {
        return Err(ServiceError::invalid("on_my_network", Rule::PlainHttpNeedsConsent));
    }
    Ok(())
}

/// The URL's host is an IP address outside this machine and the private networks.
fn names_public_address(base_url: &str) -> bool {
    let Ok(url) = url::Url::parse(base_url.trim()) else { return false };
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip),
        Some(url::Host::Domain(_)) | None => return false,
    };
    !keypool_llm::is_local_address(ip)
}

/// The models a provider's models endpoint lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    pub models: Vec<String>,
    /// When they were fetched (milliseconds since the epoch).
    pub fetched_at: i64,
    /// Answered from what was fetched before, not asked again (`llmConfig:listModels` asks again
    /// with `refresh: true`).
    pub cached: bool,
}

/// How many of the pool's keys a model list is asked with before giving up (a refused key
/// may be one of several; the next may work).
const MODEL_LIST_KEYS: usize = 3;

impl Providers {
    pub(crate) fn new(
        db: Arc<Database>,
        writes: Arc<WritePath>,
        clock: Arc<dyn Clock>,
        completions: CompletionService,
    ) -> Self {
        Providers { db, writes, clock, completions, fetched: FetchedModels::default() }
    }

    /// The model lists fetched so far, for routing (a model the app offers is one it serves).
    pub(crate) fn fetched(&self) -> &FetchedModels {
        &self.fetched
    }

    /// The models provider `id` lists at its models endpoint, asked with its first usable keys
    /// (or its own key, or none for a local server). Kept in memory until `refresh` or until
    /// the provider's address changes.
    pub async fn models(&self, id: &str, refresh: bool) -> Result<ModelList> {
        let row = providers::get_provider(&*self.db.lock()?, id)?.ok_or_else(|| provider_not_found(id))?;
        let address = address_of(&row);
        if let Some(list) = self.fetched.get(id, &address).filter(|_| !refresh) {
            return Ok(ModelList { cached: true, ..list });
        }
        let endpoint = endpoint_of(&row, &self.writes.vault)?;
        let pool = self.completions.pool();
        let provider = ProviderId::new(id);
        let now = self.clock.now();
        let usable: Vec<Secret> = pool
            .status(&provider, now)?
            .into_iter()
            .zip(pool.secrets(&provider)?)
            .filter(|(status, _)| status.state != KeyState::Disabled)
            .map(|(_, secret)| secret)
            .take(MODEL_LIST_KEYS)
            .collect();
        let candidates: Vec<Option<&Secret>> = match (usable.is_empty(), &endpoint.provider_key) {
            (false, _) => usable.iter().map(Some).collect(),
            (true, Some(key)) => vec![Some(key)],
            (true, None) => vec![None],
        };
        let mut failure = None;
        for key in candidates {
            match self.completions.list_models(&endpoint, key).await {
                Ok(models) => {
                    let list = ModelList { models, fetched_at: self.clock.now().as_millis(), cached: false };
                    self.fetched.put(id, address, list.clone());
                    return Ok(list);
                }
                // Another key may be accepted; anything else would fail the same way.
                Err(refused @ ModelsFailure { problem: ProbeProblem::Refused, status: Some(401 | 403), .. }) => {
                    failure = Some(refused)
                }
                Err(other) => return Err(ServiceError::Upstream(other)),
            }
        }
        Err(ServiceError::Upstream(failure.expect("at least one candidate was asked")))
    }

    /// The models a provider that is not saved yet (a form being filled in) lists at `base_url`,
    /// asked with `api_key` or none; nothing is kept. The provider's words come back with the
    /// key masked, as for a saved provider. Plain `http` beyond this machine needs `on_my_network`,
    /// as saving it would.
    pub async fn models_unsaved(
        &self,
        kind: ProviderKind,
        base_url: &str,
        api_key: Option<Secret>,
        on_my_network: bool,
    ) -> Result<ModelList> {
        require_network_consent(base_url, on_my_network)?;
        let endpoint = ProviderEndpoint {
            id: ProviderId::new(""),
            name: "".into(),
            kind,
            base_url: base_url.into(),
            provider_key: None,
        };
        let models =
            self.completions.list_models_unsaved(&endpoint, api_key.as_ref()).await.map_err(ServiceError::Upstream)?;
        Ok(ModelList { models, fetched_at: self.clock.now().as_millis(), cached: false })
    }

    /// Every provider in display order, with how many keys its pool holds.
    pub fn list(&self) -> Result<Vec<Provider>> {
        Ok(providers::list_providers(&*self.db.lock()?)?.into_iter().map(Provider::from).collect())
    }

    /// How to reach the provider `id`.
    pub fn endpoint(&self, id: &str) -> Result<ProviderEndpoint> {
        let row = providers::get_provider(&*self.db.lock()?, id)?.ok_or_else(|| provider_not_found(id))?;
        endpoint_of(&row, &self.writes.vault)
    }

    /// Adds a provider under a new id; its own key goes to the keychain when one is reachable.
    pub fn add(&self, new: NewProvider) -> Result<Provider> {
        let now = self.clock.now().as_millis();
        check_default_model(new.default_model.as_deref(), &new.models)?;
        require_kinds_url(new.kind, &new.base_url)?;
        require_network_consent(&new.base_url, new.on_my_network)?;
        let id = uuid::Uuid::new_v4().to_string();
        let account = provider_account(&id);
        let stored = providers::NewProvider {
            api_key: new.api_key.as_ref().map(|secret| self.writes.vault.keep(&account, secret)),
            id,
            name: new.name,
            kind: new.kind.as_str().to_owned(),
            base_url: new.base_url,
            models: new.models,
            default_model: new.default_model,
            system_prompt: new.system_prompt,
        };
        let added = self.writes.apply(|tx| {
            refuse_taken_name(tx, &stored.name, None)?;
            let row = providers::insert_provider(tx, &stored, now)?;
            Ok(Changed { provider_id: row.id.clone(), value: Provider::from(row) })
        });
        if added.is_err() {
            self.writes.vault.forget(&account);
        }
        added.map(|written| written.value)
    }

    /// Applies `patch`. Moving the base URL to another origin (scheme, host or port) while the
    /// provider holds keys needs `confirm_host_change`: the keys would be sent to the new host.
    pub fn update(&self, id: &str, patch: ProviderPatch, confirm_host_change: bool) -> Result<Provider> {
        let now = self.clock.now().as_millis();
        let consent = patch.on_my_network;
        let mut patch = providers::ProviderPatch {
            name: patch.name,
            kind: patch.kind.map(|kind| kind.as_str().to_owned()),
            base_url: patch.base_url,
            api_key: patch.api_key.map(|key| key.map(StoredKey::Database)),
            models: patch.models,
            default_model: patch.default_model,
            system_prompt: patch.system_prompt,
        };
        let replaces_secret = patch.api_key.is_some();
        let vault = &self.writes.vault;
        let Written { value: row, .. } = self.writes.apply(|tx| {
            let current = providers::get_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
            if patch.kind.is_some() || patch.base_url.is_some() {
                let kind = patch.kind.as_deref().or(Some(current.kind.as_str())).and_then(ProviderKind::parse);
                let url = patch.base_url.as_deref().unwrap_or(&current.base_url);
                if let Some(kind) = kind {
                    require_kinds_url(kind, url)?;
                }
            }
            if let Some(name) = &patch.name {
                refuse_taken_name(tx, name, Some(id))?;
            }
            // The address the user already confirmed needs no second word; a new one does.
            if let Some(base_url) = patch.base_url.as_deref().filter(|url| url.trim() != current.base_url.trim()) {
                require_network_consent(base_url, consent)?;
            }
            if let Some(base_url) = patch.base_url.as_deref().filter(|url| !same_origin(url, &current.base_url)) {
                let provider_key = patch.api_key.clone().unwrap_or(current.api_key.clone());
                let mut keys: Vec<String> = api_keys::list_api_keys(tx, id)?
                    .into_iter()
                    .map(|key| key.label.unwrap_or_else(|| key.api_key.preview()))
                    .collect();
                keys.extend(provider_key.map(|key| format!("the provider key {}", key.preview())));
                if !keys.is_empty() && !confirm_host_change {
                    return Err(ServiceError::HostChange {
                        from: current.base_url.clone(),
                        to: base_url.to_owned(),
                        keys,
                    });
                }
            }
            let models = patch.models.as_ref().unwrap_or(&current.models);
            let default_model = match &patch.default_model {
                Some(model) => model.as_deref(),
                None => current.default_model.as_deref(),
            };
            if patch.models.is_some() || patch.default_model.is_some() {
                check_default_model(default_model, models)?;
            }
            if let Some(Some(StoredKey::Database(secret))) = &patch.api_key {
                patch.api_key = Some(Some(vault.keep(&provider_account(id), secret)));
            }
            let row = providers::update_provider(tx, id, &patch, now)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: row.id.clone(), value: row })
        })?;
        if replaces_secret {
            if !row.api_key.as_ref().is_some_and(StoredKey::in_keychain) {
                vault.forget(&provider_account(id));
            }
            self.writes.forget_removed_secrets();
        }
        Ok(Provider::from(row))
    }

    /// Deletes a provider with its pool keys (their count is returned); its chats stay, detached.
    pub fn delete(&self, id: &str) -> Result<u32> {
        let Written { value: (deleted_keys, key_ids), .. } = self.writes.apply(|tx| {
            let key_ids: Vec<String> = api_keys::list_api_keys(tx, id)?.into_iter().map(|k| k.id).collect();
            let deleted_keys = providers::delete_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: id.to_owned(), value: (deleted_keys, key_ids) })
        })?;
        for key in &key_ids {
            self.writes.vault.forget(&key_account(key));
        }
        self.writes.vault.forget(&provider_account(id));
        self.writes.forget_removed_secrets();
        Ok(deleted_keys)
    }
}

pub(crate) fn require_provider(conn: &keypool_store::rusqlite::Connection, provider_id: &str) -> Result<()> {
    if providers::provider_exists(conn, provider_id)? {
        Ok(())
    } else {
        Err(provider_not_found(provider_id))
    }
}

pub(crate) fn provider_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("provider", id)
}

/// Another provider (than `except`) is called `name`, in any case: refused, since the two would
/// look the same in every picker. Providers saved with such names before this rule stay as they
/// are until renamed.
fn refuse_taken_name(conn: &keypool_store::rusqlite::Connection, name: &str, except: Option<&str>) -> Result<()> {
    let wanted = name.trim().to_lowercase();
    let taken = providers::list_providers(conn)?
        .iter()
        .any(|other| Some(other.id.as_str()) != except && other.name.trim().to_lowercase() == wanted);
    if taken {
        return Err(ServiceError::invalid("name", Rule::NameTaken));
    }
    Ok(())
}

/// Whether two base URLs share scheme, host and port (an unparsable one shares nothing).
fn same_origin(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// A default model must be one of the provider's models (when it lists any).
fn check_default_model(default_model: Option<&str>, models: &[String]) -> Result<()> {
    match default_model {
        Some(model) if !models.is_empty() && !models.iter().any(|m| m == model) => {
            Err(ServiceError::invalid("default_model", Rule::NotAModel))
        }
        _ => Ok(()),
    }
}

/// How to reach a stored provider; its own key read from where it is kept (a key the keychain
/// cannot give now is left out, and said in the log).
pub(crate) fn endpoint_of(provider: &ProviderRow, vault: &Vault) -> Result<ProviderEndpoint> {
    let kind = ProviderKind::parse(&provider.kind)
        .ok_or_else(|| ServiceError::invalid("kind", Rule::UnknownKind(provider.kind.clone())))?;
    Ok(ProviderEndpoint {
        id: ProviderId::new(provider.id.as_str()),
        name: provider.name.as_str().into(),
        kind,
        base_url: provider.base_url.as_str().into(),
        provider_key: provider.api_key.as_ref().and_then(|stored| {
            vault
                .reveal(&provider_account(&provider.id), stored)
                .map_err(
                    |error| tracing::warn!(provider = %provider.id, %error, "the provider's own key cannot be read"),
                )
                .ok()
        }),
    })
}
