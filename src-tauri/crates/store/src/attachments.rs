//! Attachments: their bytes as content-addressed files ([`FileStore`]), and the `attachments`
//! and `message_attachments` tables that describe them and link them to messages.
//!
//! Invariants: a file's name is the SHA-256 of its bytes, so one file serves every message that
//! carries the same bytes; a file is written whole (to a temporary name, flushed to disk, then
//! renamed) before any row names it, so a crash leaves at most a temporary file that nothing
//! references (and that the next [`FileStore::open`] removes); every file is 0600 in a 0700
//! directory.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension, Row};
use sha2::{Digest, Sha256};

use crate::files;

/// The directory under the data directory that holds the files.
pub const DIR_NAME: &str = "attachments";
const TEMP_PREFIX: &str = ".partial-";

/// Where attachments' bytes are kept, one file per distinct content.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

/// The hex SHA-256 of `bytes`: a file's name in the store.
pub fn content_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Whether `id` can be a content id (64 lower-case hex digits): nothing else names a file.
pub fn is_content_id(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl FileStore {
    /// Opens (creating, 0700) `data_dir/attachments`, removing what an interrupted write left.
    pub fn open(data_dir: &Path) -> io::Result<FileStore> {
        let dir = data_dir.join(DIR_NAME);
        files::log_privacy(&dir, files::private_dir(&dir)?);
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                fs::remove_file(entry.path())?;
            }
        }
        Ok(FileStore { dir })
    }

    /// The store at `data_dir/attachments` as it is, without creating or sweeping it (when
    /// [`FileStore::open`] failed: every write then fails and says why).
    pub fn at(data_dir: &Path) -> FileStore {
        FileStore { dir: data_dir.join(DIR_NAME) }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, id: &str) -> io::Result<PathBuf> {
        if !is_content_id(id) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a content id"));
        }
        Ok(self.dir.join(id))
    }

    /// Stores `bytes` under their content id and returns it. Bytes already stored are not
    /// written again. The file is whole and on disk when this returns.
    pub fn put(&self, bytes: &[u8]) -> io::Result<String> {
        let id = content_id(bytes);
        let path = self.path_of(&id)?;
        if path.is_file() {
            return Ok(id);
        }
        let temp = self.dir.join(format!("{TEMP_PREFIX}{id}-{}", std::process::id()));
        let result = (|| {
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, files::FILE_MODE);
            let mut file = options.open(&temp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            fs::rename(&temp, &path)?;
            // The rename itself is durable once the directory is flushed.
            #[cfg(unix)]
            fs::File::open(&self.dir)?.sync_all()?;
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map(|()| id)
    }

    pub fn read(&self, id: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path_of(id)?)
    }

    /// Removes a file; one already gone is not an error.
    pub fn remove(&self, id: &str) -> io::Result<()> {
        match fs::remove_file(self.path_of(id)?) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }
}

/// What an attachment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachmentKind {
    Image,
    Text,
}

impl AttachmentKind {
    fn as_str(self) -> &'static str {
        match self {
            AttachmentKind::Image => "image",
            AttachmentKind::Text => "text",
        }
    }
}

/// A stored file and what was learnt of it when it was attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentRow {
    pub sha256: String,
    pub kind: AttachmentKind,
    /// Sniffed from the bytes (`image/png`, …, `text/plain`), never taken from the name.
    pub media_type: String,
    pub size: u64,
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Images: the copy sent to providers (the original when small enough).
    pub send: Option<(String, String)>,
    /// Images: the small copy shown in the transcript (content id, media type).
    pub thumbnail: Option<(String, String)>,
    pub created_at: i64,
}

impl AttachmentRow {
    /// Every file this row needs: the original, the copy to send, the thumbnail.
    pub fn file_ids(&self) -> Vec<&str> {
        let mut ids = vec![self.sha256.as_str()];
        ids.extend(self.send.iter().chain(&self.thumbnail).map(|(id, _)| id.as_str()));
        ids
    }
}

/// One attachment of one message: the file, and the name it was attached under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedAttachment {
    pub name: String,
    pub file: AttachmentRow,
}

const COLUMNS: &str = "a.sha256, a.kind, a.media_type, a.size, a.width, a.height, a.send_sha256, \
                       a.send_media_type, a.thumb_sha256, a.thumb_media_type, a.created_at";

fn row_from(row: &Row<'_>) -> rusqlite::Result<AttachmentRow> {
    row_at(row, 0)
}

/// The attachment in `row`'s columns from `at` on (in [`COLUMNS`]' order).
fn row_at(row: &Row<'_>, at: usize) -> rusqlite::Result<AttachmentRow> {
    let pair = |a: Option<String>, b: Option<String>| a.zip(b);
    Ok(AttachmentRow {
        sha256: row.get(at)?,
        kind: match row.get_ref(at + 1)?.as_str()? {
            "image" => AttachmentKind::Image,
            _ => AttachmentKind::Text,
        },
        media_type: row.get(at + 2)?,
        size: row.get(at + 3)?,
        width: row.get(at + 4)?,
        height: row.get(at + 5)?,
        send: pair(row.get(at + 6)?, row.get(at + 7)?),
        thumbnail: pair(row.get(at + 8)?, row.get(at + 9)?),
        created_at: row.get(at + 10)?,
    })
}

/// Records a stored file; the same content recorded again keeps its first row.
pub fn insert(conn: &Connection, row: &AttachmentRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO attachments (sha256, kind, media_type, size, width, height, send_sha256, \
         send_media_type, thumb_sha256, thumb_media_type, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            row.sha256,
            row.kind.as_str(),
            row.media_type,
            row.size,
            row.width,
            row.height,
            row.send.as_ref().map(|s| &s.0),
            row.send.as_ref().map(|s| &s.1),
            row.thumbnail.as_ref().map(|s| &s.0),
            row.thumbnail.as_ref().map(|s| &s.1),
            row.created_at
        ],
    )?;
    Ok(())
}

pub fn get(conn: &Connection, sha256: &str) -> rusqlite::Result<Option<AttachmentRow>> {
    conn.query_row(&format!("SELECT {COLUMNS} FROM attachments a WHERE a.sha256 = ?1"), [sha256], row_from).optional()
}

/// Links `attachments` (content id and name, in order) to a message, replacing what it had.
pub fn link(conn: &Connection, message_id: &str, attachments: &[(String, String)]) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM message_attachments WHERE message_id = ?1", [message_id])?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO message_attachments (message_id, position, sha256, name) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, (sha256, name)) in attachments.iter().enumerate() {
        stmt.execute(params![message_id, position as i64, sha256, name])?;
    }
    Ok(())
}

/// Every attachment of a chat's messages, by message id, each message's in order.
pub fn of_chat(conn: &Connection, chat_id: &str) -> rusqlite::Result<HashMap<String, Vec<LinkedAttachment>>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT ma.message_id, ma.name, {COLUMNS} FROM message_attachments ma \
         JOIN attachments a ON a.sha256 = ma.sha256 JOIN messages m ON m.id = ma.message_id \
         WHERE m.chat_id = ?1 ORDER BY ma.message_id, ma.position"
    ))?;
    let mut rows = stmt.query([chat_id])?;
    let mut out: HashMap<String, Vec<LinkedAttachment>> = HashMap::new();
    while let Some(row) = rows.next()? {
        let message_id: String = row.get(0)?;
        let name: String = row.get(1)?;
        let file = row_at(row, 2)?;
        out.entry(message_id).or_default().push(LinkedAttachment { name, file });
    }
    Ok(out)
}

/// The content ids a chat's messages use (before deleting it, to collect what it leaves unused).
pub fn used_by_chat(conn: &Connection, chat_id: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT ma.sha256 FROM message_attachments ma JOIN messages m ON m.id = ma.message_id \
         WHERE m.chat_id = ?1",
    )?;
    let rows = stmt.query_map([chat_id], |r| r.get(0))?;
    rows.collect()
}

/// Removes the rows of `candidates` no message links to any more, and returns them: their
/// files may go (after the transaction that removed the rows is committed).
pub fn forget_unused(conn: &Connection, candidates: &[String]) -> rusqlite::Result<Vec<AttachmentRow>> {
    let mut unused = Vec::new();
    for sha256 in candidates {
        let linked: bool =
            conn.query_row("SELECT EXISTS (SELECT 1 FROM message_attachments WHERE sha256 = ?1)", [sha256], |r| {
                r.get(0)
            })?;
        if linked {
            continue;
        }
        if let Some(row) = get(conn, sha256)? {
            conn.execute("DELETE FROM attachments WHERE sha256 = ?1", [sha256])?;
            unused.push(row);
        }
    }
    Ok(unused)
}

/// Attachments recorded before `before` that no message links to (attached in a composer and
/// never sent).
pub fn unlinked_before(conn: &Connection, before: i64) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT sha256 FROM attachments a WHERE created_at < ?1 \
         AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.sha256 = a.sha256)",
    )?;
    let rows = stmt.query_map([before], |r| r.get(0))?;
    rows.collect()
}

/// Whether any remaining attachment row still needs file `id` (as its original, its copy to
/// send or its thumbnail): a copy may be shared by two originals.
pub fn file_in_use(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM attachments WHERE sha256 = ?1 OR send_sha256 = ?1 OR thumb_sha256 = ?1)",
        [id],
        |r| r.get(0),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn stored_files_are_named_by_content_private_and_written_once() {
        let root = tempfile::tempdir().unwrap();
        let store = FileStore::open(root.path()).unwrap();
        let id = store.put(b"hello").unwrap();
        assert_eq!(id, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "the SHA-256 of the bytes");
        let path = store.dir().join(&id);
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "owner only");
        assert_eq!(fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777, 0o700, "owner only");
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(store.put(b"hello").unwrap(), id, "the same bytes, the same file");
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), modified, "not written again");
        assert_eq!(store.read(&id).unwrap(), b"hello", "read back whole");
        assert!(store.read("../keypool.sqlite3").is_err(), "only content ids name files");
    }

    #[test]
    fn an_interrupted_write_leaves_nothing_after_reopening() {
        let root = tempfile::tempdir().unwrap();
        let store = FileStore::open(root.path()).unwrap();
        let partial = store.dir().join(format!("{TEMP_PREFIX}abc-1"));
        fs::write(&partial, b"half").unwrap();
        FileStore::open(root.path()).unwrap();
        assert!(!partial.exists(), "a half-written file is removed when the store opens");
    }
}
