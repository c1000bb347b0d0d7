//! Git recovery (the seed's "State Recovery" steps 1–2), as a pure function of the state and
//! what git shows ([`super::git::View`]):
//!
//! - a merge git shows done (a merge commit on HEAD's first-parent line naming the task's
//!   branch or id, or its branch merged with commits of its own) completes the task, when it
//!   happened after the run started and after the task's last reset;
//! - a worktree or branch the state names but git lacks is reported and cleared; an
//!   `in_progress` or `verifying` task whose worktree is gone fails that attempt with an error
//!   saying so (abandoned when it was the 5th);
//! - a worktree or `worktree-ID` branch git has for a running task is recorded;
//! - commits git has on `worktree-ID` branches, or naming exactly one task id, that no task
//!   records are added (their attempt found from the errors' timestamps);
//! - worktrees and `worktree-*` branches of tasks the state does not list are reported.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use chrono::{DateTime, Utc};

use super::git::{Merge, View};
use super::git_names::{Hashes, Names, WORKTREE_PREFIX};
use super::lifecycle::{self, Event, Failure, Who};
use super::model::{ErrorRecord, Slot, State, Task, TaskStatus};
use super::state::MAX_ATTEMPTS;
use crate::store::clock::{parse_time, stamp};

/// What recovery changed, and what it only reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub changes: Vec<String>,
    pub notes: Vec<String>,
}

/// The branch names a task's work lives on.
fn branches_of(state: &State, id: &str) -> Vec<String> {
    let mut out = vec![format!("worktree-{id}")];
    if let Some(b) = state.task(id).and_then(|t| t.branch.non_empty()) {
        if !out.iter().any(|x| x == b) {
            out.push(b.to_string());
        }
    }
    out
}

/// The task a branch belongs to (its `branch` field, or `worktree-ID`).
pub fn task_of_branch(state: &State, branch: &str) -> Option<String> {
    Names::of(state)
        .task_of_branch(state, branch)
        .map(|id| id.to_string())
}

/// The one task id a text names, if exactly one.
pub fn named_task(state: &State, text: &str) -> Option<String> {
    Names::of(state)
        .named_task(state, text)
        .map(|id| id.to_string())
}

/// Git evidence for a task counts only after this time: the run's start and the task's last
/// reset (an old merge of the same id must not complete a task that runs again).
fn evidence_after(state: &State, id: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let start = state.started_at.as_deref().and_then(parse_time)?;
    let reset = state
        .task(id)
        .and_then(|t| t.resets().last())
        .and_then(|r| parse_time(&r.reset_at));
    Some(reset.map_or(start, |r| r.max(start)))
}

fn after(time: &str, bound: chrono::DateTime<chrono::Utc>) -> bool {
    parse_time(time).is_some_and(|t| t >= bound)
}

/// Applies what git shows to the state.
pub fn apply(state: &mut State, view: &View, now: &str) -> Found {
    let mut found = Found::default();
    merges(state, view, now, &mut found);
    worktrees(state, view, now, &mut found);
    commits(state, view, &mut found);
    strangers(state, view, &mut found);
    found
}

/// Merges git shows done complete their tasks. The merge commits are read once, each for the
/// tasks it names ([`Names::tasks_in`]); a task is then judged as before, by the first merge
/// naming it after its bound, else by a merged branch of its own.
fn merges(state: &mut State, view: &View, now: &str, found: &mut Found) {
    let merged_branches = view.branches.iter().filter(|b| b.merged);
    if view.merges.is_empty() && merged_branches.clone().next().is_none() {
        return;
    }
    let names = Names::of(state);
    // The first merge (newest first, as git lists them) naming each task after its bound.
    let mut by_commit: HashMap<Rc<str>, &Merge> = HashMap::new();
    let mut bounds: HashMap<Rc<str>, Option<DateTime<Utc>>> = HashMap::new();
    for m in &view.merges {
        for id in names.tasks_in(state, &m.subject) {
            if by_commit.contains_key(&id) {
                continue;
            }
            let bound = *bounds
                .entry(Rc::clone(&id))
                .or_insert_with(|| evidence_after(state, &id));
            if bound.is_some_and(|b| after(&m.time, b)) {
                by_commit.insert(id, m);
            }
        }
    }
    // The tasks some merged branch is a name of.
    let mut candidates: HashSet<Rc<str>> = by_commit.keys().cloned().collect();
    for b in merged_branches {
        candidates.extend(names.tasks_of_branch(state, &b.name));
    }
    for i in 0..state.tasks.len() {
        let Some((id, t)) = state.tasks.at(i) else {
            break;
        };
        if t.status() == TaskStatus::Completed || !candidates.contains(id) {
            continue;
        }
        let id = Rc::clone(id);
        let Some(bound) = evidence_after(state, &id) else {
            continue;
        };
        let by_branch = branches_of(state, &id)
            .iter()
            .filter_map(|b| view.branch(b))
            .find(|b| b.merged && after(&b.tip_time, bound));
        let (why, when) = match (by_commit.get(&id), by_branch) {
            (Some(m), _) => (format!("merge commit \"{}\"", m.subject), m.time.as_str()),
            (None, Some(b)) => (
                format!("{} is merged into HEAD", b.name),
                b.merged_at.as_deref().unwrap_or(&b.tip_time),
            ),
            (None, None) => continue,
        };
        // Dated by git (the merge commit, or a fast-forward's tip), not by when it was found.
        let at = parse_time(when).map_or_else(|| now.to_string(), stamp);
        lifecycle::step(state, &id, Event::Merged, Who::default(), &at);
        found
            .changes
            .push(format!("{id} completed: git shows it merged ({why})"));
    }
}

fn worktrees(state: &mut State, view: &View, now: &str, found: &mut Found) {
    for i in 0..state.tasks.len() {
        let Some((id, t)) = state.tasks.at(i) else {
            break;
        };
        let st = t.status();
        let running = matches!(
            st,
            TaskStatus::InProgress
                | TaskStatus::Verifying
                | TaskStatus::Verified
                | TaskStatus::Failed
        );
        // Nothing to look at: no worktree or branch of its own, and not running.
        let quiet =
            t.worktree_path.non_empty().is_none() && t.branch.non_empty().is_none() && !running;
        if st == TaskStatus::Completed || quiet {
            continue;
        }
        let id = id.to_string();
        let worktree = t.worktree_path.non_empty().map(str::to_string);
        let branch = t.branch.non_empty().map(str::to_string);
        if let Some(path) = &worktree {
            if view.worktree_at(path).is_none() {
                let message =
                    format!("worktree {path} is gone (git worktree list does not show it)");
                if st.is_running() {
                    let failure = Failure {
                        message: &message,
                        details: None,
                        feedback: Some("The worktree was removed before the task finished: create it again (git worktree add) and redo the task there."),
                    };
                    lifecycle::step(state, &id, Event::Failed(failure), Who::default(), now);
                    let became = state.task(&id).map_or("", |t| t.status().as_str());
                    found
                        .changes
                        .push(format!("{id} is now {became}: {message}"));
                } else {
                    found
                        .changes
                        .push(format!("{id}: {message}; cleared worktree_path"));
                }
                if let Some(t) = state.task_mut(&id) {
                    t.worktree_path = Slot::Null;
                }
            }
        }
        if let Some(b) = &branch {
            if view.branch(b).is_none() {
                found.changes.push(format!(
                    "{id}: branch {b} is gone (git has no such branch); cleared branch"
                ));
                if let Some(t) = state.task_mut(&id) {
                    t.branch = Slot::Null;
                }
            }
        }
        if !running {
            continue;
        }
        let has =
            |state: &State, f: fn(&Task) -> Option<&str>| state.task(&id).and_then(f).is_some();
        if !has(state, |t| t.worktree_path.non_empty()) {
            if let Some(w) = view.worktrees.iter().skip(1).find(|w| {
                let tail: Vec<&str> = w.path.rsplit('/').take(2).collect();
                tail == [id.as_str(), ".worktrees"]
            }) {
                let path = w.path.clone();
                let wb = w.branch.clone();
                let b = wb.filter(|_| !has(state, |t| t.branch.non_empty()));
                lifecycle::record_worktree(state, &id, Some(&path), b.as_deref());
                found
                    .changes
                    .push(format!("{id}: recorded its worktree {path}"));
            }
        }
        let wb = format!("worktree-{id}");
        if !has(state, |t| t.branch.non_empty()) && view.branch(&wb).is_some() {
            lifecycle::record_worktree(state, &id, None, Some(&wb));
            found
                .changes
                .push(format!("{id}: recorded its branch {wb}"));
        }
    }
}

/// The attempt whose time window holds a commit made at `time`. Attempt k of a run lasts
/// from the end of attempt k−1 (its error's timestamp; the run's start for the first) to its
/// own error's timestamp; the last attempt's window stays open. The task's earlier runs, before
/// each `reset-task`, are in `resets` with their errors: a commit older than the last reset is
/// placed in the run it was made in (numbered as that run numbered its attempts, as the
/// commits a reset keeps are). Without dated errors: the current attempt.
fn attempt_at(t: &Task, time: &str) -> u64 {
    let current = t.attempts().max(1);
    let Some(when) = parse_time(time) else {
        return current;
    };
    let run = t
        .resets()
        .iter()
        .find(|r| parse_time(&r.reset_at).is_some_and(|at| when < at));
    let (errors, started): (&[ErrorRecord], u64) = match run {
        Some(r) => (
            r.errors.as_deref().unwrap_or_default(),
            r.attempts.unwrap_or(0),
        ),
        None => (t.errors(), t.attempts()),
    };
    let dated: Vec<(u64, chrono::DateTime<chrono::Utc>)> = errors
        .iter()
        .filter_map(|e| Some((e.attempt, parse_time(e.timestamp.as_deref()?)?)))
        .collect();
    // The run's last attempt: its window stays open.
    let last = if run.is_some() {
        started.max(1)
    } else {
        current
    };
    if dated.is_empty() {
        return last;
    }
    if let Some((k, _)) = dated
        .iter()
        .filter(|(_, at)| when <= *at)
        .min_by_key(|(_, at)| *at)
    {
        return (*k).max(1);
    }
    // After the run's last failure: the attempt after it, at most the last one started.
    (dated.iter().map(|(k, _)| *k).max().unwrap_or(0) + 1).min(last)
}

fn commits(state: &mut State, view: &View, found: &mut Found) {
    if view.commits.is_empty() {
        return;
    }
    // Recording a commit changes no task's id or branch: the names hold for the whole loop.
    let names = Names::of(state);
    let mut hashes = Hashes::of(state);
    let mut added: Vec<(String, Vec<String>)> = Vec::new();
    for c in view.commits.iter().rev() {
        if hashes.has(&c.hash) {
            continue;
        }
        let id = c
            .branch
            .as_deref()
            .and_then(|b| names.task_of_branch(state, b))
            .or_else(|| names.named_task(state, &c.subject));
        let Some(id) = id else { continue };
        let id = id.to_string();
        let Some(t) = state.task(&id) else { continue };
        let attempt = attempt_at(t, &c.time);
        let at = parse_time(&c.time).map(stamp).unwrap_or_default();
        if at.is_empty() {
            continue;
        }
        if lifecycle::add_commit(state, &id, &c.hash, Some(attempt), &at) {
            hashes.add(&c.hash);
            match added.iter_mut().find(|(x, _)| *x == id) {
                Some((_, list)) => list.push(c.hash.to_string()),
                None => added.push((id, vec![c.hash.to_string()])),
            }
        }
    }
    for (id, hashes) in added {
        found.changes.push(format!(
            "{id}: added {} commit(s) git has ({})",
            hashes.len(),
            hashes.join(", ")
        ));
    }
}

fn strangers(state: &State, view: &View, found: &mut Found) {
    let mut strangers = view
        .branches
        .iter()
        .filter(|b| b.name.starts_with(WORKTREE_PREFIX))
        .peekable();
    if strangers.peek().is_none() {
        return;
    }
    let names = Names::of(state);
    for b in strangers {
        if names.task_of_branch(state, &b.name).is_none() {
            found.notes.push(format!(
                "git has branch {} for a task the state does not list",
                b.name
            ));
        }
    }
}

/// What the seed's resume tree settles without git: a `failed` task with no attempts left is
/// abandoned.
pub fn settle(state: &mut State) -> Vec<String> {
    // Found first, then changed: a state with none to settle is not copied.
    let spent: Vec<String> = state
        .tasks
        .iter()
        .filter(|(_, t)| t.status() == TaskStatus::Failed && t.attempts() >= MAX_ATTEMPTS)
        .map(|(id, _)| id.to_string())
        .collect();
    let mut changes = Vec::new();
    for id in spent {
        if let Some(t) = state.tasks.get_mut(&id) {
            t.status = Some(TaskStatus::Abandoned);
            changes.push(format!(
                "{id} was failed with all {MAX_ATTEMPTS} attempts used: abandoned"
            ));
        }
    }
    changes
}
