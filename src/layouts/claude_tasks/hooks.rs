//! The layout's hooks: the facts it takes ([`on_fact`]: Claude Code's task tools through the
//! mirror, TaskCompleted, seed 002's SubagentStop `tasks_completed`) and a unit's lifecycle
//! step ([`step`]: launches and signals). Completing tasks goes through the one write pipeline
//! ([`super::write::update`]); a task whose dependencies are not completed (nor completed by
//! the same call) is refused, as TaskCompleted and `tasks write` refuse it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::doc::{custom_fields, label, unmet};
use super::list::List;
use super::model::Status;
use super::scope::{self, Keys};
use super::truth::{kept, Kept};
use super::write::update;
use super::{commands, list, mirror, task_tools, truth, work, FILE_NAME};
use crate::context::Ctx;
use crate::error::Error;
use crate::error::Result;
use crate::layouts::fact::{Fact, TaskToolKind};
use crate::layouts::json::set_str;
use crate::layouts::{Input, Reaction, StoreRef, TaskUpdate, Turn};
use crate::signals::SignalKind;

/// What completing tasks did.
#[derive(Debug, Clone, Default)]
pub struct Completed {
    /// Tasks of the list that were completed (or already were), each once, named as the asking
    /// session knows them ([`List::shown`]: `1`, not `1@defa37fe`).
    pub found: Vec<String>,
    /// The same as labels (`1 (Write parser)`).
    pub labels: Vec<String>,
    /// Those Claude Code keeps a file of ([`super::truth`]).
    pub kept: Vec<Kept>,
    /// Names that are not tasks of the list.
    pub unknown: Vec<String>,
    /// Tasks not completed because a dependency is not: the task's label (`id (description)`)
    /// and its unfinished dependencies (`dep (description) [status]`).
    pub refused: Vec<(String, Vec<String>)>,
    /// Tasks the completion unblocked, as labels (`id (description)`).
    pub ready: Vec<String>,
}

/// Completes the tasks `names` resolve to (seed 002's SubagentStop `tasks_completed`, a `_DONE`
/// signal), under the list's lock. A task whose dependencies are not completed (nor completed
/// by the same call) is refused, like TaskCompleted and `tasks write` refuse it. A `note` (what
/// `taskhook done --note` says was done) is kept in each task's
/// `metadata.custom_fields.done_note`.
pub fn complete(
    cx: &Ctx,
    store: &StoreRef,
    names: &[String],
    resolve: impl Fn(&List<'_>, &str) -> Option<usize>,
    note: Option<&str>,
) -> Result<Completed> {
    let applied = update(
        cx,
        store,
        |list, _now| {
            let mut done = Completed::default();
            let mut asked: Vec<usize> = Vec::new();
            let mut once = HashSet::new();
            for name in names {
                match resolve(list, name) {
                    Some(i) if once.insert(i) => asked.push(i),
                    Some(_) => {}
                    None => done.unknown.push(name.clone()),
                }
            }
            let allowed = completable(list, &asked);
            for &i in &asked {
                let id = list.view(i).id.to_string();
                if allowed.contains(&i) {
                    if list.view(i).status != Status::Completed {
                        list.edit(i, |t| set_str(t, "status", "completed"));
                    }
                    if let Some(n) = note.filter(|n| !n.trim().is_empty()) {
                        list.edit(i, |t| set_str(custom_fields(t), "done_note", n));
                    }
                    done.found.push(list.shown(i).to_string());
                    done.labels.push(label(list, &id));
                    done.kept.extend(kept(list, i));
                } else {
                    done.refused.push((label(list, &id), unmet(list, &id)));
                }
            }
            Ok(done)
        },
        |_, done| done,
    )?;
    let mut done = applied.value;
    done.ready = applied.unblocked_labels;
    Ok(done)
}

/// Of the slots `asked`, those whose every dependency is completed or itself completable in the
/// same call (a chain named together completes together). Linear in the tasks named.
fn completable(list: &List<'_>, asked: &[usize]) -> HashSet<usize> {
    let set: HashSet<usize> = asked.iter().copied().collect();
    let mut memo: HashMap<usize, bool> = HashMap::new();
    fn ok(
        list: &List<'_>,
        i: usize,
        set: &HashSet<usize>,
        memo: &mut HashMap<usize, bool>,
        depth: usize,
    ) -> bool {
        if let Some(&v) = memo.get(&i) {
            return v;
        }
        memo.insert(i, false);
        let deps: Vec<usize> = list
            .view(i)
            .deps
            .iter()
            .map(|d| list.find(d))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_else(|| vec![usize::MAX]);
        let v = depth < 10_000
            && deps.iter().all(|&j| {
                j != usize::MAX
                    && (list.view(j).status == Status::Completed
                        || (set.contains(&j) && ok(list, j, set, memo, depth + 1)))
            });
        memo.insert(i, v);
        v
    }
    asked
        .iter()
        .copied()
        .filter(|&i| ok(list, i, &set, &mut memo, 0))
        .collect()
}

/// Whether `path` looks like a task list (`…/tasks/{list}/tasks.json`).
pub fn is_list_path(path: &str) -> bool {
    let p = Path::new(path);
    p.file_name().is_some_and(|n| n == FILE_NAME)
        && p.parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "tasks")
}

/// Who names the tasks to complete: Claude Code's own numbers first (seed 002's
/// `tasks_completed`), or the names taskhook showed the session (a signal, a verb).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    ClaudeCode,
    Shown,
}

/// Completes `names` (seed 002's `tasks_completed`, a `_DONE` signal, `taskhook done`) and says
/// so: the reply carries `tasks_to_update` (seed 002; Claude Code 2.1.330 ignores it); the user
/// hears of unknown and refused ids (`systemMessage`); the main agent hears all of it, what
/// became ready, and the `TaskUpdate` that makes Claude Code's own list agree
/// ([`truth`]), at its next tool call (the `Agent` call's PostToolUse for a foreground
/// subagent). Every task is named as the session knows it (`1`, never `1@defa37fe`).
fn complete_and_tell(
    cx: &Ctx,
    store: &StoreRef,
    names: &[String],
    (naming, by_subagent, note): (Naming, bool, Option<&str>),
) -> Result<(Reaction, Completed)> {
    let keys = Keys::of(cx);
    let resolve = |list: &list::List<'_>, name: &str| match naming {
        Naming::ClaudeCode => keys.resolve(list, name),
        Naming::Shown => keys.find_shown(list, name),
    };
    let done = complete(cx, store, names, resolve, note)?;
    let mut r = Reaction::default();
    if !done.found.is_empty() {
        r.tasks_to_update = done
            .found
            .iter()
            .map(|id| TaskUpdate {
                task_id: id.clone(),
                status: "completed".into(),
            })
            .collect();
        let mut line = format!(
            "taskhook: {}completed {} {} of list {}",
            if by_subagent { "a subagent " } else { "" },
            if done.found.len() == 1 {
                "task"
            } else {
                "tasks"
            },
            done.labels.join(", "),
            store.id
        );
        if !done.ready.is_empty() {
            line.push_str(&format!("; now ready: {}", done.ready.join(", ")));
        }
        r.tell_main.push(format!("{line}."));
        let (main, user) = truth::tell(cx, &done.kept, "completed");
        r.tell_main.extend(main);
        r.tell_user.extend(user);
    }
    if !done.unknown.is_empty() {
        let (tasks, are, them) = match done.unknown.len() {
            1 => ("a task", "is", "it"),
            _ => ("tasks", "are", "them"),
        };
        let line = format!(
            "taskhook: a subagent reported {tasks} as completed that {are} not in task list {}: \
             {}; nothing was changed for {them}.",
            store.id,
            done.unknown.join(", ")
        );
        r.tell_user.push(line.clone());
        r.tell_main.push(line);
    }
    for (task, waiting) in &done.refused {
        let line = format!(
            "taskhook: a subagent reported task {task} as completed, but its dependencies are \
             not completed: {}; task list {} keeps it as it was (complete them first).",
            waiting.join(", "),
            store.id
        );
        r.tell_user.push(line.clone());
        r.tell_main.push(line);
    }
    Ok((r, done))
}

/// A session whose task tool changed the mirror gets a liveness mark, which each of its hook
/// events renews and its SessionEnd removes: how another session knows its tasks are still its
/// work ([`scope::Owners`]). An event that changed nothing creates nothing.
fn mark_live(cx: &Ctx, session: Option<&str>) -> Result<()> {
    if !cx.store.has_changed() {
        return Ok(());
    }
    match session.map(crate::claims::Owner::session) {
        Some(Ok(owner)) => crate::claims::keep_alive(cx, &owner),
        _ => Ok(()),
    }
}

pub fn on_fact(cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
    match fact {
        Fact::TaskTool(t) if t.kind == TaskToolKind::TodoWrite => {
            let r = mirror::mirror_todos(cx, store, t)?;
            mark_live(cx, t.session_id)?;
            Ok(r)
        }
        Fact::TaskTool(_) | Fact::TaskCompleted(_) if !scope::tasks_enabled(cx) => {
            Ok(Reaction::default())
        }
        Fact::TaskTool(t) => {
            let r = task_tools::mirror(cx, store, t)?;
            mark_live(cx, t.session_id)?;
            Ok(r)
        }
        Fact::TaskCompleted(id) => mirror::task_completed(cx, store, id),
        Fact::TasksCompleted(ids) => {
            if ids.len() > commands::MAX_DEPENDENCIES {
                return Err(Error::BadInput(format!(
                    "tasks_completed names {} tasks; taskhook completes at most {} in one \
                     event, so task list {} was left as it was",
                    ids.len(),
                    commands::MAX_DEPENDENCIES,
                    store.id
                )));
            }
            Ok(complete_and_tell(cx, store, ids, (Naming::ClaudeCode, true, None))?.0)
        }
        _ => Ok(Reaction::default()),
    }
}

pub fn step(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    input: Input<'_>,
    turn: &Turn<'_>,
) -> Result<Reaction> {
    let (kind, reason) = match input {
        Input::Signal(kind, reason) => (kind, reason),
        Input::Launch => return work::launch(cx, store, unit),
        Input::NoSignal => return Ok(Reaction::default()),
    };
    let by_subagent = turn.agent_id.is_some();
    Ok(match kind {
        SignalKind::Done => {
            let (r, done) = complete_and_tell(
                cx,
                store,
                &[unit.to_string()],
                (Naming::Shown, by_subagent, reason),
            )?;
            let refused = done
                .refused
                .first()
                .map(|(t, waits)| format!("task {t} waits for {}", waits.join(", ")))
                .or_else(|| {
                    done.unknown
                        .first()
                        .map(|u| format!("task list {} has no task {u}", store.id))
                });
            Reaction {
                status: (!done.found.is_empty()).then(|| "completed".into()),
                ready: done.ready,
                refused,
                ..r
            }
        }
        SignalKind::Failed => work::fail(cx, store, unit, reason, by_subagent)?,
        SignalKind::Blocked => Reaction {
            tell_main: vec![format!(
                "taskhook: a subagent reported task {unit} of list {} as BLOCKED{}; its \
                 status is unchanged.",
                store.id,
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            )],
            ..Default::default()
        },
    })
}
