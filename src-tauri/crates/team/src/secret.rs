//! The team secret and the names it gives things in Redis.
//!
//! A key's team identity is HMAC-SHA256(team secret, the key's resolved value): the same key has
//! the same identity on every member, and nobody without the secret can tell which key it is or
//! test a guess. Quota groups, scopes and sessions are named the same way under their own
//! prefixes. Identities are the first 128 bits of the MAC, as 32 lowercase hex digits.
//!
//! A value is sealed for one team (its name), one Redis key, one field: a sealed value copied to
//! another team sharing the secret, another key or another field is not believed. What a seal
//! cannot tell is a value's age: a sealed value written again where it was is believed as it was
//! then, so what would do harm when replayed carries what makes it old (a key's rejection, the
//! time the key was last enabled again: see `crate::layout`).

use std::fmt;

use hmac::{KeyInit, Mac};

/// How many bytes a team secret has.
pub const SECRET_BYTES: usize = 32;

/// The secret every member of a team holds: 32 random bytes, written as 64 hex digits to copy to
/// the other members. Prints as `<redacted>`.
#[derive(Clone)]
pub struct TeamSecret {
    bytes: [u8; SECRET_BYTES],
    /// The team whose values it seals (set when a member joins; empty until then).
    team: std::sync::Arc<str>,
}

/// Why text is not a team secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a team secret is {} hex digits (0-9, a-f); this has {found} characters", SECRET_BYTES * 2)]
pub struct BadSecret {
    /// How many characters the text had (trimmed); never the text.
    pub found: usize,
}

impl TeamSecret {
    /// A new random secret.
    pub fn generate() -> TeamSecret {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes).expect("the operating system provides randomness");
        TeamSecret::of(bytes)
    }

    /// The secret written as `text` (64 hex digits, surrounding whitespace ignored: a file's
    /// trailing newline, a pasted space).
    pub fn parse(text: &str) -> Result<TeamSecret, BadSecret> {
        let text = text.trim();
        let bad = BadSecret { found: text.chars().count() };
        if text.len() != SECRET_BYTES * 2 {
            return Err(bad);
        }
        let mut bytes = [0u8; SECRET_BYTES];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
            let digits = std::str::from_utf8(pair).map_err(|_| bad.clone())?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| bad.clone())?;
        }
        Ok(TeamSecret::of(bytes))
    }

    fn of(bytes: [u8; SECRET_BYTES]) -> TeamSecret {
        TeamSecret { bytes, team: std::sync::Arc::from("") }
    }

    /// The same secret, sealing values for the team `team`.
    pub(crate) fn for_team(&self, team: &str) -> TeamSecret {
        TeamSecret { bytes: self.bytes, team: std::sync::Arc::from(team) }
    }

    /// The secret as 64 hex digits, to show once and copy to the other members.
    pub fn to_hex(&self) -> String {
        hex(&self.bytes)
    }

    /// The team identity of a key whose resolved value is `value`.
    pub(crate) fn key_identity(&self, value: &str) -> String {
        self.mac(&[value.as_bytes()])
    }

    /// The team's name for a quota group the user named `name`.
    pub(crate) fn group_identity(&self, name: &str) -> String {
        self.mac(&[b"keypool:quota-group:", name.as_bytes()])
    }

    /// The team's name for a rate-limit scope (a model).
    pub(crate) fn scope_identity(&self, scope: &str) -> String {
        self.mac(&[b"keypool:scope:", scope.as_bytes()])
    }

    /// The team's name for a member of a server's endpoint (its name in lower case).
    pub(crate) fn member_identity(&self, name: &str) -> String {
        self.mac(&[b"keypool:member:", name.as_bytes()])
    }

    /// The team's name for a conversation.
    pub(crate) fn session_identity(&self, session: &str) -> String {
        self.mac(&[b"keypool:session:", session.as_bytes()])
    }

    /// `value` of `field` in `target` (a key's suffix, `s:<group>:<scope>`) as stored: followed
    /// by a MAC of all three and the team's name, so a value written by anyone without the secret
    /// (or moved to another field, key or team) is never believed.
    pub(crate) fn seal(&self, target: &str, field: &str, value: &str) -> String {
        let mac = self.value_mac(target, field, value);
        format!("{value} {mac}")
    }

    /// The value `stored` in `field` of `target` holds, if its MAC is right.
    pub(crate) fn open<'a>(&self, target: &str, field: &str, stored: &'a str) -> Option<&'a str> {
        let (value, mac) = stored.rsplit_once(' ')?;
        let expected = self.value_mac(target, field, value);
        // Not secret-dependent timing worth guarding: the MAC is of public data, and a wrong one
        // only makes the value be ignored.
        (mac == expected).then_some(value)
    }

    fn value_mac(&self, target: &str, field: &str, value: &str) -> String {
        let mut mac = self.mac(&[
            b"keypool:value:",
            self.team.as_bytes(),
            b"\0",
            target.as_bytes(),
            b"\0",
            field.as_bytes(),
            b"\0",
            value.as_bytes(),
        ]);
        mac.truncate(VALUE_MAC_DIGITS);
        mac
    }

    fn mac(&self, parts: &[&[u8]]) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.bytes).expect("HMAC takes a key of any length");
        for part in parts {
            mac.update(part);
        }
        hex(&mac.finalize().into_bytes()[..IDENTITY_BYTES])
    }
}

/// Bytes of the MAC an identity keeps.
const IDENTITY_BYTES: usize = 16;

/// Hex digits of the MAC a stored value carries (64 bits: nobody without the secret can make one
/// that passes, and nobody can test guesses but by writing them and watching members ignore them).
const VALUE_MAC_DIGITS: usize = 16;

/// Whether `text` looks like an identity this crate writes: 32 lowercase hex digits.
pub(crate) fn is_identity(text: &str) -> bool {
    text.len() == IDENTITY_BYTES * 2 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl fmt::Debug for TeamSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TeamSecret(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_reads_back_as_written_and_prints_as_redacted() {
        let secret = TeamSecret::generate();
        let again = TeamSecret::parse(&format!("  {}\n", secret.to_hex())).expect("its own hex is a secret");
        assert_eq!(again.key_identity("sk-1"), secret.key_identity("sk-1"), "the same secret names keys alike");
        assert_eq!(format!("{secret:?}"), "TeamSecret(<redacted>)", "Debug never shows the bytes");
        assert_ne!(TeamSecret::generate().to_hex(), secret.to_hex(), "two secrets are not the same");
    }

    #[test]
    fn text_that_is_not_64_hex_digits_is_refused_without_echoing_it() {
        for text in ["", "abc", &"g".repeat(64), &"a".repeat(63), &"é".repeat(32)] {
            let error = TeamSecret::parse(text).expect_err("not a secret");
            assert!(!error.to_string().contains(text) || text.is_empty(), "the message never repeats the text");
        }
    }

    #[test]
    fn identities_are_hmac_sha256_of_the_value_under_the_secret() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mut key = [0u8; SECRET_BYTES];
        key[..4].copy_from_slice(b"Jefe");
        let jefe = TeamSecret::of(key);
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let expected = hex(&mac.finalize().into_bytes()[..16]);
        assert_eq!(expected, "5bdcc146bf60754e6a042426089575c7", "the RFC's MAC, first 128 bits");
        // A 32-byte key padded with zeros is the same HMAC key as "Jefe" (HMAC pads short keys).
        assert_eq!(jefe.key_identity("what do ya want for nothing?"), expected, "a key's identity is that MAC");
        let other = TeamSecret::generate();
        assert_ne!(other.key_identity("sk-1"), jefe.key_identity("sk-1"), "another team names the key otherwise");
        assert_ne!(jefe.group_identity("sk-1"), jefe.key_identity("sk-1"), "groups have names of their own");
        assert!(is_identity(&jefe.scope_identity("gpt-4o")), "identities are 32 hex digits");
    }

    #[test]
    fn a_sealed_value_opens_only_where_it_was_written_and_under_the_same_secret() {
        let secret = TeamSecret::generate();
        let stored = secret.seal("g:abc", "rest", "100 1 -");
        assert_eq!(secret.open("g:abc", "rest", &stored), Some("100 1 -"), "opens where it was written");
        assert_eq!(secret.open("g:abd", "rest", &stored), None, "not moved to another key");
        assert_eq!(secret.open("g:abc", "day", &stored), None, "nor to another field");
        assert_eq!(TeamSecret::generate().open("g:abc", "rest", &stored), None, "nor read by another team");
        let forged = stored.replace("100", "999");
        assert_eq!(secret.open("g:abc", "rest", &forged), None, "a changed value is refused");
        assert_eq!(secret.open("g:abc", "rest", "100 1 -"), None, "so is one without a MAC");
    }

    #[test]
    fn a_value_sealed_for_one_team_is_not_believed_by_another_with_the_same_secret() {
        let secret = TeamSecret::generate();
        let (blue, red) = (secret.for_team("blue"), secret.for_team("red"));
        let stored = blue.seal("g:abc", "rest", "100 1 -");
        assert_eq!(blue.open("g:abc", "rest", &stored), Some("100 1 -"), "the team that sealed it reads it");
        assert_eq!(red.open("g:abc", "rest", &stored), None, "another team sharing the secret does not");
        assert_eq!(red.key_identity("sk-1"), blue.key_identity("sk-1"), "identities are the secret's alone");
    }
}
