//! The events the backend emits to the UI, by name, with their payloads.

use super::bindings::TypeSet;
use super::ProviderChanged;

/// Emitted after every write to a provider's keys; the UI reloads that provider's list.
pub const LLM_CONFIG_CHANGED: &str = "llmConfig:changed";

pub(crate) fn declare_types(types: &mut TypeSet) {
    types.add::<ProviderChanged>();
}

/// The `Events` map of the TypeScript bindings: each event name to its payload.
pub(crate) fn typescript(types: &TypeSet) -> String {
    format!("export type Events = {{\n  {LLM_CONFIG_CHANGED:?}: {};\n}};\n", types.name::<ProviderChanged>())
}
