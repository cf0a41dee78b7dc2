//! The rules every connection to a provider follows, whichever client carries it: how long
//! connecting may take, how many redirects are followed, which addresses a plain-http request may
//! reach, and how a transport error is told.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::error::Breakage;

/// How long connecting to a provider may take, on any client.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How many redirects (within the origin) one request follows, on any client.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// The addresses `host` resolves to on this machine or a private network; an error when it
/// resolves to none of those.
pub(crate) async fn local_addresses(host: &str) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    let local: Vec<SocketAddr> = found.into_iter().filter(|addr| is_local_address(addr.ip())).collect();
    if local.is_empty() {
        tracing::warn!(%host, "a plain-http provider resolves outside this network; nothing was sent");
        return Err(format!("{host} resolves to no address of this machine or a private network").into());
    }
    Ok(local)
}

/// Whether `base_url` is on this machine or a private network, where servers (Ollama, LM Studio,
/// vLLM) commonly need no key: requests go without one while the provider has none. A provider
/// elsewhere with no key at all is not asked (see [`crate::ProviderEndpoint::is_local`]).
pub fn is_local_url(base_url: &str) -> bool {
    url::Url::parse(base_url).ok().is_some_and(|url| url.host().is_some_and(|host| is_local_host(&host)))
}

/// Loopback, private-network and link-local addresses, and names that only resolve on a local
/// network (`localhost`, `*.local`, `*.lan`, `*.internal`, `*.home.arpa`, single-label names).
pub fn is_local_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => is_local_address(IpAddr::V4(*ip)),
        url::Host::Ipv6(ip) => is_local_address(IpAddr::V6(*ip)),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !name.contains('.')
                || ["localhost", "local", "lan", "internal", "home.arpa"]
                    .iter()
                    .any(|suffix| name == *suffix || name.ends_with(&format!(".{suffix}")))
        }
    }
}

/// Loopback, private (RFC 1918, unique local) and link-local addresses.
pub fn is_local_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        IpAddr::V6(ip) => {
            ip.is_loopback()
                || ip.is_unique_local()
                || ip.is_unicast_link_local()
                || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback() || v4.is_private() || v4.is_link_local())
        }
    }
}

/// A transport error in words, without the URL's query (which never holds a key here, but a
/// user-supplied base URL could).
pub(crate) fn breakage(error: &reqwest::Error) -> Breakage {
    if error.is_timeout() {
        Breakage::Timeout
    } else if error.is_connect() {
        Breakage::Connect
    } else if error.is_body() || error.is_decode() {
        Breakage::Body
    } else {
        Breakage::Request
    }
}
