//! What the `llmConfig:*` commands return, and the `llmConfig:changed` event.

use keypool::KeyError;
use keypool_llm::{ProbeProblem, ProbeResult};
use keypool_store::api_keys::ApiKeyRow;
use keypool_store::providers::ProviderRow;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::service::PoolStatus as PoolView;
use crate::service::{BreakageKind, ModelList};

/// A pool entry as stored. The secret never comes back: only `apiKeyPreview`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ApiKey")]
pub struct ApiKeyDto {
    pub id: String,
    pub provider_id: String,
    pub label: Option<String>,
    /// `sk-…9f3a`, or a `$NAME` reference as written.
    pub api_key_preview: String,
    pub is_env_ref: bool,
    pub enabled: bool,
    /// 1–100.
    pub weight: u32,
    pub sort_order: i64,
    /// Why the backend switched the key off, e.g. `HTTP 401`; null when the user did.
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The user's limit of requests per minute; null: none.
    pub rpm_limit: Option<u32>,
    /// The user's limit of requests at once; null: none.
    pub max_concurrent: Option<u32>,
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
            rpm_limit: row.rpm_limit,
            max_concurrent: row.max_concurrent,
        }
    }
}

/// What a delete answers: the id that is gone.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "Deleted")]
pub struct DeletedDto {
    pub id: String,
}

/// The pool's view of a provider's keys, with the backend's `now` so the UI can count down
/// cooldowns without trusting its own clock.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "PoolStatus")]
pub struct PoolStatusDto {
    pub provider_id: String,
    pub now: i64,
    pub keys: Vec<KeyStatusDto>,
}

impl PoolStatusDto {
    pub fn new(provider_id: String, view: PoolView) -> Self {
        let keys = view
            .keys
            .into_iter()
            .zip(view.unset_vars)
            .map(|(status, unset_var)| KeyStatusDto { unset_var, ..status.into() })
            .collect();
        PoolStatusDto { provider_id, now: view.now.as_millis(), keys }
    }
}

/// How a key stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    /// Enabled and not cooling: can be selected.
    Active,
    /// Resting after rate limits until `coolingUntil`.
    Cooling,
    /// Off: by hand, or because the provider rejected it.
    Disabled,
    /// Out of credit: out of rotation until a background probe finds it usable (`nextProbeAt`).
    Exhausted,
    /// Its value is kept in the keychain, which is not reachable now: not deleted, not used.
    Unavailable,
}

impl From<keypool::KeyState> for KeyState {
    fn from(state: keypool::KeyState) -> Self {
        match state {
            keypool::KeyState::Active => KeyState::Active,
            keypool::KeyState::Cooling => KeyState::Cooling,
            keypool::KeyState::Disabled => KeyState::Disabled,
            keypool::KeyState::Exhausted => KeyState::Exhausted,
            keypool::KeyState::Unavailable => KeyState::Unavailable,
        }
    }
}

/// A key's state and statistics (since the app started).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyStatus")]
pub struct KeyStatusDto {
    pub id: String,
    pub label: Option<String>,
    pub state: KeyState,
    pub cooling_until: Option<i64>,
    pub consecutive_errors: u32,
    pub last_error: Option<LastErrorDto>,
    pub last_used_at: Option<i64>,
    pub request_count: u64,
    pub failure_count: u64,
    /// What the provider last announced the key has left, per model (or model class).
    pub budgets: Vec<BudgetDto>,
    /// Requests using the key right now.
    pub in_flight: u32,
    /// When an out-of-credit key is probed next.
    pub next_probe_at: Option<i64>,
    /// A `$NAME` key whose variable has no usable value: the variable's name. The pool skips
    /// the key until it has one.
    pub unset_var: Option<String>,
}

/// What a key has left for one model (or model class), as last announced: e.g. 3 of 5 requests
/// until `resetAt`. A window already reset, or never announced, is null.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Budget")]
pub struct BudgetDto {
    pub scope: String,
    pub requests: Option<WindowDto>,
    pub tokens: Option<WindowDto>,
    /// Requests in flight counted against the windows.
    pub reserved_requests: u32,
}

#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Window")]
pub struct WindowDto {
    pub remaining: u64,
    pub limit: Option<u64>,
    pub reset_at: i64,
}

impl From<keypool::Window> for WindowDto {
    fn from(w: keypool::Window) -> Self {
        WindowDto { remaining: w.remaining, limit: w.limit, reset_at: w.reset_at.as_millis() }
    }
}

/// What the last failure of a key was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LastErrorKind {
    RateLimited,
    AuthRejected,
    UnresolvedEnv,
    QuotaExhausted,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LastError")]
pub struct LastErrorDto {
    pub kind: LastErrorKind,
    pub status: Option<u16>,
    pub message: String,
    pub at: Option<i64>,
}

impl From<keypool::KeyStatus> for KeyStatusDto {
    fn from(status: keypool::KeyStatus) -> Self {
        let last_error = status.last_error.as_ref().map(|error| {
            let (kind, message) = match error {
                KeyError::RateLimited { status } => {
                    (LastErrorKind::RateLimited, format!("rate limited (HTTP {status})"))
                }
                KeyError::AuthRejected { status } => {
                    (LastErrorKind::AuthRejected, format!("rejected by the provider (HTTP {status})"))
                }
                KeyError::UnresolvedEnv { var } => {
                    (LastErrorKind::UnresolvedEnv, format!("environment variable {var} is not set"))
                }
                KeyError::QuotaExhausted { status } => {
                    (LastErrorKind::QuotaExhausted, format!("out of credit (HTTP {status})"))
                }
            };
            LastErrorDto { kind, status: error.status(), message, at: status.last_error_at.map(|t| t.as_millis()) }
        });
        KeyStatusDto {
            id: status.key_id.as_str().to_owned(),
            label: status.label,
            state: status.state.into(),
            cooling_until: status.cooling_until.map(|t| t.as_millis()),
            consecutive_errors: status.consecutive_errors,
            last_error,
            last_used_at: status.last_used_at.map(|t| t.as_millis()),
            request_count: status.request_count,
            failure_count: status.failure_count,
            budgets: status
                .budgets
                .into_iter()
                .map(|b| BudgetDto {
                    scope: b.scope,
                    requests: b.requests.map(Into::into),
                    tokens: b.tokens.map(Into::into),
                    reserved_requests: b.reserved_requests,
                })
                .collect(),
            in_flight: status.in_flight,
            next_probe_at: status.next_probe_at.map(|t| t.as_millis()),
            unset_var: None,
        }
    }
}

/// How a provider speaks: OpenAI's Chat Completions (and every compatible server), or
/// Anthropic's Messages API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Openai,
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// The kind a stored provider has (the store's CHECK admits only these two).
    fn of_row(kind: &str) -> Self {
        if kind == ProviderKind::Anthropic.as_str() {
            ProviderKind::Anthropic
        } else {
            ProviderKind::Openai
        }
    }
}

/// A provider as the UI sees it; its own key only as a preview.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Provider")]
pub struct ProviderDto {
    /// `openai`, `anthropic`, `local` for the built-in ones, a UUID for the others.
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
    /// How many keys the pool holds; while 0, the provider-level key is used.
    pub key_count: u32,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<ProviderRow> for ProviderDto {
    fn from(row: ProviderRow) -> Self {
        ProviderDto {
            api_key_preview: row.api_key.as_ref().map(|k| k.preview()),
            kind: ProviderKind::of_row(&row.kind),
            id: row.id,
            name: row.name,
            base_url: row.base_url,
            builtin: row.builtin,
            sort_order: row.sort_order,
            models: row.models,
            default_model: row.default_model,
            system_prompt: row.system_prompt,
            key_count: row.key_count,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "DeletedProvider")]
pub struct DeletedProviderDto {
    pub id: String,
    /// How many pool keys were deleted with the provider.
    pub deleted_keys: u32,
}

/// What testing one key against its provider found (the provider's model list, fetched with
/// that key).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct KeyTestResult {
    pub ok: bool,
    /// The HTTP status, or null when no answer came (network, unresolved `$NAME`).
    pub status: Option<u16>,
    /// What went wrong, for the UI to word; null when `ok`.
    pub problem: Option<ProbeProblemDto>,
    /// The provider's words on a refusal; otherwise the English fallback.
    pub message: String,
    pub latency_ms: u64,
}

impl From<ProbeResult> for KeyTestResult {
    fn from(probe: ProbeResult) -> Self {
        KeyTestResult {
            ok: probe.ok,
            status: probe.status,
            problem: probe.problem.map(ProbeProblemDto::from),
            message: probe.message,
            latency_ms: probe.latency_ms,
        }
    }
}

/// Why asking a provider (a key test, a model list) failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "ProbeProblem")]
pub enum ProbeProblemDto {
    /// The key is `$var`, which has no usable value.
    EnvUnset { var: String },
    /// The provider redirected to another host; no key was sent there.
    Redirected,
    /// The provider refused (see `status` and its words in `message`).
    Refused,
    /// No answer came.
    Unreachable { breakage: BreakageKind },
    /// An answer came, but not a list of models.
    Unreadable,
    /// The key is accepted but still out of credit.
    OutOfCredit,
}

impl From<ProbeProblem> for ProbeProblemDto {
    fn from(problem: ProbeProblem) -> Self {
        match problem {
            ProbeProblem::EnvUnset { var } => ProbeProblemDto::EnvUnset { var },
            ProbeProblem::Redirected => ProbeProblemDto::Redirected,
            ProbeProblem::Refused => ProbeProblemDto::Refused,
            ProbeProblem::Unreachable(breakage) => ProbeProblemDto::Unreachable { breakage: breakage.into() },
            ProbeProblem::Unreadable => ProbeProblemDto::Unreadable,
            ProbeProblem::OutOfCredit => ProbeProblemDto::OutOfCredit,
        }
    }
}

/// The models a provider's models endpoint lists.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ModelList")]
pub struct ModelListDto {
    pub models: Vec<String>,
    /// When they were fetched (milliseconds since the epoch).
    pub fetched_at: i64,
    /// Answered from the list fetched before (pass `refresh: true` to ask again).
    pub cached: bool,
}

impl From<ModelList> for ModelListDto {
    fn from(list: ModelList) -> Self {
        ModelListDto { models: list.models, fetched_at: list.fetched_at, cached: list.cached }
    }
}

/// The payload of `llmConfig:changed`, emitted after every write to a provider's keys (by a
/// command, or by the pool disabling a key the provider rejected).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderChanged {
    pub provider_id: String,
}
