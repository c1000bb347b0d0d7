//! The projects layout's units for the agent's verbs and the board ([`crate::layouts::work`]):
//! every task of `tasks.json` with its phase, the ready ones first in the scheduler's order
//! (dependencies, then priority, then creation order); what `taskhook show` prints of a task;
//! and a release (`IN_PROGRESS` → `PENDING`, logged as `TASK_RELEASED`).

use std::collections::HashMap;

use serde_json::Value;

use super::files::{self, Paths};
use super::log::{self, Entry};
use super::model::{self, *};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::work::text_of;
use crate::layouts::{Phase, Reaction, Shown, StoreRef, WorkUnit};

/// Most log entries `show` prints of a task.
const HISTORY_LINES: usize = 8;

/// Every task, ready ones first in the scheduler's order, then the rest in creation order.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let t = files::load(cx, &Paths::of(&store.root))?;
    Ok(units(&t.doc))
}

/// [`work`] of a parsed list (pure).
pub fn units(doc: &Value) -> Vec<WorkUnit> {
    let index = model::Index::new(doc);
    let ready = index.ready();
    let rank: HashMap<&str, usize> = ready
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    // Each task's parent, in one pass (a parent lists it in `subtasks`; else its `parent_id`).
    let mut parents: HashMap<String, String> = HashMap::new();
    for t in model::tasks(doc) {
        for s in model::subtasks(t) {
            parents.entry(s).or_insert_with(|| model::id(t).to_string());
        }
    }
    let mut out: Vec<(usize, WorkUnit)> = Vec::with_capacity(model::tasks(doc).len());
    for (i, t) in model::tasks(doc).iter().enumerate() {
        let id = model::id(t);
        if id.is_empty() {
            continue;
        }
        let st = model::status(t);
        let subs = model::subtasks(t);
        let (phase, why) = match st {
            COMPLETE | CANCELLED => (Phase::Done, None),
            BLOCKED => (
                Phase::Person,
                Some(
                    t["blocked_reason"]
                        .as_str()
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
            IN_PROGRESS | IN_RESEARCH | VALIDATING => (Phase::InProgress, None),
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
                title: model::title(t),
                status: st.to_string(),
                phase,
                why,
                deps: model::deps(t),
                pass: None,
                since: since(t, st),
                group: None,
                parent: parents.get(id).cloned().or_else(|| {
                    t["parent_id"]
                        .as_str()
                        .filter(|p| !p.is_empty() && *p != id)
                        .map(str::to_string)
                }),
            },
        ));
    }
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, u)| u).collect()
}

/// When a task entered its status: finished, started, else created.
fn since(t: &Value, status: &str) -> Option<String> {
    let keys: &[&str] = match status {
        COMPLETE | CANCELLED => &["completed_at", "started_at", "created_at"],
        IN_PROGRESS | IN_RESEARCH | VALIDATING => &["started_at", "created_at"],
        _ => &["created_at"],
    };
    keys.iter().find_map(|k| t[*k].as_str()).map(str::to_string)
}

/// A task's description, acceptance criteria, files and research, and its recent log entries.
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let p = Paths::of(&store.root);
    let t = files::load(cx, &p)?;
    let mut s = Shown::default();
    let Some(task) = model::find(&t.doc, unit) else {
        return Ok(s);
    };
    for key in ["description", "acceptance_criteria", "notes"] {
        s.add(&key.replace('_', " "), text_of(&task[key]));
    }
    let mut facts = Vec::new();
    for key in [
        "priority",
        "estimate_minutes",
        "phase",
        "level",
        "started_at",
        "completed_at",
        "actual_minutes",
    ] {
        let v = &task[key];
        if !v.is_null() {
            facts.push(format!("{}: {}", key.replace('_', " "), text_of(v)));
        }
    }
    if let Some(parent) = model::parent_of(&t.doc, unit) {
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
        let t = files::load(cx, &p)?;
        let Some(i) = model::index(&t.doc, unit) else {
            return Ok((Reaction::refused(format!("there is no task {unit}")), false));
        };
        let from = model::status(&model::tasks(&t.doc)[i]).to_string();
        if !model::is_transitional(&from) {
            return Ok((
                Reaction::refused(format!(
                    "{unit} is {from}, not in progress; nothing to release"
                )),
                false,
            ));
        }
        if pass.writes() {
            let mut t = t;
            if let Some(m) = t.doc["tasks"][i].as_object_mut() {
                m.insert("status".into(), Value::from(PENDING));
                m.shift_remove("started_at");
            }
            let entry = Entry::task(&now, log::TASK_RELEASED, unit, &from, PENDING)
                .detail("Detail", "given back by its owner; nothing counted");
            let change = files::Change {
                entries: vec![entry],
                tasks_changed: true,
                task: Some((unit.to_string(), from.clone(), PENDING.to_string())),
                ..Default::default()
            };
            files::commit(cx, &p, &t, &change)?;
        }
        Ok((
            Reaction {
                status: Some(PENDING.into()),
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
        let t = files::load(cx, &p)?;
        let st = model::status_of(&t.doc, unit).to_string();
        let entry = Entry::task(&now, log::CLAIM_NOTE, unit, &st, &st).detail("Detail", text);
        files::append(cx, &p, &[entry])
    })
}
