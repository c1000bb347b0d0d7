//! Layout `iterative` (seed 003): `.claude/iterative/{slug}/` with `state.json`, `progress.md`
//! (append-only iteration log, the authority on recovery), `guardrails.md`, `context.md`,
//! `brief.md`, `tasks.md` (development) or `plan.md` (knowledge). `archive/` beside the slugs
//! is skipped.
//!
//! SubagentStop drives each unit through work → confirm → verify → done ([`lifecycle`]), one
//! progress entry per stop ([`hooks`]), with another pass asked for (confirmation,
//! verification, a bound unit that stopped without a signal), always bounded by
//! `max_iterations` and a cap on failed confirmations; a bound launch starts a unit, and units
//! held for a person or waiting on dependencies are not moved by subagents. Loads read only the
//! log's tail past state.json's cursor ([`state`]); SessionStart checks state.json against the
//! log in both directions, with git as evidence ([`reconcile`]), rebuilds a missing or corrupt one
//! ([`rebuild`]), and tells the model the context, the guardrails, the current unit and what
//! remains ([`summary`]). [`commands`] and [`admin`] hold what `taskhook iterative …` does;
//! [`recover`] salvages a damaged state.json.

pub mod admin;
pub mod commands;
pub mod git;
pub mod hooks;
pub mod lifecycle;
pub mod log;
pub mod markdown;
pub mod model;
pub mod plan;
pub mod rebuild;
pub mod reconcile;
pub mod recover;
pub mod state;
pub mod summary;
mod templates;
pub mod work;

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Commit, Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::Project;
use crate::signals::{Signal, SignalKind};
use crate::store::{check_id, folder_lock_path};

use model::{Mode, Stage, Status};
use state::{load, save, Slug};

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

/// Records a commit (`hash: message`) in a slug whose current unit is not done yet (a subagent
/// commits during its first iteration, while the unit is still `pending`). Decided on an
/// unlocked read first; only a commit to record takes the lock (re-checked under it).
fn record_commit(cx: &Ctx, store: &StoreRef, c: &Commit<'_>) -> Result<Reaction> {
    let wants = |l: &Slug| {
        let Some(cur) = l.state.current() else {
            return false;
        };
        let status = l.state.status_of(cur);
        let in_work = status == Status::Pending || status.in_work();
        let known = l.state.commits().iter().any(|x| x.starts_with(&c.hash));
        in_work && !known
    };
    cx.store
        .transact(&folder_lock_path(&store.root), |pass| {
            let mut l = match load(cx, store, pass.writes()) {
                Ok(l) => l,
                Err(Error::NotFound(_)) => return Ok(((), false)),
                Err(e) => return Err(e),
            };
            let record = wants(&l);
            if pass.writes() {
                if record {
                    let commits = l.state.commits.get_or_insert_with(Vec::new);
                    commits.push(format!("{}: {}", c.hash, c.message));
                    l.state.updated = Some(cx.store.clock().stamp());
                    l.dirty = true;
                }
                save(cx, store, &mut l)?;
            }
            Ok(((), record))
        })
        .map(|()| Reaction::default())
}

/// What [`units_cheaply`] reads of state.json: no more than names need.
#[derive(serde::Deserialize)]
struct Lite {
    mode: Option<Mode>,
    phase: Option<Stage>,
    tasks: Option<std::collections::HashMap<String, LiteUnit>>,
    phases: Option<std::collections::HashMap<String, LiteUnit>>,
    taskhook: Option<LiteCursor>,
}

#[derive(serde::Deserialize)]
struct LiteUnit {
    status: Option<Status>,
}

#[derive(serde::Deserialize)]
struct LiteCursor {
    progress_bytes: u64,
}

/// The units a `<task>` or `<signal>` name can resolve to, read without a full load: when
/// state.json has a cursor and progress.md holds nothing past it, its units (and the plan's)
/// are all there are. `None` when a full load must decide (no cursor, a tail to apply, a file
/// that does not parse).
pub(crate) fn units_cheaply(cx: &Ctx, store: &StoreRef) -> Result<Option<Vec<Unit>>> {
    let p = Paths::of(&store.root);
    let Some(bytes) = cx.store.read(&p.state)? else {
        return Ok(None);
    };
    let Ok(lite) = serde_json::from_slice::<Lite>(&bytes) else {
        return Ok(None);
    };
    let log_len = cx.store.len(&p.progress).unwrap_or(0);
    if lite.taskhook.as_ref().map(|c| c.progress_bytes) != Some(log_len) {
        return Ok(None);
    }
    let units = if lite.mode == Some(Mode::Knowledge) {
        lite.phases
    } else {
        lite.tasks
    };
    let Some(units) = units else {
        return Ok(None);
    };
    let archived = lite.phase == Some(Stage::Complete);
    let plan = state::read_plan(cx, &p)?;
    let mut out: Vec<Unit> = units
        .iter()
        .map(|(id, u)| Unit {
            id: id.clone(),
            active: !archived && u.status != Some(Status::Done),
        })
        .collect();
    out.extend(
        plan.units
            .iter()
            .filter(|u| !units.contains_key(&u.id))
            .map(|u| Unit {
                id: u.id.clone(),
                active: !archived,
            }),
    );
    Ok(Some(out))
}

/// SessionStart's work for one slug: decided on an unlocked read; only a slug with something to
/// fix (state.json to rebuild or catch up, stale temp files) is locked and written.
fn reconcile_slug(cx: &Ctx, store: &StoreRef) -> Result<Option<Slug>> {
    let state_file = Paths::of(&store.root).state;
    cx.store.transact(&folder_lock_path(&store.root), |pass| {
        let removed = if pass.writes() {
            cx.store.clean_stale_temps_of(&state_file)?
        } else {
            cx.store.stale_temps_of(&state_file)?
        };
        let mut l = match load(cx, store, pass.writes()) {
            Ok(l) => l,
            Err(Error::NotFound(_)) => return Ok((None, false)),
            Err(e) => return Err(e),
        };
        let dirty = l.dirty || !removed.is_empty();
        if pass.writes() {
            if !removed.is_empty() {
                l.notes
                    .push(format!("removed {} abandoned temp file(s)", removed.len()));
            }
            save(cx, store, &mut l)?;
        }
        Ok((Some(l), dirty))
    })
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
            .map(|e| StoreRef {
                project: project.root.clone(),
                layout: NAME,
                root: base.join(&e.name),
                id: e.name,
            })
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        Ok(vec![StateFile {
            path: Paths::of(&store.root).state,
            schema: SCHEMA,
            json_lines: false,
        }])
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let l = load(cx, store, false)?;
        let mut s = summary::summarize(cx, store, &l)?;
        s.problems = l.notes;
        Ok(s)
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        let Some(l) = reconcile_slug(cx, store)? else {
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
            Fact::Commit(c) => record_commit(cx, store, c),
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
        if let Some(units) = units_cheaply(cx, store)? {
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
            .map(|(id, u)| Unit {
                active: !archived && u.status != Status::Done,
                id: id.clone(),
            })
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
        recover::recover(cx, store)
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
