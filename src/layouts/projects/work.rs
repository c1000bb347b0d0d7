//! The projects layout's units for the agent's verbs and the board ([`crate::layouts::work`]):
//! every task of `tasks.json` with its phase, the ready ones first in the scheduler's order
//! (dependencies, then priority, then creation order); what `taskhook show` prints of a task;
//! and a release (`IN_PROGRESS` → `PENDING`, logged as `TASK_RELEASED`).

use std::collections::HashMap;

use serde_json::Value;

use super::files::{self, Paths};
use super::log::{self, Entry};
use super::model::{self, Status, Task, TaskList};
use super::save;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::work::text_of;
use crate::layouts::{Phase, Reaction, Shown, StoreRef, Unit, WorkUnit};

/// Most log entries `show` prints of a task.
const HISTORY_LINES: usize = 8;

/// Every task, ready ones first in the scheduler's order, then the rest in creation order.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let (list, _) = files::read(cx, &Paths::of(&store.root))?;
    Ok(units(&list))
}

/// [`work`] of a parsed list (pure).
pub fn units(list: &TaskList) -> Vec<WorkUnit> {
    let index = list.index();
    let ready = index.ready();
    let rank: HashMap<&str, usize> = ready
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    // Each task's parent, in one pass (a parent lists it in `subtasks`; else its `parent_id`).
    let mut parents: HashMap<&str, &str> = HashMap::new();
    for t in &list.tasks {
        for s in t.subtasks() {
            parents.entry(s).or_insert(t.id.as_str());
        }
    }
    let mut out: Vec<(usize, WorkUnit)> = Vec::with_capacity(list.tasks.len());
    for (i, t) in list.tasks.iter().enumerate() {
        let id = t.id.as_str();
        if id.is_empty() {
            continue;
        }
        let st = t.status;
        let subs: Vec<&str> = t.subtasks().collect();
        let (phase, why) = match st {
            Status::Complete | Status::Cancelled => (Phase::Done, None),
            Status::Blocked => (
                Phase::Person,
                Some(
                    t.blocked_reason()
                        .unwrap_or("blocked, no reason given")
                        .to_string(),
                ),
            ),
            _ if !subs.is_empty() => (
                Phase::Blocked,
                Some(format!(
                    "a parent: done when its subtasks are ({})",
                    subs.join(", ")
                )),
            ),
            Status::InProgress | Status::InResearch | Status::Validating => {
                (Phase::InProgress, None)
            }
            _ if rank.contains_key(id) => (Phase::Ready, None),
            _ => {
                let unmet: Vec<String> = index
                    .unmet_deps(id)
                    .into_iter()
                    .map(|(d, s)| format!("{d} {s}"))
                    .collect();
                (
                    Phase::Blocked,
                    Some(if unmet.is_empty() {
                        format!("{st}, not ready")
                    } else {
                        format!("waits for {}", unmet.join(", "))
                    }),
                )
            }
        };
        let order = rank.get(id).copied().unwrap_or(ready.len() + i);
        out.push((
            order,
            WorkUnit {
                id: id.to_string(),
                title: t.title(),
                status: st.to_string(),
                phase,
                why,
                deps: t.deps().map(str::to_string).collect(),
                pass: None,
                since: since(t),
                group: None,
                parent: parents
                    .get(id)
                    .copied()
                    .or_else(|| t.parent_id().filter(|p| !p.is_empty() && *p != id))
                    .map(str::to_string),
            },
        ));
    }
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, u)| u).collect()
}

/// When a task entered its status: finished, started, else created.
fn since(t: &Task) -> Option<String> {
    let created = t.created_at.as_deref();
    let at = match t.status {
        Status::Complete | Status::Cancelled => t.completed_at().or(t.started_at()).or(created),
        s if s.is_transitional() => t.started_at().or(created),
        _ => created,
    };
    at.map(str::to_string)
}

/// Every task of the store and whether it is still to be finished, for the engine.
pub fn active(cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
    let (list, _) = files::read(cx, &Paths::of(&store.root))?;
    Ok(list
        .tasks
        .iter()
        .filter(|t| !t.id.is_empty())
        .map(|t| Unit {
            active: !t.status.is_finished(),
            id: t.id.clone(),
        })
        .collect())
}

/// A task's description, acceptance criteria, files and research, and its recent log entries.
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let p = Paths::of(&store.root);
    let (list, _) = files::read(cx, &p)?;
    let mut s = Shown::default();
    let Some(task) = list.find(unit) else {
        return Ok(s);
    };
    let text = |v: Option<&Value>| v.map(text_of).unwrap_or_default();
    let description = task.description.as_ref().map(|d| d.to_value());
    s.add("description", text(description.as_ref()));
    // Fields the schema does not name, kept among the task's others.
    s.add(
        "acceptance criteria",
        text(task.rest.get("acceptance_criteria")),
    );
    s.add("notes", text(task.rest.get("notes")));
    let number = |n: &serde_json::Number| n.to_string();
    let mut facts: Vec<String> = [
        ("priority", task.priority.as_ref().map(|p| p.to_string())),
        (
            "estimate minutes",
            task.estimate_minutes.as_ref().map(number),
        ),
        ("phase", task.phase.as_deref().map(str::to_string)),
        ("level", task.level.as_deref().map(str::to_string)),
        ("started at", task.started_at().map(str::to_string)),
        ("completed at", task.completed_at().map(str::to_string)),
        (
            "actual minutes",
            task.actual_minutes.clone().flatten().as_ref().map(number),
        ),
    ]
    .into_iter()
    .filter_map(|(key, v)| Some(format!("{key}: {}", v?)))
    .collect();
    if let Some(parent) = list.parent_of(unit) {
        facts.push(format!("parent: {parent}"));
    }
    s.add("facts", facts.join("\n"));
    let research = p.research.join(format!("{unit}.md"));
    if cx.store.exists(&research) {
        s.add("research", research.display().to_string());
    }
    s.add(
        "files",
        format!("tasks: {}\nlog: {}", p.tasks.display(), p.log.display()),
    );
    let log_text = files::read_log(cx, &p)?;
    let mine: Vec<String> = log::parse(&log_text)
        .into_iter()
        .filter(|e| e.task.as_deref() == Some(unit))
        .map(|e| e.summary_line())
        .collect();
    let from = mine.len().saturating_sub(HISTORY_LINES);
    s.add("history", mine[from..].join("\n"));
    Ok(s)
}

/// Gives a task back: `IN_PROGRESS` (or another mid-work status) → `PENDING`, `started_at`
/// cleared, a `TASK_RELEASED` entry; nothing counted.
pub fn release(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    let now = cx.store.clock().stamp();
    cx.store.transact(&p.lock(), |pass| {
        let mut t = files::load(cx, &p)?;
        let Some(i) = t.list.position(unit) else {
            return Ok((Reaction::refused(format!("there is no task {unit}")), false));
        };
        let from = t.list.tasks[i].status;
        if !from.is_transitional() {
            return Ok((
                Reaction::refused(format!(
                    "{unit} is {from}, not in progress; nothing to release"
                )),
                false,
            ));
        }
        let pending = Status::Pending.as_str();
        if pass.writes() {
            let task = &mut t.list_mut().tasks[i];
            task.status = Status::Pending;
            task.started_at = None;
            let entry = Entry::task(&now, log::TASK_RELEASED, unit, from.as_str(), pending)
                .detail("Detail", "given back by its owner; nothing counted");
            let change = files::Change {
                entries: vec![entry],
                tasks_changed: true,
                task: Some((unit.to_string(), from.to_string(), pending.to_string())),
                ..Default::default()
            };
            save::commit(cx, &p, &mut t, &change)?;
        }
        Ok((
            Reaction {
                status: Some(pending.into()),
                ..Default::default()
            },
            true,
        ))
    })
}

/// A line about a task in `progress/log.md` (a takeover, a forced verb): an entry of the
/// task's current status, with the line as its detail.
pub fn note(cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
    let p = Paths::of(&store.root);
    let now = cx.store.clock().stamp();
    cx.store.with_lock(&p.lock(), || {
        let (list, _) = files::read(cx, &p)?;
        let st = model::name(list.status_of(unit));
        let entry = Entry::task(&now, log::CLAIM_NOTE, unit, st, st).detail("Detail", text);
        files::append(cx, &p, &[entry])
    })
}
