//! How a key stands, for the status view and for messages about unavailable keys.

use crate::announced::Window;
use crate::ids::KeyId;
use crate::time::Timestamp;

/// How a key stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyState {
    /// Enabled and not cooling: can be selected.
    Active,
    /// Enabled, but resting after rate limits until `cooling_until`.
    Cooling,
    /// Off: by hand in the store, or because the provider rejected it.
    Disabled,
    /// Out of credit: out of rotation until a background probe finds it usable again.
    Exhausted,
    /// Its value cannot be read now (kept in a keychain that is not reachable).
    Unavailable,
}

impl KeyState {
    /// The state as exports and the CLI write it: `active`, `cooling`, `disabled`, `exhausted`,
    /// `unavailable` (as the IPC's `KeyState` spells it).
    pub fn as_str(self) -> &'static str {
        match self {
            KeyState::Active => "active",
            KeyState::Cooling => "cooling",
            KeyState::Disabled => "disabled",
            KeyState::Exhausted => "exhausted",
            KeyState::Unavailable => "unavailable",
        }
    }
}

/// The last failure the pool saw for a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// HTTP 429 or 529.
    RateLimited {
        /// The status received.
        status: u16,
    },
    /// HTTP 401 or 403; the key was disabled.
    AuthRejected {
        /// The status received.
        status: u16,
    },
    /// Out of credit (insufficient quota, 402, credit balance too low).
    QuotaExhausted {
        /// The status received.
        status: u16,
    },
    /// The key's `$NAME` reference had no usable value when it was selected.
    UnresolvedEnv {
        /// The variable, without `$`.
        var: String,
    },
}

impl KeyError {
    /// The HTTP status, for the errors that came with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            KeyError::RateLimited { status }
            | KeyError::AuthRejected { status }
            | KeyError::QuotaExhausted { status } => Some(*status),
            KeyError::UnresolvedEnv { .. } => None,
        }
    }
}

/// One key's state and in-memory statistics (since the app started; not persisted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyStatus {
    /// The key.
    pub key_id: KeyId,
    /// Its label.
    pub label: Option<String>,
    /// Its weight as the pool uses it (clamped to 1–100).
    pub weight: u32,
    /// The quota group it shares rate limits with, as the user named it (`None`: its own).
    pub quota_group: Option<String>,
    /// Active, cooling or disabled, as of the `now` passed to [`crate::KeyPool::status`]. Cooling
    /// is its quota group's: every key of a group cools together.
    pub state: KeyState,
    /// When a running cooldown ends; `None` when not cooling.
    pub cooling_until: Option<Timestamp>,
    /// Rate limits in a row since the last success (drives the backoff), its group's.
    pub consecutive_errors: u32,
    /// The most recent failure.
    pub last_error: Option<KeyError>,
    /// When it happened.
    pub last_error_at: Option<Timestamp>,
    /// When a selection last handed the key out.
    pub last_used_at: Option<Timestamp>,
    /// How many selections handed the key out.
    pub request_count: u64,
    /// How many failures (429/529/401/403/402) were reported for it.
    pub failure_count: u64,
    /// What the provider last announced the key's group has left, per scope (model or model
    /// class), and which scopes rest or are used up for the day.
    pub budgets: Vec<BudgetStatus>,
    /// Requests using the key right now.
    pub in_flight: u32,
    /// When an out-of-credit key is probed next.
    pub next_probe_at: Option<Timestamp>,
}

/// The windows of one scope of a key's group, as last announced, with what requests in flight
/// reserve and whether the scope rests or is used up for the day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetStatus {
    /// The model or model class the windows apply to.
    pub scope: String,
    /// Requests: what is left, of how many, until when (`None` when never announced or already reset).
    pub requests: Option<Window>,
    /// Tokens, likewise.
    pub tokens: Option<Window>,
    /// Requests in flight counted against the windows (on every key of the group).
    pub reserved_requests: u32,
    /// The scope rests after refusals of its per-minute quota, until then.
    pub cooling_until: Option<Timestamp>,
    /// The scope's quota for the day is used up, until then (when the quota's day ends).
    pub used_up_until: Option<Timestamp>,
}
