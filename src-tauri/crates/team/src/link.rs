//! The request path: what the completion service asks and tells the team. Nothing here fails a
//! request or keeps it longer than [`crate::TeamConfig::request_timeout`] per round trip.

use std::sync::Arc;
use std::time::Duration;

use keypool::{FailureOutcome, KeyId, ProviderId, RemoteFact, SessionId, Timestamp};
use keypool_llm::{Admission, HandOut, Taught, TeamFuture, TeamHold, TeamLink, Wake};
use redis::Value;

use crate::admissions::Path;
use crate::layout::{self, field, Op, Target};
use crate::layout::{current_windows, millis, GROUP_TTL, KEY_TTL, SCOPE_TTL};
use crate::member::Team;
use crate::scripts::{ADMIT_SCRIPT, BIND_SCRIPT};
use crate::secret::is_identity;
use crate::shared::{broken, Shared, Write};

impl TeamLink for Team {
    fn binding<'a>(
        &'a self,
        provider: &'a ProviderId,
        session: &'a SessionId,
        bound: Option<&'a KeyId>,
    ) -> TeamFuture<'a, Option<KeyId>> {
        // What the team said of keys the pool just loaded is merged here, before the selection.
        drop(self.shared.directory());
        match bound {
            Some(_) => Box::pin(std::future::ready(None)),
            None => Box::pin(self.shared.read_binding(provider, session)),
        }
    }

    fn hand_out<'a>(&'a self, hand_out: HandOut<'a>) -> TeamFuture<'a, (Admission, TeamHold)> {
        Box::pin(self.shared.clone().hand_out(hand_out))
    }

    fn taught(&self, provider: &ProviderId, key: &KeyId, scope: &str, taught: Taught<'_>) {
        self.shared.taught(provider, key, scope, taught);
    }

    fn key_enabled(&self, key: &KeyId) {
        // The store stamped the enable; the team is told that stamp, so every member measures
        // rejections against the same one. No stamp: the key was not off, nothing to tell.
        let Some(at) = self.shared.recorder.enabled_at(key) else { return };
        self.shared.enabled_again(key, at.as_millis());
        self.shared.tell_key(key, field::AUTH, layout::enabled(at), at);
    }

    fn probed(&self, key: &KeyId, usable: bool) {
        let shared = &self.shared;
        let now = shared.clock.now();
        let value = match usable {
            true => Some(layout::credit(now)),
            false => shared
                .pool
                .facts(key, None, now)
                .and_then(|facts| facts.out_of_credit)
                .map(|(probe_at, probes)| layout::out_of_credit(now, probe_at, probes)),
        };
        if let Some(value) = value {
            shared.tell_key(key, field::CREDIT, value, now);
        }
    }

    fn attach(&self, wake: Wake) {
        *self.shared.wake.lock() = Some(wake);
    }
}

/// A hand-out's share in the team's requests in flight; its drop tells the team it ended.
struct Release {
    shared: Arc<Shared>,
    group: String,
    scope_id: String,
    tokens: u64,
}

impl Drop for Release {
    fn drop(&mut self) {
        let tell = self.shared.own.lock().release(&self.group, &self.scope_id, self.tokens);
        if tell {
            let (group, scope) = (std::mem::take(&mut self.group), std::mem::take(&mut self.scope_id));
            self.shared.queue(Write::Reserved { group, scope });
        }
    }
}

/// How often a live binding is written again, so it does not expire in Redis while used here.
fn refresh_every(idle: Duration) -> Duration {
    idle / 8
}

impl Shared {
    /// The key the team has `session` bound to, among this member's keys of `provider`.
    async fn read_binding(&self, provider: &ProviderId, session: &SessionId) -> Option<KeyId> {
        let identity = self.secret.session_identity(session.as_str());
        self.sessions.lock().remember(&identity, session, provider);
        if !self.is_connected() {
            return None;
        }
        let name = self.names.key(&Target::Binding(identity.clone()));
        let mut conn = self.conn.clone();
        let mut get = redis::cmd("GET");
        get.arg(name);
        let read = get.query_async::<Option<String>>(&mut conn);
        let stored = match tokio::time::timeout(self.request_timeout, read).await {
            Ok(Ok(Some(stored))) => stored,
            Ok(Err(error)) if broken(&error) => {
                self.lose_connection();
                return None;
            }
            _ => return None,
        };
        let suffix = Target::Binding(identity).suffix();
        let key = self.secret.open(&suffix, field::BOUND, &stored).filter(|key| is_identity(key))?;
        let directory = self.directory();
        let local = directory.keys(key).iter().find(|k| directory.ids(k).is_some_and(|ids| &ids.provider == provider));
        local.cloned()
    }

    /// A hand-out: counted among the team's requests in flight; a new binding written, and the
    /// team's room checked when a window could refuse, in one round trip.
    async fn hand_out(self: Arc<Self>, hand_out: HandOut<'_>) -> (Admission, TeamHold) {
        let now = self.clock.now();
        let ids = self.directory().ids(hand_out.key).cloned();
        let Some(ids) = ids else { return (Admission::Admitted, TeamHold::none()) };
        let scope_id = self.scope_id(hand_out.scope);
        let tokens = u64::from(hand_out.tokens);
        let (seq, requests, reserved_tokens) = self.own.lock().reserve(&ids.group, &scope_id, hand_out.scope, tokens);
        let hold = TeamHold::new(Release {
            shared: self.clone(),
            group: ids.group.clone(),
            scope_id: scope_id.clone(),
            tokens,
        });
        let session = self.secret.session_identity(hand_out.session.as_str());
        let refresh = {
            let mut sessions = self.sessions.lock();
            sessions.remember(&session, hand_out.session, hand_out.provider);
            sessions.due(&session, refresh_every(self.pool.binding_idle()), now)
        };
        if !self.is_connected() {
            self.admissions.count(Path::Disconnected);
            return (Admission::Admitted, hold);
        }
        let new_binding = hand_out.bound_before != Some(hand_out.key);
        if refresh && !new_binding {
            self.queue(Write::Bind { session: session.clone(), key: ids.key.clone() });
        }
        // Only a window can refuse a request: without one the count is the team's news only once
        // it has been told (and then every change is).
        let scope_facts = self.pool.facts(hand_out.key, Some(hand_out.scope), now).and_then(|facts| facts.scope);
        let windowed = scope_facts.as_ref().is_some_and(|scope| scope.requests.is_some() || scope.tokens.is_some());
        let told = self.own.lock().is_published(&ids.group, &scope_id);
        if !windowed {
            if told {
                self.queue(Write::Reserved { group: ids.group.clone(), scope: scope_id.clone() });
            }
            if !new_binding {
                self.admissions.count(Path::NoWindow);
                return (Admission::Admitted, hold);
            }
        } else {
            self.own.lock().published(&ids.group, &scope_id);
        }
        let binding = Target::Binding(session);
        let scope_target = Target::Scope(ids.group.clone(), scope_id.clone());
        let (binding_key, scope_key) = (self.names.key(&binding), self.names.key(&scope_target));
        let mut pipe = redis::pipe();
        let mut bind = BIND_SCRIPT.prepare_invoke();
        if new_binding {
            bind.key(&binding_key)
                .arg(&self.member)
                .arg(self.names.channel())
                .arg(binding.suffix())
                .arg(millis(self.pool.binding_idle()))
                .arg(self.secret.seal(&binding.suffix(), field::BOUND, &ids.key));
            pipe.invoke_script(&bind);
        }
        let mut admit = ADMIT_SCRIPT.prepare_invoke();
        if windowed {
            let field = format!("{}{}", field::RESERVED, self.member);
            admit
                .key(&scope_key)
                .key(self.names.members())
                .arg(&self.member)
                .arg(self.names.channel())
                .arg(scope_target.suffix())
                .arg(millis(SCOPE_TTL))
                .arg(now.as_millis())
                .arg((now - crate::mirror::LIVE).as_millis())
                .arg(seq)
                .arg(requests)
                .arg(reserved_tokens)
                .arg(self.secret.seal(
                    &scope_target.suffix(),
                    &field,
                    &layout::reserved(seq, requests, reserved_tokens),
                ));
            // Read after the count was (the pool learns an answer's windows before the request
            // ends), so every end the count reflects comes with the windows it announced.
            let windows = scope_facts.as_ref().map(|facts| current_windows(facts, now)).unwrap_or_default();
            for name in [field::REQUESTS, field::TOKENS] {
                match windows.iter().find(|(window, _)| *window == name) {
                    Some((_, value)) => admit.arg(self.secret.seal(&scope_target.suffix(), name, value)),
                    None => admit.arg(""),
                };
            }
            pipe.invoke_script(&admit);
        }
        let mut conn = self.conn.clone();
        let asked = tokio::time::timeout(self.request_timeout, pipe.query_async::<Vec<Value>>(&mut conn)).await;
        let (verdict, path) = match asked {
            Ok(Ok(answer)) if windowed => {
                (answer.last().and_then(|last| Verdict::of(last, &self.secret, &scope_target)), Path::Failed)
            }
            Ok(Ok(_)) => (None, Path::NoWindow),
            Ok(Err(error)) => {
                // Gone, or its scripts flushed: the reconnect loads them again.
                if broken(&error) || error.code() == Some("NOSCRIPT") {
                    self.lose_connection();
                }
                (None, Path::Failed)
            }
            Err(_) => (None, Path::TimedOut),
        };
        let Some(verdict) = verdict else {
            self.admissions.count(path);
            // Not known whether Redis counted the request: tell it the count as it is.
            if windowed {
                self.queue(Write::Reserved { group: ids.group, scope: scope_id });
            }
            return (Admission::Admitted, hold);
        };
        self.heed(&hand_out, &scope_target, &verdict, now);
        // The script weighed every value Redis holds, sealed or not; the team goes by the sealed
        // ones: a window or a count written without the secret neither fills a window nor makes
        // room in one.
        let own = scope_facts.as_ref().map_or((None, None), |facts| (facts.requests, facts.tokens));
        let sealed = verdict.sealed_room(&self.secret, &scope_target, own, (requests, reserved_tokens), now);
        let admitted = match (verdict.admitted, sealed) {
            (false, true) => {
                tracing::debug!(scope = %scope_id, "team: ADMIT was full only by values without the team's seal; admitted");
                // The script did not count this request: the count is told as it is.
                self.queue(Write::Reserved { group: ids.group.clone(), scope: scope_id.clone() });
                true
            }
            (true, false) => {
                tracing::debug!(scope = %scope_id, "team: ADMIT found room only by values without the team's seal; full");
                false
            }
            (script, _) => script,
        };
        match admitted {
            true => {
                self.admissions.count(Path::Admitted);
                (Admission::Admitted, hold)
            }
            false => {
                self.admissions.count(Path::Full);
                (Admission::Full, hold)
            }
        }
    }

    /// Tells the pool what the team holds on the hand-out's scope and what its windows say, for
    /// its next decision.
    fn heed(&self, hand_out: &HandOut<'_>, scope: &Target, verdict: &Verdict, now: Timestamp) {
        let held =
            RemoteFact::Reserved { scope: hand_out.scope, requests: verdict.others, tokens: verdict.others_tokens };
        let _ = self.pool.merge(hand_out.key, held, now);
        let windows = [(field::REQUESTS, &verdict.requests), (field::TOKENS, &verdict.tokens)];
        let fields: Vec<(String, String)> =
            windows.into_iter().filter_map(|(name, value)| Some((name.to_owned(), value.clone()?))).collect();
        if !fields.is_empty() {
            let directory = self.directory();
            self.apply(&directory, scope, &fields);
        }
    }

    /// Tells the team what the pool learned from an attempt.
    fn taught(&self, _provider: &ProviderId, key: &KeyId, scope: &str, taught: Taught<'_>) {
        match taught {
            Taught::Answer(announced) if announced.is_empty() => return,
            Taught::Refusal(FailureOutcome::Unchanged) => return,
            _ => {}
        }
        let now = self.clock.now();
        let Some(ids) = self.directory().ids(key).cloned() else { return };
        let Some(facts) = self.pool.facts(key, Some(scope), now) else { return };
        match taught {
            Taught::Refusal(FailureOutcome::Cooled { .. }) => {
                if let Some(resting) = facts.resting {
                    let fields = vec![(field::REST, Op::Max, layout::rest(resting))];
                    self.queue(Write::Merge { target: Target::Group(ids.group), fields, ttl: GROUP_TTL });
                }
            }
            Taught::Refusal(FailureOutcome::Exhausted { .. }) => {
                if let Some((probe_at, probes)) = facts.out_of_credit {
                    self.tell_key(key, field::CREDIT, layout::out_of_credit(now, probe_at, probes), now);
                }
            }
            Taught::Refusal(FailureOutcome::Disabled { reason }) => {
                let enabled_at = Some(self.enabled_at(key)).filter(|at| *at > 0).map(Timestamp::from_millis);
                self.tell_key(key, field::AUTH, layout::rejected(now, reason.status(), enabled_at), now);
            }
            _ => {
                let Some(scope_facts) = facts.scope else { return };
                let mut fields = vec![(field::SCOPE, Op::Set, scope_facts.scope.to_string())];
                fields.extend(
                    current_windows(&scope_facts, now).into_iter().map(|(name, value)| (name, Op::Window, value)),
                );
                if let Some(until) = scope_facts.spent_until {
                    fields.push((field::SPENT, Op::Max, layout::deadline(until)));
                }
                if let Some(resting) = scope_facts.resting {
                    fields.push((field::REST, Op::Max, layout::rest(resting)));
                }
                if let Some(until) = scope_facts.used_up_until {
                    fields.push((field::DAY, Op::Max, layout::deadline(until)));
                }
                let target = Target::Scope(ids.group, self.scope_id(scope));
                self.queue(Write::Merge { target, fields, ttl: SCOPE_TTL });
            }
        }
    }

    /// Writes one of `key`'s own states (`auth` or `credit`), stamped `at`: the latest wins
    /// everywhere, and this member does not act on an older one read back later.
    fn tell_key(&self, key: &KeyId, name: &'static str, value: String, at: Timestamp) {
        let Some(ids) = self.directory().ids(key).cloned() else { return };
        if let Some(fact) = layout::Fact::read(name, &value) {
            self.mirror.lock().told(&ids.key, name == field::AUTH, fact, at.as_millis());
        }
        let fields = vec![(name, Op::Max, value)];
        self.queue(Write::Merge { target: Target::Key(ids.key), fields, ttl: KEY_TTL });
    }
}

/// The answer of the `ADMIT` script, the other members' counts checked.
struct Verdict {
    admitted: bool,
    /// The other live members' requests (and tokens) in flight, as far as their seals hold.
    others: u64,
    others_tokens: u64,
    /// The windows as Redis holds them (sealed).
    requests: Option<String>,
    tokens: Option<String>,
}

impl Verdict {
    fn of(value: &Value, secret: &crate::TeamSecret, target: &Target) -> Option<Verdict> {
        let Value::Array(items) = value else { return None };
        let text = |value: &Value| match value {
            Value::BulkString(bytes) if !bytes.is_empty() && bytes.len() <= layout::MAX_VALUE => {
                String::from_utf8(bytes.clone()).ok()
            }
            _ => None,
        };
        let admitted = match items.first() {
            Some(Value::Int(n)) => *n == 1,
            _ => return None,
        };
        let suffix = target.suffix();
        let (mut others, mut others_tokens) = (0u64, 0u64);
        for pair in items.get(3..).unwrap_or_default().chunks(2) {
            let [name, stored] = pair else { continue };
            let (Some(name), Some(stored)) = (text(name), text(stored)) else { continue };
            let opened = secret.open(&suffix, &name, &stored).and_then(|value| layout::Fact::read(&name, value));
            if let Some(layout::Fact::Reserved { requests, tokens, .. }) = opened {
                others = others.saturating_add(requests);
                others_tokens = others_tokens.saturating_add(tokens);
            }
        }
        Some(Verdict {
            admitted,
            others,
            others_tokens,
            requests: items.get(1).and_then(text),
            tokens: items.get(2).and_then(text),
        })
    }
}

impl Verdict {
    /// Whether the sealed windows (the newest of this member's own and the one Redis holds, if
    /// its seal is right) leave room for the sealed counts of the other live members and this
    /// member's `(requests, tokens)`: the script's rule, on what the team wrote.
    fn sealed_room(
        &self,
        secret: &crate::TeamSecret,
        target: &Target,
        own: (Option<keypool::Window>, Option<keypool::Window>),
        (requests, tokens): (u64, u64),
        now: Timestamp,
    ) -> bool {
        let suffix = target.suffix();
        let stored = |name: &str, value: &Option<String>| {
            let opened = value.as_deref().and_then(|stored| secret.open(&suffix, name, stored));
            match opened.and_then(|value| layout::Fact::read(name, value)) {
                Some(layout::Fact::Window { window, .. }) => Some(window),
                _ => None,
            }
        };
        let requests_window = keypool::Window::newest(own.0, stored(field::REQUESTS, &self.requests));
        let tokens_window = keypool::Window::newest(own.1, stored(field::TOKENS, &self.tokens));
        room(requests_window, self.others.saturating_add(requests), now)
            && room(tokens_window, self.others_tokens.saturating_add(tokens), now)
    }
}

/// Whether `window` leaves room for `used` at `now` (a window whose reset has passed is whole
/// again), as `ADMIT` decides.
fn room(window: Option<keypool::Window>, used: u64, now: Timestamp) -> bool {
    let Some(window) = window else { return true };
    let left = match (window.reset_at <= now, window.limit) {
        (false, _) => window.remaining,
        (true, Some(limit)) => limit,
        (true, None) => return true,
    };
    used <= left
}
