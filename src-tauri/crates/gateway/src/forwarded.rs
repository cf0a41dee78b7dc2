//! Who a request comes from behind a reverse proxy: the proxy's address is the connection's,
//! and the client's is in a header the proxy wrote. That header is read only from a peer the
//! server trusts (`trusted_proxies`), and in it only the right-most address no trusted proxy has:
//! everything to its left was written by the client itself, which may write anything.
//!
//! One header is read, the one the proxies are told to write ([`ForwardedHeader`]): with both
//! read, a client could send the one its proxy does not touch and choose its own address (and
//! so escape the wrong-token lockout by naming a new one each time).

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The header trusted proxies name the client in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, …` (nginx's `$proxy_add_x_forwarded_for`, Caddy,
    /// HAProxy's `option forwardfor`, Envoy, cloud load balancers).
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded: for=client;proto=https, for=proxy1`.
    Forwarded,
}

impl ForwardedHeader {
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        }
    }
}

/// The proxies whose forwarded header is read, and which header that is. None by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    pub networks: Vec<IpNet>,
    pub header: ForwardedHeader,
}

/// Who sent a request, and how that was learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Client {
    pub(crate) address: IpAddr,
    pub(crate) via: Via,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// The connection's own address (no forwarded header, or one a trusted proxy did not write).
    Direct,
    /// Read from a trusted proxy's header.
    Proxy,
    /// A peer that is not trusted sent a forwarded header: it was ignored.
    Ignored,
}

impl TrustedProxies {
    fn trusts(&self, address: IpAddr) -> bool {
        // An IPv4 client reaching an IPv6 socket arrives as ::ffff:a.b.c.d.
        let address = canonical(address);
        self.networks.iter().any(|network| network.contains(&address))
    }

    /// Who sent a request that came from `peer` with `headers`.
    pub(crate) fn client(&self, peer: IpAddr, headers: &HeaderMap) -> Client {
        let mut values = headers.get_all(self.header.name()).iter().peekable();
        if values.peek().is_none() {
            return Client { address: peer, via: Via::Direct };
        }
        if !self.trusts(peer) {
            return Client { address: peer, via: Via::Ignored };
        }
        let mut hops: Vec<Option<IpAddr>> = Vec::new();
        for value in values {
            let Ok(text) = value.to_str() else {
                // Not text: no address can be read past it.
                hops.push(None);
                continue;
            };
            match self.header {
                ForwardedHeader::XForwardedFor => hops.extend(text.split(',').map(address_of)),
                ForwardedHeader::Forwarded => hops.extend(text.split(',').map(forwarded_for)),
            }
        }
        Client { address: right_most_untrusted(peer, &hops, |address| self.trusts(address)), via: Via::Proxy }
    }
}

/// The right-most of `hops` (each an address, or one that cannot be read) that `trusted` does not
/// hold, read from the right after `peer` (which it holds). Every hop trusted: the left-most. A
/// hop that cannot be read (`unknown`, an obfuscated name, garbage) ends the reading: the
/// proxy to its right is who is known.
fn right_most_untrusted(peer: IpAddr, hops: &[Option<IpAddr>], trusted: impl Fn(IpAddr) -> bool) -> IpAddr {
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Some(address) = *hop else { return client };
        client = canonical(address);
        if !trusted(client) {
            return client;
        }
    }
    client
}

/// `::ffff:a.b.c.d` as `a.b.c.d`; any other address as it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// An address as a forwarded header writes it: `a.b.c.d`, `a.b.c.d:port`, `::1`, `[::1]`,
/// `[::1]:port`, in quotes or not.
fn address_of(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Ok(address) = text.parse() {
        return Some(address);
    }
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    let (host, port) = text.rsplit_once(':')?;
    port.bytes().all(|b| b.is_ascii_digit()).then(|| host.parse().ok()).flatten()
}

/// The `for=` of one element of a `Forwarded` header (`for=192.0.2.60;proto=http`,
/// `for="[2001:db8::17]:4711"`); `None` when it has none or names no address (`for=unknown`,
/// `for=_hidden`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim().eq_ignore_ascii_case("for").then(|| address_of(value)).flatten()
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn proxies(networks: &[&str], header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies { networks: networks.iter().map(|n| n.parse().unwrap()).collect(), header }
    }

    fn headers(name: &'static str, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(name, value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_peers_header_is_read_and_only_its_right_most_untrusted_address() {
        let trusted = proxies(&["10.0.0.0/8", "fd00::/8"], ForwardedHeader::XForwardedFor);
        let from_proxy = |values: &[&str]| trusted.client(ip("10.1.2.3"), &headers("x-forwarded-for", values));
        assert_eq!(
            from_proxy(&["203.0.113.7"]),
            Client { address: ip("203.0.113.7"), via: Via::Proxy },
            "the client the proxy names"
        );
        assert_eq!(
            from_proxy(&["198.51.100.1, 203.0.113.7, 10.9.9.9"]).address,
            ip("203.0.113.7"),
            "past a second trusted proxy, not the address the client wrote itself on the left"
        );
        assert_eq!(
            from_proxy(&["198.51.100.1", "203.0.113.7:5123"]).address,
            ip("203.0.113.7"),
            "several header lines are one list; a port is left out"
        );
        assert_eq!(from_proxy(&["10.4.4.4, 10.5.5.5"]).address, ip("10.4.4.4"), "all trusted: the left-most");
        assert_eq!(
            from_proxy(&["198.51.100.1, unknown"]).address,
            ip("10.1.2.3"),
            "a hop the proxy could not name: the proxy is who is known, not what the client wrote"
        );
        assert_eq!(from_proxy(&["[2001:db8::5]:443"]).address, ip("2001:db8::5"), "IPv6 in brackets");
        assert_eq!(
            trusted.client(ip("::ffff:10.1.2.3"), &headers("x-forwarded-for", &["::ffff:203.0.113.7"])).address,
            ip("203.0.113.7"),
            "IPv4-mapped addresses are their IPv4 address"
        );
        let stranger = trusted.client(ip("192.0.2.50"), &headers("x-forwarded-for", &["203.0.113.7"]));
        assert_eq!(stranger, Client { address: ip("192.0.2.50"), via: Via::Ignored }, "an untrusted peer's is ignored");
        assert_eq!(
            trusted.client(ip("10.1.2.3"), &HeaderMap::new()),
            Client { address: ip("10.1.2.3"), via: Via::Direct },
            "no header: the peer itself"
        );
        let other = trusted.client(ip("10.1.2.3"), &headers("forwarded", &["for=203.0.113.7"]));
        assert_eq!(other.via, Via::Direct, "the header the proxies are not told to write is never read");
    }

    #[test]
    fn forwarded_is_read_by_its_for_parameter() {
        let trusted = proxies(&["10.0.0.0/8"], ForwardedHeader::Forwarded);
        let from_proxy = |values: &[&str]| trusted.client(ip("10.1.2.3"), &headers("forwarded", values)).address;
        assert_eq!(from_proxy(&["for=192.0.2.60;proto=http;by=203.0.113.43"]), ip("192.0.2.60"));
        assert_eq!(
            from_proxy(&["for=198.51.100.1, For=\"[2001:db8:cafe::17]:4711\";proto=https"]),
            ip("2001:db8:cafe::17"),
            "the right-most element, quoted IPv6 with a port, the name in any case"
        );
        assert_eq!(from_proxy(&["for=_hidden"]), ip("10.1.2.3"), "an obfuscated name is no address");
        assert_eq!(from_proxy(&["proto=https"]), ip("10.1.2.3"), "an element without for=");
        assert_eq!(
            trusted.client(ip("10.1.2.3"), &headers("x-forwarded-for", &["192.0.2.1"])).via,
            Via::Direct,
            "X-Forwarded-For is not read when Forwarded is the header"
        );
    }

    proptest! {
        /// Whatever a client writes in the header, the trusted proxy appends the address it saw:
        /// that address is the client's, so a flood cannot take on another one.
        #[test]
        fn what_a_client_writes_itself_never_becomes_its_address(
            written in proptest::collection::vec("[0-9a-f.:\\[\\], ]{0,24}", 0..4),
            client in any::<[u8; 4]>(),
        ) {
            let trusted = proxies(&["10.0.0.0/8"], ForwardedHeader::XForwardedFor);
            let client = IpAddr::from(client);
            prop_assume!(!trusted.trusts(client));
            let mut values: Vec<String> = written.into_iter().filter(|v| !v.trim().is_empty()).collect();
            // The proxy appends the address it saw.
            values.push(client.to_string());
            let joined = values.join(", ");
            let Ok(value) = axum::http::HeaderValue::from_str(&joined) else { return Ok(()) };
            let mut map = HeaderMap::new();
            map.insert("x-forwarded-for", value);
            prop_assert_eq!(trusted.client(ip("10.0.0.1"), &map).address, client);
        }
    }
}
