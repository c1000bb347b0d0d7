//! One project's files and every write to them, the seed's way: the new content is computed in
//! memory and validated; a value its schema refuses writes nothing and appends an ERROR entry
//! with the full error; a valid one goes to `temp/.write-{uuid}` (fsynced) and is renamed over
//! the target, under the project's lock (`.taskhook.lock`). The log is only appended to, before
//! the state it records is written. After completions, velocity.json is recomputed from the log
//! and a checkpoint written when one is due.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::log::{self, Entry};
use super::model;
use super::recovery::{self, Restored};
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::store::checkpoint::Ring;
use crate::store::{fs, parse_checked, schema, to_pretty, Loaded};

/// The temp-file prefix inside `temp/` (seed 000: `temp/.write-{uuid}`).
pub const TEMP_PREFIX: &str = ".write-";
/// Largest tasks.json / checkpoint read.
pub const STATE_CAP: usize = 64 * 1024 * 1024;
/// Largest progress/log.md read.
pub const LOG_CAP: usize = 64 * 1024 * 1024;
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
    pub doc: Value,
    /// Set when tasks.json was unusable and `doc` was restored; written by [`commit`].
    pub restored: Option<Restored>,
}

/// Reads tasks.json. A missing file is an empty list, unless checkpoints exist (a write
/// interrupted between moving the damaged file aside and writing the new one): then it is
/// restored like a corrupt one. A corrupt or schema-invalid file is restored from the newest
/// valid checkpoint and the log (in memory; [`commit`] writes it); with nothing to restore
/// from, it is refused ([`Error::Corrupt`]).
pub fn load(cx: &Ctx, p: &Paths) -> Result<Tasks> {
    let bytes = read_file(cx, &p.tasks, STATE_CAP)?;
    let why = match &bytes {
        None if p.ring().list(&cx.store)?.is_empty() => {
            return Ok(Tasks {
                doc: json!({"tasks": []}),
                restored: None,
            })
        }
        None => "it is missing".to_string(),
        Some(b) => match parse_checked(b, SCHEMA_TASKS)? {
            Ok(v) => {
                return Ok(Tasks {
                    doc: v,
                    restored: None,
                })
            }
            Err(why) => why,
        },
    };
    match recovery::restore(cx, p, bytes.as_deref(), &why)? {
        Some(r) => Ok(Tasks {
            doc: r.doc.clone(),
            restored: Some(r),
        }),
        None => Err(Error::Corrupt {
            path: p.tasks.clone(),
            store: p.root.display().to_string(),
            details: format!("{why}; no valid checkpoint to restore it from"),
        }),
    }
}

/// A path's file name as text.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Largest project.json / velocity.json read.
pub const SMALL_CAP: usize = 4 * 1024 * 1024;

/// Loads project.json or velocity.json (bounded; a special file refused) against its schema.
pub fn load_small(cx: &Ctx, path: &Path, schema_name: &'static str) -> Result<Loaded> {
    let Some(bytes) = read_file(cx, path, SMALL_CAP)? else {
        return Ok(Loaded::Missing);
    };
    Ok(match parse_checked(&bytes, schema_name)? {
        Ok(v) => Loaded::Valid(v),
        Err(e) => Loaded::Invalid(e),
    })
}

/// The log's text (empty when there is none).
pub fn read_log(cx: &Ctx, p: &Paths) -> Result<String> {
    Ok(read_file(cx, &p.log, LOG_CAP)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default())
}

/// Appends entries to the log in one write.
pub fn append(cx: &Ctx, p: &Paths, entries: &[Entry]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    check_dirs(cx, p)?;
    if !cx.store.exists(&p.log) {
        cx.store.append(&p.log, log_header(&p.root).as_bytes())?;
    }
    cx.store.append(&p.log, log::render_all(entries).as_bytes())
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
            .keep_through_failure(|| append(cx, p, &[Entry::error(&now, task, &e.one_line())]))?;
        return Err(e);
    }
    check_dirs(cx, p)?;
    cx.store
        .replace_via(path, &to_pretty(value), &p.temp, TEMP_PREFIX)
}

/// The store's folders taskhook writes into (`temp/`, `progress/`, `checkpoints/`) must be its
/// own: a link (or a file) in their place is refused, so no write lands outside the store.
fn check_dirs(cx: &Ctx, p: &Paths) -> Result<()> {
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

/// Reads a file of the store, at most `cap` bytes; a special file (a FIFO, a device) in its
/// place is refused rather than read.
pub fn read_file(cx: &Ctx, path: &Path, cap: usize) -> Result<Option<Vec<u8>>> {
    if fs::exists(path) && !fs::is_file(path) {
        return Err(Error::BadInput(format!(
            "`{}` is not a regular file; taskhook will not read it",
            path.display()
        )));
    }
    cx.store.read_capped(path, cap)
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

/// What [`commit`] did besides the change itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Committed {
    /// The restoration of an unusable tasks.json, described.
    pub restored: Option<String>,
    /// The checkpoint written, described.
    pub checkpoint: Option<String>,
}

/// Writes a change: validates the new list (an invalid one writes nothing but the ERROR
/// entry), records a restoration (bad bytes kept aside, ERROR logged), appends the entries,
/// writes tasks.json, updates project.json, and after completions recomputes velocity.json
/// and writes a checkpoint when one is due. Call under the project's lock.
pub fn commit(cx: &Ctx, p: &Paths, t: &Tasks, c: &Change) -> Result<Committed> {
    let now = cx.store.clock().stamp();
    let mut notes = Committed::default();
    let write_tasks = c.tasks_changed || t.restored.is_some();
    if write_tasks {
        if let Err(issues) = schema::check(SCHEMA_TASKS, &t.doc)? {
            let e = Error::SchemaInvalid {
                path: p.tasks.clone(),
                schema: SCHEMA_TASKS,
                details: schema::summarize(&issues),
            };
            let task = c
                .task
                .as_ref()
                .map(|(a, b, d)| (a.as_str(), b.as_str(), d.as_str()));
            // The ERROR entry stays even though the operation it records is undone.
            cx.store.keep_through_failure(|| {
                append(cx, p, &[Entry::error(&now, task, &e.one_line())])
            })?;
            return Err(e);
        }
    }
    if let Some(r) = &t.restored {
        notes.restored = Some(recovery::keep_aside(cx, p, r, &now)?);
    }
    append(cx, p, &c.entries)?;
    if write_tasks {
        let task = c
            .task
            .as_ref()
            .map(|(a, b, d)| (a.as_str(), b.as_str(), d.as_str()));
        write_json(cx, p, &p.tasks, SCHEMA_TASKS, &t.doc, task)?;
        update_project(cx, p, &t.doc, c, &now)?;
    }
    if c.completions > 0 {
        let text = read_log(cx, p)?;
        let entries = log::parse(&text);
        let v = log::velocity(&log::completions(&entries, &t.doc), &now);
        write_json(cx, p, &p.velocity, SCHEMA_VELOCITY, &v, None)?;
        let since = completions_since_checkpoint(&entries);
        let reason = if let Some(ph) = c.phases.first() {
            Some(format!("phase {ph} complete"))
        } else if since >= CHECKPOINT_EVERY {
            Some(format!(
                "{since} task completions since the last checkpoint"
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            notes.checkpoint = Some(checkpoint(cx, p, &to_pretty(&t.doc), &reason)?);
        }
    }
    Ok(notes)
}

/// TASK_COMPLETE entries after the last CHECKPOINT_WRITTEN.
pub fn completions_since_checkpoint(entries: &[Entry]) -> usize {
    entries
        .iter()
        .rev()
        .take_while(|e| e.event != log::CHECKPOINT_WRITTEN)
        .filter(|e| e.event == log::TASK_COMPLETE)
        .count()
}

/// Writes `bytes` (the current tasks.json) as the next checkpoint, prunes beyond the last 10,
/// and logs CHECKPOINT_WRITTEN; returns what it did.
pub fn checkpoint(cx: &Ctx, p: &Paths, bytes: &[u8], reason: &str) -> Result<String> {
    check_dirs(cx, p)?;
    let cp = p.ring().write(&cx.store, bytes)?;
    let name = file_name(&cp.path);
    let now = cx.store.clock().stamp();
    append(
        cx,
        p,
        &[Entry::new(&now, log::CHECKPOINT_WRITTEN)
            .detail("Checkpoint", format!("checkpoints/{name}"))
            .detail("Reason", reason)],
    )?;
    Ok(format!("wrote checkpoints/{name} ({reason})"))
}

/// project.json follows the list: `current_task` (the task started, or cleared when it left
/// IN_PROGRESS), `phase` (the next phase with work, once one completes), `updated_at`. A
/// missing or unusable project.json is left alone.
fn update_project(cx: &Ctx, p: &Paths, doc: &Value, c: &Change, now: &str) -> Result<()> {
    let Loaded::Valid(mut project) = load_small(cx, &p.project, SCHEMA_PROJECT)? else {
        return Ok(());
    };
    let before = project.clone();
    let current = project["current_task"].as_str().map(str::to_string);
    let new_current = match &c.started {
        Some(s) => Some(s.clone()),
        None => current.filter(|id| model::status_of(doc, id) == model::IN_PROGRESS),
    };
    let Some(m) = project.as_object_mut() else {
        return Ok(());
    };
    if m.contains_key("current_task") || new_current.is_some() {
        m.insert(
            "current_task".into(),
            new_current.map_or(Value::Null, Value::String),
        );
    }
    if !c.phases.is_empty() {
        if let Some(next) = model::next_phase(doc) {
            m.insert("phase".into(), json!(next));
        }
    }
    if project != before {
        project["updated_at"] = json!(now);
        write_json(cx, p, &p.project, SCHEMA_PROJECT, &project, None)?;
    }
    Ok(())
}
