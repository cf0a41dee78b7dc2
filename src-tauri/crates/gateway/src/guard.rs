//! Who may use the endpoint: a client with the local token (Bearer, `x-api-key`,
//! `x-goog-api-key` or Gemini's `?key=`), not a web page (a request with an `Origin`). Wrong
//! tokens in a row from one peer (its IP address) lock that peer out for a while, the right token
//! included: a lockout the right token passes would let a guesser test guesses at full speed.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use keypool::{Clock, Timestamp};
use sha2::{Digest, Sha256};

use keypool_llm::wire::{Problem, WireFormat};

use crate::answers::error;
use crate::forwarded::{TrustedProxies, Via};
use crate::members::{Caller, Members, Refusal};
use crate::Observer;

/// More wrong tokens than this within [`FAILURE_WINDOW`] lock failures out.
pub const MAX_FAILURES: usize = 10;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// How long a peer's requests are answered with "too many attempts", without being checked.
pub const LOCKOUT: Duration = Duration::from_secs(30);

/// How many peers' failures are kept before those neither locked out nor failing lately go.
const MAX_PEERS_KEPT: usize = 4096;

tokio::task_local! {
    /// The address of the client whose request is being answered, set by the connection that
    /// carries it (see `connections`): its peer's, or the one a trusted proxy named.
    pub(crate) static PEER: IpAddr;
}

/// The SHA-256 of a token: what is stored and compared (the token itself is shown once).
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Why a request was refused before anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// Its `Host` is not this machine (nor a host the server was told to answer to): a page that
    /// rebound a name of its own to 127.0.0.1 (DNS rebinding) is not served.
    Host,
    /// It came from a web page.
    Origin,
    /// No token, or not this one.
    Token,
    /// Too many wrong tokens lately: try again in this many seconds.
    LockedOut(u64),
    /// A member's token that may not be used now (expired, revoked). Not a wrong token: it
    /// counts toward no lockout.
    Member(Refusal),
}

impl Denied {
    /// The refusal, said in `format`.
    pub(crate) fn response(self, format: WireFormat) -> axum::response::Response {
        match self {
            Denied::Host => {
                error(format, Problem::Misdirected, "this endpoint answers only to this machine's names", None)
            }
            Denied::Origin => error(format, Problem::Forbidden, "requests from web pages are refused", None),
            Denied::Token => error(format, Problem::Unauthorized, "the local API token is missing or wrong", None),
            Denied::LockedOut(seconds) => error(
                format,
                Problem::RateLimited,
                format!("too many wrong tokens: try again in {seconds} s"),
                Some(seconds),
            ),
            Denied::Member(refused) => refused.response(format),
        }
    }
}

pub struct Guard {
    hash: Mutex<[u8; 32]>,
    /// Host names served besides loopback ones (lower case, without a port).
    allowed_hosts: Mutex<Vec<String>>,
    /// The address a server listens on, as a `Host` names it (kept apart from the allowed hosts,
    /// which a reload replaces).
    listen_host: Mutex<Option<String>>,
    /// Each peer's wrong tokens (`None`: a request no connection named, as in unit tests).
    failures: Mutex<HashMap<Option<IpAddr>, Failures>>,
    /// Whose other tokens are served, besides the owner's.
    members: Option<Arc<dyn Members>>,
    /// The reverse proxies whose forwarded header names the client.
    proxies: Mutex<TrustedProxies>,
    /// Told of lockouts and of forwarded headers ignored.
    observer: Option<Arc<dyn Observer>>,
    clock: Arc<dyn Clock>,
}

#[derive(Default)]
struct Failures {
    recent: VecDeque<Timestamp>,
    locked_until: Option<Timestamp>,
}

impl Guard {
    pub fn new(hash: [u8; 32], clock: Arc<dyn Clock>) -> Guard {
        Guard {
            hash: Mutex::new(hash),
            allowed_hosts: Mutex::default(),
            listen_host: Mutex::default(),
            failures: Mutex::default(),
            members: None,
            proxies: Mutex::default(),
            observer: None,
            clock,
        }
    }

    /// Serves the tokens of `members` too, each as its member.
    pub fn with_members(self, members: Option<Arc<dyn Members>>) -> Guard {
        Guard { members, ..self }
    }

    /// Tells `observer` of lockouts and of forwarded headers ignored.
    pub fn with_observer(self, observer: Option<Arc<dyn Observer>>) -> Guard {
        Guard { observer, ..self }
    }

    /// Reads the client's address from these proxies' forwarded header from now on.
    pub fn trust_proxies(&self, proxies: TrustedProxies) {
        *self.proxies.lock().unwrap_or_else(|e| e.into_inner()) = proxies;
    }

    /// The address a request from `peer` with `headers` is from: its lockout's, its log line's.
    pub(crate) fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let client = self.proxies.lock().unwrap_or_else(|e| e.into_inner()).client(peer, headers);
        if let (Via::Ignored, Some(observer)) = (client.via, &self.observer) {
            observer.forwarded_ignored();
        }
        client.address
    }

    pub fn set_hash(&self, hash: [u8; 32]) {
        *self.hash.lock().unwrap_or_else(|e| e.into_inner()) = hash;
    }

    /// Serves `hosts` too, besides loopback names and addresses.
    pub fn allow_hosts(&self, hosts: impl IntoIterator<Item = String>) {
        let hosts = hosts.into_iter().map(|host| host.trim().trim_end_matches('.').to_ascii_lowercase()).collect();
        *self.allowed_hosts.lock().unwrap_or_else(|e| e.into_inner()) = hosts;
    }

    /// Serves the address the endpoint listens on too (`10.0.0.5`, `[fd00::1]`), unless it is
    /// the unspecified address (`0.0.0.0`, `::`), which names no host.
    pub fn listening_on(&self, address: std::net::SocketAddr) {
        if address.ip().is_unspecified() {
            return;
        }
        let name = match address.ip() {
            std::net::IpAddr::V4(ip) => ip.to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        };
        *self.listen_host.lock().unwrap_or_else(|e| e.into_inner()) = Some(name);
    }

    /// Whether the request's `Host` (its name, without the port) is served: `localhost`, a
    /// loopback address (127.0.0.0/8, `[::1]`), the address listened on, or an allowed host. No
    /// `Host`: not served.
    pub fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get("host").and_then(|v| v.to_str().ok()) else { return false };
        let name = host_name(host);
        if name == "localhost" {
            return true;
        }
        if self.listen_host.lock().unwrap_or_else(|e| e.into_inner()).as_deref() == Some(&*name) {
            return true;
        }
        if let Ok(ip) = name.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
            return ip.is_loopback();
        }
        self.allowed_hosts.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|allowed| *allowed == name)
    }

    /// Whether the request's headers offer a token whose SHA-256 is `hash` (a token other than the
    /// endpoint's, such as a metrics scraper's). Counts toward no lockout.
    pub fn offers(&self, headers: &HeaderMap, hash: &[u8; 32]) -> bool {
        tokens_of(headers).any(|given| same(&token_hash(&given), hash))
    }

    /// Whether a request with `headers` and the URL `query` may be served, and whose token it
    /// carries.
    pub fn check(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Caller, Denied> {
        if !self.host_allowed(headers) {
            return Err(Denied::Host);
        }
        if headers.contains_key("origin") {
            return Err(Denied::Origin);
        }
        let now = self.clock.now();
        let peer = PEER.try_with(|peer| *peer).ok();
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() > MAX_PEERS_KEPT {
            failures.retain(|_, f| {
                f.locked_until.is_some_and(|until| until > now)
                    || f.recent.back().is_some_and(|&at| now.saturating_duration_since(at) <= FAILURE_WINDOW)
            });
        }
        let failures = failures.entry(peer).or_default();
        if let Some(until) = failures.locked_until.filter(|&until| until > now) {
            return Err(Denied::LockedOut(until.saturating_duration_since(now).as_secs().max(1)));
        }
        let expected = *self.hash.lock().unwrap_or_else(|e| e.into_inner());
        for given in tokens_of(headers).chain(query_key(query).map(Cow::Owned)) {
            let hash = token_hash(&given);
            if same(&hash, &expected) {
                return Ok(Caller::Owner);
            }
            match self.members.as_ref().and_then(|members| members.identify(&hash)) {
                Some(Ok(member)) => return Ok(Caller::Member(member)),
                Some(Err(refusal)) => return Err(Denied::Member(refusal)),
                None => {}
            }
        }
        failures.recent.push_back(now);
        while failures.recent.front().is_some_and(|&at| now.saturating_duration_since(at) > FAILURE_WINDOW) {
            failures.recent.pop_front();
        }
        if failures.recent.len() > MAX_FAILURES {
            let client = peer.map(|peer| peer.to_string()).unwrap_or_default();
            tracing::warn!(%client, "wrong local API tokens in a row: refusing the client for {} s", LOCKOUT.as_secs());
            if let Some(observer) = &self.observer {
                observer.locked_out();
            }
            failures.locked_until = Some(now + LOCKOUT);
            failures.recent.clear();
            return Err(Denied::LockedOut(LOCKOUT.as_secs()));
        }
        Err(Denied::Token)
    }
}

/// The token of a `?key=T` query (Google's SDKs and tools may send it so), percent-decoded.
fn query_key(query: Option<&str>) -> Option<String> {
    let (_, value) = query?.split('&').filter_map(|pair| pair.split_once('=')).find(|(name, _)| *name == "key")?;
    let value = value.replace('+', " ");
    Some(percent_decode(&value))
}

/// `%XX` escapes decoded; anything that is not one kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The tokens a request's headers offer: `Authorization: Bearer T` (OpenAI SDKs; the scheme in
/// any case), `x-api-key: T` (Anthropic SDKs) and `x-goog-api-key: T` (Google's).
fn tokens_of(headers: &HeaderMap) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|value| {
        let (scheme, token) = value.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
    });
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    bearer.into_iter().chain(header("x-api-key")).chain(header("x-goog-api-key")).map(Cow::Borrowed)
}

/// A `Host` header's name, lower case, without its port or a final dot: `Example.COM.:443` is
/// `example.com`, `[::1]:4141` is `[::1]`.
/// Borrowed from `host` unless it has upper-case letters.
fn host_name(host: &str) -> Cow<'_, str> {
    let host = host.trim();
    let name = match host.strip_prefix('[') {
        // `[` and what is inside, and the `]`.
        Some(rest) => rest.split_once(']').map_or(host, |(inside, _)| &host[..inside.len() + 2]),
        None => host
            .rsplit_once(':')
            .map_or(host, |(name, port)| if port.chars().all(|c| c.is_ascii_digit()) { name } else { host }),
    };
    let name = name.trim_end_matches('.');
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use keypool::ManualClock;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert("host", "127.0.0.1:4141".parse().unwrap());
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_token_in_either_header_passes_and_a_web_page_never_does() {
        let guard = Guard::new(token_hash("kp-secret"), Arc::new(ManualClock::new(Timestamp::EPOCH)));
        assert_eq!(guard.check_headers(&headers(&[("authorization", "Bearer kp-secret")])), Ok(Caller::Owner));
        assert_eq!(guard.check_headers(&headers(&[("x-api-key", "kp-secret")])), Ok(Caller::Owner));
        assert_eq!(
            guard.check_headers(&headers(&[("authorization", "bearer kp-secret")])),
            Ok(Caller::Owner),
            "the scheme in any case"
        );
        let both = headers(&[("authorization", "Basic dXNlcg=="), ("x-api-key", "kp-secret")]);
        assert_eq!(guard.check_headers(&both), Ok(Caller::Owner), "another Authorization does not hide x-api-key");
        assert_eq!(guard.check_headers(&headers(&[("x-api-key", "kp-other")])), Err(Denied::Token));
        assert_eq!(guard.check_headers(&headers(&[])), Err(Denied::Token), "no token");
        let page = headers(&[("x-api-key", "kp-secret"), ("origin", "https://evil.example")]);
        assert_eq!(guard.check_headers(&page), Err(Denied::Origin), "even with the token");
    }

    impl Guard {
        fn check_headers(&self, headers: &HeaderMap) -> Result<Caller, Denied> {
            self.check(headers, None)
        }
    }

    #[test]
    fn googles_header_and_key_query_pass_too() {
        let guard = Guard::new(token_hash("kp-se/cret"), Arc::new(ManualClock::new(Timestamp::EPOCH)));
        assert_eq!(
            guard.check_headers(&headers(&[("x-goog-api-key", "kp-se/cret")])),
            Ok(Caller::Owner),
            "Google's header"
        );
        assert_eq!(
            guard.check(&headers(&[]), Some("alt=sse&key=kp-se%2Fcret")),
            Ok(Caller::Owner),
            "?key=, percent-decoded"
        );
        assert_eq!(guard.check(&headers(&[]), Some("key=kp-other")), Err(Denied::Token), "a wrong ?key=");
        assert_eq!(guard.check(&headers(&[]), Some("alt=sse")), Err(Denied::Token), "no key in the query");
        let page = headers(&[("origin", "https://evil.example")]);
        assert_eq!(guard.check(&page, Some("key=kp-se%2Fcret")), Err(Denied::Origin), "a web page never passes");
    }

    #[test]
    fn only_this_machines_names_are_served_unless_a_host_is_allowed() {
        let guard = Guard::new(token_hash("kp-secret"), Arc::new(ManualClock::new(Timestamp::EPOCH)));
        let with_host = |host: &str| {
            let mut map = HeaderMap::new();
            map.insert("host", host.parse().unwrap());
            map.insert("x-api-key", "kp-secret".parse().unwrap());
            map
        };
        for host in ["127.0.0.1:4141", "localhost:4141", "LOCALHOST", "localhost.", "[::1]:4141", "127.9.9.9", "[::1]"]
        {
            assert_eq!(guard.check(&with_host(host), None), Ok(Caller::Owner), "{host} is this machine");
        }
        for host in ["evil.example:4141", "localhost.evil.example", "10.0.0.5:4141", "[fe80::1]", "127.0.0.1.evil"] {
            assert_eq!(guard.check(&with_host(host), None), Err(Denied::Host), "{host} is not, even with the token");
        }
        assert_eq!(guard.check(&HeaderMap::new(), None), Err(Denied::Host), "no Host at all");
        guard.allow_hosts(["Keypool.Team.Example".to_owned()]);
        assert_eq!(
            guard.check(&with_host("keypool.team.example:443"), None),
            Ok(Caller::Owner),
            "an allowed host, in any case"
        );
        assert_eq!(guard.check(&with_host("other.team.example"), None), Err(Denied::Host), "only that one");
        guard.listening_on("10.0.0.5:4141".parse().unwrap());
        assert_eq!(
            guard.check(&with_host("10.0.0.5:4141"), None),
            Ok(Caller::Owner),
            "the address a server listens on"
        );
        assert_eq!(guard.check(&with_host("10.0.0.6"), None), Err(Denied::Host), "not its neighbour");
        guard.listening_on("0.0.0.0:4141".parse().unwrap());
        assert_eq!(
            guard.check(&with_host("0.0.0.0"), None),
            Err(Denied::Host),
            "the unspecified address names no host"
        );
    }

    #[test]
    fn wrong_tokens_in_a_row_lock_the_peer_out_the_right_token_included() {
        let clock = Arc::new(ManualClock::new(Timestamp::EPOCH));
        let guard = Guard::new(token_hash("kp-secret"), clock.clone());
        let wrong = headers(&[("x-api-key", "guess")]);
        let right = headers(&[("x-api-key", "kp-secret")]);
        let guesser: IpAddr = "203.0.113.7".parse().unwrap();
        let owner: IpAddr = "198.51.100.2".parse().unwrap();
        let from = |peer: IpAddr, headers: &HeaderMap| PEER.sync_scope(peer, || guard.check_headers(headers));
        for _ in 0..MAX_FAILURES {
            assert_eq!(from(guesser, &wrong), Err(Denied::Token));
        }
        assert_eq!(from(guesser, &wrong), Err(Denied::LockedOut(LOCKOUT.as_secs())), "one too many");
        assert_eq!(
            from(guesser, &right),
            Err(Denied::LockedOut(LOCKOUT.as_secs())),
            "the right token is locked out too: a guess is not tested during the lockout"
        );
        assert_eq!(from(owner, &right), Ok(Caller::Owner), "another peer still gets in");
        clock.advance(LOCKOUT - Duration::from_secs(10));
        assert_eq!(from(guesser, &wrong), Err(Denied::LockedOut(10)), "still locked, and says how long");
        clock.advance(Duration::from_secs(10));
        assert_eq!(from(guesser, &wrong), Err(Denied::Token), "checked again after the lockout");
        assert_eq!(from(guesser, &right), Ok(Caller::Owner), "and the right token serves");
    }

    /// Members of a test: `alice`'s token serves as alice, `gone`'s is known but refused.
    struct TwoMembers;

    impl Members for TwoMembers {
        fn identify(&self, hash: &[u8; 32]) -> Option<Result<Arc<str>, Refusal>> {
            if *hash == token_hash("kp-alice") {
                return Some(Ok(Arc::from("alice")));
            }
            let refused = Refusal { limit: crate::Limit::Revoked, message: "revoked".into(), retry_after: None };
            (*hash == token_hash("kp-gone")).then_some(Err(refused))
        }

        fn admit<'a>(
            &'a self,
            _: &'a str,
            _: crate::Asked<'a>,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<crate::Pass, Refusal>> + Send + 'a>> {
            Box::pin(async { Ok(crate::Pass::free()) })
        }

        fn lists(&self, _: &str, _: &str) -> bool {
            true
        }
    }

    #[test]
    fn a_members_token_serves_as_the_member_and_a_refused_one_is_no_guess() {
        let guard = Guard::new(token_hash("kp-secret"), Arc::new(ManualClock::new(Timestamp::EPOCH)))
            .with_members(Some(Arc::new(TwoMembers)));
        let with = |token: &str| headers(&[("x-api-key", token)]);
        assert_eq!(guard.check_headers(&with("kp-alice")), Ok(Caller::Member(Arc::from("alice"))), "alice's token");
        assert_eq!(guard.check_headers(&with("kp-secret")), Ok(Caller::Owner), "the owner's still serves as the owner");
        let peer: IpAddr = "203.0.113.9".parse().unwrap();
        for _ in 0..MAX_FAILURES * 2 {
            let refused = PEER.sync_scope(peer, || guard.check_headers(&with("kp-gone")));
            assert!(matches!(refused, Err(Denied::Member(_))), "a revoked member's token is refused as such");
        }
        assert_eq!(
            PEER.sync_scope(peer, || guard.check_headers(&with("kp-alice"))),
            Ok(Caller::Member(Arc::from("alice"))),
            "a forgotten script retrying a revoked token locks nobody out of that address"
        );
    }
}
