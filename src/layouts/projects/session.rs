//! SessionStart for one project (CONTRACT §6.1), decided on an unlocked read and written only
//! when something is to be fixed:
//!
//! 0. a change a kill interrupted is settled ([`super::pending`]), and an unusable tasks.json
//!    is restored ([`super::recovery`]): the steps below need a task list to work on; then a
//!    completion the log records that tasks.json lacks (a kill between the two writes of an
//!    older taskhook, or another writer's) is finished from the log: the task's latest logged
//!    transition is TASK_COMPLETE from the status tasks.json still holds;
//! 1. stale detection: a leaf IN_PROGRESS task running longer than 4 × `estimate_minutes` with
//!    no TASK_COMPLETE logged since it started goes back to PENDING (ERROR entry, estimate and
//!    research kept); the second time, BLOCKED "Stale twice — requires human review";
//! 2. on `startup`, `resume`, unknown sources and `taskhook reconcile` only (not `compact`,
//!    `clear`, `fork`, where the same work may still be running): IN_RESEARCH, IN_PROGRESS and
//!    VALIDATING leaf tasks become RESEARCHED when `research/{id}.md` is newer than their
//!    `created_at`, else PENDING; COMPLETE, BLOCKED and CANCELLED are never touched;
//! 3. `temp/.write-*` (and abandoned checkpoint temp files) older than 5 minutes are removed,
//!    and a missing `progress/velocity.json` is recomputed from the log.

use std::collections::HashMap;
use std::time::UNIX_EPOCH;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::files::{self, Change, Paths, TEMP_PREFIX};
use super::lifecycle::fmt_num;
use super::log::{self, Entry};
use super::model::{self, BLOCKED, COMPLETE, PENDING, RESEARCHED, STALE_TWICE, STATUSES};
use super::pending;
use super::summary;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::Start;
use crate::layouts::{Item, Reconciled, StoreRef};
use crate::store::{clock::parse_time, fs, STALE_TEMP_AGE};

/// The abandoned temp files of the store: `temp/.write-*` and checkpoint temp files.
fn stale_temps(cx: &Ctx, p: &Paths, remove: bool) -> Result<usize> {
    let mut n = 0;
    for (dir, prefix) in [(&p.temp, TEMP_PREFIX), (&p.checkpoints, ".checkpoint-")] {
        n += if remove {
            cx.store
                .clean_stale_temps(dir, prefix, STALE_TEMP_AGE)?
                .len()
        } else {
            cx.store.stale_temps(dir, prefix, STALE_TEMP_AGE)?.len()
        };
    }
    Ok(n)
}

fn set(doc: &mut Value, i: usize, key: &str, v: Value) {
    if let Some(m) = doc["tasks"][i].as_object_mut() {
        m.insert(key.to_string(), v);
    }
}

/// Step 1: stale detection; returns the tasks reset or blocked, as summary items.
fn stale(
    doc: &mut Value,
    logged: &[Entry],
    now: DateTime<Utc>,
    entries: &mut Vec<Entry>,
) -> Vec<Item> {
    let candidates: Vec<(usize, i64, f64)> = model::tasks(doc)
        .iter()
        .enumerate()
        .filter_map(|(i, t)| model::overdue(t, now).map(|(m, e)| (i, m, e)))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let stamp = crate::store::clock::stamp(now);
    let mut items = Vec::new();
    for (i, minutes, estimate) in candidates {
        let t = doc["tasks"][i].clone();
        let id = model::id(&t).to_string();
        let started = t["started_at"].as_str().unwrap_or("").to_string();
        let since = parse_time(&started);
        let completed_since = logged.iter().any(|e| {
            e.event == log::TASK_COMPLETE
                && e.task.as_deref() == Some(id.as_str())
                && parse_time(&e.at).zip(since).is_some_and(|(a, s)| a >= s)
        });
        if completed_since {
            continue;
        }
        let count = t["stale_count"].as_u64().unwrap_or(0) + 1;
        let how = format!(
            "IN_PROGRESS for {minutes} min since {started}, over 4 × its {} min estimate, with no TASK_COMPLETE logged",
            fmt_num(estimate)
        );
        set(doc, i, "stale_count", json!(count));
        let detail = if count >= 2 {
            set(doc, i, "status", json!(BLOCKED));
            set(doc, i, "blocked_reason", json!(STALE_TWICE));
            entries.push(
                Entry::task(&stamp, log::TASK_BLOCKED, &id, model::IN_PROGRESS, BLOCKED)
                    .detail("Reason", STALE_TWICE)
                    .detail("Detail", format!("stale a second time: {how}"))
                    .detail("stale_count", count.to_string()),
            );
            format!("stale twice, now BLOCKED: {STALE_TWICE}")
        } else {
            set(doc, i, "status", json!(PENDING));
            entries.push(
                Entry::error(
                    &stamp,
                    Some((&id, model::IN_PROGRESS, PENDING)),
                    &format!(
                        "stale task reset: {how}; reset to PENDING (estimate and research kept)"
                    ),
                )
                .detail("stale_count", count.to_string()),
            );
            format!(
                "reset to PENDING: IN_PROGRESS {minutes} min, over 4 × {} min estimate",
                fmt_num(estimate)
            )
        };
        items.push(Item {
            title: model::title(&t),
            detail: Some(detail),
            ..Item::id(id)
        });
    }
    items
}

/// What finishing completions from the log did.
#[derive(Debug, Default)]
struct Finished {
    /// Tasks completed.
    tasks: usize,
    /// Phases those completions completed.
    phases: Vec<String>,
}

/// Step 0: completions the log records that tasks.json lacks. A task whose latest logged
/// transition is TASK_COMPLETE from the very status tasks.json still gives it (a status
/// another entry, or a person, changed since is left alone) becomes COMPLETE with the entry's
/// time and `actual_minutes`; an ERROR entry says so (no second TASK_COMPLETE: velocity counts
/// the logged one).
fn finish_logged(
    doc: &mut Value,
    logged: &[Entry],
    now: &str,
    entries: &mut Vec<Entry>,
    changes: &mut Vec<String>,
) -> Finished {
    let mut last: HashMap<&str, &Entry> = HashMap::new();
    for e in logged {
        let (Some(task), Some(to)) = (e.task.as_deref(), e.to.as_deref()) else {
            continue;
        };
        if STATUSES.contains(&to) && e.from.as_deref() != Some(to) {
            last.insert(task, e);
        }
    }
    let due: Vec<(usize, String, String, Entry)> = model::tasks(doc)
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let id = model::id(t);
            let e = last.get(id)?;
            let st = model::status(t);
            let from_here = match e.from.as_deref().filter(|f| STATUSES.contains(f)) {
                Some(f) => f == st,
                None => model::is_transitional(st),
            };
            (e.event == log::TASK_COMPLETE && st != COMPLETE && from_here)
                .then(|| (i, id.to_string(), st.to_string(), (*e).clone()))
        })
        .collect();
    let mut out = Finished::default();
    if due.is_empty() {
        return out;
    }
    let open_phases: Vec<String> = model::tasks(doc)
        .iter()
        .filter_map(model::phase)
        .filter(|ph| !model::phase_complete(doc, ph))
        .map(str::to_string)
        .collect();
    for (i, id, from, e) in due {
        set(doc, i, "status", json!(COMPLETE));
        set(
            doc,
            i,
            "completed_at",
            json!(stamp_of(&e.at).unwrap_or(now)),
        );
        if let Some(a) = e.get("actual_minutes").and_then(log::number) {
            set(doc, i, "actual_minutes", model::num(a));
        }
        if from == BLOCKED {
            set(doc, i, "blocked_reason", Value::Null);
        }
        let why = format!(
            "TASK_COMPLETE of {id} was logged at {} but tasks.json still had it {from} (a write was interrupted between the two)",
            e.at
        );
        entries.push(Entry::error(
            now,
            Some((&id, &from, COMPLETE)),
            &format!("reconciled at session start: {why}; completed from the log"),
        ));
        changes.push(format!("{why}: now COMPLETE, from the log"));
        out.tasks += 1;
    }
    for ph in open_phases {
        if model::phase_complete(doc, &ph) && !out.phases.contains(&ph) {
            out.phases.push(ph);
        }
    }
    out
}

/// A log time as the schema wants a timestamp (`…Z`), when it is one.
fn stamp_of(at: &str) -> Option<&str> {
    (at.ends_with('Z') && parse_time(at).is_some()).then_some(at)
}

/// Whether `research/{id}.md` exists and was written after the task's `created_at` (any
/// research file counts when the task records no `created_at`).
pub fn fresh_research(p: &Paths, t: &Value) -> bool {
    let Some(path) = p.research_file(model::id(t)) else {
        return false;
    };
    let Some(mtime) = fs::modified(&path) else {
        return false;
    };
    match t["created_at"].as_str().and_then(parse_time) {
        None => true,
        Some(created) => mtime
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() > created.timestamp() as f64)
            .unwrap_or(false),
    }
}

/// Step 2: the seed's reconciliation of transitional leaf tasks.
fn reconcile_transitional(
    p: &Paths,
    doc: &mut Value,
    now: &str,
    entries: &mut Vec<Entry>,
    changes: &mut Vec<String>,
) {
    let found: Vec<(usize, String, String, bool)> = model::tasks(doc)
        .iter()
        .enumerate()
        .filter(|(_, t)| !model::is_parent(t) && model::is_transitional(model::status(t)))
        .map(|(i, t)| {
            (
                i,
                model::id(t).to_string(),
                model::status(t).to_string(),
                fresh_research(p, t),
            )
        })
        .collect();
    for (i, id, from, research) in found {
        let why = format!("{id} was {from} when the last session ended");
        if research {
            set(doc, i, "status", json!(RESEARCHED));
            entries.push(
                Entry::task(now, log::TASK_RESEARCHED, &id, &from, RESEARCHED).detail(
                    "Detail",
                    format!("reconciled at session start: {why}; research/{id}.md is newer than its created_at"),
                ),
            );
            changes.push(format!(
                "{why}: now RESEARCHED (research/{id}.md is newer than its created_at)"
            ));
        } else {
            set(doc, i, "status", json!(PENDING));
            entries.push(Entry::error(
                now,
                Some((&id, &from, PENDING)),
                &format!("reconciled at session start: {why} (interrupted); reset to PENDING, no research file newer than its created_at"),
            ));
            changes.push(format!(
                "{why}: reset to PENDING (no research file newer than its created_at)"
            ));
        }
    }
}

/// SessionStart's work for one project (`start`: `None` for `taskhook reconcile`).
pub fn reconcile(cx: &Ctx, store: &StoreRef, start: Option<Start>) -> Result<Reconciled> {
    let p = Paths::of(&store.root);
    let resets = start.is_none_or(|s| !s.continues_work());
    let (doc, changes, stale_items) = cx.store.transact(&p.lock(), |pass| {
        let temps = stale_temps(cx, &p, pass.writes())?;
        let interrupted = pending::waiting(cx, &p);
        let no_velocity = !cx.store.exists(&p.velocity);
        let mut t = files::load(cx, &p)?;
        let now = cx.store.clock().now();
        let stamp = crate::store::clock::stamp(now);
        let mut doc = t.doc.clone();
        let mut entries = Vec::new();
        let mut changes = Vec::new();
        if let Some(r) = &t.restored {
            changes.push(r.describe(None));
        }
        let logged = log::parse(&files::read_log(cx, &p)?);
        let finished = finish_logged(&mut doc, &logged, &stamp, &mut entries, &mut changes);
        let stale_items = stale(&mut doc, &logged, now, &mut entries);
        if resets {
            reconcile_transitional(&p, &mut doc, &stamp, &mut entries, &mut changes);
        }
        if temps > 0 {
            changes.push(format!(
                "removed {temps} abandoned temp file(s) older than 5 minutes"
            ));
        }
        let tasks_changed = doc != t.doc;
        if no_velocity {
            changes.push(
                "progress/velocity.json was missing: recomputed from progress/log.md".to_string(),
            );
        }
        let dirty = tasks_changed
            || t.restored.is_some()
            || temps > 0
            || interrupted
            || no_velocity
            || !entries.is_empty();
        if pass.writes() && dirty {
            t.doc = doc.clone();
            let change = Change {
                entries,
                tasks_changed,
                completions: finished.tasks,
                phases: finished.phases,
                ..Default::default()
            };
            let done = files::commit(cx, &p, &t, &change)?;
            if let (Some(r), Some(first)) = (done.restored, changes.first_mut()) {
                *first = r;
            }
            if let Some(s) = done.settled {
                changes.insert(0, s);
            }
            changes.extend(done.checkpoint);
            if no_velocity && !cx.store.exists(&p.velocity) {
                files::write_velocity(cx, &p, &t.doc, &stamp)?;
            }
        }
        Ok(((doc, changes, stale_items), dirty))
    })?;
    let mut summary = summary::summarize(cx, store, &doc)?;
    summary.stale = stale_items;
    Ok(Reconciled {
        changes,
        summary: Some(summary),
        tell_user: Vec::new(),
    })
}
