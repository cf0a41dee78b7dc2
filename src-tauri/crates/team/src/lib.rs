//! # keypool-team: pools that share what they learn, through Redis
//!
//! Several Keypool members (desktop apps of one team, replicas of one server) use the same keys.
//! Alone, each learns of a 429, a spent window, a revoked key or an empty account only by hitting
//! it, and admission by announced windows cannot see what the others spend. A [`Team`] joins a
//! member's pool to the others': it is the completion service's [`keypool_llm::TeamLink`], tells
//! the team what its pool learns and hands out, and merges what the others learned into its pool
//! ([`keypool::KeyPool::merge`], which believes a remote member only as far as its own caps go).
//!
//! ## What is shared
//!
//! Per key: a provider's rejection (a verified 401/403; enabling the key again on any member lifts
//! it everywhere) and running out of credit. Per quota group (a key without one is its own): the
//! rest after rate limits. Per group and scope (model): the windows the provider announced, a
//! refusal's "spent until", the per-minute rest, the daily quota's end, and every member's
//! requests in flight, which the pools count against the same windows, so that admission sees the
//! whole team's traffic. Per conversation: the key it is bound to, for as long as a binding lives
//! without use. Usage stays in each member's own ledger.
//!
//! ## The Redis layout
//!
//! All of a team's data sits under one hash tag, `{keypool:TEAM}`, so the layout also works on a
//! Redis Cluster (one slot per team, and scripts may touch several of its keys). Identities are
//! 32 hex digits of HMAC-SHA256 under the team secret ([`TeamSecret`]): a key's is the MAC of its
//! resolved value, a named quota group's, a scope's and a conversation's the MAC of their names
//! under a prefix of their own. No key, key prefix or preview is ever written, nor a session id.
//!
//! | Redis key | type | holds |
//! |---|---|---|
//! | `{keypool:T}:members` | zset | member id → last heartbeat, or request admitted (ms) |
//! | `{keypool:T}:k:<key>` | hash | `auth` = `<at> d <status>` or `<at> e`; `credit` = `<at> x <probe_at> <probes>` or `<at> ok` (the latest `at` wins) |
//! | `{keypool:T}:g:<group>` | hash | `rest` = `<until> <streak> <began_at or ->` (the later `until` wins) |
//! | `{keypool:T}:s:<group>:<scope>` | hash | `scope` (the model's name); `rq`, `tk` = `<limit or -> <remaining> <reset_at>` (the newest window wins); `spent`, `day` = `<until>`; `rest`; `r.<member>` = `<seq> <requests> <tokens>` (a member's requests in flight; the higher `seq` wins) |
//! | `{keypool:T}:b:<session>` | string | the key identity the conversation is bound to, expiring after the binding's idle time |
//! | `{keypool:T}:events` | channel | one JSON message per write: `{"m": member, "k": "s:<group>:<scope>", "f": {field: value}}`, the fields as they are after the write |
//!
//! Times are milliseconds since the Unix epoch on the writing member's clock. Every value is
//! stored *sealed*: its words are followed by a 64-bit MAC, under the team secret, of the key's
//! name, the field and the words, and a member believes only values whose MAC is right. Someone
//! who can write to the Redis but lacks the secret can delete or garble the team's state (the
//! members then know less), not forge it: no disable, no rest, no binding. Only the counts of
//! requests in flight are checked inside Redis, which cannot check MACs; a forged count can make a
//! member wait for a window's reset (at most the 15 min cap), never longer. Hashes expire when
//! nothing is written to them for a while (a group's rest after an hour, a scope's state after
//! 25 hours, a key's after 30 days).
//!
//! ## How a change travels
//!
//! A member writes through a Lua script that merges the value with what is stored (the same rule
//! the pool applies) and publishes what the fields now hold, in one atomic step; every member
//! subscribed to the channel applies it (within a millisecond on one machine). Writes leave the
//! request on a queue and are pipelined by one writer task. On the request's path there are at
//! most two round trips, each bounded by [`TeamConfig::request_timeout`]: reading a conversation's
//! binding when this member has none, and, when a window could refuse the request, one script that
//! checks the team's requests in flight against the window and counts this one (with a new
//! binding written in the same round trip). On (re)connect a member loads its scripts, writes its
//! own requests in flight and what it could not write while away, and reads everything back.
//!
//! ## When Redis is not there
//!
//! No request fails or waits for it: the request path skips Redis while the member is
//! disconnected, and gives up on it after the timeout otherwise, deciding alone. The member
//! reconnects with backoff (100 ms doubling to 5 s) and merges the team's state again;
//! [`Team::status`] says `disconnected` meanwhile. Values that are garbage (wrong types, words that
//! are no numbers, huge values, deadlines years ahead) are ignored or bounded by the pool's caps;
//! a script that finds a key of the wrong type deletes it and writes its own.
#![forbid(unsafe_code)]

mod admissions;
mod allowance;
mod apply;
mod directory;
mod layout;
mod link;
mod member;
mod mirror;
mod scripts;
mod secret;
mod shared;
mod sync;
#[cfg(feature = "test-support")]
pub mod test_redis;

use std::time::Duration;

pub use allowance::{Allowance, AllowanceCounts, BudgetUnit, MemberAsk, MemberVerdict, DEFINITIONS_POLL};
pub use member::{check_url, valid_team, Team};
pub use secret::{BadSecret, TeamSecret, SECRET_BYTES};

/// How to reach a team.
#[derive(Clone, Debug)]
pub struct TeamConfig {
    /// `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS).
    pub url: String,
    /// The team's name: 1 to 64 of `A-Z a-z 0-9 . _ -`.
    pub team: String,
    /// The secret every member of the team holds.
    pub secret: TeamSecret,
    /// How long an operation on a request's path may take before the member decides alone
    /// (default 30 ms).
    pub request_timeout: Duration,
    /// How often a member says it is there, and checks the connection (default 1 s).
    pub heartbeat: Duration,
}

impl TeamConfig {
    /// The team `team` at `url` with `secret`, and the default timings.
    pub fn new(url: impl Into<String>, team: impl Into<String>, secret: TeamSecret) -> TeamConfig {
        TeamConfig {
            url: url.into(),
            team: team.into(),
            secret,
            request_timeout: Duration::from_millis(30),
            heartbeat: Duration::from_secs(1),
        }
    }
}

/// Why a team cannot be joined. No variant carries the URL (it may hold a password) or the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TeamError {
    /// The team's name is empty, too long or has other characters.
    #[error("a team name is 1 to 64 letters, digits, dots, dashes or underscores")]
    BadName,
    /// The URL is not a `redis://` or `rediss://` URL the client can use.
    #[error("the Redis URL must be redis://host:port or rediss://host:port: {reason}")]
    BadUrl {
        /// What is wrong with it, without the URL.
        reason: String,
    },
}

/// Whether the member is with its team.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamState {
    /// The team link is stopped.
    Off,
    /// Redis answers; changes travel both ways.
    Connected,
    /// Redis cannot be reached (or the member has not reached it yet): the member decides alone
    /// and reconnects with backoff.
    Disconnected,
}

impl TeamState {
    /// `off`, `connected` or `disconnected`, as `/healthz` and the app say it.
    pub fn as_str(self) -> &'static str {
        match self {
            TeamState::Off => "off",
            TeamState::Connected => "connected",
            TeamState::Disconnected => "disconnected",
        }
    }
}

/// How the team's side of this member's hand-outs went since it joined, per path (see
/// [`Team::admissions`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdmissionCounts {
    /// The team's `ADMIT` found room in the key's windows.
    pub admitted: u64,
    /// It found the team's requests in flight fill them (the request selected again).
    pub full: u64,
    /// Not asked, decided alone: no window known for the scope, or Redis not there.
    pub unasked: u64,
    /// Asked, no answer within the request timeout: decided alone.
    pub timed_out: u64,
    /// Asked, the answer failed or could not be read: decided alone.
    pub failed: u64,
}

/// How the member stands with its team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamStatus {
    pub state: TeamState,
    /// Members seen in the last minute, this one included (as of the last heartbeat).
    pub members: usize,
    /// When a change from another member was last received.
    pub last_change: Option<keypool::Timestamp>,
    /// How many times the member connected and merged the team's state (1 after the first
    /// connect; each reconnect adds one).
    pub connects: u64,
}
