//! Keypool's application layer, independent of Tauri so that it compiles and tests in seconds.
//!
//! The arrows point one way:
//!
//! ```text
//! ipc (transport: command table, args, DTOs, events, IpcError, TypeScript bindings)
//!  └▶ context (AppContext: the services over one open store, the sweeper)
//!      └▶ service (keys, providers, chats; ServiceError, which knows nothing of IPC)
//!          └▶ keypool-llm, keypool-store, keypool (the pool)
//! ```
//!
//! The Tauri shell looks each invoke's name up in the command table ([`ipc::command`]); the row
//! says how the command runs ([`ipc::Run`]) and runs it: it parses the JSON payload strictly,
//! validates it, calls one service function and maps the result (or the one serializable
//! [`ipc::IpcError`]) back to JSON.

mod clock;
mod context;
pub mod ipc;
pub mod service;

pub use clock::SystemClock;
pub use context::{AppContext, DatabaseState, Dirs, Wiring};
/// Owner-only files and directories, for the shell's log as for the store's database.
pub use keypool_store::files;
