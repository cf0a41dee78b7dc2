//! What the `llmConfig:*` commands return. No field ever holds a stored secret: keys travel as
//! `apiKeyPreview` (masked; a `$NAME` reference as written).

use keypool::{KeyError, KeyState, KeyStatus};
use keypool_store::api_keys::ApiKeyRow;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyDto {
    pub id: String,
    pub provider_id: String,
    pub label: Option<String>,
    pub api_key_preview: String,
    pub is_env_ref: bool,
    pub enabled: bool,
    pub weight: u32,
    pub sort_order: i64,
    pub disabled_reason: Option<String>,
    /// Milliseconds since the Unix epoch, like every time in this contract.
    pub disabled_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<ApiKeyRow> for ApiKeyDto {
    fn from(row: ApiKeyRow) -> Self {
        ApiKeyDto {
            api_key_preview: row.api_key.preview(),
            is_env_ref: row.api_key.env_var().is_some(),
            id: row.id,
            provider_id: row.provider_id,
            label: row.label,
            enabled: row.enabled,
            weight: row.weight,
            sort_order: row.sort_order,
            disabled_reason: row.disabled_reason,
            disabled_at: row.disabled_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DeletedDto {
    pub id: String,
}

/// The pool's view of a provider's keys, with the backend's `now` so the UI can count down
/// cooldowns without trusting its own clock.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolStatusDto {
    pub provider_id: String,
    pub now: i64,
    pub keys: Vec<KeyStatusDto>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyStatusDto {
    pub id: String,
    pub label: Option<String>,
    pub state: &'static str,
    pub cooling_until: Option<i64>,
    pub consecutive_errors: u32,
    pub last_error: Option<LastErrorDto>,
    pub last_used_at: Option<i64>,
    pub request_count: u64,
    pub failure_count: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastErrorDto {
    /// `rate_limited`, `auth_rejected` or `unresolved_env`.
    pub kind: &'static str,
    pub status: Option<u16>,
    pub message: String,
    pub at: Option<i64>,
}

impl From<KeyStatus> for KeyStatusDto {
    fn from(status: KeyStatus) -> Self {
        let last_error = status.last_error.as_ref().map(|error| {
            let (kind, message) = match error {
                KeyError::RateLimited { status } => ("rate_limited", format!("rate limited (HTTP {status})")),
                KeyError::AuthRejected { status } => ("auth_rejected", format!("rejected by the provider (HTTP {status})")),
                KeyError::UnresolvedEnv { var } => ("unresolved_env", format!("environment variable {var} is not set")),
            };
            LastErrorDto { kind, status: error.status(), message, at: status.last_error_at.map(|t| t.as_millis()) }
        });
        KeyStatusDto {
            id: status.key_id.as_str().to_owned(),
            label: status.label,
            state: match status.state {
                KeyState::Active => "active",
                KeyState::Cooling => "cooling",
                KeyState::Disabled => "disabled",
            },
            cooling_until: status.cooling_until.map(|t| t.as_millis()),
            consecutive_errors: status.consecutive_errors,
            last_error,
            last_used_at: status.last_used_at.map(|t| t.as_millis()),
            request_count: status.request_count,
            failure_count: status.failure_count,
        }
    }
}

/// A provider as the UI sees it; its own key only as a preview.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderDto {
    pub id: String,
    pub name: String,
    /// `openai` (OpenAI-compatible) or `anthropic`.
    pub kind: String,
    pub base_url: String,
    pub api_key_preview: Option<String>,
    pub builtin: bool,
    pub sort_order: i64,
    pub models: Vec<String>,
    pub default_model: Option<String>,
    /// How many keys the pool holds; while 0, the provider-level key is used.
    pub key_count: u32,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<keypool_store::providers::ProviderRow> for ProviderDto {
    fn from(row: keypool_store::providers::ProviderRow) -> Self {
        ProviderDto {
            api_key_preview: row.api_key.as_ref().map(|k| k.preview()),
            id: row.id,
            name: row.name,
            kind: row.kind,
            base_url: row.base_url,
            builtin: row.builtin,
            sort_order: row.sort_order,
            models: row.models,
            default_model: row.default_model,
            key_count: row.key_count,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedProviderDto {
    pub id: String,
    /// How many pool keys were deleted with the provider.
    pub deleted_keys: u32,
}
