//! Rules shared by the arguments of several commands.

pub(crate) fn not_blank(value: &str, _: &()) -> garde::Result {
    if value.trim().is_empty() {
        return Err(garde::Error::new("must not be empty"));
    }
    Ok(())
}

/// The longest key we accept; real keys are far shorter, this only stops pasted garbage.
pub(crate) const MAX_API_KEY_CHARS: usize = 4096;

/// A key is one token (no spaces or line breaks inside), or `$NAME` naming an environment
/// variable.
pub(crate) fn api_key_rule(value: &str, _: &()) -> garde::Result {
    let key = value.trim();
    if key.is_empty() {
        return Err(garde::Error::new("must not be empty"));
    }
    if key.chars().count() > MAX_API_KEY_CHARS {
        return Err(garde::Error::new(format!("must be at most {MAX_API_KEY_CHARS} characters")));
    }
    if key.chars().any(char::is_whitespace) {
        return Err(garde::Error::new("must not contain spaces or line breaks (add one key at a time)"));
    }
    if let Some(name) = key.strip_prefix('$') {
        let mut chars = name.chars();
        let valid = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
            && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(garde::Error::new(
                "after `$` give an environment variable name (letters, digits, `_`; e.g. $OPENAI_API_KEY)",
            ));
        }
    }
    Ok(())
}

pub(crate) fn optional_api_key_rule(value: &Option<String>, ctx: &()) -> garde::Result {
    value.as_deref().map_or(Ok(()), |v| api_key_rule(v, ctx))
}

/// An `http` or `https` URL with a host.
pub(crate) fn base_url_rule(value: &str, _: &()) -> garde::Result {
    match url::Url::parse(value.trim()) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(()),
        Ok(_) => Err(garde::Error::new("must be an http:// or https:// address")),
        Err(_) => Err(garde::Error::new("must be a URL such as https://api.openai.com/v1")),
    }
}

/// A key to set, or `""` to remove it.
pub(crate) fn removable_api_key_rule(value: &Option<String>, ctx: &()) -> garde::Result {
    match value.as_deref() {
        Some("") | None => Ok(()),
        Some(v) => api_key_rule(v, ctx),
    }
}

/// A label, trimmed; an empty one means "no label".
pub(crate) fn normalize_label(label: Option<String>) -> Option<String> {
    label.map(|l| l.trim().to_owned()).filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_reference_needs_a_variable_name() {
        assert!(api_key_rule("$OPENAI_API_KEY", &()).is_ok(), "a valid reference passes");
        assert!(api_key_rule("$", &()).is_err(), "a bare `$` names nothing");
        assert!(api_key_rule("$1ABC", &()).is_err(), "names do not start with a digit");
        assert!(api_key_rule("sk-a b", &()).is_err(), "spaces inside a key are rejected");
        assert!(api_key_rule("  sk-abc  ", &()).is_ok(), "surrounding spaces are trimmed, not an error");
    }
}
