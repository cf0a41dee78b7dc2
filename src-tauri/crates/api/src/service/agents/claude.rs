//! Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`), whose `env`
//! Claude Code applies to itself before anything else. `ANTHROPIC_AUTH_TOKEN` is sent as
//! `Authorization: Bearer` and takes precedence over an `ANTHROPIC_API_KEY`, an `apiKeyHelper`
//! and a claude.ai login, without the "use this API key?" question `ANTHROPIC_API_KEY` asks.

use super::json::{self, Json};
use keypool::Secret;

use super::{Configured, Malformed, Setup};

pub(super) const BASE_URL: &str = "ANTHROPIC_BASE_URL";
pub(super) const TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";
pub(super) const MODEL: &str = "ANTHROPIC_MODEL";

/// `settings.json` with the endpoint, the token and the model (when one is given) in its `env`.
pub(super) fn plan(files: &[Option<Vec<u8>>], setup: &Setup) -> Result<Vec<Vec<u8>>, Malformed> {
    let bytes = files[0].as_deref().unwrap_or_default();
    let malformed = |reason| Malformed { file: 0, reason };
    let mut settings = json::parse_object(bytes).map_err(malformed)?;
    let env = json::object_at(&mut settings, "env").map_err(malformed)?;
    json::set(env, BASE_URL, Json::String(setup.address.to_owned()));
    json::set(env, TOKEN, Json::String(setup.token.to_owned()));
    match (setup.model, setup.previous_model) {
        (Some(model), _) => json::set(env, MODEL, Json::String(model.to_owned())),
        // The model Keypool set before goes; one the user set stays.
        (None, Some(previous)) if json::text(env, MODEL) == Some(previous) => json::remove(env, MODEL),
        (None, _) => {}
    }
    Ok(vec![json::write_object(&settings)])
}

/// What `settings.json` points Claude Code at.
pub(super) fn read(files: &[Option<Vec<u8>>]) -> Configured {
    let Some(settings) = files[0].as_deref().and_then(|bytes| json::parse_object(bytes).ok()) else {
        return Configured::default();
    };
    let Some(Json::Object(env)) = json::get(&settings, "env") else { return Configured::default() };
    let text = |key| json::text(env, key).map(str::to_owned);
    Configured {
        base_url: text(BASE_URL),
        token: text(TOKEN).or_else(|| text("ANTHROPIC_API_KEY")).map(Secret::new),
        model: text(MODEL).or_else(|| json::text(&settings, "model").map(str::to_owned)),
    }
}
