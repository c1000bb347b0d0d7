//! The cdd layout's units for the agent's verbs and the board ([`crate::layouts::work`]): the
//! entries of `order.json` in order, tasks by the folder holding their file and stops by
//! their last `stop_*` event. One task runs at a time, in order: the task `cdd next` names is
//! the one ready unit (none while another is in `in_progress/`); a stop not passed waits for a
//! person and holds back what follows it. A release moves `in_progress/` → `pending/` with a
//! `release` history line (the seed's shape, a new action).

use super::commands;
use super::log::{self, Line, StopState};
use super::model::{Next, Status, Workspace};
use super::order::Item;
use super::{Folder, Paths};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Phase, Reaction, Shown, StoreRef, WorkUnit};

/// Most history lines `show` prints of a task.
const HISTORY_LINES: usize = 8;

/// Every entry of the order: tasks and stops.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let paths = Paths::of_store(store);
    let ws = Workspace::load(cx, &paths)?;
    let Some(order) = &ws.order else {
        return Ok(Vec::new());
    };
    let next = ws.next().ok();
    let busy = order
        .tasks()
        .find(|t| ws.status_of(t) == Status::In(Folder::InProgress))
        .map(|t| t.name.clone());
    // When each task or stop last moved, by its latest history line.
    let mut moved: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    log::each(cx, &paths.history, |e, _| {
        if let (Some(name), Some(at)) = (e.task.as_deref().or(e.stop.as_deref()), e.at) {
            moved.insert(name.to_string(), crate::store::clock::stamp(at));
        }
    })?;
    let mut before: Option<String> = None;
    let mut waiting_stop: Option<String> = None;
    let mut out = Vec::with_capacity(order.items.len());
    for item in &order.items {
        let u = match item {
            Item::Stop(s) => {
                let state = ws.history.stop_state(&s.id);
                let (phase, why) = match state {
                    StopState::Passed => (Phase::Done, None),
                    _ if waiting_stop.is_none() => {
                        waiting_stop = Some(s.id.clone());
                        (
                            Phase::Person,
                            Some(format!(
                                "a stop{}: a person runs `taskhook cdd continue {}`",
                                s.message
                                    .as_deref()
                                    .map(|m| format!(" ({m})"))
                                    .unwrap_or_default(),
                                s.id
                            )),
                        )
                    }
                    _ => (
                        Phase::Blocked,
                        Some(format!(
                            "after stop {}",
                            waiting_stop.clone().unwrap_or_default()
                        )),
                    ),
                };
                WorkUnit {
                    id: s.id.clone(),
                    title: s.message.clone(),
                    status: format!("stop {}", state.as_str()),
                    phase,
                    why,
                    deps: before.iter().cloned().collect(),
                    since: moved.get(s.id.as_str()).cloned(),
                    ..Default::default()
                }
            }
            Item::Task(t) => {
                let status = ws.status_of(t);
                let is_next =
                    matches!(&next, Some(Next::Task(n, Folder::Pending)) if n.name == t.name);
                let (phase, why) = match &status {
                    Status::In(Folder::Completed) => (Phase::Done, None),
                    Status::In(Folder::Failed) => (
                        Phase::Person,
                        Some("failed past the escalation ladder".into()),
                    ),
                    Status::In(Folder::InProgress) => (Phase::InProgress, None),
                    Status::In(Folder::Pending) if is_next && busy.is_none() => (
                        Phase::Ready,
                        Some(format!(
                            "model {}, thinking {}",
                            t.model.as_deref().unwrap_or("(default)"),
                            t.thinking.as_deref().unwrap_or("none")
                        )),
                    ),
                    Status::In(Folder::Pending) => (
                        Phase::Blocked,
                        Some(match (&waiting_stop, &busy) {
                            (Some(s), _) => format!("after stop {s}"),
                            (None, Some(b)) => format!("one task at a time: {b} is in progress"),
                            _ => format!(
                                "in order after {}",
                                before
                                    .clone()
                                    .unwrap_or_else(|| "the tasks before it".into())
                            ),
                        }),
                    ),
                    other => (Phase::Person, Some(ws.unusable(&t.name, other).message)),
                };
                WorkUnit {
                    id: t.name.clone(),
                    title: t.group.as_ref().map(|g| format!("group {g}")),
                    status: status.name().to_string(),
                    phase,
                    why,
                    deps: before.iter().cloned().collect(),
                    since: moved.get(t.name.as_str()).cloned(),
                    ..Default::default()
                }
            }
        };
        before = Some(u.id.clone());
        out.push(u);
    }
    // The ready task first: `next` offers it.
    out.sort_by_key(|u| u.phase != Phase::Ready);
    Ok(out)
}

/// A task's file, its place in the order, its model and thinking, and its history lines.
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let paths = Paths::of_store(store);
    let ws = Workspace::load(cx, &paths)?;
    let mut s = Shown::default();
    if let Ok(t) = ws.task(unit) {
        if let Status::In(f) = ws.status(unit) {
            s.add("file", paths.file(f, unit).display().to_string());
        }
        s.add(
            "order",
            format!("entry {} of order.json; {}", t.index + 1, t.describe()),
        );
    }
    let mut lines: Vec<String> = Vec::new();
    log::each(cx, &paths.history, |e, line| {
        if e.task.as_deref() == Some(unit) {
            lines.push(log::raw(line).to_string());
        }
    })?;
    let from = lines.len().saturating_sub(HISTORY_LINES);
    s.add("history", lines[from..].join("\n"));
    Ok(s)
}

/// Gives a task back: `in_progress/` → `pending/` with a `release` history line; nothing
/// escalated or failed.
pub fn release(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let paths = Paths::of_store(store);
    let moved = commands::locked(cx, &paths, || {
        let ws = Workspace::load(cx, &paths)?;
        if ws.status(unit) != Status::In(Folder::InProgress) {
            return Ok(Err(format!(
                "{unit} is {}, not in in_progress/; nothing to release",
                ws.status(unit).name()
            )));
        }
        cx.store.rename(
            &paths.file(Folder::InProgress, unit),
            &paths.file(Folder::Pending, unit),
        )?;
        Line::new(cx, "release", unit)
            .with("from", Folder::InProgress.as_str())
            .with("to", Folder::Pending.as_str())
            .append(cx, &paths.history)?;
        Ok(Ok(()))
    })?;
    Ok(match moved {
        Ok(()) => Reaction::status("pending"),
        Err(why) => Reaction::refused(why),
    })
}

/// A line about a task's claim in `history.jsonl`: a `claim` action with the text as `note`.
pub fn note(cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
    let paths = Paths::of_store(store);
    commands::locked(cx, &paths, || {
        Line::new(cx, "claim", unit)
            .with("note", text)
            .append(cx, &paths.history)
    })?;
    Ok(())
}
