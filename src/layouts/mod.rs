//! The layouts: one folder per seed format, each behind the [`Layout`] trait and registered in
//! [`registry()`]. A layout owns its types, transitions and reconciliation, takes typed facts
//! ([`crate::layouts::fact::Fact`]) and plain Rust values (never the wire format), and reaches
//! the disk only through [`crate::store::Store`].
//!
//! A new layout is one folder here, one line in [`registry`](mod@registry) and one CLI file. It provides:
//! `wants` (a pure check: which facts concern it), `discover` (its stores in a project),
//! `state_files` (with their schemas, for `validate` and the edit check), `summarize`
//! (read-only, feeds `status` and SessionStart alike), `reconcile` (SessionStart's work,
//! returning what changed and why), and as it needs them `units` + `step` (the lifecycle driven
//! by launches and signals), `on_fact` (commits, merges, task tools, checkpoints, …),
//! `log_error` (where it keeps a log) and `recover`.

pub mod cdd;
pub mod claude_tasks;
pub mod execute;
pub mod fact;
pub mod iterative;
pub mod json;
pub mod keyed;
pub mod projects;
pub mod registry;
pub mod rest;
pub mod shared;
pub mod summary;
#[cfg(test)]
pub mod tiny;
pub mod unit;
pub mod work;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start};
use crate::project::Project;

pub use registry::registry;
pub use summary::{Item, StoreStatus, Summary};
pub use unit::{Halt, Input, Reaction, TaskUpdate, Turn};
pub use work::{Phase, Shown, WorkUnit};

/// One store a layout found: which layout, its id (project id, slug, list id, …), its root, and
/// the project it was found for (where the project's own files live: `.claude/taskhook/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreRef {
    pub layout: &'static str,
    pub id: String,
    pub root: PathBuf,
    /// The project folder this store belongs to in this invocation.
    pub project: PathBuf,
}

impl StoreRef {
    /// Store `id` of `layout` at `root`, found for the project folder `project`.
    pub fn new(layout: &'static str, id: impl Into<String>, root: PathBuf, project: &Path) -> Self {
        let (id, project) = (id.into(), project.to_path_buf());
        StoreRef {
            layout,
            id,
            root,
            project,
        }
    }
}

/// The last component of `path` as text (empty when it has none).
pub fn name_of(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into()
}

/// The first of `at("")`, `at("-2")`, `at("-3")`, … that names nothing yet (bytes kept aside, an
/// archive folder).
pub fn unused_path(cx: &Ctx, at: impl Fn(&str) -> PathBuf) -> PathBuf {
    let mut target = at("");
    let mut n = 1;
    while cx.store.exists(&target) {
        n += 1;
        target = at(&format!("-{n}"));
    }
    target
}

/// A state file and how to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    pub path: PathBuf,
    pub schema: &'static str,
    /// One JSON value per line (history logs) rather than one document.
    pub json_lines: bool,
}

impl StateFile {
    /// One JSON document checked against `schema`.
    pub fn doc(path: PathBuf, schema: &'static str) -> Self {
        StateFile {
            path,
            schema,
            json_lines: false,
        }
    }
}

/// A unit (task, phase, …) that a `<task>` or `<signal>` name can resolve to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: String,
    /// Not done, completed, cancelled, abandoned or archived.
    pub active: bool,
}

impl Unit {
    /// Unit `id`, active or not.
    pub fn new(id: impl Into<String>, active: bool) -> Self {
        Unit {
            id: id.into(),
            active,
        }
    }
}

/// What SessionStart's reconciliation of one store did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reconciled {
    /// What changed and why, one line each.
    pub changes: Vec<String>,
    /// The store as it is now; `None` when there is no store to speak of.
    pub summary: Option<Summary>,
    /// For the user (`systemMessage`).
    pub tell_user: Vec<String>,
}

/// A task-state format.
pub trait Layout: Sync {
    /// The layout's name (`claude-tasks`, `iterative`, …).
    fn name(&self) -> &'static str;

    /// Whether `fact` can concern this layout. Pure: no I/O, so facts no layout wants cost
    /// nothing beyond parsing.
    fn wants(&self, fact: &Fact<'_>) -> bool;

    /// Finds this layout's stores in the project. Cheap: a few stats and folder listings.
    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>>;

    /// What looks meant as a store of this layout in the project but is not one, each as a
    /// [`Summary::problem`] saying why (a path the project's configuration lists that taskhook
    /// refuses, a store folder that is a symbolic link): `status` and `doctor` report them
    /// rather than ignore them silently. Read-only; none by default.
    fn refused(&self, cx: &Ctx, project: &Project) -> Result<Vec<Summary>> {
        let _ = (cx, project);
        Ok(Vec::new())
    }

    /// The stores a fact should reach: by default those [`Layout::discover`] finds. A layout
    /// whose facts may create its store (claude-tasks' first TodoWrite) also returns one that
    /// does not exist yet.
    fn discover_for(&self, cx: &Ctx, project: &Project, fact: &Fact<'_>) -> Result<Vec<StoreRef>> {
        let _ = fact;
        self.discover(cx, project)
    }

    /// The state files of a store, with their schemas.
    fn state_files(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>>;

    /// Whether the layout can vouch, by a check of its own that is never looser than the
    /// schema, that `file` is valid (`validate` then skips the schema). `false` (the default)
    /// leaves the verdict, and the error paths, to the schema.
    fn vouches(&self, cx: &Ctx, file: &StateFile) -> Result<bool> {
        let _ = (cx, file);
        Ok(false)
    }

    /// What `validate` reports about `file` beyond its schema: a file the store must have that
    /// is missing, a rule no schema can say (ids used twice, ids unsafe as file names). None by
    /// default.
    fn file_issues(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        file: &StateFile,
    ) -> Result<Vec<crate::store::schema::Issue>> {
        let _ = (cx, store, file);
        Ok(Vec::new())
    }

    /// The store's summary, read-only (`status`, and the SessionStart context).
    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary>;

    /// SessionStart's work for one store (`start`; `None` for `taskhook reconcile`): each
    /// seed's resume rules, stale detection, temp-file clean-up, recovery of a corrupt state
    /// file. Writes only when something is to be fixed.
    fn reconcile(&self, cx: &Ctx, store: &StoreRef, start: Option<Start>) -> Result<Reconciled>;

    /// The units of a store, for resolving `<task>` and `<signal>` names (CONTRACT §4).
    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let _ = (cx, store);
        Ok(Vec::new())
    }

    /// The status of `unit` now, which a notice about it is checked against before it is
    /// delivered (a notice whose unit has changed since it was written is dropped: a later
    /// event made it false). `None` when it cannot be told. By default the unit's activity
    /// from [`Layout::units`] (`active`, `inactive`, or `gone`); a layout with exact statuses
    /// returns them.
    fn unit_status(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Option<String>> {
        let units = self.units(cx, store)?;
        Ok(Some(
            match units.iter().find(|u| u.id == unit) {
                Some(u) if u.active => "active",
                Some(_) => "inactive",
                None => "gone",
            }
            .to_string(),
        ))
    }

    /// One lifecycle step of `unit`: a signal, a bound subagent's stop without one, a launch.
    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let _ = (cx, store, unit, input, turn);
        Ok(Reaction::default())
    }

    /// The units of a store for the agent's verbs and the board, in the layout's own order of
    /// work: `taskhook next` offers the first ready one. By default, what the store's summary
    /// lists (a layout with a better account of its units gives it).
    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        Ok(work::from_summary(&self.summarize(cx, store)?))
    }

    /// [`Layout::work`], with the id each unit's claims are recorded under, in the same order:
    /// the unit's own id, unless the layout's ids depend on who asks (claude-tasks shows a
    /// session its own tasks by Claude Code's numbers, `1`, and another session's as
    /// `1@aaaaaaaa`), when it is the one id every session agrees on.
    fn work_keyed(&self, cx: &Ctx, store: &StoreRef) -> Result<(Vec<WorkUnit>, Vec<String>)> {
        let units = self.work(cx, store)?;
        let keys = units.iter().map(|u| u.id.clone()).collect();
        Ok((units, keys))
    }

    /// The id the claims of unit `unit` (as this invocation names it) are recorded under: the
    /// name itself, unless the layout's ids depend on who asks ([`Layout::work_keyed`]).
    fn claim_key(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<String> {
        let _ = (cx, store);
        Ok(unit.to_string())
    }

    /// Everything needed to do one unit (`taskhook show`): its description or brief, files,
    /// dependencies, attempts and last failure, guardrails, recent history.
    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        let _ = (cx, store, unit);
        Ok(Shown::default())
    }

    /// Takes a ready unit: the layout's own start transition (by default its launch step, what
    /// a subagent bound with `<task>` starts). A refusal is [`Reaction::refused`].
    fn claim(&self, cx: &Ctx, store: &StoreRef, unit: &str, turn: &Turn<'_>) -> Result<Reaction> {
        self.step(cx, store, unit, Input::Launch, turn)
    }

    /// Gives a unit back: ready again, its history kept, no attempt or failure counted. A
    /// refusal is [`Reaction::refused`].
    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        let _ = (cx, unit);
        Ok(Reaction::refused(format!(
            "{} {} has no way to give a unit back",
            self.name(),
            store.id
        )))
    }

    /// Records a line about a unit in the store's own log, where the layout keeps one (a
    /// takeover of an expired claim, a forced verb), in the log's own shape.
    fn note(&self, cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
        let _ = (cx, store, unit, text);
        Ok(())
    }

    /// Any other fact this layout wants (commits, merges, task tools, checkpoints, Bash).
    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        let _ = (cx, store, fact);
        Ok(Reaction::default())
    }

    /// Records a problem (a state file an edit left invalid, a write its schema refused) in the
    /// store's log, where the layout keeps one (CONTRACT §3).
    fn log_error(&self, cx: &Ctx, store: &StoreRef, message: &str) -> Result<()> {
        let _ = (cx, store, message);
        Ok(())
    }

    /// Restores the store from what it has (checkpoints, its log); returns what was done.
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let _ = cx;
        Err(Error::Usage(format!(
            "layout {} keeps nothing to recover {} from",
            self.name(),
            store.root.display()
        )))
    }
}
