//! Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`), whose `env`
//! Claude Code applies to itself before anything else. `ANTHROPIC_AUTH_TOKEN` is sent as
//! `Authorization: Bearer` and takes precedence over an `ANTHROPIC_API_KEY`, an `apiKeyHelper`
//! and a claude.ai login, without the "use this API key?" question `ANTHROPIC_API_KEY` asks.
//!
//! Or, when the user chooses, no token in the file at all: `apiKeyHelper`, a command Claude Code
//! runs (in `/bin/sh`) for its key, prints the token from a file of Keypool's own (0600, in a
//! folder only its owner can enter); the tokens in `env` go, as they would win over the helper.

use super::json::{self, Json};
use keypool::Secret;

use super::{Configured, Malformed, Setup};

pub(super) const BASE_URL: &str = "ANTHROPIC_BASE_URL";
pub(super) const TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";
pub(super) const MODEL: &str = "ANTHROPIC_MODEL";
const API_KEY: &str = "ANTHROPIC_API_KEY";
const KEY_HELPER: &str = "apiKeyHelper";
/// The window Claude Code compacts the conversation within (Claude Code 2.1: it assumes 200k,
/// or 1M for a name it does not know).
const WINDOW: &str = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";

/// `settings.json` with the endpoint, the token and the model (when one is given) in its `env`.
pub(super) fn plan(files: &[Option<Vec<u8>>], setup: &Setup) -> Result<Vec<Vec<u8>>, Malformed> {
    let bytes = files[0].as_deref().unwrap_or_default();
    let malformed = |reason| Malformed { file: 0, reason };
    let mut settings = json::parse_object(bytes).map_err(malformed)?;
    let env = json::object_at(&mut settings, "env").map_err(malformed)?;
    json::set(env, BASE_URL, Json::String(setup.address.to_owned()));
    if setup.use_helper {
        json::remove(env, TOKEN);
        json::remove(env, API_KEY);
    } else {
        json::set(env, TOKEN, Json::String(setup.token.to_owned()));
    }
    match (setup.model, setup.previous_model) {
        (Some(model), _) => json::set(env, MODEL, Json::String(model.to_owned())),
        // The model Keypool set before goes; one the user set stays.
        (None, Some(previous)) if json::text(env, MODEL) == Some(previous) => json::remove(env, MODEL),
        (None, _) => {}
    }
    match (setup.window, setup.previous_window) {
        (Some(window), _) => json::set(env, WINDOW, Json::String(window.to_string())),
        (None, Some(previous)) if json::text(env, WINDOW) == Some(previous.to_string().as_str()) => {
            json::remove(env, WINDOW)
        }
        (None, _) => {}
    }
    if setup.use_helper {
        json::set(&mut settings, KEY_HELPER, Json::String(setup.helper.to_owned()));
    } else if json::text(&settings, KEY_HELPER) == Some(setup.helper) {
        // Keypool's helper from an earlier Connect goes; one of the user's own stays.
        json::remove(&mut settings, KEY_HELPER);
    }
    Ok(vec![json::write_object(&settings)])
}

/// What `settings.json` points Claude Code at.
pub(super) fn read(files: &[Option<Vec<u8>>]) -> Configured {
    let Some(settings) = files[0].as_deref().and_then(|bytes| json::parse_object(bytes).ok()) else {
        return Configured::default();
    };
    let key_helper = json::text(&settings, KEY_HELPER).map(str::to_owned);
    let Some(Json::Object(env)) = json::get(&settings, "env") else {
        return Configured { key_helper, ..Configured::default() };
    };
    let text = |key| json::text(env, key).map(str::to_owned);
    Configured {
        base_url: text(BASE_URL),
        token: text(TOKEN).or_else(|| text(API_KEY)).map(Secret::new),
        model: text(MODEL).or_else(|| json::text(&settings, "model").map(str::to_owned)),
        key_helper,
        trusted_folders_only: false,
    }
}
