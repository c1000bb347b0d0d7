//! Layout `claude-tasks` (seed 002): the task list `<claude config>/tasks/{list-id}/tasks.json`,
//! written by `taskhook tasks write` and kept as a durable mirror of Claude Code's own task
//! tools (TodoWrite, TaskCreate, TaskUpdate).
//!
//! Guarantees:
//! - every write takes `.tasks.json.lock`, re-reads under it, applies, recomputes `blocked` for
//!   every task, refreshes `updated_at` only on tasks that changed, and replaces the file
//!   atomically after schema validation; a change that changes nothing writes nothing (and takes
//!   no lock when an unlocked read already shows that);
//! - unknown fields of the file and of each task are kept (the document is handled as JSON);
//! - dependency ids must exist and may not form a cycle; a task is `in_progress` or `completed`
//!   only when all its dependencies are completed, except where the mirror records what Claude
//!   Code already did, which it then says in `additionalContext`;
//! - a corrupt or schema-invalid file is never overwritten: writes are refused with
//!   [`Error::Corrupt`]; `taskhook recover` moves it aside on request;
//! - Claude Code's own `<N>.json` files are read, never written.
//!
//! The rooms: [`doc`] (where the list lives, reading the document), [`write`] (the write
//! pipeline, `tasks write|read`, completions), [`mirror`] and [`task_tools`] (Claude Code's
//! task tools), [`summary`].

pub mod doc;
pub mod mirror;
pub mod summary;
pub mod task_tools;
pub mod write;

use std::path::Path;

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::engine::facts::{Fact, Start, TaskToolKind};
use crate::error::{Error, Result};
use crate::hook::output::Reply;
use crate::layouts::{Input, Layout, Reconciled, StateFile, Step, StoreRef, Summary, Turn, Unit};
use crate::project::Project;
use crate::signals::SignalKind;
use crate::store::{lock_path_for, Loaded};

pub use doc::{list_id, load, store_for, tasks, tasks_path};
pub use mirror::{join_subject, todo_id};
pub use write::{
    complete, read_tasks, update, write_task, Applied, Completed, ReadParams, WriteParams,
};

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

/// The reply to completed tasks: `tasks_to_update` (seed 002), unknown ids for the user.
fn completion_reply(store: &StoreRef, done: &Completed) -> Reply {
    let mut r = Reply::default();
    if !done.found.is_empty() {
        let list: Vec<Value> = done
            .found
            .iter()
            .map(|id| json!({"task_id": id, "status": "completed"}))
            .collect();
        r.extra.insert("tasks_to_update".into(), Value::Array(list));
    }
    if !done.unknown.is_empty() {
        r.system.push(format!(
            "taskhook: tasks_completed names tasks that are not in task list {}: {}",
            store.id,
            done.unknown.join(", ")
        ));
    }
    r
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
            Fact::TaskTool(_) => Ok(vec![store_for(cx, project)?]),
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

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reply> {
        match fact {
            Fact::TaskTool(t) if t.kind == TaskToolKind::TodoWrite => {
                mirror::mirror_todos(cx, store, t)
            }
            Fact::TaskTool(t) => task_tools::mirror(cx, store, t),
            Fact::TaskCompleted(id) => mirror::task_completed(cx, store, id),
            Fact::TasksCompleted(ids) => Ok(completion_reply(store, &complete(cx, store, ids)?)),
            _ => Ok(Reply::default()),
        }
    }

    /// Every task is a unit; completed ones are inactive.
    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        Ok(load(cx, store)?
            .map(|doc| {
                tasks(&doc)
                    .iter()
                    .map(|t| Unit {
                        id: doc::id_of(t).to_string(),
                        active: doc::status_of(t) != "completed",
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `DONE` completes the task like `tasks_completed` (reply: `tasks_to_update`); the main
    /// agent learns which tasks became ready. `FAILED` and `BLOCKED` change nothing (seed 002
    /// has no such status; `blocked` means unmet dependencies): the main agent is told.
    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        _turn: &Turn<'_>,
    ) -> Result<Step> {
        let Input::Signal(kind, reason) = input else {
            return Ok(Step::default());
        };
        let reason = reason.map(|r| format!(": {r}")).unwrap_or_default();
        Ok(match kind {
            SignalKind::Done => {
                let done = complete(cx, store, &[unit.to_string()])?;
                let r = completion_reply(store, &done);
                let mut line = format!(
                    "taskhook: a subagent completed task {unit} of list {}",
                    store.id
                );
                if !done.ready.is_empty() {
                    line.push_str(&format!("; now ready: {}", done.ready.join(", ")));
                }
                Step {
                    status: Some("completed".into()),
                    ready: done.ready,
                    tell_main: vec![format!("{line}.")],
                    tell_user: r.system,
                    extra: r.extra,
                    ..Default::default()
                }
            }
            SignalKind::Failed | SignalKind::Blocked => Step {
                tell_main: vec![format!(
                    "taskhook: a subagent reported task {unit} of list {} as {}{reason}; its \
                     status is unchanged.",
                    store.id,
                    kind.word()
                )],
                ..Default::default()
            },
        })
    }

    /// This layout keeps no checkpoints: recovering moves an unreadable `tasks.json` aside
    /// (bytes kept as `tasks.json.corrupt-<UTC>`) so the list can start again.
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let path = tasks_path(store);
        cx.store.with_lock(&lock_path_for(&path), || {
            match cx.store.load_json(&path, NAME)? {
                Loaded::Missing => Ok(format!(
                    "No task list at `{}`; nothing to recover.",
                    path.display()
                )),
                Loaded::Valid(_) => Ok(format!(
                    "`{}` is valid; nothing to recover.",
                    path.display()
                )),
                Loaded::Invalid(details) => {
                    let aside = cx.store.quarantine(&path)?;
                    Ok(format!(
                        "Moved the unreadable `{}` ({details}) aside to `{}`; this layout keeps no \
                         checkpoints, so the list starts empty at its next write.",
                        path.display(),
                        aside.display()
                    ))
                }
            }
        })
    }
}

/// Whether an error means the list could not be read (for messages).
pub fn is_corrupt(e: &Error) -> bool {
    matches!(e, Error::Corrupt { .. })
}

#[cfg(test)]
mod tests {
    use super::doc::{status_of, tasks};
    use super::mirror::{body_of, join_subject, todo_id};
    use super::write::{finalize, recompute_blocked};
    use serde_json::json;

    #[test]
    fn todo_ids_are_stable_and_documented() {
        // FNV-1a 64 of the empty string is its offset basis.
        assert_eq!(todo_id(""), "todo-cbf29ce484222325");
        assert_eq!(todo_id("a"), "todo-af63dc4c8601ec8c");
        assert_eq!(todo_id("Write parser"), todo_id("Write parser"));
        assert_ne!(todo_id("Write parser"), todo_id("Write parser "));
    }

    #[test]
    fn subject_join_round_trips() {
        assert_eq!(
            join_subject("Write parser", "Implement it"),
            "Write parser\n\nImplement it"
        );
        assert_eq!(join_subject("Write parser", ""), "Write parser");
        assert_eq!(join_subject("", "Implement it"), "Implement it");
        assert_eq!(join_subject("Same", "Same"), "Same");
        let d = join_subject("S", "B\n\nmore");
        assert_eq!(body_of(&d, "S"), "B\n\nmore");
        assert_eq!(body_of("S", "S"), "");
    }

    #[test]
    fn blocked_is_recomputed_without_downgrading() {
        let mut doc = json!({"tasks": [
            {"id": "a", "status": "pending"},
            {"id": "b", "status": "pending", "dependencies": ["a"]},
            {"id": "c", "status": "in_progress", "dependencies": ["a"]},
            {"id": "d", "status": "blocked", "dependencies": []},
        ]});
        recompute_blocked(&mut doc);
        let st: Vec<&str> = tasks(&doc).iter().map(status_of).collect();
        assert_eq!(st, ["pending", "blocked", "in_progress", "pending"]);
    }

    #[test]
    fn finalize_stamps_only_changed_tasks() {
        let before = json!({"tasks": [
            {"id": "a", "status": "pending", "updated_at": "old"},
            {"id": "b", "status": "pending", "updated_at": "old"},
        ], "version": 2, "last_updated": "old"});
        let mut same = before.clone();
        assert!(!finalize(&before, &mut same, "now"));
        assert_eq!(same, before);
        let mut doc = before.clone();
        doc["tasks"][1]["status"] = json!("completed");
        assert!(finalize(&before, &mut doc, "now"));
        assert_eq!(doc["tasks"][0]["updated_at"], "old");
        assert_eq!(doc["tasks"][1]["updated_at"], "now");
        assert_eq!(doc["last_updated"], "now");
    }
}
