//! The HTTP clients provider requests go out on. Keys go out in cleartext only within this
//! machine or the user's own network, and never through a proxy the user did not choose:
//!
//! * `https` URLs use the proxy the user chose ([`ProxyChoice`]: none by default, the system's
//!   from `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`, or a URL), never for loopback hosts.
//! * `http` URLs never use a proxy, and connect only to loopback and private addresses: a name
//!   is resolved and the connection refused when it leads anywhere else, so a name that resolves
//!   elsewhere on another network gets nothing. (The base URL's rule, checked when a provider is
//!   saved, already keeps literal public addresses out.)
//!
//! Both follow redirects only within the origin (see [`same_origin_redirects`]).
//!
//! A client's connections are driven by tasks on the runtime that opened them. Every clone of a
//! service shares one set of clients ([`Connections`]), except a clone made for a runtime of its
//! own ([`Connections::own`]): it keeps connections of its own, so a request and its upstream
//! connection run on the same thread.

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::net::{local_addresses, CONNECT_TIMEOUT, MAX_REDIRECTS};
use crate::upstream::{plain_client, PlainClient, Sender};

/// Which proxy provider requests over `https` go through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProxyChoice {
    /// None: straight to the provider, whatever the environment says.
    #[default]
    None,
    /// The system's, from `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` (and `NO_PROXY`).
    System,
    /// This one (`http://` or `https://` with a host).
    Url(String),
}

/// A proxy that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the proxy address is not usable: {0}")]
pub struct ProxyError(pub String);

/// What provider requests say they come from.
pub(crate) const USER_AGENT: &str = concat!("Keypool/", env!("CARGO_PKG_VERSION"));

/// Hosts a proxy is never used for.
const LOOPBACK: &str = "localhost,127.0.0.0/8,::1";

/// The clients, one per scheme, and hyper's own for relaying to plain-http servers
/// ([`crate::upstream`]).
#[derive(Clone)]
pub(crate) struct HttpClients {
    secure: reqwest::Client,
    plain: reqwest::Client,
    relay_plain: Arc<PlainClient>,
}

impl HttpClients {
    pub(crate) fn build(proxy: &ProxyChoice) -> Result<HttpClients, ProxyError> {
        install_crypto_provider();
        let secure = proxies(proxy)?
            .into_iter()
            .fold(base().no_proxy(), reqwest::ClientBuilder::proxy)
            .build()
            .map_err(|error| ProxyError(error.to_string()))?;
        let plain = base()
            .no_proxy()
            .dns_resolver(LocalOnly)
            .build()
            .expect("the HTTP client configuration is static and valid");
        Ok(HttpClients { secure, plain, relay_plain: Arc::new(plain_client()) })
    }

    /// The client for a request to `url`.
    pub(crate) fn for_url(&self, url: &str) -> &reqwest::Client {
        if is_plain(url) {
            &self.plain
        } else {
            &self.secure
        }
    }

    /// The client a relayed request to `url` goes out on.
    fn sender(&self, url: &str) -> Sender {
        if is_plain(url) {
            Sender::Plain(self.relay_plain.clone())
        } else {
            Sender::Reqwest(self.secure.clone())
        }
    }
}

/// `url` is plain http.
fn is_plain(url: &str) -> bool {
    url.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

/// The clients a service's requests go out on: the ones every clone shares, rebuilt when the
/// user chooses another proxy, or clients of this clone's own (see [`Connections::own`]). Each is
/// built on its first request, not before: building one (TLS roots, connector) took 2–7 ms, and a
/// start that sends nothing should not pay for it.
#[derive(Clone)]
pub(crate) struct Connections {
    shared: Arc<RwLock<Chosen>>,
    /// Clients of this clone's own, once built.
    own: Option<Arc<Mutex<Option<OwnClients>>>>,
}

/// A clone's own clients, and the generation of the choice they were built for.
type OwnClients = (u64, HttpClients);

/// The proxy chosen, the clients for it once built, and how many choices came before.
struct Chosen {
    proxy: ProxyChoice,
    generation: u64,
    clients: OnceLock<HttpClients>,
}

impl Chosen {
    /// The clients for the choice, built now if no request needed them before.
    fn clients(&self) -> &HttpClients {
        // A choice other than none was built once when it was made (`set_proxy`), so only none
        // is built here, and none is always usable.
        self.clients.get_or_init(|| HttpClients::build(&self.proxy).expect("a chosen proxy was usable when chosen"))
    }
}

impl Connections {
    /// Without a proxy. Installs the process's TLS crypto provider, if none is yet: any reqwest
    /// client built from then on (this crate's or another's) finds it.
    pub(crate) fn new() -> Connections {
        install_crypto_provider();
        let chosen = Chosen { proxy: ProxyChoice::None, generation: 0, clients: OnceLock::new() };
        Connections { shared: Arc::new(RwLock::new(chosen)), own: None }
    }

    /// Uses `proxy` from now on, for every clone (one with clients of its own rebuilds them
    /// before its next request). The choice in use already changes nothing. On an error nothing
    /// changes.
    pub(crate) fn set_proxy(&self, proxy: &ProxyChoice) -> Result<(), ProxyError> {
        if self.shared.read().unwrap_or_else(|e| e.into_inner()).proxy == *proxy {
            return Ok(());
        }
        let clients = HttpClients::build(proxy)?;
        let mut chosen = self.shared.write().unwrap_or_else(|e| e.into_inner());
        *chosen = Chosen { proxy: proxy.clone(), generation: chosen.generation + 1, clients: OnceLock::from(clients) };
        Ok(())
    }

    /// The client for a request to `url`.
    pub(crate) fn for_url(&self, url: &str) -> reqwest::Client {
        self.with_clients(|clients| clients.for_url(url).clone())
    }

    /// The client a relayed request to `url` goes out on.
    pub(crate) fn sender(&self, url: &str) -> Sender {
        self.with_clients(|clients| clients.sender(url))
    }

    /// `take` of the clients requests go out on now: this clone's own, or the shared ones.
    fn with_clients<T>(&self, take: impl FnOnce(&HttpClients) -> T) -> T {
        let chosen = self.shared.read().unwrap_or_else(|e| e.into_inner());
        let Some(own) = &self.own else { return take(chosen.clients()) };
        let mut own = own.lock().unwrap_or_else(|e| e.into_inner());
        match &*own {
            Some((generation, clients)) if *generation == chosen.generation => take(clients),
            _ => {
                // The choice was built once already, so it builds again.
                let clients = HttpClients::build(&chosen.proxy).unwrap_or_else(|_| chosen.clients().clone());
                let taken = take(&clients);
                *own = Some((chosen.generation, clients));
                taken
            }
        }
    }

    /// The same choice of proxy, with connections of their own (not shared with this one or
    /// any other clone), built on their first request: for a runtime whose requests should not
    /// wake another runtime's connection tasks.
    pub(crate) fn own(&self) -> Connections {
        Connections { shared: self.shared.clone(), own: Some(Arc::new(Mutex::new(None))) }
    }
}

fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another part of the process may have installed one already; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn base() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(same_origin_redirects()).connect_timeout(CONNECT_TIMEOUT).user_agent(USER_AGENT)
}

/// The proxies of `choice`, each skipping loopback hosts.
fn proxies(choice: &ProxyChoice) -> Result<Vec<reqwest::Proxy>, ProxyError> {
    let skip = |extra: Option<String>| {
        let list = extra.map_or_else(|| LOOPBACK.to_owned(), |extra| format!("{LOOPBACK},{extra}"));
        reqwest::NoProxy::from_string(&list)
    };
    let proxy = |make: fn(&str) -> reqwest::Result<reqwest::Proxy>, url: &str, extra: Option<String>| {
        make(url).map(|p| p.no_proxy(skip(extra))).map_err(|error| ProxyError(error.to_string()))
    };
    match choice {
        ProxyChoice::None => Ok(Vec::new()),
        ProxyChoice::Url(url) => {
            let parsed = reqwest::Url::parse(url).map_err(|error| ProxyError(error.to_string()))?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
                return Err(ProxyError(format!("{url} is not an http(s) proxy with a host")));
            }
            Ok(vec![proxy(|u| reqwest::Proxy::all(u), url, None)?])
        }
        ProxyChoice::System => {
            let env =
                |names: [&str; 2]| names.iter().find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()));
            let no_proxy = env(["NO_PROXY", "no_proxy"]);
            let mut found = Vec::new();
            if let Some(url) = env(["HTTPS_PROXY", "https_proxy"]) {
                found.push(proxy(|u| reqwest::Proxy::https(u), &url, no_proxy.clone())?);
            }
            if let Some(url) = env(["ALL_PROXY", "all_proxy"]) {
                found.push(proxy(|u| reqwest::Proxy::all(u), &url, no_proxy.clone())?);
            }
            Ok(found)
        }
    }
}

/// Resolves a name only to loopback and private addresses: a plain-http request never leaves
/// this machine or the user's network, whatever the name resolves to elsewhere.
struct LocalOnly;

impl Resolve for LocalOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move { Ok(Box::new(local_addresses(&host).await?.into_iter()) as Addrs) })
    }
}

/// Follows a redirect only to the same scheme, host and port: a key is never sent to an origin
/// the user did not choose. A redirect elsewhere is answered as the 3xx itself.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().last().is_some_and(|from| from.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::is_local_address;

    #[test]
    fn only_loopback_and_private_addresses_are_local() {
        for local in [
            "127.0.0.1",
            "10.1.2.3",
            "172.20.0.5",
            "192.168.1.20",
            "169.254.1.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:192.168.0.1",
        ] {
            assert!(is_local_address(local.parse().unwrap()), "{local} is this machine or a private network");
        }
        for public in ["8.8.8.8", "172.32.0.1", "2001:db8::1", "::ffff:8.8.8.8", "100.64.0.1"] {
            assert!(!is_local_address(public.parse().unwrap()), "{public} is not");
        }
    }

    #[test]
    fn plain_http_and_https_go_on_different_clients() {
        let clients = HttpClients::build(&ProxyChoice::None).unwrap();
        assert!(std::ptr::eq(clients.for_url("http://10.0.0.5/v1"), &clients.plain), "plain http");
        assert!(std::ptr::eq(clients.for_url("HTTP://host/v1"), &clients.plain), "in any case");
        assert!(std::ptr::eq(clients.for_url("https://api.openai.com/v1"), &clients.secure), "https");
    }

    #[test]
    fn own_connections_follow_the_shared_proxy_choice() {
        let shared = Connections::new();
        let built = |c: &Connections| c.shared.read().unwrap().clients.get().is_some();
        assert!(!built(&shared), "nothing is built before a request needs it");
        let own = shared.own();
        let generation = |c: &Connections| c.own.as_ref().and_then(|own| own.lock().unwrap().as_ref().map(|o| o.0));
        assert_eq!(generation(&own), None, "a clone's own clients wait for its first request too");
        let _ = own.for_url("https://api.openai.com/v1");
        assert_eq!(generation(&own), Some(0), "built for the choice of the moment");
        let _ = own.for_url("https://api.openai.com/v1");
        assert_eq!(generation(&own), Some(0), "kept while the choice stands");
        shared.set_proxy(&ProxyChoice::None).unwrap();
        assert_eq!(shared.shared.read().unwrap().generation, 0, "the choice in use is no new choice");
        shared.set_proxy(&ProxyChoice::Url("http://proxy.lan:3128".into())).unwrap();
        assert!(built(&shared), "a proxy is built when chosen: that is how it is checked");
        let _ = own.for_url("https://api.openai.com/v1");
        assert_eq!(generation(&own), Some(1), "rebuilt for the new choice before the next request");
        assert!(shared.set_proxy(&ProxyChoice::Url("not a url".into())).is_err(), "a bad choice");
        let _ = own.for_url("https://api.openai.com/v1");
        assert_eq!(generation(&own), Some(1), "changes nothing");
        assert!(shared.own.is_none(), "the shared clients are not a clone's own");
        let _ = shared.for_url("http://127.0.0.1/v1");
        assert!(built(&shared), "the shared clients, once asked for");
    }

    #[test]
    fn a_proxy_url_must_be_a_proxy() {
        assert!(HttpClients::build(&ProxyChoice::Url("http://proxy.lan:3128".into())).is_ok(), "http proxy");
        assert!(HttpClients::build(&ProxyChoice::Url("https://proxy.corp.example".into())).is_ok(), "https proxy");
        assert!(HttpClients::build(&ProxyChoice::Url("ftp://proxy".into())).is_err(), "not a proxy scheme");
        assert!(HttpClients::build(&ProxyChoice::Url("not a url".into())).is_err(), "not a URL");
    }
}
