//! Rules shared by the arguments of several commands.

use keypool::Secret;
use serde::{Deserialize, Deserializer};
use ts_rs::TS;

use super::issues::{coded, coded_with, IssueCode};
use super::limits::LIMITS;
use crate::service::is_local;

fn broken(code: IssueCode) -> garde::Error {
    garde::Error::new(coded(code))
}

pub(crate) fn not_blank(value: &str, _: &()) -> garde::Result {
    if value.trim().is_empty() {
        return Err(broken(IssueCode::Blank));
    }
    Ok(())
}

/// A key is one token (no spaces or line breaks inside), or `$NAME` naming an environment
/// variable.
pub(crate) fn api_key_rule(value: &str, _: &()) -> garde::Result {
    let key = value.trim();
    if key.is_empty() {
        return Err(broken(IssueCode::Blank));
    }
    if key.chars().count() > LIMITS.api_key.max_chars {
        return Err(garde::Error::new(coded_with(IssueCode::TooLong, &[("max", &LIMITS.api_key.max_chars)])));
    }
    if key.chars().any(char::is_whitespace) {
        return Err(broken(IssueCode::KeyHasSpaces));
    }
    if let Some(name) = key.strip_prefix('$') {
        let mut chars = name.chars();
        let valid = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
            && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(broken(IssueCode::BadEnvName));
        }
    }
    Ok(())
}

pub(crate) fn key_arg_rule(value: &KeyArg, ctx: &()) -> garde::Result {
    api_key_rule(value.0.expose(), ctx)
}

pub(crate) fn optional_key_arg_rule(value: &Option<KeyArg>, ctx: &()) -> garde::Result {
    value.as_ref().map_or(Ok(()), |v| key_arg_rule(v, ctx))
}

/// An `https` URL with a host; plain `http` only to this machine or a private network, where
/// the key does not cross the internet unencrypted.
pub(crate) fn base_url_rule(value: &str, _: &()) -> garde::Result {
    match url::Url::parse(value.trim()) {
        Ok(url) if url.scheme() == "https" && url.host().is_some() => Ok(()),
        Ok(url) if url.scheme() == "http" => match url.host() {
            Some(host) if is_local(&host) => Ok(()),
            Some(_) => Err(broken(IssueCode::HttpNotLocal)),
            None => Err(broken(IssueCode::NoHost)),
        },
        Ok(_) => Err(broken(IssueCode::NotHttps)),
        Err(_) => Err(broken(IssueCode::BadUrl)),
    }
}

/// A key to set, or `""` to remove it.
pub(crate) fn removable_key_arg_rule(value: &Option<KeyArg>, ctx: &()) -> garde::Result {
    match value.as_ref().map(|key| key.0.expose()) {
        Some("") | None => Ok(()),
        Some(v) => api_key_rule(v, ctx),
    }
}

/// An API key (or `$NAME` reference) as the UI sends it, deserialized straight into a
/// [`Secret`]: the arguments that hold one print it as `<redacted>` in any debug output.
#[derive(Debug, Clone, TS)]
#[ts(type = "string")]
pub struct KeyArg(pub(crate) Secret);

impl<'de> Deserialize<'de> for KeyArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|value| KeyArg(Secret::from(value)))
    }
}

impl KeyArg {
    /// The key without surrounding whitespace, as it is stored.
    pub(crate) fn trimmed(&self) -> Secret {
        Secret::new(self.0.expose().trim())
    }
}

/// Optional text, trimmed; an empty one means none (a key's label, its quota group).
pub(crate) fn trimmed_or_none(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_argument_never_prints_its_value() {
        let args: KeyArg = serde_json::from_str("\"sk-live-0123456789abcdef\"").unwrap();
        assert_eq!(format!("{args:?}"), "KeyArg(<redacted>)", "Debug shows no key");
        assert!(key_arg_rule(&args, &()).is_ok(), "and the rules still see it");
    }

    #[test]
    fn env_reference_needs_a_variable_name() {
        assert!(api_key_rule("$OPENAI_API_KEY", &()).is_ok(), "a valid reference passes");
        assert!(api_key_rule("$", &()).is_err(), "a bare `$` names nothing");
        assert!(api_key_rule("$1ABC", &()).is_err(), "names do not start with a digit");
        assert!(api_key_rule("sk-a b", &()).is_err(), "spaces inside a key are rejected");
        assert!(api_key_rule("  sk-abc  ", &()).is_ok(), "surrounding spaces are trimmed, not an error");
    }

    #[test]
    fn plain_http_only_to_this_machine_or_a_private_network() {
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10",
            "http://localhost:8080",
            "http://LOCALHOST:8080",
            "http://api.localhost/v1",
            "http://[::1]:4000",
            "http://10.1.2.3/v1",
            "http://172.16.0.1",
            "http://172.20.0.5",
            "http://172.31.255.255",
            "http://192.168.1.20:1234/v1",
            "http://169.254.1.1",
            "http://[fd00::1]/v1",
            "http://[fc00::1]",
            "http://[fe80::1]",
            "http://[febf::1]",
            "http://[::ffff:127.0.0.1]",
            "http://[::ffff:192.168.0.7]:8000",
            "http://ollama:11434",
            "http://gpu-box.local/v1",
            "http://gpu-box.local./v1",
            "http://printer.lan",
            "http://svc.internal:9000",
            "http://llm.home.arpa",
            "  http://127.0.0.1:9/v1  ",
        ] {
            assert!(base_url_rule(local, &()).is_ok(), "{local} stays on this machine or the local network");
        }
        for public in [
            "http://api.openai.com/v1",
            "http://8.8.8.8",
            "http://[2001:db8::1]",
            "http://172.32.0.1",
            "http://172.15.0.1",
            "http://192.169.0.1",
            "http://[fec0::1]",
            "http://[::ffff:8.8.8.8]",
            "http://[::2]",
            "http://localhost.example.com",
            "http://local.example",
        ] {
            let error = base_url_rule(public, &()).expect_err(public).to_string();
            assert_eq!(error, "http_not_local", "{public}: says why");
        }
        assert!(base_url_rule("https://api.openai.com/v1", &()).is_ok(), "https goes anywhere");
        assert!(base_url_rule("https://8.8.8.8/v1", &()).is_ok(), "https to an address too");
        assert!(base_url_rule("ftp://example.com", &()).is_err(), "other schemes are refused");
        assert!(base_url_rule("not a url", &()).is_err(), "and what is not a URL");
        assert!(base_url_rule("", &()).is_err(), "and nothing");
    }
}
