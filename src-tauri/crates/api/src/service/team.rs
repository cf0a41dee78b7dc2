//! The team: this app as one member of a team whose pools share their state through Redis
//! (`keypool-team`), joined and left while the app runs (Settings → Team).
//!
//! Where things live: whether the team is on, the Redis URL without its password and the team's
//! name in the database's settings (`team.*`); the team secret and the URL's password in the
//! keychain (accounts `team:secret`, `team:redisPassword`), never in the database, a log line or
//! an error. Without a keychain they are held in memory for this run only: the team is then not
//! joined again at the next start, and the status says why.
//!
//! Invariants:
//! - Bad input changes nothing: everything is checked, and the member started, before anything
//!   is stored or the current team is left.
//! - The completion service sees the current team through its swappable slot
//!   ([`CompletionService::set_team`]); the team replaced is stopped after the swap.
//! - Nothing this module says (status, errors) holds the URL's password or the secret.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use keypool::{Clock, KeyPool, Secret, SecretResolver, Timestamp};
use keypool_llm::CompletionService;
use keypool_store::{settings, Database};
use keypool_team::{Team, TeamConfig, TeamSecret, TeamState};
use percent_encoding::percent_decode_str;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::vault::TEAM_ACCOUNT_PREFIX;
use super::{EventSink, KeychainState, Records, Vault};
use crate::service::error::{Result, ServiceError};
use crate::service::problem::Rule;

const ENABLED: &str = "team.enabled";
const REDIS_URL: &str = "team.redisUrl";
const NAME: &str = "team.name";

/// How long a member that has not reached Redis yet counts as connecting (then: unreachable).
pub const CONNECTING_GRACE: Duration = Duration::from_secs(10);
/// How often the status is looked at, to tell the UI when it changed.
const WATCH_EVERY: Duration = Duration::from_millis(250);

fn secret_account() -> String {
    format!("{TEAM_ACCOUNT_PREFIX}secret")
}

fn password_account() -> String {
    format!("{TEAM_ACCOUNT_PREFIX}redisPassword")
}

/// Where the team's phase stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamPhase {
    /// Not a member of a team.
    Off,
    /// Joined, Redis not reached yet.
    Connecting,
    /// Redis answers; changes travel both ways.
    Connected,
    /// On, but deciding alone: [`TeamDown`] says why.
    Disconnected(TeamDown),
}

/// Why a team that is on is disconnected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamDown {
    /// Redis was never reached since joining (wrong address, down, refusing).
    Unreachable,
    /// Redis answered before and stopped; the member reconnects with backoff.
    Lost,
    /// The team is on but its secret could not be read at start (no keychain, or no entry).
    SecretMissing,
}

/// Where the team secret is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TeamSecretPlace")]
pub enum SecretPlace {
    Keychain,
    /// In memory for this run only: there is no keychain, so the team is not joined again at
    /// the next start.
    Memory,
    None,
}

/// How this app stands with its team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamView {
    pub phase: TeamPhase,
    /// The Redis URL as stored: without its password.
    pub redis_url: Option<String>,
    /// Whether the URL has a password (kept beside the secret).
    pub has_password: bool,
    pub team: Option<String>,
    /// Members seen in the last minute, this one included (0 unless connected).
    pub members: usize,
    /// When a change from another member was last received.
    pub last_change: Option<Timestamp>,
    /// When the phase was last entered by connecting or disconnecting.
    pub since: Option<Timestamp>,
    pub secret: SecretPlace,
}

/// What to join.
#[derive(Debug, Clone)]
pub struct TeamJoin {
    /// `redis://…` or `rediss://…`, perhaps with a password.
    pub redis_url: String,
    pub team: String,
    /// 64 hex digits; `None`: the one kept from before.
    pub secret: Option<String>,
}

/// The team joined now.
struct Joined {
    team: Arc<Team>,
    at: Timestamp,
    /// Stops the status watcher with the membership.
    _watch: DropGuard,
}

/// The app's membership of a team.
pub struct Membership {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
    vault: Arc<Vault>,
    completions: CompletionService,
    pool: Arc<KeyPool>,
    resolver: Arc<dyn SecretResolver>,
    records: Arc<Records>,
    events: Arc<dyn EventSink>,
    joined: Mutex<Option<Joined>>,
    /// The team is on but could not be joined at start: since when.
    missing: Mutex<Option<Timestamp>>,
    /// When the team was last left.
    left_at: Mutex<Option<Timestamp>>,
    /// The secret and password of this run, when there is no keychain to keep them.
    in_memory: Mutex<Option<(Secret, Option<Secret>)>>,
    /// Held by every join and leave, so each sees the others whole.
    changing: tokio::sync::Mutex<()>,
}

/// `url` split into the URL without its password, and the password.
fn split_password(url: &str) -> Result<(String, Option<Secret>)> {
    let mut parsed = url::Url::parse(url.trim()).map_err(|_| ServiceError::invalid("redis_url", Rule::BadRedisUrl))?;
    let password = parsed.password().map(|p| Secret::new(percent_decode_str(p).decode_utf8_lossy().into_owned()));
    parsed.set_password(None).map_err(|_| ServiceError::invalid("redis_url", Rule::BadRedisUrl))?;
    Ok((parsed.to_string(), password))
}

/// `url` (without a password) with `password` put back.
fn with_password(url: &str, password: Option<&Secret>) -> Result<String> {
    let Some(password) = password else { return Ok(url.to_owned()) };
    let mut parsed = url::Url::parse(url).map_err(|_| ServiceError::invalid("redis_url", Rule::BadRedisUrl))?;
    parsed.set_password(Some(password.expose())).map_err(|_| ServiceError::invalid("redis_url", Rule::BadRedisUrl))?;
    Ok(parsed.to_string())
}

impl Membership {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        db: Arc<Database>,
        clock: Arc<dyn Clock>,
        vault: Arc<Vault>,
        completions: CompletionService,
        pool: Arc<KeyPool>,
        resolver: Arc<dyn SecretResolver>,
        records: Arc<Records>,
        events: Arc<dyn EventSink>,
    ) -> Self {
        Membership {
            db,
            clock,
            vault,
            completions,
            pool,
            resolver,
            records,
            events,
            joined: Mutex::new(None),
            missing: Mutex::new(None),
            left_at: Mutex::new(None),
            in_memory: Mutex::new(None),
            changing: tokio::sync::Mutex::new(()),
        }
    }

    fn stored<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let json = settings::get(&*self.db.lock()?, key)?;
        Ok(json.and_then(|json| serde_json::from_str(&json).ok()))
    }

    fn store(&self, key: &str, value: impl serde::Serialize) -> Result<()> {
        let json = serde_json::to_string(&value).expect("settings serialize");
        Ok(settings::set(&*self.db.lock()?, key, &json, self.clock.now().as_millis())?)
    }

    /// The kept secret and password: from the keychain, or this run's memory.
    fn kept(&self) -> Result<(Option<Secret>, Option<Secret>, SecretPlace)> {
        if let Some((secret, password)) = self.in_memory.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok((Some(secret), password, SecretPlace::Memory));
        }
        let secret = self.vault.read_keychain(&secret_account()).map_err(ServiceError::Keychain)?;
        let password = self.vault.read_keychain(&password_account()).map_err(ServiceError::Keychain)?;
        let place = if secret.is_some() { SecretPlace::Keychain } else { SecretPlace::None };
        Ok((secret, password, place))
    }

    /// How the app stands with its team.
    pub fn status(&self) -> Result<TeamView> {
        let redis_url = self.stored::<String>(REDIS_URL)?;
        let team = self.stored::<String>(NAME)?;
        // Never joined: nothing kept to look for (the keychain is not asked at every poll).
        let (_, password, secret) = match redis_url {
            Some(_) => self.kept().unwrap_or((None, None, SecretPlace::None)),
            None => (None, None, SecretPlace::None),
        };
        let now = self.clock.now();
        let joined = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        let (phase, members, last_change, since) = match joined.as_ref() {
            Some(joined) => {
                let status = joined.team.status();
                let phase = match status.state {
                    TeamState::Connected => TeamPhase::Connected,
                    TeamState::Off => TeamPhase::Off,
                    TeamState::Disconnected if status.connects > 0 => TeamPhase::Disconnected(TeamDown::Lost),
                    TeamState::Disconnected if now.saturating_duration_since(joined.at) < CONNECTING_GRACE => {
                        TeamPhase::Connecting
                    }
                    TeamState::Disconnected => TeamPhase::Disconnected(TeamDown::Unreachable),
                };
                (phase, status.members, status.last_change, Some(joined.at))
            }
            None => match *self.missing.lock().unwrap_or_else(|e| e.into_inner()) {
                Some(at) => (TeamPhase::Disconnected(TeamDown::SecretMissing), 0, None, Some(at)),
                None => (TeamPhase::Off, 0, None, *self.left_at.lock().unwrap_or_else(|e| e.into_inner())),
            },
        };
        Ok(TeamView { phase, redis_url, has_password: password.is_some(), team, members, last_change, since, secret })
    }

    /// Joins the team `join` names (leaving the current one), and keeps the choice: the URL
    /// without its password and the name in the database, the secret and the password in the
    /// keychain (in memory without one). A join without a secret uses the kept one; a URL
    /// without a password that is the kept URL uses the kept password. Must run on the Tokio
    /// runtime the member is to run on.
    pub async fn connect(&self, join: TeamJoin) -> Result<TeamView> {
        let _changing = self.changing.lock().await;
        let url = join.redis_url.trim();
        keypool_team::check_url(url).map_err(|_| ServiceError::invalid("redis_url", Rule::BadRedisUrl))?;
        if !keypool_team::valid_team(&join.team) {
            return Err(ServiceError::invalid("team", Rule::BadTeamName));
        }
        let (kept_secret, kept_password, _) = self.kept()?;
        let secret = match &join.secret {
            Some(text) => TeamSecret::parse(text)
                .map_err(|bad| ServiceError::invalid("secret", Rule::BadTeamSecret { found: bad.found }))?,
            None => {
                let kept = kept_secret.ok_or_else(|| ServiceError::invalid("secret", Rule::TeamSecretRequired))?;
                TeamSecret::parse(kept.expose())
                    .map_err(|_| ServiceError::invalid("secret", Rule::TeamSecretRequired))?
            }
        };
        let (bare_url, given_password) = split_password(url)?;
        let same_url = self.stored::<String>(REDIS_URL)?.as_deref() == Some(bare_url.as_str());
        let password = given_password.or(if same_url { kept_password } else { None });
        let full_url = with_password(&bare_url, password.as_ref())?;
        let config = TeamConfig::new(full_url, join.team.clone(), secret.clone());
        let team = Team::start(
            config,
            self.pool.clone(),
            self.resolver.clone(),
            self.clock.clone(),
            self.records.clone() as Arc<dyn keypool_llm::Recorder>,
        )
        .map_err(|error| match error {
            keypool_team::TeamError::BadName => ServiceError::invalid("team", Rule::BadTeamName),
            keypool_team::TeamError::BadUrl { .. } => ServiceError::invalid("redis_url", Rule::BadRedisUrl),
        })?;
        if let Err(error) = self.keep(&secret, password.as_ref()) {
            team.stop();
            return Err(error);
        }
        self.store(REDIS_URL, &bare_url)?;
        self.store(NAME, &join.team)?;
        self.store(ENABLED, true)?;
        self.swap_in(team);
        tracing::info!(team = %join.team, "team: joined from Settings");
        self.events.team_changed();
        self.status()
    }

    /// Keeps the secret and the password: in the keychain when there is one, else in memory.
    fn keep(&self, secret: &TeamSecret, password: Option<&Secret>) -> Result<()> {
        let hex = Secret::new(secret.to_hex());
        if self.vault.state() != KeychainState::Available {
            *self.in_memory.lock().unwrap_or_else(|e| e.into_inner()) = Some((hex, password.cloned()));
            return Ok(());
        }
        self.vault.keep_in_keychain(&secret_account(), &hex).map_err(ServiceError::Keychain)?;
        match password {
            Some(password) => {
                self.vault.keep_in_keychain(&password_account(), password).map_err(ServiceError::Keychain)?
            }
            None => self.vault.forget(&password_account()),
        }
        *self.in_memory.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    /// Makes `team` the current one: the completion service's slot first, then the old team
    /// stopped, and a watcher that tells the UI when the status changes.
    fn swap_in(&self, team: Arc<Team>) {
        let stop = CancellationToken::new();
        tokio::spawn(watch(team.clone(), self.events.clone(), stop.clone()));
        let joined = Joined { team: team.clone(), at: self.clock.now(), _watch: stop.drop_guard() };
        self.completions.set_team(Some(team));
        let old = self.joined.lock().unwrap_or_else(|e| e.into_inner()).replace(joined);
        *self.missing.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(old) = old {
            old.team.stop();
        }
    }

    /// Leaves the team: the pool is this app's own from now on (what it learned from the team
    /// stays), and the team is not joined at the next start. The URL, the name and the secret
    /// are kept, to connect again.
    pub async fn disconnect(&self) -> Result<TeamView> {
        let _changing = self.changing.lock().await;
        self.store(ENABLED, false)?;
        self.completions.set_team(None);
        if let Some(old) = self.joined.lock().unwrap_or_else(|e| e.into_inner()).take() {
            old.team.stop();
        }
        *self.missing.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *self.left_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(self.clock.now());
        tracing::info!("team: left from Settings");
        self.events.team_changed();
        self.status()
    }

    /// At app start: joins the team again if it was on when the app last ran, with the secret
    /// the keychain keeps. Must run on the Tokio runtime the member is to run on.
    pub async fn start_if_enabled(&self) -> Result<TeamView> {
        if !self.stored::<bool>(ENABLED)?.unwrap_or(false) {
            return self.status();
        }
        let (Some(url), Some(team)) = (self.stored::<String>(REDIS_URL)?, self.stored::<String>(NAME)?) else {
            return self.status();
        };
        let kept = self.kept();
        let (secret, password) = match kept {
            Ok((Some(secret), password, _)) => (secret, password),
            other => {
                if let Err(error) = other {
                    tracing::warn!(%error, "team: the secret cannot be read; not joining");
                } else {
                    tracing::warn!("team: no team secret is kept; not joining");
                }
                *self.missing.lock().unwrap_or_else(|e| e.into_inner()) = Some(self.clock.now());
                return self.status();
            }
        };
        let full_url = with_password(&url, password.as_ref())?;
        let join = TeamJoin { redis_url: full_url, team, secret: Some(secret.expose().to_owned()) };
        self.connect(join).await
    }

    /// Joins the team `config` names for this run without keeping anything (a server's
    /// `--redis`/`--team` flags). Must run on the Tokio runtime the member is to run on.
    pub fn join_for_this_run(&self, config: TeamConfig) -> std::result::Result<(), keypool_team::TeamError> {
        let team = Team::start(
            config,
            self.pool.clone(),
            self.resolver.clone(),
            self.clock.clone(),
            self.records.clone() as Arc<dyn keypool_llm::Recorder>,
        )?;
        self.swap_in(team);
        Ok(())
    }

    /// The team joined now, if any (a server's members are counted through it).
    pub fn joined(&self) -> Option<Arc<Team>> {
        self.joined.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|joined| joined.team.clone())
    }

    /// The team's own state (`off` without one), as `/healthz` says it.
    pub fn state(&self) -> TeamState {
        match self.joined.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(joined) => joined.team.status().state,
            None => TeamState::Off,
        }
    }

    /// Stops the member (the app is closing).
    pub fn stop(&self) {
        if let Some(joined) = self.joined.lock().unwrap_or_else(|e| e.into_inner()).take() {
            joined.team.stop();
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Tells the UI (`team:changed`) whenever `team`'s state or members change, until `stop`.
async fn watch(team: Arc<Team>, events: Arc<dyn EventSink>, stop: CancellationToken) {
    let mut last = None;
    loop {
        let status = team.status();
        let now = Some((status.state, status.members, status.connects));
        if last.is_some() && now != last {
            events.team_changed();
        }
        last = now;
        tokio::select! {
            _ = tokio::time::sleep(WATCH_EVERY) => {}
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_split_from_its_password_and_joined_again() {
        let (bare, password) = split_password("redis://user:p%40ss@127.0.0.1:6379/2").unwrap();
        assert_eq!(bare, "redis://user@127.0.0.1:6379/2", "the stored URL holds no password");
        assert_eq!(password.as_ref().map(Secret::expose), Some("p@ss"), "the password is decoded");
        let again = with_password(&bare, password.as_ref()).unwrap();
        assert_eq!(split_password(&again).unwrap().1.map(|p| p.expose().to_owned()).as_deref(), Some("p@ss"));
        let (bare, none) = split_password("rediss://cache.example:6380").unwrap();
        assert!(none.is_none(), "no password, none kept");
        assert_eq!(bare, "rediss://cache.example:6380", "the URL stays as given");
    }
}
