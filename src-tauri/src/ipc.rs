//! The invoke handler. Commands named `domain:action` cannot come from `generate_handler!`, so
//! this closure serves them: it takes the JSON payload, runs [`keypool_api::dispatch`] on a
//! blocking thread (the store is synchronous SQLite) and resolves or rejects the promise with
//! `{ code, message, issues? }`.

use keypool_api::{AppContext, IpcError};
use tauri::ipc::{Invoke, InvokeBody, InvokeError};
use tauri::{Manager, Runtime};

pub fn handler<R: Runtime>() -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    move |invoke: Invoke<R>| {
        let name = invoke.message.command().to_owned();
        if !keypool_api::commands().any(|command| command == name) {
            return false;
        }
        let payload = match invoke.message.payload() {
            InvokeBody::Json(value) => value.clone(),
            InvokeBody::Raw(_) => serde_json::Value::Null,
        };
        let app = invoke.message.webview_ref().app_handle().clone();
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
        for command in keypool_api::commands() {
            assert!(granted.contains(&format!("\"{command}\"")), "{command} is not allowed in {}", dir.display());
        }
    }
}
