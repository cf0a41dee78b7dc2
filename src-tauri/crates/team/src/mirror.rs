//! What this member knows the team holds, as it last heard it.

use std::collections::HashMap;
use std::time::Duration;

use keypool::{KeyId, Timestamp};

use crate::layout::{field, Fact, Target};
use crate::secret::TeamSecret;

/// A member counts as there when it was heard from this recently.
pub(crate) const LIVE: Duration = Duration::from_secs(60);

/// The most targets the mirror remembers fields of (a team's keys, groups and scopes).
pub(crate) const MAX_TARGETS: usize = 100_000;

/// What this member knows the team holds: every field last heard, by target (to apply to keys
/// the pool loads later), the other members' requests in flight, and when each member was last
/// heard from.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    pub(crate) fields: HashMap<Target, HashMap<String, String>>,
    /// The `at` of the last rejection or enable, and of the last credit state, applied per key
    /// identity: each is acted on once (they reach the store).
    pub(crate) auth_at: HashMap<String, (i64, Fact)>,
    pub(crate) credit_at: HashMap<String, (i64, Fact)>,
    /// Per scope target (group, scope): each member's requests in flight.
    pub(crate) reserved: HashMap<(String, String), HashMap<String, InFlight>>,
    pub(crate) heard: HashMap<String, Timestamp>,
    /// The scopes this member asked for, by identity (a scope's name is the same for every group).
    pub(crate) scope_names: HashMap<String, String>,
    /// When each of this member's keys was last enabled again (0: never), as far as it knows:
    /// read from the recorder once, then kept up with the enables it hears and makes.
    pub(crate) enabled_at: HashMap<KeyId, i64>,
}

/// A member's requests in flight on a scope, as it last told them: `(seq, requests, tokens)`.
pub(crate) type InFlight = (u64, u64, u64);

impl Mirror {
    pub(crate) fn remember(&mut self, target: &Target, name: &str, value: &str) {
        if self.fields.len() >= MAX_TARGETS && !self.fields.contains_key(target) {
            return;
        }
        self.fields.entry(target.clone()).or_default().insert(name.to_owned(), value.to_owned());
    }

    /// `member` was heard from at `now`.
    pub(crate) fn heard(&mut self, member: &str, now: Timestamp) {
        if self.heard.len() >= 10_000 && !self.heard.contains_key(member) {
            self.heard.retain(|_, at| now.saturating_duration_since(*at) < LIVE);
        }
        self.heard.insert(member.to_owned(), now);
    }

    pub(crate) fn live(&self, member: &str, now: Timestamp) -> bool {
        self.heard.get(member).is_some_and(|&at| now.saturating_duration_since(at) < LIVE)
    }

    /// The other members' requests (and tokens) in flight on a scope, counting the live ones.
    pub(crate) fn others(&self, scope: &(String, String), me: &str, now: Timestamp) -> (u64, u64) {
        let Some(members) = self.reserved.get(scope) else { return (0, 0) };
        members
            .iter()
            .filter(|(member, _)| member.as_str() != me && self.live(member, now))
            .fold((0, 0), |(r, t), (_, &(_, requests, tokens))| (r.saturating_add(requests), t.saturating_add(tokens)))
    }

    /// The scope's name: as this member asked for it, or as another member wrote it (its seal
    /// checked).
    pub(crate) fn scope_name(&self, group: &str, scope_id: &str, secret: &TeamSecret) -> Option<String> {
        if let Some(name) = self.scope_names.get(scope_id) {
            return Some(name.clone());
        }
        let target = Target::Scope(group.to_owned(), scope_id.to_owned());
        let stored = self.fields.get(&target)?.get(field::SCOPE)?;
        match Fact::read(field::SCOPE, secret.open(&target.suffix(), field::SCOPE, stored)?) {
            Some(Fact::Scope(scope)) => Some(scope),
            _ => None,
        }
    }

    /// This member asked for `scope`, whose identity is `scope_id`.
    pub(crate) fn name_scope(&mut self, scope_id: &str, scope: &str) {
        if self.scope_names.len() >= MAX_TARGETS {
            self.scope_names.clear();
        }
        self.scope_names.insert(scope_id.to_owned(), scope.to_owned());
    }

    /// This member itself wrote `key`'s `auth` (or credit) state stamped `at`: an older one read
    /// back later is not acted on.
    pub(crate) fn told(&mut self, key: &str, auth: bool, fact: Fact, at: i64) {
        let seen = if auth { &mut self.auth_at } else { &mut self.credit_at };
        if seen.get(key).is_none_or(|(last, _)| *last <= at) {
            seen.insert(key.to_owned(), (at, fact));
        }
    }

    /// Every scope target with members' requests in flight.
    pub(crate) fn reserved_scopes(&self) -> Vec<(String, String)> {
        self.reserved.keys().cloned().collect()
    }
}
