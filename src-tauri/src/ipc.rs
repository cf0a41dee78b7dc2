//! The invoke handler. Every command comes from keypool-api's command table: this closure looks
//! the name up, takes the JSON payload, runs the command as its row says (`sync` on a blocking
//! thread, since the store is synchronous SQLite; `async` and `stream` on the runtime) and
//! resolves or rejects the promise with `{ code, message, issues? }`. A `stream` command's
//! events go through the `tauri::ipc::Channel` the page passes as `onEvent`.

use keypool_api::ipc::{self, IpcError, Run};
use keypool_api::AppContext;
use serde_json::Value;
use tauri::ipc::{Channel, Invoke, InvokeBody, InvokeError, JavaScriptChannelId};
use tauri::{Manager, Runtime};

/// The argument of a `stream` command that carries its channel.
const CHANNEL_ARG: &str = "onEvent";

pub fn handler<R: Runtime>() -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    move |invoke: Invoke<R>| {
        let Some(command) = ipc::command(invoke.message.command()) else {
            return false; // Tauri answers "command not found"
        };
        let payload = match invoke.message.payload() {
            InvokeBody::Json(value) => value.clone(),
            InvokeBody::Raw(_) => Value::Null,
        };
        let webview = invoke.message.webview();
        let app = webview.app_handle().clone();
        let reject = |error: IpcError| InvokeError(serde_json::to_value(error).unwrap_or_default());
        match command.run {
            Run::Blocking(run) => invoke.resolver.respond_async(async move {
                tauri::async_runtime::spawn_blocking(move || run(&app.state::<AppContext>(), payload))
                    .await
                    .unwrap_or_else(|_| Err(IpcError::internal("the command panicked")))
                    .map_err(reject)
            }),
            Run::Async(run) => invoke
                .resolver
                .respond_async(async move { run(&app.state::<AppContext>(), payload).await.map_err(reject) }),
            Run::Stream(run) => invoke.resolver.respond_async(async move {
                let (payload, channel) = take_channel(payload)?;
                let channel: Channel<Value> = channel.channel_on(webview);
                let mut emit = |event: Value| {
                    if let Err(error) = channel.send(event) {
                        tracing::debug!(%error, "the page stopped listening to a stream");
                    }
                };
                run(&app.state::<AppContext>(), payload, &mut emit).await.map_err(reject)
            }),
        }
        true
    }
}

/// Splits a stream command's payload into its arguments and its channel.
fn take_channel(mut payload: Value) -> Result<(Value, JavaScriptChannelId), InvokeError> {
    let missing = || {
        let error = IpcError::issue(
            CHANNEL_ARG,
            ipc::IssueCode::WrongType,
            ipc::IssueParams { expected: Some("channel".into()), ..Default::default() },
        );
        InvokeError(serde_json::to_value(error).unwrap_or_default())
    };
    let channel = payload.as_object_mut().and_then(|args| args.remove(CHANNEL_ARG)).ok_or_else(missing)?;
    let channel = serde_json::from_value(channel).map_err(|_| missing())?;
    Ok((payload, channel))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// A command the capability does not grant fails in the real window with "not allowed", and
    /// a granted name that is no command is a stale grant: the permission files list exactly the
    /// command table's names.
    #[test]
    fn permission_files_grant_exactly_the_command_table() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("permissions");
        let mut granted = BTreeSet::new();
        for entry in std::fs::read_dir(&dir).expect("permissions/ exists") {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let lists = text.split("commands.allow = [").skip(1).map(|rest| &rest[..rest.find(']').unwrap()]);
            for list in lists {
                granted.extend(
                    list.split(',').map(|name| name.trim().trim_matches('"').to_owned()).filter(|n| !n.is_empty()),
                );
            }
        }
        let table: BTreeSet<String> = keypool_api::ipc::COMMANDS.iter().map(|c| c.name.to_owned()).collect();
        assert_eq!(granted, table, "permissions/*.toml must grant every command of the table and nothing else");
    }
}

#[cfg(test)]
mod security_tests {
    use serde_json::Value;

    fn read_json(relative: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// The window may call our own commands and listen to events, and open http(s) links in the
    /// system browser; nothing else (no emitting events, no shell, no filesystem, no HTTP from the
    /// web view: provider traffic happens in Rust).
    #[test]
    fn capability_grants_only_the_apps_commands_and_events() {
        let capability = read_json("capabilities/default.json");
        let entries = capability["permissions"].as_array().unwrap();
        let permissions: Vec<&str> = entries.iter().filter_map(|p| p.as_str()).collect();
        assert_eq!(
            permissions,
            [
                "core:event:allow-listen",
                "core:event:allow-unlisten",
                "allow-app",
                "allow-llm-config",
                "allow-chat",
                "allow-settings",
                "allow-usage",
                "allow-local-api",
                "allow-team"
            ],
            "no plugin or core permission beyond listening to events (the page may not emit them)"
        );
        let scoped: Vec<&Value> = entries.iter().filter(|p| !p.is_string()).collect();
        assert_eq!(scoped.len(), 1, "one scoped permission: the opener's, for links");
        let manifest =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
        for plugin in ["tauri-plugin-shell", "tauri-plugin-fs", "tauri-plugin-http"] {
            assert!(!manifest.contains(plugin), "{plugin} must not be a dependency");
        }
    }

    /// Links in replies open in the system browser through the opener plugin, and only http(s)
    /// URLs with the default browser: no `mailto:`/`file:`/custom scheme, no chosen application
    /// (`with`), no opening paths or revealing files.
    #[test]
    fn opener_may_open_only_http_and_https_urls() {
        let capability = read_json("capabilities/default.json");
        let opener: Vec<&Value> = capability["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| {
                let id = p.as_str().or_else(|| p["identifier"].as_str()).unwrap_or_default();
                id.starts_with("opener:")
            })
            .collect();
        assert_eq!(opener.len(), 1, "only one opener permission (not opener:default, which adds mailto/tel and paths)");
        let grant = opener[0];
        assert_eq!(grant["identifier"], "opener:allow-open-url", "URLs only: no open-path, no reveal");
        let allowed: Vec<&Value> =
            grant["allow"].as_array().expect("a scope, not the unscoped command").iter().collect();
        let urls: Vec<&str> = allowed.iter().map(|entry| entry["url"].as_str().expect("url entries only")).collect();
        assert_eq!(urls, ["https://*", "http://*"], "http and https only");
        for entry in allowed {
            assert_eq!(
                entry.as_object().unwrap().len(),
                1,
                "no `app` field: the default browser only, never a chosen program"
            );
        }
        let lib = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
        assert!(
            lib.contains("open_js_links_on_click(false)"),
            "the plugin injects no link-opening script of its own: only the UI's click handler opens links"
        );
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
                assert!(
                    !remote && source != "*" && !source.contains("unsafe-eval"),
                    "{directive}: {source} is not allowed"
                );
            }
        }
    }
}
