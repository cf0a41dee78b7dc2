//! The TypeScript side of the IPC contract, generated from the Rust types (ts-rs) into one
//! checked-in file, `ui/src/ipc/bindings.ts`: every type the command table and the events
//! mention, and the `Commands` and `Events` maps the UI's typed `call` and `listen` read.
//!
//! A test regenerates the file and fails on any difference; `npm run bindings` rewrites it.

use super::error::IpcError;
use super::typescript::TypeSet;
use super::{events, limits, table};

/// Where the bindings live, relative to this crate.
pub const BINDINGS_PATH: &str = "../../../ui/src/ipc/bindings.ts";

/// The whole generated file.
pub fn generate() -> String {
    let mut types = TypeSet::new();
    table::declare_types(&mut types);
    events::declare_types(&mut types);
    types.add::<IpcError>();
    types.add::<super::app::FirstScreen>();
    let mut out = String::from(
        "// Generated from the Rust types of keypool-api (src-tauri/crates/api/src/ipc/bindings.rs).\n\
         // Do not edit by hand: `npm run bindings` rewrites it, and a test fails when it is stale.\n\n",
    );
    for declaration in types.declarations() {
        out.push_str(declaration);
        out.push_str("\n\n");
    }
    out.push_str(&limits::typescript());
    out.push('\n');
    out.push_str(&super::providers::kinds_typescript());
    out.push('\n');
    out.push_str(&table::typescript(&types));
    out.push('\n');
    out.push_str(&events::typescript(&types));
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The checked-in bindings are what the Rust types generate. `UPDATE_BINDINGS=1` rewrites them.
    #[test]
    fn checked_in_bindings_match_the_rust_types() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(super::BINDINGS_PATH);
        let generated = super::generate();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &generated).expect("the bindings file is writable");
            return;
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "{} is stale: the IPC types changed. Run `npm run bindings` and commit the result.",
            path.display()
        );
    }
}
