//! Layout `execute` (seed 001): `{tasks_path}/execute-state.json`, schema v2.0, found at
//! `docs/tasks/*/execute-state.json` and at the paths `.claude/taskhook.json` lists under
//! `execute`. A state written by the seed's own `/execute` skill is read and advanced as it is.
//!
//! Rooms: [`state`] (reading, paths, task and layer helpers), [`lifecycle`] (the pure step:
//! launch, DONE twice, FAILED with retries and abandonment, the 8-block limit, merges,
//! commits), [`derive`](mod@derive) (layers, current layer and batch, global status, queue, metrics,
//! recomputed on every write), [`plan`] (the seed's resume tree), [`git`] and [`recovery`]
//! (what git shows, applied), [`resume`] (SessionStart, `resume`, corrupt-state rebuild),
//! [`messages`] (what the subagent and the main agent hear), [`summary`], [`init`] and
//! [`commands`] (what `taskhook execute …` does).

pub mod commands;
pub mod derive;
pub mod git;
pub mod git_evidence;
pub mod init;
pub mod lifecycle;
pub mod messages;
pub mod model;
pub mod plan;
pub mod policy;
pub mod reconcile;
pub mod state;
pub mod summary;
pub mod work;

use std::path::{Component, Path, PathBuf};

use crate::agents;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Commit, Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit, WorkUnit,
};
use crate::project::{self, Project};
use crate::signals::{split_name, SignalKind};
use crate::store::{check_id, fs};

use lifecycle::{Event, Failure, Outcome, Who};
use model::State;
use state::{load, state_path, Doc, Read, FILE, SCHEMA};

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

/// Whether `parent/name` is a real folder (a symlink is not).
fn real_dir(cx: &Ctx, parent: &Path, name: &str) -> bool {
    cx.store
        .list_dir(parent)
        .map(|es| es.iter().any(|e| e.name == name && e.is_dir))
        .unwrap_or(false)
}

/// A path `.claude/taskhook.json` lists under `execute`, as taskhook takes it.
enum Listed {
    Store(StoreRef),
    /// Not a store: why, in one line.
    Refused(PathBuf, String),
}

/// The store at a path `.claude/taskhook.json` lists: relative (or absolute inside the
/// project), inside the project through real folders only, named `execute-state.json`.
fn listed_store(cx: &Ctx, root: &Path, listed: &str) -> Listed {
    let head = format!("`.claude/taskhook.json` lists {listed:?} under \"execute\"");
    let raw = Path::new(listed);
    let rel = if raw.is_absolute() {
        raw.strip_prefix(root).unwrap_or(raw)
    } else {
        raw
    };
    if rel.is_absolute()
        || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        || rel.as_os_str().is_empty()
    {
        return Listed::Refused(
            raw.to_path_buf(),
            format!(
                "{head}: refused, it is outside the project ({}); taskhook reads and writes runs only inside the project: move the run into it (e.g. docs/tasks/SLUG/) and list that path",
                root.display()
            ),
        );
    }
    let full = root.join(rel);
    if rel.file_name().is_none_or(|n| n != FILE) {
        return Listed::Refused(
            full,
            format!("{head}, which is not a run: the file must be named {FILE}"),
        );
    }
    let missing = || Listed::Refused(full.clone(), format!("{head}, which does not exist"));
    let mut at = root.to_path_buf();
    for c in rel.parent().unwrap_or(Path::new("")).components() {
        at.push(c);
        if fs::is_symlink(&at) {
            let shown = at.strip_prefix(root).unwrap_or(&at).display().to_string();
            return Listed::Refused(
                full.clone(),
                format!("{head}: refused, {shown} is a symbolic link and taskhook never reads or writes a run through a link (if you did not make it, remove it)"),
            );
        }
        if !fs::is_dir(&at) {
            return missing();
        }
    }
    if at == root || !cx.store.exists(&state_path(&at)) {
        return missing();
    }
    Listed::Store(StoreRef {
        project: root.to_path_buf(),
        layout: NAME,
        id: at
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        root: at,
    })
}

/// Most entries of `docs/tasks/` looked at for runs behind links.
const MAX_LINKED_LOOKS: usize = 1000;

/// Run folders under `docs/tasks/` that taskhook does not track because a link leads to them
/// (`docs`, `docs/tasks` or the run's folder itself), one problem each.
fn linked_run_folders(root: &Path) -> Vec<(PathBuf, String)> {
    let has_run = |dir: &Path| fs::is_file(&state_path(dir));
    let why = "taskhook never reads or writes a run through a link";
    let fix = "(if you did not make it, remove it)";
    let docs = root.join("docs");
    let tasks = docs.join("tasks");
    for link in [&docs, &tasks] {
        if fs::is_symlink(link) {
            let runs = fs::list_dir(&tasks)
                .unwrap_or_default()
                .iter()
                .take(MAX_LINKED_LOOKS)
                .filter(|e| has_run(&tasks.join(&e.name)))
                .count();
            if runs == 0 {
                return Vec::new();
            }
            let shown = link
                .strip_prefix(root)
                .unwrap_or(link)
                .display()
                .to_string();
            return vec![(
                link.to_path_buf(),
                format!("{shown} is a symbolic link to {runs} run folder(s): {why}, so they are not tracked {fix}"),
            )];
        }
    }
    fs::list_dir(&tasks)
        .unwrap_or_default()
        .into_iter()
        .take(MAX_LINKED_LOOKS)
        .map(|e| tasks.join(&e.name))
        .filter(|d| fs::is_symlink(d) && has_run(d))
        .map(|d| {
            let shown = d.strip_prefix(root).unwrap_or(&d).display().to_string();
            let text = format!(
                "{shown} is a symbolic link to a run folder: {why}, so this run is not tracked {fix}"
            );
            (d, text)
        })
        .collect()
}

/// Longest failure message, details or feedback kept, in characters (a subagent may paste a
/// whole test log into `<details>`).
pub const MAX_REPORT_CHARS: usize = 4000;

/// A report cut to [`MAX_REPORT_CHARS`], with a marker where it was cut.
pub fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_REPORT_CHARS) {
        Some((at, _)) => format!("{}[… truncated by taskhook]", &text[..at]),
        None => text.to_string(),
    }
}

/// Applies one lifecycle event to a task under the lock (decided on an unlocked read first);
/// returns the outcome and the state after, `None` when the store has no such task.
pub fn apply_event(
    cx: &Ctx,
    store: &StoreRef,
    id: &str,
    ev: Event<'_>,
    who: Who<'_>,
) -> Result<Option<(Outcome, State)>> {
    let now = cx.store.clock().stamp();
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        let Doc {
            mut doc,
            state: before,
        } = load(cx, store)?;
        if before.task(id).is_none() {
            return Ok((None, false));
        }
        let mut s = before.clone();
        let out = lifecycle::step(&mut s, id, ev, who, &now);
        if matches!(
            out.effect,
            lifecycle::Effect::Denied(_)
                | lifecycle::Effect::Unchanged
                | lifecycle::Effect::NotVerification { .. }
        ) {
            // A refused or empty step writes nothing (not even a recount).
            return Ok((Some((out, s)), false));
        }
        derive::derive(&before, &mut s, &now);
        let changed = state::differs(&before, &s);
        if pass.writes() && changed {
            state::save(cx, store, &mut doc, &s)?;
        }
        Ok((Some((out, s)), changed))
    })
}

/// Where git has the task's worktree (`.worktrees/ID`, or under the state's `worktree_dir`) and
/// its `worktree-ID` branch, for a launch.
fn git_place(cx: &Ctx, store: &StoreRef, id: &str) -> (Option<String>, Option<String>) {
    let Some(root) = git_root(cx, store).filter(|_| check_id("task id", id).is_ok()) else {
        return (None, None);
    };
    let Some(worktrees) = git::worktrees(&root) else {
        return (None, None);
    };
    let dir = load(cx, store).ok().and_then(|d| d.state.worktree_dir);
    let wanted = format!("worktree-{id}");
    let found = worktrees.iter().skip(1).find(|w| {
        let p = Path::new(&w.path);
        p.ends_with(Path::new(".worktrees").join(id))
            || dir.as_ref().is_some_and(|d| p == Path::new(d).join(id))
    });
    let branch = match found.and_then(|w| w.branch.clone()) {
        Some(b) if b == wanted => Some(b),
        _ => git::has_branch(&root, &wanted).then_some(wanted),
    };
    (found.map(|w| w.path.clone()), branch)
}

/// The task a commit belongs to: by its branch (the task's `branch`, or `worktree-ID`), else by
/// the subagent's binding, else the one task its message names.
fn commit_task(
    state: &State,
    store: &StoreRef,
    c: &Commit<'_>,
    bound: &[String],
) -> Option<String> {
    if let Some(id) = c
        .branch
        .as_deref()
        .and_then(|b| git_evidence::task_of_branch(state, b))
    {
        return Some(id);
    }
    let mut from_binding = bound.iter().filter_map(|name| {
        let n = split_name(name);
        let here = n.store.as_deref().is_none_or(|s| s == store.id);
        (here && state.tasks.contains_key(&n.id)).then_some(n.id)
    });
    if let (Some(one), None) = (from_binding.next(), from_binding.next()) {
        return Some(one);
    }
    git_evidence::named_task(state, &c.message)
}

fn record_commit(cx: &Ctx, store: &StoreRef, c: &Commit<'_>) -> Result<Reaction> {
    let bound = match c.agent_id {
        Some(a) => agents::binding(cx, &project_root(cx, store), a).unwrap_or_default(),
        None => Vec::new(),
    };
    let now = cx.store.clock().stamp();
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        let Doc {
            mut doc,
            state: before,
        } = load(cx, store)?;
        let Some(id) = commit_task(&before, store, c, &bound) else {
            return Ok(((), false));
        };
        let mut s = before.clone();
        if !lifecycle::record_commit(&mut s, &id, &c.hash, None, &now) {
            return Ok(((), false));
        }
        if let Some(b) = c
            .branch
            .as_deref()
            .filter(|b| *b == format!("worktree-{id}"))
        {
            if s.task(&id).and_then(|t| t.branch.non_empty()).is_none() {
                let wt = project_root(cx, store).join(".worktrees").join(&id);
                let wt = (check_id("task id", &id).is_ok() && fs::is_file(&wt.join(".git")))
                    .then(|| wt.display().to_string());
                lifecycle::record_worktree(&mut s, &id, wt.as_deref(), Some(b));
            }
        }
        derive::derive(&before, &mut s, &now);
        if pass.writes() {
            state::save(cx, store, &mut doc, &s)?;
        }
        Ok(((), true))
    })?;
    Ok(Reaction::default())
}

fn record_merge(cx: &Ctx, store: &StoreRef, branches: &[String]) -> Result<Reaction> {
    let now = cx.store.clock().stamp();
    let (done, after) = cx.store.transact(&state::lock_path(&store.root), |pass| {
        let Doc {
            mut doc,
            state: before,
        } = load(cx, store)?;
        let mut s = before.clone();
        let mut done = Vec::new();
        for b in branches {
            let Some(id) = git_evidence::task_of_branch(&s, b) else {
                continue;
            };
            let o = lifecycle::step(&mut s, &id, Event::Merged, Who::default(), &now);
            if let lifecycle::Effect::Merged { was, ahead } = o.effect {
                done.push((id, ahead, was));
            }
        }
        if done.is_empty() {
            return Ok(((done, s), false));
        }
        derive::derive(&before, &mut s, &now);
        if pass.writes() {
            state::save(cx, store, &mut doc, &s)?;
        }
        Ok(((done, s), true))
    })?;
    Ok(Reaction {
        context: messages::merged(store, &done, &after),
        ..Default::default()
    })
}

/// After an edit of the store's state file (Claude's Write or Edit tool: the seed's skill
/// writing it), a valid state is copied as the latest ([`state::LAST_GOOD`]); an invalid one is
/// the edit check's to report, and leaves the copy as it was.
fn copy_after_edit(cx: &Ctx, store: &StoreRef, edited: &Path) -> Result<Reaction> {
    let path = state_path(&store.root);
    if edited != path {
        return Ok(Reaction::default());
    }
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        if !matches!(state::read(cx, &path)?, Read::Valid(_)) {
            return Ok(((), false));
        }
        let bytes = cx
            .store
            .read_capped(&path, state::MAX_STATE_BYTES)?
            .unwrap_or_default();
        if state::copy_is_current(cx, store, &bytes)? {
            return Ok(((), false));
        }
        if pass.writes() {
            state::refresh_copy(cx, store, &bytes)?;
        }
        Ok(((), true))
    })?;
    Ok(Reaction::default())
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
        let root = &project.root;
        let mut out: Vec<StoreRef> = Vec::new();
        let docs = root.join("docs");
        if real_dir(cx, root, "docs") && real_dir(cx, &docs, "tasks") {
            let tasks = docs.join("tasks");
            for e in cx.store.list_dir(&tasks)? {
                let dir = tasks.join(&e.name);
                if e.is_dir
                    && check_id("store", &e.name).is_ok()
                    && cx.store.exists(&state_path(&dir))
                {
                    out.push(StoreRef {
                        project: root.to_path_buf(),
                        layout: NAME,
                        id: e.name,
                        root: dir,
                    });
                }
            }
        }
        for rel in &project.config(&cx.store)?.execute {
            if let Listed::Store(s) = listed_store(cx, root, rel) {
                if !out.iter().any(|o| o.root == s.root) {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }

    /// Paths `.claude/taskhook.json` lists that taskhook refuses (outside the project, through
    /// a link, not named execute-state.json, missing), and run folders under `docs/tasks/`
    /// reached through a link.
    fn refused(&self, cx: &Ctx, project: &Project) -> Result<Vec<Summary>> {
        let root = &project.root;
        let mut out = Vec::new();
        for rel in &project.config(&cx.store)?.execute {
            if let Listed::Refused(path, why) = listed_store(cx, root, rel) {
                out.push(Summary::problem(NAME, rel, path, why));
            }
        }
        for (path, why) in linked_run_folders(root) {
            let id = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.push(Summary::problem(NAME, &id, path, why));
        }
        Ok(out)
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        Ok(vec![StateFile {
            path: state_path(&store.root),
            schema: SCHEMA,
            json_lines: false,
        }])
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let path = state_path(&store.root);
        let state = match state::read(cx, &path)? {
            Read::Valid(d) => d.state,
            Read::Missing => return Ok(Summary::problem(NAME, &store.id, path, "missing".into())),
            Read::TooBig(n) => {
                return Ok(Summary::problem(
                    NAME,
                    &store.id,
                    path,
                    state::too_big(store, n).one_line(),
                ))
            }
            Read::Invalid(why) => {
                let fix = match state::read(cx, &state::last_good_path(&store.root))? {
                    Read::Valid(copy) => format!(
                        "the next session start (or `taskhook execute resume`) rebuilds it from {} and git",
                        reconcile::copy_source(&copy.state)
                    ),
                    _ => reconcile::no_copy(reconcile::bak_note(cx, store)?.as_deref()),
                };
                return Ok(Summary::problem(
                    NAME,
                    &store.id,
                    path,
                    format!("{FILE} is corrupt ({why}); {fix}"),
                ));
            }
        };
        let mut s = state.clone();
        derive::derive(&state, &mut s, &cx.store.clock().stamp());
        // No git here: `taskhook status` and the status line stay cheap (SessionStart and
        // `taskhook execute status` check the merge queue against git's branches).
        let p = plan::plan(&s);
        Ok(summary::summarize(
            store,
            &project_root(cx, store),
            &s,
            &p,
            state::seed_temp_note(cx, store, state.updated_at.as_deref())
                .into_iter()
                .collect(),
        ))
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        let Some(r) = reconcile::resume(cx, store, false)? else {
            return Ok(Reconciled::default());
        };
        let p = r.plan();
        let tell_user = r
            .changes
            .iter()
            .filter(|_| r.rebuilt)
            .take(1)
            .map(|c| format!("taskhook: execute {}: {c}", store.id))
            .collect();
        Ok(Reconciled {
            summary: Some(summary::summarize(
                store,
                &project_root(cx, store),
                &r.state,
                &p,
                r.notes,
            )),
            changes: r.changes,
            tell_user,
        })
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let s = load(cx, store)?.state;
        Ok(s.tasks
            .iter()
            .map(|(id, t)| Unit {
                active: t.status().is_active(),
                id: id.clone(),
            })
            .collect())
    }

    /// The task's status (`None` when the state cannot be read): a notice about a task whose
    /// status changed since is not delivered.
    fn unit_status(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Option<String>> {
        Ok(match state::read(cx, &state_path(&store.root))? {
            Read::Valid(d) => Some(
                d.state
                    .task(unit)
                    .map_or("gone", |t| t.status().as_str())
                    .to_string(),
            ),
            _ => None,
        })
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let details = turn.message.details.as_deref().map(cap);
        let feedback = turn.message.feedback.as_deref().map(cap);
        let message = match input {
            Input::Signal(SignalKind::Failed, reason) => Some(cap(reason
                .or_else(|| details.as_deref().and_then(|d| d.lines().next()))
                .unwrap_or("failed without a message"))),
            _ => None,
        };
        let (worktree, branch) = match input {
            Input::Launch => git_place(cx, store, unit),
            _ => (None, None),
        };
        let bound_before = match input {
            Input::Launch => {
                let names = [unit.to_string(), format!("{}/{unit}", store.id)];
                agents::agents_bound_to(cx, &project_root(cx, store), &names).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let ev = match input {
            Input::Launch => Event::Launch {
                worktree: worktree.as_deref(),
                branch: branch.as_deref(),
                bound_before: &bound_before,
            },
            Input::NoSignal => Event::NoSignal,
            Input::Signal(SignalKind::Done, _) => Event::Done,
            Input::Signal(SignalKind::Blocked, reason) => Event::Blocked(reason),
            Input::Signal(SignalKind::Failed, _) => Event::Failed(Failure {
                message: message.as_deref().unwrap_or_default(),
                details: details.as_deref(),
                feedback: feedback.as_deref(),
            }),
        };
        let who = Who {
            bound: turn.bound && input != Input::Launch,
            agent: turn.agent_id,
            by_hand: turn.by_hand,
        };
        match apply_event(cx, store, unit, ev, who)? {
            Some((out, s)) => Ok(messages::reply(
                store,
                unit,
                &out,
                &s,
                messages::Origin::Subagent,
            )),
            None => Ok(Reaction::default()),
        }
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
        match fact {
            Fact::Commit(c) => record_commit(cx, store, c),
            Fact::Merge(branches) => record_merge(cx, store, branches),
            Fact::Edit(path) => copy_after_edit(cx, store, Path::new(path)),
            _ => Ok(Reaction::default()),
        }
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let path = state_path(&store.root);
        let dry = cx.store.is_dry_run();
        let r = match reconcile::resume(cx, store, false)? {
            None => {
                return Err(Error::NotFound(format!(
                    "`{}` does not exist; nothing to recover",
                    path.display()
                )))
            }
            Some(r) => r,
        };
        let mut lines = match (&r.unusable, dry) {
            (Some(why), true) => vec![format!(
                "Would rebuild {}: {FILE} is unusable ({why}).",
                path.display()
            )],
            (None, _) if r.changes.is_empty() => {
                return Ok(format!(
                    "{} is valid and agrees with git; nothing to recover.",
                    path.display()
                ))
            }
            (_, true) => vec![format!(
                "Would recover {}: {}.",
                path.display(),
                r.changes.join("; ")
            )],
            (_, false) => vec![format!(
                "Recovered {}: {}.",
                path.display(),
                r.changes.join("; ")
            )],
        };
        lines.extend(r.rebuild_report.iter().map(|l| format!("  {l}")));
        if dry && r.unusable.is_some() {
            lines.extend(r.changes.iter().skip(1).map(|c| format!("  then: {c}.")));
        }
        Ok(lines.join("\n"))
    }
}
