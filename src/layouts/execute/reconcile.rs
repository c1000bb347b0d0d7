//! Resuming a run (SessionStart, `taskhook execute resume`, `taskhook recover`): a corrupt
//! state rebuilt from the copy of the latest valid state taskhook keeps
//! (`.execute-state.json.last-good`, bad bytes moved aside; never from the `.bak` of the last
//! reset, which is older), the copy refreshed when the state was written by someone else, git recovery
//! ([`super::git_evidence`]), the seed's resume rules that need no git, stale temp files removed,
//! everything derived again. Decided on an unlocked read; only a store with something to fix is
//! locked and written.

use std::collections::HashSet;
use std::rc::Rc;

use super::derive::derive;
use super::git;
use super::git_evidence;
use super::model::{RunStatus, Slot, State};
use super::save::{self, Origin};
use super::state::{self, bak_path, corrupt, differs, state_path, Doc, Read, Unread, FILE};
use super::{project_root, summary};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::summary::first_few;
use crate::layouts::{name_of, Reconciled, StoreRef};
use crate::store::fs;

/// What resuming found and did.
#[derive(Debug, Clone, Default)]
pub struct Resumed {
    /// The state after (what is, or in a dry run would be, on disk).
    pub state: Rc<State>,
    /// What changed and why, one line each.
    pub changes: Vec<String>,
    /// What git shows that changes nothing (reported only).
    pub notes: Vec<String>,
    /// Whether the state was rebuilt from the copy of the latest state.
    pub rebuilt: bool,
    /// For a rebuild: what is kept (`keep: …`), dropped (`drop: …`) and not used (`not used:
    /// …`), one line each.
    pub rebuild_report: Vec<String>,
    /// Why the state file was unusable, for a rebuild.
    pub unusable: Option<String>,
    /// Why git recovery did not run, when it did not.
    pub git_skipped: Option<String>,
    /// The branches git has, when git recovery ran.
    pub branches: Option<Vec<String>>,
}

impl Resumed {
    /// The resume plan of the state after, its merge queue checked against git's branches.
    pub fn plan(&self) -> super::plan::Plan {
        let mut p = super::plan::plan(&self.state);
        if let Some(names) = &self.branches {
            p.check_branches(&self.state, names);
        }
        p
    }
}

/// Most task ids a rebuild report names.
const REPORT_TASKS: usize = 20;

/// What the copy a rebuild keeps holds: its time, the run's status and each task's.
fn describe_copy(copy: &State) -> String {
    let n = copy.tasks.len();
    let each = copy
        .tasks
        .iter()
        .map(|(id, t)| format!("{id} {}", t.status()));
    let shown = first_few(each, n, REPORT_TASKS);
    format!(
        "the last valid state taskhook saw ({}, updated {}): run {}, {} task(s): {}",
        state::LAST_GOOD,
        copy.updated_at.as_deref().unwrap_or("at an unknown time"),
        copy.status().as_str(),
        n,
        shown.join(", ")
    )
}

/// Where the copy a rebuild uses came from, for one line: `… from the last valid state
/// taskhook saw (.execute-state.json.last-good, updated T)`.
pub fn copy_source(copy: &State) -> String {
    format!(
        "the last valid state taskhook saw ({}, updated {})",
        state::LAST_GOOD,
        copy.updated_at.as_deref().unwrap_or("at an unknown time")
    )
}

/// What `execute-state.json.bak` is, when it is valid: the state before the last reset.
pub fn bak_note(cx: &Ctx, store: &StoreRef) -> Result<Option<String>> {
    Ok(match state::read(cx, &bak_path(&store.root))? {
        Read::Valid(b) => Some(format!(
            "{}, the state before the last reset (updated {})",
            state::BAK,
            b.state
                .updated_at
                .as_deref()
                .unwrap_or("at an unknown time")
        )),
        _ => None,
    })
}

/// Why a corrupt state stays refused when there is no copy of the latest state.
pub fn no_copy(bak: Option<&str>) -> String {
    let mut why = format!(
        "there is no valid copy of its latest state to rebuild it from ({}): restore it from git or a copy, or fix it by hand",
        state::LAST_GOOD
    );
    if let Some(b) = bak {
        let b = b.replacen(", the state", " is older, the state", 1);
        why.push_str(&format!("; {b}: copy it over only to go back to then"));
    }
    why
}

/// A state rebuilt: the copy, what changed, and what is kept and dropped.
struct Rebuilt {
    state: Doc,
    /// Why the state file is unusable.
    why: String,
    line: String,
    report: Vec<String>,
}

/// The state; or, when it is unusable, the copy of the latest valid state in its place (the
/// bad bytes moved aside when `write`); `None` when there is no state file. An unusable state
/// without a valid copy, or one over the size cap, is refused.
fn load_or_rebuild(cx: &Ctx, store: &StoreRef, write: bool) -> Result<Option<Loaded>> {
    let path = state_path(&store.root);
    // The state the look before read, still in the file: compared as it is read.
    let why = match state::read_shared(cx, &path)? {
        Ok(shared) => return Ok(Some(Loaded::Valid(shared))),
        Err(Unread::Missing) => return Ok(None),
        Err(Unread::TooBig(n)) => return Err(state::too_big(store, n)),
        Err(Unread::Invalid(why)) => why,
    };
    let bak = bak_note(cx, store)?;
    let Read::Valid(copy) = state::read(cx, &state::last_good_path(&store.root))? else {
        return Err(corrupt(
            store,
            format!("{why}; {}", no_copy(bak.as_deref())),
        ));
    };
    let size = cx.store.len(&path).unwrap_or(0);
    let aside = if write {
        cx.store.quarantine(&path)?
    } else {
        fs::with_name_suffix(
            &path,
            "",
            &format!(".corrupt-{}", cx.store.clock().file_stamp()),
        )
    };
    let aside = name_of(&aside);
    let line = format!(
        "{} was unusable ({why}); moved it to {aside} and rebuilt it from {} and git",
        state::FILE,
        copy_source(&copy.state)
    );
    let mut report = vec![
        format!("keep: {}.", describe_copy(&copy.state)),
        format!("drop: the unusable file ({size} bytes), set aside as {aside}, not deleted; anything it held that this copy lacks is not in the rebuild."),
    ];
    if let Some(b) = bak {
        report.push(format!("not used: {b}."));
    }
    Ok(Some(Loaded::Rebuilt(Box::new(Rebuilt {
        state: *copy,
        why,
        line,
        report,
    }))))
}

/// A state as found by [`load_or_rebuild`].
enum Loaded {
    /// The file's state (shared with the invocation's other reads of its bytes) and the digest
    /// of its bytes (not held).
    Valid(state::Shared),
    Rebuilt(Box<Rebuilt>),
}

/// Branch names the state records (for git's log of unmerged work), and those of its tasks not
/// completed: what git's view asks of a branch ([`git::view`]).
struct Branches<'a> {
    state: &'a State,
    recorded: HashSet<&'a str>,
    unfinished: HashSet<&'a str>,
}

impl<'a> Branches<'a> {
    fn of(state: &'a State) -> Branches<'a> {
        let mut b = Branches {
            state,
            recorded: HashSet::new(),
            unfinished: HashSet::new(),
        };
        for t in state.tasks.values() {
            if let Some(name) = t.branch.non_empty() {
                b.recorded.insert(name);
                if t.status() != super::model::TaskStatus::Completed {
                    b.unfinished.insert(name);
                }
            }
        }
        b
    }

    /// Whether the state records the branch.
    fn recorded(&self, name: &str) -> bool {
        self.recorded.contains(name)
    }

    /// Whether it is a branch of a task not completed (`worktree-ID`, or the branch the task
    /// records).
    fn unfinished(&self, name: &str) -> bool {
        let of_task = name
            .strip_prefix("worktree-")
            .and_then(|id| self.state.task(id))
            .is_some_and(|t| t.status() != super::model::TaskStatus::Completed);
        of_task || self.unfinished.contains(name)
    }
}

/// Resumes the store; `lift_stop` continues a run the user stopped (`taskhook execute
/// resume`). `None` when the store has no state file.
pub fn resume(cx: &Ctx, store: &StoreRef, lift_stop: bool) -> Result<Option<Resumed>> {
    let path = state_path(&store.root);
    // A look (shared with the transaction's read, not a copy of its own).
    let peek = match state::shared(cx, &path)? {
        Some(s) => s,
        None => std::rc::Rc::new(
            match state::read(cx, &state::last_good_path(&store.root))? {
                Read::Valid(d) => d.state,
                _ => State::default(),
            },
        ),
    };
    // Git is asked without the state's bytes held (the look read them as a stream): the lock's
    // pass compares the file with their digest as it reads it (issue 23).
    let view = super::git_root(cx, store).map(|root| {
        let b = Branches::of(&peek);
        git::view(&root, &|n| b.recorded(n), &|n| b.unfinished(n))
    });
    let now = cx.store.clock().stamp();
    cx.store.transact(&state::lock_path(&store.root), |pass| {
        let Some(found) = load_or_rebuild(cx, store, pass.writes())? else {
            return Ok((None, false));
        };
        let (origin, before, mut changes, rebuild_report, unusable) = match found {
            Loaded::Valid((digest, state)) => {
                (Origin::Known(digest), state, Vec::new(), Vec::new(), None)
            }
            Loaded::Rebuilt(r) => (
                Origin::Source(r.state.source),
                Rc::new(r.state.state),
                vec![r.line],
                r.report,
                Some(r.why),
            ),
        };
        // The state as read (shared, not copied) and the one copy that is changed.
        let mut s = (*before).clone();
        let rebuilt = unusable.is_some();
        // A valid state someone else wrote (the seed's skill, an edit): keep its copy too,
        // compared and written from the file as it is read (its bytes are not held). A
        // rebuilt state is written to the copy with the state.
        let copy_stale = match origin {
            Origin::Source(_) => false,
            Origin::Known(digest) => {
                !save::copy_is_known(cx, store, digest) && {
                    if pass.writes() {
                        save::refresh_copy_known(cx, store, digest)?;
                    }
                    true
                }
            }
        };
        let temps = if pass.writes() {
            cx.store.clean_stale_temps_of(&path)?
        } else {
            cx.store.stale_temps_of(&path)?
        };
        if !temps.is_empty() {
            changes.push(format!("removed {} abandoned temp file(s)", temps.len()));
        }
        if lift_stop && super::policy::stop_of(&s).is_some() {
            s.status = Some(RunStatus::InProgress);
            s.stop = Slot::Absent;
            changes.push("the run was stopped; it continues".into());
        }
        let mut notes: Vec<String> = state::seed_temp_note(cx, store, s.updated_at.as_deref())
            .into_iter()
            .collect();
        let git_skipped = match &view {
            Some(v) if v.problems.is_empty() || !v.worktrees.is_empty() => {
                let found = git_evidence::apply(&mut s, v, &now);
                changes.extend(found.changes);
                notes.extend(found.notes);
                None
            }
            Some(v) => Some(v.problems.join("; ")),
            None => Some("the project is not in a git repository".to_string()),
        };
        changes.extend(git_evidence::settle(&mut s));
        derive(&before, &mut s, &now);
        let dirty = rebuilt || copy_stale || !temps.is_empty() || differs(&before, &s);
        let s = if pass.writes() && (rebuilt || differs(&before, &s)) {
            save::save_owned(cx, store, origin, Some(&before), s)?
        } else {
            Rc::new(s)
        };
        Ok((
            Some(Resumed {
                state: s,
                changes,
                notes,
                rebuilt,
                rebuild_report,
                unusable,
                branches: view
                    .as_ref()
                    .filter(|_| git_skipped.is_none())
                    .map(|v| v.branches.iter().map(|b| b.name.clone()).collect()),
                git_skipped: git_skipped.clone(),
            }),
            dirty,
        ))
    })
}

/// SessionStart's reconcile: [`resume`] (the stop kept), its summary and what changed.
pub fn reconcile(cx: &Ctx, store: &StoreRef) -> Result<Reconciled> {
    let Some(r) = resume(cx, store, false)? else {
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

/// `taskhook recover`: a resume (the stop kept), said in lines.
pub fn recover(cx: &Ctx, store: &StoreRef) -> Result<String> {
    let path = state_path(&store.root);
    let dry = cx.store.is_dry_run();
    let r = match resume(cx, store, false)? {
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
