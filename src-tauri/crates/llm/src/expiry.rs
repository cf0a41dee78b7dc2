//! Keys that say when they expire. A short-term Amazon Bedrock API key is `bedrock-api-key-` and,
//! in base64, the presigned request it stands for
//! (`bedrock.amazonaws.com/?Action=CallWithBearerToken&…&X-Amz-Date=20260701T120000Z&X-Amz-Expires=43200&…`):
//! it expires `X-Amz-Expires` seconds after `X-Amz-Date`, twelve hours at most. A long-term key
//! (`ABSK…`) says nothing of its expiry (the user chose it at the console).

use base64::Engine;
use keypool::{Secret, Timestamp};

use crate::service::CompletionService;

/// The prefix of a short-term Bedrock API key.
const BEDROCK_SHORT_TERM: &str = "bedrock-api-key-";

/// The longest a presigned request may last (AWS's limit: seven days).
const MOST_SECONDS: i64 = 7 * 24 * 3600;

/// When the Bedrock API key `key` expires, if it says.
pub fn bedrock_key_expiry(key: &str) -> Option<Timestamp> {
    let encoded = key.trim().strip_prefix(BEDROCK_SHORT_TERM)?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(encoded))
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let query = text.split_once('?')?.1;
    let param = |name: &str| {
        query.split('&').find_map(|pair| pair.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v.to_owned()))
    };
    let date = param("X-Amz-Date")?;
    let seconds: i64 = param("X-Amz-Expires")?.parse().ok().filter(|s| (1..=MOST_SECONDS).contains(s))?;
    // `20260701T120000Z`, as SigV4 writes it.
    let signed: jiff::civil::DateTime = jiff::fmt::strtime::parse("%Y%m%dT%H%M%SZ", &date).ok()?.to_datetime().ok()?;
    let at = jiff::tz::TimeZone::UTC.to_ambiguous_timestamp(signed).compatible().ok()?;
    Some(Timestamp::from_millis(at.as_millisecond() + seconds * 1000))
}

/// How far ahead an expiry is told.
pub const EXPIRY_WARNING: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

impl CompletionService {
    /// When each key of `endpoint`'s pool expires, where its kind's keys say.
    pub fn key_expiries(&self, endpoint: &crate::ProviderEndpoint) -> Vec<(keypool::KeyId, Timestamp)> {
        if endpoint.kind.row().key_expiry.is_none() {
            return Vec::new();
        }
        let Ok(keys) = self.pool.secrets_by_key(&endpoint.id) else { return Vec::new() };
        keys.into_iter().filter_map(|(key, stored)| Some((key, self.key_expiry(endpoint.kind, &stored)?))).collect()
    }

    /// Tells the recorder of each key of `endpoint` that expires within [`EXPIRY_WARNING`] (or
    /// has expired).
    pub fn tell_expiring(&self, endpoint: &crate::ProviderEndpoint) {
        let now = self.clock.now();
        let horizon = now.as_millis() + EXPIRY_WARNING.as_millis() as i64;
        for (key, at) in self.key_expiries(endpoint) {
            if at.as_millis() <= horizon {
                self.recorder.key_expiring(&endpoint.id, &key, at, now);
            }
        }
    }

    /// When the key stored as `stored` (`$NAME` resolved) expires, where its kind's keys say.
    pub fn key_expiry(&self, kind: crate::ProviderKind, stored: &Secret) -> Option<Timestamp> {
        let read = kind.row().key_expiry?;
        let secret = self.resolver.resolve(stored).ok()?;
        read(secret.expose())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(query: &str) -> String {
        let url = format!(
            "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256&{query}&Version=1"
        );
        format!("{BEDROCK_SHORT_TERM}{}", base64::engine::general_purpose::STANDARD.encode(url))
    }

    #[test]
    fn a_short_term_key_expires_its_seconds_after_it_was_signed() {
        let at = |text: &str| Timestamp::from_millis(text.parse::<jiff::Timestamp>().unwrap().as_millisecond());
        let twelve = key("X-Amz-Credential=AKIA%2F20260701%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=20260701T120000Z&X-Amz-Expires=43200&X-Amz-Signature=ab");
        assert_eq!(bedrock_key_expiry(&twelve), Some(at("2026-07-02T00:00:00Z")));
        for none in [
            "ABSKQmVkcm9ja0FQSUtleS1hYmM6ZGVm".to_owned(),
            key("X-Amz-Date=20260701T120000Z"),
            key("X-Amz-Date=yesterday&X-Amz-Expires=60"),
            key("X-Amz-Date=20260701T120000Z&X-Amz-Expires=99999999"),
            "bedrock-api-key-%%%not-base64".to_owned(),
        ] {
            assert_eq!(bedrock_key_expiry(&none), None, "{none}");
        }
    }
}
