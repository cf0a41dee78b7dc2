use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The fixed set of error codes the UI may match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Validation,
    NotFound,
    Conflict,
    Storage,
    Provider,
    NoAvailableKey,
    Internal,
}

/// One problem with one argument; `path` is camelCase as the UI sent it (e.g. `weight`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

/// The one error that crosses IPC: `{ code, message, issues? }`.
///
/// Invariant: `message` is written for a person and never contains a stored secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct IpcError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
}

impl IpcError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        IpcError { code, message: message.into(), issues: None }
    }

    pub fn validation(issues: Vec<Issue>) -> Self {
        let message = match issues.as_slice() {
            [one] if one.path.is_empty() => one.message.clone(),
            [one] => format!("{}: {}", one.path, one.message),
            _ => format!("{} arguments are invalid", issues.len()),
        };
        IpcError { code: ErrorCode::Validation, message, issues: Some(issues) }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        IpcError::new(ErrorCode::Internal, message)
    }

    pub fn storage(message: impl Into<String>) -> Self {
        IpcError::new(ErrorCode::Storage, message)
    }
}

impl From<crate::llm_config::ServiceError> for IpcError {
    fn from(error: crate::llm_config::ServiceError) -> Self {
        use crate::llm_config::ServiceError;
        use keypool::PoolError;
        match error {
            ServiceError::NotFound { .. } => IpcError::new(ErrorCode::NotFound, error.to_string()),
            ServiceError::Conflict(message) => IpcError::new(ErrorCode::Conflict, message),
            ServiceError::Invalid(issues) => IpcError::validation(issues),
            ServiceError::Store(e) => {
                tracing::error!(error = %e, "storage failure");
                IpcError::storage(format!("the database failed: {e}"))
            }
            ServiceError::Pool(e @ PoolError::NoAvailableKey { .. }) => IpcError::new(ErrorCode::NoAvailableKey, e.to_string()),
            ServiceError::Pool(e @ PoolError::UnresolvedEnv { .. }) => IpcError::new(ErrorCode::Provider, e.to_string()),
            ServiceError::Pool(e @ PoolError::Load { .. }) => {
                tracing::error!(error = ?e, "the pool could not load keys");
                IpcError::storage(e.to_string())
            }
        }
    }
}

/// Deserializes command arguments with no coercion: unknown fields, wrong types and a
/// non-object payload are validation errors whose issue names the offending field.
pub fn parse_args<A: DeserializeOwned>(payload: Value) -> Result<A, IpcError> {
    let payload = match payload {
        Value::Null => Value::Object(Default::default()),
        object @ Value::Object(_) => object,
        other => {
            return Err(IpcError::validation(vec![Issue {
                path: String::new(),
                message: format!("arguments must be an object, got {}", json_type(&other)),
            }]))
        }
    };
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
