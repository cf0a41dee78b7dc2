use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::migrations::{MIGRATIONS, SCHEMA_VERSION};

pub const DATABASE_FILE_NAME: &str = "keypool.sqlite3";

/// Why the database could not be opened. Every variant names the file, so the user knows
/// which one to look at; none of them means the file was changed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create the data directory {path}: {source}")]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot create the database file {path}: {source}")]
    CreateFile { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a Keypool database (it may be damaged); it was left untouched")]
    NotADatabase { path: PathBuf },
    #[error(
        "{path} was written by a newer Keypool (schema version {found}, this build knows up to \
         {supported}); it was left untouched: update Keypool to open it"
    )]
    TooNew { path: PathBuf, found: u32, supported: u32 },
    #[error("cannot upgrade the database {path}: {source}; it was left as it was")]
    Migration { path: PathBuf, source: rusqlite_migration::Error },
    #[error("cannot open the database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
}

impl OpenError {
    /// A stable, machine-readable name for the UI.
    pub fn kind(&self) -> &'static str {
        match self {
            OpenError::CreateDir { .. } | OpenError::CreateFile { .. } => "create_failed",
            OpenError::NotADatabase { .. } => "not_a_database",
            OpenError::TooNew { .. } => "too_new",
            OpenError::Migration { .. } => "migration_failed",
            OpenError::Sqlite { .. } => "open_failed",
        }
    }
}

/// A failure of a query on an open database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the database connection was poisoned by a panic in another thread")]
    Poisoned,
}

/// The one shared connection to the user's database.
#[derive(Debug)]
pub struct Database {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl Database {
    /// Opens (creating if absent) `dir/keypool.sqlite3`, checks it, switches it to WAL and
    /// migrates it to [`SCHEMA_VERSION`].
    ///
    /// Checks run before anything is written: a file that is not SQLite or is ahead of this
    /// build is rejected untouched.
    pub fn open(dir: &Path) -> Result<Database, OpenError> {
        create_private_dir(dir)?;
        let path = dir.join(DATABASE_FILE_NAME);
        create_private_file_if_absent(&path)?;

        let sqlite = |source| OpenError::Sqlite { path: path.clone(), source };
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite)?;

        let found: u32 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|source| classify(&path, source))?;
        if found > SCHEMA_VERSION {
            return Err(OpenError::TooNew { path, found, supported: SCHEMA_VERSION });
        }

        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(|source| classify(&path, source))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(sqlite)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sqlite)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(sqlite)?;

        MIGRATIONS
            .to_latest(&mut conn)
            .map_err(|source| OpenError::Migration { path: path.clone(), source })?;
        tracing::info!(path = %path.display(), schema = SCHEMA_VERSION, "database opened");
        Ok(Database { conn: Mutex::new(conn), path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Locks the connection for one unit of work. Keep the guard short: no I/O besides the
    /// database while holding it.
    pub fn lock(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }

    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(self.lock()?.pragma_query_value(None, "user_version", |row| row.get(0))?)
    }
}

fn classify(path: &Path, source: rusqlite::Error) -> OpenError {
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => {
            OpenError::NotADatabase { path: path.to_owned() }
        }
        _ => OpenError::Sqlite { path: path.to_owned(), source },
    }
}

fn create_private_dir(dir: &Path) -> Result<(), OpenError> {
    let err = |source| OpenError::CreateDir { path: dir.to_owned(), source };
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(err)
}

/// Creates an empty file readable by the user only, so SQLite never creates it with the
/// process umask. An existing file is never opened for writing here.
fn create_private_file_if_absent(path: &Path) -> Result<(), OpenError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(OpenError::CreateFile { path: path.to_owned(), source }),
    }
}
