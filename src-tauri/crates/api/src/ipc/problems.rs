//! Why something could not be done, in the words several domains share: where API keys are
//! kept and why not the keychain, why asking a provider failed, how a connection broke.

use keypool_llm::ProbeProblem;
use serde::Serialize;
use ts_rs::TS;

use crate::service::{BreakageKind, KeychainProblem, KeychainState};

/// Whether API keys go to the operating system's keychain, and if not, why: the UI shows a
/// notice in the user's language from `reason`; `detail` is the system's own words. A view of
/// its own: the service's problem carries its detail in each variant, here a reason and a
/// detail apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[ts(rename = "KeychainStatus")]
pub enum KeychainStatusDto {
    Available,
    Unavailable {
        reason: KeychainReason,
        #[ts(optional)]
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum KeychainReason {
    /// Started without one (a tool, not the app).
    NotConfigured,
    /// No D-Bus session or no Secret Service (Linux), or no keychain on this platform.
    Unreachable,
    /// Locked, or access refused.
    Locked,
    /// It answered with an error.
    Failed,
}

impl From<&KeychainState> for KeychainStatusDto {
    fn from(state: &KeychainState) -> Self {
        let (reason, detail) = match state {
            KeychainState::Available => return KeychainStatusDto::Available,
            KeychainState::Unavailable(KeychainProblem::NotConfigured) => (KeychainReason::NotConfigured, None),
            KeychainState::Unavailable(KeychainProblem::Unreachable(d)) => (KeychainReason::Unreachable, Some(d)),
            KeychainState::Unavailable(KeychainProblem::Locked(d)) => (KeychainReason::Locked, Some(d)),
            KeychainState::Unavailable(KeychainProblem::Failed(d)) => (KeychainReason::Failed, Some(d)),
        };
        KeychainStatusDto::Unavailable { reason, detail: detail.cloned() }
    }
}

/// Why asking a provider (a key test, a model list) failed. A view of its own: keypool-llm's
/// problem holds its breakage as the client saw it, named here as a `BreakageKind`.
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
            ProbeProblem::Unreachable(breakage) => {
                ProbeProblemDto::Unreachable { breakage: BreakageKind::from(breakage) }
            }
            ProbeProblem::Unreadable => ProbeProblemDto::Unreadable,
            ProbeProblem::OutOfCredit => ProbeProblemDto::OutOfCredit,
        }
    }
}
