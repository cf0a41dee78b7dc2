//! Members of a server's endpoint, counted for the whole team: a member's requests per minute,
//! tokens per minute, requests in flight and budget are one count in Redis that every replica
//! checks and adds to in one atomic step, so no limit is multiplied by the number of replicas;
//! and the members' definitions (limits, tokens' digests, revocations), which every replica reads
//! back within a poll of [`DEFINITIONS_POLL`].
//!
//! What a limit means is the server's (`keypool-server`'s `members::rules`, whose arithmetic the
//! scripts repeat); this module only keeps the counts and carries opaque definitions. Like the
//! rest of the team, nothing here fails a request: without Redis (or an answer within the
//! request timeout) [`Allowance::admit`] answers `None` and the server decides alone.
//!
//! | Redis key | type | holds |
//! |---|---|---|
//! | `{keypool:T}:m:<member>:rate` | hash | `rq`, `tk`: the requests' and tokens' rates' theoretical arrival times (µs), for as long as they run ahead |
//! | `{keypool:T}:m:<member>:flight` | hash | replica (team member id) → its requests in flight; a replica not seen for a minute is not counted |
//! | `{keypool:T}:m:<member>:spent:<period>` | hash | replica (its stable id) → `<tokens> <micro_usd>` it spent in the period; the sum is the team's |
//! | `{keypool:T}:md` | hash | member name (lower case) → `<updated_at> <definition>`, sealed; the newest `updated_at` wins |
//! | `{keypool:T}:mv` | string | bumped with every definition written |
//! | `{keypool:T}:alert:<event>` | string | the replica that claimed an alert, until the claim expires: one webhook per team |
//!
//! `<member>` is 32 hex digits of HMAC-SHA256 of the member's name under the team secret. A
//! replica's share of a budget is written whole (its own running total, which only grows within
//! a period), so a write repeated or arriving late changes nothing and a Redis that lost its data
//! learns every live replica's share again at its next write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use keypool::Timestamp;
use redis::{Script, Value};
use tokio::sync::mpsc;

use crate::member::Team;
use crate::shared::{broken, Shared};

/// How often a replica reads the definitions' version.
pub const DEFINITIONS_POLL: Duration = Duration::from_millis(250);

/// How long a budget period's shares stay in Redis after the last write: past the longest
/// period a share is kept for (a month), with a margin. A total's stays.
const SPENT_TTL: Duration = Duration::from_secs(40 * 24 * 3600);
/// How long a member's in-flight counts stay without a write.
const FLIGHT_TTL: Duration = Duration::from_secs(3600);

/// A budget's unit, as the scripts compare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetUnit {
    Tokens,
    MicroUsd,
}

/// What a replica asks for a member's request.
#[derive(Debug, Clone)]
pub struct MemberAsk<'a> {
    /// The member's name (its identity in Redis is a MAC of it).
    pub member: &'a str,
    /// Requests per minute, 0: none.
    pub requests_per_minute: u64,
    /// Tokens per minute, 0: none.
    pub tokens_per_minute: u64,
    /// Requests in flight, 0: none.
    pub max_in_flight: u64,
    /// The budget period's name (`day:2026-12-10`, `total`), its limit and unit.
    pub budget: Option<(&'a str, BudgetUnit, u64)>,
    pub now: Timestamp,
}

/// What the team's counts say of a member's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberVerdict {
    /// Counted; what the team spent in the budget's period so far (tokens, micro-USD).
    Admitted { tokens: u64, micro_usd: u64 },
    /// The requests' rate is used: wait this long.
    RequestsPerMinute(Duration),
    /// The tokens' rate is used: wait this long.
    TokensPerMinute(Duration),
    /// The team has this many of the member's requests in flight.
    InFlight(u64),
    /// The budget is spent: what the team spent (tokens, micro-USD).
    Budget { tokens: u64, micro_usd: u64 },
}

/// A write for the allowance's writer, in order.
#[derive(Debug)]
enum Write {
    /// One of this replica's requests of `member` (admitted by Redis) ended.
    Ended { member: String },
    /// `member` used `tokens` (for the tokens' rate) at `now_us`; this replica's running spend in
    /// `period` is now `own`.
    Charged {
        member: String,
        now_us: i64,
        tokens_per_minute: u64,
        tokens: u64,
        period: String,
        replica: String,
        own: (u64, u64),
    },
    /// This replica's requests in flight of `member` (admitted by Redis) are `count` (after a
    /// reconnect).
    Flying { member: String, count: u64 },
    /// A definition of `name` changed at `updated_at` (sealed value).
    Define { name: String, updated_at: i64, value: String },
}

/// How the member admissions went, for metrics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AllowanceCounts {
    /// Round trips to Redis on the request path.
    pub round_trips: u64,
    /// Their total time, in microseconds.
    pub round_trip_us: u64,
    /// Asked, no usable answer in time (the replica decided alone).
    pub unanswered: u64,
}

/// A replica's link for its members' counts and definitions (see the module's page). Made by
/// [`Team::allowance`]; its writer ends with the team.
pub struct Allowance {
    shared: Arc<Shared>,
    /// This replica's stable id (its data dir's), naming its shares of the budgets.
    replica: String,
    writes: mpsc::UnboundedSender<Write>,
    round_trips: AtomicU64,
    round_trip_us: AtomicU64,
    unanswered: AtomicU64,
}

impl Team {
    /// The members' counts and definitions of this team, for a replica whose stable id is
    /// `replica` (it names the replica's shares of budgets: the same across its restarts).
    pub fn allowance(&self, replica: &str) -> Arc<Allowance> {
        let (writes, queue) = mpsc::unbounded_channel();
        let allowance = Arc::new(Allowance {
            shared: self.shared.clone(),
            replica: replica.to_owned(),
            writes,
            round_trips: AtomicU64::new(0),
            round_trip_us: AtomicU64::new(0),
            unanswered: AtomicU64::new(0),
        });
        tokio::spawn(write(allowance.shared.clone(), queue));
        allowance
    }
}

impl Allowance {
    /// Whether Redis answers now (the member's link is connected).
    pub fn connected(&self) -> bool {
        self.shared.is_connected()
    }

    /// How many times the team link (re)connected: a change means Redis may have lost what this
    /// replica wrote before.
    pub fn connects(&self) -> u64 {
        self.shared.seen.lock().connects
    }

    /// Replicas (and desktops) seen in the last minute, this one included; 1 when unknown.
    pub fn live_members(&self) -> usize {
        self.shared.seen.lock().members.max(1)
    }

    pub fn counts(&self) -> AllowanceCounts {
        AllowanceCounts {
            round_trips: self.round_trips.load(Ordering::Relaxed),
            round_trip_us: self.round_trip_us.load(Ordering::Relaxed),
            unanswered: self.unanswered.load(Ordering::Relaxed),
        }
    }

    fn key(&self, member: &str, what: &str) -> String {
        let id = self.shared.secret.member_identity(&member.to_lowercase());
        self.shared.names.prefixed(&format!("m:{id}:{what}"))
    }

    /// Checks `ask` against the team's counts and counts the request if it passes, in one round
    /// trip bounded by the request timeout. `None`: Redis is not there, or gave no usable answer
    /// in time (the request may or may not have been counted: the caller decides alone).
    pub async fn admit(&self, ask: &MemberAsk<'_>) -> Option<MemberVerdict> {
        if !self.shared.is_connected() {
            return None;
        }
        let (period, unit, limit) = match ask.budget {
            Some((period, BudgetUnit::Tokens, limit)) => (period, "t", limit),
            Some((period, BudgetUnit::MicroUsd, limit)) => (period, "c", limit),
            None => ("none", "", 0),
        };
        let now_ms = ask.now.as_millis();
        let mut invocation = ADMIT_MEMBER.prepare_invoke();
        invocation
            .key(self.key(ask.member, "rate"))
            .key(self.key(ask.member, "flight"))
            .key(self.key(ask.member, &format!("spent:{period}")))
            .key(self.shared.names.members())
            .arg(now_ms.saturating_mul(1000))
            .arg(ask.requests_per_minute)
            .arg(ask.tokens_per_minute)
            .arg(ask.max_in_flight)
            .arg(unit)
            .arg(limit)
            .arg(&self.shared.member)
            .arg(now_ms - crate::mirror::LIVE.as_millis() as i64)
            .arg(millis(FLIGHT_TTL));
        let mut conn = self.shared.conn.clone();
        let started = Instant::now();
        let answer =
            tokio::time::timeout(self.shared.request_timeout, invocation.invoke_async::<Vec<i64>>(&mut conn)).await;
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.round_trip_us.fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        let verdict = match answer {
            Ok(Ok(answer)) => verdict(&answer),
            Ok(Err(error)) => {
                if broken(&error) {
                    self.shared.lose_connection();
                }
                tracing::debug!(%error, "team: a member's admission failed; deciding alone");
                None
            }
            Err(_) => None,
        };
        if verdict.is_none() {
            self.unanswered.fetch_add(1, Ordering::Relaxed);
        }
        verdict
    }

    /// One of this replica's requests of `member` that Redis admitted ended.
    pub fn ended(&self, member: &str) {
        let _ = self.writes.send(Write::Ended { member: self.key(member, "flight") });
    }

    /// `member` used `tokens` at `now` (charged to its tokens' rate when it has one); this
    /// replica's running spend in the budget period `period` is `own` (tokens, micro-USD).
    pub fn charged(
        &self,
        member: &str,
        now: Timestamp,
        tokens_per_minute: u64,
        tokens: u64,
        period: &str,
        own: (u64, u64),
    ) {
        let write = Write::Charged {
            member: member.to_lowercase(),
            now_us: now.as_millis().saturating_mul(1000),
            tokens_per_minute,
            tokens,
            period: period.to_owned(),
            replica: self.replica.clone(),
            own,
        };
        let _ = self.writes.send(write);
    }

    /// This replica has `count` requests of `member` in flight that Redis admitted (told after a
    /// reconnect, when Redis may have forgotten them).
    pub fn flying(&self, member: &str, count: u64) {
        let _ = self.writes.send(Write::Flying { member: self.key(member, "flight"), count });
    }

    /// `definition` of the member `name`, changed at `updated_at` (ms), for every replica: kept
    /// unless the team holds a newer one.
    pub fn define(&self, name: &str, updated_at: i64, definition: &str) {
        let name = name.to_lowercase();
        let value = format!("{updated_at} {definition}");
        let value = self.shared.secret.seal("md", &name, &value);
        let _ = self.writes.send(Write::Define { name, updated_at, value });
    }

    /// The definitions the team holds, if their version is not `seen`: the version and each
    /// member's `(updated_at, definition)` whose seal is right. `None`: unchanged, or Redis not
    /// there.
    pub async fn definitions(&self, seen: Option<u64>) -> Option<(u64, Vec<(i64, String)>)> {
        if !self.shared.is_connected() {
            return None;
        }
        let mut conn = self.shared.conn.clone();
        let version_key = self.shared.names.prefixed("mv");
        let mut get = redis::cmd("GET");
        get.arg(&version_key);
        let read = get.query_async::<Option<u64>>(&mut conn);
        let version = match tokio::time::timeout(Duration::from_secs(2), read).await {
            Ok(Ok(version)) => version.unwrap_or(0),
            Ok(Err(error)) => {
                if broken(&error) {
                    self.shared.lose_connection();
                }
                return None;
            }
            Err(_) => return None,
        };
        if seen == Some(version) {
            return None;
        }
        let mut hgetall = redis::cmd("HGETALL");
        hgetall.arg(self.shared.names.prefixed("md"));
        let all = hgetall.query_async::<Value>(&mut conn);
        let flat = match tokio::time::timeout(Duration::from_secs(2), all).await {
            Ok(Ok(flat)) => flat,
            _ => return None,
        };
        let mut out = Vec::new();
        for (name, stored) in text_pairs(flat) {
            let Some(value) = self.shared.secret.open("md", &name, &stored) else {
                tracing::debug!(member = %name, "team: a member's definition has a wrong seal; ignored");
                continue;
            };
            let Some((at, definition)) = value.split_once(' ') else { continue };
            if let Ok(at) = at.parse::<i64>() {
                out.push((at, definition.to_owned()));
            }
        }
        Some((version, out))
    }
}

impl Allowance {
    /// Claims the alert `event` for the team for `ttl`: `Some(true)` when this replica is the first
    /// to (it sends it), `Some(false)` when another did; `None` when Redis did not answer (the
    /// replica decides alone). The event's name is a MAC under the team secret in Redis.
    pub async fn claim(&self, event: &str, ttl: Duration) -> Option<bool> {
        if !self.shared.is_connected() {
            return None;
        }
        let id = self.shared.secret.member_identity(&format!("alert:{event}"));
        let mut set = redis::cmd("SET");
        set.arg(self.shared.names.prefixed(&format!("alert:{id}")))
            .arg(&self.shared.member)
            .arg("NX")
            .arg("PX")
            .arg(millis(ttl));
        let mut conn = self.shared.conn.clone();
        match tokio::time::timeout(Duration::from_secs(2), set.query_async::<Option<String>>(&mut conn)).await {
            Ok(Ok(answer)) => Some(answer.is_some()),
            Ok(Err(error)) => {
                if broken(&error) {
                    self.shared.lose_connection();
                }
                None
            }
            Err(_) => None,
        }
    }

    /// The team's identity of this replica's key `key` (the same on every replica holding the
    /// key, whatever its id there), once the team knows the key.
    pub fn key_identity(&self, key: &keypool::KeyId) -> Option<String> {
        self.shared.directory().ids(key).map(|ids| ids.key.clone())
    }
}

fn millis(d: Duration) -> u64 {
    crate::layout::millis(d)
}

/// The script's answer as a verdict.
fn verdict(answer: &[i64]) -> Option<MemberVerdict> {
    let positive = |i: usize| answer.get(i).map(|&n| u64::try_from(n).unwrap_or(0));
    let wait = |i: usize| positive(i).map(Duration::from_micros);
    Some(match answer.first()? {
        0 => MemberVerdict::Admitted { tokens: positive(1)?, micro_usd: positive(2)? },
        1 => MemberVerdict::RequestsPerMinute(wait(1)?),
        2 => MemberVerdict::TokensPerMinute(wait(1)?),
        3 => MemberVerdict::InFlight(positive(1)?),
        4 => MemberVerdict::Budget { tokens: positive(1)?, micro_usd: positive(2)? },
        _ => return None,
    })
}

/// A hash's fields from `HGETALL` (a flat list, or a RESP3 map), text only.
fn text_pairs(value: Value) -> Vec<(String, String)> {
    let text = |value: Value| match value {
        Value::BulkString(bytes) => String::from_utf8(bytes).ok(),
        Value::SimpleString(text) => Some(text),
        _ => None,
    };
    match value {
        Value::Array(items) => {
            let mut items = items.into_iter();
            let mut out = Vec::new();
            while let (Some(name), Some(value)) = (items.next(), items.next()) {
                if let (Some(name), Some(value)) = (text(name), text(value)) {
                    out.push((name, value));
                }
            }
            out
        }
        Value::Map(entries) => entries.into_iter().filter_map(|(n, v)| Some((text(n)?, text(v)?))).collect(),
        _ => Vec::new(),
    }
}

/// The allowance's writer: its writes in order, each skipped while Redis is not there (what they
/// said is written again: a share by the next charge or reconnect, a definition by the server's
/// next apply).
async fn write(shared: Arc<Shared>, mut queue: mpsc::UnboundedReceiver<Write>) {
    while let Some(write) = queue.recv().await {
        if shared.stopped.load(Ordering::Acquire) {
            return;
        }
        if !shared.is_connected() {
            continue;
        }
        let mut conn = shared.conn.clone();
        let mut invocation;
        match &write {
            Write::Ended { member } => {
                invocation = RELEASE_MEMBER.prepare_invoke();
                invocation.key(member).arg(&shared.member);
            }
            Write::Flying { member, count } => {
                invocation = FLYING_MEMBER.prepare_invoke();
                invocation.key(member).arg(&shared.member).arg(*count).arg(millis(FLIGHT_TTL));
            }
            Write::Charged { member, now_us, tokens_per_minute, tokens, period, replica, own } => {
                let id = shared.secret.member_identity(member);
                invocation = CHARGE_MEMBER.prepare_invoke();
                let ttl = if period == "total" { 0 } else { millis(SPENT_TTL) };
                invocation
                    .key(shared.names.prefixed(&format!("m:{id}:rate")))
                    .key(shared.names.prefixed(&format!("m:{id}:spent:{period}")))
                    .arg(*now_us)
                    .arg(*tokens_per_minute)
                    .arg(*tokens)
                    .arg(replica)
                    .arg(own.0)
                    .arg(own.1)
                    .arg(ttl);
            }
            Write::Define { name, updated_at, value } => {
                invocation = DEFINE_MEMBER.prepare_invoke();
                invocation
                    .key(shared.names.prefixed("md"))
                    .key(shared.names.prefixed("mv"))
                    .arg(name)
                    .arg(*updated_at)
                    .arg(value);
            }
        }
        match tokio::time::timeout(Duration::from_secs(2), invocation.invoke_async::<Value>(&mut conn)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) if broken(&error) => shared.lose_connection(),
            Ok(Err(error)) => tracing::debug!(%error, "team: a member's count was refused"),
            Err(_) => shared.lose_connection(),
        }
    }
}

/// Checks a member's request against the team's counts and counts it.
///
/// KEYS: the member's rates, its in-flight counts, its spend in the budget's period, the team's
/// members. ARGV: now (µs), requests per minute, tokens per minute, max in flight (0: none),
/// budget unit (`t`, `c` or empty), budget limit, this replica's team member id, live since (ms),
/// in-flight ttl (ms). Answers `{0, tokens, micro_usd}` (admitted, the period's spend), `{1, wait
/// µs}` (requests' rate), `{2, wait µs}` (tokens' rate), `{3, in flight}`, `{4, tokens,
/// micro_usd}` (budget spent). Nothing is written unless admitted.
const ADMIT_MEMBER_LUA: &str = r#"
local function clean(key, want)
  local kind = redis.call('TYPE', key).ok
  if kind ~= want and kind ~= 'none' then redis.call('DEL', key) end
end
for i = 1, 3 do clean(KEYS[i], 'hash') end
clean(KEYS[4], 'zset')
local MINUTE = 60000000
local now = tonumber(ARGV[1])
local rpm, tpm, maxf = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local unit, limit, me, live = ARGV[5], tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local tokens, micro = 0, 0
if unit ~= '' then
  local spent = redis.call('HGETALL', KEYS[3])
  for i = 1, #spent, 2 do
    local t, c = string.match(spent[i + 1], '^(%d+) (%d+)$')
    if t then
      tokens = tokens + tonumber(t)
      micro = micro + tonumber(c)
    end
  end
  if (unit == 't' and tokens >= limit) or (unit == 'c' and micro >= limit) then
    return {4, tokens, micro}
  end
end
if maxf > 0 then
  local flying = 0
  local flat = redis.call('HGETALL', KEYS[2])
  for i = 1, #flat, 2 do
    local seen = tonumber(redis.call('ZSCORE', KEYS[4], flat[i]))
    local count = tonumber(flat[i + 1]) or 0
    if flat[i] == me or (seen and seen >= live) then
      flying = flying + math.max(count, 0)
    else
      redis.call('HDEL', KEYS[2], flat[i])
    end
  end
  if flying >= maxf then return {3, flying} end
end
local rates = redis.call('HMGET', KEYS[1], 'rq', 'tk')
local rq, tk = tonumber(rates[1]) or 0, tonumber(rates[2]) or 0
if tpm > 0 and tk - now >= MINUTE then return {2, tk - now - MINUTE + 1} end
if rpm > 0 then
  local nxt = math.max(rq, now) + MINUTE / rpm
  if nxt - now > MINUTE then return {1, nxt - now - MINUTE} end
  redis.call('HSET', KEYS[1], 'rq', string.format('%.0f', nxt))
  redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((math.max(nxt, tk) - now) / 1000), 1000) + 60000)
end
if maxf > 0 then
  redis.call('HINCRBY', KEYS[2], me, 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[9])
end
return {0, tokens, micro}
"#;

/// One of a replica's requests of a member ended. KEYS[1]: the member's in-flight counts.
/// ARGV[1]: the replica's team member id.
const RELEASE_MEMBER_LUA: &str = r#"
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 0 end
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
"#;

/// A replica's in-flight count of a member, written whole. KEYS[1]: the counts. ARGV: the
/// replica's team member id, the count, the ttl (ms).
const FLYING_MEMBER_LUA: &str = r#"
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
"#;

/// A member's use: its tokens' rate moves by the tokens, and this replica's share of the period's
/// spend is set to its running total (kept when the stored one is larger: a late write).
///
/// KEYS: the member's rates, its spend in the period. ARGV: now (µs), tokens per minute (0:
/// none), tokens, this replica's stable id, its running tokens, its running micro-USD, the
/// spend's ttl (ms; 0: none).
const CHARGE_MEMBER_LUA: &str = r#"
for i = 1, 2 do
  local kind = redis.call('TYPE', KEYS[i]).ok
  if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[i]) end
end
local MINUTE = 60000000
local now, tpm, used = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if tpm > 0 and used > 0 then
  local tk = math.max(tonumber(redis.call('HGET', KEYS[1], 'tk')) or 0, now) + MINUTE * used / tpm
  local rq = tonumber(redis.call('HGET', KEYS[1], 'rq')) or 0
  redis.call('HSET', KEYS[1], 'tk', string.format('%.0f', tk))
  redis.call('PEXPIRE', KEYS[1], math.ceil((math.max(tk, rq) - now) / 1000) + 60000)
end
if ARGV[4] ~= '' then
  local old = redis.call('HGET', KEYS[2], ARGV[4])
  local t, c = 0, 0
  if old then
    local ot, oc = string.match(old, '^(%d+) (%d+)$')
    t, c = tonumber(ot) or 0, tonumber(oc) or 0
  end
  redis.call('HSET', KEYS[2], ARGV[4], string.format('%.0f %.0f', math.max(t, tonumber(ARGV[5])), math.max(c, tonumber(ARGV[6]))))
  if tonumber(ARGV[7]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[7]) else redis.call('PERSIST', KEYS[2]) end
end
return 1
"#;

/// A member's definition, kept unless the stored one is newer; the version bumped when it changes.
///
/// KEYS: the definitions, their version. ARGV: the member's name, its `updated_at`, the sealed
/// value (`<updated_at> <definition> <mac>`).
const DEFINE_MEMBER_LUA: &str = r#"
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local at = tonumber(string.match(old, '^(%d+) '))
  if at and at > tonumber(ARGV[2]) then return 0 end
  if old == ARGV[3] then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('INCR', KEYS[2])
return 1
"#;

static ADMIT_MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(ADMIT_MEMBER_LUA));
static RELEASE_MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(RELEASE_MEMBER_LUA));
static FLYING_MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(FLYING_MEMBER_LUA));
static CHARGE_MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(CHARGE_MEMBER_LUA));
static DEFINE_MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(DEFINE_MEMBER_LUA));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_answers_read_as_verdicts() {
        assert_eq!(verdict(&[0, 12, 34]), Some(MemberVerdict::Admitted { tokens: 12, micro_usd: 34 }));
        assert_eq!(verdict(&[1, 30_000_000]), Some(MemberVerdict::RequestsPerMinute(Duration::from_secs(30))));
        assert_eq!(verdict(&[3, 2]), Some(MemberVerdict::InFlight(2)));
        assert_eq!(verdict(&[4, 5, 6]), Some(MemberVerdict::Budget { tokens: 5, micro_usd: 6 }));
        assert_eq!(verdict(&[9]), None, "an answer this build does not know is none");
        assert_eq!(verdict(&[]), None);
    }
}
