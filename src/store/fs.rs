//! The one place that calls `std::fs`: thin wrappers that name the path in every error, plus
//! the durable write primitives (atomic replace, append, folder fsync).
//!
//! `clippy.toml` forbids `std::fs` writes elsewhere in the crate; layouts reach the disk only
//! through [`crate::store::Store`], which calls these.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One directory entry: its name and whether it is a folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

/// Reads a whole file; `None` when it does not exist.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// Returns whether a path exists (file or folder). Errors other than "not found" count as absent.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Returns whether a path is a regular file (following links).
pub fn is_file(path: &Path) -> bool {
    fs::metadata(path).map(|m| m.is_file()).unwrap_or(false)
}

/// Reads at most `cap` bytes of a file; `None` when it does not exist. A longer file is an
/// error naming the file and the cap.
pub fn read_capped(path: &Path, cap: usize) -> Result<Option<Vec<u8>>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let mut buf = Vec::new();
    file.take(cap as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", path, e))?;
    if buf.len() > cap {
        return Err(Error::BadInput(format!(
            "`{}` is larger than {cap} bytes, the most taskhook reads of it",
            path.display()
        )));
    }
    Ok(Some(buf))
}

/// Whether the file at `path` holds exactly `expected` (`None`: there is no file), compared
/// chunk by chunk as it is read, never holding a second copy.
pub fn same_content(path: &Path, expected: Option<&[u8]>) -> Result<bool> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(expected.is_none()),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let Some(expected) = expected else {
        return Ok(false);
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read", path, e)),
        };
        if n == 0 {
            return Ok(at == expected.len());
        }
        if expected.get(at..at + n) != Some(&buf[..n]) {
            return Ok(false);
        }
        at += n;
    }
}

/// Returns whether a path is a folder.
pub fn is_dir(path: &Path) -> bool {
    fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false)
}

/// Returns a file's modification time, when it has one.
pub fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Lists a folder, sorted by name; a missing folder is empty. Names that are not UTF-8 are skipped.
pub fn list_dir(path: &Path) -> Result<Vec<Entry>> {
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("list", path, e)),
    };
    let mut out = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| Error::io("list", path, e))?;
        let Ok(name) = ent.file_name().into_string() else {
            continue;
        };
        let is_dir = ent.file_type().map(|t| t.is_dir()).unwrap_or(false);
        out.push(Entry { name, is_dir });
    }
    out.sort();
    Ok(out)
}

/// Creates a folder and its parents.
pub fn create_dir_all(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| Error::io("create folder", path, e))
}

/// Removes a file; a missing file is not an error.
pub fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Renames `from` to `to` (same filesystem), then fsyncs the destination folder.
pub fn rename_durable(from: &Path, to: &Path) -> Result<()> {
    rename_with_retry(from, to)?;
    sync_parent(to)
}

/// Opens (creating if needed) a sidecar lock file for locking. Never truncates it.
pub fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            create_dir_all(dir)?;
        }
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io("open lock", path, e))
}

/// Replaces `target` with `bytes` atomically and durably.
///
/// Writes a new temp file `temp_dir/<temp_name>` (default: the target's own folder), fsyncs it,
/// copies the target's permission bits onto it, renames it over the target, and fsyncs the
/// target's folder. A crash at any point leaves either the old or the new content under
/// `target`, never a mix; at worst a stray temp file remains, which clean-up removes later.
/// The temp folder must be on the same filesystem as the target.
pub fn write_atomic(target: &Path, bytes: &[u8], temp_dir: &Path, temp_name: &str) -> Result<()> {
    write_atomic_with(target, temp_dir, temp_name, &mut |f: &mut File| {
        f.write_all(bytes)
    })
}

/// [`write_atomic`] with the content written by `fill` into the temp file (so a large file
/// need not be held in memory whole). An error from `fill` removes the temp file; the target
/// is untouched.
pub fn write_atomic_with(
    target: &Path,
    temp_dir: &Path,
    temp_name: &str,
    fill: &mut dyn FnMut(&mut File) -> io::Result<()>,
) -> Result<()> {
    let dir = parent_of(target);
    if !dir.exists() {
        create_dir_all(dir)?;
    }
    if !temp_dir.exists() {
        create_dir_all(temp_dir)?;
    }
    let tmp = temp_dir.join(temp_name);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io("create temp file", &tmp, e))?;
        fill(&mut f).map_err(|e| Error::io("write temp file", &tmp, e))?;
        f.sync_all()
            .map_err(|e| Error::io("fsync temp file", &tmp, e))?;
        if let Ok(meta) = fs::metadata(target) {
            // Keep the mode the user gave the file (our temp starts as 0666 & ~umask).
            let _ = fs::set_permissions(&tmp, meta.permissions());
        }
        drop(f);
        rename_with_retry(&tmp, target)?;
        if temp_dir != dir {
            sync_dir(temp_dir)?;
        }
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Appends `bytes` to `path` with one `write` on an `O_APPEND` descriptor, then fsyncs.
///
/// When the file does not end with a newline (a torn last line from an earlier crash), a newline
/// goes first so the new entry starts on its own line. Existing bytes are never touched.
pub fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent_of(path);
    let created = !path.exists();
    if created && !dir.exists() {
        create_dir_all(dir)?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Error::io("open for append", path, e))?;
    let len = f.metadata().map_err(|e| Error::io("stat", path, e))?.len();
    let mut buf = Vec::with_capacity(bytes.len() + 1);
    if len > 0 {
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1))
            .and_then(|_| f.read_exact(&mut last))
            .map_err(|e| Error::io("read", path, e))?;
        if last[0] != b'\n' {
            buf.push(b'\n');
        }
    }
    buf.extend_from_slice(bytes);
    f.write_all(&buf)
        .map_err(|e| Error::io("append to", path, e))?;
    f.sync_data().map_err(|e| Error::io("fsync", path, e))?;
    if created {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Fsyncs a folder so a rename or create inside it survives a power loss (no-op on Windows).
pub fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| Error::io("open folder", dir, e))?;
        d.sync_all()
            .map_err(|e| Error::io("fsync folder", dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

fn sync_parent(path: &Path) -> Result<()> {
    sync_dir(parent_of(path))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Renames, retrying briefly where the OS reports a transient sharing violation (Windows virus
/// scanners and indexers). Never deletes the target first.
fn rename_with_retry(from: &Path, to: &Path) -> Result<()> {
    let mut tries = 0;
    loop {
        match fs::rename(from, to) {
            Ok(()) => return Ok(()),
            Err(e)
                if cfg!(windows) && tries < 10 && e.kind() == io::ErrorKind::PermissionDenied =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10 * tries));
            }
            Err(e) => return Err(Error::io("rename into place", to, e)),
        }
    }
}

/// Returns the path with `suffix` appended to its file name (`a/b.json` + `.lock`).
pub fn with_name_suffix(path: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_of(path).join(format!("{prefix}{name}{suffix}"))
}
