//! Layout `execute` (seed 001): `{tasks_path}/execute-state.json`, schema v2.0, found at
//! `docs/tasks/*/execute-state.json` and at the paths `.claude/taskhook.json` lists under
//! `execute`. A state written by the seed's own `/execute` skill is read and advanced as it is.
//!
//! Rooms: [`model`] (the typed state: status enums, unknown fields and key order kept),
//! [`state`] (reading and writing the file, paths, layer helpers), [`lifecycle`] (the pure
//! step: launch, DONE twice, FAILED with retries and abandonment, the 8-block limit, merges,
//! commits), [`hooks`] (facts → one step under the lock → a reaction), [`reconcile`]
//! (SessionStart, `resume`, `recover`, the corrupt-state rebuild) with [`git`] and
//! [`git_evidence`] (what git shows, applied), [`summary`], [`commands`] (what `taskhook
//! execute …` does) and [`work`] (the agent's units); the layout's own: [`discover`] (where runs
//! are), [`derive`](mod@derive) (layers, current layer and batch, global status, queue,
//! metrics, recomputed on every write), [`policy`] (whether a task may be launched), [`plan`]
//! (the seed's resume tree), [`messages`] (what the subagent and the main agent hear) and
//! [`init`].

pub mod commands;
pub mod derive;
pub mod discover;
pub mod git;
pub mod git_evidence;
mod git_names;
pub mod hooks;
pub mod init;
pub mod lifecycle;
pub mod messages;
pub mod model;
pub mod plan;
pub mod policy;
pub mod reading;
pub mod reconcile;
pub mod save;
pub mod state;
pub mod summary;
pub mod work;

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::{self, Project};

use model::State;
use state::{state_path, FILE, SCHEMA};

/// The layout's name.
pub const NAME: &str = "execute";

/// The layout.
pub struct Execute;

/// The registered instance.
pub static LAYOUT: Execute = Execute;

/// The project a store belongs to (its folder, walked up to `.claude/` or `.git`).
pub fn project_root(cx: &Ctx, store: &StoreRef) -> PathBuf {
    project::walk_up(&cx.store, &store.root, &cx.home).unwrap_or_else(|| store.root.clone())
}

/// The main worktree of the store's git repository.
pub fn git_root(cx: &Ctx, store: &StoreRef) -> Option<PathBuf> {
    project::git_root(&cx.store, &project_root(cx, store), &cx.home)
}

/// The resume plan of a derived state, its merge queue checked against the branches git has
/// (when the project is in a git repository and the queue has entries to merge).
pub fn plan_with_git(cx: &Ctx, store: &StoreRef, state: &State) -> plan::Plan {
    let mut p = plan::plan(state);
    if !p.merge.is_empty() {
        if let Some(names) = git_root(cx, store).and_then(|r| git::branch_names(&r)) {
            p.check_branches(state, &names);
        }
    }
    p
}

impl Layout for Execute {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::SessionStart(_) | Fact::Commit(_) | Fact::Merge(_) => true,
            Fact::Edit(path) => Path::new(path).file_name().is_some_and(|n| n == FILE),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        discover::stores(cx, project)
    }

    /// Paths `.claude/taskhook.json` lists that taskhook refuses (outside the project, through
    /// a link, not named execute-state.json, missing), and run folders under `docs/tasks/`
    /// reached through a link.
    fn refused(&self, cx: &Ctx, project: &Project) -> Result<Vec<Summary>> {
        discover::refused(cx, project)
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        Ok(vec![StateFile::doc(state_path(&store.root), SCHEMA)])
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        summary::of_store(cx, store)
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        reconcile::reconcile(cx, store)
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let units = |s: &model::State| -> Vec<Unit> {
            s.tasks
                .iter()
                .map(|(id, t)| Unit::new(id, t.status().is_active()))
                .collect()
        };
        // Read to look only: the step that follows takes the same parse over.
        Ok(match state::shared(cx, &state_path(&store.root))? {
            Some(d) => units(&d),
            None => units(&state::load_shared(cx, store)?.1),
        })
    }

    /// The task's status (`None` when the state cannot be read): a notice about a task whose
    /// status changed since is not delivered.
    fn unit_status(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Option<String>> {
        Ok(state::shared(cx, &state_path(&store.root))?.map(|d| {
            d.task(unit)
                .map_or("gone", |t| t.status().as_str())
                .to_string()
        }))
    }

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

    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        work::work(cx, store)
    }

    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        work::show(cx, store, unit)
    }

    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        work::release(cx, store, unit)
    }

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        hooks::on_fact(cx, store, fact)
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        reconcile::recover(cx, store)
    }
}
