//! The invoke handler. Commands named `domain:action` cannot come from `generate_handler!`, so
//! this closure serves them: it takes the JSON payload, runs [`keypool_api::dispatch`] on a
//! blocking thread (the store is synchronous SQLite) and resolves or rejects the promise with
//! `{ code, message, issues? }`.

use keypool_api::chat::{ChatEvent, MessageDto, SendArgs};
use keypool_api::{AppContext, IpcError};
use tauri::ipc::{Channel, Invoke, InvokeBody, InvokeError};
use tauri::{Manager, Runtime, State};

/// Sends a message in a chat (or, without `content`, retries the last one) and streams the
/// reply's events through `on_event`. A channel argument needs an ordinary Tauri command, hence
/// the snake_case name. Invoke as `chat_send` with `{ request: { chatId, content? }, onEvent }`.
#[tauri::command]
async fn chat_send(
    state: State<'_, AppContext>,
    request: serde_json::Value,
    on_event: Channel<ChatEvent>,
) -> Result<MessageDto, IpcError> {
    let request: SendArgs = keypool_api::parse_args(request)?;
    keypool_api::chat::validate_send(&request)?;
    let chats = state.chats()?;
    let mut sink = |event: ChatEvent| {
        if let Err(error) = on_event.send(event) {
            tracing::debug!(%error, "the page stopped listening to a reply");
        }
    };
    Ok(chats.send(&request.chat_id, request.content, &mut sink).await?)
}

pub fn handler<R: Runtime>() -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    let generated: Box<dyn Fn(Invoke<R>) -> bool + Send + Sync> = Box::new(tauri::generate_handler![chat_send]);
    move |invoke: Invoke<R>| {
        let name = invoke.message.command().to_owned();
        if !keypool_api::commands().any(|command| command == name) {
            return generated(invoke);
        }
        let payload = match invoke.message.payload() {
            InvokeBody::Json(value) => value.clone(),
            InvokeBody::Raw(_) => serde_json::Value::Null,
        };
        let app = invoke.message.webview_ref().app_handle().clone();
        if keypool_api::ASYNC_COMMANDS.contains(&name.as_str()) {
            invoke.resolver.respond_async(async move {
                let ctx = app.state::<AppContext>();
                keypool_api::dispatch_async(&ctx, &name, payload)
                    .await
                    .unwrap_or_else(|| Err(IpcError::internal(format!("command {name} is not served"))))
                    .map_err(|error| InvokeError(serde_json::to_value(error).unwrap_or_default()))
            });
            return true;
        }
        invoke.resolver.respond_async(async move {
            let result = tauri::async_runtime::spawn_blocking(move || {
                let ctx = app.state::<AppContext>();
                keypool_api::dispatch(&ctx, &name, payload)
                    .unwrap_or_else(|| Err(IpcError::internal(format!("command {name} is not served"))))
            })
            .await
            .unwrap_or_else(|_| Err(IpcError::internal("the command panicked")));
            result.map_err(|error| InvokeError(serde_json::to_value(error).unwrap_or_default()))
        });
        true
    }
}

#[cfg(test)]
mod tests {
    /// A command the capability does not grant fails in the real window with "not allowed";
    /// this catches forgetting to list one in `permissions/`.
    #[test]
    fn every_command_is_granted_by_a_permission_file() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("permissions");
        let granted: String = std::fs::read_dir(&dir)
            .expect("permissions/ exists")
            .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
            .collect();
        for command in keypool_api::commands().chain(["chat_send"]) {
            assert!(granted.contains(&format!("\"{command}\"")), "{command} is not allowed in {}", dir.display());
        }
    }
}

#[cfg(test)]
mod security_tests {
    use serde_json::Value;

    fn read_json(relative: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// The window may call our own commands and listen to events; nothing else (no shell, no
    /// filesystem, no HTTP from the web view: provider traffic happens in Rust).
    #[test]
    fn capability_grants_only_the_apps_commands_and_events() {
        let capability = read_json("capabilities/default.json");
        let permissions: Vec<&str> =
            capability["permissions"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        assert_eq!(
            permissions,
            ["core:event:default", "allow-app", "allow-llm-config", "allow-chat"],
            "no plugin or core permission beyond events"
        );
        let manifest = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
        for plugin in ["tauri-plugin-shell", "tauri-plugin-fs", "tauri-plugin-http", "tauri-plugin-opener"] {
            assert!(!manifest.contains(plugin), "{plugin} must not be a dependency");
        }
    }

    /// An explicit CSP: scripts and everything else from the app itself only; no remote origin.
    #[test]
    fn content_security_policy_is_strict() {
        let config = read_json("tauri.conf.json");
        let csp = config["app"]["security"]["csp"].as_object().expect("an explicit CSP object");
        assert_eq!(csp["default-src"], "'self'", "default-src is the app itself");
        assert_eq!(csp["script-src"], "'self'", "no inline or remote scripts");
        assert_eq!(csp["object-src"], "'none'", "no plugins");
        for (directive, value) in csp {
            let value = value.as_str().unwrap();
            for source in value.split_whitespace() {
                let remote = source.starts_with("http") && source != "http://ipc.localhost";
                assert!(!remote && source != "*" && !source.contains("unsafe-eval"), "{directive}: {source} is not allowed");
            }
        }
    }
}
