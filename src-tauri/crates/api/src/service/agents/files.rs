//! The agents' files on disk: read, kept, written atomically, put back.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::service::error::{AgentFileProblem, Result, ServiceError};

/// One file Connect wrote, as the manifest keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Kept {
    /// The file written (a symbolic link followed to its target).
    pub path: PathBuf,
    /// Its bytes before, under this name in the agent's backups folder; `None`: it did not exist.
    pub backup: Option<String>,
    /// Its permission bits before (Unix).
    pub mode: Option<u32>,
    /// The SHA-256 (hex) of what Connect wrote, to tell a change made since.
    pub written: String,
    /// The folders made for it, outermost first: removed again (when empty) with it.
    pub created_dirs: Vec<PathBuf>,
}

/// The file's bytes; `None` when there is no such file.
pub(super) fn read(path: &Path) -> std::result::Result<Option<Vec<u8>>, AgentFileProblem> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(AgentFileProblem::Unreadable { reason: e.to_string() }),
    }
}

/// `path`, or what it links to when it is a symbolic link (a dotfiles manager's): writing
/// through the link keeps it one.
pub(super) fn through_links(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    }
}

pub(super) fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of the file now; `None` when it is absent or unreadable.
pub(super) fn digest_of(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|bytes| digest(&bytes))
}

/// Keeps `path` as it is now (its bytes in `backups` under `name`, its mode, the folders it
/// lacks), before `planned` is written over it.
pub(super) fn keep(backups: &Path, name: &str, path: &Path, planned: &[u8]) -> Result<Kept> {
    let unreadable = |reason: String| ServiceError::AgentFile {
        path: path.to_owned(),
        problem: AgentFileProblem::Unreadable { reason },
    };
    let (backup, mode) =
        match read(path).map_err(|problem| ServiceError::AgentFile { path: path.to_owned(), problem })? {
            Some(bytes) => {
                let backup = backups.join(name);
                write_private(&backup, &bytes).map_err(|problem| ServiceError::AgentFile { path: backup, problem })?;
                (Some(name.to_owned()), mode_of(path).map_err(|e| unreadable(e.to_string()))?)
            }
            None => (None, None),
        };
    let mut created_dirs = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        created_dirs.insert(0, d.to_owned());
        dir = d.parent();
    }
    Ok(Kept { path: path.to_owned(), backup, mode, written: digest(planned), created_dirs })
}

/// Writes `bytes` to `path` atomically, its folders made. A file that holds a token (`secret`)
/// ends readable by its owner only: a new one is made 0600, and one others could read keeps its
/// owner's bits alone (0644 becomes 0600), its old mode returned so the user can be told. Any
/// other file keeps the mode of the one it replaces.
pub(super) fn write(path: &Path, bytes: &[u8], secret: bool) -> std::result::Result<Option<u32>, AgentFileProblem> {
    let unwritable = |e: std::io::Error| AgentFileProblem::Unwritable { reason: e.to_string() };
    let old = mode_of(path).map_err(unwritable)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(unwritable)?;
    }
    let (mode, tightened) = match old {
        None => (0o600, None),
        Some(old) if secret && old & 0o077 != 0 => (old & 0o7700, Some(old)),
        Some(old) => (old, None),
    };
    replace(path, bytes, mode).map_err(unwritable)?;
    Ok(tightened)
}

/// Whether `bytes` hold `secret` (a file Connect writes the token into).
pub(super) fn holds(bytes: &[u8], secret: &str) -> bool {
    !secret.is_empty() && bytes.windows(secret.len()).any(|window| window == secret.as_bytes())
}

/// Writes one of Keypool's own files (a backup, a manifest) atomically, readable by its owner
/// only, in a folder only they can enter.
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> std::result::Result<(), AgentFileProblem> {
    let unwritable = |e: std::io::Error| AgentFileProblem::Unwritable { reason: e.to_string() };
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(unwritable)?;
    }
    replace(path, bytes, 0o600).map_err(unwritable)
}

/// Puts the file `kept` describes back as it was: its bytes and mode, or no file (and none of
/// the folders made for it, when they are empty).
pub(super) fn restore(backups: &Path, kept: &Kept) -> std::result::Result<(), AgentFileProblem> {
    match &kept.backup {
        Some(name) => {
            let bytes = std::fs::read(backups.join(name))
                .map_err(|e| AgentFileProblem::Unreadable { reason: e.to_string() })?;
            replace(&kept.path, &bytes, kept.mode.unwrap_or(0o600))
                .map_err(|e| AgentFileProblem::Unwritable { reason: e.to_string() })
        }
        None => {
            match std::fs::remove_file(&kept.path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(AgentFileProblem::Unwritable { reason: e.to_string() }),
            }
            for dir in kept.created_dirs.iter().rev() {
                // A folder something else was put in since stays.
                let _ = std::fs::remove_dir(dir);
            }
            Ok(())
        }
    }
}

/// A temporary file beside `path`, written, given `mode`, flushed to disk and renamed over it;
/// the folder flushed too, so the rename survives a crash.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new().prefix(".keypool-").suffix(".tmp").tempfile_in(dir)?;
    file.write_all(bytes)?;
    set_mode(file.path(), mode)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(unix)]
fn mode_of(path: &Path) -> std::io::Result<Option<u32>> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(meta.permissions().mode() & 0o7777)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn mode_of(_: &Path) -> std::io::Result<Option<u32>> {
    Ok(None)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
