//! `llmConfig:*` of providers: where a pool's keys are sent, and the models they offer.

use garde::Validate;
use keypool_llm::ProviderKind;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, IdArgs, NoArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::rules::{base_url_rule, not_blank, optional_key_arg_rule, removable_key_arg_rule, KeyArg};
use crate::service::{ModelList, NewProvider, Provider, ProviderPatch};
use crate::AppContext;

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AddProviderArgs {
    #[garde(length(chars, min = 1, max = LIMITS.provider_name.max_chars), custom(not_blank))]
    pub name: String,
    #[garde(skip)]
    pub kind: ProviderKind,
    #[garde(custom(base_url_rule))]
    pub base_url: String,
    #[serde(default)]
    #[garde(custom(optional_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    #[serde(default)]
    #[garde(
        length(max = LIMITS.models.max_items),
        inner(inner(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank)))
    )]
    pub models: Option<Vec<String>>,
    /// One of `models` (when it lists any).
    #[serde(default)]
    #[garde(inner(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank)))]
    pub default_model: Option<String>,
    /// The system prompt new chats with this provider start with.
    #[serde(default)]
    #[garde(inner(length(chars, max = LIMITS.system_prompt.max_chars)))]
    pub system_prompt: Option<String>,
    /// `true`: the base URL's host is on the user's own network. Required for plain `http` to
    /// any host but this machine (the keys travel unencrypted); without it, a `validation` error
    /// at `onMyNetwork` (`plain_http_needs_consent`).
    #[serde(default)]
    #[garde(skip)]
    pub on_my_network: Option<bool>,
}

impl CommandArgs for AddProviderArgs {}

impl From<AddProviderArgs> for NewProvider {
    fn from(a: AddProviderArgs) -> Self {
        NewProvider {
            name: a.name.trim().to_owned(),
            kind: a.kind,
            base_url: a.base_url.trim().to_owned(),
            api_key: a.api_key.map(|k| k.trimmed()),
            models: a.models.unwrap_or_default().into_iter().map(|m| m.trim().to_owned()).collect(),
            default_model: a.default_model.map(|m| m.trim().to_owned()),
            system_prompt: a.system_prompt.filter(|p| !p.trim().is_empty()),
            on_my_network: a.on_my_network.unwrap_or(false),
        }
    }
}

/// At least one field to change.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateProviderArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = LIMITS.provider_name.max_chars), custom(not_blank)))]
    pub name: Option<String>,
    #[serde(default)]
    #[garde(skip)]
    pub kind: Option<ProviderKind>,
    #[serde(default)]
    #[garde(inner(custom(base_url_rule)))]
    pub base_url: Option<String>,
    /// `""` removes the provider-level key.
    #[serde(default)]
    #[garde(custom(removable_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    #[serde(default)]
    #[garde(
        length(max = LIMITS.models.max_items),
        inner(inner(length(bytes, max = LIMITS.model_name.max_bytes), custom(not_blank)))
    )]
    pub models: Option<Vec<String>>,
    /// `""` clears the default model.
    #[serde(default)]
    #[garde(inner(length(bytes, max = LIMITS.model_name.max_bytes)))]
    pub default_model: Option<String>,
    /// `""` removes the default system prompt.
    #[serde(default)]
    #[garde(inner(length(chars, max = LIMITS.system_prompt.max_chars)))]
    pub system_prompt: Option<String>,
    /// Required (`true`) to move `baseUrl` to another scheme, host or port while the provider
    /// holds keys: they would be sent to the new host. Without it that change is a `validation`
    /// error whose `details` name the keys.
    #[serde(default)]
    #[garde(skip)]
    pub confirm_host_change: Option<bool>,
    /// As in [`AddProviderArgs::on_my_network`], for a new `baseUrl`.
    #[serde(default)]
    #[garde(skip)]
    pub on_my_network: Option<bool>,
}

impl CommandArgs for UpdateProviderArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        let nothing = self.name.is_none()
            && self.kind.is_none()
            && self.base_url.is_none()
            && self.api_key.is_none()
            && self.models.is_none()
            && self.default_model.is_none()
            && self.system_prompt.is_none();
        if nothing {
            let fields = ["name", "kind", "baseUrl", "apiKey", "models", "defaultModel", "systemPrompt"];
            return Err(IpcError::nothing_to_change(&fields));
        }
        Ok(())
    }
}

impl From<UpdateProviderArgs> for ProviderPatch {
    fn from(a: UpdateProviderArgs) -> Self {
        ProviderPatch {
            name: a.name.map(|n| n.trim().to_owned()),
            kind: a.kind,
            base_url: a.base_url.map(|u| u.trim().to_owned()),
            api_key: a.api_key.map(|k| Some(k.trimmed()).filter(|k| !k.expose().is_empty())),
            models: a.models.map(|m| m.into_iter().map(|m| m.trim().to_owned()).collect()),
            default_model: a.default_model.map(|m| Some(m.trim().to_owned()).filter(|m| !m.is_empty())),
            system_prompt: a.system_prompt.map(|p| Some(p).filter(|p| !p.trim().is_empty())),
            on_my_network: a.on_my_network.unwrap_or(false),
        }
    }
}

/// `llmConfig:listModels`: the models the provider's models endpoint lists.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ListModelsArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    /// Ask the provider again rather than answer from what was fetched before.
    #[serde(default)]
    #[garde(skip)]
    pub refresh: Option<bool>,
}

impl CommandArgs for ListModelsArgs {}

/// `llmConfig:listModelsFor`: the models a provider that is not saved yet lists (the Add
/// provider form), asked at `baseUrl` with `apiKey` or none. The same rules as for a saved
/// provider: the base URL is checked as `addProvider` checks it, redirects stay within its
/// origin, the provider's words come back with the key masked; nothing is saved or kept.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ListModelsForArgs {
    #[garde(skip)]
    pub kind: ProviderKind,
    #[garde(custom(base_url_rule))]
    pub base_url: String,
    #[serde(default)]
    #[garde(custom(optional_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    /// As in [`AddProviderArgs::on_my_network`]: a key goes to that host unencrypted too.
    #[serde(default)]
    #[garde(skip)]
    pub on_my_network: Option<bool>,
}

impl CommandArgs for ListModelsForArgs {}

/// What deleting a provider answers: the provider that is gone, and how many of its keys went
/// with it. Composed here from the id asked for and the count the service answers.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "DeletedProvider")]
pub struct DeletedProviderDto {
    pub id: String,
    /// How many pool keys were deleted with the provider.
    pub deleted_keys: u32,
}

type Result<T, E = IpcError> = std::result::Result<T, E>;

pub(super) fn list(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<Vec<Provider>> {
    // What a keyless server answered a moment ago counts: the ledger writes in batches.
    ctx.usage()?.flush();
    Ok(ctx.providers()?.list()?)
}

pub(super) fn add(ctx: &AppContext, args: AddProviderArgs) -> Result<Provider> {
    Ok(ctx.providers()?.add(args.into())?)
}

pub(super) fn update(ctx: &AppContext, args: UpdateProviderArgs) -> Result<Provider> {
    let (id, confirmed) = (args.id.clone(), args.confirm_host_change.unwrap_or(false));
    Ok(ctx.providers()?.update(&id, args.into(), confirmed)?)
}

pub(super) fn delete(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<DeletedProviderDto> {
    let deleted_keys = ctx.providers()?.delete(&id)?;
    Ok(DeletedProviderDto { id, deleted_keys })
}

pub(super) async fn models(ctx: &AppContext, args: ListModelsArgs) -> Result<ModelList> {
    Ok(ctx.providers()?.models(&args.provider_id, args.refresh.unwrap_or(false)).await?)
}

pub(super) async fn models_for(ctx: &AppContext, args: ListModelsForArgs) -> Result<ModelList> {
    let api_key = args.api_key.map(|k| k.trimmed());
    let consent = args.on_my_network.unwrap_or(false);
    Ok(ctx.providers()?.models_unsaved(args.kind, args.base_url.trim(), api_key, consent).await?)
}

/// The provider kinds in the order the form offers them, each with the base URL a provider of it
/// has by default and what its keys start with (the shapes a bulk import reads): keypool-llm's
/// `KINDS`, as the bindings' `PROVIDER_KINDS`.
pub(super) fn kinds_typescript() -> String {
    let rows: Vec<String> = keypool_llm::KINDS
        .iter()
        .map(|row| {
            let prefixes: Vec<String> = row.key_shapes.iter().map(|shape| format!("{:?}", shape.prefix())).collect();
            format!(
                "  {{ id: {:?}, defaultBaseUrl: {:?}, keyPrefixes: [{}] }},",
                row.id,
                row.default_base_url,
                prefixes.join(", ")
            )
        })
        .collect();
    format!(
        "/**\n * The provider kinds, in the order the form offers them (keypool-llm's `KINDS`), with what\n * their keys start with.\n */\n\
         export const PROVIDER_KINDS = [\n{}\n] as const satisfies readonly {{ id: ProviderKind; defaultBaseUrl: string; keyPrefixes: readonly string[] }}[];\n",
        rows.join("\n")
    )
}
