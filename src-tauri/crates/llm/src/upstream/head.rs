//! A plain-http request's head: where it goes (its target, read from a URL) and its header
//! lines, written as they are.

use hyper::header::{HeaderMap, HeaderName, HeaderValue, HOST};
use hyper::Method;

/// Writes the head of a request into `head`: origin-form target, `Host`, `headers`, and the
/// body's `length`.
pub(super) fn write_head(
    head: &mut Vec<u8>,
    method: &Method,
    target: &Target<'_>,
    headers: &dyn HeadLines,
    length: usize,
) {
    use std::io::Write;
    head.extend_from_slice(method.as_str().as_bytes());
    head.push(b' ');
    target.write_path(head);
    head.extend_from_slice(b" HTTP/1.1\r\n");
    if !headers.has_host() {
        head.extend_from_slice(b"host: ");
        head.extend_from_slice(target.host.as_bytes());
        if target.port != 80 {
            let _ = write!(head, ":{}", target.port);
        }
        head.extend_from_slice(b"\r\n");
    }
    headers.each(&mut |name, value| {
        if name.eq_ignore_ascii_case(b"content-length") || name.eq_ignore_ascii_case(b"transfer-encoding") {
            return;
        }
        head.extend_from_slice(name);
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    });
    // As hyper writes it: a length, but none for a GET or HEAD without a body.
    if length > 0 || !matches!(*method, Method::GET | Method::HEAD) {
        let _ = write!(head, "content-length: {length}\r\n");
    }
    head.extend_from_slice(b"\r\n");
}

/// A relayed request's headers, as text: written straight into its head on a plain connection
/// (a header map was three allocations per request), made a map for reqwest.
pub(crate) struct Outgoing<'a> {
    /// Keypool's own, each left out when the client passed one of the same name.
    pub defaults: &'a [(&'static str, &'a str)],
    /// The key's header: its name, the prefix of its value, the key. A key that cannot be a
    /// header's value is left out (the provider refuses the request as one without a key).
    pub key: Option<(&'static str, &'static str, &'a str)>,
    /// The client's, as it sent them.
    pub passed: &'a [(HeaderName, HeaderValue)],
}

impl Outgoing<'_> {
    fn passes(&self, name: &str) -> bool {
        self.passed.iter().any(|(passed, _)| passed.as_str().eq_ignore_ascii_case(name))
    }

    /// Whether `value` can be a header's value as it is (what `HeaderValue::from_str` takes).
    fn valid(value: &str) -> bool {
        value.bytes().all(|b| b == b'\t' || (32..127).contains(&b))
    }

    /// The same headers as a map (the key's value marked sensitive).
    pub(crate) fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.defaults.len() + self.passed.len() + 1);
        for (name, value) in self.defaults {
            if let (false, Ok(value)) = (self.passes(name), HeaderValue::from_str(value)) {
                map.insert(HeaderName::from_static(name), value);
            }
        }
        if let Some((name, prefix, key)) = self.key {
            if let Ok(mut value) = HeaderValue::try_from(format!("{prefix}{key}")) {
                value.set_sensitive(true);
                map.insert(HeaderName::from_static(name), value);
            }
        }
        for (name, value) in self.passed {
            map.insert(name.clone(), value.clone());
        }
        map
    }
}

/// Header lines for a request's head: each name and value, in order.
pub(super) trait HeadLines: Sync {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8]));
    fn has_host(&self) -> bool;
}

impl HeadLines for HeaderMap {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        for (name, value) in self {
            line(name.as_str().as_bytes(), value.as_bytes());
        }
    }

    fn has_host(&self) -> bool {
        self.contains_key(HOST)
    }
}

/// The headers of a hop that carries no body (a redirect answered with a GET): no type of one.
pub(super) struct Bodiless<'a>(pub(super) &'a dyn HeadLines);

impl HeadLines for Bodiless<'_> {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        self.0.each(&mut |name, value| {
            if !name.eq_ignore_ascii_case(b"content-type") {
                line(name, value);
            }
        });
    }

    fn has_host(&self) -> bool {
        self.0.has_host()
    }
}

impl HeadLines for Outgoing<'_> {
    fn each(&self, line: &mut dyn FnMut(&[u8], &[u8])) {
        for (name, value) in self.defaults {
            if !self.passes(name) && Self::valid(value) {
                line(name.as_bytes(), value.as_bytes());
            }
        }
        if let Some((name, prefix, key)) = self.key.filter(|(_, prefix, key)| Self::valid(prefix) && Self::valid(key)) {
            // Joined on the stack, not on the heap (a key longer than that is rare).
            let mut value = [0u8; 256];
            let length = prefix.len() + key.len();
            if length <= value.len() {
                value[..prefix.len()].copy_from_slice(prefix.as_bytes());
                value[prefix.len()..length].copy_from_slice(key.as_bytes());
                line(name.as_bytes(), &value[..length]);
            } else {
                line(name.as_bytes(), format!("{prefix}{key}").as_bytes());
            }
        }
        for (name, value) in self.passed {
            line(name.as_str().as_bytes(), value.as_bytes());
        }
    }

    fn has_host(&self) -> bool {
        self.passes("host")
    }
}

/// Where a plain-http request goes, read from its URL: the host, port and origin (`host:port` as
/// written), and the path with its query, in two pieces (a base URL's path and the path under
/// it: written joined by one slash, never joined in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Target<'a> {
    pub(super) host: &'a str,
    pub(super) port: u16,
    pub(super) origin: &'a str,
    pub(super) path: &'a str,
    pub(super) under: &'a str,
}

impl<'a> Target<'a> {
    /// `url`, an `http://` URL; `None` for any other, or one without a host.
    pub(super) fn of(url: &'a str) -> Option<Target<'a>> {
        let scheme = url.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("http://"))?;
        let rest = &url[scheme.len()..];
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (origin, path) = rest.split_at(end);
        let path = path.split('#').next().unwrap_or_default();
        let path = if path.is_empty() { "/" } else { path };
        // A user's part is no origin's: refused, as a key could ride in it.
        if origin.contains('@') || origin.is_empty() {
            return None;
        }
        let (host, port) = match origin.strip_prefix('[') {
            Some(inside) => {
                let (address, after) = inside.split_once(']')?;
                (&origin[..address.len() + 2], after.strip_prefix(':'))
            }
            None => match origin.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (origin, None),
            },
        };
        let port = match port {
            Some(port) => port.parse().ok()?,
            None => 80,
        };
        (!host.is_empty()).then_some(Target { host, port, origin, path, under: "" })
    }

    /// `base` (an `http://` URL) with `path` under it.
    pub(super) fn under(base: &'a str, path: &'a str) -> Option<Target<'a>> {
        let base = Target::of(base)?;
        let under = path.trim_start_matches('/');
        let path = if under.is_empty() { base.path } else { base.path.trim_end_matches('/') };
        Some(Target { path, under, ..base })
    }

    /// Writes the path (with its query) into a request's head.
    pub(super) fn write_path(&self, head: &mut Vec<u8>) {
        head.extend_from_slice(self.path.as_bytes());
        if !self.under.is_empty() {
            head.push(b'/');
            head.extend_from_slice(self.under.as_bytes());
        }
    }

    /// The whole URL, for a redirect's resolution.
    pub(super) fn url(&self) -> String {
        let mut url = format!("http://{}", self.origin);
        let mut path = Vec::new();
        self.write_path(&mut path);
        url.push_str(&String::from_utf8_lossy(&path));
        url
    }
}
