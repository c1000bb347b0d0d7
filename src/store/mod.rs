//! Durable primitives shared by every layout. A layout never touches the disk itself: it goes
//! through a [`Store`], which
//!
//! - replaces state files atomically and durably ([`Store::replace_json`] validates against the
//!   embedded schema first, and writes nothing when the bytes would not change),
//! - appends to append-only logs, never rewriting them ([`Store::append`]),
//! - takes the sidecar lock with a bounded wait ([`Store::with_lock`]),
//! - applies the corrupt-file policy of CONTRACT §3 ([`Store::load_json`], [`Store::quarantine`]),
//! - records every path it changed, and in dry-run mode keeps all writes in memory (later reads
//!   in the same run see them) so `replay --dry-run` reports what would change and writes nothing.
//!
//! What a crash can lose: a write that had not reached its rename is lost whole (the old file
//! stays); a stray temp file may remain, which [`Store::clean_stale_temps`] removes.

pub mod check;
pub mod checkpoint;
pub mod clock;
pub mod fs;
pub mod ids;
pub mod lock;
pub mod schema;
pub mod txn;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

pub use clock::Clock;
pub use fs::Entry;
pub use ids::{check_id, sanitize_id};
pub use txn::Pass;

use crate::error::{Error, Result};

/// A JSON state file as found on disk.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// No file there.
    Missing,
    /// Parsed and valid against its schema.
    Valid(Value),
    /// Present but unusable: the problem in one line.
    Invalid(String),
}

/// The disk as layouts see it, for one taskhook invocation.
#[derive(Debug)]
pub struct Store {
    clock: Clock,
    lock_timeout: Duration,
    dry_run: bool,
    /// Dry-run writes: path -> new content (`None` = removed).
    overlay: RefCell<BTreeMap<PathBuf, Option<Vec<u8>>>>,
    changed: RefCell<Vec<PathBuf>>,
}

impl Store {
    /// A store that writes to disk.
    pub fn new(clock: Clock, lock_timeout: Duration) -> Self {
        Store {
            clock,
            lock_timeout,
            dry_run: false,
            overlay: RefCell::default(),
            changed: RefCell::default(),
        }
    }

    /// A store that keeps every write in memory and reports it, writing nothing.
    pub fn dry_run(clock: Clock, lock_timeout: Duration) -> Self {
        Store {
            dry_run: true,
            ..Store::new(clock, lock_timeout)
        }
    }

    /// Whether writes are kept in memory only.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// The clock every timestamp comes from.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Returns the paths changed since the last call, in first-change order, and forgets them.
    pub fn take_changed(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.changed.borrow_mut())
    }

    /// Whether anything changed since the last [`Store::take_changed`].
    pub fn has_changed(&self) -> bool {
        !self.changed.borrow().is_empty()
    }

    fn mark(&self, path: &Path) {
        let mut changed = self.changed.borrow_mut();
        if !changed.iter().any(|p| p == path) {
            changed.push(path.to_path_buf());
        }
    }

    // ---- reads -------------------------------------------------------------------------

    /// Reads a file; `None` when absent.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.clone());
        }
        fs::read(path)
    }

    /// Reads at most `cap` bytes of a file; `None` when absent; longer is an error.
    pub fn read_capped(&self, path: &Path, cap: usize) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.clone());
        }
        fs::read_capped(path, cap)
    }

    /// Whether `path` holds exactly `expected` (`None`: no file), compared as it is read (a
    /// transaction that re-reads under its lock, without a second copy of a large file).
    pub fn has_content(&self, path: &Path, expected: Option<&[u8]>) -> Result<bool> {
        if let Some(v) = self.overlay.borrow().get(path) {
            return Ok(v.as_deref() == expected);
        }
        fs::same_content(path, expected)
    }

    /// Reads a file as UTF-8 text (invalid sequences replaced); `None` when absent.
    pub fn read_text(&self, path: &Path) -> Result<Option<String>> {
        Ok(self
            .read(path)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// Whether a file or folder exists.
    pub fn exists(&self, path: &Path) -> bool {
        if let Some(v) = self.overlay.borrow().get(path) {
            return v.is_some();
        }
        if self.overlay_has_under(path) {
            return true;
        }
        fs::exists(path)
    }

    /// Whether a folder exists.
    pub fn is_dir(&self, path: &Path) -> bool {
        self.overlay_has_under(path) || fs::is_dir(path)
    }

    fn overlay_has_under(&self, dir: &Path) -> bool {
        self.overlay
            .borrow()
            .iter()
            .any(|(p, v)| v.is_some() && p != dir && p.starts_with(dir))
    }

    /// Lists a folder, sorted by name (a missing folder is empty).
    pub fn list_dir(&self, dir: &Path) -> Result<Vec<Entry>> {
        let mut entries = fs::list_dir(dir)?;
        let overlay = self.overlay.borrow();
        for (path, content) in overlay.iter() {
            let Ok(rest) = path.strip_prefix(dir) else {
                continue;
            };
            let mut comps = rest.components();
            let Some(first) = comps.next() else { continue };
            let name = first.as_os_str().to_string_lossy().into_owned();
            let deeper = comps.next().is_some();
            let pos = entries.iter().position(|e| e.name == name);
            match (content, deeper, pos) {
                (None, false, Some(i)) => {
                    entries.remove(i);
                }
                (Some(_), _, None) => entries.push(Entry {
                    name,
                    is_dir: deeper,
                }),
                _ => {}
            }
        }
        entries.sort();
        Ok(entries)
    }

    /// Loads a JSON state file and checks it against `schema`.
    pub fn load_json(&self, path: &Path, schema: &str) -> Result<Loaded> {
        let Some(bytes) = self.read(path)? else {
            return Ok(Loaded::Missing);
        };
        Ok(match parse_json(&bytes) {
            Err(problem) => Loaded::Invalid(problem),
            Ok(value) => match schema::check(schema, &value)? {
                Ok(()) => Loaded::Valid(value),
                Err(issues) => Loaded::Invalid(format!(
                    "does not match schema {schema}: {}",
                    schema::summarize(&issues)
                )),
            },
        })
    }

    /// Loads a state file its layout cannot rebuild (CONTRACT §3): `Some` when valid, `None`
    /// when missing, and when it does not parse or fails its schema, [`Error::Corrupt`]
    /// naming the file and the fix; such a file is never overwritten. (A layout with an
    /// authoritative source uses [`Store::load_json`] and [`Store::quarantine`] and rebuilds.)
    pub fn load_or_refuse(
        &self,
        path: &Path,
        schema: &str,
        store_root: &Path,
    ) -> Result<Option<Value>> {
        match self.load_json(path, schema)? {
            Loaded::Missing => Ok(None),
            Loaded::Valid(v) => Ok(Some(v)),
            Loaded::Invalid(details) => Err(Error::Corrupt {
                path: path.to_path_buf(),
                store: store_root.display().to_string(),
                details,
            }),
        }
    }

    // ---- writes ------------------------------------------------------------------------

    /// Replaces `path` with `bytes` atomically (temp file beside it); returns whether anything
    /// changed. Identical content writes nothing.
    pub fn replace(&self, path: &Path, bytes: &[u8]) -> Result<bool> {
        let dir = path.parent().unwrap_or(Path::new("."));
        self.replace_via(path, bytes, dir, &temp_prefix(path))
    }

    /// Like [`Store::replace`], with the temp file at `temp_dir/<temp_prefix><uuid>` (seed 000
    /// keeps them in `temp/.write-{uuid}`). `temp_dir` must be on the target's filesystem.
    pub fn replace_via(
        &self,
        path: &Path,
        bytes: &[u8],
        temp_dir: &Path,
        temp_prefix: &str,
    ) -> Result<bool> {
        if self.read(path)?.as_deref() == Some(bytes) {
            return Ok(false);
        }
        if self.dry_run {
            self.overlay
                .borrow_mut()
                .insert(path.to_path_buf(), Some(bytes.to_vec()));
        } else {
            let temp_name = format!("{temp_prefix}{}", uuid::Uuid::new_v4());
            fs::write_atomic(path, bytes, temp_dir, &temp_name)?;
        }
        self.mark(path);
        Ok(true)
    }

    /// Replaces `path` atomically with what `fill` writes, for a caller that already knows the
    /// content differs from the file (it compared the parsed content): the old file is not
    /// read again and the new one is never held in memory whole, so rewriting a large file
    /// costs two copies of it less. An error from `fill` leaves the file as it was.
    pub fn replace_streamed(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        if self.dry_run {
            let mut bytes = Vec::new();
            fill(&mut bytes).map_err(|e| Error::io("write", path, e))?;
            self.overlay
                .borrow_mut()
                .insert(path.to_path_buf(), Some(bytes));
        } else {
            let dir = path.parent().unwrap_or(Path::new("."));
            let temp_name = format!("{}{}", temp_prefix(path), uuid::Uuid::new_v4());
            fs::write_atomic_with(path, dir, &temp_name, &mut |f| fill(f))?;
        }
        self.mark(path);
        Ok(())
    }

    /// Validates `value` against `schema`, then replaces `path` with its 2-space pretty form.
    /// An invalid value writes nothing and returns [`Error::SchemaInvalid`].
    pub fn replace_json(&self, path: &Path, schema: &'static str, value: &Value) -> Result<bool> {
        let bytes = self.checked_json(path, schema, value)?;
        self.replace(path, &bytes)
    }

    /// [`Store::replace_json`] for a layout that keeps a log: when the schema refuses the value,
    /// `log_error` records the full error there (CONTRACT §3: "a failed validation aborts the
    /// write and logs an ERROR entry where the layout has a log") before the error is returned.
    pub fn replace_json_logged(
        &self,
        path: &Path,
        schema: &'static str,
        value: &Value,
        log_error: impl FnOnce(&str) -> Result<()>,
    ) -> Result<bool> {
        match self.checked_json(path, schema, value) {
            Ok(bytes) => self.replace(path, &bytes),
            Err(e) => {
                log_error(&e.one_line())?;
                Err(e)
            }
        }
    }

    /// [`Store::replace_json`] with the temp file in `temp_dir`.
    pub fn replace_json_via(
        &self,
        path: &Path,
        schema: &'static str,
        value: &Value,
        temp_dir: &Path,
        temp_prefix: &str,
    ) -> Result<bool> {
        let bytes = self.checked_json(path, schema, value)?;
        self.replace_via(path, &bytes, temp_dir, temp_prefix)
    }

    fn checked_json(&self, path: &Path, schema: &'static str, value: &Value) -> Result<Vec<u8>> {
        if let Err(issues) = schema::check(schema, value)? {
            return Err(Error::SchemaInvalid {
                path: path.to_path_buf(),
                schema,
                details: schema::summarize(&issues),
            });
        }
        Ok(to_pretty(value))
    }

    /// Appends one entry to an append-only log (one write, fsynced).
    pub fn append(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.dry_run {
            let mut cur = self.read(path)?.unwrap_or_default();
            if cur.last().is_some_and(|b| *b != b'\n') {
                cur.push(b'\n');
            }
            cur.extend_from_slice(bytes);
            self.overlay
                .borrow_mut()
                .insert(path.to_path_buf(), Some(cur));
        } else {
            fs::append(path, bytes)?;
        }
        self.mark(path);
        Ok(())
    }

    /// Removes a file (checkpoint pruning, stale temp files). Missing files are fine.
    pub fn remove(&self, path: &Path) -> Result<()> {
        if !self.exists(path) {
            return Ok(());
        }
        if self.dry_run {
            self.overlay.borrow_mut().insert(path.to_path_buf(), None);
        } else {
            fs::remove_file(path)?;
        }
        self.mark(path);
        Ok(())
    }

    /// Moves a file or folder (same filesystem), durably.
    pub fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if self.dry_run {
            let content = self.read(from)?;
            let mut ov = self.overlay.borrow_mut();
            ov.insert(from.to_path_buf(), None);
            ov.insert(to.to_path_buf(), Some(content.unwrap_or_default()));
        } else {
            if let Some(dir) = to.parent() {
                if !fs::exists(dir) {
                    fs::create_dir_all(dir)?;
                }
            }
            fs::rename_durable(from, to)?;
        }
        self.mark(from);
        self.mark(to);
        Ok(())
    }

    /// Creates a folder (and parents) when missing.
    pub fn create_dir_all(&self, dir: &Path) -> Result<()> {
        if self.dry_run || self.is_dir(dir) {
            return Ok(());
        }
        fs::create_dir_all(dir)?;
        self.mark(dir);
        Ok(())
    }

    /// Runs `f` under the exclusive sidecar lock `lock_path` (bounded wait). Dry runs take no
    /// lock and create no lock file.
    pub fn with_lock<R>(&self, lock_path: &Path, f: impl FnOnce() -> Result<R>) -> Result<R> {
        if self.dry_run {
            return f();
        }
        lock::with_lock(lock_path, self.lock_timeout, f)
    }

    /// Moves a corrupt file aside to `<name>.corrupt-<UTC timestamp>` and returns the new path.
    /// The bad bytes are kept, never deleted.
    pub fn quarantine(&self, path: &Path) -> Result<PathBuf> {
        let stamp = self.clock.file_stamp();
        let mut target = fs::with_name_suffix(path, "", &format!(".corrupt-{stamp}"));
        let mut n = 1;
        while self.exists(&target) {
            n += 1;
            target = fs::with_name_suffix(path, "", &format!(".corrupt-{stamp}-{n}"));
        }
        self.rename(path, &target)?;
        Ok(target)
    }

    /// Removes files in `dir` whose names start with `prefix` and that were last modified more
    /// than `max_age` ago (by the real file time): temp files of abandoned atomic writes.
    pub fn clean_stale_temps(
        &self,
        dir: &Path,
        prefix: &str,
        max_age: Duration,
    ) -> Result<Vec<PathBuf>> {
        let stale = self.stale_temps(dir, prefix, max_age)?;
        for path in &stale {
            self.remove(path)?;
        }
        Ok(stale)
    }

    /// Removes the abandoned temp files of [`Store::replace`] writes to `state_file` (beside
    /// it, older than [`STALE_TEMP_AGE`]).
    pub fn clean_stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.clean_stale_temps(dir, &temp_prefix(state_file), STALE_TEMP_AGE)
    }

    /// The files [`Store::clean_stale_temps_of`] would remove, without removing them.
    pub fn stale_temps_of(&self, state_file: &Path) -> Result<Vec<PathBuf>> {
        let dir = state_file.parent().unwrap_or(Path::new("."));
        self.stale_temps(dir, &temp_prefix(state_file), STALE_TEMP_AGE)
    }

    /// The files [`Store::clean_stale_temps`] would remove, without removing them.
    pub fn stale_temps(&self, dir: &Path, prefix: &str, max_age: Duration) -> Result<Vec<PathBuf>> {
        let now = SystemTime::now();
        Ok(self
            .list_dir(dir)?
            .into_iter()
            .filter(|e| !e.is_dir && e.name.starts_with(prefix))
            .map(|e| dir.join(&e.name))
            .filter(|path| {
                fs::modified(path)
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|age| age > max_age)
            })
            .collect())
    }
}

/// Temp files older than this are abandoned writes (a write holds its temp file for
/// milliseconds; seed 000 says five minutes).
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(300);

/// The name prefix of [`Store::replace`]'s temp files for `path`: `.<name>.tmp-`.
pub fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.tmp-")
}

/// The sidecar lock file for a state file: `.<name>.lock` beside it (CONTRACT §3).
pub fn lock_path_for(state_file: &Path) -> PathBuf {
    fs::with_name_suffix(state_file, ".", ".lock")
}

/// The lock file of a layout whose state is a folder: `<root>/.taskhook.lock`.
pub fn folder_lock_path(root: &Path) -> PathBuf {
    root.join(".taskhook.lock")
}

/// Serializes JSON as seed files want it: 2-space pretty print and a final newline.
pub fn to_pretty(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Parses bytes as JSON, describing a failure in one line.
pub fn parse_json(bytes: &[u8]) -> std::result::Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))
}
