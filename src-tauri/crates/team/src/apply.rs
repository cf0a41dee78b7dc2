//! What the other members said, applied to this member's pool: from the channel, from the read
//! after a (re)connect, and again for keys the pool loads later.

use keypool::{Announced, DisableReason, KeyId, Merged, RemoteFact, Timestamp};

use crate::directory::{Arrived, Directory};
use crate::layout::{Fact, Target};
use crate::shared::{Shared, Told};

impl Shared {
    /// Applies the fields of `target` another member wrote (or the read back found), as stored
    /// (sealed), as of now: a field whose MAC is wrong is ignored. Returns whether the pool changed.
    pub fn apply(&self, directory: &Directory, target: &Target, fields: &[(String, String)]) -> bool {
        let now = self.clock.now();
        let suffix = target.suffix();
        let mut opened = Vec::with_capacity(fields.len());
        for (name, stored) in fields {
            let Some(value) = self.secret.open(&suffix, name, stored) else { continue };
            if !matches!(target, Target::Binding(_)) {
                self.mirror.lock().remember(target, name, stored);
            }
            if let Some(fact) = Fact::read(name, value) {
                opened.push(fact);
            }
        }
        let changed = match target {
            Target::Key(key) => {
                opened.into_iter().fold(false, |changed, fact| changed | self.apply_key(directory, key, fact, now))
            }
            Target::Group(group) => opened.into_iter().fold(false, |changed, fact| match fact {
                Fact::Rest(resting) => changed | self.merge_group(directory, group, RemoteFact::Resting(resting), now),
                _ => changed,
            }),
            Target::Scope(group, scope_id) => self.apply_scope(directory, group, scope_id, opened, now),
            Target::Binding(session) => opened.into_iter().fold(false, |changed, fact| match fact {
                Fact::Bound(key) => changed | self.apply_binding(directory, session, &key, now),
                _ => changed,
            }),
        };
        if changed {
            self.wake();
        }
        changed
    }

    /// What the team said before of keys and groups that just arrived in the directory.
    pub fn apply_arrived(&self, directory: &Directory, arrived: &Arrived) {
        let known: Vec<(Target, Vec<(String, String)>)> = {
            let mirror = self.mirror.lock();
            mirror
                .fields
                .iter()
                .filter(|(target, _)| match target {
                    Target::Key(key) => arrived.keys.contains(key),
                    Target::Group(group) | Target::Scope(group, _) => arrived.groups.contains(group),
                    Target::Binding(_) => false,
                })
                .map(|(target, fields)| (target.clone(), fields.iter().map(|(n, v)| (n.clone(), v.clone())).collect()))
                .collect()
        };
        for (target, fields) in known {
            // Rejections and credit were acted on by identity: keys new to it are told again.
            if let Target::Key(key) = &target {
                let mut mirror = self.mirror.lock();
                mirror.auth_at.remove(key);
                mirror.credit_at.remove(key);
            }
            self.apply(directory, &target, &fields);
        }
        let scopes: Vec<(String, String)> = self
            .mirror
            .lock()
            .reserved_scopes()
            .into_iter()
            .filter(|(group, _)| arrived.groups.contains(group))
            .collect();
        for (group, scope_id) in scopes {
            self.merge_reserved(directory, &group, &scope_id, self.clock.now());
        }
    }

    fn apply_key(&self, directory: &Directory, key: &str, fact: Fact, now: Timestamp) -> bool {
        let keys = directory.keys(key);
        let told = fact.clone();
        match fact {
            Fact::Auth { at, rejected, enabled_at } => {
                if !self.newer(key, &told, at, true) {
                    return false;
                }
                let mut changed = false;
                for local in keys {
                    let known = self.enabled_at(local);
                    match rejected {
                        // A rejection of the key as it was before its last enable: the key was
                        // enabled again since (or an old rejection was written back): not believed.
                        Some(_) if enabled_at < known => {
                            tracing::info!(%local, "team: a rejection of the key from before it was enabled again is not believed");
                        }
                        Some(status) => {
                            let fact = RemoteFact::Disabled { reason: DisableReason::AuthRejected { status } };
                            changed |= self.merge_key(directory, local, fact, now);
                        }
                        // An enable this member knows already, or one older than it.
                        None if at <= known => {}
                        None => {
                            self.enabled_again(local, at);
                            changed |= self.merge_key(directory, local, RemoteFact::Enabled, now);
                            if let Some(ids) = directory.ids(local) {
                                tracing::info!(provider = %ids.provider, key = %local, "team: another member enabled the key again");
                                let (provider, key, at) =
                                    (ids.provider.clone(), local.clone(), Timestamp::from_millis(at));
                                self.told.lock().push(Told::Enabled { provider, key, at });
                            }
                        }
                    }
                }
                changed
            }
            Fact::Credit { at, out } => {
                if !self.newer(key, &told, at, false) {
                    return false;
                }
                let fact = match out {
                    Some((probe_at, probes)) => RemoteFact::OutOfCredit { probe_at, probes },
                    None => RemoteFact::Replenished,
                };
                keys.iter().fold(false, |changed, local| changed | self.merge_key(directory, local, fact, now))
            }
            _ => false,
        }
    }

    /// Whether a rejection/enable (`auth`) or credit state stamped `at` is newer than the last
    /// one acted on for `key`, remembering it if so. A key this member loads later is told the
    /// latest state again when it arrives ([`Shared::apply_arrived`]).
    fn newer(&self, key: &str, fact: &Fact, at: i64, auth: bool) -> bool {
        let mut mirror = self.mirror.lock();
        let seen = if auth { &mut mirror.auth_at } else { &mut mirror.credit_at };
        // On a tie of the stamps, another state is news (Redis kept the later write); the same
        // state is not.
        if seen.get(key).is_some_and(|(last, known)| *last > at || (*last == at && known == fact)) {
            return false;
        }
        seen.insert(key.to_owned(), (at, fact.clone()));
        true
    }

    /// When this member's key `key` was last enabled again (0: never), as far as it knows.
    pub(crate) fn enabled_at(&self, key: &KeyId) -> i64 {
        if let Some(&at) = self.mirror.lock().enabled_at.get(key) {
            return at;
        }
        let stored = self.recorder.enabled_at(key).map_or(0, Timestamp::as_millis);
        *self.mirror.lock().enabled_at.entry(key.clone()).or_insert(stored)
    }

    /// This member's key `key` was enabled again at `at` (here, or by another member).
    pub(crate) fn enabled_again(&self, key: &KeyId, at: i64) {
        let known = self.enabled_at(key);
        self.mirror.lock().enabled_at.insert(key.clone(), known.max(at));
    }

    /// Merges a fact about one of this member's keys; persists a disable it causes.
    fn merge_key(&self, directory: &Directory, key: &KeyId, fact: RemoteFact<'_>, now: Timestamp) -> bool {
        let merged = self.pool.merge(key, fact, now);
        let provider = directory.ids(key).map(|ids| ids.provider.clone());
        // (An enable reaches the store with its stamp, from `apply_key`.)
        if let (Merged::Disabled { reason }, Some(provider)) = (merged, provider) {
            tracing::warn!(%provider, %key, %reason, "team: another member's provider rejected the key; disabling it");
            self.told.lock().push(Told::Disabled { provider, key: key.clone(), reason, at: now });
        }
        merged != Merged::Unchanged
    }

    /// Merges a fact about a group into every key of this member in it (each provider's group
    /// takes it once; the others find it no news).
    fn merge_group(&self, directory: &Directory, group: &str, fact: RemoteFact<'_>, now: Timestamp) -> bool {
        directory.group(group).iter().fold(false, |changed, key| changed | self.merge_key(directory, key, fact, now))
    }

    fn apply_scope(
        &self,
        directory: &Directory,
        group: &str,
        scope_id: &str,
        opened: Vec<Fact>,
        now: Timestamp,
    ) -> bool {
        let mut facts = Vec::new();
        for fact in opened {
            match fact {
                Fact::Reserved { member, seq, requests, tokens } => {
                    if member != self.member {
                        let mut mirror = self.mirror.lock();
                        let members = mirror.reserved.entry((group.to_owned(), scope_id.to_owned())).or_default();
                        if members.get(&member).is_none_or(|&(known, _, _)| known < seq) {
                            members.insert(member.clone(), (seq, requests, tokens));
                        }
                        mirror.heard(&member, now);
                    }
                }
                Fact::Scope(_) => {}
                fact => facts.push(fact),
            }
        }
        let Some(scope) = self.mirror.lock().scope_name(group, scope_id, &self.secret) else { return false };
        let mut changed = false;
        for fact in facts {
            let remote = match fact {
                Fact::Window { tokens: false, window } => {
                    RemoteFact::Windows { scope: &scope, announced: Announced { requests: Some(window), tokens: None } }
                }
                Fact::Window { tokens: true, window } => {
                    RemoteFact::Windows { scope: &scope, announced: Announced { requests: None, tokens: Some(window) } }
                }
                Fact::Spent(until) => RemoteFact::Spent { scope: &scope, until },
                Fact::Day(until) => RemoteFact::UsedUpForTheDay { scope: &scope, until },
                Fact::Rest(resting) => RemoteFact::ScopeResting { scope: &scope, resting },
                _ => continue,
            };
            changed |= self.merge_group(directory, group, remote, now);
        }
        changed | self.merge_reserved(directory, group, scope_id, now)
    }

    /// Tells the pool what the other live members hold in flight on a scope.
    pub fn merge_reserved(&self, directory: &Directory, group: &str, scope_id: &str, now: Timestamp) -> bool {
        let (scope, (requests, tokens)) = {
            let mirror = self.mirror.lock();
            let Some(scope) = mirror.scope_name(group, scope_id, &self.secret) else { return false };
            (scope, mirror.others(&(group.to_owned(), scope_id.to_owned()), &self.member, now))
        };
        self.merge_group(directory, group, RemoteFact::Reserved { scope: &scope, requests, tokens }, now)
    }

    fn apply_binding(&self, directory: &Directory, session: &str, key: &str, now: Timestamp) -> bool {
        let Some((session, provider)) = self.sessions.lock().get(session) else { return false };
        let local = directory.keys(key).iter().find(|k| directory.ids(k).is_some_and(|ids| ids.provider == provider));
        local.is_some_and(|local| self.pool.merge_binding(&session, local, now))
    }
}
