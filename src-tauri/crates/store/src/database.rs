use std::fs::{self, OpenOptions};

use crate::files;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::migrations::{MIGRATIONS, SCHEMA_VERSION};

pub const DATABASE_FILE_NAME: &str = "keypool.sqlite3";

/// Why the database could not be opened. Every variant names the file, so the user knows
/// which one to look at; none of them means the file was changed. Where a copy was made beside
/// it (`backup`), the message says where.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create the data directory {path}: {source}")]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot create the database file {path}: {source}")]
    CreateFile { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a Keypool database or is damaged ({detail}); it was left untouched{}", backup_note(.backup))]
    NotADatabase { path: PathBuf, detail: String, backup: Option<PathBuf> },
    #[error(
        "{path} was written by a newer Keypool (schema version {found}, this build knows up to \
         {supported}); it was left untouched{}: update Keypool to open it", backup_note(.backup)
    )]
    TooNew { path: PathBuf, found: u32, supported: u32, backup: Option<PathBuf> },
    #[error("cannot upgrade the database {path}: {source}; it was left as it was{}", backup_note(.backup))]
    Migration { path: PathBuf, source: Box<rusqlite_migration::Error>, backup: Option<PathBuf> },
    #[error("cannot open the database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("cannot copy {path} before upgrading it, so it was not upgraded: {source}")]
    Backup { path: PathBuf, source: rusqlite::Error },
}

fn backup_note(backup: &Option<PathBuf>) -> String {
    match backup {
        Some(copy) => format!(" (a copy is at {})", copy.display()),
        None => String::new(),
    }
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
            OpenError::Backup { .. } => "backup_failed",
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
        let privacy =
            files::private_dir(dir).map_err(|source| OpenError::CreateDir { path: dir.to_owned(), source })?;
        files::log_privacy(dir, privacy);
        let path = dir.join(DATABASE_FILE_NAME);
        create_private_file_if_absent(&path)?;
        for companion in [wal_path(&path), path.with_file_name(format!("{DATABASE_FILE_NAME}-shm"))] {
            if let Ok(Some(privacy)) = files::tighten_if_present(&companion) {
                files::log_privacy(&companion, privacy);
            }
        }

        let sqlite = |source| OpenError::Sqlite { path: path.clone(), source };
        let mut conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(sqlite)?;

        let found: u32 = match conn.pragma_query_value(None, "user_version", |row| row.get(0)) {
            Ok(found) => found,
            Err(source) => return Err(classify(&path, source)),
        };
        if found > SCHEMA_VERSION {
            let backup = copy_aside(&path, &format!("v{found}"));
            return Err(OpenError::TooNew { path, found, supported: SCHEMA_VERSION, backup });
        }
        // A damaged page is found now, before anything is written, not in the middle of a chat.
        let check: String =
            conn.pragma_query_value(None, "quick_check", |row| row.get(0)).map_err(|source| classify(&path, source))?;
        if check != "ok" {
            let backup = copy_aside(&path, "damaged");
            return Err(OpenError::NotADatabase { path, detail: check, backup });
        }

        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(|source| classify(&path, source))?;
        // Off while migrating (SQLite as bundled turns them on by default): see below.
        conn.pragma_update(None, "foreign_keys", false).map_err(sqlite)?;
        // FULL: a write is acknowledged only once the WAL is on disk, so it survives a power loss.
        conn.pragma_update(None, "synchronous", "FULL").map_err(sqlite)?;
        // Deleted content (a replaced or deleted key) is overwritten, not left in free pages.
        conn.pragma_update(None, "secure_delete", true).map_err(sqlite)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(sqlite)?;

        if found > 0 && found < SCHEMA_VERSION {
            // An upgrade: keep a consistent copy of the user's data (WAL included) first.
            let copy = free_name(&path, &format!("v{found}"));
            // VACUUM INTO accepts an empty file: creating it first keeps the copy private.
            create_private_file_if_absent(&copy)?;
            conn.execute("VACUUM INTO ?1", [copy.to_string_lossy()])
                .map_err(|source| OpenError::Backup { path: path.clone(), source })?;
            tracing::info!(from = found, to = SCHEMA_VERSION, backup = %copy.display(), "upgrading the database");
        }
        if let Err(source) = MIGRATIONS.to_latest(&mut conn) {
            let backup = copy_aside(&path, "failed-upgrade");
            return Err(OpenError::Migration { path, source: Box::new(source), backup });
        }
        // On only after the migrations: a migration that rebuilds a table (SQLite's way to change a
        // constraint) drops the old one, which with foreign keys on would cascade to every row that
        // refers to it.
        conn.pragma_update(None, "foreign_keys", true).map_err(sqlite)?;
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

    /// Copies the WAL into the database and empties it, so page images that held a removed
    /// secret do not linger in the WAL file (deleted content in the database itself is zeroed:
    /// `secure_delete` is on).
    pub fn forget_removed_content(&self) -> Result<(), StoreError> {
        self.lock()?.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(self.lock()?.pragma_query_value(None, "user_version", |row| row.get(0))?)
    }
}

fn classify(path: &Path, source: rusqlite::Error) -> OpenError {
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => OpenError::NotADatabase {
            path: path.to_owned(),
            detail: source.to_string(),
            backup: copy_aside(path, "damaged"),
        },
        _ => OpenError::Sqlite { path: path.to_owned(), source },
    }
}

/// `keypool.sqlite3.<tag>.bak`, or `.<tag>.2.bak`, … : the first name not taken.
fn free_name(path: &Path, tag: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    (1..)
        .map(|n| match n {
            1 => path.with_file_name(format!("{name}.{tag}.bak")),
            n => path.with_file_name(format!("{name}.{tag}.{n}.bak")),
        })
        .find(|candidate| !candidate.exists())
        .expect("some name is free")
}

/// Copies a file SQLite cannot or must not open to a new name beside it, byte for byte, so the
/// user has a copy whatever they do next. `None` (logged) when the copy fails.
fn copy_aside(path: &Path, tag: &str) -> Option<PathBuf> {
    let copy = free_name(path, tag);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = options.open(&copy).and_then(|mut target| std::io::copy(&mut fs::File::open(path)?, &mut target));
    match result {
        Ok(_) => Some(copy),
        Err(error) => {
            tracing::error!(%error, path = %path.display(), "could not copy the database aside");
            None
        }
    }
}

/// Creates an empty file readable by the user only, so SQLite never creates it with the
/// process umask, or tightens an existing one. An existing file is never opened for writing.
fn create_private_file_if_absent(path: &Path) -> Result<(), OpenError> {
    let privacy =
        files::private_file(path).map_err(|source| OpenError::CreateFile { path: path.to_owned(), source })?;
    files::log_privacy(path, privacy);
    Ok(())
}

fn wal_path(path: &Path) -> PathBuf {
    path.with_file_name(format!("{DATABASE_FILE_NAME}-wal"))
}
