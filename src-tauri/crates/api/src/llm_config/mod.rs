//! `llmConfig:*`: the API key pool's commands. Each handler is thin: strict arguments, garde
//! validation, one call into [`LlmConfig`], result mapping.

mod args;
mod dto;
mod service;

use keypool::Secret;
use keypool_store::api_keys::ApiKeyPatch;
use keypool_store::providers::{NewProvider, ProviderPatch};
use serde_json::Value;

pub use dto::{ApiKeyDto, DeletedDto, DeletedProviderDto, KeyStatusDto, LastErrorDto, PoolStatusDto, ProviderDto};
pub use service::{AddApiKey, EventSink, LlmConfig, ServiceError};

pub(crate) use self::args::IdArgs;
use self::args::*;
use crate::args::{normalize_label, validate};
use crate::error::{IpcError, Issue};
use crate::{run, AppContext};

/// The `llmConfig:*` command names, as the UI invokes them.
pub const COMMANDS: &[&str] = &[
    "llmConfig:getProviders",
    "llmConfig:addProvider",
    "llmConfig:updateProvider",
    "llmConfig:deleteProvider",
    "llmConfig:getApiKeys",
    "llmConfig:addApiKey",
    "llmConfig:updateApiKey",
    "llmConfig:deleteApiKey",
    "llmConfig:toggleApiKey",
    "llmConfig:getPoolStatus",
    "llmConfig:resetCooldown",
    "llmConfig:reorderApiKeys",
    "llmConfig:testApiKey",
];

pub(crate) fn dispatch(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
    let result = match name {
        "llmConfig:getProviders" => run(payload, |crate::app::NoArgs {}| Ok(ctx.llm_config()?.providers()?)),
        "llmConfig:addProvider" => run(payload, |a: AddProviderArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.add_provider(NewProvider {
                id: String::new(),
                name: a.name.trim().to_owned(),
                kind: a.kind.as_str().to_owned(),
                base_url: a.base_url.trim().to_owned(),
                api_key: a.api_key.map(|k| Secret::new(k.trim())),
                models: a.models.unwrap_or_default().into_iter().map(|m| m.trim().to_owned()).collect(),
                default_model: a.default_model.map(|m| m.trim().to_owned()),
            })?)
        }),
        "llmConfig:updateProvider" => run(payload, |a: UpdateProviderArgs| {
            validate(&a)?;
            if a.changes_nothing() {
                return Err(IpcError::validation(vec![Issue {
                    path: String::new(),
                    message: "nothing to change: give at least one of name, kind, baseUrl, apiKey, models, defaultModel".into(),
                }]));
            }
            let patch = ProviderPatch {
                name: a.name.map(|n| n.trim().to_owned()),
                kind: a.kind.map(|k| k.as_str().to_owned()),
                base_url: a.base_url.map(|u| u.trim().to_owned()),
                api_key: a.api_key.map(|k| Some(k.trim().to_owned()).filter(|k| !k.is_empty()).map(Secret::new)),
                models: a.models.map(|m| m.into_iter().map(|m| m.trim().to_owned()).collect()),
                default_model: a.default_model.map(|m| Some(m.trim().to_owned()).filter(|m| !m.is_empty())),
            };
            Ok(ctx.llm_config()?.update_provider(&a.id, patch)?)
        }),
        "llmConfig:deleteProvider" => run(payload, |a: IdArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.delete_provider(&a.id)?)
        }),
        "llmConfig:getApiKeys" => run(payload, |a: ProviderArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.api_keys(&a.provider_id)?)
        }),
        "llmConfig:addApiKey" => run(payload, |a: AddApiKeyArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.add_api_key(AddApiKey {
                provider_id: a.provider_id,
                label: normalize_label(a.label),
                api_key: Secret::new(a.api_key.trim()),
                enabled: a.enabled.unwrap_or(true),
                weight: a.weight.unwrap_or(1),
            })?)
        }),
        "llmConfig:updateApiKey" => run(payload, |a: UpdateApiKeyArgs| {
            validate(&a)?;
            if a.changes_nothing() {
                return Err(IpcError::validation(vec![Issue {
                    path: String::new(),
                    message: "nothing to change: give at least one of label, apiKey, enabled, weight".into(),
                }]));
            }
            let patch = ApiKeyPatch {
                label: a.label.map(|l| normalize_label(Some(l))),
                api_key: a.api_key.map(|k| Secret::new(k.trim())),
                enabled: a.enabled,
                weight: a.weight,
            };
            Ok(ctx.llm_config()?.update_api_key(&a.id, patch)?)
        }),
        "llmConfig:deleteApiKey" => run(payload, |a: IdArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.delete_api_key(&a.id)?)
        }),
        "llmConfig:toggleApiKey" => run(payload, |a: ToggleApiKeyArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.toggle_api_key(&a.id, a.enabled)?)
        }),
        "llmConfig:getPoolStatus" => run(payload, |a: ProviderArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.pool_status(&a.provider_id)?)
        }),
        "llmConfig:resetCooldown" => run(payload, |a: IdArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.reset_cooldown(&a.id)?)
        }),
        "llmConfig:reorderApiKeys" => run(payload, |a: ReorderApiKeysArgs| {
            validate(&a)?;
            Ok(ctx.llm_config()?.reorder_api_keys(&a.provider_id, &a.ids)?)
        }),
        _ => return None,
    };
    Some(result)
}

/// `llmConfig:testApiKey`: probes a key against its provider (network I/O, so async).
pub(crate) async fn test_api_key(ctx: &AppContext, payload: Value) -> Result<Value, IpcError> {
    let args: IdArgs = crate::error::parse_args(payload)?;
    validate(&args)?;
    let result = ctx.chats()?.test_api_key(&args.id).await?;
    serde_json::to_value(result).map_err(|e| IpcError::internal(format!("cannot encode result: {e}")))
}
