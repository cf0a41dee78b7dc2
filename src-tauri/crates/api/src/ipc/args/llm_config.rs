//! The arguments of the `llmConfig:*` commands.

use garde::Validate;
use keypool::UserLimits;
use keypool_store::api_keys::ApiKeyPatch;
use keypool_store::providers::{NewProvider, ProviderPatch};
use keypool_store::StoredKey;
use serde::Deserialize;
use ts_rs::TS;

use super::chat::MAX_SYSTEM_PROMPT_CHARS;
use super::rules::{
    base_url_rule, key_arg_rule, normalize_label, not_blank, optional_key_arg_rule, removable_key_arg_rule, KeyArg,
};
use super::CommandArgs;
use crate::ipc::dto::ProviderKind;
use crate::ipc::error::IpcError;
use crate::service::NewKey;

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
}

impl CommandArgs for ProviderArgs {}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdArgs {
    #[garde(custom(not_blank))]
    pub id: String,
}

impl CommandArgs for IdArgs {}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AddApiKeyArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[serde(default)]
    #[garde(length(chars, max = 100))]
    pub label: Option<String>,
    /// The key itself, or `$NAME` for the environment variable NAME.
    #[garde(custom(key_arg_rule))]
    pub api_key: KeyArg,
    /// Default true.
    #[serde(default)]
    #[garde(skip)]
    pub enabled: Option<bool>,
    /// 1–100, default 1.
    #[serde(default)]
    #[garde(range(min = 1, max = 100))]
    pub weight: Option<u32>,
    /// At most this many requests per minute, 1–100 000, for providers that announce no limits;
    /// absent: no limit.
    #[serde(default)]
    #[garde(range(min = 1, max = 100_000))]
    pub rpm_limit: Option<u32>,
    /// At most this many requests at once, 1–1 000; absent: no limit.
    #[serde(default)]
    #[garde(range(min = 1, max = 1_000))]
    pub max_concurrent: Option<u32>,
}

impl CommandArgs for AddApiKeyArgs {}

impl From<AddApiKeyArgs> for NewKey {
    fn from(a: AddApiKeyArgs) -> Self {
        NewKey {
            provider_id: a.provider_id,
            label: normalize_label(a.label),
            api_key: a.api_key.trimmed(),
            enabled: a.enabled.unwrap_or(true),
            weight: a.weight.unwrap_or(1),
            limits: UserLimits { rpm: a.rpm_limit, max_concurrent: a.max_concurrent },
        }
    }
}

/// The user's limits of a key, both replaced: an absent one is removed.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SetKeyLimitsArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    /// 1–100 000 requests per minute; absent: no limit.
    #[serde(default)]
    #[garde(range(min = 1, max = 100_000))]
    pub rpm_limit: Option<u32>,
    /// 1–1 000 requests at once; absent: no limit.
    #[serde(default)]
    #[garde(range(min = 1, max = 1_000))]
    pub max_concurrent: Option<u32>,
}

impl CommandArgs for SetKeyLimitsArgs {}

impl From<&SetKeyLimitsArgs> for UserLimits {
    fn from(a: &SetKeyLimitsArgs) -> Self {
        UserLimits { rpm: a.rpm_limit, max_concurrent: a.max_concurrent }
    }
}

/// At least one field to change.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateApiKeyArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    /// An empty label removes the label.
    #[serde(default)]
    #[garde(length(chars, max = 100))]
    pub label: Option<String>,
    #[serde(default)]
    #[garde(custom(optional_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    #[serde(default)]
    #[garde(skip)]
    pub enabled: Option<bool>,
    #[serde(default)]
    #[garde(range(min = 1, max = 100))]
    pub weight: Option<u32>,
}

impl CommandArgs for UpdateApiKeyArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        if self.label.is_none() && self.api_key.is_none() && self.enabled.is_none() && self.weight.is_none() {
            return Err(IpcError::nothing_to_change(&["label", "apiKey", "enabled", "weight"]));
        }
        Ok(())
    }
}

impl From<UpdateApiKeyArgs> for ApiKeyPatch {
    fn from(a: UpdateApiKeyArgs) -> Self {
        ApiKeyPatch {
            label: a.label.map(|l| normalize_label(Some(l))),
            api_key: a.api_key.map(|k| StoredKey::Database(k.trimmed())),
            enabled: a.enabled,
            weight: a.weight,
        }
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToggleApiKeyArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[garde(skip)]
    pub enabled: bool,
}

impl CommandArgs for ToggleApiKeyArgs {}

/// Each of the provider's key ids once, in the new order.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReorderApiKeysArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[garde(inner(custom(not_blank)))]
    pub ids: Vec<String>,
}

impl CommandArgs for ReorderApiKeysArgs {}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AddProviderArgs {
    #[garde(length(chars, min = 1, max = 60), custom(not_blank))]
    pub name: String,
    #[garde(skip)]
    pub kind: ProviderKind,
    #[garde(custom(base_url_rule))]
    pub base_url: String,
    #[serde(default)]
    #[garde(custom(optional_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    #[serde(default)]
    #[garde(length(max = 100), inner(inner(length(chars, max = 200), custom(not_blank))))]
    pub models: Option<Vec<String>>,
    /// One of `models` (when it lists any).
    #[serde(default)]
    #[garde(inner(length(chars, max = 200), custom(not_blank)))]
    pub default_model: Option<String>,
    /// The system prompt new chats with this provider start with.
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_SYSTEM_PROMPT_CHARS)))]
    pub system_prompt: Option<String>,
}

impl CommandArgs for AddProviderArgs {}

impl From<AddProviderArgs> for NewProvider {
    fn from(a: AddProviderArgs) -> Self {
        NewProvider {
            id: String::new(),
            name: a.name.trim().to_owned(),
            kind: a.kind.as_str().to_owned(),
            base_url: a.base_url.trim().to_owned(),
            api_key: a.api_key.map(|k| StoredKey::Database(k.trimmed())),
            models: a.models.unwrap_or_default().into_iter().map(|m| m.trim().to_owned()).collect(),
            default_model: a.default_model.map(|m| m.trim().to_owned()),
            system_prompt: a.system_prompt.filter(|p| !p.trim().is_empty()),
        }
    }
}

/// At least one field to change.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateProviderArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[serde(default)]
    #[garde(inner(length(chars, min = 1, max = 60), custom(not_blank)))]
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
    #[garde(length(max = 100), inner(inner(length(chars, max = 200), custom(not_blank))))]
    pub models: Option<Vec<String>>,
    /// `""` clears the default model.
    #[serde(default)]
    #[garde(inner(length(chars, max = 200)))]
    pub default_model: Option<String>,
    /// `""` removes the default system prompt.
    #[serde(default)]
    #[garde(inner(length(chars, max = MAX_SYSTEM_PROMPT_CHARS)))]
    pub system_prompt: Option<String>,
    /// Required (`true`) to move `baseUrl` to another scheme, host or port while the provider
    /// holds keys: they would be sent to the new host. Without it that change is a `validation`
    /// error whose `details` name the keys.
    #[serde(default)]
    #[garde(skip)]
    pub confirm_host_change: Option<bool>,
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
            kind: a.kind.map(|k| k.as_str().to_owned()),
            base_url: a.base_url.map(|u| u.trim().to_owned()),
            api_key: a.api_key.map(|k| Some(k.trimmed()).filter(|k| !k.expose().is_empty()).map(StoredKey::Database)),
            models: a.models.map(|m| m.into_iter().map(|m| m.trim().to_owned()).collect()),
            default_model: a.default_model.map(|m| Some(m.trim().to_owned()).filter(|m| !m.is_empty())),
            system_prompt: a.system_prompt.map(|p| Some(p).filter(|p| !p.trim().is_empty())),
        }
    }
}

/// `llmConfig:listModels`: the models the provider's models endpoint lists.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ListModelsArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    /// Ask the provider again rather than answer from what was fetched before.
    #[serde(default)]
    #[garde(skip)]
    pub refresh: Option<bool>,
}

impl CommandArgs for ListModelsArgs {}
