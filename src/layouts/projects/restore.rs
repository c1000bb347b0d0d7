//! Restoring an unusable tasks.json (seed 000, "Checkpoint Rolling Window"): from the newest
//! valid checkpoint (valid = it parses and at least one task validates; only the tasks that
//! validate are kept: partial recovery beats none), brought forward by the log entries written
//! after that checkpoint. Nothing is thrown away: tasks of the damaged file that still validate
//! are kept (they are newer than any checkpoint; a file that is not JSON is read up to its
//! damage and on past it, object by object), a task no newer source holds valid is taken from
//! the newest older checkpoint that does, tasks the log names but no source holds are rebuilt
//! from the log, and the damaged bytes are kept aside as `tasks.json.corrupt-<time>`.
//!
//! The report is true: a task is "lost" only when no checkpoint holds it valid, and "nothing
//! lost" is said only when the damaged file was read whole (else a task added since the
//! checkpoint that the log never named is gone without a name, and the report says so).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::files::{file_name, read_file, read_log, to_doc, Paths, TEMP_PREFIX};
use super::log::{self, Entry};
use super::model::{self, raw_id as id_of, raw_tasks as tasks_of, Status, Task, TaskList};
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{find_bytes, typed, write_back};
use crate::layouts::shared::Shared;
use crate::layouts::unused_path;
use crate::store::{clock::parse_time, fs, parse_json, schema};

/// A master list restored in memory, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub doc: Value,
    /// Why tasks.json was unusable.
    pub why: String,
    /// The damaged bytes, kept aside when written.
    pub damaged: Option<Vec<u8>>,
    /// The checkpoint restored from (`checkpoint-001.json`).
    pub checkpoint: Option<String>,
    /// Newer checkpoints that were unusable.
    pub skipped: Vec<String>,
    /// Tasks taken from the checkpoint.
    pub from_checkpoint: usize,
    /// Log entries that changed a task taken from the checkpoint.
    pub replayed: usize,
    /// Tasks kept from the damaged file (they still validate there).
    pub from_damaged: usize,
    /// Tasks no newer source holds valid, taken from an older checkpoint: (id, checkpoint).
    pub from_older: Vec<(String, String)>,
    /// Tasks rebuilt from the log alone.
    pub from_log: Vec<String>,
    /// Tasks lost (they validated nowhere).
    pub lost: Vec<String>,
    /// tasks.json could not be read whole (missing, or not JSON): a task only it held, that no
    /// checkpoint or log entry names, is lost without a name.
    pub unread: bool,
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

impl Restored {
    /// What was restored and what was lost, in one line (`aside`: where the bad bytes went).
    pub fn describe(&self, aside: Option<&str>) -> String {
        let mut s = format!("tasks.json was unusable ({})", self.why);
        match aside {
            Some(a) => s.push_str(&format!("; kept its bytes in {a}")),
            None if self.damaged.is_some() => {
                s.push_str("; its bytes will be kept aside as tasks.json.corrupt-<time>")
            }
            None => {}
        }
        if self.from_damaged > 0 {
            s.push_str(&format!(
                "; kept the {} task(s) of the damaged file that still validate",
                self.from_damaged
            ));
        }
        match &self.checkpoint {
            Some(_) if self.from_checkpoint == 0 => {}
            Some(cp) => {
                s.push_str(&format!(
                    "; restored {} task(s) from checkpoints/{cp}",
                    self.from_checkpoint
                ));
                if !self.skipped.is_empty() {
                    s.push_str(&format!(" ({} unusable)", self.skipped.join(", ")));
                }
                s.push_str(&format!(
                    ", brought forward by {} log {} written after it",
                    self.replayed,
                    plural(self.replayed, "entry", "entries")
                ));
            }
            None => s.push_str("; no usable checkpoint"),
        }
        let mut older: Vec<(&str, Vec<&str>)> = Vec::new();
        for (id, cp) in &self.from_older {
            match older.iter_mut().find(|(c, _)| c == cp) {
                Some((_, ids)) => ids.push(id),
                None => older.push((cp, vec![id])),
            }
        }
        for (cp, ids) in older {
            s.push_str(&format!(
                "; recovered {} from checkpoints/{cp}, the newest valid copy",
                ids.join(", ")
            ));
        }
        if !self.from_log.is_empty() {
            s.push_str(&format!(
                "; rebuilt from progress/log.md only (title and estimate lost): {}",
                self.from_log.join(", ")
            ));
        }
        if !self.lost.is_empty() {
            s.push_str(&format!(
                "; lost (no valid copy anywhere): {}",
                self.lost.join(", ")
            ));
        }
        if self.unread {
            let read = if self.damaged.is_some() {
                "could not be read whole"
            } else {
                "was missing"
            };
            let sources = match &self.checkpoint {
                Some(cp) => format!("neither checkpoints/{cp} nor progress/log.md names (one added since that checkpoint)"),
                None => "progress/log.md does not name".to_string(),
            };
            s.push_str(&format!(
                "; tasks.json {read}, so a task it held that {sources} is lost and cannot be named"
            ));
        } else if self.lost.is_empty() {
            s.push_str("; nothing lost");
        }
        s
    }
}

/// Whether one task validates on its own.
fn task_valid(t: &Value) -> bool {
    matches!(
        schema::check(SCHEMA_TASKS, &json!({"tasks": [t]})),
        Ok(Ok(()))
    )
}

/// A checkpoint's list, when it parses.
fn load_checkpoint(cx: &Ctx, path: &Path) -> Option<Value> {
    read_file(cx, path)
        .ok()
        .flatten()
        .and_then(|b| parse_json(&b).ok())
        .filter(|d| tasks_of(d).is_some())
}

/// The valid copy of each task of a list: every id with its first task that validates, in one
/// pass.
fn valid_copies(doc: &Value) -> HashMap<&str, &Value> {
    let mut out = HashMap::new();
    for t in tasks_of(doc).into_iter().flatten() {
        if let Some(id) = id_of(t) {
            if !out.contains_key(id) && task_valid(t) {
                out.insert(id, t);
            }
        }
    }
    out
}

/// Where a restored task came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The damaged file (it still validates there).
    Damaged,
    /// The checkpoint restored from.
    Checkpoint,
    /// An older checkpoint (index into the older ones, newest first).
    Older(usize),
    /// The log alone.
    Log,
}

/// A task restored: as its source holds it (its key order and unknown fields), typed (what the
/// log brings forward), and where it came from.
#[derive(Debug)]
struct Kept {
    raw: Value,
    task: Task,
    source: Source,
}

/// A task that validates, kept from `source`.
fn kept(t: &Value, source: Source) -> Option<Kept> {
    Some(Kept {
        raw: t.clone(),
        task: typed::<Task>(t).ok()?,
        source,
    })
}

/// A place in the restored list: a task, or a task wanted that no source gave yet.
#[derive(Debug)]
struct Slot {
    id: String,
    task: Option<Kept>,
}

/// Most attempts [`salvage`] makes to read on past damage.
const SALVAGE_ATTEMPTS: usize = 10_000;

/// What can be read from a tasks.json that is not JSON: the whole objects with a string `id`
/// in its `tasks` array, in order (reading on past a damaged one), and every id that a
/// `"id": "…"` in it names.
fn salvage(bytes: &[u8]) -> (Vec<Value>, Vec<String>) {
    let mut tasks = Vec::new();
    if let Some(key) = find_bytes(bytes, b"\"tasks\"") {
        let mut i = bytes[key..]
            .iter()
            .position(|b| *b == b'[')
            .map_or(bytes.len(), |k| key + k + 1);
        let mut attempts = 0;
        while attempts < SALVAGE_ATTEMPTS {
            let Some(k) = bytes
                .get(i..)
                .and_then(|r| r.iter().position(|b| *b == b'{'))
            else {
                break;
            };
            let at = i + k;
            let mut values =
                serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<Value>();
            match values.next() {
                Some(Ok(v)) if id_of(&v).is_some() => {
                    tasks.push(v);
                    i = at + values.byte_offset();
                }
                _ => {
                    attempts += 1;
                    i = at + 1;
                }
            }
        }
    }
    let mut ids: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut from = 0;
    while let Some(k) = find_bytes(&bytes[from..], b"\"id\"") {
        let at = from + k;
        from = at + 4;
        if at > 0 && bytes[at - 1] == b'\\' {
            continue;
        }
        let rest = &bytes[from..];
        let colon = rest.iter().position(|b| !b.is_ascii_whitespace());
        let Some(c) = colon.filter(|c| rest[*c] == b':') else {
            continue;
        };
        let after = &rest[c + 1..];
        let Some(q) = after.iter().position(|b| !b.is_ascii_whitespace()) else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_slice(&after[q..]).into_iter::<String>();
        if let Some(Ok(id)) = values.next() {
            if !id.is_empty() && seen.insert(id.clone()) {
                ids.push(id);
            }
        }
    }
    (tasks, ids)
}

/// Restores the list in memory; `None` when there is nothing to restore from (no valid
/// checkpoint, and no task of the damaged file validates).
pub fn restore(cx: &Ctx, p: &Paths, damaged: Option<&[u8]>, why: &str) -> Result<Option<Restored>> {
    // The checkpoints, newest first: the first with a valid task is restored from.
    let mut ring: Vec<(String, PathBuf)> = p
        .ring()
        .list(&cx.store)?
        .into_iter()
        .map(|cp| (file_name(&cp.path), cp.path))
        .collect();
    ring.reverse();
    let mut skipped = Vec::new();
    let mut chosen: Option<(String, PathBuf, Value)> = None;
    let mut older: &[(String, PathBuf)] = &[];
    for (n, (name, path)) in ring.iter().enumerate() {
        let doc = load_checkpoint(cx, path);
        if let Some(doc) = doc.filter(|d| tasks_of(d).is_some_and(|l| l.iter().any(task_valid))) {
            chosen = Some((name.clone(), path.clone(), doc));
            older = &ring[n + 1..];
            break;
        }
        skipped.push(name.clone());
    }
    let parsed = damaged
        .and_then(|b| parse_json(b).ok())
        .filter(|d| tasks_of(d).is_some());
    let unread = parsed.is_none();
    let (dam_tasks, named) = match (&parsed, damaged) {
        (Some(d), _) => (tasks_of(d).cloned().unwrap_or_default(), Vec::new()),
        (None, Some(b)) => salvage(b),
        (None, None) => (Vec::new(), Vec::new()),
    };
    let cp_doc = chosen.as_ref().map(|c| &c.2);
    let cp_copies = cp_doc.map(valid_copies).unwrap_or_default();
    let cp_valid = |id: &str| cp_copies.get(id).and_then(|t| kept(t, Source::Checkpoint));
    let mut slots: Vec<Slot> = Vec::new();
    // Id → its slot.
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut lost: Vec<String> = Vec::new();
    // The damaged file's tasks, in order; one that no longer validates from the checkpoint.
    for (n, t) in dam_tasks.iter().enumerate() {
        let id = id_of(t).unwrap_or("").to_string();
        if id.is_empty() {
            lost.push(format!("task #{}", n + 1));
            continue;
        }
        if at.contains_key(&id) {
            continue;
        }
        let task = if task_valid(t) {
            kept(t, Source::Damaged)
        } else {
            cp_valid(&id)
        };
        at.insert(id.clone(), slots.len());
        slots.push(Slot { id, task });
    }
    if chosen.is_none() && !slots.iter().any(|s| s.task.is_some()) {
        return Ok(None);
    }
    // Then the checkpoint's other tasks, and what it holds in a shape that does not validate.
    for t in cp_doc.and_then(tasks_of).into_iter().flatten() {
        let id = id_of(t).unwrap_or("").to_string();
        if id.is_empty() || at.contains_key(&id) {
            continue;
        }
        let task = task_valid(t).then(|| kept(t, Source::Checkpoint)).flatten();
        at.insert(id.clone(), slots.len());
        slots.push(Slot { id, task });
    }
    // Ids the unreadable file names that no source gave yet.
    for id in named {
        if !at.contains_key(&id) {
            at.insert(id.clone(), slots.len());
            slots.push(Slot { id, task: None });
        }
    }
    // A task still missing: from the newest older checkpoint holding it valid.
    let mut from_older = Vec::new();
    for (k, (name, path)) in older.iter().enumerate() {
        if slots.iter().all(|s| s.task.is_some()) {
            break;
        }
        let Some(doc) = load_checkpoint(cx, path) else {
            continue;
        };
        let copies = valid_copies(&doc);
        for s in slots.iter_mut().filter(|s| s.task.is_none()) {
            if let Some(t) = copies.get(s.id.as_str()) {
                s.task = kept(t, Source::Older(k));
                if s.task.is_some() {
                    from_older.push((s.id.clone(), name.clone()));
                }
            }
        }
    }
    // Bring forward by the log entries written after the checkpoint each task came from;
    // rebuild from the log a task it names after the checkpoint that no source holds.
    let entries = log::parse(&read_log(cx, p)?);
    let after_cp = match &chosen {
        Some((name, path, _)) => entries_after(&entries, name, path),
        None => &entries[..],
    };
    let mut replayed = 0;
    let mut from_log = Vec::new();
    for e in after_cp {
        let Some(id) = e.task.as_deref().filter(|i| !i.is_empty()) else {
            continue;
        };
        let slot = at.get(id).map(|&i| &mut slots[i]);
        match slot.map(|s| &mut s.task) {
            Some(Some(Kept {
                task,
                source: Source::Checkpoint | Source::Log,
                ..
            })) => {
                if replay(task, e) {
                    replayed += 1;
                }
            }
            Some(Some(_)) => {}
            missing => {
                let Some(to) = e.to.as_deref().and_then(Status::parse) else {
                    continue;
                };
                let title = "(rebuilt from progress/log.md)";
                let mut task = Task::new(id, to);
                task.title = Some(title.to_string());
                replay(&mut task, e);
                if !task_valid(&to_doc(&task)) {
                    continue;
                }
                let raw = json!({"id": id, "title": title, "status": to});
                let k = Kept {
                    raw,
                    task,
                    source: Source::Log,
                };
                from_log.push(id.to_string());
                match missing {
                    Some(place) => *place = Some(k),
                    None => {
                        at.insert(id.to_string(), slots.len());
                        slots.push(Slot {
                            id: id.to_string(),
                            task: Some(k),
                        })
                    }
                }
            }
        }
    }
    for (k, (name, path)) in older.iter().enumerate() {
        let from_k = |s: &Slot| matches!(&s.task, Some(t) if t.source == Source::Older(k));
        if !slots.iter().any(from_k) {
            continue;
        }
        for e in entries_after(&entries, name, path) {
            let Some(id) = e.task.as_deref() else {
                continue;
            };
            if let Some(s) = at.get(id).map(|&i| &mut slots[i]) {
                if from_k(s) {
                    if let Some(t) = &mut s.task {
                        if replay(&mut t.task, e) {
                            replayed += 1;
                        }
                    }
                }
            }
        }
    }
    let count = |src: Source| {
        slots
            .iter()
            .filter(|s| matches!(&s.task, Some(t) if t.source == src))
            .count()
    };
    let (from_checkpoint, from_damaged) = (count(Source::Checkpoint), count(Source::Damaged));
    let (mut raws, mut tasks) = (Vec::new(), Vec::new());
    for s in slots {
        match s.task {
            Some(k) => {
                raws.push(k.raw);
                tasks.push(k.task);
            }
            None => lost.push(s.id),
        }
    }
    let mut root: Map<String, Value> = chosen
        .as_ref()
        .and_then(|c| c.2.as_object().cloned())
        .or_else(|| parsed.as_ref().and_then(|d| d.as_object().cloned()))
        .unwrap_or_default();
    root.insert("tasks".into(), Value::Array(raws));
    let rest: Map<String, Value> = root
        .iter()
        .filter(|(k, _)| *k != "tasks")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let tasks = tasks.into_iter().map(Shared::new).collect();
    let mut list = TaskList {
        tasks,
        rest: rest.into(),
    };
    link_children(&mut list);
    let mut doc = Value::Object(root);
    write_back(&mut doc, &list).map_err(Error::BadInput)?;
    Ok(Some(Restored {
        doc,
        why: why.to_string(),
        damaged: damaged.map(<[u8]>::to_vec),
        skipped: if chosen.is_some() {
            skipped
        } else {
            Vec::new()
        },
        checkpoint: chosen.map(|c| c.0),
        from_checkpoint,
        replayed,
        from_damaged,
        from_older,
        from_log,
        lost,
        unread,
    }))
}

/// The entries after the checkpoint was written: after its CHECKPOINT_WRITTEN entry, else those
/// not older than the file (by whole seconds), else all.
fn entries_after<'a>(entries: &'a [Entry], name: &str, path: &Path) -> &'a [Entry] {
    let logged = entries.iter().rposition(|e| {
        e.event == log::CHECKPOINT_WRITTEN && e.checkpoint().is_some_and(|c| c.ends_with(name))
    });
    if let Some(i) = logged {
        return &entries[i + 1..];
    }
    let Some(mtime) = fs::modified(path) else {
        return entries;
    };
    let secs = mtime
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let first = entries
        .iter()
        .position(|e| parse_time(&e.at).is_some_and(|t| t.timestamp() >= secs))
        .unwrap_or(entries.len());
    &entries[first..]
}

/// A timestamp as the schema wants it.
fn stamp_of(at: &str) -> Option<String> {
    (at.ends_with('Z') && parse_time(at).is_some()).then(|| at.to_string())
}

/// Applies one log entry to a restored task; returns whether it changed anything.
fn replay(t: &mut Task, e: &Entry) -> bool {
    let before = t.clone();
    if let Some(platform) = e.event.strip_prefix("SYNC_TO_") {
        if let Some(ext) = e.external_id() {
            t.external_ids
                .get_or_insert_with(Box::default)
                .insert(platform.to_string(), json!(ext));
        }
    }
    if let Some(to) = e.to.as_deref().and_then(Status::parse) {
        let from = t.status;
        t.status = to;
        if from == Status::Blocked && to != Status::Blocked {
            t.blocked_reason = Some(None);
        }
    }
    match e.event.as_str() {
        log::TASK_STARTED => {
            if let Some(at) = stamp_of(&e.at) {
                t.started_at = Some(Some(at));
            }
        }
        log::TASK_COMPLETE => {
            if let Some(at) = stamp_of(&e.at) {
                t.completed_at = Some(Some(at));
            }
            if let Some(a) = e.actual_minutes().and_then(model::num) {
                t.actual_minutes = Some(Some(a));
            }
        }
        log::TASK_BLOCKED => {
            if let Some(r) = e.reason() {
                t.blocked_reason = Some(Some(r.to_string()));
            }
        }
        _ => {}
    }
    if let Some(n) = e.stale_count() {
        t.stale_count = Some(n.into());
    }
    *t != before
}

/// Every task whose `parent_id` names a parent that does not list it gets listed in that
/// parent's `subtasks` (children restored from a newer source than their parent); one pass.
fn link_children(list: &mut TaskList) {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(list.tasks.len());
    for (i, t) in list.tasks.iter().enumerate() {
        first.entry(t.id.as_str()).or_insert(i);
    }
    let pairs: Vec<(usize, String)> = list
        .tasks
        .iter()
        .filter_map(|t| {
            let parent = t.parent_id()?;
            let &i = first.get(parent)?;
            (parent != t.id).then(|| (i, t.id.clone()))
        })
        .collect();
    // (parent, child) pairs listed, each parent's own list read the first time it is met.
    let mut listed: HashSet<(usize, String)> = HashSet::new();
    let mut read: HashSet<usize> = HashSet::new();
    for (i, child) in pairs {
        let parent = &mut list.tasks[i];
        if read.insert(i) {
            listed.extend(parent.subtasks().map(|s| (i, s.to_string())));
        }
        if listed.insert((i, child.clone())) {
            parent.subtasks.get_or_insert_with(Vec::new).push(child);
        }
    }
}

/// Keeps the damaged bytes aside as `tasks.json.corrupt-<time>` (never deleted); returns what
/// was done and the ERROR entry that records it (appended with the restored list's write).
pub fn keep_aside(cx: &Ctx, p: &Paths, r: &Restored, now: &str) -> Result<(String, Entry)> {
    let aside = match &r.damaged {
        Some(bytes) => {
            let stamp = cx.store.clock().file_stamp();
            let name = |n: &str| format!("tasks.json.corrupt-{stamp}{n}");
            let path = unused_path(cx, |n| p.root.join(name(n)));
            cx.store.replace_via(&path, bytes, &p.temp, TEMP_PREFIX)?;
            Some(file_name(&path))
        }
        None => None,
    };
    let msg = r.describe(aside.as_deref());
    let entry = Entry::error(now, None, &msg);
    Ok((msg, entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvage_reads_on_past_damage_and_names_every_id() {
        let text = br#"{"tasks": [
          {"id": "A", "status": "PENDING"},
          {"id": "B", "status": PENDING},
          {"id": "C", "status": "COMPLETE", "external_ids": {"JIRA": "X-1"}},
          {"title": "says \"id\": \"no\"", "id": "D", "sta"#;
        let (tasks, ids) = salvage(text);
        let got: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert_eq!(got, ["A", "C"]);
        assert_eq!(ids, ["A", "B", "C", "D"]);
        assert_eq!(salvage(b"garbage"), (Vec::new(), Vec::new()));
        assert_eq!(salvage(b"{\"tasks\": [{{{{{").0, Vec::<Value>::new());
    }
}
