//! Facts to reactions: which facts a project wants (SessionStart, PreCompact / SessionEnd, an
//! edit of its files), a research file written (RESEARCHED), a checkpoint at PreCompact /
//! SessionEnd, and a bound subagent's step ([`super::steps::act`]) with the replies it makes:
//! a launch refused (`deny`), what the main agent learns (a task done, tasks now ready, a task
//! blocked or failed, a phase complete), what the user sees.

use std::path::{Component, Path};

use super::files::{self, Paths};
use super::lifecycle::{fmt_num, Action};
use super::model::{self, Status, Task, TaskList};
use super::pending;
use super::steps::{self, Acted};
use super::SCHEMA_TASKS;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::Fact;
use crate::layouts::{Input, Reaction, StoreRef};
use crate::signals::SignalKind;
use crate::store::parse_checked;

/// Whether the layout wants `fact`: every session start and checkpoint, an edit of a
/// project's files.
pub fn wants(fact: &Fact<'_>) -> bool {
    match fact {
        Fact::SessionStart(_) | Fact::Checkpoint(_) => true,
        Fact::Edit(path) => touched(path).is_some(),
        _ => false,
    }
}

/// A fact other than a step: a research file written, a checkpoint due.
pub fn on_fact(cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
    match fact {
        Fact::Edit(path) => match touched(path) {
            Some((id, Touched::Research(task))) if id == store.id => {
                research_written(cx, store, path, task)
            }
            _ => Ok(Reaction::default()),
        },
        Fact::Checkpoint(event) => checkpoint_now(cx, store, event),
        _ => Ok(Reaction::default()),
    }
}

/// A file of a project an edit can touch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Touched<'a> {
    /// project.json, tasks.json or progress/velocity.json (checked by the edit rule).
    State,
    /// `research/{task}.md`.
    Research(&'a str),
}

/// Which project file `path` is (`…/.claude/projects/{id}/…`), judged from the path alone.
fn touched(path: &str) -> Option<(&str, Touched<'_>)> {
    let names: Vec<&str> = Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    let at = |from_end: usize| names.len().checked_sub(from_end).map(|i| names[i]);
    let under =
        |depth: usize| at(depth + 1) == Some("projects") && at(depth + 2) == Some(".claude");
    match (at(1)?, at(2)?) {
        ("tasks.json" | "project.json", id) if under(2) => Some((id, Touched::State)),
        ("velocity.json", "progress") if under(3) => Some((at(3)?, Touched::State)),
        (file, "research") if under(3) => {
            let task = file.strip_suffix(".md").filter(|t| !t.is_empty())?;
            Some((at(3)?, Touched::Research(task)))
        }
        _ => None,
    }
}

/// A research file written: PENDING / IN_RESEARCH → RESEARCHED (TASK_RESEARCHED).
fn research_written(cx: &Ctx, store: &StoreRef, path: &str, task: &str) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    let file = Path::new(path);
    let parent = file.parent().unwrap_or(Path::new(""));
    let ours = if file.is_absolute() {
        parent == p.research
    } else {
        p.research.ends_with(parent)
    };
    if !ours || !cx.store.exists(&p.research.join(format!("{task}.md"))) {
        return Ok(Reaction::default());
    }
    let a = steps::act(cx, store, task, Action::Researched)?;
    let mut r = Reaction::default();
    for msg in a.committed.settled.iter().chain(&a.committed.restored) {
        r.tell_user
            .push(format!("taskhook: projects {}: {msg}", store.id));
    }
    Ok(r)
}

/// PreCompact / SessionEnd (`event`, the reason logged): a checkpoint of tasks.json, unless the
/// newest one holds the same.
/// A change a kill interrupted is settled first, so the checkpoint holds a whole state.
fn checkpoint_now(cx: &Ctx, store: &StoreRef, event: &str) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    cx.store.transact(&p.lock(), |pass| {
        let interrupted = pending::waiting(cx, &p);
        let mut reply = Reaction::default();
        let mut say = |msg: String| reply.tell_user.push(format!("taskhook: projects {}: {msg}", store.id));
        if pass.writes() {
            if let Some(msg) = pending::settle(cx, &p)? {
                say(msg);
            }
        }
        let Some(bytes) = files::read_file(cx, &p.tasks)? else {
            return Ok((reply, interrupted));
        };
        let valid = parse_checked(&bytes, SCHEMA_TASKS)?.is_ok();
        if !valid {
            say(format!(
                "tasks.json is unusable, so no checkpoint was written; the next session start (or `taskhook recover {}`) restores it from the newest valid checkpoint.",
                store.root.display()
            ));
            return Ok((reply, interrupted));
        }
        let ring = p.ring();
        let newest = ring.list(&cx.store)?.pop();
        let same = match &newest {
            Some(cp) => cx.store.read(&cp.path)?.as_deref() == Some(&bytes[..]),
            None => false,
        };
        if same {
            return Ok((reply, interrupted));
        }
        if pass.writes() {
            files::checkpoint(cx, &p, &mut |w| w.write_all(&bytes), event)?;
        }
        Ok((reply, true))
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
    let a = steps::act(cx, store, unit, action_of(input))?;
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
        .map(|t| &**t)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_files() {
        assert_eq!(
            touched("/p/.claude/projects/web/tasks.json"),
            Some(("web", Touched::State))
        );
        assert_eq!(
            touched(".claude/projects/web/progress/velocity.json"),
            Some(("web", Touched::State))
        );
        assert_eq!(
            touched("/p/.claude/projects/web/research/T1.md"),
            Some(("web", Touched::Research("T1")))
        );
        assert_eq!(touched("/p/.claude/projects/web/notes.md"), None);
        assert_eq!(touched("/p/src/tasks.json"), None);
        assert_eq!(touched("/p/.claude/projects/web/research/.md"), None);
    }
}
