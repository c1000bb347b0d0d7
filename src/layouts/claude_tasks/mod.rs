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
//!   [`Error::Corrupt`](crate::error::Error::Corrupt); `taskhook recover` keeps every task that validates ([`reconcile`]);
//! - Claude Code's own `<N>.json` files are read, never written: when the mirror's status of
//!   such a task moves away from Claude Code's, the main agent is told the `TaskUpdate` to make
//!   ([`truth`]).
//!
//! The rooms (the same in every layout): [`model`] (one task, typed and borrowed, its
//! `Status`), [`lifecycle`] (what every change goes through: dependency checks, `blocked`
//! recomputed, stamps), [`hooks`] (the facts it takes and a unit's step: completions, the
//! mirror's entry points), [`reconcile`] (SessionStart and `taskhook recover`), [`summary`],
//! [`commands`] (`tasks write|read`), [`work`] (the agent's verbs). Its own: [`doc`] (where the
//! list lives, reading it), [`list`] and [`canon`] (the list parsed once, written back byte for
//! byte), [`write`](mod@write) (the one write transaction), [`mirror`], [`task_tools`] and
//! [`scope`] (Claude Code's task tools; whose task is whose), [`truth`] (the `TaskUpdate` that
//! keeps Claude Code's own list in step).

pub mod canon;
pub mod commands;
pub mod doc;
pub mod hooks;
pub mod lifecycle;
pub mod list;
pub mod mirror;
pub mod model;
pub mod reconcile;
pub mod scope;
pub mod summary;
pub mod task_tools;
pub mod truth;
pub mod work;
pub mod write;

#[cfg(test)]
mod tests;

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::Project;

pub use commands::{read_tasks, write_task, ReadParams, WriteParams};
pub use doc::{list_id, store_for, tasks_path, with_list};
pub use hooks::{complete, Completed};
pub use mirror::{join_subject, todo_id};
pub use write::{update, Applied};

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

impl Layout for ClaudeTasks {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::TaskTool(t) => task_tools::succeeded(t),
            Fact::TaskCompleted(_) | Fact::TasksCompleted(_) | Fact::SessionStart(_) => true,
            Fact::Edit(path) => hooks::is_list_path(path),
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
            vec![StateFile::doc(path, NAME)]
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
        reconcile::session_start(cx, store)
    }

    /// TodoWrite is always mirrored; the Task tools and TaskCompleted only while the task
    /// system is on (`CLAUDE_CODE_ENABLE_TASKS` not `false`).
    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        hooks::on_fact(cx, store, fact)
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
        hooks::step(cx, store, unit, input, turn)
    }

    /// This layout keeps no checkpoints: recovery keeps every task of an unreadable list that
    /// validates, and moves the original bytes aside ([`reconcile`]).
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        reconcile::recover(cx, store)
    }
}
