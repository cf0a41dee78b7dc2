//! The transport: the IPC contract as the web UI sees it. The command table, strict argument
//! parsing and validation, the DTOs, the events, the one serializable error, and the TypeScript
//! generated from all of them. Handlers are one call into a service each.

mod args;
pub mod bindings;
pub mod commands;
mod dto;
mod error;
pub mod events;
mod issues;

pub use args::*;
pub use commands::{command, dispatch, dispatch_async, dispatch_stream, Command, Kind, COMMANDS};
pub use dto::*;
pub use error::{ErrorCode, ErrorDetails, IpcError};
pub use issues::{Issue, IssueCode, IssueParams};
