//! One action on one task as a transaction (decided on an unlocked read; only a change takes
//! the lock and is decided again on a fresh read), and the hook replies it makes: a launch
//! refused (`deny`), what the main agent learns (a task done, tasks now ready, a task blocked
//! or failed, a phase complete), what the user sees.

use super::files::{self, Change, Committed, Paths};
use super::lifecycle::{self, fmt_num, Action, Outcome};
use super::model::{self, Status, Task, TaskList};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Input, Reaction, StoreRef};
use crate::signals::SignalKind;

/// What one action did.
#[derive(Debug, Clone)]
pub struct Acted {
    pub outcome: Outcome,
    /// The task after the action.
    pub task: Option<Task>,
    /// The list after the action.
    pub list: TaskList,
    pub committed: Committed,
}

/// Applies `action` to task `id` of the store, under its lock when anything changes.
pub fn act(cx: &Ctx, store: &StoreRef, id: &str, action: Action<'_>) -> Result<Acted> {
    let p = Paths::of(&store.root);
    cx.store.transact(&p.lock(), |pass| {
        let mut t = files::load(cx, &p)?;
        let now = cx.store.clock().stamp();
        // A refused action changes nothing (the step's promise), so the list is its own.
        let out = lifecycle::apply(&mut t.list, &store.id, id, action, &now);
        let dirty = out.changed || !out.entries.is_empty() || t.restored.is_some();
        let mut committed = Committed::default();
        if pass.writes() && dirty {
            let change = if out.refused.is_some() {
                Change::default()
            } else {
                let started = out.to == Some(Status::InProgress) && out.from != out.to;
                Change {
                    entries: out.entries.clone(),
                    tasks_changed: out.changed,
                    task: Some((
                        id.to_string(),
                        model::name(out.from).to_string(),
                        model::name(out.to).to_string(),
                    )),
                    completions: out.completed.len(),
                    phases: out.phases.clone(),
                    started: started.then(|| id.to_string()),
                }
            };
            committed = files::commit(cx, &p, &mut t, &change)?;
        }
        let task = t.list.find(id).cloned();
        Ok((
            Acted {
                outcome: out,
                task,
                list: t.list,
                committed,
            },
            dirty,
        ))
    })
}

/// The action a hook input means.
pub fn action_of(input: Input<'_>) -> Action<'_> {
    match input {
        Input::Launch => Action::Start,
        Input::NoSignal => Action::NoSignal,
        Input::Signal(SignalKind::Done, _) => Action::Done,
        Input::Signal(SignalKind::Blocked, r) => Action::Blocked(r),
        Input::Signal(SignalKind::Failed, r) => Action::Failed(r),
    }
}

/// One lifecycle step from a hook: a launch of a subagent bound to the task, its signal, or
/// its stop without one.
pub fn step(cx: &Ctx, store: &StoreRef, unit: &str, input: Input<'_>) -> Result<Reaction> {
    let a = act(cx, store, unit, action_of(input))?;
    Ok(reply(store, unit, input, &a))
}

/// What a step's outcome says, and to whom.
pub fn reply(store: &StoreRef, unit: &str, input: Input<'_>, a: &Acted) -> Reaction {
    let o = &a.outcome;
    let who = format!("projects {}", store.id);
    let mut s = Reaction {
        status: Some(model::name(o.to).to_string()),
        ready: o.ready_now.clone(),
        ..Default::default()
    };
    for note in a.committed.settled.iter().chain(&a.committed.restored) {
        s.tell_user.push(format!("taskhook: {who}: {note}"));
    }
    if let Some(why) = &o.refused {
        match input {
            Input::Launch => s.refused = Some(format!("taskhook: {who}: {why}.")),
            _ => {
                s.refused = Some(why.clone());
                let msg = format!("{who}: {unit} was reported done, but {why}.");
                s.tell_user.push(format!("taskhook: {msg}"));
                s.tell_main.push(msg);
            }
        }
        return s;
    }
    match input {
        Input::Launch => {}
        Input::Signal(SignalKind::Done, _) if !o.completed.is_empty() => {
            s.tell_main.push(done_message(&who, a));
        }
        Input::Signal(SignalKind::Blocked, _) if o.changed => {
            let why = a
                .task
                .as_ref()
                .and_then(Task::blocked_reason)
                .unwrap_or("no reason given");
            let msg = format!(
                "{who}: {unit} is BLOCKED: {why}. A person must act, then run `taskhook projects set {} {unit} PENDING`.{}",
                store.id,
                next_hint(&a.list)
            );
            s.tell_user.push(format!("taskhook: {msg}"));
            s.tell_main.push(msg);
        }
        Input::Signal(SignalKind::Failed, reason) if !o.to.is_some_and(Status::is_finished) => {
            s.tell_main.push(format!(
                "{who}: {unit} FAILED ({}); it is {} again (ERROR logged). Launch a subagent with <task>{}/{unit}</task> to retry.",
                reason.unwrap_or("no reason given"),
                model::name(o.to),
                store.id
            ));
        }
        Input::NoSignal if !o.entries.is_empty() => {
            s.tell_main.push(format!(
                "{who}: the subagent bound to {unit} stopped without a signal; {unit} is still {} (LOOP_ITERATION logged). Launch it again with <task>{}/{unit}</task>: it must end with <signal>{unit}_DONE</signal>, <signal>{unit}_BLOCKED: why</signal> or <signal>{unit}_FAILED: why</signal>.",
                model::name(o.to),
                store.id
            ));
        }
        _ => {}
    }
    s
}

/// What the main agent hears when a task completed.
fn done_message(who: &str, a: &Acted) -> String {
    let o = &a.outcome;
    let mut parts = Vec::new();
    for (n, id) in o.completed.iter().enumerate() {
        let t = a.list.find(id);
        if n == 0 {
            let mut times = Vec::new();
            if let Some(m) = o.actual_minutes {
                times.push(format!("actual {m} min"));
            }
            if let Some(e) = t.and_then(Task::estimate) {
                times.push(format!("estimate {} min", fmt_num(e)));
            }
            let times = if times.is_empty() {
                String::new()
            } else {
                format!(" ({})", times.join(", "))
            };
            parts.push(format!("{id} is COMPLETE{times}."));
        } else {
            parts.push(format!("{id} is COMPLETE (all its subtasks are)."));
        }
    }
    for ph in &o.phases {
        parts.push(format!("Phase {ph} is complete."));
    }
    if !o.ready_now.is_empty() {
        parts.push(format!("Ready now: {}.", o.ready_now.join(", ")));
    } else {
        parts.push(next_hint(&a.list).trim().to_string());
    }
    format!("{who}: {}", parts.join(" "))
}

/// What to do next: the ready tasks, else what the rest waits for, else all done.
pub fn next_hint(list: &TaskList) -> String {
    let ready = list.ready();
    if !ready.is_empty() {
        return format!(" Ready: {}.", ready.join(", "));
    }
    let open: Vec<&Task> = list
        .tasks
        .iter()
        .filter(|t| !t.status.is_finished())
        .collect();
    if open.is_empty() {
        let all = &list.tasks;
        return if !all.iter().any(|t| t.status == Status::Complete) {
            String::new()
        } else if all.iter().any(|t| t.status == Status::Cancelled) {
            " Every task is COMPLETE or CANCELLED.".to_string()
        } else {
            " Every task is COMPLETE.".to_string()
        };
    }
    let working: Vec<&str> = open
        .iter()
        .filter(|t| !t.is_parent() && t.status.is_transitional())
        .map(|t| t.id.as_str())
        .collect();
    if working.is_empty() {
        " No task is ready (the rest is BLOCKED or waits for BLOCKED tasks).".to_string()
    } else {
        format!(" No task is ready until {} finish(es).", working.join(", "))
    }
}
