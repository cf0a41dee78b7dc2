//! The completion service: pooled keys, failover, cooldowns, auth disabling.

use std::sync::Arc;

use keypool::{Clock, DisableReason, FailureKind, KeyId, KeyPool, ProviderId, Secret, SecretResolver, Timestamp};
use tokio::sync::Notify;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::http::{Connections, HttpClients, ProxyChoice, ProxyError};
use crate::probe::Verifications;
use crate::provider::ProviderEndpoint;
use crate::provider_clock::ProviderClocks;
use crate::record::AttemptRecord;
use crate::redact::Redactor;
use crate::stream::Deadlines;
use crate::team::TeamLink;
use crate::wait::Waiter;
use arc_swap::ArcSwapOption;

/// What the caller (the chat page) is told while a reply is produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionEvent {
    /// An attempt is about to be sent with this key. `rebound`: the chat moved to another key
    /// than the one it had (the provider's prompt cache starts cold).
    /// `keyless`: sent without a key (the pool is empty, the provider has no key of its own).
    KeySelected {
        key_id: Option<KeyId>,
        key_label: Arc<str>,
        provider_level: bool,
        keyless: bool,
        rebound: bool,
        attempt: u32,
    },
    /// The attempt was refused in a way the pool handles; the next key is tried at once.
    Failover { key_label: String, status: u16, reason: FailureKind, message: String },
    /// More text of the reply.
    Delta { text: String },
    /// Every key is spent, cooling or busy: the request waits until `until` (when a key frees
    /// up by itself), or until a request in flight ends (`until: None`), at most until
    /// `deadline`. `now` is the service's clock, for the countdown.
    Waiting { until: Option<Timestamp>, deadline: Timestamp, now: Timestamp },
}

/// Where the service records the pool's decisions that must outlive the process. The pool has
/// already acted on them in memory; the recorder persists them (the app's write path).
pub trait Recorder: Send + Sync {
    /// The provider rejected `key`: disable it in the store, with `reason`, at `at`.
    fn key_disabled(&self, provider: &ProviderId, key: &KeyId, reason: DisableReason, at: Timestamp);

    /// An upstream attempt ended, for the usage ledger. Called on the request's task: an
    /// implementation must hand the record off, not write it there.
    fn attempt(&self, record: AttemptRecord);

    /// A read of `key`'s balance found nothing left: the pool rests it as out of credit. (A
    /// request's 402 is told as its attempt's record, [`AttemptOutcome::QuotaExhausted`].)
    ///
    /// [`AttemptOutcome::QuotaExhausted`]: crate::AttemptOutcome::QuotaExhausted
    fn key_out_of_credit(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        let _ = (provider, key, at);
    }

    /// A coding plan's window of `key` is used up (a refusal named its reset, or a read showed
    /// it): the key rests until `until`. Told at each such refusal; telling once is the
    /// listener's business.
    fn key_window_used_up(&self, provider: &ProviderId, key: &KeyId, until: Timestamp, now: Timestamp) {
        let _ = (provider, key, until, now);
    }

    /// `key` expires at `expires_at`, within a week of `now` (or already did): tell whoever
    /// should hear it. Called each minute while it is so; telling once is the listener's business.
    fn key_expiring(&self, provider: &ProviderId, key: &KeyId, expires_at: Timestamp, now: Timestamp) {
        let _ = (provider, key, expires_at, now);
    }

    /// A member of the team enabled `key` again after a provider's rejection, and stamped it
    /// `at`: enable it in the store if the store disabled it because the provider rejected it (a
    /// key the user switched off stays off), and keep `at` as the key's [`Recorder::enabled_at`]
    /// (the later stamp wins). Only a team link calls it; without a team there is nothing to do.
    fn key_enabled(&self, provider: &ProviderId, key: &KeyId, at: Timestamp) {
        let _ = (provider, key, at);
    }

    /// When `key` was last enabled again after being switched off (by the user here, or by a
    /// member of the team: that member's stamp), as kept across restarts; `None`: never. A team
    /// believes no rejection of the key made before then, so an old one written again into Redis
    /// does not switch the key off.
    fn enabled_at(&self, key: &KeyId) -> Option<Timestamp> {
        let _ = key;
        None
    }
}

/// Sends chat completions with pooled keys. Cheap to clone; share one per app.
#[derive(Clone)]
pub struct CompletionService {
    /// The HTTP clients, rebuilt when the user chooses another proxy.
    pub(crate) http: Connections,
    pub(crate) pool: Arc<KeyPool>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) resolver: Arc<dyn SecretResolver>,
    pub(crate) recorder: Arc<dyn Recorder>,
    pub(crate) waiter: Arc<dyn Waiter>,
    /// Notified whenever an attempt ends: a request waiting for a busy key may find room.
    pub(crate) freed: Arc<Notify>,
    /// Providers that refused `stream_options` (some OpenAI-compatible servers reject unknown
    /// fields): their streams are asked without it, and report no usage.
    pub(crate) no_stream_usage: Arc<Mutex<HashSet<ProviderId>>>,
    /// How far each provider's clock is from ours, for the instants it announces.
    pub(crate) provider_clocks: Arc<ProviderClocks>,
    /// How long a provider may keep an attempt waiting.
    pub(crate) deadlines: Deadlines,
    /// Each provider's redactor, kept until its keys change.
    pub(crate) redactors: Arc<Mutex<HashMap<ProviderId, CachedRedactor>>>,
    /// The last balance read of each key, one in flight per key.
    pub(crate) balances: Arc<crate::balance::LastReads<crate::balance::BalanceReading>>,
    /// The last plan-window read of each key, one in flight per key.
    pub(crate) windows: Arc<crate::balance::LastReads<crate::plan::WindowReading>>,
    /// The verifications of refused keys, one in flight per key.
    pub(crate) verifications: Arc<Verifications>,
    /// The other members of a team, when the pool is shared (none by default): a slot shared
    /// by every clone of the service, so joining or leaving a team at runtime reaches every
    /// service that holds one (see [`CompletionService::set_team`]).
    pub(crate) team: Arc<ArcSwapOption<Arc<dyn TeamLink>>>,
    /// The key that made each stored response the relay passed on (see [`crate::stored`]).
    pub(crate) stored_responses: Arc<crate::stored::StoredResponses>,
}

impl CompletionService {
    pub fn new(
        pool: Arc<KeyPool>,
        clock: Arc<dyn Clock>,
        resolver: Arc<dyn SecretResolver>,
        recorder: Arc<dyn Recorder>,
        waiter: Arc<dyn Waiter>,
    ) -> Self {
        CompletionService {
            http: Connections::new(),
            pool,
            clock,
            resolver,
            recorder,
            waiter,
            freed: Arc::new(Notify::new()),
            no_stream_usage: Arc::default(),
            provider_clocks: Arc::default(),
            deadlines: Deadlines::default(),
            redactors: Arc::default(),
            balances: Arc::default(),
            windows: Arc::default(),
            verifications: Arc::default(),
            team: Arc::default(),
            stored_responses: Arc::default(),
        }
    }

    /// The same service sharing its pool's state with a team through `team` (see
    /// [`CompletionService::set_team`]).
    pub fn with_team(self, team: Arc<dyn TeamLink>) -> Self {
        self.set_team(Some(team));
        self
    }

    /// Shares the pool's state with `team` from now on (none: the pool is this process's own),
    /// for this service and every clone of it; answers the link it replaces, for the caller to
    /// stop. The new link is told how to wake the service's waiting requests when it frees room.
    ///
    /// Safe under concurrent requests: the slot is swapped atomically, and every use of the
    /// link on a request's path ([`TeamLink::binding`], [`TeamLink::hand_out`],
    /// [`TeamLink::taught`]) reads the slot once and is whole on the link it read: a hand-out's
    /// [`crate::TeamHold`] belongs to the link that issued it and ends its count there whatever
    /// the slot holds by then, and a lesson told to the new link is as true for it as for the
    /// old. A request running across a swap therefore mixes at most two links call by call,
    /// never within one call, and each call is one the member could have made alone (the
    /// links only ever add what the team knows; deciding without one is always allowed).
    pub fn set_team(&self, team: Option<Arc<dyn TeamLink>>) -> Option<Arc<dyn TeamLink>> {
        if let Some(team) = &team {
            let freed = self.freed.clone();
            team.attach(Arc::new(move || freed.notify_waiters()));
        }
        let old = self.team.swap(team.map(Arc::new));
        old.map(|old| (*old).clone())
    }

    /// The team link, when the pool is shared.
    pub fn team(&self) -> Option<Arc<dyn TeamLink>> {
        self.team.load_full().map(|team| (*team).clone())
    }

    /// The user enabled `key` again: the pool lifts a provider's rejection of it, and so does
    /// every member of the team.
    pub fn key_enabled(&self, key: &KeyId) {
        self.pool.clear_auth_block(key);
        if let Some(team) = self.team() {
            team.key_enabled(key);
        }
    }

    /// A background probe of the out-of-credit `key` answered: the pool (and the team) return it
    /// to rotation when `usable`, or probe it again later.
    pub fn probed(&self, key: &KeyId, usable: bool) {
        self.pool.report_probe(key, usable, self.clock.now());
        if let Some(team) = self.team() {
            team.probed(key, usable);
        }
    }

    /// Sends provider requests over `https` through `proxy` from now on (none by default; never
    /// for loopback hosts, and never for plain `http`). On an error nothing changes.
    pub fn set_proxy(&self, proxy: &ProxyChoice) -> Result<(), ProxyError> {
        self.http.set_proxy(proxy)
    }

    /// Whether `proxy` can be used, without using it.
    pub fn check_proxy(&self, proxy: &ProxyChoice) -> Result<(), ProxyError> {
        HttpClients::build(proxy).map(drop)
    }

    /// The HTTP client for a request to `url`.
    pub(crate) fn client(&self, url: &str) -> reqwest::Client {
        self.http.for_url(url)
    }

    /// The same service (pool, team, ledger, proxy choice) with HTTP connections of its own:
    /// for a runtime of its own, so that its requests' upstream connections are driven on its
    /// thread, not woken on another's.
    pub fn with_own_connections(&self) -> Self {
        CompletionService { http: self.http.own(), ..self.clone() }
    }

    /// The same service with other deadlines for the provider's answers.
    pub fn with_deadlines(self, deadlines: Deadlines) -> Self {
        CompletionService { deadlines, ..self }
    }

    pub fn pool(&self) -> &Arc<KeyPool> {
        &self.pool
    }

    /// The service's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The environment variable a stored `$NAME` key refers to, when it has no usable value
    /// now; `None` for a literal key or a variable that is set.
    pub fn unresolved_var(&self, stored: &Secret) -> Option<String> {
        self.resolver.resolve(stored).err().map(|error| error.var().to_owned())
    }
}

impl CompletionService {
    /// A redactor for every key that could appear in `endpoint`'s answers: the one in use, the
    /// others of its pool (references resolved), and the provider-level key. Used only when
    /// there is upstream text to clean, never on the success path; kept per provider and built
    /// again only when its keys (or the provider-level key) changed, since with thousands of keys
    /// building one costs far more than using it.
    pub(crate) fn redactor(&self, endpoint: &ProviderEndpoint, in_use: Option<&Secret>) -> Arc<Redactor> {
        let mut cache = self.redactors.lock().unwrap_or_else(|e| e.into_inner());
        let cached = cache.get(&endpoint.id);
        let known = cached.map(|c| c.epoch);
        let (epoch, stored) = match self.pool.secrets_since(&endpoint.id, known) {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "the pool's keys could not be read for redaction; masking the key in use only");
                return Arc::new(Redactor::new(in_use));
            }
        };
        let provider_key = endpoint.provider_key.clone();
        let same_key =
            |cached: &Option<Secret>| cached.as_ref().map(Secret::expose) == provider_key.as_ref().map(Secret::expose);
        if let (Some(cached), None) = (cached, &stored) {
            if same_key(&cached.provider_key) && in_use.is_none_or(|key| cached.redactor.covers(key)) {
                return cached.redactor.clone();
            }
        }
        let stored = match stored {
            Some(stored) => stored,
            None => self.pool.secrets(&endpoint.id).unwrap_or_default(),
        };
        // Each by the preview of what is stored: a `$NAME` key by its name, not by its value.
        let named = stored
            .iter()
            .chain(&endpoint.provider_key)
            .filter_map(|raw| self.resolver.resolve(raw).ok().map(|secret| (secret, raw.preview())));
        let in_use = in_use.map(|key| (key.clone(), key.preview()));
        let redactor = Arc::new(Redactor::with_names(named.chain(in_use)));
        cache.insert(endpoint.id.clone(), CachedRedactor { epoch, provider_key, redactor: redactor.clone() });
        redactor
    }
}

/// A provider's redactor and what it was made of.
pub(crate) struct CachedRedactor {
    /// The pool's load it was made from.
    epoch: u64,
    provider_key: Option<Secret>,
    redactor: Arc<Redactor>,
}

/// The rate-limit scope of a request to `model`: OpenAI limits each model separately, Anthropic
/// each model class (the Opus models share one limit, the Sonnet models another, the Haiku
/// models a third).
pub fn scope_of(kind: crate::kind::ProviderKind, model: &Arc<str>) -> Arc<str> {
    kind.wire().scope(model)
}
