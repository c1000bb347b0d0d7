//! The one place that calls `std::fs`: thin wrappers that name the path in every error, plus
//! the durable write primitives (atomic replace, append, folder fsync).
//!
//! Every file is opened with `O_NONBLOCK` (a FIFO never blocks) and, unless the caller allows a
//! link, `O_NOFOLLOW`; then `fstat` must show a regular file, and a read never takes more than
//! its cap. [`crate::store::guard`] decides which folders may be written at all.
//!
//! `clippy.toml` forbids `std::fs` writes elsewhere in the crate; layouts reach the disk only
//! through [`crate::store::Store`], which calls these.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

mod read;
pub use read::{
    human, open_capped, read_capped, read_head_tail, read_named, read_range, read_regular,
    read_with, same_content, too_large,
};

/// One directory entry: its name and whether it is a folder (a link to a folder is not one).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
}

#[cfg(unix)]
const NOFOLLOW: i32 = libc::O_NOFOLLOW;
#[cfg(not(unix))]
const NOFOLLOW: i32 = 0;
#[cfg(unix)]
const NONBLOCK: i32 = libc::O_NONBLOCK;
#[cfg(not(unix))]
const NONBLOCK: i32 = 0;

/// Adds `O_NONBLOCK` and (unless `follow`) `O_NOFOLLOW` to an open.
fn flags(o: &mut OpenOptions, follow: bool) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(NONBLOCK | if follow { 0 } else { NOFOLLOW });
    }
    #[cfg(not(unix))]
    let _ = (follow, NONBLOCK, NOFOLLOW);
    o
}

/// The reason given for a link where a file was expected.
pub const LINK_REASON: &str = "it is a symbolic link, and taskhook never reads or writes \
     through a link in a store (replace it with a regular file)";

/// Maps an open error: a link (which `O_NOFOLLOW` refused: ELOOP on Linux and macOS, EMLINK
/// on the BSDs) is [`Error::Refused`], anything else an [`Error::Io`].
fn open_error(op: &'static str, path: &Path, e: io::Error) -> Error {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        Error::refused(op, path, LINK_REASON)
    } else {
        Error::io(op, path, e)
    }
}

/// What a non-regular file is, for messages.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    if t.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// `fstat`s an open file and requires a regular one.
fn regular(op: &'static str, path: &Path, f: &File) -> Result<Metadata> {
    let meta = f.metadata().map_err(|e| Error::io("stat", path, e))?;
    if meta.is_file() {
        Ok(meta)
    } else {
        Err(Error::refused(
            op,
            path,
            format!("it is {}, not a regular file", kind_of(&meta)),
        ))
    }
}

/// The metadata of a path itself (a link is not followed); `None` when it does not exist.
pub fn lstat(path: &Path) -> io::Result<Option<Metadata>> {
    match fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where a symbolic link points, for messages.
pub fn link_target(path: &Path) -> Option<PathBuf> {
    fs::read_link(path).ok()
}

/// Returns whether a path exists (file or folder). Errors other than "not found" count as absent.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Returns whether a path is itself a symbolic link (not following it).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

/// Returns whether a path is a regular file (following links).
pub fn is_file(path: &Path) -> bool {
    fs::metadata(path).map(|m| m.is_file()).unwrap_or(false)
}

/// Returns the length of a regular file (following links); `None` when it is absent or not a
/// regular file.
pub fn len(path: &Path) -> Option<u64> {
    fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// Whether a path is a regular file someone may execute (any `x` bit; on other platforms, any
/// regular file).
pub fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        is_file(path)
    }
}

/// A path with every link resolved; the part that does not exist yet is kept as written.
pub fn real(p: &Path) -> PathBuf {
    if let Ok(r) = fs::canonicalize(p) {
        return r;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => real(parent).join(name),
        _ => p.to_path_buf(),
    }
}

/// Returns whether a path is a folder.
pub fn is_dir(path: &Path) -> bool {
    fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false)
}

/// Returns a file's length, when it is there.
pub fn file_len(path: &Path) -> Option<u64> {
    fs::metadata(path).ok().map(|m| m.len())
}

/// What changes when a file or folder changes, read without opening it (a link is not
/// followed): its modification time, length and inode (an atomic replace makes a new one).
/// `None` when nothing is there.
pub fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64, u64)> {
    let m = fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((m.modified().ok()?, m.len(), ino))
}

/// Returns a regular file's modification time (a link or special file has none here).
pub fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::symlink_metadata(path)
        .ok()
        .filter(Metadata::is_file)
        .and_then(|m| m.modified().ok())
}

/// Sets a regular file's modification time to `at` (seconds since the epoch), without
/// following a link; `Ok(false)` when there is no such file. One system call: no file is
/// opened, nothing is read or written.
#[cfg(unix)]
pub fn set_modified(path: &Path, at: i64) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Ok(false);
    };
    let t = libc::timespec {
        tv_sec: at as libc::time_t,
        tv_nsec: 0,
    };
    let times = [t, t];
    // SAFETY: `c` is a NUL-terminated path and `times` two valid timespecs, both alive for the
    // call; utimensat reads them and keeps no pointer.
    let rc = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::NotFound => Ok(false),
        _ => Err(e),
    }
}

/// Sets a file's modification time (see the Unix version): elsewhere through std.
#[cfg(not(unix))]
pub fn set_modified(path: &Path, at: i64) -> io::Result<bool> {
    let Ok(f) = fs::OpenOptions::new().write(true).open(path) else {
        return Ok(false);
    };
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(at.max(0) as u64);
    f.set_modified(t).map(|()| true)
}

/// Lists a folder in the order the system gives; a missing folder is empty. Names that are not
/// UTF-8 are skipped.
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

/// Gives the file at `from` a second name `to` in the same folder (a hard link: the same bytes,
/// which a rename over `from` then leaves in place), never following a link at `from`; `to`
/// must not exist. Fails where the file system has no hard links.
pub fn hard_link(from: &Path, to: &Path) -> Result<()> {
    fs::hard_link(from, to).map_err(|e| Error::io("link", to, e))
}

/// Renames `from` to `to` (same filesystem), then fsyncs the destination folder.
pub fn rename_durable(from: &Path, to: &Path) -> Result<()> {
    rename_with_retry(from, to)?;
    sync_parent(to)
}

/// Opens (creating if needed) a sidecar lock file for locking. Never truncates it, never
/// follows a link (a dangling one creates nothing), and refuses anything but a regular file.
pub fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            create_dir_all(dir)?;
        }
    }
    let f = flags(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        false,
    )
    .open(path)
    .map_err(|e| open_error("open lock", path, e))?;
    regular("open lock", path, &f)?;
    Ok(f)
}

/// Replaces `target` with `bytes` atomically and durably.
///
/// Writes a new temp file `temp_dir/<temp_name>` (default: the target's own folder), fsyncs it,
/// copies the target's permission bits onto it, renames it over the target, and fsyncs the
/// target's folder. A crash at any point leaves either the old or the new content under
/// `target`, never a mix; at worst a stray temp file remains, which clean-up removes later.
/// The temp folder must be on the same filesystem as the target.
pub fn write_atomic(target: &Path, bytes: &[u8], temp_dir: &Path, temp_name: &str) -> Result<()> {
    write_atomic_with(
        target,
        temp_dir,
        temp_name,
        &mut |f: &mut File| f.write_all(bytes),
        &mut || Ok(()),
    )
}

/// [`write_atomic`] with the content written by `fill` into the temp file (so a large file
/// need not be held in memory whole); `before` runs once the temp file is whole and synced,
/// just before the rename (what a crash between the two must find written first). An error
/// from either removes the temp file; the target is untouched.
pub fn write_atomic_with(
    target: &Path,
    temp_dir: &Path,
    temp_name: &str,
    fill: &mut dyn FnMut(&mut File) -> io::Result<()>,
    before: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let dir = parent_of(target);
    if !dir.exists() {
        create_dir_all(dir)?;
    }
    if !temp_dir.exists() {
        create_dir_all(temp_dir)?;
    }
    let mut tmp = temp_dir.join(temp_name);
    for retry in 1..=TEMP_TRIES {
        let f = flags(OpenOptions::new().write(true).create_new(true), false)
            .open(&tmp)
            .map_err(|e| open_error("create temp file", &tmp, e))?;
        // The temp file is locked from now until it is renamed: a process that finds it
        // unlocked knows its writer is gone ([`remove_if_unused`]).
        let mut lock = fd_lock::RwLock::new(f);
        let mut held = lock
            .write()
            .map_err(|e| Error::io("lock temp file", &tmp, e))?;
        if !is_at(&held, &tmp) {
            // Removed between its creation and the lock, as a leftover: write a new one.
            drop(held);
            tmp = temp_dir.join(format!("{temp_name}-{retry}"));
            continue;
        }
        let result = (|| {
            fill(&mut held).map_err(|e| Error::io("write temp file", &tmp, e))?;
            held.sync_all()
                .map_err(|e| Error::io("fsync temp file", &tmp, e))?;
            if let Ok(meta) = fs::symlink_metadata(target) {
                // Keep the mode the user gave the file (our temp starts as 0666 & ~umask).
                if meta.is_file() {
                    let _ = held.set_permissions(meta.permissions());
                }
            }
            before()?;
            // Windows renames no open file: there the lock ends before the rename.
            #[cfg(not(unix))]
            drop(held);
            rename_with_retry(&tmp, target)?;
            if temp_dir != dir {
                sync_dir(temp_dir)?;
            }
            sync_dir(dir)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        return result;
    }
    Err(Error::refused(
        "write",
        target,
        format!("its temp files in {} are removed as soon as they are made (another process cleaning up?)", temp_dir.display()),
    ))
}

/// Attempts at a temp file a cleaner removed before it was locked.
const TEMP_TRIES: usize = 3;

/// Whether `path` is the file `f` is open on (same device and inode).
fn is_at(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = f;
        fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
    }
}

/// Whether a live process holds the lock of the temp file at `path` (its write is under way).
/// A link, a special file or a missing file is held by no one.
pub fn temp_in_use(path: &Path) -> bool {
    let Ok(f) = flags(OpenOptions::new().read(true), false).open(path) else {
        return false;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut lock = fd_lock::RwLock::new(f);
    let busy = lock.try_write().is_err();
    busy
}

/// Removes the temp file at `path` unless a live process holds its lock (its write is under
/// way): the probe and the removal happen under the file's own lock, so a writer that locks
/// it afterwards finds it gone and writes another. Returns whether it was removed.
pub fn remove_if_unused(path: &Path) -> Result<bool> {
    let f = match flags(OpenOptions::new().read(true), false).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(open_error("remove", path, e)),
    };
    regular("remove", path, &f)?;
    let mut lock = fd_lock::RwLock::new(f);
    let Ok(held) = lock.try_write() else {
        return Ok(false);
    };
    if !is_at(&held, path) {
        return Ok(false);
    }
    remove_file(path)?;
    drop(held);
    Ok(true)
}

/// What [`append`] did, so a failed transaction can undo it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The file's length before the append.
    pub old_len: u64,
    /// Whether the append created the file.
    pub created: bool,
}

fn open_append(path: &Path, create: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).append(true);
    if create {
        o.create_new(true);
    }
    flags(&mut o, false).open(path)
}

/// Appends `bytes` to `path` with one `write` on an `O_APPEND` descriptor, then fsyncs.
///
/// When the file does not end with a newline (a torn last line from an earlier crash), a newline
/// goes first so the new entry starts on its own line. Existing bytes are never touched. The
/// target must be a regular file with one link (a second hard link could be anywhere). When
/// the write or its fsync fails (disk full, `ulimit -f`), the file is cut back to its old
/// length (or removed, if this call created it): a failed append leaves no torn entry.
pub fn append(path: &Path, bytes: &[u8]) -> Result<Appended> {
    let dir = parent_of(path);
    let (mut f, created) = match open_append(path, false) {
        Ok(f) => (f, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !dir.exists() {
                create_dir_all(dir)?;
            }
            match open_append(path, true) {
                Ok(f) => (f, true),
                Err(e) => return Err(open_error("append to", path, e)),
            }
        }
        Err(e) => return Err(open_error("append to", path, e)),
    };
    let meta = regular("append to", path, &f)?;
    if links(&meta) > 1 {
        return Err(Error::refused(
            "append to",
            path,
            format!(
                "it has {} hard links, and taskhook appends only to a file with one (another \
                 link to it may be outside the store)",
                links(&meta)
            ),
        ));
    }
    let len = meta.len();
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
    if let Err(e) = f.write_all(&buf).and_then(|()| f.sync_data()) {
        if created {
            drop(f);
            let _ = fs::remove_file(path);
        } else {
            let _ = f.set_len(len).and_then(|()| f.sync_data());
        }
        return Err(Error::io("append to", path, e));
    }
    if created {
        sync_dir(dir)?;
    }
    Ok(Appended {
        old_len: len,
        created,
    })
}

/// Cuts a file back to `len` bytes (undoing an append). Never follows a link.
pub fn truncate(path: &Path, len: u64) -> Result<()> {
    let f = flags(OpenOptions::new().write(true), false)
        .open(path)
        .map_err(|e| open_error("truncate", path, e))?;
    regular("truncate", path, &f)?;
    f.set_len(len)
        .and_then(|()| f.sync_data())
        .map_err(|e| Error::io("truncate", path, e))
}

#[cfg(unix)]
fn links(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_: &Metadata) -> u64 {
    1
}

/// Makes a write past `ulimit -f` fail with `EFBIG` instead of killing the process with
/// SIGXFSZ (which would leave a stray temp file and no message). Called once at start.
pub fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: installs the predefined "ignore" disposition for one signal; no handler runs,
    // nothing is shared, and it happens at process start before any thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
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

/// Creates a new file (never replacing one) holding `bytes`, with the permission bits of
/// `like`: the file is opened with those bits (less the umask) so it is never more readable
/// than `like`, then given them exactly. Fsyncs the file and its folder. For backups.
pub fn create_new_like(path: &Path, bytes: &[u8], like: &Path) -> Result<()> {
    let perms = fs::metadata(like)
        .map_err(|e| Error::io("stat", like, e))?
        .permissions();
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        opts.mode(perms.mode() & 0o7777);
    }
    let mut f = opts.open(path).map_err(|e| Error::io("create", path, e))?;
    let written = f
        .write_all(bytes)
        .and_then(|()| f.set_permissions(perms))
        .and_then(|()| f.sync_all());
    if let Err(e) = written {
        drop(f);
        let _ = fs::remove_file(path);
        return Err(Error::io("write", path, e));
    }
    sync_parent(path)
}
