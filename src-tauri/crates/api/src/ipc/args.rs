//! Command arguments, exactly as the UI sends them: camelCase, no unknown fields, no coercion,
//! no `null` for optional fields. Each type says its rules (garde) where it is declared, beside
//! its command, and converts into the service's input with a `From` impl beside it; here are the
//! parsing all of them share and the arguments several commands take.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use ts_rs::TS;

use super::error::IpcError;
use super::issues::{camel_case_path, Coded, Issue, IssueCode, IssueParams};
use super::limits::LIMITS;
use super::rules::not_blank;

/// The arguments of a command: parsed strictly, then checked field by field (garde), then as a
/// whole. Handlers receive them checked and never validate again.
pub trait CommandArgs: DeserializeOwned + garde::Validate<Context = ()> {
    /// Rules about the arguments as a whole, checked after the per-field ones; none by default.
    fn check_whole(&self) -> Result<(), IpcError> {
        Ok(())
    }
}

/// Parses, validates and checks `payload` as `A`.
pub fn parse<A: CommandArgs>(payload: Value) -> Result<A, IpcError> {
    let args: A = parse_strict(payload)?;
    if let Err(report) = garde::i18n::with_i18n(Coded, || args.validate()) {
        return Err(IpcError::validation(
            report
                .iter()
                .map(|(path, error)| Issue::of_rule(camel_case_path(&path.to_string()), error.message()))
                .collect(),
        ));
    }
    args.check_whole()?;
    Ok(args)
}

/// Arguments of a command that takes none; any field is rejected.
#[derive(Debug, Deserialize, garde::Validate, TS)]
#[serde(deny_unknown_fields)]
#[ts(type = "Record<string, never>")]
pub struct NoArgs {}

impl CommandArgs for NoArgs {}

/// The id of the thing a command acts on.
#[derive(Debug, Deserialize, garde::Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub id: String,
}

impl CommandArgs for IdArgs {}

/// The provider a command reads.
#[derive(Debug, Deserialize, garde::Validate, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderArgs {
    #[garde(length(bytes, max = LIMITS.id.max_bytes), custom(not_blank))]
    pub provider_id: String,
}

impl CommandArgs for ProviderArgs {}

/// Deserializes command arguments with no coercion: unknown fields, wrong types and a
/// non-object payload are validation errors whose issue names the offending field.
fn parse_strict<A: DeserializeOwned>(payload: Value) -> Result<A, IpcError> {
    let payload = match payload {
        Value::Null => Value::Object(Default::default()),
        object @ Value::Object(_) => object,
        other => {
            let got = Some(json_type(&other).to_owned());
            return Err(IpcError::issue("", IssueCode::NotAnObject, IssueParams { got, ..Default::default() }));
        }
    };
    if let Some(path) = first_null(&payload, String::new()) {
        return Err(IpcError::issue(path, IssueCode::NotNull, IssueParams::default()));
    }
    serde_path_to_error::deserialize::<_, A>(payload).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = strip_position(&e.inner().to_string());
        let within = |field: &str| if path.is_empty() { field.to_owned() } else { format!("{path}.{field}") };
        // serde reports a missing field at the enclosing object and names it in the message.
        if let Some(field) = quoted_after(&message, "missing field `") {
            return IpcError::issue(within(field), IssueCode::Required, IssueParams::default());
        }
        if quoted_after(&message, "unknown field `").is_some() {
            return IpcError::issue(path, IssueCode::UnknownField, IssueParams::default());
        }
        if let Some((code, params)) = beyond_its_type(&message) {
            return IpcError::issue(path, code, params);
        }
        match type_mismatch(&message) {
            Some((expected, got)) => {
                let params = IssueParams { expected: Some(expected), got: Some(got), ..Default::default() };
                IpcError::issue(path, IssueCode::WrongType, params)
            }
            None => {
                IpcError::issue(path, IssueCode::Invalid, IssueParams { reason: Some(message), ..Default::default() })
            }
        }
    })
}

/// No argument takes `null`: an optional field is absent or has a value (a `null` weight is an
/// error, not "use the default"). The path of the first `null` field, if any.
fn first_null(value: &Value, path: String) -> Option<String> {
    let Value::Object(fields) = value else { return None };
    fields.iter().find_map(|(name, value)| {
        let path = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        match value {
            Value::Null => Some(path),
            _ => first_null(value, path),
        }
    })
}

fn quoted_after<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?;
    Some(&rest[..rest.find('`')?])
}

/// serde's "invalid type: string \"3\", expected u32" as (`integer`, `string "3"`); an unknown
/// enum variant as (`one of a, b`, `"x"`).
fn type_mismatch(message: &str) -> Option<(String, String)> {
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (got, expected) = rest.split_once(", expected ")?;
        return Some((expected.to_owned(), got.to_owned()));
    }
    let rest = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "))?;
    let (got, expected) = rest.split_once(", expected ")?;
    let expected = match expected {
        "u8" | "u16" | "u32" | "u64" | "i32" | "i64" | "usize" => "integer",
        "f32" | "f64" => "number",
        "a boolean" => "boolean",
        "a string" => "string",
        "a sequence" => "list",
        other => other,
    };
    Some((expected.to_owned(), got.to_owned()))
}

/// serde's "invalid value: integer `65536`, expected u16": a whole number beyond what the
/// field's type holds is too large (or too small) by that type's bound, like one beyond a
/// field's own bound.
fn beyond_its_type(message: &str) -> Option<(IssueCode, IssueParams)> {
    let rest = message.strip_prefix("invalid value: integer `")?;
    let (number, expected) = rest.split_once("`, expected ")?;
    let number: i128 = number.parse().ok()?;
    let (min, max): (i128, i128) = match expected {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    };
    let bound = |n: i128| i64::try_from(n).ok();
    if number < min {
        Some((IssueCode::TooSmall, IssueParams { min: bound(min), ..Default::default() }))
    } else if number > max {
        Some((IssueCode::TooLarge, IssueParams { max: bound(max), ..Default::default() }))
    } else {
        None
    }
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_beyond_its_type_is_too_large_or_too_small_not_a_wrong_type() {
        let too_large = beyond_its_type("invalid value: integer `65536`, expected u16");
        assert_eq!(too_large, Some((IssueCode::TooLarge, IssueParams { max: Some(65535), ..Default::default() })));
        let too_small = beyond_its_type("invalid value: integer `-1`, expected u32");
        assert_eq!(too_small, Some((IssueCode::TooSmall, IssueParams { min: Some(0), ..Default::default() })));
        assert_eq!(beyond_its_type("invalid type: string \"3\", expected u32"), None, "a string stays a wrong type");
    }
}
