//! The Coding agents panel end to end below Tauri: Claude Code's, Codex CLI's and Gemini CLI's own
//! files, in a home folder of the test's own, merged on Connect and put back on Disconnect.

use std::path::{Path, PathBuf};

use keypool_fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};

use crate::support::Harness;

const KEY: &str = "sk-agents-AAAAAAAAAAAAAAAAAAAAAAAA-0001";

/// The test's home folder (see `support::context_with`).
pub fn home(h: &Harness) -> PathBuf {
    h.dir.path().join("home")
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[cfg(unix)]
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The token the file at `path` holds after the marker `key` (`"ANTHROPIC_AUTH_TOKEN": "`,
/// `experimental_bearer_token = "`, `GEMINI_API_KEY=`).
pub fn token_in(path: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let at = text.find(key).unwrap_or_else(|| panic!("{} holds {key}:\n{text}", path.display())) + key.len();
    text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect()
}

/// The local API on (on a free port): its own token.
pub async fn local_api_on(h: &Harness) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let configured = h.call_async("localApi:configure", json!({ "enabled": true, "port": port })).await.unwrap();
    configured["token"].as_str().expect("the token, the first time").to_owned()
}

pub fn agent<'a>(overview: &'a Value, name: &str) -> &'a Value {
    overview["agents"].as_array().unwrap().iter().find(|a| a["agent"] == name).unwrap()
}

pub const CLAUDE_BEFORE: &[u8] = b"{\n    \"permissions\": { \"allow\": [\"Bash(ls:*)\"] },\n    \"env\": { \"DISABLE_TELEMETRY\": \"1\" },\n    \"theme\": \"dark\"\n}";
const CODEX_BEFORE: &[u8] = b"# my Codex\nmodel = \"o4-mini\"\napproval_policy = \"on-request\"\n\n[model_providers.other]\nname = \"Other\" # kept\nbase_url = \"https://example.com/v1\"\n\n[profiles.fast]\nmodel = \"gpt-5-mini\"\n";
const GEMINI_SETTINGS_BEFORE: &[u8] =
    b"{\"ui\":{\"theme\":\"GitHub\"},\"security\":{\"folderTrust\":{\"enabled\":true}}}";
const GEMINI_ENV_BEFORE: &[u8] = b"# secrets\r\nOTHER_TOOL_KEY=abc\r\nGEMINI_API_KEY=AIza-mine\r\n";

/// Every agent's files with settings of the user's own, as they were before Keypool.
pub fn users_files(h: &Harness) -> Vec<(PathBuf, &'static [u8])> {
    let home = home(h);
    let files = vec![
        (home.join(".claude/settings.json"), CLAUDE_BEFORE),
        (home.join(".codex/config.toml"), CODEX_BEFORE),
        (home.join(".gemini/settings.json"), GEMINI_SETTINGS_BEFORE),
        (home.join(".gemini/.env"), GEMINI_ENV_BEFORE),
    ];
    for (path, bytes) in &files {
        write(path, bytes);
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_merges_into_each_agents_files_and_disconnect_puts_their_bytes_back() {
    let h = Harness::new();
    let main_token = local_api_on(&h).await;
    let files = users_files(&h);
    #[cfg(unix)]
    set_mode(&files[1].0, 0o640);
    let home = home(&h);

    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode", "model": "claude-sonnet-4-6" }));
    h.ok("localApi:connectAgent", json!({ "agent": "codex" }));
    let connected = h.ok("localApi:connectAgent", json!({ "agent": "geminiCli" }));
    let address = connected["agents"]["address"].as_str().unwrap().to_owned();

    let claude: Value = serde_json::from_slice(&std::fs::read(home.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(claude["env"]["ANTHROPIC_BASE_URL"], address, "Claude Code is pointed at the local API");
    let token = claude["env"]["ANTHROPIC_AUTH_TOKEN"].as_str().unwrap().to_owned();
    assert!(token.starts_with("kp-local-") && token != main_token, "with a token of its own, not the main one");
    assert_eq!(claude["env"]["ANTHROPIC_MODEL"], "claude-sonnet-4-6", "and the model chosen");
    assert_eq!(claude["env"]["DISABLE_TELEMETRY"], "1", "the user's own env stays");
    assert_eq!(claude["permissions"]["allow"][0], "Bash(ls:*)", "and every other setting");
    assert_eq!(claude["theme"], "dark");

    let codex = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    let parsed: toml_edit::DocumentMut = codex.parse().expect("Codex's file stays TOML");
    assert_eq!(parsed["model_provider"].as_str(), Some("keypool"), "Keypool is Codex's provider:\n{codex}");
    let keypool = &parsed["model_providers"]["keypool"];
    assert_eq!(keypool["base_url"].as_str(), Some(format!("{address}/v1").as_str()), "at the local API's /v1");
    assert_eq!(keypool["wire_api"].as_str(), Some("responses"), "Codex speaks only the Responses API");
    assert_eq!(keypool["supports_websockets"].as_bool(), Some(false), "no socket tried first");
    let codex_token = keypool["experimental_bearer_token"].as_str().unwrap().to_owned();
    assert!(codex_token.starts_with("kp-local-") && codex_token != token, "Codex's own token, nothing to export");
    assert_eq!(parsed["model"].as_str(), Some("o4-mini"), "no model chosen: the user's stays");
    assert!(codex.starts_with("# my Codex\n"), "comments stay:\n{codex}");
    assert!(codex.contains("name = \"Other\" # kept"), "and the other provider, as written:\n{codex}");
    #[cfg(unix)]
    assert_eq!(mode(&files[1].0), 0o600, "a file that holds the token is readable by its owner only");

    let gemini: Value = serde_json::from_slice(&std::fs::read(home.join(".gemini/settings.json")).unwrap()).unwrap();
    assert_eq!(gemini["security"]["auth"]["selectedType"], "gemini-api-key", "the API-key sign-in");
    assert_eq!(gemini["security"]["folderTrust"]["enabled"], true, "the user's security settings stay");
    assert_eq!(gemini["ui"]["theme"], "GitHub");
    let env = std::fs::read_to_string(home.join(".gemini/.env")).unwrap();
    let gemini_token = token_in(&home.join(".gemini/.env"), "GEMINI_API_KEY=");
    assert!(![&token, &codex_token, &main_token].contains(&&gemini_token), "Gemini CLI's own token");
    assert_eq!(
        env,
        format!(
            "# secrets\r\nOTHER_TOOL_KEY=abc\r\nGOOGLE_GEMINI_BASE_URL={address}\r\nGEMINI_API_KEY={gemini_token}\r\n"
        ),
        "the user's own key gives way to the local token; the other lines and the line endings stay"
    );

    let overview = h.ok("localApi:getAgents", json!({}));
    for name in ["claudeCode", "codex", "geminiCli"] {
        let status = agent(&overview, name);
        assert!(status["connection"].is_object(), "{name} is connected: {status}");
        assert_eq!(status["pointsHere"], true, "{name}'s files point here");
        assert_eq!(status["token"], "own", "{name} holds its own token");
        assert_eq!(status["connection"]["changed"], json!([]), "{name}: nothing changed since");
    }
    let tokens = h.ok("localApi:listTokens", json!({}));
    let named: Vec<(&str, &str)> = tokens
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["agent"].as_str().unwrap()))
        .collect();
    assert_eq!(
        named,
        [("claude-code", "claude-code"), ("codex", "codex"), ("gemini-cli", "gemini-cli")],
        "each agent's token is listed, named after its agent"
    );
    let transcript = h.transcript_text();
    for agents_token in [&token, &codex_token, &gemini_token] {
        assert!(!transcript.contains(agents_token.as_str()), "an agent's token never crosses IPC");
    }

    for name in ["claudeCode", "codex", "geminiCli"] {
        h.ok("localApi:disconnectAgent", json!({ "agent": name }));
    }
    for (path, before) in &files {
        assert_eq!(std::fs::read(path).unwrap(), *before, "{}: byte for byte as it was", path.display());
    }
    #[cfg(unix)]
    assert_eq!(mode(&files[1].0), 0o640, "and its mode too");
    assert_eq!(h.ok("localApi:listTokens", json!({})), json!([]), "each agent's token was revoked");
    let overview = h.ok("localApi:getAgents", json!({}));
    assert!(agent(&overview, "codex")["connection"].is_null(), "no longer connected");
    assert_eq!(agent(&overview, "codex")["pointsHere"], false, "its file points elsewhere again");
}

#[tokio::test(flavor = "multi_thread")]
async fn connecting_twice_writes_the_same_bytes_and_keeps_the_first_backup() {
    let h = Harness::new();
    local_api_on(&h).await;
    let files = users_files(&h);
    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli", "model": "gemini-2.5-pro" }));
    let once: Vec<Vec<u8>> = files[2..].iter().map(|(p, _)| std::fs::read(p).unwrap()).collect();
    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli", "model": "gemini-2.5-pro" }));
    let twice: Vec<Vec<u8>> = files[2..].iter().map(|(p, _)| std::fs::read(p).unwrap()).collect();
    assert_eq!(once, twice, "connecting again changes nothing");

    // Again without a model: the one Keypool set goes, so the agent's own choice is back.
    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli" }));
    let settings: Value = serde_json::from_slice(&std::fs::read(&files[2].0).unwrap()).unwrap();
    assert!(settings.get("model").is_none(), "the model Keypool set is taken out, no empty object left: {settings}");

    h.ok("localApi:disconnectAgent", json!({ "agent": "geminiCli" }));
    for (path, before) in &files[2..] {
        assert_eq!(
            std::fs::read(path).unwrap(),
            *before,
            "{}: the first backup, not the connected file",
            path.display()
        );
    }
    let again = h.ok("localApi:disconnectAgent", json!({ "agent": "geminiCli" }));
    assert!(agent(&again, "geminiCli")["connection"].is_null(), "disconnecting what is not connected does nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_file_is_reported_and_nothing_is_written() {
    let h = Harness::new();
    local_api_on(&h).await;
    let home = home(&h);
    let broken = b"{\n  \"env\": { \"ANTHROPIC_API_KEY\": \"sk-ant-users-own\", }\n".to_vec();
    write(&home.join(".claude/settings.json"), &broken);
    let not_toml = b"model = \"gpt-5\nmodel_provider = 3 = 4\n".to_vec();
    write(&home.join(".codex/config.toml"), &not_toml);
    let wrong_shape = br#"{"security": {"auth": "oauth-personal"}}"#.to_vec();
    write(&home.join(".gemini/settings.json"), &wrong_shape);

    for (name, path, bytes) in [
        ("claudeCode", home.join(".claude/settings.json"), &broken),
        ("codex", home.join(".codex/config.toml"), &not_toml),
        ("geminiCli", home.join(".gemini/settings.json"), &wrong_shape),
    ] {
        let error = h.err("localApi:connectAgent", json!({ "agent": name }));
        assert_eq!(error.code, keypool_api::ipc::ErrorCode::Conflict, "{name}: a conflict with the file: {error:?}");
        let details = serde_json::to_value(&error.details).unwrap();
        assert_eq!(details["kind"], "agentFile", "{name}: the details name the file");
        assert_eq!(details["file"]["path"], path.display().to_string());
        assert_eq!(details["file"]["problem"]["kind"], "malformed", "{name}: {details}");
        assert!(!error.message.contains("sk-ant-users-own"), "the file's text is never quoted: {}", error.message);
        assert_eq!(std::fs::read(&path).unwrap(), *bytes, "{name}: the file is left untouched");
    }
    assert!(!home.join(".gemini/.env").exists(), "Gemini's other file was not written either");
    assert!(!h.dir.path().join("agents/gemini-cli.json").exists(), "nothing was kept as connected");
    let overview = h.ok("localApi:getAgents", json!({}));
    let claude = agent(&overview, "claudeCode");
    assert!(claude["connection"].is_null(), "not connected");
    assert_eq!(claude["problem"]["problem"]["kind"], "malformed", "the panel says why Connect cannot: {claude}");
    assert_eq!(h.ok("localApi:listTokens", json!({})), json!([]), "and no token was made for any of them");
}

#[tokio::test(flavor = "multi_thread")]
async fn files_that_did_not_exist_go_again_with_the_folders_made_for_them() {
    let h = Harness::new();
    local_api_on(&h).await;
    let home = home(&h);
    std::fs::create_dir_all(&home).unwrap();
    h.ok("localApi:connectAgent", json!({ "agent": "codex" }));
    let config = home.join(".codex/config.toml");
    assert!(config.exists(), "Codex's file is made");
    #[cfg(unix)]
    assert_eq!(mode(&config), 0o600, "readable by its owner only: it holds the token");
    h.ok("localApi:disconnectAgent", json!({ "agent": "codex" }));
    assert!(!config.exists(), "the file Keypool made is gone");
    assert!(!home.join(".codex").exists(), "and the folder made for it");
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0, "the home folder is as it was");
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_needs_the_local_api_on_and_reconnect_gives_a_new_value() {
    let h = Harness::new();
    let error = h.err("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(error.issues.unwrap()[0].code, keypool_api::ipc::IssueCode::LocalApiOff, "the local API is off");
    assert!(!home(&h).join(".claude").exists(), "nothing was written");

    local_api_on(&h).await;
    let error = h.err("localApi:connectAgent", json!({ "agent": "codex", "keyHelper": true }));
    assert_eq!(error.issues.unwrap()[0].code, keypool_api::ipc::IssueCode::NoKeyHelper, "Codex runs no key helper");
    let settings = home(&h).join(".claude/settings.json");
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    let first = token_in(&settings, "\"ANTHROPIC_AUTH_TOKEN\": \"");
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode", "model": "claude-sonnet-4-6" }));
    assert_eq!(token_in(&settings, "\"ANTHROPIC_AUTH_TOKEN\": \""), first, "connecting again keeps its token");
    h.call_async("localApi:regenerateToken", json!({})).await.unwrap();
    let overview = h.ok("localApi:getAgents", json!({}));
    assert_eq!(agent(&overview, "claudeCode")["token"], "own", "a new main token leaves the agent's own alone");

    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode", "newToken": true }));
    let second = token_in(&settings, "\"ANTHROPIC_AUTH_TOKEN\": \"");
    assert_ne!(second, first, "Reconnect with a new token writes a new value");
    let tokens = h.ok("localApi:listTokens", json!({}));
    assert_eq!(tokens.as_array().unwrap().len(), 1, "under the same name: {tokens}");
    assert_eq!(tokens[0]["name"], "claude-code");
}

#[tokio::test(flavor = "multi_thread")]
async fn gemini_cli_is_said_to_read_its_env_only_in_trusted_folders_until_connect_turns_that_off() {
    let h = Harness::new();
    local_api_on(&h).await;
    let files = users_files(&h);
    let settings = home(&h).join(".gemini/settings.json");
    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli" }));
    let overview = h.ok("localApi:getAgents", json!({}));
    assert_eq!(
        agent(&overview, "geminiCli")["trustedFoldersOnly"],
        true,
        "its folder trust is on by default: outside a trusted folder it finds no key"
    );
    assert_eq!(agent(&overview, "claudeCode")["trustedFoldersOnly"], false, "Claude Code reads its files everywhere");

    let error = h.err("localApi:connectAgent", json!({ "agent": "claudeCode", "trustAllFolders": true }));
    assert_eq!(
        error.issues.unwrap()[0].code,
        keypool_api::ipc::IssueCode::NoFolderTrust,
        "only Gemini CLI has the setting"
    );

    let connected = h.ok("localApi:connectAgent", json!({ "agent": "geminiCli", "trustAllFolders": true }));
    let written: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(written["security"]["folderTrust"]["enabled"], false, "trust off, in the user's settings: {written}");
    assert_eq!(written["security"]["auth"]["selectedType"], "gemini-api-key", "the sign-in stays");
    let gemini = agent(&connected["agents"], "geminiCli");
    assert_eq!(gemini["trustedFoldersOnly"], false, "it reads ~/.gemini/.env in every folder now");
    assert_eq!(gemini["connection"]["trustAllFolders"], true, "the card knows Keypool did it");

    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli" }));
    let again: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(again["security"].get("folderTrust"), None, "not asked again: Keypool's setting is taken back: {again}");

    h.ok("localApi:connectAgent", json!({ "agent": "geminiCli", "trustAllFolders": true }));
    h.ok("localApi:disconnectAgent", json!({ "agent": "geminiCli" }));
    for (path, before) in files.iter().filter(|(p, _)| p.starts_with(home(&h).join(".gemini"))) {
        assert_eq!(
            std::fs::read(path).unwrap(),
            *before,
            "{}: Disconnect puts the trust back, byte for byte",
            path.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_changed_since_connect_is_put_back_only_when_forced() {
    let h = Harness::new();
    local_api_on(&h).await;
    let files = users_files(&h);
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    let settings = &files[0].0;
    let mut edited = std::fs::read_to_string(settings).unwrap();
    edited = edited.replace("\"theme\": \"dark\"", "\"theme\": \"light\"");
    std::fs::write(settings, &edited).unwrap();

    let overview = h.ok("localApi:getAgents", json!({}));
    assert_eq!(agent(&overview, "claudeCode")["connection"]["changed"], json!([settings.display().to_string()]));
    let error = h.err("localApi:disconnectAgent", json!({ "agent": "claudeCode" }));
    let details = serde_json::to_value(&error.details).unwrap();
    assert_eq!(details["file"]["problem"]["kind"], "changed", "restoring would undo the change: {details}");
    assert_eq!(std::fs::read_to_string(settings).unwrap(), edited, "so nothing was restored");
    h.ok("localApi:disconnectAgent", json!({ "agent": "claudeCode", "force": true }));
    assert_eq!(std::fs::read(settings).unwrap(), CLAUDE_BEFORE, "forced: the backup, byte for byte");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_settings_file_that_is_a_link_is_written_through_and_stays_a_link() {
    let h = Harness::new();
    local_api_on(&h).await;
    let home = home(&h);
    let dotfiles = h.dir.path().join("dotfiles/claude.json");
    write(&dotfiles, CLAUDE_BEFORE);
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&dotfiles, home.join(".claude/settings.json")).unwrap();
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    let link = home.join(".claude/settings.json");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    assert!(std::fs::read_to_string(&dotfiles).unwrap().contains("ANTHROPIC_AUTH_TOKEN"), "its target was written");
    h.ok("localApi:disconnectAgent", json!({ "agent": "claudeCode" }));
    assert_eq!(std::fs::read(&dotfiles).unwrap(), CLAUDE_BEFORE, "and put back");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_panel_says_where_each_agents_model_goes_and_when_it_last_called() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake OpenAI", "kind": "openai", "baseUrl": format!("{}/v1", fake.url()), "models": ["gpt-fake"] }),
    );
    h.ok("llmConfig:addApiKey", json!({ "providerId": provider["id"], "apiKey": KEY }));
    fake.always(KEY, Reply::text(&["Hello"]));
    local_api_on(&h).await;
    h.ok(
        "localApi:setRoutes",
        json!({ "routes": [{ "model": "claude-*", "provider": provider["id"], "toModel": "gpt-fake" }] }),
    );

    let overview = h.ok("localApi:getAgents", json!({}));
    let claude = agent(&overview, "claudeCode");
    assert_eq!(claude["model"], Value::Null, "no model set in its files");
    assert_eq!(
        claude["resolution"],
        json!({ "kind": "routed", "provider": "Fake OpenAI", "model": "gpt-fake", "via": { "kind": "route", "glob": "claude-*" }, "usable": true }),
        "its default model goes through the route"
    );
    assert_eq!(agent(&overview, "geminiCli")["resolution"]["kind"], "unknown", "nothing answers Gemini CLI's default");
    assert_eq!(claude["lastCall"], Value::Null, "it never called");
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode" }));
    let token = token_in(&home(&h).join(".claude/settings.json"), "\"ANTHROPIC_AUTH_TOKEN\": \"");

    let address = overview["address"].as_str().unwrap();
    let answer = reqwest::Client::new()
        .post(format!("{address}/v1/messages"))
        .header("x-api-key", &token)
        .header("anthropic-version", "2023-06-01")
        // Whatever it says it is: its token says who asked.
        .header("user-agent", "curl/8.5.0")
        .json(
            &json!({ "model": "claude-opus-5-5", "max_tokens": 10, "messages": [{ "role": "user", "content": "hi" }] }),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "Claude Code's default model answered through the route");
    // The panel reads the ledger after what it holds unwritten is written.
    let last_call = agent(&h.ok("localApi:getAgents", json!({})), "claudeCode")["lastCall"].clone();
    assert!(last_call.is_i64(), "the ledger knows when Claude Code's token last asked: {last_call}");
    let overview = h.ok("localApi:getAgents", json!({}));
    assert_eq!(agent(&overview, "codex")["lastCall"], Value::Null, "another agent did not");
}

#[test]
fn usage_by_source_names_each_agent_and_a_sharp_drop_of_its_cache_share() {
    let h = Harness::new();
    let start = crate::support::START.as_millis();
    let hour = 3_600_000_i64;
    let conn = rusqlite::Connection::open(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    let attempt = |at: i64, source: &str, input: i64, cached: i64| {
        conn.execute(
            "INSERT INTO usage_attempts (at, provider_id, model, source, outcome, latency_ms, input_tokens, \
             cached_tokens, output_tokens) VALUES (?1, 'p', 'm', ?2, 'ok', 5, ?3, ?4, 10)",
            rusqlite::params![at, source, input, cached],
        )
        .unwrap();
    };
    // Claude Code: 80 % cached the week before, 10 % in the last day. Codex: steady.
    for i in 0..10 {
        attempt(start - 3 * 24 * hour - i * hour, "claude-cli/2.1.328 (external, sdk-cli)", 10_000, 8_000);
        attempt(start - 2 * hour - i * 60_000, "claude-cli/2.1.328 (external, sdk-cli)", 10_000, 1_000);
        attempt(start - 3 * 24 * hour - i * hour, "codex_exec/0.169.0 (Debian 12; x86_64)", 10_000, 7_000);
        attempt(start - 2 * hour - i * 60_000, "codex_exec/0.169.0 (Debian 12; x86_64)", 10_000, 7_000);
    }
    attempt(start - hour, "chat", 1_000, 0);
    attempt(start - hour, "OpenAI/Python 1.99.0", 2_000, 500);

    let report = h.ok("usage:getBySource", json!({ "from": start - 8 * 24 * hour, "to": start }));
    let sources: Vec<(String, u64, Option<f64>)> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = s["source"]["agent"].as_str().or(s["source"]["kind"].as_str()).unwrap().to_owned();
            (name, s["requests"].as_u64().unwrap(), s["cachedShare"].as_f64())
        })
        .collect();
    assert_eq!(
        sources,
        [
            ("claudeCode".to_owned(), 20, Some(0.45)),
            ("codex".to_owned(), 20, Some(0.7)),
            ("geminiCli".to_owned(), 0, None),
            ("chat".to_owned(), 1, Some(0.0)),
            ("other".to_owned(), 1, Some(0.25)),
        ],
        "every source in order, each with its share of cached input"
    );
    assert_eq!(
        report["drops"],
        json!([{ "agent": "claudeCode", "lastDay": 0.1, "weekBefore": 0.8 }]),
        "Claude Code's cache share fell from 80 % to 10 %; Codex's held"
    );
    let error = h.err("usage:getBySource", json!({ "from": start, "to": start }));
    assert_eq!(error.issues.unwrap()[0].code, keypool_api::ipc::IssueCode::RangeOrder, "an empty range is refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_tells_codex_and_claude_code_the_routed_models_window_and_takes_it_back() {
    let h = Harness::new();
    let fake = FakeProvider::start().await;
    let provider = h.ok(
        "llmConfig:addProvider",
        json!({ "name": "Fake Gemini", "kind": "gemini", "baseUrl": fake.url(), "models": ["gemini-2.5-pro"] }),
    );
    local_api_on(&h).await;
    h.ok(
        "localApi:setRoutes",
        json!({ "routes": [{ "model": "big-context", "provider": provider["id"], "toModel": "gemini-2.5-pro" }] }),
    );
    let home = home(&h);
    let files = users_files(&h);
    let codex = home.join(".codex/config.toml");
    let claude = home.join(".claude/settings.json");
    let window_of_codex = || {
        let parsed: toml_edit::DocumentMut = std::fs::read_to_string(&codex).unwrap().parse().unwrap();
        parsed.get("model_context_window").and_then(toml_edit::Item::as_integer)
    };
    let window_of_claude = || {
        let parsed: Value = serde_json::from_slice(&std::fs::read(&claude).unwrap()).unwrap();
        parsed["env"]["CLAUDE_CODE_AUTO_COMPACT_WINDOW"].as_str().map(str::to_owned)
    };

    // A route's name: the window of the model it goes to, not a guess for the name.
    h.ok("localApi:connectAgent", json!({ "agent": "codex", "model": "big-context" }));
    assert_eq!(window_of_codex(), Some(1_048_576), "Gemini 2.5 Pro's window, through the route");
    h.ok("localApi:connectAgent", json!({ "agent": "claudeCode", "model": "claude-sonnet-4-6" }));
    assert_eq!(window_of_claude().as_deref(), Some("200000"));
    // The user's own figure wins.
    h.ok("localApi:connectAgent", json!({ "agent": "codex", "model": "big-context", "contextWindow": 500000 }));
    assert_eq!(window_of_codex(), Some(500_000));
    // Connect again with no model: the window Keypool wrote goes with the model.
    h.ok("localApi:connectAgent", json!({ "agent": "codex" }));
    assert_eq!(window_of_codex(), None, "taken out");
    let refused = h.call("localApi:connectAgent", json!({ "agent": "codex", "contextWindow": 10 }));
    assert!(refused.is_err(), "a window of ten tokens is refused: {refused:?}");
    // Disconnect puts every file back as it was.
    for agent in ["codex", "claudeCode"] {
        h.ok("localApi:disconnectAgent", json!({ "agent": agent }));
    }
    for (path, before) in files.iter().take(2) {
        assert_eq!(std::fs::read(path).unwrap(), *before, "{} as it was", path.display());
    }
}

#[test]
fn usage_by_source_counts_each_sources_failures_and_its_cost_where_models_have_prices() {
    let h = Harness::new();
    let start = crate::support::START.as_millis();
    let conn = rusqlite::Connection::open(h.dir.path().join(keypool_store::DATABASE_FILE_NAME)).unwrap();
    let attempt = |source: &str, model: &str, outcome: &str, input: i64, output: i64| {
        conn.execute(
            "INSERT INTO usage_attempts (at, provider_id, model, source, outcome, latency_ms, input_tokens, \
             cached_tokens, output_tokens) VALUES (?1, 'p', ?2, ?3, ?4, 5, ?5, 0, ?6)",
            rusqlite::params![start - 60_000, model, source, outcome, input, output],
        )
        .unwrap();
    };
    let claude = "claude-cli/2.1.328 (external, sdk-cli)";
    attempt(claude, "priced", "ok", 1_000_000, 100_000);
    attempt(claude, "priced", "rate_limited", 0, 0);
    attempt(claude, "unpriced", "ok", 1_000, 10);
    attempt("chat", "priced", "ok", 500_000, 0);
    attempt("chat", "unpriced", "auth_rejected", 0, 0);
    attempt("chat", "priced", "stopped", 0, 0);
    h.ok("usage:setPrice", json!({ "model": "priced", "inputPerMillion": 2.0, "outputPerMillion": 10.0 }));

    let report = h.ok("usage:getBySource", json!({ "from": start - 3_600_000, "to": start }));
    let of = |kind: &str| {
        report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["source"]["agent"] == kind || s["source"]["kind"] == kind)
            .unwrap()
            .clone()
    };
    let claude = of("claudeCode");
    assert_eq!((claude["requests"].as_u64(), claude["failures"].as_u64()), (Some(3), Some(1)), "a 429 failed");
    assert_eq!(claude["cost"], json!(3.0), "1 M input at $2 and 100 k output at $10: {claude}");
    assert_eq!(claude["costComplete"], false, "a model without a price spent tokens: the cost is partial");
    let chat = of("chat");
    assert_eq!(chat["failures"], 1, "a refusal fails, a stop does not: {chat}");
    assert_eq!(
        (chat["cost"].clone(), chat["costComplete"].clone()),
        (json!(1.0), json!(true)),
        "a refusal spent nothing"
    );
    assert_eq!(of("codex")["cost"], Value::Null, "no request, no cost");
}
