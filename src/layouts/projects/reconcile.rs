//! SessionStart for one project (CONTRACT §6.1), and `taskhook recover` ([`recover`]). The
//! session start is decided on an unlocked read and written only when something is to be fixed:
//!
//! 0. a change a kill interrupted is settled ([`super::pending`]), and an unusable tasks.json
//!    is restored ([`super::restore`]): the steps below need a task list to work on; then a
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

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::UNIX_EPOCH;

use chrono::{DateTime, Utc};

use super::files::{self, Change, Paths, TEMP_PREFIX};
use super::lifecycle::fmt_num;
use super::log::{self, Entry};
use super::model::{self, Status, Task, TaskList, STALE_TWICE};
use super::pending;
use super::save;
use super::summary;
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::{Error, Result};
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

/// The tasks stale detection (step 1) looks at: leaf IN_PROGRESS tasks running longer than
/// 4 × their estimate, as (position, minutes running, estimate).
fn overdue(list: &TaskList, now: DateTime<Utc>) -> Vec<(usize, i64, f64)> {
    list.tasks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.overdue(now).map(|(m, e)| (i, m, e)))
        .collect()
}

/// What one pass over the log, read as a stream with no other entry kept, tells the session
/// start: the last logged transition of each id tasks.json does not give as COMPLETE (only
/// those can be due, step 0), and which of the `overdue` tasks have a TASK_COMPLETE logged
/// since they started (step 1).
fn read_log(
    cx: &Ctx,
    p: &Paths,
    list: &TaskList,
    overdue: &[(usize, i64, f64)],
) -> Result<LogRead> {
    let open: HashSet<&str> = list
        .tasks
        .iter()
        .filter(|t| t.status != Status::Complete)
        .map(|t| t.id.as_str())
        .collect();
    // By id, the overdue tasks' places and when each started.
    let mut by_id: HashMap<&str, Vec<(usize, DateTime<Utc>)>> = HashMap::new();
    for (k, &(i, _, _)) in overdue.iter().enumerate() {
        let t = &list.tasks[i];
        if let Some(since) = t.started_at().and_then(parse_time) {
            by_id.entry(t.id.as_str()).or_default().push((k, since));
        }
    }
    let mut last = HashMap::new();
    let mut completed = vec![false; overdue.len()];
    // Read even when nothing can be due: a log that cannot be read is said at every session
    // start, as before.
    let digest = files::scan_log_known(cx, p, |raw| {
        let (Some(task), from, to) = raw.transition() else {
            return;
        };
        if let Some(to) = to {
            if open.contains(task) && Status::parse(to).is_some() && from != Some(to) {
                last.insert(task.to_string(), raw.entry());
            }
        }
        if raw.event != log::TASK_COMPLETE {
            return;
        }
        let Some(started) = by_id.get(task) else {
            return;
        };
        let Some(at) = parse_time(raw.at) else {
            return;
        };
        for &(k, since) in started {
            completed[k] |= at >= since;
        }
    })?;
    Ok(LogRead {
        last,
        completed,
        digest,
    })
}

/// What [`read_log`] found, and the log it read, known by its digest.
struct LogRead {
    last: HashMap<String, Entry>,
    completed: Vec<bool>,
    digest: Option<crate::store::parsed::Digest>,
}

/// A peek's reading of the log, for its session start's locked pass to take over: the list
/// and overdue tasks it was read for, and what it found.
struct Peeked {
    list: Rc<TaskList>,
    overdue: Vec<(usize, i64, f64)>,
    read: LogRead,
}

/// Step 1: stale detection of the `overdue` tasks still IN_PROGRESS ([`overdue`], taken before
/// step 0, which only completes tasks), `completed` the ones with a TASK_COMPLETE logged since
/// they started ([`read_log`]); returns the tasks reset or blocked, as summary items.
fn stale(
    list: &mut Rc<TaskList>,
    overdue: &[(usize, i64, f64)],
    completed: &[bool],
    now: DateTime<Utc>,
    entries: &mut Vec<Entry>,
) -> Vec<Item> {
    let candidates: Vec<((usize, i64, f64), bool)> = overdue
        .iter()
        .copied()
        .zip(completed.iter().copied())
        .filter(|((i, _, _), _)| list.tasks[*i].status == Status::InProgress)
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let list = Rc::make_mut(list);
    let stamp = crate::store::clock::stamp(now);
    let (pending, blocked) = (Status::Pending.as_str(), Status::Blocked.as_str());
    let in_progress = Status::InProgress.as_str();
    let mut items = Vec::new();
    for ((i, minutes, estimate), done) in candidates {
        if done {
            continue;
        }
        let t = &mut list.tasks[i];
        let id = t.id.clone();
        let started = t.started_at().unwrap_or("").to_string();
        let count = t.stale_count.as_ref().and_then(|n| n.as_u64()).unwrap_or(0) + 1;
        let how = format!(
            "IN_PROGRESS for {minutes} min since {started}, over 4 × its {} min estimate, with no TASK_COMPLETE logged",
            fmt_num(estimate)
        );
        t.stale_count = Some(count.into());
        let detail = if count >= 2 {
            t.status = Status::Blocked;
            t.blocked_reason = Some(Some(STALE_TWICE.to_string()));
            entries.push(
                Entry::task(&stamp, log::TASK_BLOCKED, &id, in_progress, blocked)
                    .detail(log::label::REASON, STALE_TWICE)
                    .detail("Detail", format!("stale a second time: {how}"))
                    .detail(log::label::STALE_COUNT, count.to_string()),
            );
            format!("stale twice, now BLOCKED: {STALE_TWICE}")
        } else {
            t.status = Status::Pending;
            entries.push(
                Entry::error(
                    &stamp,
                    Some((&id, in_progress, pending)),
                    &format!(
                        "stale task reset: {how}; reset to PENDING (estimate and research kept)"
                    ),
                )
                .detail(log::label::STALE_COUNT, count.to_string()),
            );
            format!(
                "reset to PENDING: IN_PROGRESS {minutes} min, over 4 × {} min estimate",
                fmt_num(estimate)
            )
        };
        items.push(Item {
            title: t.title(),
            ..Item::with(id, detail)
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
    list: &mut Rc<TaskList>,
    last: &HashMap<String, Entry>,
    now: &str,
    entries: &mut Vec<Entry>,
    changes: &mut Vec<String>,
) -> Finished {
    let due: Vec<(usize, Status, Entry)> = list
        .tasks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let e = last.get(t.id.as_str())?;
            let st = t.status;
            let from_here = match e.from.as_deref().and_then(Status::parse) {
                Some(f) => f == st,
                None => st.is_transitional(),
            };
            (e.event == log::TASK_COMPLETE && st != Status::Complete && from_here)
                .then(|| (i, st, e.clone()))
        })
        .collect();
    let mut out = Finished::default();
    if due.is_empty() {
        return out;
    }
    let list = Rc::make_mut(list);
    // Each phase once, in one pass (a scan of the list per phase would be quadratic).
    let open_phases: Vec<String> = list
        .phases_complete()
        .into_iter()
        .filter(|(_, complete)| !complete)
        .map(|(ph, _)| ph.to_string())
        .collect();
    let complete = Status::Complete.as_str();
    for (i, from, e) in due {
        let t = &mut list.tasks[i];
        let id = t.id.clone();
        t.status = Status::Complete;
        t.completed_at = Some(Some(stamp_of(&e.at).unwrap_or(now).to_string()));
        if let Some(a) = e.actual_minutes().and_then(model::num) {
            t.actual_minutes = Some(Some(a));
        }
        if from == Status::Blocked {
            t.blocked_reason = Some(None);
        }
        let why = format!(
            "TASK_COMPLETE of {id} was logged at {} but tasks.json still had it {from} (a write was interrupted between the two)",
            e.at
        );
        entries.push(Entry::error(
            now,
            Some((&id, from.as_str(), complete)),
            &format!("reconciled at session start: {why}; completed from the log"),
        ));
        changes.push(format!("{why}: now COMPLETE, from the log"));
        out.tasks += 1;
    }
    let complete_now: HashSet<&str> = list
        .phases_complete()
        .into_iter()
        .filter_map(|(ph, complete)| complete.then_some(ph))
        .collect();
    // Each open phase is named once, in order.
    out.phases = open_phases
        .into_iter()
        .filter(|ph| complete_now.contains(ph.as_str()))
        .collect();
    out
}

/// A log time as the schema wants a timestamp (`…Z`), when it is one.
fn stamp_of(at: &str) -> Option<&str> {
    (at.ends_with('Z') && parse_time(at).is_some()).then_some(at)
}

/// Whether `research/{id}.md` exists and was written after the task's `created_at` (any
/// research file counts when the task records no `created_at`).
pub fn fresh_research(p: &Paths, t: &Task) -> bool {
    let Some(path) = p.research_file(&t.id) else {
        return false;
    };
    let Some(mtime) = fs::modified(&path) else {
        return false;
    };
    match t.created_at.as_deref().and_then(parse_time) {
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
    list: &mut Rc<TaskList>,
    now: &str,
    entries: &mut Vec<Entry>,
    changes: &mut Vec<String>,
) {
    let (pending, researched) = (Status::Pending, Status::Researched);
    let transitional = |t: &Task| !t.is_parent() && t.status.is_transitional();
    if !list.tasks.iter().any(|t| transitional(t)) {
        return;
    }
    for t in &mut Rc::make_mut(list).tasks {
        if !transitional(t) {
            continue;
        }
        let (id, from) = (t.id.clone(), t.status);
        let why = format!("{id} was {from} when the last session ended");
        if fresh_research(p, t) {
            t.status = researched;
            entries.push(
                Entry::task(now, log::TASK_RESEARCHED, &id, from.as_str(), researched.as_str()).detail(
                    "Detail",
                    format!("reconciled at session start: {why}; research/{id}.md is newer than its created_at"),
                ),
            );
            changes.push(format!(
                "{why}: now RESEARCHED (research/{id}.md is newer than its created_at)"
            ));
        } else {
            t.status = pending;
            entries.push(Entry::error(
                now,
                Some((&id, from.as_str(), pending.as_str())),
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
    let mut peeked: Option<Peeked> = None;
    let (doc, changes, stale_items) = cx.store.transact(&p.lock(), |pass| {
        let temps = stale_temps(cx, &p, pass.writes())?;
        let interrupted = pending::waiting(cx, &p);
        let no_velocity = !cx.store.exists(&p.velocity);
        let mut t = files::load(cx, &p)?;
        let now = cx.store.clock().now();
        let stamp = crate::store::clock::stamp(now);
        let mut entries = Vec::new();
        let mut changes = Vec::new();
        if let Some(r) = &t.restored {
            changes.push(r.describe(None));
        }
        // One read of the log for steps 0 and 1, and one for both passes: the locked pass takes
        // over the peek's when the list is the one the peek read (the same bytes) and so are
        // the overdue tasks and the log.
        let overdue = overdue(&t.list, now);
        let read = match peeked.take() {
            Some(k)
                if Rc::ptr_eq(&k.list, &t.list)
                    && k.overdue == overdue
                    && files::log_holds(cx, &p, k.read.digest)? =>
            {
                k.read
            }
            _ => read_log(cx, &p, &t.list, &overdue)?,
        };
        let read_from = (!pass.writes()).then(|| t.list.clone());
        // The list shared with the invocation's reads is copied only by a step that changes it.
        let list = &mut t.list;
        let finished = finish_logged(list, &read.last, &stamp, &mut entries, &mut changes);
        let stale_items = stale(list, &overdue, &read.completed, now, &mut entries);
        if let Some(list) = read_from {
            peeked = Some(Peeked {
                list,
                overdue,
                read,
            });
        }
        if resets {
            reconcile_transitional(&p, list, &stamp, &mut entries, &mut changes);
        }
        if temps > 0 {
            changes.push(format!(
                "removed {temps} abandoned temp file(s) older than 5 minutes"
            ));
        }
        // Each step logs every change it makes to a task, and only those.
        let tasks_changed = !entries.is_empty();
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
            let change = Change {
                entries,
                tasks_changed,
                completions: finished.tasks,
                phases: finished.phases,
                ..Default::default()
            };
            let done = save::commit(cx, &p, &mut t, &change)?;
            if let (Some(r), Some(first)) = (done.restored, changes.first_mut()) {
                *first = r;
            }
            if let Some(s) = done.settled {
                changes.insert(0, s);
            }
            changes.extend(done.checkpoint);
            if no_velocity && !cx.store.exists(&p.velocity) {
                files::write_velocity(cx, &p, &t.list, &stamp)?;
            }
        }
        Ok(((t.list, changes, stale_items), dirty))
    })?;
    // Nothing later in a session start reads tasks.json again: its bytes, remembered for a
    // re-read that would compare them, are let go before the summary's indexes are built.
    files::forget_parsed();
    let mut summary = summary::summarize(cx, store, &doc)?;
    summary.stale = stale_items;
    Ok(Reconciled {
        changes,
        summary: Some(summary),
        tell_user: Vec::new(),
    })
}

/// `taskhook recover` of a project: tasks.json restored from the newest valid checkpoint and
/// the log ([`super::restore`]) and written, or why there is nothing to do or nothing to
/// restore from.
pub fn recover(cx: &Ctx, store: &StoreRef) -> Result<String> {
    let p = Paths::of(&store.root);
    cx.store.with_lock(&p.lock(), || {
        let mut t = files::try_load(cx, &p)?.map_err(|why| {
            Error::Rule(format!(
                "cannot recover `{}`: it is unusable ({why}), and no checkpoint holds a valid task to restore it from: fix it by hand (`taskhook validate` names the problems, `taskhook schema {SCHEMA_TASKS}` shows the format) or restore it from version control; its bytes are left as they are",
                p.tasks.display()
            ))
        })?;
        if t.restored.is_none() && !cx.store.exists(&p.tasks) {
            return Err(Error::Rule(format!(
                "cannot recover `{}`: it is missing, and no checkpoint holds a list to restore it from: `taskhook projects add {} TASK --title …` starts a new one",
                p.tasks.display(),
                store.id
            )));
        }
        if t.restored.is_none() {
            return Ok(format!(
                "{} is valid ({} task(s)); nothing to recover. To roll back, copy a file of {} over it.",
                p.tasks.display(),
                t.list.tasks.len(),
                p.checkpoints.display()
            ));
        }
        let done = save::commit(cx, &p, &mut t, &files::Change::default())?;
        let msg = done.restored.unwrap_or_default();
        Ok(format!("{}: {msg}.", p.tasks.display()))
    })
}
