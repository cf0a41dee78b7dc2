//! Requests that would come back here: a provider whose base URL is one of this endpoint's own
//! addresses (easy with Connect and a custom base URL), or a request carrying this Keypool's
//! hop mark (a longer way round: another Keypool, a proxy, another name for this machine).

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use keypool_llm::hop::{Hop, HopHeader, HopMarks, HOP_HEADER, MAX_HOPS};

/// Whether `base_url` names one of `own` listening addresses: the same port, and the very
/// address it listens on, `localhost` where it listens on loopback, or a loopback address where
/// it listens on every interface.
pub(crate) fn points_at_itself(base_url: &str, own: &[SocketAddr]) -> bool {
    // Read by hand: asked of every request, and a parsed URI allocates.
    let (default_port, rest) = match base_url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (443, rest),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (80, rest),
        _ => return false,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':')),
            None => return false,
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(port) => match port.parse::<u16>() {
            Ok(port) => port,
            Err(_) => return false,
        },
        None => default_port,
    };
    let ip = match host.parse::<IpAddr>() {
        Ok(ip) => Some(ip),
        Err(_) if is_localhost(host) => None,
        Err(_) => return false,
    };
    let loopback = ip.is_none_or(|ip| ip.is_loopback() || ip.is_unspecified());
    own.iter().any(|address| {
        let listens = address.ip();
        address.port() == port
            && (Some(listens) == ip
                || (ip.is_none() && listens.is_loopback())
                || (loopback && listens.is_unspecified()))
    })
}

/// `localhost`, or a name under it, in any case.
fn is_localhost(host: &str) -> bool {
    let host = host.as_bytes();
    let under = host.len() > 10 && host[host.len() - 10..].eq_ignore_ascii_case(b".localhost");
    under || host.eq_ignore_ascii_case(b"localhost")
}

/// What a request's hop marks say (see [`keypool_llm::hop`]): `Err` the words of its refusal,
/// `Ok` the mark it goes on with.
pub(crate) fn hop(marks: &HopMarks, headers: &HeaderMap) -> Result<HopHeader, String> {
    let came = headers.get(HOP_HEADER).and_then(|value| value.to_str().ok());
    match marks.pass(came) {
        Hop::Onward(mark) => Ok(mark),
        Hop::Returned => Err("this request came back to the Keypool that sent it: a provider's base URL or a route \
                              leads here again. Point the provider at the service's own address"
            .into()),
        Hop::TooMany(hops) => Err(format!(
            "this request passed {hops} Keypools already (at most {MAX_HOPS}): providers and routes lead in a circle"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_this_endpoint_by_its_port_on_a_loopback_name_or_its_own_address() {
        let desktop: [SocketAddr; 2] = ["127.0.0.1:8787".parse().unwrap(), "[::1]:8787".parse().unwrap()];
        for itself in ["http://127.0.0.1:8787/v1", "http://localhost:8787", "http://[::1]:8787/"] {
            assert!(points_at_itself(itself, &desktop), "{itself}");
        }
        for other in [
            "http://127.0.0.1:11434/v1",
            "https://api.openai.com/v1",
            "http://192.168.1.5:8787",
            "http://127.0.0.2:8787",
            "x",
        ] {
            assert!(!points_at_itself(other, &desktop), "{other}");
        }
        assert!(points_at_itself("http://user:pw@LOCALHOST:8787/v1", &desktop), "userinfo and case set aside");
        assert!(points_at_itself("http://api.localhost:8787", &desktop));
        assert!(!points_at_itself("http://localhost:87x/v1", &desktop), "not a port");
        let server: [SocketAddr; 1] = ["0.0.0.0:80".parse().unwrap()];
        assert!(points_at_itself("http://localhost/v1", &server), "every interface, the default port");
        assert!(!points_at_itself("https://localhost/v1", &server), "another port");
        let bound: [SocketAddr; 1] = ["10.0.0.7:9000".parse().unwrap()];
        assert!(points_at_itself("http://10.0.0.7:9000", &bound));
        assert!(!points_at_itself("http://127.0.0.1:9000", &bound), "it does not listen on loopback");
    }
}
