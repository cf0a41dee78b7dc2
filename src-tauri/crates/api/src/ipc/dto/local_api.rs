//! What the `localApi:*` commands return.

use keypool_gateway::StartError;
use serde::Serialize;
use ts_rs::TS;

use crate::service::LocalApiStatus;

/// The local API: whether it is on and up, where, and what it served since it started.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiStatus")]
pub struct LocalApiStatusDto {
    pub enabled: bool,
    pub running: bool,
    /// `http://127.0.0.1:PORT` while running; the base URL for OpenAI SDKs is this plus `/v1`.
    pub address: Option<String>,
    pub port: u16,
    /// Requests received, answering now, and answered with an error, since it started.
    pub requests: u64,
    pub in_flight: u64,
    pub failed: u64,
    /// Why it is enabled but not running.
    pub error: Option<LocalApiProblem>,
}

/// Why the local API could not start.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum LocalApiProblem {
    /// Another program listens on the port: choose another.
    PortInUse { port: u16 },
    /// The system refused to listen (`reason` in its words).
    Bind { port: u16, reason: String },
}

impl From<LocalApiStatus> for LocalApiStatusDto {
    fn from(status: LocalApiStatus) -> Self {
        LocalApiStatusDto {
            enabled: status.enabled,
            running: status.running,
            address: status.address,
            port: status.port,
            requests: status.stats.requests,
            in_flight: status.stats.in_flight,
            failed: status.stats.failed,
            error: status.error.map(|error| match error {
                StartError::PortInUse(port) => LocalApiProblem::PortInUse { port },
                StartError::Bind { port, reason } => LocalApiProblem::Bind { port, reason },
                // Only a server listens on an address of its own; the app's endpoint is loopback.
                StartError::Listen { address, reason } => LocalApiProblem::Bind { port: address.port(), reason },
            }),
        }
    }
}

/// The status after `localApi:configure`; `token` only the first time the endpoint is enabled
/// (it is never shown again: `localApi:regenerateToken` makes a new one).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiConfigured")]
pub struct LocalApiConfiguredDto {
    #[serde(flatten)]
    pub status: LocalApiStatusDto,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token: Option<String>,
}

/// A new local API token, shown this once.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "LocalApiToken")]
pub struct LocalApiTokenDto {
    pub token: String,
}
