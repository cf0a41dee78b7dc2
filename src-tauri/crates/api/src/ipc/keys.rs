//! `llmConfig:*` of a provider's key pool: the keys as stored (add, change, toggle, order,
//! limits, delete), the pool's live view of them, ending a cooldown, and testing one key.

use garde::Validate;
use keypool::{KeyError, UserLimits};
use keypool_llm::ProbeResult;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, IdArgs, ProviderArgs};
use super::error::IpcError;
use super::limits::LIMITS;
use super::problems::ProbeProblemDto;
use super::rules::{key_arg_rule, not_blank, optional_key_arg_rule, trimmed_or_none, KeyArg};
use crate::service::{ApiKey, KeyPatch, NewKey, PoolStatus as PoolView, Written};
use crate::AppContext;

type Result<T, E = IpcError> = std::result::Result<T, E>;

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct AddApiKeyArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.key_label.max_chars))]
    pub label: Option<String>,
    /// The key itself, or `$NAME` for the environment variable NAME.
    #[garde(custom(key_arg_rule))]
    pub api_key: KeyArg,
    /// Default true.
    #[serde(default)]
    #[garde(skip)]
    pub enabled: Option<bool>,
    /// Within `LIMITS.weight`, its default when absent.
    #[serde(default)]
    #[garde(range(min = LIMITS.weight.min, max = LIMITS.weight.max))]
    pub weight: Option<u32>,
    /// At most this many requests per minute (`LIMITS.rpmLimit`), for providers that announce no
    /// limits; absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.rpm_limit.min, max = LIMITS.rpm_limit.max))]
    pub rpm_limit: Option<u32>,
    /// At most this many requests at once (`LIMITS.maxConcurrent`); absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.max_concurrent.min, max = LIMITS.max_concurrent.max))]
    pub max_concurrent: Option<u32>,
    /// The quota group the key shares its provider's limits with (e.g. its Google Cloud project),
    /// at most `LIMITS.quotaGroup`; absent or blank: a group of its own.
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.quota_group.max_chars))]
    pub quota_group: Option<String>,
}

impl CommandArgs for AddApiKeyArgs {}

impl From<AddApiKeyArgs> for NewKey {
    fn from(a: AddApiKeyArgs) -> Self {
        NewKey {
            provider_id: a.provider_id,
            label: trimmed_or_none(a.label),
            api_key: a.api_key.trimmed(),
            enabled: a.enabled.unwrap_or(true),
            weight: a.weight.unwrap_or(LIMITS.weight.default),
            limits: UserLimits { rpm: a.rpm_limit, max_concurrent: a.max_concurrent },
            quota_group: trimmed_or_none(a.quota_group),
        }
    }
}

/// The user's limits of a key, both replaced: an absent one is removed.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SetKeyLimitsArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    /// Requests per minute (`LIMITS.rpmLimit`); absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.rpm_limit.min, max = LIMITS.rpm_limit.max))]
    pub rpm_limit: Option<u32>,
    /// Requests at once (`LIMITS.maxConcurrent`); absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.max_concurrent.min, max = LIMITS.max_concurrent.max))]
    pub max_concurrent: Option<u32>,
}

impl CommandArgs for SetKeyLimitsArgs {}

impl From<&SetKeyLimitsArgs> for UserLimits {
    fn from(a: &SetKeyLimitsArgs) -> Self {
        UserLimits { rpm: a.rpm_limit, max_concurrent: a.max_concurrent }
    }
}

/// A key's own limits, both replaced: an absent one is removed.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct KeyLimitsArg {
    /// Requests per minute (`LIMITS.rpmLimit`); absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.rpm_limit.min, max = LIMITS.rpm_limit.max))]
    pub rpm_limit: Option<u32>,
    /// Requests at once (`LIMITS.maxConcurrent`); absent: no limit.
    #[serde(default)]
    #[garde(range(min = LIMITS.max_concurrent.min, max = LIMITS.max_concurrent.max))]
    pub max_concurrent: Option<u32>,
}

/// At least one field to change.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct UpdateApiKeyArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    /// An empty label removes the label.
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.key_label.max_chars))]
    pub label: Option<String>,
    #[serde(default)]
    #[garde(custom(optional_key_arg_rule))]
    pub api_key: Option<KeyArg>,
    #[serde(default)]
    #[garde(skip)]
    pub enabled: Option<bool>,
    #[serde(default)]
    #[garde(range(min = LIMITS.weight.min, max = LIMITS.weight.max))]
    pub weight: Option<u32>,
    /// Both of the key's own limits, replaced (as `llmConfig:setKeyLimits` does).
    #[serde(default)]
    #[garde(dive)]
    pub limits: Option<KeyLimitsArg>,
    /// The key's quota group (`LIMITS.quotaGroup`, trimmed); `""` puts it in a group of its own.
    #[serde(default)]
    #[garde(length(chars, max = LIMITS.quota_group.max_chars))]
    pub quota_group: Option<String>,
}

impl CommandArgs for UpdateApiKeyArgs {
    fn check_whole(&self) -> Result<(), IpcError> {
        let nothing = self.label.is_none()
            && self.api_key.is_none()
            && self.enabled.is_none()
            && self.weight.is_none()
            && self.limits.is_none()
            && self.quota_group.is_none();
        if nothing {
            let fields = ["label", "apiKey", "enabled", "weight", "limits", "quotaGroup"];
            return Err(IpcError::nothing_to_change(&fields));
        }
        Ok(())
    }
}

impl From<UpdateApiKeyArgs> for KeyPatch {
    fn from(a: UpdateApiKeyArgs) -> Self {
        KeyPatch {
            label: a.label.map(|l| trimmed_or_none(Some(l))),
            api_key: a.api_key.map(|k| k.trimmed()),
            enabled: a.enabled,
            weight: a.weight,
            limits: a.limits.map(|l| UserLimits { rpm: l.rpm_limit, max_concurrent: l.max_concurrent }),
            quota_group: a.quota_group.map(|g| trimmed_or_none(Some(g))),
        }
    }
}

#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToggleApiKeyArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
    #[garde(skip)]
    pub enabled: bool,
}

impl CommandArgs for ToggleApiKeyArgs {}

/// Each of the provider's key ids once, in the new order.
#[derive(Debug, Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReorderApiKeysArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
    #[garde(inner(custom(not_blank)))]
    pub ids: Vec<String>,
}

impl CommandArgs for ReorderApiKeysArgs {}

/// Keys as a write left them (a provider's whole list in its order, or the keys a bulk change
/// set): in an object, so that the answer carries the write's generation beside them.
#[derive(Debug, Clone, Serialize, TS)]
pub struct KeyList {
    pub keys: Vec<ApiKey>,
}

/// What deleting a key answers: the key that is gone.
#[derive(Debug, Clone, Serialize, TS)]
pub struct DeletedKey {
    pub id: String,
}

/// What ending a key's cooldown answers: the key, selectable again (unless it is off).
#[derive(Debug, Clone, Serialize, TS)]
pub struct CooldownReset {
    pub id: String,
}

/// The pool's view of a provider's keys, with the backend's `now` so the UI can count down
/// cooldowns without trusting its own clock. This view and the four below are the pool's
/// statuses (keypool, which knows nothing of serde) reshaped: its times as milliseconds, its
/// errors worded, each `$NAME` key's unset variable joined in.
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
            .zip(view.balances)
            .zip(view.windows)
            .zip(view.expiries)
            .map(|((((status, unset_var), balance), windows), expires)| KeyStatusDto {
                unset_var,
                balance: balance.map(KeyBalanceDto::from),
                windows: windows.map(KeyWindowsDto::from),
                expires_at: expires.map(|at| at.as_millis()),
                ..status.into()
            })
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
    /// The quota group it shares cooling, budgets and used-up days with; null: its own.
    pub quota_group: Option<String>,
    /// Of the key as a whole (its group's rest after a rate limit that named no model); a
    /// model resting alone is in `budgets`.
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
    /// What the key's account has left, as last read (DeepSeek, Moonshot, SiliconFlow,
    /// OpenRouter); null where the provider answers no balance read, or none was read yet.
    pub balance: Option<KeyBalanceDto>,
    /// What the key's coding plan has left of each window, as last read (Z.ai, MiniMax); null
    /// where the provider answers no window read, or none was read yet.
    pub windows: Option<KeyWindowsDto>,
    /// When the key expires, where it says (a short-term Amazon Bedrock key); null elsewhere.
    pub expires_at: Option<i64>,
}

/// A key's last plan-window reading: each window's span, share used and reset; or, with a
/// `problem`, why the read found nothing (the key stays as it was).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyWindows")]
pub struct KeyWindowsDto {
    pub read_at: i64,
    pub windows: Vec<keypool_llm::PlanWindow>,
    pub problem: Option<String>,
    pub status: Option<u16>,
}

impl From<keypool_store::balances::WindowsRow> for KeyWindowsDto {
    fn from(row: keypool_store::balances::WindowsRow) -> Self {
        let windows = serde_json::from_str(&row.windows).unwrap_or_default();
        KeyWindowsDto { read_at: row.read_at, windows, problem: row.problem, status: row.status }
    }
}

/// A key's last balance reading: `amount` in `currency`; both null and no `problem`: the key
/// has no spending limit; a `problem`: the read found nothing (the key stays as it was).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "KeyBalance")]
pub struct KeyBalanceDto {
    pub read_at: i64,
    pub amount: Option<f64>,
    /// ISO 4217 (`USD`, `CNY`).
    pub currency: Option<String>,
    /// The provider takes requests on it; false: the key rests as out of credit.
    pub usable: bool,
    /// Why nothing was read: the provider's words (masked) or what its answer lacked.
    pub problem: Option<String>,
    /// The answer's HTTP status, when one came.
    pub status: Option<u16>,
}

impl From<keypool_store::balances::BalanceRow> for KeyBalanceDto {
    fn from(row: keypool_store::balances::BalanceRow) -> Self {
        let (amount, currency) = row.amount.map_or((None, None), |(amount, currency)| (Some(amount), Some(currency)));
        KeyBalanceDto {
            read_at: row.read_at,
            amount,
            currency,
            usable: row.usable,
            problem: row.problem,
            status: row.status,
        }
    }
}

/// What a key (its quota group) has left for one model (or model class), as last announced:
/// e.g. 3 of 5 requests until `resetAt`. A window already reset, or never announced, is null.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Budget")]
pub struct BudgetDto {
    pub scope: String,
    pub requests: Option<WindowDto>,
    pub tokens: Option<WindowDto>,
    /// Requests in flight counted against the windows.
    pub reserved_requests: u32,
    /// The model rests after refusals of its per-minute quota, until then; the key's other
    /// models serve meanwhile.
    pub cooling_until: Option<i64>,
    /// The model's quota for the day is used up, until then (when the provider's day ends,
    /// midnight in Los Angeles for Gemini); back by itself then.
    pub used_up_until: Option<i64>,
}

/// A window of a budget: what is left of it, of how much, until when (milliseconds).
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

/// A key's last failure, with its English wording and when it came.
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
            quota_group: status.quota_group,
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
                    cooling_until: b.cooling_until.map(|t| t.as_millis()),
                    used_up_until: b.used_up_until.map(|t| t.as_millis()),
                })
                .collect(),
            in_flight: status.in_flight,
            next_probe_at: status.next_probe_at.map(|t| t.as_millis()),
            unset_var: None,
            balance: None,
            windows: None,
            expires_at: None,
        }
    }
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
    /// What the key may still spend, where the provider tells it (OpenRouter).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub credit: Option<keypool_llm::Credit>,
}

impl From<ProbeResult> for KeyTestResult {
    fn from(probe: ProbeResult) -> Self {
        KeyTestResult {
            ok: probe.ok,
            status: probe.status,
            problem: probe.problem.map(ProbeProblemDto::from),
            message: probe.message,
            latency_ms: probe.latency_ms,
            credit: probe.credit,
        }
    }
}

pub(super) fn list(ctx: &AppContext, args: ProviderArgs) -> Result<Vec<ApiKey>> {
    Ok(ctx.keys()?.list(&args.provider_id)?)
}

pub(super) fn add(ctx: &AppContext, args: AddApiKeyArgs) -> Result<Written<ApiKey>> {
    Ok(ctx.keys()?.add(args.into())?)
}

pub(super) fn update(ctx: &AppContext, args: UpdateApiKeyArgs) -> Result<Written<ApiKey>> {
    let id = args.id.clone();
    Ok(ctx.keys()?.update(&id, args.into())?)
}

pub(super) fn set_limits(ctx: &AppContext, args: SetKeyLimitsArgs) -> Result<Written<ApiKey>> {
    Ok(ctx.keys()?.set_limits(&args.id, (&args).into())?)
}

pub(super) fn delete(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<Written<DeletedKey>> {
    Ok(ctx.keys()?.delete(&id)?.map(|()| DeletedKey { id }))
}

pub(super) fn toggle(ctx: &AppContext, args: ToggleApiKeyArgs) -> Result<Written<ApiKey>> {
    Ok(ctx.keys()?.set_enabled(&args.id, args.enabled)?)
}

pub(super) fn reorder(ctx: &AppContext, args: ReorderApiKeysArgs) -> Result<Written<KeyList>> {
    Ok(ctx.keys()?.reorder(&args.provider_id, &args.ids)?.map(|keys| KeyList { keys }))
}

pub(super) fn pool_status(ctx: &AppContext, ProviderArgs { provider_id }: ProviderArgs) -> Result<PoolStatusDto> {
    let view = ctx.keys()?.pool_status(&provider_id)?;
    Ok(PoolStatusDto::new(provider_id, view))
}

pub(super) fn reset_cooldown(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<Written<CooldownReset>> {
    Ok(ctx.keys()?.reset_cooldown(&id)?.map(|()| CooldownReset { id }))
}

pub(super) async fn test(ctx: &AppContext, IdArgs { id }: IdArgs) -> Result<KeyTestResult> {
    Ok(ctx.keys()?.test(&id).await?.into())
}
