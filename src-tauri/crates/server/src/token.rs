//! The server's local API token: a file's content (trimmed), made with mode 0600 when the file
//! does not exist. Without `--token-file` the file is [`STORED_FILE`] in the data dir, which
//! `keypool-server token` prints or regenerates.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The token file in the data dir, when no `--token-file` is given.
pub const STORED_FILE: &str = "local-api.token";

/// Why the token could not be read or made. Never holds the token.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error("{path}: the file is empty; put a token in it, or remove it to have one made")]
    Empty { path: PathBuf },
    #[error("{path}: the token is {length} characters; at least {MIN_TOKEN_CHARS} are needed (`keypool-server token --regenerate` makes one)")]
    TooShort { path: PathBuf, length: usize },
}

/// The shortest token served: a network-facing token must not be guessable (the generated ones
/// are 73 characters).
pub const MIN_TOKEN_CHARS: usize = 32;

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> TokenError + '_ {
    move |error| TokenError::Io { path: path.to_owned(), reason: error.to_string() }
}

/// A new token: `kp-local-` and 64 hex digits from the operating system's randomness (the
/// app's form).
pub fn generate() -> String {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).expect("the operating system provides randomness");
    format!("kp-local-{}", random.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Writes `token` to `path`, readable by its owner only; replaces what was there.
pub fn write(path: &Path, token: &str) -> Result<(), TokenError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io_error(path))?;
    file.write_all(format!("{token}\n").as_bytes()).map_err(io_error(path))?;
    // A file that existed keeps its mode on open: tighten it.
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).map_err(io_error(path))?;
    Ok(())
}

/// The token in `path`, made (and written there) if the file does not exist: the token, and
/// whether it is new.
pub fn read_or_make(path: &Path) -> Result<(String, bool), TokenError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let token = text.trim();
            if token.is_empty() {
                return Err(TokenError::Empty { path: path.to_owned() });
            }
            let length = token.chars().count();
            if length < MIN_TOKEN_CHARS {
                return Err(TokenError::TooShort { path: path.to_owned(), length });
            }
            Ok((token.to_owned(), false))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let token = generate();
            write(path, &token)?;
            Ok((token, true))
        }
        Err(error) => Err(io_error(path)(error)),
    }
}
