//! The transport: the IPC contract as the web UI sees it, one file per domain. A domain's file
//! holds its commands' arguments (parsed strictly, validated where they are declared), their
//! results and their handlers side by side; each handler is one call into a service. A result
//! the UI reads as a service shows it is the service's own type, which derives its TypeScript
//! where it is defined; the DTOs here reshape (each says why) or compose a handler's answer.
//! Beside them: the command table (`table.rs`), the one serializable error and its issues, the
//! events, and the TypeScript generated from all of them.

mod agents;
mod app;
mod args;
pub mod bindings;
mod bulk;
mod chat;
mod error;
pub mod events;
mod issues;
mod keys;
mod limits;
mod local_api;
mod problems;
mod providers;
mod routes;
mod rules;
mod settings;
mod sources;
mod table;
mod team;
mod typescript;
mod usage;

pub use agents::*;
pub use app::*;
pub use args::{parse, CommandArgs, IdArgs, NoArgs, ProviderArgs};
pub use bulk::*;
pub use chat::*;
pub use error::{ErrorCode, ErrorDetails, IpcError};
pub use events::ProviderChanged;
pub use issues::{Issue, IssueCode, IssueParams};
pub use keys::*;
pub use limits::LIMITS;
pub use local_api::*;
pub use problems::*;
pub use providers::*;
pub use routes::*;
pub use settings::*;
pub use sources::*;
pub use table::{command, Answer, Command, Emit, Kind, Pending, Run, COMMANDS};
pub use team::*;
pub use usage::*;
