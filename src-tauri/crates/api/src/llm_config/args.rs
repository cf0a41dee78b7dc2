//! The arguments of the `llmConfig:*` commands, exactly as the UI sends them: camelCase, no
//! unknown fields, no coercion, no `null` for optional fields.

use garde::Validate;
use serde::Deserialize;

use crate::args::{api_key_rule, not_blank, optional_api_key_rule, present};

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ProviderArgs {
    #[garde(custom(not_blank))]
    pub provider_id: String,
}

#[derive(Debug, Deserialize, Validate)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct KeyIdArgs {
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
