//! Providers: where a pool's keys are sent, and how.

use std::sync::Arc;

use keypool::{Clock, ProviderId};
use keypool_llm::{ProviderEndpoint, ProviderKind};
use keypool_store::providers::{self, NewProvider, ProviderPatch, ProviderRow};
use keypool_store::{api_keys, Database};

use super::write_path::{Changed, WritePath};
use super::{IssueCode, IssueParams, Result, ServiceError};

pub struct Providers {
    db: Arc<Database>,
    writes: Arc<WritePath>,
    clock: Arc<dyn Clock>,
}

impl Providers {
    pub(crate) fn new(db: Arc<Database>, writes: Arc<WritePath>, clock: Arc<dyn Clock>) -> Self {
        Providers { db, writes, clock }
    }

    /// Every provider in display order, with how many keys its pool holds.
    pub fn list(&self) -> Result<Vec<ProviderRow>> {
        Ok(providers::list_providers(&*self.db.lock()?)?)
    }

    /// How to reach the provider `id`.
    pub fn endpoint(&self, id: &str) -> Result<ProviderEndpoint> {
        let row = providers::get_provider(&*self.db.lock()?, id)?.ok_or_else(|| provider_not_found(id))?;
        endpoint_of(&row)
    }

    /// Adds a provider under a new id (`new.id` is ignored).
    pub fn add(&self, mut new: NewProvider) -> Result<ProviderRow> {
        let now = self.clock.now().as_millis();
        new.id = uuid::Uuid::new_v4().to_string();
        check_default_model(new.default_model.as_deref(), &new.models)?;
        self.writes.apply(|tx| {
            let row = providers::insert_provider(tx, &new, now)?;
            Ok(Changed { provider_id: row.id.clone(), value: row })
        })
    }

    /// Applies `patch`. Moving the base URL to another origin (scheme, host or port) while the
    /// provider holds keys needs `confirm_host_change`: the keys would be sent to the new host.
    pub fn update(&self, id: &str, patch: ProviderPatch, confirm_host_change: bool) -> Result<ProviderRow> {
        let now = self.clock.now().as_millis();
        let replaces_secret = patch.api_key.is_some();
        let row = self.writes.apply(|tx| {
            let current = providers::get_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
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
            let row = providers::update_provider(tx, id, &patch, now)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: row.id.clone(), value: row })
        })?;
        if replaces_secret {
            self.writes.forget_removed_secrets();
        }
        Ok(row)
    }

    /// Deletes a provider with its pool keys (their count is returned); its chats stay, detached.
    pub fn delete(&self, id: &str) -> Result<u32> {
        let deleted_keys = self.writes.apply(|tx| {
            let deleted_keys = providers::delete_provider(tx, id)?.ok_or_else(|| provider_not_found(id))?;
            Ok(Changed { provider_id: id.to_owned(), value: deleted_keys })
        })?;
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
            Err(ServiceError::invalid("default_model", IssueCode::NotAModel))
        }
        _ => Ok(()),
    }
}

/// How to reach a stored provider.
pub(crate) fn endpoint_of(provider: &ProviderRow) -> Result<ProviderEndpoint> {
    let kind = ProviderKind::parse(&provider.kind).ok_or_else(|| {
        ServiceError::invalid_with(
            "kind",
            IssueCode::Invalid,
            IssueParams { reason: Some(format!("unknown provider kind {}", provider.kind)), ..Default::default() },
        )
    })?;
    Ok(ProviderEndpoint {
        id: ProviderId::new(provider.id.as_str()),
        name: provider.name.clone(),
        kind,
        base_url: provider.base_url.clone(),
        provider_key: provider.api_key.clone(),
    })
}
