//! Command arguments, exactly as the UI sends them: camelCase, no unknown fields, no coercion,
//! no `null` for optional fields. Each type says its rules (garde) where it is declared, and
//! converts into the service's input with a `From` impl beside it.

mod chat;
mod llm_config;
mod rules;
mod settings;
mod usage;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use ts_rs::TS;

pub use chat::*;
pub use llm_config::*;
pub use settings::*;
pub use usage::*;

use super::error::{camel_case_path, IpcError, Issue};

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
    if let Err(report) = args.validate() {
        return Err(IpcError::validation(
            report
                .iter()
                .map(|(path, error)| Issue { path: camel_case_path(&path.to_string()), message: error.to_string() })
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

/// Deserializes command arguments with no coercion: unknown fields, wrong types and a
/// non-object payload are validation errors whose issue names the offending field.
fn parse_strict<A: DeserializeOwned>(payload: Value) -> Result<A, IpcError> {
    let payload = match payload {
        Value::Null => Value::Object(Default::default()),
        object @ Value::Object(_) => object,
        other => return Err(IpcError::invalid(format!("arguments must be an object, got {}", json_type(&other)))),
    };
    if let Some(path) = first_null(&payload, String::new()) {
        return Err(IpcError::validation(vec![Issue {
            path,
            message: "must not be null (leave the field out)".into(),
        }]));
    }
    serde_path_to_error::deserialize::<_, A>(payload).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = strip_position(&e.inner().to_string());
        // serde reports a missing field at the enclosing object and names it in the message.
        if let Some(field) = quoted_after(&message, "missing field `") {
            let path = if path.is_empty() { field.to_owned() } else { format!("{path}.{field}") };
            return IpcError::validation(vec![Issue { path, message: "is required".into() }]);
        }
        IpcError::validation(vec![Issue { path, message: plain_type_message(message) }])
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

/// serde's "invalid type: string \"3\", expected u32" in words a user can act on.
fn plain_type_message(message: String) -> String {
    let Some(expected) = message.split(", expected ").nth(1) else { return message };
    let got = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split(", expected").next())
        .unwrap_or("another value");
    let wanted = match expected {
        "u32" | "u64" | "i64" | "usize" => "a whole number",
        "a boolean" => "true or false",
        "a string" => "a string",
        "a sequence" => "a list",
        other => other,
    };
    format!("must be {wanted}, got {got}")
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
