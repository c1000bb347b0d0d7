//! Restoring an unusable tasks.json (seed 000, "Checkpoint Rolling Window"): from the newest
//! valid checkpoint (valid = it parses and at least one task validates; only the tasks that
//! validate are kept: partial recovery beats none), brought forward by the log entries written
//! after that checkpoint. Nothing is thrown away: tasks of the damaged file that still validate
//! are kept (they are newer than any checkpoint), tasks the log names but no source holds are
//! rebuilt from the log, and the damaged bytes are kept aside as `tasks.json.corrupt-<time>`.

use serde_json::{json, Map, Value};

use super::files::{Paths, STATE_CAP, TEMP_PREFIX};
use super::log::{self, Entry};
use super::model::{self, STATUSES};
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::Result;
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
    /// Log entries that changed a restored task.
    pub replayed: usize,
    /// Tasks kept from the damaged file (they still validate there).
    pub from_damaged: usize,
    /// Tasks rebuilt from the log alone.
    pub from_log: Vec<String>,
    /// Tasks lost (they validated nowhere).
    pub lost: Vec<String>,
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
                    ", brought forward by {} log entr{} written after it",
                    self.replayed,
                    if self.replayed == 1 { "y" } else { "ies" }
                ));
            }
            None => s.push_str("; no usable checkpoint"),
        }
        if !self.from_log.is_empty() {
            s.push_str(&format!(
                "; rebuilt from progress/log.md only (title and estimate lost): {}",
                self.from_log.join(", ")
            ));
        }
        if self.lost.is_empty() {
            s.push_str("; nothing lost");
        } else {
            s.push_str(&format!(
                "; lost (no valid copy anywhere): {}",
                self.lost.join(", ")
            ));
        }
        s
    }
}

/// The checkpoint a restoration starts from.
struct Chosen {
    name: String,
    doc: Value,
    /// Its tasks that validate.
    good: Vec<Value>,
    /// The ids of those that do not.
    bad: Vec<String>,
    path: std::path::PathBuf,
}

/// Whether one task validates on its own.
fn task_valid(t: &Value) -> bool {
    matches!(
        schema::check(SCHEMA_TASKS, &json!({"tasks": [t]})),
        Ok(Ok(()))
    )
}

/// A document's tasks split into those that validate and the ids (or `#n`) of those that do not.
fn split_valid(doc: &Value) -> (Vec<Value>, Vec<String>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (n, t) in model::tasks(doc).iter().enumerate() {
        if task_valid(t) {
            good.push(t.clone());
        } else {
            bad.push(
                t["id"]
                    .as_str()
                    .map_or(format!("task #{}", n + 1), str::to_string),
            );
        }
    }
    (good, bad)
}

/// Restores the list in memory; `None` when there is nothing to restore from (no valid
/// checkpoint, and no task of the damaged file validates).
pub fn restore(cx: &Ctx, p: &Paths, damaged: Option<&[u8]>, why: &str) -> Result<Option<Restored>> {
    let ring = p.ring();
    let mut skipped = Vec::new();
    let mut chosen: Option<Chosen> = None;
    for cp in ring.list(&cx.store)?.into_iter().rev() {
        let name = super::files::file_name(&cp.path);
        let doc = super::files::read_file(cx, &cp.path, STATE_CAP)
            .ok()
            .flatten()
            .and_then(|b| parse_json(&b).ok())
            .filter(|d| d["tasks"].is_array());
        if let Some(doc) = doc {
            let (good, bad) = split_valid(&doc);
            if !good.is_empty() {
                chosen = Some(Chosen {
                    name,
                    doc,
                    good,
                    bad,
                    path: cp.path,
                });
                break;
            }
        }
        skipped.push(name);
    }
    let damaged_doc = damaged
        .and_then(|b| parse_json(b).ok())
        .filter(|d| d["tasks"].is_array());
    let (dam_good, _) = damaged_doc.as_ref().map(split_valid).unwrap_or_default();
    if chosen.is_none() && dam_good.is_empty() {
        return Ok(None);
    }
    let mut r = Restored {
        doc: Value::Null,
        why: why.to_string(),
        damaged: damaged.map(<[u8]>::to_vec),
        checkpoint: chosen.as_ref().map(|c| c.name.clone()),
        skipped: if chosen.is_some() {
            skipped
        } else {
            Vec::new()
        },
        from_checkpoint: 0,
        replayed: 0,
        from_damaged: 0,
        from_log: Vec::new(),
        lost: Vec::new(),
    };
    let cp_good: Vec<Value> = chosen.as_ref().map(|c| c.good.clone()).unwrap_or_default();
    let cp_has = |id: &str| cp_good.iter().find(|t| t["id"] == id).cloned();
    // (task, from the checkpoint?)
    let mut list: Vec<(Value, bool)> = Vec::new();
    let has = |list: &[(Value, bool)], id: &str| list.iter().any(|(t, _)| t["id"] == id);
    if let Some(d) = &damaged_doc {
        for (n, t) in model::tasks(d).iter().enumerate() {
            let id = t["id"].as_str().unwrap_or("").to_string();
            if !id.is_empty() && has(&list, &id) {
                continue;
            }
            if task_valid(t) {
                list.push((t.clone(), false));
            } else if let Some(c) = cp_has(&id) {
                list.push((c, true));
            } else {
                r.lost.push(if id.is_empty() {
                    format!("task #{}", n + 1)
                } else {
                    id
                });
            }
        }
    }
    for t in &cp_good {
        if !has(&list, model::id(t)) {
            list.push((t.clone(), true));
        }
    }
    r.from_checkpoint = list.iter().filter(|(_, c)| *c).count();
    r.from_damaged = list.len() - r.from_checkpoint;
    if let Some(c) = &chosen {
        for id in &c.bad {
            if !has(&list, id) && !r.lost.contains(id) {
                r.lost
                    .push(format!("{id} (did not validate in the checkpoint)"));
            }
        }
    }
    // Bring forward by the log entries written after the checkpoint.
    let text = super::files::read_log(cx, p)?;
    let entries = log::parse(&text);
    let after = match &chosen {
        Some(c) => entries_after(&entries, &c.name, &c.path),
        None => &entries[..],
    };
    for e in after {
        let Some(id) = e.task.as_deref().filter(|i| !i.is_empty()) else {
            continue;
        };
        match list.iter_mut().find(|(t, _)| t["id"] == id) {
            Some((t, true)) => {
                if replay(t, e) {
                    r.replayed += 1;
                }
            }
            Some(_) => {}
            None => {
                let Some(to) = e.to.as_deref().filter(|s| STATUSES.contains(s)) else {
                    continue;
                };
                let mut t =
                    json!({"id": id, "title": "(rebuilt from progress/log.md)", "status": to});
                replay(&mut t, e);
                if task_valid(&t) {
                    r.from_log.push(id.to_string());
                    list.push((t, true));
                }
            }
        }
    }
    let mut root: Map<String, Value> = chosen
        .as_ref()
        .and_then(|c| c.doc.as_object().cloned())
        .or_else(|| damaged_doc.as_ref().and_then(|d| d.as_object().cloned()))
        .unwrap_or_default();
    root.insert(
        "tasks".into(),
        Value::Array(list.into_iter().map(|(t, _)| t).collect()),
    );
    let mut doc = Value::Object(root);
    link_children(&mut doc);
    r.doc = doc;
    Ok(Some(r))
}

/// The entries after the checkpoint was written: after its CHECKPOINT_WRITTEN entry, else those
/// not older than the file (by whole seconds), else all.
fn entries_after<'a>(entries: &'a [Entry], name: &str, path: &std::path::Path) -> &'a [Entry] {
    let logged = entries.iter().rposition(|e| {
        e.event == log::CHECKPOINT_WRITTEN && e.get("Checkpoint").is_some_and(|c| c.ends_with(name))
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
fn stamp_of(at: &str) -> Option<Value> {
    (at.ends_with('Z') && parse_time(at).is_some()).then(|| json!(at))
}

/// Applies one log entry to a restored task; returns whether it changed anything.
fn replay(t: &mut Value, e: &Entry) -> bool {
    let before = t.clone();
    let Some(m) = t.as_object_mut() else {
        return false;
    };
    if let Some(platform) = e.event.strip_prefix("SYNC_TO_") {
        if let Some(ext) = e.get("External ID").or_else(|| e.get("Detail")) {
            crate::layouts::json::object_at(m, "external_ids")
                .insert(platform.to_string(), json!(ext));
        }
    }
    if let Some(to) = e.to.as_deref().filter(|s| STATUSES.contains(s)) {
        let from = m
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        m.insert("status".into(), json!(to));
        if from == model::BLOCKED && to != model::BLOCKED {
            m.insert("blocked_reason".into(), Value::Null);
        }
    }
    match e.event.as_str() {
        log::TASK_STARTED => {
            if let Some(at) = stamp_of(&e.at) {
                m.insert("started_at".into(), at);
            }
        }
        log::TASK_COMPLETE => {
            if let Some(at) = stamp_of(&e.at) {
                m.insert("completed_at".into(), at);
            }
            if let Some(a) = e.get("actual_minutes").and_then(log::number) {
                m.insert("actual_minutes".into(), model::num(a));
            }
        }
        log::TASK_BLOCKED => {
            if let Some(r) = e.get("Reason") {
                m.insert("blocked_reason".into(), json!(r));
            }
        }
        _ => {}
    }
    if let Some(n) = e.get("stale_count").and_then(|n| n.parse::<u64>().ok()) {
        m.insert("stale_count".into(), json!(n));
    }
    *t != before
}

/// Every task whose `parent_id` names a parent that does not list it gets listed in that
/// parent's `subtasks` (children restored from a newer source than their parent).
fn link_children(doc: &mut Value) {
    let pairs: Vec<(String, String)> = model::tasks(doc)
        .iter()
        .filter_map(|t| {
            let parent = t["parent_id"].as_str()?;
            Some((parent.to_string(), model::id(t).to_string()))
        })
        .collect();
    for (parent, child) in pairs {
        let Some(i) = model::index(doc, &parent) else {
            continue;
        };
        if parent == child || model::subtasks(&doc["tasks"][i]).contains(&child) {
            continue;
        }
        if let Some(m) = doc["tasks"][i].as_object_mut() {
            let subs = crate::layouts::json::array_at(m, "subtasks");
            subs.push(json!(child));
        }
    }
}

/// Keeps the damaged bytes aside as `tasks.json.corrupt-<time>` (never deleted); returns what
/// was done and the ERROR entry that records it (appended with the restored list's write).
pub fn keep_aside(cx: &Ctx, p: &Paths, r: &Restored, now: &str) -> Result<(String, Entry)> {
    let aside = match &r.damaged {
        Some(bytes) => {
            let stamp = cx.store.clock().file_stamp();
            let mut n = 1;
            let mut name = format!("tasks.json.corrupt-{stamp}");
            while cx.store.exists(&p.root.join(&name)) {
                n += 1;
                name = format!("tasks.json.corrupt-{stamp}-{n}");
            }
            cx.store
                .replace_via(&p.root.join(&name), bytes, &p.temp, TEMP_PREFIX)?;
            Some(name)
        }
        None => None,
    };
    let msg = r.describe(aside.as_deref());
    let entry = Entry::error(now, None, &msg);
    Ok((msg, entry))
}
