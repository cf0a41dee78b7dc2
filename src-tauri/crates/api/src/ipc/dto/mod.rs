//! What the commands return and what the backend streams or emits. No field ever holds a stored
//! secret: keys travel as `apiKeyPreview` (masked; a `$NAME` reference as written). Times are
//! milliseconds since the Unix epoch.

mod app;
mod chat;
mod llm_config;
mod local_api;
mod settings;
mod usage;

pub use app::*;
pub use chat::*;
pub use llm_config::*;
pub use local_api::*;
pub use settings::*;
pub use usage::*;
