//! The TypeScript declarations of Rust types (ts-rs), collected by name: what the command table
//! and the events declare, and everything those types mention.

use std::collections::BTreeMap;

use ts_rs::{Config, TypeVisitor, TS};

/// The declarations of a set of types and of everything they mention, by TypeScript name.
pub struct TypeSet {
    cfg: Config,
    declarations: BTreeMap<String, String>,
    /// The Rust type behind each name: two types of one name would declare one of them only.
    owners: BTreeMap<String, (std::any::TypeId, &'static str)>,
}

impl TypeSet {
    pub(super) fn new() -> Self {
        // Times and counters are integers far below 2^53: plain numbers, not bigints.
        TypeSet { cfg: Config::new().with_large_int("number"), declarations: BTreeMap::new(), owners: BTreeMap::new() }
    }

    /// Adds `T`'s declaration (if it has one of its own) and those of the types it mentions.
    pub fn add<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_some() {
            let name = T::ident(&self.cfg);
            let owner = (std::any::TypeId::of::<T>(), std::any::type_name::<T>());
            if let Some((id, first)) = self.owners.get(&name) {
                assert!(
                    *id == owner.0,
                    "two Rust types are both `{name}` in TypeScript: {first} and {}; rename one",
                    owner.1
                );
                return;
            }
            self.owners.insert(name.clone(), owner);
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
