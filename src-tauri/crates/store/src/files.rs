//! Files only their owner may read: the data and log directories (0700) and everything in them
//! that holds a user's data (0600). Created that way, and tightened when found looser (an older
//! Keypool, a copy, a restored backup).

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

/// Directories: owner only.
pub const DIR_MODE: u32 = 0o700;
/// Files: owner read and write only.
pub const FILE_MODE: u32 = 0o600;

/// What [`private_dir`] or [`private_file`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// It did not exist and was created private.
    Created,
    /// It existed and was already private.
    Private,
    /// It existed with these looser permission bits and was tightened.
    Tightened { from: u32 },
}

/// Creates `dir` (and its parents) as 0700, or tightens it if it exists.
pub fn private_dir(dir: &Path) -> io::Result<Privacy> {
    if dir.is_dir() {
        return tighten(dir, DIR_MODE);
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    builder.create(dir)?;
    Ok(Privacy::Created)
}

/// Creates `path` empty as 0600 (never opening an existing file for writing), or tightens it if
/// it exists.
pub fn private_file(path: &Path) -> io::Result<Privacy> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, FILE_MODE);
    match options.open(path) {
        Ok(_) => Ok(Privacy::Created),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => tighten(path, FILE_MODE),
        Err(error) => Err(error),
    }
}

/// Tightens `path` if it exists; a missing file is left missing.
pub fn tighten_if_present(path: &Path) -> io::Result<Option<Privacy>> {
    match fs::symlink_metadata(path) {
        Ok(_) => tighten(path, FILE_MODE).map(Some),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(unix)]
fn tighten(path: &Path, mode: u32) -> io::Result<Privacy> {
    use std::os::unix::fs::PermissionsExt;
    let current = fs::metadata(path)?.permissions().mode() & 0o777;
    if current & !mode == 0 {
        return Ok(Privacy::Private);
    }
    fs::set_permissions(path, fs::Permissions::from_mode(current & mode))?;
    Ok(Privacy::Tightened { from: current })
}

#[cfg(not(unix))]
fn tighten(_: &Path, _: u32) -> io::Result<Privacy> {
    // Elsewhere the user profile's ACLs keep other users out.
    Ok(Privacy::Private)
}

/// Logs a tightening, so the user can see that Keypool changed a file's permissions.
pub fn log_privacy(path: &Path, privacy: Privacy) {
    if let Privacy::Tightened { from } = privacy {
        tracing::warn!(path = %path.display(), from = format!("{from:o}"), "tightened permissions: only you can read it now");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_private_and_tightens_loose() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        assert_eq!(private_dir(&dir).unwrap(), Privacy::Created, "a new directory is created");
        assert_eq!(mode(&dir), 0o700, "owner only");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(private_dir(&dir).unwrap(), Privacy::Tightened { from: 0o755 }, "a loose directory is tightened");
        assert_eq!(mode(&dir), 0o700, "to owner only");

        let file = dir.join("f");
        assert_eq!(private_file(&file).unwrap(), Privacy::Created, "a new file is created");
        assert_eq!(mode(&file), 0o600, "owner read and write");
        fs::write(&file, b"kept").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(private_file(&file).unwrap(), Privacy::Tightened { from: 0o644 }, "a loose file is tightened");
        assert_eq!((mode(&file), fs::read(&file).unwrap()), (0o600, b"kept".to_vec()), "its content is kept");
        assert_eq!(private_file(&file).unwrap(), Privacy::Private, "a private file is left alone");
        assert_eq!(tighten_if_present(&dir.join("absent")).unwrap(), None, "nothing is created by a tighten");
    }
}
