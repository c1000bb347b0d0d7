//! Layout `projects` (seed 000): `.claude/projects/{project-id}/` with `project.json`,
//! `tasks.json` (the flat master list, `{"tasks": [...]}`, every level in creation order),
//! `progress/log.md` (append-only audit log), `progress/velocity.json`, `research/{task-id}.md`,
//! `checkpoints/checkpoint-NNN.json` (the last 10) and `temp/.write-{uuid}`.
//!
//! Hooks drive the tasks: a bound subagent's launch starts its task (a parent's launch is
//! denied), its `<signal>ID_DONE|BLOCKED|FAILED</signal>` moves it on, a stop without a signal
//! is a LOOP_ITERATION, a research file written makes it RESEARCHED, PreCompact and SessionEnd
//! write a checkpoint, SessionStart detects stale tasks, reconciles, cleans up and restores a
//! corrupt list. This file is the [`Layout`] impl, each method one call into its room:
//! [`model`] (the documents typed, the list's questions), [`lifecycle`] (the pure step),
//! [`log`] (the log's format, velocity), [`hooks`] (facts to reactions, replies),
//! [`reconcile`] (SessionStart, `recover`), [`summary`], [`commands`] (what
//! `taskhook projects …` does), [`work`] (the agent's units); and this layout's own:
//! [`steps`] (one action as a transaction), [`files`] (every write, the seed's protocol),
//! [`pending`] (a change's two writes as one), [`restore`] (from checkpoints and the log),
//! [`validate`] (what the schemas cannot judge).

pub mod commands;
pub mod files;
pub mod hooks;
pub mod index;
pub mod lifecycle;
pub mod log;
pub mod model;
pub mod pending;
pub mod reading;
pub mod reconcile;
pub mod restore;
pub mod save;
pub mod steps;
pub mod summary;
pub mod validate;
pub mod velocity;
pub mod work;

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::Project;
use crate::store::check_id;

use files::{Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};

/// The layout's name.
pub const NAME: &str = "projects";
/// The schema of tasks.json (and of its checkpoints).
pub const SCHEMA_TASKS: &str = "projects-tasks";

/// The layout.
pub struct Projects;

/// The registered instance.
pub static LAYOUT: Projects = Projects;

/// The folder holding the projects.
pub fn base(project: &Path) -> PathBuf {
    project.join(".claude").join("projects")
}

impl Layout for Projects {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        hooks::wants(fact)
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let base = base(&project.root);
        Ok(cx
            .store
            .list_dir(&base)?
            .into_iter()
            .filter(|e| e.is_dir && check_id("project id", &e.name).is_ok())
            .map(|e| StoreRef::new(NAME, &e.name, base.join(&e.name), &project.root))
            .filter(|s| {
                let p = Paths::of(&s.root);
                cx.store.exists(&p.tasks) || cx.store.exists(&p.project)
            })
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        let p = Paths::of(&store.root);
        Ok([
            (p.project, SCHEMA_PROJECT),
            (p.tasks, SCHEMA_TASKS),
            (p.velocity, SCHEMA_VELOCITY),
        ]
        .into_iter()
        .map(|(path, schema)| StateFile::doc(path, schema))
        .collect())
    }

    fn file_issues(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        file: &StateFile,
    ) -> Result<Vec<crate::store::schema::Issue>> {
        validate::file_issues(cx, store, file)
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        summary::of_store(cx, store)
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, start: Option<Start>) -> Result<Reconciled> {
        reconcile::reconcile(cx, store, start)
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        work::active(cx, store)
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        _turn: &Turn<'_>,
    ) -> Result<Reaction> {
        hooks::step(cx, store, unit, input)
    }

    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        work::work(cx, store)
    }

    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        work::show(cx, store, unit)
    }

    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        work::release(cx, store, unit)
    }

    fn note(&self, cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
        work::note(cx, store, unit, text)
    }

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        hooks::on_fact(cx, store, fact)
    }

    fn log_error(&self, cx: &Ctx, store: &StoreRef, message: &str) -> Result<()> {
        files::log_error(cx, &Paths::of(&store.root), message)
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        reconcile::recover(cx, store)
    }
}

/// The project's store, which must exist.
pub fn store_ref(cx: &Ctx, project: &Project, id: &str) -> Result<StoreRef> {
    check_id("project id", id)?;
    let root = base(&project.root).join(id);
    let p = Paths::of(&root);
    if !cx.store.exists(&p.tasks) && !cx.store.exists(&p.project) {
        return Err(Error::NotFound(format!(
            "no project `{}` (create it with `taskhook projects new {id}`)",
            root.display()
        )));
    }
    Ok(StoreRef::new(NAME, id, root, &project.root))
}
