//! What `taskhook execute …` does besides `init`, so the CLI only parses and prints: find a
//! run or a task, drive the lifecycle by hand (the same step a hook takes), reset a task or the
//! whole run (backup first), and the metrics.

use std::path::PathBuf;

use serde::Serialize;

use super::derive::derive;
use super::hooks::{apply_event, cap, git_place};
use super::lifecycle::{Event, Failure, Outcome, Who};
use super::model::{
    Keyed, Layer, LayerStatus, Loose, Metrics, ResetRecord, RunStatus, Slot, Stop as StopRecord,
    Task, TaskStatus,
};
use super::save;
use super::state::{self, bak_path, lock_path, state_path, Doc};
use super::{git, git_root, messages, Layout as _, LAYOUT};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Reaction, StoreRef};
use crate::project::Project;
use crate::signals::split_name;
use crate::store::check_id;

/// The runs of the project.
pub fn stores(cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
    LAYOUT.discover(cx, project)
}

/// The run named by `--store`, or the only one.
pub fn pick_store(cx: &Ctx, project: &Project, name: Option<&str>) -> Result<StoreRef> {
    let all = stores(cx, project)?;
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    match name {
        Some(n) => all.iter().find(|s| s.id == n).cloned().ok_or_else(|| {
            Error::NotFound(format!("no execute run {n:?} (runs: {})", or_none(&ids)))
        }),
        None => match all.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Error::NotFound(format!(
                "no execute-state.json in {} (create one with `taskhook execute init docs/tasks/SLUG --layer NAME=ID,ID`)",
                project.root.display()
            ))),
            _ => Err(Error::Usage(format!(
                "several execute runs ({}): name one with --store",
                ids.join(", ")
            ))),
        },
    }
}

/// The run `--store` names, else every run.
pub fn selected(cx: &Ctx, project: &Project, name: Option<&str>) -> Result<Vec<StoreRef>> {
    match name {
        Some(_) => Ok(vec![pick_store(cx, project, name)?]),
        None => stores(cx, project),
    }
}

fn or_none(ids: &[&str]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

/// The run and task `name` (`ID` or `STORE/ID`) means: the one run listing it (an active task
/// preferred).
pub fn find_task(
    cx: &Ctx,
    project: &Project,
    store: Option<&str>,
    name: &str,
) -> Result<(StoreRef, String)> {
    let n = split_name(name);
    let id = check_id("task id", &n.id)?.to_string();
    let store = n.store.as_deref().or(store);
    let candidates: Vec<StoreRef> = match store {
        Some(s) => vec![pick_store(cx, project, Some(s))?],
        None => stores(cx, project)?,
    };
    let mut hits: Vec<(StoreRef, bool)> = Vec::new();
    for s in candidates {
        let (_, st) = state::load_shared(cx, &s)?;
        if let Some(t) = st.task(&id) {
            hits.push((s, t.status().is_active()));
        }
    }
    if hits.len() > 1 && hits.iter().filter(|(_, a)| *a).count() == 1 {
        hits.retain(|(_, a)| *a);
    }
    match hits.as_slice() {
        [(s, _)] => Ok((s.clone(), id)),
        [] => Err(Error::NotFound(format!("no execute run lists task {id:?}"))),
        _ => Err(Error::Usage(format!(
            "task {id:?} is in several runs ({}): name it as STORE/{id} or use --store",
            hits.iter()
                .map(|(s, _)| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A lifecycle event by hand (`start`, `done`, `fail`): the step a hook takes for an unbound
/// report, so instructions go to the person as notices. Returns the task after it and the step.
pub fn by_hand(cx: &Ctx, store: &StoreRef, id: &str, ev: HandEvent) -> Result<(Task, Reaction)> {
    let (worktree, branch) = match ev {
        HandEvent::Start => git_place(cx, store, id),
        _ => (None, None),
    };
    let capped: (String, Option<String>, Option<String>);
    let event = match &ev {
        HandEvent::Start => Event::Launch {
            worktree: worktree.as_deref(),
            branch: branch.as_deref(),
            bound_before: &[],
        },
        HandEvent::Done => Event::Done,
        HandEvent::Fail {
            message,
            details,
            feedback,
        } => {
            let cap_opt = |s: &Option<String>| s.as_deref().map(cap);
            capped = (cap(message), cap_opt(details), cap_opt(feedback));
            Event::Failed(Failure {
                message: &capped.0,
                details: capped.1.as_deref(),
                feedback: capped.2.as_deref(),
            })
        }
    };
    let who = Who {
        by_hand: true,
        ..Who::default()
    };
    let Some((out, s)) = apply_event(cx, store, id, event, who)? else {
        return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
    };
    let step = messages::reply(store, id, &out, &s, messages::Origin::Hand);
    if let Some(deny) = &step.refused {
        return Err(Error::Rule(
            deny.trim_start_matches("taskhook: ").to_string(),
        ));
    }
    Ok((s.task(id).cloned().unwrap_or_default(), step))
}

/// What a person reports by hand.
#[derive(Debug, Clone)]
pub enum HandEvent {
    Start,
    Done,
    Fail {
        message: String,
        details: Option<String>,
        feedback: Option<String>,
    },
}

/// `taskhook execute merged ID`: the task's branch was merged another way.
pub fn merged(cx: &Ctx, store: &StoreRef, id: &str) -> Result<(Task, Vec<String>)> {
    let Some((out, s)) = apply_event(cx, store, id, Event::Merged, Who::default())? else {
        return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
    };
    let lines = match out {
        Outcome {
            effect: super::lifecycle::Effect::Merged { was, ahead },
            ..
        } => messages::merged(store, &[(id.to_string(), ahead, was)], &s),
        _ => vec![format!("{id} was already completed; nothing changed.")],
    };
    Ok((s.task(id).cloned().unwrap_or_default(), lines))
}

/// What `taskhook execute stop` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The run is stopped now: its `stop` record (`{at, reason?}`).
    Stopped(StopRecord),
    /// It already was: since when and why.
    Already(StopRecord),
}

/// `taskhook execute stop [--reason]`: the run becomes `stopped`, with `stop: {at, reason}`;
/// launches of its tasks are then refused until `taskhook execute resume`. A completed run
/// has nothing to stop.
pub fn stop(cx: &Ctx, store: &StoreRef, reason: Option<&str>) -> Result<Stop> {
    let now = cx.store.clock().stamp();
    let reason = reason
        .map(|r| cap(&crate::error::one_line(r)))
        .filter(|r| !r.is_empty());
    cx.store.with_lock(&lock_path(&store.root), || {
        let Doc {
            source,
            state: before,
        } = state::load(cx, store)?;
        let mut s = before.clone();
        derive(&before, &mut s, &now);
        if s.status() == RunStatus::Completed {
            return Err(Error::Rule(format!(
                "run {} is completed; there is nothing to stop",
                store.id
            )));
        }
        if super::policy::stop_of(&s).is_some() {
            let record = s.stop.get().and_then(Loose::typed).cloned();
            return Ok(Stop::Already(record.unwrap_or_default()));
        }
        let record = StopRecord {
            at: Some(now.clone()),
            reason,
            rest: Default::default(),
        };
        s.stop = Slot::Is(Loose::Typed(record.clone()));
        s.status = Some(RunStatus::Stopped);
        derive(&before, &mut s, &now);
        save::save(cx, store, source, Some(&before), &mut s)?;
        Ok(Stop::Stopped(record))
    })
}

/// Copies the state file's bytes to `execute-state.json.bak` (under the caller's lock).
fn backup(cx: &Ctx, store: &StoreRef) -> Result<PathBuf> {
    let bak = bak_path(&store.root);
    let bytes = cx
        .store
        .read_capped(&state_path(&store.root), state::MAX_STATE_BYTES)?
        .unwrap_or_default();
    cx.store.replace(&bak, &bytes)?;
    Ok(bak)
}

/// `reset-task ID`: backup first; then the task is pending with a fresh attempt count, its
/// merge-queue entry removed; its commits, worktree and branch stay, and the rest of its run
/// (status, attempts, errors, retry feedback, merge time) moves to `resets`.
pub fn reset_task(cx: &Ctx, store: &StoreRef, id: &str) -> Result<(PathBuf, Task)> {
    let now = cx.store.clock().stamp();
    cx.store.with_lock(&lock_path(&store.root), || {
        let Doc {
            source,
            state: before,
        } = state::load(cx, store)?;
        if before.task(id).is_none() {
            return Err(Error::NotFound(format!("{} has no task {id:?}", store.id)));
        }
        let bak = backup(cx, store)?;
        let mut s = before.clone();
        if let Some(t) = s.task_mut(id) {
            let old = ResetRecord {
                reset_at: now.clone(),
                status: t.status.take(),
                attempts: t.attempts.take(),
                errors: t.errors.take(),
                retry_feedback: t.retry_feedback.take(),
                merged_at: std::mem::take(&mut t.merged_at),
                batch: t.batch.take(),
                rest: Default::default(),
            };
            t.subagent = None;
            t.verification = Slot::Absent;
            t.status = Some(TaskStatus::Pending);
            t.attempts = Some(0);
            t.resets.get_or_insert_with(Vec::new).push(old);
        }
        if let Some(q) = s.merge_queue.as_mut() {
            q.retain(|e| e.task_id != id);
        }
        derive(&before, &mut s, &now);
        save::save(cx, store, source, Some(&before), &mut s)?;
        Ok((bak, s.task(id).cloned().unwrap_or_default()))
    })
}

/// `reset --all`: backup first; then every task pending with no attempts, commits, errors or
/// worktree, every layer pending, the queue empty, metrics zero. Returns the backup and what
/// git still keeps (worktrees and `worktree-*` branches are git's, left alone).
pub fn reset_all(cx: &Ctx, store: &StoreRef) -> Result<(PathBuf, Vec<String>)> {
    let now = cx.store.clock().stamp();
    let bak = cx.store.with_lock(&lock_path(&store.root), || {
        let Doc {
            source,
            state: current,
        } = state::load(cx, store)?;
        let mut counted = current.clone();
        derive(&current, &mut counted, &now);
        let bak = backup(cx, store)?;
        let mut s = counted.clone();
        s.status = Some(RunStatus::Pending);
        s.current_batch = Slot::Null;
        s.started_at = Slot::Null;
        s.completed_at = Slot::Null;
        s.merge_queue = Some(Default::default());
        let order = state::layer_order(&s);
        s.current_layer.set(order.first().cloned());
        for l in s.layers.iter_mut().flat_map(Keyed::values_mut) {
            l.status = Some(LayerStatus::Pending);
            l.tasks_completed = Some(0);
            l.tasks_failed = Some(0);
            l.started_at = Slot::Absent;
            l.completed_at = Slot::Absent;
        }
        for t in s.tasks.values_mut() {
            t.commits = None;
            t.errors = None;
            t.retry_feedback = None;
            t.merged_at = Slot::Absent;
            t.subagent = None;
            t.verification = Slot::Absent;
            t.batch = None;
            t.resets = None;
            t.status = Some(TaskStatus::Pending);
            t.attempts = Some(0);
            t.worktree_path = Slot::Null;
            t.branch = Slot::Null;
        }
        s.metrics = Some(Metrics {
            total_tasks: counted.metrics().total_tasks,
            completed_tasks: Some(0),
            failed_tasks: Some(0),
            total_attempts: Some(0),
            total_commits: Some(0),
            elapsed_time_seconds: Some(0.into()),
            rest: Default::default(),
        });
        let fresh = s.clone();
        derive(&fresh, &mut s, &now);
        save::save(cx, store, source, Some(&current), &mut s)?;
        Ok(bak)
    })?;
    let mut left = Vec::new();
    if let Some(root) = git_root(cx, store) {
        for w in git::worktrees(&root).unwrap_or_default().iter().skip(1) {
            left.push(format!(
                "git keeps worktree {} (remove it with `git worktree remove {}`)",
                w.path, w.path
            ));
        }
        let heads = git::run(
            &root,
            &[
                "for-each-ref",
                "--format=%(refname:short)",
                "refs/heads/worktree-*",
            ],
        )
        .unwrap_or_default();
        for b in heads.lines().filter(|l| !l.is_empty()) {
            left.push(format!(
                "git keeps branch {b} (delete it with `git branch -D {b}`)"
            ));
        }
    }
    Ok((bak, left))
}

/// A run's metrics and layer counters, recounted (`taskhook execute metrics`).
#[derive(Debug, Clone, Serialize)]
pub struct RunMetrics {
    pub store: String,
    pub metrics: Metrics,
    pub layers: Option<Keyed<Layer>>,
    pub status: Option<RunStatus>,
    pub current_layer: Slot<String>,
    pub current_batch: Slot<u64>,
}

/// The metrics and layer counters, recounted (read-only).
pub fn metrics(cx: &Ctx, store: &StoreRef) -> Result<RunMetrics> {
    let (_, s) = state::load_shared(cx, store)?;
    let mut d = (*s).clone();
    derive(&s, &mut d, &cx.store.clock().stamp());
    Ok(RunMetrics {
        store: store.id.clone(),
        metrics: d.metrics(),
        layers: d.layers,
        status: d.status,
        current_layer: d.current_layer,
        current_batch: d.current_batch,
    })
}
