//! The TypeScript side of the IPC contract, generated from the Rust types (ts-rs) into one
//! checked-in file, `ui/src/ipc/bindings.ts`: every type the command table and the events
//! mention, and the `Commands` and `Events` maps the UI's typed `call` and `listen` read.
//!
//! A test regenerates the file and fails on any difference; `npm run bindings` rewrites it.

use std::collections::BTreeMap;

use ts_rs::{Config, TypeVisitor, TS};

use super::{commands, events, IpcError};

/// Where the bindings live, relative to this crate.
pub const BINDINGS_PATH: &str = "../../../ui/src/ipc/bindings.ts";

/// The declarations of a set of types and of everything they mention, by TypeScript name.
pub struct TypeSet {
    cfg: Config,
    declarations: BTreeMap<String, String>,
}

impl TypeSet {
    fn new() -> Self {
        // Times and counters are integers far below 2^53: plain numbers, not bigints.
        TypeSet { cfg: Config::new().with_large_int("number"), declarations: BTreeMap::new() }
    }

    /// Adds `T`'s declaration (if it has one of its own) and those of the types it mentions.
    pub fn add<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_some() {
            let name = T::ident(&self.cfg);
            if self.declarations.contains_key(&name) {
                return;
            }
            let docs = T::docs().unwrap_or_default();
            self.declarations.insert(name, format!("{docs}export {}", T::decl(&self.cfg)));
        }
        T::visit_dependencies(&mut Visit(self));
        T::visit_generics(&mut Visit(self));
    }

    /// `T` as TypeScript spells it where it is used.
    pub fn name<T: TS + 'static + ?Sized>(&self) -> String {
        T::name(&self.cfg)
    }
}

struct Visit<'a>(&'a mut TypeSet);

impl TypeVisitor for Visit<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        self.0.add::<T>();
    }
}

/// The whole generated file.
pub fn generate() -> String {
    let mut types = TypeSet::new();
    commands::declare_types(&mut types);
    events::declare_types(&mut types);
    types.add::<IpcError>();
    let mut out = String::from(
        "// Generated from the Rust types of keypool-api (src-tauri/crates/api/src/ipc/bindings.rs).\n\
         // Do not edit by hand: `npm run bindings` rewrites it, and a test fails when it is stale.\n\n",
    );
    for declaration in types.declarations.values() {
        out.push_str(declaration);
        out.push_str("\n\n");
    }
    out.push_str(&commands::typescript(&types));
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
