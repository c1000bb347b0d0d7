//! Durable primitives shared by every layout. A layout never touches the disk itself: it goes
//! through a [`Store`], which
//!
//! - replaces state files atomically and durably ([`Store::replace_json`] validates against the
//!   embedded schema first, and writes nothing when the bytes would not change),
//! - appends to append-only logs, never rewriting them ([`Store::append`]),
//! - takes the sidecar lock with a bounded wait ([`Store::with_lock`]),
//! - applies the corrupt-file policy of CONTRACT §3 ([`Store::load_json`], [`Store::quarantine`]),
//! - records every path it changed, and in dry-run mode keeps all writes in memory (later reads
//!   in the same run see them) so `replay --dry-run` reports what would change and writes nothing,
//! - undoes what a failed locked operation had written (`undo`): exit 1 leaves every file as it
//!   was,
//! - writes only below the folders it was told to trust, never through a link ([`guard`]), and
//!   caps every read ([`limits`]).
//!
//! What a crash can lose: a write that had not reached its rename is lost whole (the old file
//! stays); a stray temp file may remain, which the next replace of that file and the next
//! SessionStart remove once no live process holds its lock ([`Store::clean_stale_temps`]).

pub mod base;
pub mod check;
pub mod checkpoint;
mod claim;
pub mod clock;
pub mod entries;
pub mod fs;
pub mod git;
pub mod guard;
pub mod ids;
mod invocation;
pub mod limits;
pub mod lock;
pub mod parsed;
mod read;
pub mod scan;
pub mod schema;
pub mod strict;
mod temps;
pub mod txn;
mod undo;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use claim::EventEnd;
pub use clock::Clock;
pub use fs::Entry;
pub use ids::{check_id, check_unit_id, check_word, sanitize_id, unsafe_id};
pub use read::Stream;
pub use temps::{temp_prefix, OWN_TEMP_AGE, STALE_TEMP_AGE};
pub use txn::Pass;

/// A file's bytes as read, shared (not copied) between what parsed them, the document a change
/// is written over, and the undo of that write: a state file of megabytes is held once.
pub type Bytes = std::sync::Arc<Vec<u8>>;

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
///
/// A store writes only below the folders it trusts ([`Store::trust`]); a new store trusts none.
#[derive(Debug)]
pub struct Store {
    clock: Clock,
    /// A bad `TASKHOOK_NOW`: reported by paths that use the clock, or write.
    clock_problem: Option<String>,
    clock_used: Cell<bool>,
    lock_timeout: Duration,
    /// A bad `TASKHOOK_LOCK_TIMEOUT`: reported by paths that lock, or write.
    timeout_problem: Option<String>,
    /// When this invocation's first lock wait started, and when every wait must end.
    lock_window: Cell<Option<(Instant, Instant)>>,
    bases: guard::Bases,
    /// What the writes inside the current locks did, to undo them if the operation fails.
    undo_log: RefCell<Vec<undo::Undo>>,
    /// How many transactions are open.
    depth: Cell<usize>,
    dry_run: bool,
    /// Dry-run writes: path -> new content (`None` = removed).
    overlay: RefCell<BTreeMap<PathBuf, Option<Vec<u8>>>>,
    changed: RefCell<Vec<PathBuf>>,
    /// The event being applied at most once ([`claim`]).
    claim: RefCell<Option<claim::Claim>>,
    /// Every change made, counted (a path changed twice counts twice).
    writes: Cell<u64>,
}

impl Store {
    /// A store that writes to disk.
    pub fn new(clock: Clock, lock_timeout: Duration) -> Self {
        Store {
            clock,
            clock_problem: None,
            clock_used: Cell::new(false),
            lock_timeout,
            timeout_problem: None,
            lock_window: Cell::new(None),
            bases: guard::Bases::default(),
            undo_log: RefCell::default(),
            depth: Cell::new(0),
            dry_run: false,
            overlay: RefCell::default(),
            changed: RefCell::default(),
            claim: RefCell::default(),
            writes: Cell::new(0),
        }
    }

    /// A store that keeps every write in memory and reports it, writing nothing.
    pub fn dry_run(clock: Clock, lock_timeout: Duration) -> Self {
        Store {
            dry_run: true,
            ..Store::new(clock, lock_timeout)
        }
    }

    /// Trusts `base` for writes: the project (`follow_links` false: a link below it is never
    /// read or written through) or Claude Code's folder (`follow_links` true). See [`guard`].
    pub fn trust(&self, base: &Path, follow_links: bool) {
        self.bases.trust(base, follow_links);
    }

    /// Whether writes are kept in memory only.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// Checks a write: a sound environment, and a path below a trusted base, not through a link.
    /// `link_ok`: below a base that follows links, the path itself may be one (a folder, or a
    /// file that is renamed over rather than written through); below the project, never.
    /// A write of an event another run applied is refused ([`claim`]); taking a lock or
    /// creating a folder changes no state and is not guarded.
    fn check_write(&self, op: &'static str, path: &Path, link_ok: bool) -> Result<()> {
        self.check_env()?;
        self.bases.check_write(op, path, link_ok)?;
        if matches!(op, "lock" | "create folder") {
            return Ok(());
        }
        self.claim_before()
    }

    /// After a write that succeeded: the path changed, and the event is claimed ([`claim`]).
    fn wrote(&self, path: &Path) -> Result<()> {
        self.mark(path);
        self.claim_after()
    }

    /// Returns the paths changed since the last call, in first-change order, and forgets them.
    pub fn take_changed(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.changed.borrow_mut())
    }

    /// Whether anything changed since the last [`Store::take_changed`].
    pub fn has_changed(&self) -> bool {
        !self.changed.borrow().is_empty()
    }

    /// Forgets that `path` changed: a transient file an operation wrote and removed again
    /// (a commit's own record) is not a change it made.
    pub fn forget_change(&self, path: &Path) {
        self.changed.borrow_mut().retain(|p| p != path);
    }

    /// How many changes this store has made so far: a step that leaves it as it was changed
    /// nothing.
    pub fn write_count(&self) -> u64 {
        self.writes.get()
    }

    fn mark(&self, path: &Path) {
        self.writes.set(self.writes.get() + 1);
        let mut changed = self.changed.borrow_mut();
        if !changed.iter().any(|p| p == path) {
            changed.push(path.to_path_buf());
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
        self.replace_via_from(path, bytes, temp_dir, temp_prefix, None)
    }

    /// [`Store::replace`] for a caller that may hold what it read of `path` under this lock
    /// (`was`): when the file still holds exactly that (compared as it is read), the undo keeps
    /// the caller's bytes instead of reading a second copy of a large file. `None` is
    /// [`Store::replace`].
    pub fn replace_from(&self, path: &Path, bytes: &[u8], was: Option<&Bytes>) -> Result<bool> {
        let dir = path.parent().unwrap_or(Path::new("."));
        self.replace_via_from(path, bytes, dir, &temp_prefix(path), was)
    }

    /// [`Store::replace_via`] with what the caller may hold of `path` ([`Store::replace_from`]).
    pub fn replace_via_from(
        &self,
        path: &Path,
        bytes: &[u8],
        temp_dir: &Path,
        temp_prefix: &str,
        was: Option<&Bytes>,
    ) -> Result<bool> {
        self.check_write("write", path, true)?;
        self.check_write("write", temp_dir, true)?;
        let old = self.held_before(path, was)?;
        if old.as_deref().map(Vec::as_slice) == Some(bytes) {
            return Ok(false);
        }
        if self.dry_run {
            self.overlay
                .borrow_mut()
                .insert(path.to_path_buf(), Some(bytes.to_vec()));
        } else {
            let temp_name = format!("{temp_prefix}{}", uuid::Uuid::new_v4());
            fs::write_atomic(path, bytes, temp_dir, &temp_name)?;
            self.replaced(path, old, temp_dir, temp_prefix);
        }
        self.wrote(path)?;
        Ok(true)
    }

    /// What `path` holds before a replace, for its undo: the caller's bytes `was` when the
    /// file still holds exactly them (compared as it is read), else the file's own.
    fn held_before(&self, path: &Path, was: Option<&Bytes>) -> Result<Option<Bytes>> {
        Ok(match was {
            Some(was) if self.has_content(path, Some(was))? => Some(was.clone()),
            _ => self.read(path)?.map(Bytes::new),
        })
    }

    /// After a replace on disk: its undo recorded, and the temp files of writes killed earlier
    /// removed (at the next write to the same file).
    fn replaced(&self, path: &Path, old: Option<Bytes>, temp_dir: &Path, temp_prefix: &str) {
        self.record(undo::Undo::Replaced {
            path: path.to_path_buf(),
            old,
        });
        let age = if temp_prefix == temps::temp_prefix(path) {
            OWN_TEMP_AGE
        } else {
            STALE_TEMP_AGE
        };
        let _ = self.clean_stale_temps(temp_dir, temp_prefix, age);
    }

    /// [`Store::replace_via_from`] with the new content written by `fill` straight into the temp
    /// file (a large file is never held whole), for a caller that knows it differs from what
    /// the file holds (it compared the parsed content). `before` runs once the temp file is
    /// whole and synced, just before the rename: a record a crash in between must find (the
    /// projects layout's pending entries). Recorded for undo as any replace is; a dry run
    /// gathers the content into its overlay.
    pub fn replace_filled(
        &self,
        path: &Path,
        temp_dir: &Path,
        temp_prefix: &str,
        was: Option<&Bytes>,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
        before: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        self.check_write("write", path, true)?;
        self.check_write("write", temp_dir, true)?;
        if self.dry_run {
            let mut bytes = Vec::new();
            fill(&mut bytes).map_err(|e| Error::io("write", path, e))?;
            before()?;
            self.overlay
                .borrow_mut()
                .insert(path.to_path_buf(), Some(bytes));
            return self.wrote(path);
        }
        let old = self.held_before(path, was)?;
        let temp_name = format!("{temp_prefix}{}", uuid::Uuid::new_v4());
        fs::write_atomic_with(path, temp_dir, &temp_name, &mut |f| fill(f), before)?;
        self.replaced(path, old, temp_dir, temp_prefix);
        self.wrote(path)
    }

    /// [`Store::replace_filled`] (temp file beside `path`) for a caller that does not hold the
    /// file's bytes (it parsed the file as a stream, issue 23): for the undo, the old file is
    /// not read into memory but kept under a second name beside it (`.<name>.kept-<uuid>`, a
    /// hard link) until the locked operation ends, and renamed back if it fails. The first such
    /// replace of a file in an operation keeps it (a later one's undo would only restore what
    /// the earlier one's undo replaces); links left by a process killed mid-operation go at the
    /// next one. Where the file system has no hard links, the old file is read, as any replace
    /// reads it.
    pub fn replace_filled_kept(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let prefix = temp_prefix(path);
        if self.dry_run || !fs::is_file(path) {
            // Gathered in the overlay; or a new file (its undo removes it), or not a file to
            // keep (refused as any replace refuses it).
            return self.replace_filled(path, dir, &prefix, None, fill, &mut || Ok(()));
        }
        self.check_write("write", path, true)?;
        // Nothing to undo outside a locked operation, nor after the operation's first replace
        // of the file.
        let kept = self.depth.get() == 0
            || self.undo_log.borrow().iter().any(|u| {
                matches!(u, undo::Undo::Kept { path: p, .. } | undo::Undo::Replaced { path: p, .. } if p == path)
            });
        let link = if kept {
            None
        } else {
            let keep = kept_prefix(path);
            // Under the lock, a kept file this operation did not make is a leftover (a link or
            // special file of that name is not taskhook's, and stays).
            for e in self.list_dir(dir)? {
                let old = dir.join(&e.name);
                if e.name.starts_with(&keep) && !fs::is_symlink(&old) && fs::is_file(&old) {
                    let _ = fs::remove_file(&old);
                }
            }
            let to = dir.join(format!("{keep}{}", uuid::Uuid::new_v4()));
            self.check_write("write", &to, false)?;
            if fs::hard_link(path, &to).is_err() {
                // No hard links here: the old file is read for the undo, as any replace does.
                return self.replace_filled(path, dir, &prefix, None, fill, &mut || Ok(()));
            }
            Some(to)
        };
        let temp_name = format!("{prefix}{}", uuid::Uuid::new_v4());
        let wrote = fs::write_atomic_with(path, dir, &temp_name, &mut |f| fill(f), &mut || Ok(()));
        match (wrote, link) {
            (Err(e), link) => {
                if let Some(link) = link {
                    let _ = fs::remove_file(&link);
                }
                return Err(e);
            }
            (Ok(()), Some(link)) => self.record(undo::Undo::Kept {
                path: path.to_path_buf(),
                link,
            }),
            (Ok(()), None) => {}
        }
        let _ = self.clean_stale_temps(dir, &prefix, OWN_TEMP_AGE);
        self.wrote(path)
    }

    /// [`Store::replace_filled`] with the temp file beside `path`, as [`Store::replace`] puts
    /// it, and nothing to do before the rename.
    pub fn replace_filled_from(
        &self,
        path: &Path,
        was: Option<&Bytes>,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        self.replace_filled(path, dir, &temp_prefix(path), was, fill, &mut || Ok(()))
    }

    /// Replaces `path` atomically with what `fill` writes, for a caller that already knows the
    /// content differs from the file (it compared the parsed content) and makes this the last
    /// write of its locked operation: the old file is not read again and the new one is never
    /// held in memory whole, so rewriting a large file costs two copies of it less. Nothing is
    /// recorded for undo (nothing after it can fail); inside a nested lock, or in a dry run, it
    /// is a plain [`Store::replace`]. An error from `fill` leaves the file as it was.
    pub fn replace_streamed(
        &self,
        path: &Path,
        fill: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        if self.dry_run || self.depth.get() > 1 {
            let mut bytes = Vec::new();
            fill(&mut bytes).map_err(|e| Error::io("write", path, e))?;
            return self.replace(path, &bytes).map(|_| ());
        }
        self.check_write("write", path, true)?;
        // Nothing undoes a streamed write: the event is claimed before it.
        self.claim_after()?;
        self.claim_commit()?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let prefix = temp_prefix(path);
        let temp_name = format!("{prefix}{}", uuid::Uuid::new_v4());
        fs::write_atomic_with(path, dir, &temp_name, &mut |f| fill(f), &mut || Ok(()))?;
        // Temp files of writes killed earlier go at the next write to the same file.
        let _ = self.clean_stale_temps(dir, &prefix, OWN_TEMP_AGE);
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
                self.keep_through_failure(|| log_error(&e.one_line()))?;
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

    /// The bytes [`Store::replace_json`] would write for `value` (validated against `schema`
    /// first; an invalid value is [`Error::SchemaInvalid`] naming `path`), for a caller that
    /// writes the same bytes to two files.
    pub fn checked_json(
        &self,
        path: &Path,
        schema: &'static str,
        value: &Value,
    ) -> Result<Vec<u8>> {
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
        self.check_write("append to", path, false)?;
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
            let done = fs::append(path, bytes)?;
            self.record(undo::Undo::Appended {
                path: path.to_path_buf(),
                done,
            });
        }
        self.wrote(path)
    }

    /// Removes a file (checkpoint pruning, stale temp files). Missing files are fine.
    pub fn remove(&self, path: &Path) -> Result<()> {
        if !self.exists(path) {
            return Ok(());
        }
        self.check_write("remove", path, false)?;
        if self.dry_run {
            self.overlay.borrow_mut().insert(path.to_path_buf(), None);
        } else {
            fs::remove_file(path)?;
        }
        self.wrote(path)
    }

    /// Moves a file or folder (same filesystem), durably.
    pub fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.check_write("move", from, true)?;
        self.check_write("move", to, true)?;
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
            self.record(undo::Undo::Renamed {
                from: from.to_path_buf(),
                to: to.to_path_buf(),
            });
        }
        self.mark(from);
        self.wrote(to)
    }

    /// Creates a folder (and parents) when missing.
    pub fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.check_write("create folder", dir, true)?;
        if self.dry_run || self.is_dir(dir) {
            return Ok(());
        }
        fs::create_dir_all(dir)?;
        self.mark(dir);
        Ok(())
    }

    /// Runs `f` under the exclusive sidecar lock `lock_path`, as one transaction: when `f`
    /// fails, what it wrote is undone (`undo`). Every lock of one invocation shares one
    /// deadline, `TASKHOOK_LOCK_TIMEOUT` after the first lock wait began. Dry runs take no lock
    /// and create no lock file.
    pub fn with_lock<R>(&self, lock_path: &Path, f: impl FnOnce() -> Result<R>) -> Result<R> {
        self.check_write("lock", lock_path, false)?;
        if self.dry_run {
            return f();
        }
        let window = self.lock_window.get().unwrap_or_else(|| {
            let now = Instant::now();
            let w = (now, now + self.lock_timeout);
            self.lock_window.set(Some(w));
            w
        });
        lock::with_lock(lock_path, window, || self.transaction(f))
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
}

/// The names [`Store::replace_filled_kept`] keeps an old file under, beside it.
fn kept_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.kept-")
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

/// Parses bytes as JSON and checks them against `schema`: the value, or what is wrong in one
/// line (`not valid JSON: …`, `does not match schema …: …`). What the bytes gave is remembered
/// for the rest of the invocation ([`parsed`]): the same bytes read again are not checked again,
/// and from their third read on not parsed again either (a copy of the value is kept from the
/// second read, so an event that reads a file once pays for no copy).
pub fn parse_checked(
    bytes: &[u8],
    schema_name: &'static str,
) -> Result<std::result::Result<Value, String>> {
    /// What one schema's last bytes gave.
    enum Checked {
        Valid(Option<Value>),
        Invalid(String),
    }
    if let Some(known) = parsed::get::<Checked>(schema_name, bytes) {
        return Ok(match &*known {
            Checked::Invalid(why) => Err(why.clone()),
            Checked::Valid(Some(v)) => Ok(v.clone()),
            Checked::Valid(None) => {
                let v = parse_json(bytes);
                if let Ok(v) = &v {
                    parsed::remember(schema_name, bytes, Rc::new(Checked::Valid(Some(v.clone()))));
                }
                v
            }
        });
    }
    let outcome = check_bytes(bytes, schema_name)?;
    let known = match &outcome {
        Ok(_) => Checked::Valid(None),
        Err(why) => Checked::Invalid(why.clone()),
    };
    parsed::remember(schema_name, bytes, Rc::new(known));
    Ok(outcome)
}

/// [`parse_checked`], typed: the model the checked document holds, or why it is unusable (the
/// parse, the schema or the model refusing it, in one line).
pub fn parse_typed<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    schema_name: &'static str,
) -> Result<std::result::Result<T, String>> {
    Ok(parse_checked(bytes, schema_name)?
        .and_then(|doc| serde_json::from_value::<T>(doc).map_err(|e| e.to_string())))
}

fn check_bytes(
    bytes: &[u8],
    schema_name: &'static str,
) -> Result<std::result::Result<Value, String>> {
    let value = match parse_json(bytes) {
        Ok(v) => v,
        Err(why) => return Ok(Err(why)),
    };
    Ok(match schema::check(schema_name, &value)? {
        Ok(()) => Ok(value),
        Err(issues) => Err(format!(
            "does not match schema {schema_name}: {}",
            schema::summarize(&issues)
        )),
    })
}
