//! The IPC contract of Keypool, independent of Tauri so that it compiles and tests in seconds.
//!
//! The Tauri shell forwards each `domain:action` invoke here as a name and a JSON payload;
//! [`dispatch`] parses the payload strictly, validates it, calls one service function and maps
//! the result (or the one serializable [`IpcError`]) back to JSON.

mod app;
mod args;
pub mod chat;
mod clock;
mod error;
pub mod llm_config;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use app::{AppContext, AppStatus, DatabaseStatus, Wiring};
pub use clock::SystemClock;
pub use error::{parse_args, ErrorCode, IpcError, Issue};

/// Every command this layer serves (through [`dispatch`] or [`dispatch_async`]).
pub fn commands() -> impl Iterator<Item = &'static str> {
    app::COMMANDS.iter().chain(llm_config::COMMANDS).chain(chat::COMMANDS).copied()
}

/// Commands that do network I/O and must be run with [`dispatch_async`].
pub const ASYNC_COMMANDS: &[&str] = &["llmConfig:testApiKey"];

/// Runs an async command (see [`ASYNC_COMMANDS`]); `None` when `name` is not one.
pub async fn dispatch_async(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
    let result = match name {
        "llmConfig:testApiKey" => llm_config::test_api_key(ctx, payload).await,
        _ => return None,
    };
    if let Err(error) = &result {
        tracing::debug!(command = name, code = ?error.code, message = %error.message, "command failed");
    }
    Some(result)
}

/// Runs the command `name` with `payload`. `None` when the name is not a command of this layer,
/// so the shell can hand it on.
pub fn dispatch(ctx: &AppContext, name: &str, payload: Value) -> Option<Result<Value, IpcError>> {
    let result = match name.split_once(':').map(|(domain, _)| domain) {
        Some("app") => app::dispatch(ctx, name, payload),
        Some("llmConfig") => llm_config::dispatch(ctx, name, payload),
        Some("chat") => chat::dispatch(ctx, name, payload),
        _ => None,
    }?;
    if let Err(error) = &result {
        tracing::debug!(command = name, code = ?error.code, message = %error.message, "command failed");
    }
    Some(result)
}

/// Parses the arguments strictly, runs the handler and serializes its result.
fn run<A, R>(payload: Value, handler: impl FnOnce(A) -> Result<R, IpcError>) -> Result<Value, IpcError>
where
    A: DeserializeOwned,
    R: Serialize,
{
    let args = error::parse_args::<A>(payload)?;
    let value = handler(args)?;
    serde_json::to_value(value).map_err(|e| IpcError::internal(format!("cannot encode result: {e}")))
}
