//! Gemini CLI: `~/.gemini/settings.json` (the API-key sign-in chosen, so it asks for no
//! other, and the model when one is given) and `~/.gemini/.env`, which it reads for the endpoint
//! and the key (a variable already set in the shell wins over the file).
//!
//! Gemini CLI reads `~/.gemini/.env` only in a folder it trusts (its `findEnvFile`): in any other
//! folder, while its folder trust is on (`security.folderTrust.enabled`, on unless set to
//! `false`), it finds no key and asks for `GEMINI_API_KEY`. A `.env` in the home folder is read
//! everywhere but, outside a trusted folder, only for a few variables (`GEMINI_API_KEY` among
//! them, never `GOOGLE_GEMINI_BASE_URL`), so it cannot point the CLI here. Connect can turn the
//! trust off in the user's `settings.json` (the trust check reads the user's and the system's
//! settings, never a workspace's); that file is kept, so Disconnect puts the setting back.

use super::json::{self, Json};
use keypool::Secret;

use super::{Configured, Malformed, Setup};

pub(super) const BASE_URL: &str = "GOOGLE_GEMINI_BASE_URL";
pub(super) const KEY: &str = "GEMINI_API_KEY";
/// The sign-in Gemini CLI uses with `GEMINI_API_KEY`.
const AUTH_TYPE: &str = "gemini-api-key";

/// `settings.json` and `.env`, in that order.
pub(super) fn plan(files: &[Option<Vec<u8>>], setup: &Setup) -> Result<Vec<Vec<u8>>, Malformed> {
    let malformed = |reason| Malformed { file: 0, reason };
    let mut settings = json::parse_object(files[0].as_deref().unwrap_or_default()).map_err(malformed)?;
    let security = json::object_at(&mut settings, "security").map_err(malformed)?;
    let auth = json::object_at(security, "auth").map_err(malformed)?;
    json::set(auth, "selectedType", Json::String(AUTH_TYPE.to_owned()));
    if setup.trust_all_folders {
        let trust = json::object_at(security, "folderTrust").map_err(malformed)?;
        json::set(trust, "enabled", Json::Bool(false));
    } else if setup.trusted_all_folders {
        // Taken back only as Keypool set it: a user's own `false` is theirs (Disconnect would
        // put their bytes back anyway).
        if let Some(Json::Object(trust)) = security.iter_mut().find(|(k, _)| k == "folderTrust").map(|(_, v)| v) {
            if json::get(trust, "enabled") == Some(&Json::Bool(false)) {
                json::remove(trust, "enabled");
                if trust.is_empty() {
                    json::remove(security, "folderTrust");
                }
            }
        }
    }
    match (setup.model, setup.previous_model) {
        (Some(model), _) => {
            let model_settings = json::object_at(&mut settings, "model").map_err(malformed)?;
            json::set(model_settings, "name", Json::String(model.to_owned()));
        }
        (None, Some(previous)) => {
            if let Some(Json::Object(model_settings)) = settings.iter_mut().find(|(k, _)| k == "model").map(|(_, v)| v)
            {
                if json::text(model_settings, "name") == Some(previous) {
                    json::remove(model_settings, "name");
                    // Emptied by taking Keypool's model out: no `"model": {}` is left behind.
                    if model_settings.is_empty() {
                        json::remove(&mut settings, "model");
                    }
                }
            }
        }
        (None, None) => {}
    }
    let env = files[1].as_deref().unwrap_or_default();
    let env =
        std::str::from_utf8(env).map_err(|_| Malformed { file: 1, reason: "the file is not UTF-8 text".to_owned() })?;
    let env = set_variables(env, &[(BASE_URL, setup.address), (KEY, setup.token)]);
    Ok(vec![json::write_object(&settings), env.into_bytes()])
}

/// What the two files point Gemini CLI at.
pub(super) fn read(files: &[Option<Vec<u8>>]) -> Configured {
    let env = files[1].as_deref().and_then(|bytes| std::str::from_utf8(bytes).ok()).unwrap_or_default();
    let model = files[0].as_deref().and_then(|bytes| json::parse_object(bytes).ok()).and_then(|settings| {
        let Some(Json::Object(model)) = json::get(&settings, "model") else { return None };
        json::text(model, "name").map(str::to_owned)
    });
    let settings = files[0].as_deref().and_then(|bytes| json::parse_object(bytes).ok()).unwrap_or_default();
    Configured {
        base_url: variable(env, BASE_URL),
        token: variable(env, KEY).map(Secret::new),
        model,
        key_helper: None,
        trusted_folders_only: folder_trust_on(&settings),
    }
}

/// Whether Gemini CLI's folder trust is on in `settings` (it is unless set to `false`).
fn folder_trust_on(settings: &json::Object) -> bool {
    let Some(Json::Object(security)) = json::get(settings, "security") else { return true };
    let Some(Json::Object(trust)) = json::get(security, "folderTrust") else { return true };
    json::get(trust, "enabled") != Some(&Json::Bool(false))
}

/// The name a `.env` line assigns (`NAME=…` or `export NAME=…`), if it assigns one.
fn assigned(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    let (name, _) = line.split_once('=')?;
    let name = name.trim_end();
    (!name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())).then_some(name)
}

/// The value of the last line assigning `name`, its quotes taken off.
fn variable(env: &str, name: &str) -> Option<String> {
    let line = env.lines().rfind(|line| assigned(line) == Some(name))?;
    let value = line.split_once('=')?.1.trim();
    let unquoted = ['"', '\''].iter().find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)));
    Some(unquoted.unwrap_or(value).to_owned())
}

/// `env` with every line assigning one of `variables` taken out and `NAME=value` lines for them
/// added at the end; every other line (comments, blank lines, line endings) as it was.
fn set_variables(env: &str, variables: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(env.len() + 128);
    for line in env.split_inclusive('\n') {
        if !variables.iter().any(|(name, _)| assigned(line) == Some(*name)) {
            out.push_str(line);
        }
    }
    let newline = if env.contains("\r\n") { "\r\n" } else { "\n" };
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(newline);
    }
    for (name, value) in variables {
        out.push_str(&format!("{name}={value}{newline}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup<'a>(trust_all_folders: bool, trusted_all_folders: bool) -> Setup<'a> {
        Setup {
            address: "http://127.0.0.1:4141",
            token: "kp-local-x",
            model: None,
            previous_model: None,
            helper: "",
            use_helper: false,
            window: None,
            previous_window: None,
            trust_all_folders,
            trusted_all_folders,
        }
    }

    #[test]
    fn folder_trust_is_turned_off_when_asked_and_taken_back_only_as_keypool_set_it() {
        let user = br#"{"security":{"folderTrust":{"enabled":true}},"ui":{"theme":"Dark"}}"#.to_vec();
        let off = plan(&[Some(user.clone()), None], &setup(true, false)).unwrap_or_else(|_| panic!("merges"));
        let read_back = read(&[Some(off[0].clone()), Some(off[1].clone())]);
        assert!(!read_back.trusted_folders_only, "trust off: the .env is read in every folder");
        assert!(read(&[Some(user), None]).trusted_folders_only, "the user's own settings: only trusted folders");
        assert!(read(&[None, None]).trusted_folders_only, "no settings: Gemini CLI's default is trust on");

        let again = plan(&[Some(off[0].clone()), None], &setup(false, true)).unwrap_or_else(|_| panic!("merges"));
        let text = String::from_utf8(again[0].clone()).unwrap();
        assert!(!text.contains("folderTrust"), "taken back, and its emptied object too: {text}");
        assert!(text.contains("\"theme\""), "the user's other settings stay: {text}");

        let own = br#"{"security":{"folderTrust":{"enabled":false}}}"#.to_vec();
        let kept = plan(&[Some(own), None], &setup(false, false)).unwrap_or_else(|_| panic!("merges"));
        assert!(
            String::from_utf8(kept[0].clone()).unwrap().contains("\"enabled\": false"),
            "a trust the user turned off, not Keypool, stays off"
        );
    }

    #[test]
    fn the_env_file_keeps_its_other_lines_and_gets_one_assignment_of_each_variable() {
        let env = "# mine\nOTHER=1\nexport GEMINI_API_KEY=\"AIza-old\"\n\nGEMINI_API_KEY=again";
        let set = set_variables(env, &[(BASE_URL, "http://127.0.0.1:4141"), (KEY, "kp-local-x")]);
        assert_eq!(
            set, "# mine\nOTHER=1\n\nGOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141\nGEMINI_API_KEY=kp-local-x\n",
            "the old key's lines go, the rest stays, ours come last"
        );
        assert_eq!(
            set_variables(&set, &[(BASE_URL, "http://127.0.0.1:4141"), (KEY, "kp-local-x")]),
            set,
            "twice: the same"
        );
        assert_eq!(variable(env, KEY).as_deref(), Some("again"), "the last assignment is the one read");
        assert_eq!(variable("export GEMINI_API_KEY='q'\n", KEY).as_deref(), Some("q"), "quotes come off");
    }
}
