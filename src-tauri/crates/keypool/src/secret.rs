//! API key values: a type that redacts itself, the masked preview the UI may see, and the
//! resolution of `$NAME` references from the environment.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// An API key value, or a `$NAME` reference to an environment variable.
///
/// Invariants: `Debug` and `Display` print `<redacted>`; there is no `Serialize` (this crate
/// has no serde at all), no `PartialEq` (nothing should branch on a secret's value), and the only
/// way to the text is [`Secret::expose`], whose name makes every use greppable. Cloning is a
/// reference-count increment, so handing a key out on every selection costs no allocation.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps a key value or `$NAME` reference.
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for the one place that needs it: the HTTP request.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `Some("NAME")` when this is a `$NAME` reference to an environment variable.
    ///
    /// Only a well-formed name (`[A-Za-z_][A-Za-z0-9_]*`) counts, so a literal key that happens
    /// to start with `$` is not mistaken for a reference.
    pub fn env_var(&self) -> Option<&str> {
        env_var_name(&self.0)
    }

    /// The masked form that may be shown or sent to the UI; see [`preview`].
    pub fn preview(&self) -> String {
        preview(&self.0)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value.into())
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.into())
    }
}

fn env_var_name(raw: &str) -> Option<&str> {
    let name = raw.strip_prefix('$')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let well_formed =
        (first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    well_formed.then_some(name)
}

/// Prefixes that are a public format marker, not part of the secret, longest first so that
/// `sk-ant-` wins over `sk-`.
const PUBLIC_PREFIXES: &[&str] = &["sk-ant-", "sk-proj-", "sk-or-v1-", "sk-", "gsk_", "xai-"];

/// Keys shorter than this are too short to show a prefix and a tail of.
const SHORT_KEY: usize = 12;

/// The masked form of a raw key, safe to display and to send over IPC.
///
/// * a `$NAME` reference is shown as written (it is a name, not a secret);
/// * a key of 12 characters or more: a known public prefix (`sk-`, `sk-ant-`, …) or else its
///   first 3 characters, then `…`, then its last 4, e.g. `sk-…9f3a`;
/// * a shorter key: `••••` and at most its last 2 characters.
///
/// Invariant: of the characters that are not a public prefix, at most a third is revealed (the
/// tail shrinks below 4, or 2, when the key is short), so a preview never gives away enough to
/// guess the rest.
pub fn preview(raw: &str) -> String {
    if env_var_name(raw).is_some() {
        return raw.to_owned();
    }
    let chars: Vec<char> = raw.chars().collect();
    let n = chars.len();
    let tail_of = |len: usize| chars[n - len..].iter().collect::<String>();
    if n < SHORT_KEY {
        return format!("••••{}", tail_of((n / 3).min(2)));
    }
    let public = PUBLIC_PREFIXES.iter().find(|p| raw.starts_with(**p) && p.len() + 4 <= n);
    let (head, budget) = match public {
        Some(prefix) => (prefix.to_string(), (n - prefix.len()) / 3),
        None => (chars[..3].iter().collect(), n / 3 - 3),
    };
    format!("{head}…{}", tail_of(budget.min(4)))
}

/// Turns a stored key value into the value to send, at the moment it is used.
///
/// Implementations must not log or embed the value in errors. The pool calls it for `$NAME`
/// references only (plain values need no resolving), at each hand-out and outside its lock, so
/// an implementation may be slow (a keyring, say) without stalling other sessions.
pub trait SecretResolver: Send + Sync {
    /// The value to send for `raw`: `raw` itself, or what its `$NAME` reference points to.
    fn resolve(&self, raw: &Secret) -> Result<Secret, ResolveError>;
}

/// Why a `$NAME` reference has no usable value. Names the variable, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The variable is not set.
    #[error("environment variable {var} is not set")]
    Unset {
        /// The variable's name, without `$`.
        var: String,
    },
    /// The variable is set to the empty string, which no provider accepts as a key.
    #[error("environment variable {var} is empty")]
    Empty {
        /// The variable's name, without `$`.
        var: String,
    },
    /// The variable's value is not valid Unicode, so it cannot go into an HTTP header.
    #[error("environment variable {var} is not valid Unicode")]
    NotUnicode {
        /// The variable's name, without `$`.
        var: String,
    },
}

impl ResolveError {
    /// The name of the variable at fault.
    pub fn var(&self) -> &str {
        match self {
            ResolveError::Unset { var } | ResolveError::Empty { var } | ResolveError::NotUnicode { var } => var,
        }
    }
}

/// Resolves `$NAME` from the process environment at each use, so a variable changed by the app
/// (or a test) is seen without reloading keys. Plain values pass through unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub struct EnvResolver;

impl SecretResolver for EnvResolver {
    fn resolve(&self, raw: &Secret) -> Result<Secret, ResolveError> {
        let Some(var) = raw.env_var() else {
            return Ok(raw.clone());
        };
        match std::env::var(var) {
            Ok(value) if value.is_empty() => Err(ResolveError::Empty { var: var.to_owned() }),
            Ok(value) => Ok(Secret::from(value)),
            Err(std::env::VarError::NotPresent) => Err(ResolveError::Unset { var: var.to_owned() }),
            Err(std::env::VarError::NotUnicode(_)) => Err(ResolveError::NotUnicode { var: var.to_owned() }),
        }
    }
}

/// Resolves `$NAME` from a fixed map: the environment of tests and benches, which must not
/// depend on (or race over) the real process environment.
#[derive(Debug, Default, Clone)]
pub struct MapResolver {
    vars: HashMap<String, Secret>,
}

impl MapResolver {
    /// A resolver in whose environment no variable is set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same resolver with `name` set to `value`.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Secret>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }
}

impl SecretResolver for MapResolver {
    fn resolve(&self, raw: &Secret) -> Result<Secret, ResolveError> {
        let Some(var) = raw.env_var() else {
            return Ok(raw.clone());
        };
        match self.vars.get(var) {
            Some(value) if value.expose().is_empty() => Err(ResolveError::Empty { var: var.to_owned() }),
            Some(value) => Ok(value.clone()),
            None => Err(ResolveError::Unset { var: var.to_owned() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_are_redacted() {
        let s = Secret::from("sk-live-0123456789abcdef");
        assert_eq!(format!("{s:?}"), "<redacted>", "Debug must never print the value (logs, panics)");
        assert_eq!(format!("{s}"), "<redacted>", "Display must never print the value (messages)");
        assert_eq!(s.expose(), "sk-live-0123456789abcdef", "expose is the one way to the value");
    }

    #[test]
    fn env_reference_is_shown_as_written() {
        assert_eq!(preview("$OPENAI_API_KEY"), "$OPENAI_API_KEY", "a variable name is not a secret");
        assert_eq!(
            Secret::from("$OPENAI_API_KEY").env_var(),
            Some("OPENAI_API_KEY"),
            "a well-formed $NAME is a reference"
        );
    }

    #[test]
    fn literal_dollar_keys_are_not_references() {
        assert_eq!(Secret::from("$").env_var(), None, "a lone $ names nothing");
        assert_eq!(Secret::from("$9abc").env_var(), None, "names cannot start with a digit");
        assert_eq!(Secret::from("$ab-cd").env_var(), None, "names have no dashes");
        assert_eq!(
            preview("$ab-cdefghijklmnop"),
            "$ab…nop",
            "so such a key is masked like any key (18 chars: 3 + 3 shown)"
        );
    }

    #[test]
    fn known_prefix_then_last_four() {
        assert_eq!(preview("sk-0123456789abcdef9f3a"), "sk-…9f3a", "the sk- prefix is public");
        assert_eq!(
            preview("sk-ant-api03-abcdefghijklmnopqrstuvwxyz-1234"),
            "sk-ant-…1234",
            "the longest known prefix wins over sk-"
        );
        assert_eq!(
            preview("AIzaSyD-abcdefghijklmnop-9876"),
            "AIz…9876",
            "unknown formats show their first three characters"
        );
    }

    #[test]
    fn short_keys_are_fully_masked() {
        assert_eq!(preview("abcdefghijk"), "••••jk", "11 chars: at most the last two");
        assert_eq!(preview("abcde"), "••••e", "5 chars: two would be more than a third");
        assert_eq!(preview("ab"), "••••", "2 chars: nothing may be shown");
        assert_eq!(preview(""), "••••", "an empty key masks to the bullets alone");
    }

    #[test]
    fn never_reveals_more_than_a_third() {
        for n in 0..64 {
            let raw: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let shown = preview(&raw).chars().filter(|c| *c != '•' && *c != '…').count();
            assert!(shown * 3 <= n, "a {n}-char key showed {shown} chars, more than a third of it");
        }
        for n in 12..64 {
            let raw = format!("sk-{}", "x".repeat(n - 3));
            let shown = preview(&raw).chars().count() - "sk-…".chars().count();
            assert!(
                shown * 3 <= n - 3,
                "a {n}-char sk- key showed {shown} secret chars, more than a third of its secret part"
            );
        }
    }

    #[test]
    fn env_resolver_reads_variables_and_passes_values_through() {
        let plain = Secret::from("sk-plain");
        assert_eq!(
            EnvResolver.resolve(&plain).map(|s| s.expose().to_owned()),
            Ok("sk-plain".to_owned()),
            "a plain value is its own resolution"
        );
        let unset = Secret::from("$KEYPOOL_SURELY_UNSET_VARIABLE_7F3A");
        assert_eq!(
            EnvResolver.resolve(&unset).err(),
            Some(ResolveError::Unset { var: "KEYPOOL_SURELY_UNSET_VARIABLE_7F3A".into() }),
            "an unset variable is reported by name"
        );
        let path = Secret::from("$PATH");
        assert!(EnvResolver.resolve(&path).is_ok(), "PATH is set in any test environment");
    }

    #[test]
    fn map_resolver_errors_name_the_variable_not_a_value() {
        let r = MapResolver::new().with("EMPTY", "");
        let Err(err) = r.resolve(&Secret::from("$EMPTY")) else {
            panic!("an empty value is unusable");
        };
        assert_eq!(err.to_string(), "environment variable EMPTY is empty", "names the variable");
    }
}
