//! What the team's Redis keys are called and what their values say, written and read in one
//! place. The layout itself is documented in the crate's front page.
//!
//! Every value is short text: numbers in decimal, separated by one space; timestamps are
//! milliseconds since the Unix epoch on the writing member's clock. Each is stored sealed, its
//! words followed by a MAC under the team secret ([`crate::TeamSecret`]), and read only if the MAC
//! is right. Reading is strict and bounded: a value that is too long, has the wrong number of words
//! or a word that is not a number of the right range is no fact at all.

use std::time::Duration;

use keypool::{Resting, ScopeFacts, Timestamp, Window};

use crate::secret::is_identity;

/// The longest value read; anything longer is garbage.
pub(crate) const MAX_VALUE: usize = 512;

/// The longest scope (model name) shared: what the local API accepts as a model name.
pub(crate) const MAX_SCOPE: usize = 256;

/// How long a group's rest stays in Redis without writes (rests last 15 min at most).
pub(crate) const GROUP_TTL: Duration = Duration::from_secs(3600);
/// A scope's state (a daily quota lasts up to a day).
pub(crate) const SCOPE_TTL: Duration = Duration::from_secs(25 * 3600);
/// A key's rejection and credit.
pub(crate) const KEY_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// Whole milliseconds of `d`, for Redis.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The team's names in Redis: every key under one hash tag, so a Redis Cluster keeps a team on
/// one slot and its scripts may touch several of its keys.
#[derive(Clone, Debug)]
pub(crate) struct Names {
    prefix: String,
    channel: String,
    members: String,
}

impl Names {
    pub fn new(team: &str) -> Names {
        let prefix = format!("{{keypool:{team}}}:");
        Names { channel: format!("{prefix}events"), members: format!("{prefix}members"), prefix }
    }

    /// The Redis key of `target`.
    pub fn key(&self, target: &Target) -> String {
        format!("{}{}", self.prefix, target.suffix())
    }

    /// The target a Redis key of the team names, if it is one this crate writes.
    pub fn target(&self, key: &str) -> Option<Target> {
        Target::parse(key.strip_prefix(&self.prefix)?)
    }

    /// The Redis key `suffix` names under the team's hash tag (for keys no [`Target`] names).
    pub fn prefixed(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    /// The pattern of every key of the team, for SCAN.
    pub fn pattern(&self) -> String {
        // `{` and `}` are not special in a glob; `[` would be, and team names have none.
        format!("{}*", self.prefix)
    }

    pub fn channel(&self) -> &str {
        &self.channel
    }

    pub fn members(&self) -> &str {
        &self.members
    }
}

/// What one Redis key of the team is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// `k:<key>`: one key: its rejection and its credit.
    Key(String),
    /// `g:<group>`: one quota group's rest (all models).
    Group(String),
    /// `s:<group>:<scope>`: one scope of a group: windows, spent, rest, daily quota, the
    /// members' requests in flight.
    Scope(String, String),
    /// `b:<session>`: the key a conversation is bound to.
    Binding(String),
}

impl Target {
    pub fn suffix(&self) -> String {
        match self {
            Target::Key(key) => format!("k:{key}"),
            Target::Group(group) => format!("g:{group}"),
            Target::Scope(group, scope) => format!("s:{group}:{scope}"),
            Target::Binding(session) => format!("b:{session}"),
        }
    }

    pub fn parse(suffix: &str) -> Option<Target> {
        let (family, rest) = suffix.split_once(':')?;
        let id = |text: &str| is_identity(text).then(|| text.to_owned());
        match family {
            "k" => id(rest).map(Target::Key),
            "g" => id(rest).map(Target::Group),
            "b" => id(rest).map(Target::Binding),
            "s" => {
                let (group, scope) = rest.split_once(':')?;
                Some(Target::Scope(id(group)?, id(scope)?))
            }
            _ => None,
        }
    }
}

/// The fields of the hashes.
pub(crate) mod field {
    /// `k:`: `<at> d <status> <enabled_at>` (rejected, while the key was enabled as of
    /// `enabled_at`, 0 for never enabled again) or `<at> e` (enabled again at `at`); the latest
    /// `at` wins. A member believes a rejection only when its `enabled_at` is not older than the
    /// last enable it knows of the key, so a rejection replayed after the key was enabled again
    /// is not.
    pub const AUTH: &str = "auth";
    /// `k:`: `<at> x <probe_at> <probes>` (out of credit) or `<at> ok` (credit again); the latest `at` wins.
    pub const CREDIT: &str = "credit";
    /// `g:` and `s:`: `<until> <streak> <began_at|->`; the later `until` wins (pools merge the
    /// streak and start).
    pub const REST: &str = "rest";
    /// `s:`: the scope's text (a model name); readers take it only if it is what the scope's
    /// identity names.
    pub const SCOPE: &str = "scope";
    /// `s:`: the requests window, `<limit|-> <remaining> <reset_at>`; the newest window wins.
    pub const REQUESTS: &str = "rq";
    /// `s:`: the tokens window, likewise.
    pub const TOKENS: &str = "tk";
    /// `s:`: `<until>`: a refusal said the scope is spent until then; the later wins.
    pub const SPENT: &str = "spent";
    /// `s:`: `<until>`: the scope's daily quota is used up until then; the later wins.
    pub const DAY: &str = "day";
    /// `s:`: `r.<member>` = `<seq> <requests> <tokens>`: that member's requests in flight; the
    /// higher `seq` wins.
    pub const RESERVED: &str = "r.";
    /// `b:` messages: the key identity the session is bound to (the string value itself in Redis).
    pub const BOUND: &str = "key";
}

/// How a script merges a field's new value with the stored one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// The larger first number wins (deadlines; `at`-stamped states; sequence numbers).
    Max,
    /// A window: the newest, by the pool's rule (a later reset is a new window; within one window
    /// what is left only shrinks).
    Window,
    /// The new value replaces the stored one (the scope's text, which readers check against its
    /// identity).
    Set,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Max => "max",
            Op::Window => "win",
            Op::Set => "set",
        }
    }
}

pub(crate) fn rest(resting: Resting) -> String {
    let began = resting.began_at.map_or_else(|| "-".to_owned(), |at| at.as_millis().to_string());
    format!("{} {} {began}", resting.until.as_millis(), resting.streak)
}

pub(crate) fn window(window: Window) -> String {
    let limit = window.limit.map_or_else(|| "-".to_owned(), |limit| limit.to_string());
    format!("{limit} {} {}", window.remaining, window.reset_at.as_millis())
}

pub(crate) fn deadline(until: Timestamp) -> String {
    until.as_millis().to_string()
}

pub(crate) fn rejected(at: Timestamp, status: u16, enabled_at: Option<Timestamp>) -> String {
    format!("{} d {status} {}", at.as_millis(), enabled_at.map_or(0, Timestamp::as_millis))
}

pub(crate) fn enabled(at: Timestamp) -> String {
    format!("{} e", at.as_millis())
}

pub(crate) fn out_of_credit(at: Timestamp, probe_at: Timestamp, probes: u32) -> String {
    format!("{} x {} {probes}", at.as_millis(), probe_at.as_millis())
}

pub(crate) fn credit(at: Timestamp) -> String {
    format!("{} ok", at.as_millis())
}

pub(crate) fn reserved(seq: u64, requests: u64, tokens: u64) -> String {
    format!("{seq} {requests} {tokens}")
}

/// One field of one key, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fact {
    /// `auth`: rejected with `Some(status)`, or enabled again, at `at`; `enabled_at`: the enable
    /// the rejection was made after (0: none), or for an enable its own `at`.
    Auth { at: i64, rejected: Option<u16>, enabled_at: i64 },
    /// `credit`: out of credit (`Some((probe_at, probes))`) or not, at `at`.
    Credit { at: i64, out: Option<(Timestamp, u32)> },
    /// `rest` of a group or a scope.
    Rest(Resting),
    /// `scope`.
    Scope(String),
    /// `rq` (`tokens: false`) or `tk`.
    Window { tokens: bool, window: Window },
    /// `spent`.
    Spent(Timestamp),
    /// `day`.
    Day(Timestamp),
    /// `r.<member>`.
    Reserved { member: String, seq: u64, requests: u64, tokens: u64 },
    /// A binding's key.
    Bound(String),
}

impl Fact {
    /// What `value` of `field` says, if it is well formed.
    pub fn read(field: &str, value: &str) -> Option<Fact> {
        if value.len() > MAX_VALUE {
            return None;
        }
        let words: Vec<&str> = value.split(' ').collect();
        let at = |word: &str| word.parse::<i64>().ok().map(Timestamp::from_millis);
        match (field, words.as_slice()) {
            (field::AUTH, [when, "d", status, enabled_at]) => {
                let status = status.parse::<u16>().ok()?;
                Some(Fact::Auth {
                    at: when.parse().ok()?,
                    rejected: Some(status),
                    enabled_at: enabled_at.parse().ok()?,
                })
            }
            (field::AUTH, [when, "e"]) => {
                let at = when.parse().ok()?;
                Some(Fact::Auth { at, rejected: None, enabled_at: at })
            }
            (field::CREDIT, [when, "x", probe_at, probes]) => {
                Some(Fact::Credit { at: when.parse().ok()?, out: Some((at(probe_at)?, probes.parse().ok()?)) })
            }
            (field::CREDIT, [when, "ok"]) => Some(Fact::Credit { at: when.parse().ok()?, out: None }),
            (field::REST, [until, streak, began]) => Some(Fact::Rest(Resting {
                until: at(until)?,
                streak: streak.parse().ok()?,
                began_at: if *began == "-" { None } else { Some(at(began)?) },
            })),
            (field::SCOPE, _) => (!value.is_empty() && value.len() <= MAX_SCOPE).then(|| Fact::Scope(value.to_owned())),
            (field::REQUESTS | field::TOKENS, [limit, remaining, reset_at]) => Some(Fact::Window {
                tokens: field == field::TOKENS,
                window: Window {
                    limit: if *limit == "-" { None } else { Some(limit.parse().ok()?) },
                    remaining: remaining.parse().ok()?,
                    reset_at: at(reset_at)?,
                },
            }),
            (field::SPENT, [until]) => Some(Fact::Spent(at(until)?)),
            (field::DAY, [until]) => Some(Fact::Day(at(until)?)),
            (field::BOUND, [key]) => is_identity(key).then(|| Fact::Bound((*key).to_owned())),
            (field, [seq, requests, tokens]) => {
                let member = field.strip_prefix(field::RESERVED)?;
                let member_ok =
                    !member.is_empty() && member.len() <= 64 && member.bytes().all(|b| b.is_ascii_hexdigit());
                member_ok.then_some(())?;
                Some(Fact::Reserved {
                    member: member.to_owned(),
                    seq: seq.parse().ok()?,
                    requests: requests.parse().ok()?,
                    tokens: tokens.parse().ok()?,
                })
            }
            _ => None,
        }
    }
}

/// A scope's windows as the team stores them (`rq`, `tk`), those that have not refilled by `now`
/// (a window that has is old news for the team).
pub(crate) fn current_windows(facts: &ScopeFacts, now: Timestamp) -> Vec<(&'static str, String)> {
    let current = |window: Option<keypool::Window>| window.filter(|w| w.reset_at > now);
    let windows = [(field::REQUESTS, current(facts.requests)), (field::TOKENS, current(facts.tokens))];
    windows.into_iter().filter_map(|(name, current)| Some((name, window(current?)))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let resting =
            Resting { until: Timestamp::from_millis(5_000), streak: 3, began_at: Some(Timestamp::from_millis(1)) };
        assert_eq!(Fact::read(field::REST, &rest(resting)), Some(Fact::Rest(resting)), "a rest");
        let open = Resting { began_at: None, ..resting };
        assert_eq!(Fact::read(field::REST, &rest(open)), Some(Fact::Rest(open)), "a rest with no start");
        let w = Window { limit: None, remaining: 4, reset_at: Timestamp::from_millis(9) };
        assert_eq!(Fact::read(field::TOKENS, &window(w)), Some(Fact::Window { tokens: true, window: w }), "window");
        let t = Timestamp::from_millis(77);
        let since = Some(Timestamp::from_millis(50));
        let read = Fact::read(field::AUTH, &rejected(t, 401, since));
        assert_eq!(read, Some(Fact::Auth { at: 77, rejected: Some(401), enabled_at: 50 }), "a rejection");
        let never = Fact::read(field::AUTH, &rejected(t, 403, None));
        assert_eq!(never, Some(Fact::Auth { at: 77, rejected: Some(403), enabled_at: 0 }), "of a key never re-enabled");
        let read = Fact::read(field::AUTH, &enabled(t));
        assert_eq!(read, Some(Fact::Auth { at: 77, rejected: None, enabled_at: 77 }), "an enable");
        let probe_at = Timestamp::from_millis(80);
        let out = Some((probe_at, 2));
        assert_eq!(Fact::read(field::CREDIT, &out_of_credit(t, probe_at, 2)), Some(Fact::Credit { at: 77, out }));
        assert_eq!(Fact::read(field::CREDIT, &credit(t)), Some(Fact::Credit { at: 77, out: None }));
        let seen = Fact::read("r.00ff", &reserved(7, 2, 30));
        assert_eq!(seen, Some(Fact::Reserved { member: "00ff".into(), seq: 7, requests: 2, tokens: 30 }), "reserved");
    }

    #[test]
    fn garbage_is_no_fact() {
        let cases = [
            (field::REST, "1 2"),
            (field::REST, "x 1 -"),
            (field::REST, "99999999999999999999 1 -"),
            (field::REQUESTS, "5 -1 100"),
            (field::AUTH, "1 d 99999 0"),
            (field::AUTH, "1 d 401"),
            (field::AUTH, "1 q"),
            (field::SPENT, ""),
            (field::BOUND, "not-an-identity"),
            ("r.", "1 1 1"),
            ("r.zz", "1 1 1"),
            ("unknown", "1"),
        ];
        for (field, value) in cases {
            assert_eq!(Fact::read(field, value), None, "{field} = {value:?} is garbage");
        }
        assert_eq!(Fact::read(field::SPENT, &"9".repeat(MAX_VALUE + 1)), None, "too long to read");
        assert_eq!(Fact::read(field::SCOPE, &"m".repeat(MAX_SCOPE + 1)), None, "a scope longer than a model name");
    }

    #[test]
    fn keys_of_the_team_name_their_targets_and_nothing_else() {
        let names = Names::new("blue");
        let id = "0123456789abcdef0123456789abcdef";
        let scope = Target::Scope(id.into(), id.into());
        assert_eq!(names.key(&scope), format!("{{keypool:blue}}:s:{id}:{id}"), "under the team's hash tag");
        assert_eq!(names.target(&names.key(&scope)), Some(scope), "read back");
        assert_eq!(names.target("{keypool:red}:g:0123456789abcdef0123456789abcdef"), None, "another team's");
        assert_eq!(names.target(&format!("{{keypool:blue}}:g:{}", "Z".repeat(32))), None, "not an identity");
        assert_eq!(names.target(names.members()), None, "the members' set is no target");
    }
}
