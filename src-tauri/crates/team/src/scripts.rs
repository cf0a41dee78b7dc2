//! The Lua scripts every write goes through, so that a merge, its message and a check of the
//! team's requests in flight are each one atomic step in Redis. Each one first makes sure its
//! keys hold the type it writes (a key holding anything else is garbage and is deleted), and
//! reads values as the Rust side does: short, space-separated numbers, anything else is absent.
//!
//! The window rule in `MERGE` is the pool's (`Window::newest` in `keypool`): two announcements of
//! one window within 250 ms of each other, the smaller remainder wins; an earlier reset is an old
//! window arriving late.

use std::sync::LazyLock;

use redis::Script;

/// Helpers shared by the scripts.
const PRELUDE: &str = r#"
local function words(s)
  local t = {}
  if type(s) ~= 'string' or #s > 512 then return t end
  for w in string.gmatch(s, '[^ ]+') do t[#t + 1] = w end
  return t
end
local function num(w)
  local n = tonumber(w)
  if n and n == n and n > -1e17 and n < 1e17 then return n end
  return nil
end
local function clean(key, want)
  local kind = redis.call('TYPE', key).ok
  if kind ~= want and kind ~= 'none' then redis.call('DEL', key) end
end
-- The value to keep of a field holding `old` when `new` is written with `op` (see MERGE).
local function merged(op, old, new)
  if not old or op == 'set' then return new end
  local o, n = words(old), words(new)
  if op == 'win' then
    local orem, oat, nrem, nat = num(o[2]), num(o[3]), num(n[2]), num(n[3])
    if not (orem and oat) then return new end
    if not (nrem and nat) then return old end
    if nat + 250 < oat or (nrem > orem and nat <= oat + 250) then return old end
    return new
  end
  local o1, n1 = num(o[1]), num(n[1])
  if not o1 then return new end
  if not n1 or n1 < o1 then return old end
  return new
end
"#;

/// Merges fields into one hash of the team and publishes what the fields now hold.
///
/// KEYS[1]: the hash. ARGV[1]: the writing member; ARGV[2]: the team's channel; ARGV[3]: the
/// hash's name in messages; ARGV[4]: its time to live (ms); then triples of field, op, value,
/// op being `max` (the value with the larger first number wins; on a tie the later write),
/// `win` or `set`. Values are
/// kept whole (never put together from two), so each keeps the MAC its writer sealed it with.
const MERGE: &str = r#"
clean(KEYS[1], 'hash')
local out = {}
for i = 5, #ARGV, 3 do
  local field = ARGV[i]
  local value = merged(ARGV[i + 1], redis.call('HGET', KEYS[1], field), ARGV[i + 2])
  redis.call('HSET', KEYS[1], field, value)
  out[field] = value
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', ARGV[2], cjson.encode({m = ARGV[1], k = ARGV[3], f = out}))
return 1
"#;

/// Whether the team's requests in flight on a scope leave room in its windows for this member's
/// count; if they do, the count is written (when its sequence number is newer) and published.
///
/// The member's count says its requests that ended are over; their answers announced what the
/// windows have left after them, which the member's pool already holds but its writer may not
/// have written yet. So the member's windows come along and are merged first (the newest wins, as
/// in `MERGE`): a count lowered by a request's end is never weighed against a window from before
/// that request's answer, which would leave room for a request the provider then refuses.
///
/// A member asking is there: the script stamps its heartbeat with `now` too. Members are live
/// while their last heartbeat is recent on the asking member's clock; with heartbeats alone, a
/// member whose clock ran a minute past the others' last heartbeats (an injected clock that
/// moves faster than the heartbeats' real-time ticks does) stopped counting requests in flight
/// of members that were there and asking.
///
/// KEYS[1]: the scope's hash; KEYS[2]: the members. ARGV: member, channel, name, ttl, now,
/// live_since, seq, requests, tokens, the member's count as stored (sealed), and its requests and
/// tokens windows as stored (sealed; `''` for none). Counts only the members seen since
/// `live_since`. Answers `{admitted, requests window, tokens window, field,
/// value, …}`: the windows as stored (`''` when absent), then the other live members' counts as
/// stored, for the member to check their seals (this script cannot).
const ADMIT: &str = r#"
clean(KEYS[1], 'hash')
clean(KEYS[2], 'zset')
local me, now, live = ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZADD', KEYS[2], 'GT', ARGV[5], me)
local requests, tokens = tonumber(ARGV[8]), tonumber(ARGV[9])
local told = {}
for i, field in ipairs({'rq', 'tk'}) do
  local new = ARGV[10 + i]
  if new and new ~= '' and #new <= 512 then
    local old = redis.call('HGET', KEYS[1], field)
    local value = merged('win', old, new)
    if value ~= old then
      redis.call('HSET', KEYS[1], field, value)
      told[field] = value
    end
  end
end
local others, others_tokens = 0, 0
local rq, tk, rq_raw, tk_raw = nil, nil, '', ''
local counts = {}
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  local field, value = flat[i], flat[i + 1]
  if field == 'rq' then rq, rq_raw = words(value), value
  elseif field == 'tk' then tk, tk_raw = words(value), value
  elseif string.sub(field, 1, 2) == 'r.' and string.sub(field, 3) ~= me and #value <= 512 then
    local seen = num(redis.call('ZSCORE', KEYS[2], string.sub(field, 3)))
    if seen and seen >= live and seen <= now + 60000 and #counts < 2000 then
      local w = words(value)
      others = others + math.min(math.max(num(w[2]) or 0, 0), 100000)
      others_tokens = others_tokens + math.min(math.max(num(w[3]) or 0, 0), 1e12)
      counts[#counts + 1] = field
      counts[#counts + 1] = value
    end
  end
end
local function room(w, used)
  if not w then return true end
  local limit, left, reset = num(w[1]), num(w[2]), num(w[3])
  if not (left and reset) then return true end
  if reset <= now then
    if not limit then return true end
    left = limit
  end
  return used <= left
end
local admitted = room(rq, others + requests) and room(tk, others_tokens + tokens)
if admitted then
  local field = 'r.' .. me
  local old = num(words(redis.call('HGET', KEYS[1], field))[1])
  if not old or old < tonumber(ARGV[7]) then
    redis.call('HSET', KEYS[1], field, ARGV[10])
    told[field] = ARGV[10]
  end
end
if next(told) then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PUBLISH', ARGV[2], cjson.encode({m = me, k = ARGV[3], f = told}))
end
local out = {admitted and 1 or 0, rq_raw, tk_raw}
for i = 1, #counts do out[#out + 1] = counts[i] end
return out
"#;

/// Binds a session to a key for its time to live, publishing when the key is another.
///
/// KEYS[1]: the binding. ARGV: member, channel, name, ttl, key.
const BIND: &str = r#"
clean(KEYS[1], 'string')
local old = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[4])
if old ~= ARGV[5] then
  redis.call('PUBLISH', ARGV[2], cjson.encode({m = ARGV[1], k = ARGV[3], f = {key = ARGV[5]}}))
end
return 1
"#;

/// A member's heartbeat: seen at `now`; members not seen since `forget_before` are forgotten.
///
/// KEYS[1]: the members. ARGV: member, now, live_since, forget_before, ttl. Answers the members
/// seen since `live_since` (at most 1000; none that claims to be seen more than a minute ahead).
const BEAT: &str = r#"
clean(KEYS[1], 'zset')
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[3], tonumber(ARGV[2]) + 60000, 'LIMIT', 0, 1000)
"#;

/// The fields of each hash in KEYS, those short enough to be a value of the team's: none for a
/// key that is not a hash of at most 4096 fields.
const READ: &str = r#"
local out = {}
for i, key in ipairs(KEYS) do
  local fields = {}
  if redis.call('TYPE', key).ok == 'hash' and redis.call('HLEN', key) <= 4096 then
    local flat = redis.call('HGETALL', key)
    for j = 1, #flat, 2 do
      if #flat[j] <= 80 and #flat[j + 1] <= 512 then
        fields[#fields + 1] = flat[j]
        fields[#fields + 1] = flat[j + 1]
      end
    end
  end
  out[i] = fields
end
return out
"#;

fn with_prelude(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

pub(crate) static MERGE_SCRIPT: LazyLock<Script> = LazyLock::new(|| with_prelude(MERGE));
pub(crate) static ADMIT_SCRIPT: LazyLock<Script> = LazyLock::new(|| with_prelude(ADMIT));
pub(crate) static BIND_SCRIPT: LazyLock<Script> = LazyLock::new(|| with_prelude(BIND));
pub(crate) static BEAT_SCRIPT: LazyLock<Script> = LazyLock::new(|| with_prelude(BEAT));
pub(crate) static READ_SCRIPT: LazyLock<Script> = LazyLock::new(|| with_prelude(READ));

/// Every script, for loading them all after a (re)connect.
pub(crate) fn all() -> [&'static Script; 5] {
    [&MERGE_SCRIPT, &ADMIT_SCRIPT, &BIND_SCRIPT, &BEAT_SCRIPT, &READ_SCRIPT]
}
