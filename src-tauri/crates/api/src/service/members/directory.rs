//! Who the members are: the store's definitions and the team's, the newest of each name, as
//! requests see them (by token digest and by name), and the team told of what changed here.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use keypool_team::Allowance;
use serde::{Deserialize, Serialize};

use super::{Member, MemberLimits, MemberSource, Members};

/// The members, from where their definitions come: the directory requests read without a lock,
/// and the definitions it is built from.
#[derive(Default)]
pub(super) struct Roster {
    directory: ArcSwap<Directory>,
    definitions: Mutex<Definitions>,
    /// Times the team's definitions were read, changed or not, for metrics: what a test of their
    /// spread waits on, not a time.
    team_reads: AtomicU64,
}

/// A member's definition as the team carries it (in Redis, sealed): what a replica needs to
/// serve a member it has not been told of itself. The token only as its SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TeamRecord {
    name: String,
    token_sha256: String,
    source: MemberSource,
    enabled: bool,
    expires_at: Option<i64>,
    limits: MemberLimits,
    created_at: i64,
    updated_at: i64,
    /// Removed at `updated_at`.
    #[serde(default)]
    deleted: bool,
}

impl TeamRecord {
    fn of(member: &Member) -> TeamRecord {
        TeamRecord {
            name: member.name.clone(),
            token_sha256: member.token_sha256.iter().map(|b| format!("{b:02x}")).collect(),
            source: member.source,
            enabled: member.enabled,
            expires_at: member.expires_at,
            limits: member.limits.clone(),
            created_at: member.created_at,
            updated_at: member.updated_at,
            deleted: false,
        }
    }

    fn member(&self) -> Option<Member> {
        let mut token_sha256 = [0u8; 32];
        if self.token_sha256.len() != 64 {
            return None;
        }
        for (i, byte) in token_sha256.iter_mut().enumerate() {
            *byte = u8::from_str_radix(self.token_sha256.get(i * 2..i * 2 + 2)?, 16).ok()?;
        }
        Some(Member {
            name: self.name.clone(),
            token_sha256,
            source: self.source,
            enabled: self.enabled,
            expires_at: self.expires_at,
            limits: self.limits.clone(),
            // An agent's token is one machine's: the team carries no agent.
            agent: None,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The members as requests see them: by token digest and by name (lower case).
#[derive(Default)]
struct Directory {
    by_hash: HashMap<[u8; 32], Arc<Member>>,
    by_name: HashMap<String, Arc<Member>>,
}

/// Where definitions come from, and what the team was told.
#[derive(Default)]
struct Definitions {
    /// The store's members, by lower-case name.
    local: HashMap<String, Member>,
    /// The team's, by lower-case name (tombstones included).
    team: HashMap<String, TeamRecord>,
    /// Members this process removed from its store, and when: told to the team as tombstones.
    removed: HashMap<String, i64>,
    /// The `updated_at` of each definition the team was told.
    published: HashMap<String, i64>,
    store_generation: Option<u64>,
    team_version: Option<u64>,
    /// The team link's connects when last seen (a new one: tell everything again).
    connects: u64,
}

impl Roster {
    /// The member called `name` as requests see it now.
    pub(super) fn member(&self, name: &str) -> Option<Arc<Member>> {
        self.directory.load().by_name.get(&name.to_lowercase()).cloned()
    }

    /// The member whose token has the digest `hash`.
    pub(super) fn by_hash(&self, hash: &[u8; 32]) -> Option<Arc<Member>> {
        self.directory.load().by_hash.get(hash).cloned()
    }

    /// Every member now.
    pub(super) fn members(&self) -> Vec<Arc<Member>> {
        self.directory.load().by_name.values().cloned().collect()
    }

    /// How many times the team's definitions were read.
    pub(super) fn team_reads(&self) -> u64 {
        self.team_reads.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Definitions> {
        self.definitions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Members removed from the store at `now` (ms) by someone else than the book: the team is told.
    pub(super) fn removed(&self, names: &[String], now: i64) {
        let mut definitions = self.lock();
        for name in names {
            definitions.removed.insert(name.to_lowercase(), now);
        }
    }

    /// Reads the store's members again if they changed (or `force`), rebuilds the directory, and
    /// tells the team (through `allowance`) what changed; `now` in ms.
    pub(super) fn refresh_local(&self, members: &Members, allowance: Option<&Allowance>, now: i64, force: bool) {
        let generation = match members.generation() {
            Ok(generation) => generation,
            Err(error) => return tracing::warn!(%error, "members: the store could not be read"),
        };
        let mut definitions = self.lock();
        if !force && definitions.store_generation == Some(generation) {
            return;
        }
        let listed = match members.list() {
            Ok(listed) => listed,
            Err(error) => return tracing::warn!(%error, "members: the store could not be read"),
        };
        let fresh: HashMap<String, Member> = listed.into_iter().map(|m| (m.name.to_lowercase(), m)).collect();
        let gone: Vec<String> = definitions.local.keys().filter(|name| !fresh.contains_key(*name)).cloned().collect();
        for name in gone {
            definitions.removed.entry(name).or_insert(now);
        }
        for name in fresh.keys() {
            definitions.removed.remove(name);
        }
        definitions.local = fresh;
        definitions.store_generation = Some(generation);
        self.rebuild(&definitions);
        if let Some(allowance) = allowance {
            publish(allowance, &mut definitions, false);
        }
    }

    /// The directory from the store's definitions and the team's: the newest of each name.
    fn rebuild(&self, definitions: &Definitions) {
        let mut directory = Directory::default();
        let names: HashSet<&String> = definitions.local.keys().chain(definitions.team.keys()).collect();
        for name in names {
            let local = definitions.local.get(name);
            let removed = definitions.removed.get(name);
            let team = definitions.team.get(name);
            let local_at = local.map(|m| m.updated_at).or(removed.copied());
            let chosen = match (team, local_at) {
                (Some(team), Some(at)) if team.updated_at > at => (!team.deleted).then(|| team.member()).flatten(),
                (Some(team), None) => (!team.deleted).then(|| team.member()).flatten(),
                _ => local.cloned(),
            };
            if let Some(member) = chosen {
                let member = Arc::new(member);
                directory.by_hash.insert(member.token_sha256, member.clone());
                directory.by_name.insert(name.clone(), member);
            }
        }
        self.directory.store(Arc::new(directory));
    }

    /// Reads the team's definitions (after a reconnect, telling it every one of this process's
    /// first) and takes the newest of each name. Whether the link reconnected since last time
    /// (Redis may have lost the counts: the caller writes them again).
    pub(super) async fn follow_team(&self, allowance: &Allowance) -> bool {
        if !allowance.connected() {
            return false;
        }
        let connects = allowance.connects();
        let reconnected = {
            let mut definitions = self.lock();
            let new = definitions.connects != connects;
            definitions.connects = connects;
            if new {
                definitions.team_version = None;
                publish(allowance, &mut definitions, true);
            }
            new
        };
        let seen = self.lock().team_version;
        let read = allowance.definitions(seen).await;
        self.team_reads.fetch_add(1, Ordering::Relaxed);
        let Some((version, records)) = read else { return reconnected };
        let mut team = HashMap::new();
        for (at, text) in records {
            match serde_json::from_str::<TeamRecord>(&text) {
                Ok(record) if record.updated_at == at => {
                    team.insert(record.name.to_lowercase(), record);
                }
                _ => tracing::debug!("members: a team definition could not be read; ignored"),
            }
        }
        let mut definitions = self.lock();
        if definitions.team != team {
            tracing::debug!(version, members = team.len(), "members: the team's definitions changed");
            definitions.team = team;
            self.rebuild(&definitions);
        }
        definitions.team_version = Some(version);
        reconnected
    }
}

/// Tells the team the definitions it was not told yet (`all`: every one, after a reconnect).
fn publish(allowance: &Allowance, definitions: &mut Definitions, all: bool) {
    if !allowance.connected() {
        return;
    }
    let mut told = Vec::new();
    for (name, member) in &definitions.local {
        if all || definitions.published.get(name) != Some(&member.updated_at) {
            let record = TeamRecord::of(member);
            allowance.define(name, member.updated_at, &serde_json::to_string(&record).expect("a record serializes"));
            told.push((name.clone(), member.updated_at));
        }
    }
    for (name, &at) in &definitions.removed {
        if all || definitions.published.get(name) != Some(&at) {
            let last = definitions.team.get(name).cloned();
            let Some(mut record) = last.or_else(|| definitions.local.get(name).map(TeamRecord::of)) else {
                continue;
            };
            if record.updated_at >= at {
                continue;
            }
            record.deleted = true;
            record.updated_at = at;
            allowance.define(name, at, &serde_json::to_string(&record).expect("a record serializes"));
            told.push((name.clone(), at));
        }
    }
    definitions.published.extend(told);
}
