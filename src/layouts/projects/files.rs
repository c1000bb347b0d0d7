//! One project's files and every write to them, the seed's way: the new content is computed in
//! memory and validated; a value its schema refuses writes nothing and appends an ERROR entry
//! with the full error; a valid one goes to `temp/.write-{uuid}` (fsynced) and is renamed over
//! the target, under the project's lock (`.taskhook.lock`). The log is only appended to, right
//! after the state it records is written, the two made one transaction by a record of the
//! entries kept until both are written ([`pending`]). After completions, velocity.json is
//! recomputed from the log and a checkpoint written when one is due.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::layouts::shared::Shared;
use crate::store::Bytes;

use serde::Serialize;
use serde_json::Value;

use super::log::{self, Entry};
use super::model::{ProjectRecord, Status, Task, TaskList, Velocity};
use super::pending;
use super::restore::{self, Restored};
use super::velocity;
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{typed, write_back, Splice};
use crate::store::checkpoint::Ring;
use crate::store::{fs, parse_json, parsed, schema, to_pretty, Loaded};

/// The temp-file prefix inside `temp/` (seed 000: `temp/.write-{uuid}`).
pub const TEMP_PREFIX: &str = ".write-";
/// Completions between two checkpoints at most (the seed: every 10).
pub const CHECKPOINT_EVERY: usize = 10;
/// The schemas.
pub const SCHEMA_PROJECT: &str = "projects-project";
pub const SCHEMA_VELOCITY: &str = "projects-velocity";

/// The files of one project.
#[derive(Debug, Clone)]
pub struct Paths {
    pub root: PathBuf,
    pub project: PathBuf,
    pub tasks: PathBuf,
    pub log: PathBuf,
    pub velocity: PathBuf,
    pub research: PathBuf,
    pub checkpoints: PathBuf,
    pub temp: PathBuf,
}

impl Paths {
    pub fn of(root: &Path) -> Self {
        Paths {
            root: root.to_path_buf(),
            project: root.join("project.json"),
            tasks: root.join("tasks.json"),
            log: root.join("progress").join("log.md"),
            velocity: root.join("progress").join("velocity.json"),
            research: root.join("research"),
            checkpoints: root.join("checkpoints"),
            temp: root.join("temp"),
        }
    }

    /// `research/{id}.md`, for an id that is safe as a file name.
    pub fn research_file(&self, id: &str) -> Option<PathBuf> {
        crate::store::check_id("task id", id).ok()?;
        Some(self.research.join(format!("{id}.md")))
    }

    /// The record of a change under way ([`pending`]).
    pub fn pending(&self) -> PathBuf {
        self.temp.join(pending::NAME)
    }

    pub fn ring(&self) -> Ring {
        Ring::seed000(&self.checkpoints)
    }

    /// The project's lock.
    pub fn lock(&self) -> PathBuf {
        crate::store::folder_lock_path(&self.root)
    }
}

/// The master list as loaded: valid, or restored in memory from a checkpoint.
#[derive(Debug, Clone)]
pub struct Tasks {
    /// The document as read (or restored): [`super::save::commit`] writes [`Tasks::list`] back over it, so
    /// its key order and unknown fields survive. Parsed only when a write needs it.
    pub doc: Doc,
    /// The list, typed: what decisions read and change ([`Tasks::list_mut`]). Shared with
    /// the invocation's other reads of the same bytes until it is first changed.
    pub list: Rc<TaskList>,
    /// Set when tasks.json was unusable and `doc` was restored; written by [`super::save::commit`].
    pub restored: Option<Restored>,
}

impl Tasks {
    /// The list, to change: copied from the shared one on the first change.
    pub fn list_mut(&mut self) -> &mut TaskList {
        Rc::make_mut(&mut self.list)
    }
}

/// The document a list was read from: its bytes as read with the list they hold (parsed
/// again only by a write that needs the whole document), the bytes this invocation wrote
/// spliced over those ([`Splice`]: never held whole), or a document built in memory (a new
/// list, a restoration).
#[derive(Debug, Clone)]
pub enum Doc {
    Read {
        bytes: Bytes,
        list: Rc<TaskList>,
    },
    Spliced {
        base: Bytes,
        splice: Rc<Splice>,
        list: Rc<TaskList>,
    },
    Made(Value),
}

impl Doc {
    /// The document as JSON, to write the list back over.
    pub(super) fn to_value(&self) -> Result<Value> {
        match self {
            Doc::Made(v) => Ok(v.clone()),
            // Bytes whose parse and schema check this invocation already passed.
            Doc::Read { bytes, .. } => parse_json(bytes).map_err(Error::BadInput),
            Doc::Spliced { base, splice, .. } => {
                parse_json(&splice.to_vec(base)).map_err(Error::BadInput)
            }
        }
    }

    /// The bytes as tasks.json holds them and the list they hold, when read or written (a
    /// spliced document made whole).
    pub(super) fn read(&self) -> Option<(Bytes, &Rc<TaskList>)> {
        match self {
            Doc::Read { bytes, list } => Some((bytes.clone(), list)),
            Doc::Spliced { base, splice, list } => Some((Bytes::new(splice.to_vec(base)), list)),
            Doc::Made(_) => None,
        }
    }

    /// Writes the document's bytes as tasks.json holds them, each piece also handed to `seen`.
    pub(super) fn write_to(
        &self,
        w: &mut dyn std::io::Write,
        seen: &mut dyn FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let mut put = |piece: &[u8]| {
            seen(piece);
            w.write_all(piece)
        };
        match self {
            Doc::Made(v) => put(&to_pretty(v)),
            Doc::Read { bytes, .. } => put(bytes),
            Doc::Spliced { base, splice, .. } => splice.pieces(base).try_for_each(put),
        }
    }
}

/// Reads tasks.json. A missing file is an empty list, unless checkpoints exist (a write
/// interrupted between moving the damaged file aside and writing the new one): then it is
/// restored like a corrupt one. A corrupt or schema-invalid file is restored from the newest
/// valid checkpoint and the log (in memory; [`super::save::commit`] writes it); with nothing to restore
/// from, it is refused ([`Error::Corrupt`]).
pub fn load(cx: &Ctx, p: &Paths) -> Result<Tasks> {
    try_load(cx, p)?.map_err(|why| unusable(p, why))
}

/// [`load`], the list alone, for a read that writes nothing: the list this invocation shares.
pub fn read(cx: &Ctx, p: &Paths) -> Result<(Rc<TaskList>, Option<Restored>)> {
    // The file this invocation wrote as a stream: hashed as it is read, not held (a special
    // file is not read, and is refused below).
    if let Some((_, list)) = cx.store.still_written::<TaskList>(TYPED, &p.tasks) {
        return Ok((list, None));
    }
    Ok(match try_load_as(cx, p)?.map_err(|why| unusable(p, why))? {
        Found::Valid { list, .. } => (list, None),
        Found::Made(t) => (t.list, t.restored),
    })
}

fn unusable(p: &Paths, why: String) -> Error {
    Error::Corrupt {
        path: p.tasks.clone(),
        store: p.root.display().to_string(),
        details: format!("{why}; no valid checkpoint to restore it from"),
    }
}

/// [`load`], with why tasks.json is unusable as `Ok(Err(why))` when nothing can restore it (no
/// valid checkpoint, and no task of the damaged file validates).
pub fn try_load(cx: &Ctx, p: &Paths) -> Result<std::result::Result<Tasks, String>> {
    Ok(try_load_as(cx, p)?.map(|l| match l {
        // A list to change: the shared one, copied on its first change (the shared one stays
        // for the step's locked re-read after its peek).
        Found::Valid { bytes, list } => Tasks {
            list: list.clone(),
            doc: Doc::Read { bytes, list },
            restored: None,
        },
        Found::Made(t) => *t,
    }))
}

/// tasks.json as read: valid bytes and the list they hold (shared within the invocation), or
/// a list made in memory (a new one, a restoration).
enum Found {
    Valid { bytes: Bytes, list: Rc<TaskList> },
    Made(Box<Tasks>),
}

/// What [`typed_of`] remembers: the typed list of the last valid bytes of tasks.json.
pub(super) const TYPED: &str = "projects tasks.json, typed";

/// Lets go of the bytes of tasks.json remembered for a later read to compare (and of its
/// list, which lives on where it was handed out): a later read reads and parses again.
pub fn forget_parsed() {
    parsed::forget(TYPED);
}

/// The valid list the bytes hold, or why they are unusable, with the bytes (shared): parsed,
/// schema-checked and typed once per invocation for the same bytes (issue 23: the engine's
/// look at a store's units, the step's unlocked peek and its locked re-read all read the same
/// file, and keep one copy of it).
#[allow(clippy::type_complexity)]
fn typed_of(bytes: Vec<u8>) -> Result<(Bytes, std::result::Result<Rc<TaskList>, String>)> {
    parsed::remembered_valid(TYPED, bytes, |bytes| {
        let _shared = super::reading::Interning::start();
        // Task by task (the document's tree never whole); the whole reading words a refusal.
        crate::store::entries::read_strict(
            bytes,
            SCHEMA_TASKS,
            "tasks",
            |tasks: &mut Vec<Shared<Task>>, _, t| {
                tasks.push(Shared::new(t));
                true
            },
            crate::store::entries::NoSide,
            |list: &mut TaskList, tasks, _, _| list.tasks = tasks,
        )
    })
}

fn try_load_as(cx: &Ctx, p: &Paths) -> Result<std::result::Result<Found, String>> {
    refuse_special(&p.tasks)?;
    // The file still holds the bytes parsed last: compared, not read into a second copy.
    if let Some((bytes, list)) = cx.store.still_parsed::<TaskList>(TYPED, &p.tasks) {
        return Ok(Ok(Found::Valid { bytes, list }));
    }
    let (damaged, why) = match read_file(cx, &p.tasks)? {
        None if p.ring().list(&cx.store)?.is_empty() => {
            return Ok(Ok(Found::Made(Box::new(Tasks {
                doc: Doc::Made(serde_json::json!({"tasks": []})),
                list: Rc::default(),
                restored: None,
            }))))
        }
        None => (None, "it is missing".to_string()),
        Some(bytes) => match typed_of(bytes)? {
            (bytes, Ok(list)) => return Ok(Ok(Found::Valid { bytes, list })),
            (bytes, Err(why)) => (Some(bytes), why),
        },
    };
    Ok(restored(cx, p, damaged.as_deref().map(Vec::as_slice), why)?
        .map(|t| Found::Made(Box::new(t))))
}

/// Whether tasks.json still holds the bytes `doc` was read from (a list made in memory never
/// does).
pub fn still_holds(cx: &Ctx, p: &Paths, doc: &Doc) -> Result<bool> {
    // A document this invocation wrote as a stream is made whole to compare (a second write
    // in one invocation; rare).
    let Some((bytes, _)) = doc.read() else {
        return Ok(false);
    };
    refuse_special(&p.tasks)?;
    cx.store.has_content(&p.tasks, Some(&bytes))
}

/// tasks.json restored from the checkpoints and the log, or why it cannot be.
fn restored(
    cx: &Ctx,
    p: &Paths,
    damaged: Option<&[u8]>,
    why: String,
) -> Result<std::result::Result<Tasks, String>> {
    Ok(match restore::restore(cx, p, damaged, &why)? {
        Some(r) => typed::<TaskList>(&r.doc).map(|list| Tasks {
            doc: Doc::Made(r.doc.clone()),
            list: Rc::new(list),
            restored: Some(r),
        }),
        None => Err(why),
    })
}

/// A model as the JSON document it writes.
pub fn to_doc<T: Serialize>(model: &T) -> Value {
    serde_json::to_value(model).unwrap_or(Value::Null)
}

/// A path's file name as text.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Loads project.json or velocity.json against its schema through the store's one loader
/// ([`crate::store::Store::load_json`], capped by name like every read); a special file in its
/// place is refused.
pub fn load_small(cx: &Ctx, path: &Path, schema_name: &'static str) -> Result<Loaded> {
    refuse_special(path)?;
    cx.store.load_json(path, schema_name)
}

/// Reads the log as a stream, handing `each` every entry ([`log::scan_stream`]): the log is
/// never held whole. No entries when there is no log.
pub fn scan_log(cx: &Ctx, p: &Paths, each: impl FnMut(log::Raw<'_>)) -> Result<()> {
    refuse_special(&p.log)?;
    cx.store
        .read_with(&p.log, usize::MAX, |r| log::scan_stream(r, each))?;
    Ok(())
}

/// [`scan_log`], returning the digest of the bytes read (`None`: no log), for a later pass to
/// know the log unchanged without reading its entries again ([`log_holds`]).
pub fn scan_log_known(
    cx: &Ctx,
    p: &Paths,
    each: impl FnMut(log::Raw<'_>),
) -> Result<Option<parsed::Digest>> {
    refuse_special(&p.log)?;
    cx.store.read_with(&p.log, usize::MAX, |r| {
        let mut r = parsed::Digesting::new(r);
        log::scan_stream(&mut r, each)?;
        Ok(r.finish())
    })
}

/// Whether the log still holds the bytes [`scan_log_known`] read (`None`: there was none).
pub fn log_holds(cx: &Ctx, p: &Paths, digest: Option<parsed::Digest>) -> Result<bool> {
    refuse_special(&p.log)?;
    Ok(cx.store.digest_of(&p.log)? == digest)
}

/// The log's text (empty when there is none).
pub fn read_log(cx: &Ctx, p: &Paths) -> Result<String> {
    // Valid UTF-8 (the usual case) becomes the text as it is, not a copy of it.
    Ok(read_file(cx, &p.log)?
        .map(|b| {
            String::from_utf8(b)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        })
        .unwrap_or_default())
}

/// Appends entries to the log in one write.
pub fn append(cx: &Ctx, p: &Paths, entries: &[Entry]) -> Result<()> {
    append_block(cx, p, &log::render_all(entries))
}

/// The first line of a new log.
pub fn log_header(root: &Path) -> String {
    let id = root.file_name().unwrap_or_default().to_string_lossy();
    format!("# Progress log: {id}\n\n")
}

/// Validates `value` against `schema`, then writes it through `temp/.write-{uuid}`. A value
/// the schema refuses writes nothing and appends an ERROR entry (with `task`, where the write
/// was about one) holding the full error.
pub fn write_json(
    cx: &Ctx,
    p: &Paths,
    path: &Path,
    schema_name: &'static str,
    value: &Value,
    task: Option<(&str, &str, &str)>,
) -> Result<bool> {
    if let Err(issues) = schema::check(schema_name, value)? {
        let e = Error::SchemaInvalid {
            path: path.to_path_buf(),
            schema: schema_name,
            details: schema::summarize(&issues),
        };
        let now = cx.store.clock().stamp();
        // The ERROR entry stays even though the operation it records is undone.
        cx.store
            .keep_through_failure(|| append(cx, p, &[Entry::refused(&now, task, &e.one_line())]))?;
        return Err(e);
    }
    check_dirs(cx, p)?;
    cx.store
        .replace_via(path, &to_pretty(value), &p.temp, TEMP_PREFIX)
}

/// The store's folders taskhook writes into (`temp/`, `progress/`, `checkpoints/`) must be its
/// own: a link (or a file) in their place is refused, so no write lands outside the store.
pub(super) fn check_dirs(cx: &Ctx, p: &Paths) -> Result<()> {
    for e in cx.store.list_dir(&p.root)? {
        if matches!(e.name.as_str(), "temp" | "progress" | "checkpoints") && !e.is_dir {
            return Err(Error::Rule(format!(
                "`{}` is not a folder of the store (a link or a file); taskhook writes only inside the store: remove it",
                p.root.join(&e.name).display()
            )));
        }
    }
    Ok(())
}

/// Reads a file of the store (capped by its name, [`crate::store::limits::cap_for`]); a
/// special file (a FIFO, a device) in its place is refused rather than read.
pub fn read_file(cx: &Ctx, path: &Path) -> Result<Option<Vec<u8>>> {
    refuse_special(path)?;
    cx.store.read(path)
}

/// A special file (a FIFO, a device) where a file of the store should be: refused, unread.
fn refuse_special(path: &Path) -> Result<()> {
    if fs::exists(path) && !fs::is_file(path) {
        return Err(Error::BadInput(format!(
            "`{}` is not a regular file; taskhook will not read it",
            path.display()
        )));
    }
    Ok(())
}

/// What one change writes.
#[derive(Debug, Default)]
pub struct Change {
    /// Entries for the log, in order.
    pub entries: Vec<Entry>,
    /// Whether the master list changed.
    pub tasks_changed: bool,
    /// The task the change was about, for an ERROR entry: (id, from, to).
    pub task: Option<(String, String, String)>,
    /// Tasks completed (velocity is recomputed, a checkpoint may be due).
    pub completions: usize,
    /// Phases completed (a checkpoint is due).
    pub phases: Vec<String>,
    /// The task now being executed (project.json `current_task`), when it changes.
    pub started: Option<String>,
}

/// Appends rendered entries to the log in one write (the log's title first when it is new).
pub fn append_block(cx: &Ctx, p: &Paths, block: &str) -> Result<()> {
    if block.is_empty() {
        return Ok(());
    }
    check_dirs(cx, p)?;
    if !cx.store.exists(&p.log) {
        cx.store.append(&p.log, log_header(&p.root).as_bytes())?;
    }
    cx.store.append(&p.log, block.as_bytes())
}

/// After completions: velocity.json recomputed from the log, and a checkpoint written when
/// one is due (`phases` completed, or 10 completions since the last one); returns what the
/// checkpoint was. `tasks` writes tasks.json as written, `list` its model.
pub fn after_completions(
    cx: &Ctx,
    p: &Paths,
    list: &TaskList,
    tasks: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    phases: &[String],
    now: &str,
) -> Result<Option<String>> {
    let since = write_velocity(cx, p, list, now)?;
    let reason = if let Some(ph) = phases.first() {
        format!("phase {ph} complete")
    } else if since >= CHECKPOINT_EVERY {
        format!("{since} task completions since the last checkpoint")
    } else {
        return Ok(None);
    };
    checkpoint(cx, p, tasks, &reason).map(Some)
}

/// The velocity the log gives (`now` its time), and how many TASK_COMPLETE entries follow the
/// last CHECKPOINT_WRITTEN, in one read of the log as a stream.
pub fn recount(cx: &Ctx, p: &Paths, list: &TaskList, now: &str) -> Result<(Velocity, usize)> {
    let (mut since, mut done) = (0, velocity::LastCompleted::default());
    scan_log(cx, p, |raw| {
        match raw.event {
            log::TASK_COMPLETE => since += 1,
            log::CHECKPOINT_WRITTEN => since = 0,
            _ => {}
        }
        done.add(&raw);
    })?;
    Ok((velocity::velocity(&done.completions(list), now), since))
}

/// Writes velocity.json recomputed from the log ([`recount`]); returns how many TASK_COMPLETE
/// entries follow the last CHECKPOINT_WRITTEN.
pub fn write_velocity(cx: &Ctx, p: &Paths, list: &TaskList, now: &str) -> Result<usize> {
    let (v, since) = recount(cx, p, list, now)?;
    let v = to_doc(&v);
    check_dirs(cx, p)?;
    if let Some(dir) = p.velocity.parent() {
        cx.store.create_dir_all(dir)?;
    }
    write_json(cx, p, &p.velocity, SCHEMA_VELOCITY, &v, None)?;
    Ok(since)
}

/// Writes the current tasks.json (what `tasks` writes) as the next checkpoint, prunes beyond
/// the last 10, and logs CHECKPOINT_WRITTEN; returns what it did.
pub fn checkpoint(
    cx: &Ctx,
    p: &Paths,
    tasks: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    reason: &str,
) -> Result<String> {
    check_dirs(cx, p)?;
    let cp = p.ring().write_filled(&cx.store, tasks)?;
    let name = file_name(&cp.path);
    let now = cx.store.clock().stamp();
    append(
        cx,
        p,
        &[Entry::new(&now, log::CHECKPOINT_WRITTEN)
            .detail(log::label::CHECKPOINT, format!("checkpoints/{name}"))
            .detail(log::label::REASON, reason)],
    )?;
    Ok(format!("wrote checkpoints/{name} ({reason})"))
}

/// project.json follows the list: `current_task` (the task started, or cleared when it left
/// IN_PROGRESS), `phase` (the next phase with work, once one completes), `updated_at`. A
/// missing or unusable project.json is left alone.
pub fn update_project(cx: &Ctx, p: &Paths, list: &TaskList, c: &Change, now: &str) -> Result<()> {
    let Loaded::Valid(mut doc) = load_small(cx, &p.project, SCHEMA_PROJECT)? else {
        return Ok(());
    };
    let Ok(mut project) = typed::<ProjectRecord>(&doc) else {
        return Ok(());
    };
    let before = project.clone();
    let current = project.current_task.clone().flatten();
    let new_current = match &c.started {
        Some(s) => Some(s.clone()),
        None => current.filter(|id| list.status_of(id) == Some(Status::InProgress)),
    };
    if project.current_task.is_some() || new_current.is_some() {
        project.current_task = Some(new_current);
    }
    if !c.phases.is_empty() {
        if let Some(next) = list.next_phase() {
            project.phase = Some(next);
        }
    }
    if project != before {
        project.updated_at = Some(now.to_string());
        write_back(&mut doc, &project).map_err(Error::BadInput)?;
        write_json(cx, p, &p.project, SCHEMA_PROJECT, &doc, None)?;
    }
    Ok(())
}

/// An ERROR entry about the store (a change a rule refused), after settling a change a kill
/// interrupted, under the project's lock.
pub fn log_error(cx: &Ctx, p: &Paths, message: &str) -> Result<()> {
    let now = cx.store.clock().stamp();
    cx.store.with_lock(&p.lock(), || {
        pending::settle(cx, p)?;
        append(cx, p, &[Entry::error(&now, None, message)])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log read once through [`scan_log_known`] is known unchanged by [`log_holds`], and
    /// changed by an append, or by a rewrite of the same length; no log is known as none.
    #[test]
    #[allow(clippy::disallowed_methods)] // The test's own files, made and changed directly.
    fn a_log_read_once_is_known_until_it_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        let root = proj.join(".claude/projects/web");
        std::fs::create_dir_all(root.join("progress")).unwrap();
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        let cx = crate::context::testing(tmp.path(), &proj);
        let p = Paths::of(&root);
        let none = scan_log_known(&cx, &p, |_| panic!("no log, no entry")).unwrap();
        assert_eq!(none, None);
        assert!(log_holds(&cx, &p, none).unwrap());
        let entry = |task: &str| {
            Entry::task(
                "2026-03-01T12:00:00Z",
                log::TASK_COMPLETE,
                task,
                "IN_PROGRESS",
                "COMPLETE",
            )
        };
        let text = format!("# log\n\n{}", log::render_all(&[entry("T1"), entry("T2")]));
        std::fs::write(&p.log, &text).unwrap();
        let mut seen = Vec::new();
        let digest = scan_log_known(&cx, &p, |raw| {
            seen.push(raw.transition().0.unwrap_or_default().to_string())
        })
        .unwrap();
        assert_eq!(seen, ["T1", "T2"]);
        assert!(digest.is_some());
        assert!(log_holds(&cx, &p, digest).unwrap());
        assert!(!log_holds(&cx, &p, none).unwrap());
        std::fs::write(&p.log, text.replace("T2", "T3")).unwrap();
        assert!(
            !log_holds(&cx, &p, digest).unwrap(),
            "rewritten, same length"
        );
        std::fs::write(&p.log, format!("{text}{}", log::render_all(&[entry("T4")]))).unwrap();
        assert!(!log_holds(&cx, &p, digest).unwrap(), "appended to");
        std::fs::write(&p.log, &text).unwrap();
        assert!(log_holds(&cx, &p, digest).unwrap(), "the same bytes again");
    }
}
