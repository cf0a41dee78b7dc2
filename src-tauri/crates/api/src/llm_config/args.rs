//! The arguments of the `llmConfig:*` commands, exactly as the UI sends them: camelCase, no
//! unknown fields, no coercion, no `null` for optional fields.

use garde::Validate;
use serde::Deserialize;

use crate::args::{api_key_rule, base_url_rule, not_blank, optional_api_key_rule, present, removable_api_key_rule};

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ProviderArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct IdArgs {
    #[garde(custom(not_blank))]
    pub id: String,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AddApiKeyArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(length(chars, max = 100))]
    pub label: Option<String>,
    #[garde(custom(api_key_rule))]
    pub api_key: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(skip)]
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[garde(range(min = 1, max = 100))]
    pub weight: Option<u32>,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct UpdateApiKeyArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    /// An empty label removes the label.
    #[serde(default, deserialize_with = "present")]
    #[garde(length(chars, max = 100))]
    pub label: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(custom(optional_api_key_rule))]
    pub api_key: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(skip)]
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[garde(range(min = 1, max = 100))]
    pub weight: Option<u32>,
}

impl UpdateApiKeyArgs {
    pub fn changes_nothing(&self) -> bool {
        self.label.is_none() && self.api_key.is_none() && self.enabled.is_none() && self.weight.is_none()
    }
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ToggleApiKeyArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[garde(skip)]
    pub enabled: bool,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReorderApiKeysArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
    #[garde(inner(custom(not_blank)))]
    pub ids: Vec<String>,
}

/// The two provider kinds, by their wire names.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum KindArg {
    Openai,
    Anthropic,
}

impl KindArg {
    pub fn as_str(self) -> &'static str {
        match self {
            KindArg::Openai => "openai",
            KindArg::Anthropic => "anthropic",
        }
    }
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AddProviderArgs {
    #[garde(length(chars, min = 1, max = 60), custom(not_blank))]
    pub name: String,
    #[garde(skip)]
    pub kind: KindArg,
    #[garde(custom(base_url_rule))]
    pub base_url: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(custom(optional_api_key_rule))]
    pub api_key: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(length(max = 100), inner(inner(length(chars, max = 200), custom(not_blank))))]
    pub models: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, max = 200), custom(not_blank)))]
    pub default_model: Option<String>,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct UpdateProviderArgs {
    #[garde(custom(not_blank))]
    pub id: String,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, min = 1, max = 60), custom(not_blank)))]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(skip)]
    pub kind: Option<KindArg>,
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(custom(base_url_rule)))]
    pub base_url: Option<String>,
    /// `""` removes the provider-level key.
    #[serde(default, deserialize_with = "present")]
    #[garde(custom(removable_api_key_rule))]
    pub api_key: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[garde(length(max = 100), inner(inner(length(chars, max = 200), custom(not_blank))))]
    pub models: Option<Vec<String>>,
    /// `""` clears the default model.
    #[serde(default, deserialize_with = "present")]
    #[garde(inner(length(chars, max = 200)))]
    pub default_model: Option<String>,
}

impl UpdateProviderArgs {
    pub fn changes_nothing(&self) -> bool {
        self.name.is_none()
            && self.kind.is_none()
            && self.base_url.is_none()
            && self.api_key.is_none()
            && self.models.is_none()
            && self.default_model.is_none()
    }
}
