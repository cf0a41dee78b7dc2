//! Coding agents on the local API: Claude Code, Codex CLI and Gemini CLI pointed at this
//! Keypool by writing their own configuration files, and put back as they were.
//!
//! Invariants:
//! - Connect writes nothing before every file it will change was read and merged: a file it
//!   cannot read or merge (not JSON, not TOML, a key of the wrong type) is reported and left
//!   untouched, and so are the others.
//! - Before the first write, each file's bytes (or its absence) and its mode are kept in the
//!   app's data directory, with a manifest that says what Keypool wrote; Disconnect puts those
//!   bytes back exactly (or removes a file that did not exist, and the folders made for it).
//!   Connecting again keeps the first backup.
//! - Every write is atomic (a temporary file in the same folder, flushed, renamed over), and a
//!   symbolic link is written through, not replaced. A file that holds the token ends readable by
//!   its owner only (0600): an existing one others could read is tightened, the caller told, and
//!   its old mode kept for Disconnect to put back.
//! - Each agent has a token of its own, a named token of the local API made by Connect (its rules
//!   kept when Reconnect gives it a new value) and revoked by Disconnect, so the ledger knows which
//!   agent asked whatever headers it sends. Claude Code can instead read it from a command
//!   (`apiKeyHelper`) that prints Keypool's own copy, so it never sits in a settings file.
//! - The token is never logged: it is a [`Secret`], and errors name files, never their text.

mod claude;
mod codex;
mod files;
mod gemini;
mod json;
mod usage;
mod windows;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use keypool::{Clock, Secret};
use keypool_gateway::Dialect;
use keypool_store::{sources, Database};
use serde::{Deserialize, Serialize};

use super::local_api::{LocalApi, Resolution};
use crate::service::error::{AgentFile, AgentFileProblem, Result, ServiceError};
use crate::service::problem::Rule;

pub use usage::{cache_drop, CacheDrop, Source, SourceUsage, SourceUse, SourcesReport};

/// A coding agent Keypool can connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
}

/// Every agent, in the order the panel shows them.
pub const AGENTS: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

/// Where each agent keeps its configuration: `~/.claude`, `~/.codex`, `~/.gemini` by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHome {
    pub claude: PathBuf,
    pub codex: PathBuf,
    pub gemini: PathBuf,
}

impl AgentHome {
    /// The agents' folders in the home folder `home` (tests use a temporary one).
    pub fn in_home(home: &Path) -> AgentHome {
        AgentHome { claude: home.join(".claude"), codex: home.join(".codex"), gemini: home.join(".gemini") }
    }

    /// The user's: their home folder, with `CLAUDE_CONFIG_DIR` and `CODEX_HOME` where set (the
    /// agents read those too). `None` without a home folder.
    pub fn of_user() -> Option<AgentHome> {
        let mut home = AgentHome::in_home(&std::env::home_dir()?);
        let set = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(dir) = set("CLAUDE_CONFIG_DIR") {
            home.claude = dir;
        }
        if let Some(dir) = set("CODEX_HOME") {
            home.codex = dir;
        }
        Some(home)
    }
}

/// An agent's facts: one row each, from which everything else is read.
struct AgentRow {
    agent: Agent,
    /// The name of its backups' folder.
    slug: &'static str,
    /// The API it speaks to the local API.
    dialect: Dialect,
    /// How its requests' `User-Agent` starts (the ledger's `source`): `claude-cli/2.1.328 …`,
    /// `codex_exec/0.169.0 …` or `codex_cli_rs/…`, `GeminiCLI-tui/0.61.0/…`.
    user_agent: &'static str,
    /// The model it asks for when none is set, as its current package does (Claude Code
    /// 2.1.328, Codex CLI 0.169.0, Gemini CLI 0.61.0).
    default_model: &'static str,
    files: fn(&AgentHome) -> Vec<PathBuf>,
    /// It can read its key from a command's output instead of a file (Claude Code's
    /// `apiKeyHelper`).
    key_helper: bool,
    /// It has a folder trust setting that can be turned off (Gemini CLI's
    /// `security.folderTrust.enabled`).
    folder_trust: bool,
    /// Its files (read, `None` when absent) merged with the setup, or why one cannot be.
    plan: Plan,
    /// What its files point it at.
    read: fn(&[Option<Vec<u8>>]) -> Configured,
}

/// An agent's files as read (`None`: absent), merged with a setup into what Connect writes.
type Plan = fn(&[Option<Vec<u8>>], &Setup) -> std::result::Result<Vec<Vec<u8>>, Malformed>;

const ROWS: [AgentRow; 3] = [
    AgentRow {
        agent: Agent::ClaudeCode,
        slug: "claude-code",
        dialect: Dialect::Anthropic,
        user_agent: "claude-cli/",
        default_model: "claude-opus-5-5",
        files: |home| vec![home.claude.join("settings.json")],
        key_helper: true,
        folder_trust: false,
        plan: claude::plan,
        read: claude::read,
    },
    AgentRow {
        agent: Agent::Codex,
        slug: "codex",
        dialect: Dialect::OpenAi,
        user_agent: "codex_",
        default_model: "gpt-6.1-sol",
        files: |home| vec![home.codex.join("config.toml")],
        key_helper: false,
        folder_trust: false,
        plan: codex::plan,
        read: codex::read,
    },
    AgentRow {
        agent: Agent::GeminiCli,
        slug: "gemini-cli",
        dialect: Dialect::Gemini,
        user_agent: "GeminiCLI",
        default_model: "gemini-3.1-pro-preview",
        files: |home| vec![home.gemini.join("settings.json"), home.gemini.join(".env")],
        key_helper: false,
        folder_trust: true,
        plan: gemini::plan,
        read: gemini::read,
    },
];

impl Agent {
    fn row(self) -> &'static AgentRow {
        ROWS.iter().find(|row| row.agent == self).expect("every agent has a row")
    }

    /// The API it speaks.
    pub fn dialect(self) -> Dialect {
        self.row().dialect
    }

    /// The model it asks for when its files set none.
    pub fn default_model(self) -> &'static str {
        self.row().default_model
    }

    /// The name of its backups' folder, and of the token Connect makes for it: `claude-code`,
    /// `codex`, `gemini-cli`.
    pub fn slug(self) -> &'static str {
        self.row().slug
    }

    /// The agent whose slug is `slug`.
    pub fn of_slug(slug: &str) -> Option<Agent> {
        ROWS.iter().find(|row| row.slug == slug).map(|row| row.agent)
    }

    /// Whether it can read its key from a command (Claude Code's `apiKeyHelper`).
    pub fn takes_key_helper(self) -> bool {
        self.row().key_helper
    }

    /// The agent whose requests carry `user_agent` (the ledger's `source`), if one does.
    pub fn of_user_agent(user_agent: &str) -> Option<Agent> {
        ROWS.iter().find(|row| user_agent.starts_with(row.user_agent)).map(|row| row.agent)
    }
}

/// What Connect writes into an agent's files.
pub(super) struct Setup<'a> {
    /// `http://127.0.0.1:PORT`.
    address: &'a str,
    token: &'a str,
    model: Option<&'a str>,
    /// The model an earlier Connect set, taken out again when none is given now.
    previous_model: Option<&'a str>,
    /// The command that prints Keypool's copy of the token (Claude Code's `apiKeyHelper`).
    helper: &'a str,
    /// Write `helper` instead of the token.
    use_helper: bool,
    /// How many tokens the model's context holds, for an agent that needs telling.
    window: Option<u32>,
    /// The window an earlier Connect set, taken out again when none is known now.
    previous_window: Option<u32>,
    /// Turn the agent's folder trust off (Gemini CLI: then it reads `~/.gemini/.env` in every
    /// folder, not only in those it trusts).
    trust_all_folders: bool,
    /// An earlier Connect turned it off: taken back when not asked for now.
    trusted_all_folders: bool,
}

/// A file an agent's plan cannot merge: its index in the row's files, and why.
pub(super) struct Malformed {
    file: usize,
    reason: String,
}

/// What an agent's files point it at now.
#[derive(Debug, Clone, Default)]
pub(super) struct Configured {
    base_url: Option<String>,
    token: Option<Secret>,
    model: Option<String>,
    /// The command it runs for its key, if its files name one.
    key_helper: Option<String>,
    /// Its files are read only in a folder it trusts (Gemini CLI's `.env`, while its folder
    /// trust is on): elsewhere it runs without the address and the token.
    trusted_folders_only: bool,
}

/// One agent as the panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentState")]
pub struct AgentStatus {
    pub agent: Agent,
    /// The files Connect writes (and Disconnect puts back).
    #[serde(with = "displayed")]
    #[ts(as = "Vec<String>")]
    pub files: Vec<PathBuf>,
    /// Set while Keypool's Connect is in force.
    pub connection: Option<Connection>,
    /// Its files point it at this local API now (its address, whoever wrote them).
    pub points_here: bool,
    /// The token its files hold (or its key helper prints), compared with its own and the local
    /// API's.
    pub token: TokenState,
    /// The model its files set, if any (none: its own default, `default_model`).
    pub model: Option<String>,
    pub default_model: &'static str,
    /// Where the model it will ask for (the one set, or its default) goes now.
    pub resolution: Resolution,
    /// When the local API last heard from it (milliseconds since the epoch): its token's last
    /// request, or the ledger's last by its user agent, whichever is later.
    pub last_call: Option<i64>,
    /// A file of its that cannot be read or merged now.
    pub problem: Option<AgentFile>,
    /// It reads the file with the address and token only in folders it trusts (Gemini CLI's
    /// `~/.gemini/.env` while its folder trust is on): in any other folder it asks for a key.
    /// Connect can turn the trust off (see [`ConnectOptions::trust_all_folders`]).
    pub trusted_folders_only: bool,
}

/// Keypool's connection of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentConnection")]
pub struct Connection {
    pub connected_at: i64,
    /// The model Connect set, if any.
    pub model: Option<String>,
    /// The name of the agent's own token (a named token of the local API); `None` for a
    /// connection made before agents had their own (it holds the local API's token).
    pub token: Option<String>,
    /// Its key comes from Keypool's helper command, not from its files.
    pub key_helper: bool,
    /// Connect turned its folder trust off (Disconnect puts the setting back).
    pub trust_all_folders: bool,
    /// Files changed since Connect wrote them (by the user or by the agent): Disconnect would
    /// undo those changes too.
    #[serde(with = "displayed")]
    #[ts(as = "Vec<String>")]
    pub changed: Vec<PathBuf>,
}

/// Paths as the user reads them (as `Path::display` writes them, whatever the bytes).
mod displayed {
    use std::path::PathBuf;

    pub fn serialize<S: serde::Serializer>(paths: &[PathBuf], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(paths.iter().map(|path| path.display().to_string()))
    }
}

/// The token an agent's files hold: none, its own, the local API's main one, or another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentToken")]
pub enum TokenState {
    None,
    /// Its own token, made by Connect, and still served.
    Own,
    /// The local API's own token, shared with everything else that holds it (a connection made
    /// before agents had their own): Reconnect gives it one.
    Main,
    /// Another one: a revoked or regenerated token, or some other key.
    Other,
}

/// Every agent, and the address Connect gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "Agents")]
pub struct AgentsOverview {
    pub agents: Vec<AgentStatus>,
    /// The address agents are given: `http://127.0.0.1:PORT`.
    pub address: String,
}

/// How to connect an agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// The model to set; `None`: the one its files set, or its default.
    pub model: Option<String>,
    /// Give it a new token even when its files hold its own (the old one stops working).
    pub new_token: bool,
    /// Have it read the token from Keypool's helper command instead of its files (agents that
    /// can: [`Agent::takes_key_helper`]).
    pub key_helper: bool,
    /// The model's context window in tokens; `None`: the known one of the model the chosen one
    /// is routed to, if any.
    pub context_window: Option<u32>,
    /// Turn its folder trust off, so it reads its files in every folder (agents that have the
    /// setting: Gemini CLI, whose `~/.gemini/.env` is otherwise read only in folders it trusts).
    /// The setting is in a file Connect keeps, so Disconnect puts it back.
    pub trust_all_folders: bool,
}

/// What Connect did: the agents now, and the files it made readable by their owner only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "AgentConnected")]
pub struct Connected {
    pub agents: AgentsOverview,
    /// Files others could read that now hold the token (0600), each with the mode it had
    /// (Disconnect puts it back).
    pub tightened: Vec<TightenedFile>,
}

/// A file whose mode Connect tightened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TightenedFile {
    /// As `Path::display` writes it.
    pub path: String,
    /// Its permission bits before (`0o644` is 420).
    pub mode: u32,
}

/// What the manifest of a connected agent says, kept beside its backups.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    connected_at: i64,
    model: Option<String>,
    /// The agent's own token's name (none before agents had their own).
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    key_helper: bool,
    /// The context window written for the agent, if any.
    #[serde(default)]
    window: Option<u32>,
    #[serde(default)]
    trust_all_folders: bool,
    files: Vec<files::Kept>,
}

/// Connects, disconnects and reports the coding agents.
pub struct Agents {
    db: Arc<Database>,
    clock: Arc<dyn Clock>,
    /// `None`: no home folder (nothing to connect).
    home: Option<AgentHome>,
    /// Where backups and manifests are kept: `agents/` in the data directory.
    kept: PathBuf,
}

impl Agents {
    pub(crate) fn new(db: Arc<Database>, clock: Arc<dyn Clock>, home: Option<AgentHome>, data_dir: &Path) -> Agents {
        Agents { db, clock, home, kept: data_dir.join("agents") }
    }

    fn home(&self) -> Result<&AgentHome> {
        self.home.as_ref().ok_or_else(|| ServiceError::NotSaved {
            what: "agent configuration",
            reason: "there is no home folder".to_owned(),
        })
    }

    fn manifest_path(&self, agent: Agent) -> PathBuf {
        self.kept.join(format!("{}.json", agent.row().slug))
    }

    /// Keypool's copy of the agent's token, which its key helper prints.
    fn helper_file(&self, agent: Agent) -> PathBuf {
        self.kept.join(agent.row().slug).join("token")
    }

    fn manifest(&self, agent: Agent) -> Result<Option<Manifest>> {
        let path = self.manifest_path(agent);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| ServiceError::AgentFile {
                path,
                problem: AgentFileProblem::Malformed { reason: e.to_string() },
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => {
                Err(ServiceError::AgentFile { path, problem: AgentFileProblem::Unreadable { reason: e.to_string() } })
            }
        }
    }

    /// Every agent as it stands, against `local_api`.
    pub fn overview(&self, local_api: &LocalApi) -> Result<AgentsOverview> {
        let address = address_of(local_api)?;
        let home = self.home()?;
        let agents =
            AGENTS.into_iter().map(|agent| self.status_of(agent, home, &address, local_api)).collect::<Result<_>>()?;
        Ok(AgentsOverview { agents, address })
    }

    /// The token the agent's files hold, or that its key helper prints when it is Keypool's.
    fn held_token(&self, agent: Agent, configured: &Configured) -> Option<Secret> {
        let helper = helper_command(&self.helper_file(agent));
        match &configured.key_helper {
            Some(command) if *command == helper && configured.token.is_none() => {
                std::fs::read_to_string(self.helper_file(agent)).ok().map(|t| Secret::new(t.trim().to_owned()))
            }
            _ => configured.token.clone(),
        }
    }

    fn status_of(&self, agent: Agent, home: &AgentHome, address: &str, local_api: &LocalApi) -> Result<AgentStatus> {
        let row = agent.row();
        let paths = (row.files)(home);
        let mut problem = None;
        let mut contents = Vec::with_capacity(paths.len());
        for path in &paths {
            match files::read(path) {
                Ok(bytes) => contents.push(bytes),
                Err(p) => {
                    problem.get_or_insert(AgentFile::new(path, &p));
                    contents.push(None);
                }
            }
        }
        let helper = helper_command(&self.helper_file(agent));
        if problem.is_none() {
            let probe = Setup {
                address,
                token: "",
                model: None,
                previous_model: None,
                helper: &helper,
                use_helper: false,
                window: None,
                previous_window: None,
                trust_all_folders: false,
                trusted_all_folders: false,
            };
            if let Err(m) = (row.plan)(&contents, &probe) {
                problem = Some(AgentFile::new(&paths[m.file], &AgentFileProblem::Malformed { reason: m.reason }));
            }
        }
        let configured = (row.read)(&contents);
        let manifest = self.manifest(agent)?;
        let own = manifest.as_ref().and_then(|m| m.token.clone());
        let own = own.as_deref();
        let token = match self.held_token(agent, &configured) {
            None => TokenState::None,
            Some(token) if own.is_some_and(|name| local_api.tokens().holds(name, token.expose())) => TokenState::Own,
            Some(token) if local_api.is_current_token(token.expose())? => TokenState::Main,
            Some(_) => TokenState::Other,
        };
        let connection = manifest.map(|manifest| {
            let changed = manifest
                .files
                .iter()
                .filter(|kept| files::digest_of(&kept.path).as_deref() != Some(kept.written.as_str()))
                .map(|kept| kept.path.clone())
                .collect();
            Connection {
                connected_at: manifest.connected_at,
                model: manifest.model,
                token: manifest.token,
                key_helper: manifest.key_helper,
                trust_all_folders: manifest.trust_all_folders,
                changed,
            }
        });
        let points_here = configured.base_url.as_deref().is_some_and(|url| same_address(url, address));
        let asked = configured.model.clone().unwrap_or_else(|| row.default_model.to_owned());
        let by_user_agent = sources::last_call(&*self.db.lock()?, row.user_agent)?;
        let by_token = own.and_then(|name| local_api.tokens().get(name).ok()).and_then(|t| t.last_used_at);
        Ok(AgentStatus {
            agent,
            files: paths,
            connection,
            points_here,
            token,
            model: configured.model,
            default_model: row.default_model,
            resolution: local_api.resolve(row.dialect, &asked),
            last_call: by_user_agent.max(by_token),
            problem,
            trusted_folders_only: configured.trusted_folders_only,
        })
    }

    /// Points `agent` at `local_api` with a token of its own: its files merged with the address,
    /// the token (or Keypool's key helper) and the model, after keeping them as they were (unless
    /// it is connected already: the first backup stands). Its token is kept when its files still
    /// hold it, unless a new one is asked for; a new one keeps the old one's rules, and the old
    /// value stops working.
    pub fn connect(&self, agent: Agent, options: ConnectOptions, local_api: &LocalApi) -> Result<Connected> {
        let status = local_api.status()?;
        if !status.enabled {
            return Err(ServiceError::invalid("", Rule::LocalApiOff));
        }
        let row = agent.row();
        if options.key_helper && !row.key_helper {
            return Err(ServiceError::invalid("key_helper", Rule::NoKeyHelper));
        }
        if options.trust_all_folders && !row.folder_trust {
            return Err(ServiceError::invalid("trust_all_folders", Rule::NoFolderTrust));
        }
        let address = address_of(local_api)?;
        let home = self.home()?;
        let paths: Vec<PathBuf> = (row.files)(home).iter().map(|p| files::through_links(p)).collect();
        let mut contents = Vec::with_capacity(paths.len());
        for path in &paths {
            contents
                .push(files::read(path).map_err(|problem| ServiceError::AgentFile { path: path.clone(), problem })?);
        }
        let previous = self.manifest(agent)?;
        let helper_file = self.helper_file(agent);
        let helper = helper_command(&helper_file);
        let window = options.context_window.or_else(|| {
            let model = options.model.as_deref()?;
            windows::known(&local_api.routed_model(model))
        });
        // Checked with no token first: a file that cannot be merged leaves every token as it was.
        let probe = Setup {
            address: &address,
            token: "",
            model: options.model.as_deref(),
            previous_model: previous.as_ref().and_then(|m| m.model.as_deref()),
            helper: &helper,
            use_helper: options.key_helper,
            window,
            previous_window: previous.as_ref().and_then(|m| m.window),
            trust_all_folders: options.trust_all_folders,
            trusted_all_folders: previous.as_ref().is_some_and(|m| m.trust_all_folders),
        };
        (row.plan)(&contents, &probe).map_err(|m| ServiceError::AgentFile {
            path: paths[m.file].clone(),
            problem: AgentFileProblem::Malformed { reason: m.reason },
        })?;
        let tokens = local_api.tokens();
        let own = previous.as_ref().and_then(|m| m.token.clone());
        let held = self.held_token(agent, &(row.read)(&contents));
        let kept = match (&own, held) {
            (Some(name), Some(token)) if !options.new_token && tokens.holds(name, token.expose()) => {
                Some((name.clone(), token))
            }
            _ => None,
        };
        let (name, token, undo) = match kept {
            Some((name, token)) => (name, token, None),
            None => {
                let issued = tokens.issue_for_agent(row.slug, own.as_deref())?;
                (issued.name, Secret::new(issued.token), Some(issued.undo))
            }
        };
        let setup = Setup { token: token.expose(), ..probe };
        let written = (row.plan)(&contents, &setup)
            .map_err(|m| ServiceError::AgentFile {
                path: paths[m.file].clone(),
                problem: AgentFileProblem::Malformed { reason: m.reason },
            })
            .and_then(|planned| {
                let manifest = Manifest {
                    connected_at: previous.as_ref().map_or_else(|| self.clock.now().as_millis(), |m| m.connected_at),
                    model: options.model.clone(),
                    token: Some(name.clone()),
                    key_helper: options.key_helper,
                    window,
                    trust_all_folders: options.trust_all_folders,
                    files: Vec::new(),
                };
                self.write_connection(agent, &paths, &planned, previous, manifest, &token)
            });
        let tightened = match written {
            Ok(tightened) => tightened,
            Err(error) => {
                if let Some(undo) = undo {
                    tokens.undo(undo);
                }
                return Err(error);
            }
        };
        tracing::info!(agent = row.slug, files = paths.len(), token = %name, "coding agent connected to the local API");
        Ok(Connected { agents: self.overview(local_api)?, tightened })
    }

    /// Writes what `manifest` describes for a connection with `token` (its files kept first, the
    /// first backup standing), Keypool's copy of the token when its key helper prints it, and
    /// `planned` over the agent's files; what was written goes back when a write fails. The files
    /// whose mode was tightened, with the mode each had.
    fn write_connection(
        &self,
        agent: Agent,
        paths: &[PathBuf],
        planned: &[Vec<u8>],
        previous: Option<Manifest>,
        mut manifest: Manifest,
        token: &Secret,
    ) -> Result<Vec<TightenedFile>> {
        let row = agent.row();
        let backups = self.kept.join(row.slug);
        let earlier = |path: &PathBuf| previous.as_ref().and_then(|m| m.files.iter().find(|kept| &kept.path == path));
        manifest.files = paths
            .iter()
            .zip(planned)
            .enumerate()
            .map(|(i, (path, bytes))| match earlier(path) {
                Some(kept) => Ok(files::Kept { written: files::digest(bytes), ..kept.clone() }),
                None => files::keep(&backups, &format!("{i}.backup"), path, bytes),
            })
            .collect::<Result<Vec<_>>>()?;
        let helper_file = self.helper_file(agent);
        if manifest.key_helper {
            files::write_private(&helper_file, token.expose().as_bytes())
                .map_err(|problem| ServiceError::AgentFile { path: helper_file.clone(), problem })?;
        }
        self.write_manifest(agent, &manifest)?;
        let mut written: Vec<&Path> = Vec::new();
        let mut tightened = Vec::new();
        for (path, bytes) in paths.iter().zip(planned) {
            match files::write(path, bytes, files::holds(bytes, token.expose())) {
                Ok(Some(mode)) => tightened.push(TightenedFile { path: path.display().to_string(), mode }),
                Ok(None) => {}
                Err(problem) => {
                    // What was written goes back, so a half-connected agent is not left behind.
                    for done in written {
                        if let Some(kept) = manifest.files.iter().find(|k| k.path == done) {
                            let _ = files::restore(&backups, kept);
                        }
                    }
                    match &previous {
                        Some(previous) => {
                            let _ = self.write_manifest(agent, previous);
                        }
                        None => {
                            let _ = self.forget(agent);
                        }
                    }
                    return Err(ServiceError::AgentFile { path: path.clone(), problem });
                }
            }
            written.push(path);
        }
        if !manifest.key_helper {
            let _ = std::fs::remove_file(&helper_file);
        }
        Ok(tightened)
    }

    /// Puts `agent`'s files back as they were before Connect, byte for byte (a file that did not
    /// exist is removed, with the folders made for it), and revokes its token. Refused with the
    /// files changed since Connect (by the user or the agent) unless `force`: restoring would undo
    /// those changes. Nothing to do when it is not connected.
    pub fn disconnect(&self, agent: Agent, force: bool, local_api: &LocalApi) -> Result<AgentsOverview> {
        let Some(manifest) = self.manifest(agent)? else { return self.overview(local_api) };
        if !force {
            let changed: Vec<PathBuf> = manifest
                .files
                .iter()
                .filter(|kept| files::digest_of(&kept.path).as_deref() != Some(kept.written.as_str()))
                .map(|kept| kept.path.clone())
                .collect();
            if let Some(path) = changed.into_iter().next() {
                return Err(ServiceError::AgentFile { path, problem: AgentFileProblem::Changed });
            }
        }
        let backups = self.kept.join(agent.row().slug);
        for kept in &manifest.files {
            files::restore(&backups, kept)
                .map_err(|problem| ServiceError::AgentFile { path: kept.path.clone(), problem })?;
        }
        if let Some(name) = &manifest.token {
            match local_api.tokens().revoke_agents(name, agent.row().slug) {
                Ok(()) | Err(ServiceError::NotFound { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        self.forget(agent)?;
        tracing::info!(
            agent = agent.row().slug,
            "coding agent disconnected: its files are as they were, its token revoked"
        );
        self.overview(local_api)
    }

    fn write_manifest(&self, agent: Agent, manifest: &Manifest) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(manifest).expect("a manifest serializes");
        let path = self.manifest_path(agent);
        files::write_private(&path, &bytes).map_err(|problem| ServiceError::AgentFile { path, problem })
    }

    /// Drops the manifest and backups of `agent` (and Keypool's copy of its token).
    fn forget(&self, agent: Agent) -> Result<()> {
        let path = self.manifest_path(agent);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ServiceError::AgentFile {
                    path,
                    problem: AgentFileProblem::Unwritable { reason: e.to_string() },
                })
            }
        }
        let _ = std::fs::remove_dir_all(self.kept.join(agent.row().slug));
        Ok(())
    }
}

/// The command that prints the token kept at `path` (Claude Code runs it in `/bin/sh`).
fn helper_command(path: &Path) -> String {
    let path = path.display().to_string();
    if cfg!(windows) {
        format!("type \"{path}\"")
    } else {
        format!("cat '{}'", path.replace('\'', "'\\''"))
    }
}

/// The address agents are given: the local API's, on its port now.
fn address_of(local_api: &LocalApi) -> Result<String> {
    Ok(format!("http://127.0.0.1:{}", local_api.status()?.port))
}

/// Whether `url` is `address`, or below it (Codex's ends in `/v1`), `localhost` counting as
/// `127.0.0.1`.
fn same_address(url: &str, address: &str) -> bool {
    let url = url.trim().trim_end_matches('/').replacen("://localhost:", "://127.0.0.1:", 1);
    url == address || url.strip_prefix(address).is_some_and(|rest| rest == "/v1")
}
