//! `team:*`: this app as one member of a team sharing the pool's state through Redis
//! (Settings → Team).

use garde::Validate;
use keypool_team::TeamSecret;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::args::{CommandArgs, NoArgs};
use super::error::IpcError;
use super::issues::{coded, coded_with, IssueCode};
use super::limits::LIMITS;
use crate::service::{SecretPlace, TeamDown, TeamJoin, TeamPhase, TeamView};
use crate::AppContext;

/// The team to join: its Redis, its name, and the team secret (64 hex digits; leave it out to
/// use the one kept from before).
#[derive(Deserialize, Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct ConnectTeamArgs {
    #[garde(length(chars, max = LIMITS.redis_url.max_chars), custom(redis_url_rule))]
    pub redis_url: String,
    #[garde(custom(team_name_rule))]
    pub team: String,
    #[serde(default)]
    #[garde(custom(team_secret_rule))]
    pub secret: Option<String>,
}

/// Never prints the URL (it may hold a password) or the secret.
impl std::fmt::Debug for ConnectTeamArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectTeamArgs").field("team", &self.team).finish_non_exhaustive()
    }
}

impl CommandArgs for ConnectTeamArgs {}

/// `redis://` or `rediss://`, readable as a Redis address: the team crate's own check.
fn redis_url_rule(value: &str, _: &()) -> garde::Result {
    keypool_team::check_url(value.trim()).map_err(|_| garde::Error::new(coded(IssueCode::BadRedisUrl)))
}

/// The name rule the server checks `--team` by.
fn team_name_rule(value: &str, _: &()) -> garde::Result {
    if keypool_team::valid_team(value) {
        return Ok(());
    }
    Err(garde::Error::new(coded(IssueCode::BadTeamName)))
}

fn team_secret_rule(value: &Option<String>, _: &()) -> garde::Result {
    let Some(text) = value else { return Ok(()) };
    TeamSecret::parse(text)
        .map(drop)
        .map_err(|bad| garde::Error::new(coded_with(IssueCode::BadTeamSecret, &[("count", &bad.found)])))
}

/// Where the team stands: `off`, `connecting`, `connected`, or `disconnected` with a reason
/// (the service's phase, whose disconnected variant holds the reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TeamState")]
pub enum TeamStateDto {
    Off,
    Connecting,
    Connected,
    Disconnected,
}

/// Why a team that is on is disconnected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TeamReason {
    /// Redis was never reached since connecting.
    Unreachable,
    /// Redis answered before and stopped; the app reconnects with backoff.
    Lost,
    /// The team is on, but its secret could not be read from the keychain at start.
    SecretMissing,
}

/// How this app stands with its team. Never holds the secret or the URL's password. A view of
/// its own: the service's phase is a state and a reason here, its times milliseconds.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TeamStatus")]
pub struct TeamStatusDto {
    pub state: TeamStateDto,
    /// Why it is disconnected.
    pub reason: Option<TeamReason>,
    /// The Redis URL as kept: without its password.
    pub redis_url: Option<String>,
    /// The URL has a password, kept beside the secret.
    pub has_password: bool,
    pub team: Option<String>,
    /// Members seen in the last minute, this one included (0 unless connected).
    pub members: u32,
    /// When a change from another member was last received (ms since the epoch).
    pub last_change_at: Option<i64>,
    /// When the app last connected or disconnected (ms since the epoch).
    pub since: Option<i64>,
    pub secret: SecretPlace,
}

impl From<TeamView> for TeamStatusDto {
    fn from(view: TeamView) -> Self {
        let (state, reason) = match view.phase {
            TeamPhase::Off => (TeamStateDto::Off, None),
            TeamPhase::Connecting => (TeamStateDto::Connecting, None),
            TeamPhase::Connected => (TeamStateDto::Connected, None),
            TeamPhase::Disconnected(down) => (
                TeamStateDto::Disconnected,
                Some(match down {
                    TeamDown::Unreachable => TeamReason::Unreachable,
                    TeamDown::Lost => TeamReason::Lost,
                    TeamDown::SecretMissing => TeamReason::SecretMissing,
                }),
            ),
        };
        TeamStatusDto {
            state,
            reason,
            redis_url: view.redis_url,
            has_password: view.has_password,
            team: view.team,
            members: u32::try_from(view.members).unwrap_or(u32::MAX),
            last_change_at: view.last_change.map(|t| t.as_millis()),
            since: view.since.map(|t| t.as_millis()),
            secret: view.secret,
        }
    }
}

/// A new team secret, shown this once: copy it to the other members, then connect with it.
/// Nothing is kept until `team:connect`. Composed here from the team crate's secret, as hex.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TeamSecret")]
pub struct TeamSecretDto {
    pub secret: String,
}

pub(super) fn status(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<TeamStatusDto, IpcError> {
    Ok(ctx.team()?.status()?.into())
}

pub(super) async fn connect(ctx: &AppContext, args: ConnectTeamArgs) -> Result<TeamStatusDto, IpcError> {
    let ConnectTeamArgs { redis_url, team, secret } = args;
    Ok(ctx.team()?.connect(TeamJoin { redis_url, team, secret }).await?.into())
}

pub(super) async fn disconnect(ctx: &AppContext, NoArgs {}: NoArgs) -> Result<TeamStatusDto, IpcError> {
    Ok(ctx.team()?.disconnect().await?.into())
}

pub(super) fn generate_secret(_: &AppContext, NoArgs {}: NoArgs) -> Result<TeamSecretDto, IpcError> {
    Ok(TeamSecretDto { secret: TeamSecret::generate().to_hex() })
}
