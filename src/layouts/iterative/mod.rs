//! Layout `iterative` (seed 003): `.claude/iterative/{slug}/` with `state.json`, `progress.md`
//! (append-only iteration log, the authority on recovery), `guardrails.md`, `context.md`,
//! `brief.md`, `tasks.md` (development) or `plan.md` (knowledge). `archive/` beside the slugs
//! is skipped.
//!
//! state.json is read into a typed model ([`model`]) and written back over the file, so its
//! key order and unknown fields survive. SubagentStop drives each unit through work → confirm
//! → verify → done ([`lifecycle`]), one progress entry per stop ([`hooks`]), with another pass
//! asked for (confirmation, verification, a bound unit that stopped without a signal), always
//! bounded by `max_iterations` and a cap on failed confirmations; a bound launch starts a unit,
//! and units held for a person or waiting on dependencies ([`plan`]) are not moved by
//! subagents. Loads read only the log's tail past state.json's cursor ([`state`]); SessionStart
//! checks state.json against the log in both directions, with git as evidence, rebuilds a
//! missing or corrupt one, and `taskhook recover` salvages a damaged one ([`reconcile`],
//! through [`replay`]); the model is told the context, the guardrails, the current unit and
//! what remains ([`summary`]). [`commands`] holds what `taskhook iterative …` does, [`work`]
//! the agent's units.

pub mod commands;
pub mod git;
pub mod hooks;
pub mod lifecycle;
pub mod log;
pub mod markdown;
pub mod model;
pub mod plan;
pub mod reading;
pub mod reconcile;
pub mod replay;
pub mod state;
pub mod summary;
mod templates;
pub mod work;

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::Project;
use crate::signals::{Signal, SignalKind};
use crate::store::{check_id, folder_lock_path};

use model::{Stage, Status};
use state::load;

/// The schema of state.json.
pub const SCHEMA: &str = "iterative-state";
/// The layout's name.
pub const NAME: &str = "iterative";

/// The layout.
pub struct Iterative;

/// The registered instance.
pub static LAYOUT: Iterative = Iterative;

/// The files of one slug.
pub struct Paths {
    pub root: PathBuf,
    pub state: PathBuf,
    pub progress: PathBuf,
    pub guardrails: PathBuf,
    pub context: PathBuf,
    pub tasks_md: PathBuf,
    pub plan_md: PathBuf,
    pub brief: PathBuf,
}

impl Paths {
    pub fn of(root: &Path) -> Self {
        Paths {
            root: root.to_path_buf(),
            state: root.join("state.json"),
            progress: root.join("progress.md"),
            guardrails: root.join("guardrails.md"),
            context: root.join("context.md"),
            tasks_md: root.join("tasks.md"),
            plan_md: root.join("plan.md"),
            brief: root.join("brief.md"),
        }
    }
}

/// The folder holding the slugs.
pub fn base(project: &Path) -> PathBuf {
    project.join(".claude").join("iterative")
}

/// Whether `path` looks like a slug's state.json (`.claude/iterative/{slug}/state.json`).
fn is_state_path(path: &str) -> bool {
    let p = Path::new(path);
    let up = |n: usize| p.ancestors().nth(n).and_then(Path::file_name);
    p.file_name().is_some_and(|n| n == "state.json")
        && up(2).is_some_and(|n| n == "iterative")
        && up(3).is_some_and(|n| n == ".claude")
}

impl Layout for Iterative {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::SessionStart(_) | Fact::Commit(_) => true,
            Fact::Edit(path) => is_state_path(path),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let base = base(&project.root);
        Ok(cx
            .store
            .list_dir(&base)?
            .into_iter()
            .filter(|e| e.is_dir && e.name != "archive" && check_id("slug", &e.name).is_ok())
            .map(|e| StoreRef::new(NAME, &e.name, base.join(&e.name), &project.root))
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        Ok(vec![StateFile::doc(Paths::of(&store.root).state, SCHEMA)])
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let l = load(cx, store, false)?;
        let mut s = summary::summarize(cx, store, &l)?;
        s.problems = l.notes;
        Ok(s)
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        let Some(l) = reconcile::reconcile_slug(cx, store)? else {
            return Ok(Reconciled::default());
        };
        Ok(Reconciled {
            summary: Some(summary::summarize(cx, store, &l)?),
            changes: l.notes,
            tell_user: Vec::new(),
        })
    }

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        match fact {
            Fact::Commit(c) => hooks::record_commit(cx, store, c),
            _ => Ok(Reaction::default()),
        }
    }

    fn log_error(&self, cx: &Ctx, store: &StoreRef, message: &str) -> Result<()> {
        let p = Paths::of(&store.root);
        cx.store.with_lock(&folder_lock_path(&store.root), || {
            state::append_raw(cx, &p, &state::invalid_note(cx, message))
        })
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

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        if let Some(units) = hooks::units_cheaply(cx, store)? {
            return Ok(units);
        }
        let l = match load(cx, store, false) {
            Ok(l) => l,
            Err(Error::NotFound(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let archived = l.state.phase == Stage::Complete;
        Ok(l.state
            .units()
            .iter()
            .map(|(id, u)| Unit::new(id, !archived && u.status != Status::Done))
            .collect())
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        match input {
            Input::Signal(kind, reason) => {
                let signal = Signal {
                    name: unit.to_string(),
                    kind,
                    reason: reason.map(str::to_string),
                };
                hooks::stop(cx, store, unit, Some(&signal), turn)
            }
            Input::NoSignal => hooks::stop(cx, store, unit, None, turn),
            Input::Launch => hooks::launch(cx, store, unit),
        }
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        reconcile::recover(cx, store)
    }
}

/// Signal kinds by name, for the CLI.
pub fn kind_from_str(s: &str) -> Option<SignalKind> {
    match s.to_ascii_uppercase().as_str() {
        "DONE" => Some(SignalKind::Done),
        "FAILED" => Some(SignalKind::Failed),
        "BLOCKED" => Some(SignalKind::Blocked),
        _ => None,
    }
}
