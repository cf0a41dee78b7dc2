//! One member of a team: its connection, what it knows of the others, its own requests in flight,
//! and the tasks that keep it in step.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use keypool::{Clock, KeyPool, SecretResolver};
use keypool_llm::Recorder;
use parking_lot::{Mutex, RwLock};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use crate::layout::Names;
use crate::shared::Shared;
use crate::{TeamConfig, TeamError, TeamState, TeamStatus};

/// A member's link to its team: what the completion service is given as its
/// [`keypool_llm::TeamLink`]. Dropping it (or [`Team::stop`]) ends its tasks.
pub struct Team {
    pub(crate) shared: Arc<Shared>,
    stop: CancellationToken,
}

/// Whether `name` can name a team: only what can sit inside `{keypool:…}` without ending the hash
/// tag or breaking a SCAN pattern (1 to 64 of `A-Z a-z 0-9 . _ -`). The one rule the server and
/// the app check names by.
pub fn valid_team(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The client for `url`, speaking RESP3 (pushes for the channel) with Nagle off (small writes
/// would wait ~40 ms for acknowledgements otherwise).
fn client(url: &str) -> Result<redis::Client, TeamError> {
    let scheme_ok = url.starts_with("redis://") || url.starts_with("rediss://");
    if !scheme_ok {
        return Err(TeamError::BadUrl { reason: "the scheme is neither redis nor rediss".into() });
    }
    let info = redis::IntoConnectionInfo::into_connection_info(url)
        .map_err(|_| TeamError::BadUrl { reason: "it cannot be read as a Redis address".into() })?;
    let redis_settings = info.redis_settings().clone().set_protocol(redis::ProtocolVersion::RESP3);
    let tcp = info.tcp_settings().clone().set_nodelay(true);
    let info = info.set_redis_settings(redis_settings).set_tcp_settings(tcp);
    redis::Client::open(info).map_err(|_| TeamError::BadUrl { reason: "the client refused it".into() })
}

/// Whether `url` is a Redis URL a member can use (`redis://` or `rediss://`, readable as a Redis
/// address), without connecting: the one check the server and the app validate URLs by. The
/// error never holds the URL.
pub fn check_url(url: &str) -> Result<(), TeamError> {
    client(url).map(drop)
}

impl Team {
    /// Joins the team `config` names with `pool` (whose keys `resolver` reads), on `clock`;
    /// `recorder` persists what other members decided (a disable, an enable). Starts the member's
    /// tasks on the current tokio runtime and returns at once: the connection is made in the
    /// background, and until it is the member decides alone.
    pub fn start(
        config: TeamConfig,
        pool: Arc<KeyPool>,
        resolver: Arc<dyn SecretResolver>,
        clock: Arc<dyn Clock>,
        recorder: Arc<dyn Recorder>,
    ) -> Result<Arc<Team>, TeamError> {
        if !valid_team(&config.team) {
            return Err(TeamError::BadName);
        }
        let client = client(&config.url)?;
        let (pushes, pushed) = mpsc::unbounded_channel();
        let manager = ConnectionManagerConfig::new()
            .set_push_sender(pushes)
            .set_automatic_resubscription()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(200));
        let conn = ConnectionManager::new_lazy_with_config(client, manager)
            .map_err(|_| TeamError::BadUrl { reason: "the client refused it".into() })?;
        let (writes, queue) = mpsc::unbounded_channel();
        let mut member = [0u8; 8];
        getrandom::fill(&mut member).expect("the operating system provides randomness");
        let shared = Arc::new(Shared {
            names: Names::new(&config.team),
            member: member.iter().map(|b| format!("{b:02x}")).collect(),
            secret: config.secret.for_team(&config.team),
            pool,
            resolver,
            clock,
            recorder,
            wake: Mutex::new(None),
            conn,
            request_timeout: config.request_timeout,
            heartbeat: config.heartbeat,
            connected: AtomicBool::new(false),
            lost: Notify::new(),
            stopped: AtomicBool::new(false),
            seen: Mutex::default(),
            directory: RwLock::default(),
            own: Mutex::default(),
            mirror: Mutex::default(),
            sessions: Mutex::default(),
            scope_ids: Mutex::default(),
            writes,
            queued: AtomicUsize::new(0),
            backlog: Mutex::default(),
            told: Mutex::default(),
            admissions: Default::default(),
        });
        let stop = CancellationToken::new();
        tokio::spawn(crate::sync::supervise(shared.clone(), stop.clone()));
        tokio::spawn(crate::sync::write(shared.clone(), queue, stop.clone()));
        tokio::spawn(crate::sync::receive(shared.clone(), pushed, stop.clone()));
        tracing::info!(team = %config.team, member = %shared.member, "team: joining");
        Ok(Arc::new(Team { shared, stop }))
    }

    /// How the member stands with its team.
    pub fn status(&self) -> TeamStatus {
        let shared = &self.shared;
        let seen = shared.seen.lock();
        let state = if shared.stopped.load(Ordering::Acquire) {
            TeamState::Off
        } else if shared.connected.load(Ordering::Acquire) {
            TeamState::Connected
        } else {
            TeamState::Disconnected
        };
        let members = if state == TeamState::Connected { seen.members.max(1) } else { 0 };
        TeamStatus { state, members, last_change: seen.last_change, connects: seen.connects }
    }

    /// How the team's side of this member's hand-outs went since it joined, per path.
    pub fn admissions(&self) -> crate::AdmissionCounts {
        self.shared.admissions.counts()
    }

    /// This member's id in the team (random per start; for diagnostics).
    pub fn member(&self) -> &str {
        &self.shared.member
    }

    /// Leaves the team: the member's tasks end and it decides alone from now on.
    pub fn stop(&self) {
        self.shared.stopped.store(true, Ordering::Release);
        self.shared.connected.store(false, Ordering::Release);
        self.stop.cancel();
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.stop();
    }
}
