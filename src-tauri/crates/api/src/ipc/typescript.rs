//! The TypeScript declarations of Rust types (ts-rs), collected by name: what the command table
//! and the events declare, and everything those types mention.

use std::collections::BTreeMap;

use ts_rs::{Config, TypeVisitor, TS};

/// The declarations of a set of types and of everything they mention, by TypeScript name.
pub struct TypeSet {
    cfg: Config,
    declarations: BTreeMap<String, String>,
}

impl TypeSet {
    pub(super) fn new() -> Self {
        // Times and counters are integers far below 2^53: plain numbers, not bigints.
        TypeSet { cfg: Config::new().with_large_int("number"), declarations: BTreeMap::new() }
    }

    /// Adds `T`'s declaration (if it has one of its own) and those of the types it mentions.
    pub fn add<T: TS + 'static + ?Sized>(&mut self) {
        // A generic type is declared once, but each use of it names arguments of its own
        // (`Written<ApiKey>`, `Written<KeyList>`): they are visited every time.
        T::visit_generics(&mut Visit(self));
        if T::output_path().is_some() {
            let name = T::ident(&self.cfg);
            let docs = T::docs().unwrap_or_default();
            let declaration = format!("{docs}export {}", T::decl(&self.cfg));
            // Two Rust types of one TypeScript name would be declared as one of them only (a
            // generic type's uses all declare the same).
            if let Some(first) = self.declarations.get(&name) {
                assert!(
                    *first == declaration,
                    "two Rust types are both `{name}` in TypeScript ({}, and another); rename one",
                    std::any::type_name::<T>()
                );
                return;
            }
            self.declarations.insert(name, declaration);
        }
        T::visit_dependencies(&mut Visit(self));
    }

    /// `T` as TypeScript spells it where it is used.
    pub fn name<T: TS + 'static + ?Sized>(&self) -> String {
        T::name(&self.cfg)
    }

    /// Every declaration, sorted by name.
    pub(super) fn declarations(&self) -> impl Iterator<Item = &str> {
        self.declarations.values().map(String::as_str)
    }
}

struct Visit<'a>(&'a mut TypeSet);

impl TypeVisitor for Visit<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        self.0.add::<T>();
    }
}
