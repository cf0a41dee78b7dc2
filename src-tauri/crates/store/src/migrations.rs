//! The schema, as an ordered list of migrations. `PRAGMA user_version` records how many have
//! run. Migrations are append-only: never edit one that has shipped, add the next.

use std::sync::LazyLock;

use rusqlite_migration::{Migrations, M};

const SOURCES: &[&str] = &[
    include_str!("../migrations/0001_settings.sql"),
    include_str!("../migrations/0002_providers_and_api_keys.sql"),
    include_str!("../migrations/0003_provider_models_and_chats.sql"),
];

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: u32 = SOURCES.len() as u32;

pub(crate) static MIGRATIONS: LazyLock<Migrations<'static>> =
    LazyLock::new(|| Migrations::new(SOURCES.iter().map(|sql| M::up(sql)).collect()));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        MIGRATIONS.validate().expect("every migration must apply cleanly to an empty database");
    }
}
