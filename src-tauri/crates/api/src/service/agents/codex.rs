//! Codex CLI: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`). Codex speaks only OpenAI's
//! Responses API, to the provider `model_provider` names: Keypool's is
//! `[model_providers.keypool]`, its token in `experimental_bearer_token` (read by Codex 0.169 and
//! sent as `Authorization: Bearer`, so nothing needs exporting), and no WebSocket tried
//! (`supports_websockets = false`). The rest of the file is kept as written, comments included.

use toml_edit::{value, DocumentMut, Item, Table};

use keypool::Secret;

use super::{Configured, Malformed, Setup};

/// The provider's name in `model_providers`.
pub(super) const PROVIDER: &str = "keypool";

/// The model's context window, in tokens (Codex 0.169).
const WINDOW: &str = "model_context_window";

/// `config.toml` with Keypool as its model provider (and the model, when one is given).
pub(super) fn plan(files: &[Option<Vec<u8>>], setup: &Setup) -> Result<Vec<Vec<u8>>, Malformed> {
    let malformed = |reason| Malformed { file: 0, reason };
    let text = std::str::from_utf8(files[0].as_deref().unwrap_or_default())
        .map_err(|_| malformed("the file is not UTF-8 text".to_owned()))?;
    let mut config: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| malformed(toml_error(text, &e)))?;
    config["model_provider"] = value(PROVIDER);
    match (setup.model, setup.previous_model) {
        (Some(model), _) => config["model"] = value(model),
        (None, Some(previous)) if config.get("model").and_then(Item::as_str) == Some(previous) => {
            config.remove("model");
        }
        (None, _) => {}
    }
    // The window Codex would otherwise guess for a name it does not know.
    match (setup.window, setup.previous_window) {
        (Some(window), _) => config[WINDOW] = value(i64::from(window)),
        (None, Some(previous)) if config.get(WINDOW).and_then(Item::as_integer) == Some(i64::from(previous)) => {
            config.remove(WINDOW);
        }
        (None, _) => {}
    }
    let providers = config.entry("model_providers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(providers) = providers.as_table_like_mut() else {
        return Err(malformed("`model_providers` is not a table".to_owned()));
    };
    let mut keypool = Table::new();
    keypool["name"] = value("Keypool");
    keypool["base_url"] = value(format!("{}/v1", setup.address));
    keypool["experimental_bearer_token"] = value(setup.token);
    keypool["wire_api"] = value("responses");
    keypool["supports_websockets"] = value(false);
    providers.insert(PROVIDER, Item::Table(keypool));
    Ok(vec![config.to_string().into_bytes()])
}

/// What `config.toml` points Codex at: its `model_provider`'s address and token.
pub(super) fn read(files: &[Option<Vec<u8>>]) -> Configured {
    let Some(config) = files[0]
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .and_then(|text| text.parse::<DocumentMut>().ok())
    else {
        return Configured::default();
    };
    let model = config.get("model").and_then(Item::as_str).map(str::to_owned);
    let Some(provider) = config.get("model_provider").and_then(Item::as_str) else {
        return Configured { model, ..Configured::default() };
    };
    let table = config.get("model_providers").and_then(|p| p.get(provider));
    let text = |key: &str| table.and_then(|t| t.get(key)).and_then(Item::as_str).map(str::to_owned);
    Configured {
        base_url: text("base_url"),
        token: text("experimental_bearer_token").map(Secret::new),
        model,
        key_helper: None,
        trusted_folders_only: false,
    }
}

/// Why the text is not TOML, with where (never the line itself, which may hold a secret).
fn toml_error(text: &str, error: &toml_edit::TomlError) -> String {
    let message = error.message().trim_end_matches('\n').replace('\n', " ");
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}
