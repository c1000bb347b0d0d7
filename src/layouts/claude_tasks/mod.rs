//! Layout `claude-tasks` (seed 002): the task list `<claude config>/tasks/{list-id}/tasks.json`,
//! written by `taskhook tasks write` and kept as a durable mirror of Claude Code's own task
//! tools (TodoWrite, TaskCreate, TaskUpdate).
//!
//! Guarantees:
//! - every write takes `.tasks.json.lock`, re-reads under it, applies, recomputes `blocked`
//!   (re-blocking tasks whose dependency was reopened), refreshes `updated_at` only on tasks
//!   that changed, and replaces the file atomically after validation (of the tasks it
//!   re-serialises: see [`write`](mod@write)); a change that changes nothing writes nothing and takes no
//!   lock;
//! - the file is parsed once per event, typed and borrowed ([`list`]); unchanged tasks are
//!   written back byte for byte, so cost grows with the file, linearly, and never with a
//!   copy of it per step (issue 13);
//! - unknown fields of the file and of each task are kept;
//! - dependency ids must exist and may not form a cycle; a task is `in_progress` or `completed`
//!   only when all its dependencies are completed, except where the mirror records what Claude
//!   Code already did, which it then says in `additionalContext`;
//! - two sessions never overwrite each other's mirrored tasks ([`scope`]);
//! - a corrupt or schema-invalid file is never overwritten: writes are refused with
//!   [`Error::Corrupt`]; `taskhook recover` keeps every task that validates ([`recover`]);
//! - Claude Code's own `<N>.json` files are read, never written: when the mirror's status of
//!   such a task moves away from Claude Code's, the main agent is told the `TaskUpdate` to make
//!   ([`truth`]).
//!
//! The rooms: [`doc`] (where the list lives, reading it), [`view`], [`list`], [`canon`] and
//! [`pipeline`] (the parsed list and what every change goes through), [`write`](mod@write) (the
//! transaction, `tasks write|read`), [`complete`](mod@complete), [`mirror`], [`task_tools`] and [`scope`]
//! (Claude Code's task tools; whose task is whose and how each session names it), [`work`]
//! (the agent's verbs), [`truth`] (the `TaskUpdate` that keeps Claude Code's own list in step),
//! [`summary`], [`recover`].

pub mod canon;
pub mod complete;
pub mod doc;
pub mod list;
pub mod mirror;
pub mod pipeline;
pub mod recover;
pub mod scope;
pub mod summary;
pub mod task_tools;
pub mod truth;
pub mod view;
pub mod work;
pub mod write;

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start, TaskToolKind};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, TaskUpdate, Turn,
    Unit, WorkUnit,
};
use crate::project::Project;
use crate::signals::SignalKind;
use scope::Keys;

pub use complete::{complete, Completed};
pub use doc::{list_id, store_for, tasks_path, with_list};
pub use mirror::{join_subject, todo_id};
pub use write::{read_tasks, update, write_task, Applied, ReadParams, WriteParams};

/// The layout's name, and its schema's.
pub const NAME: &str = "claude-tasks";
/// The format version taskhook writes (seed 002: 2 added dependencies and metadata).
pub const FORMAT_VERSION: u64 = 2;
/// The state file inside the list folder.
pub const FILE_NAME: &str = "tasks.json";
/// The statuses seed 002 allows.
pub const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "blocked"];
/// Prefix of the ids derived from TodoWrite contents.
pub const TODO_ID_PREFIX: &str = "todo-";

/// The `claude-tasks` layout.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeTasks;

/// The registered instance.
pub static LAYOUT: ClaudeTasks = ClaudeTasks;

/// Whether `path` looks like a task list (`…/tasks/{list}/tasks.json`).
fn is_list_path(path: &str) -> bool {
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

impl Layout for ClaudeTasks {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::TaskTool(t) => task_tools::succeeded(t),
            Fact::TaskCompleted(_) | Fact::TasksCompleted(_) | Fact::SessionStart(_) => true,
            Fact::Edit(path) => is_list_path(path),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let store = store_for(cx, project)?;
        if cx.store.exists(&tasks_path(&store)) || summary::has_claude_own_files(cx, &store.root)? {
            Ok(vec![store])
        } else {
            Ok(Vec::new())
        }
    }

    fn discover_for(&self, cx: &Ctx, project: &Project, fact: &Fact<'_>) -> Result<Vec<StoreRef>> {
        match fact {
            // A task tool creates the list; `tasks_completed` names tasks of it even before it
            // exists (each is then unknown, and said so).
            Fact::TaskTool(_) | Fact::TasksCompleted(_) => Ok(vec![store_for(cx, project)?]),
            _ => self.discover(cx, project),
        }
    }

    fn state_files(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        let path = tasks_path(store);
        Ok(if cx.store.exists(&path) {
            vec![StateFile {
                path,
                schema: NAME,
                json_lines: false,
            }]
        } else {
            Vec::new()
        })
    }

    /// The fast parse of the list ([`list::List::parse`]) is never looser than the schema
    /// (a property test holds it to that): when it accepts the file, the file is valid.
    fn vouches(&self, cx: &Ctx, file: &StateFile) -> Result<bool> {
        if file.schema != NAME {
            return Ok(false);
        }
        let Some(bytes) = cx.store.read(&file.path)? else {
            return Ok(false);
        };
        Ok(std::str::from_utf8(&bytes)
            .ok()
            .and_then(list::List::parse)
            .is_some())
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        summary::summarize(cx, store, &tasks_path(store))
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        cx.store.clean_stale_temps_of(&tasks_path(store))?;
        let summary = self.summarize(cx, store)?;
        Ok(Reconciled {
            tell_user: summary
                .problems
                .iter()
                .filter(|p| p.contains("is corrupt"))
                .map(|p| format!("taskhook: {p}"))
                .collect(),
            changes: Vec::new(),
            summary: Some(summary),
        })
    }

    /// TodoWrite is always mirrored; the Task tools and TaskCompleted only while the task
    /// system is on (`CLAUDE_CODE_ENABLE_TASKS` not `false`).
    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
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
                if ids.len() > write::MAX_DEPENDENCIES {
                    return Err(Error::BadInput(format!(
                        "tasks_completed names {} tasks; taskhook completes at most {} in one \
                         event, so task list {} was left as it was",
                        ids.len(),
                        write::MAX_DEPENDENCIES,
                        store.id
                    )));
                }
                Ok(complete_and_tell(cx, store, ids, (Naming::ClaudeCode, true, None))?.0)
            }
            _ => Ok(Reaction::default()),
        }
    }

    /// Every task is a unit; completed ones are inactive. A session's own Claude Code task
    /// (kept as `n@<session>`) also answers to `n`.
    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        work::names(cx, store)
    }

    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        Ok(work::work_keyed(cx, store)?.0)
    }

    fn work_keyed(&self, cx: &Ctx, store: &StoreRef) -> Result<(Vec<WorkUnit>, Vec<String>)> {
        work::work_keyed(cx, store)
    }

    /// A session's own task `1` is claimed as `1@<list>`, the id every session agrees on.
    fn claim_key(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<String> {
        let (units, keys) = work::work_keyed(cx, store)?;
        Ok(units
            .iter()
            .position(|u| u.id == unit)
            .and_then(|i| keys.get(i).cloned())
            .unwrap_or_else(|| unit.to_string()))
    }

    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        work::show(cx, store, unit)
    }

    fn claim(&self, cx: &Ctx, store: &StoreRef, unit: &str, _turn: &Turn<'_>) -> Result<Reaction> {
        work::claim(cx, store, unit)
    }

    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        work::release(cx, store, unit)
    }

    /// `DONE` completes the task like `tasks_completed` (reply: `tasks_to_update`; refused
    /// while its dependencies are not completed; a `--note` kept in
    /// `metadata.custom_fields.done_note`); the main agent learns what became ready and what
    /// Claude Code's own list needs. `FAILED` sends a task in progress back to `pending`, the
    /// reason kept in `metadata.custom_fields.last_failure` ([`work::fail`]). `BLOCKED` changes
    /// nothing (seed 002's `blocked` means unmet dependencies): the main agent is told. A
    /// launch for another live session's task is denied ([`work::launch`]).
    fn step(
        &self,
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

    /// This layout keeps no checkpoints: recovery keeps every task of an unreadable list that
    /// validates, and moves the original bytes aside ([`recover`]).
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        recover::recover(cx, store)
    }
}
