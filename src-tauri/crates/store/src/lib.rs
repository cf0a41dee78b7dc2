//! Keypool's storage: one SQLite file in the data directory, opened once at startup in WAL
//! mode, shared behind a mutex, its schema built by versioned migrations.
//!
//! Invariant: opening never destroys what a user saved. A file that is not a database, or
//! that a newer Keypool migrated past what this build knows, is reported as an [`OpenError`]
//! and left exactly as it was (no journal-mode switch, no migration, no new empty file in its
//! place).

pub mod api_keys;
pub mod attachments;
pub mod backups;
pub mod balances;
pub mod chats;
mod database;
pub mod files;
pub mod members;
mod migrations;
pub mod outbox;
pub mod providers;
pub mod report;
pub mod settings;
pub mod sources;
mod stored_key;
pub mod usage;

pub use database::{Database, OpenError, StoreError, DATABASE_FILE_NAME};
pub use migrations::SCHEMA_VERSION;
pub use rusqlite;
pub use stored_key::{StoredKey, KEYCHAIN_MARKER};
