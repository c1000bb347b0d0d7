//! The execute layout's units for the agent's verbs and the board
//! ([`crate::layouts::work`]): every task of the run with its phase, the ready ones first
//! (the seed's resume tree: retry a failed task with attempts left, execute a pending one, in
//! the current layer only); a task being verified owes its verification pass, a verified one
//! its merge; what `taskhook show` prints of a task (its description, attempts, last failure
//! and the feedback for the next attempt, worktree, branch, commits); a release (the attempt
//! ends as released: back to `pending` or `failed` as before it, the attempt not counted).

use std::collections::HashMap;

use serde_json::Value;

use super::model::{Slot, State, Task, TaskStatus};
use super::state::{self, layer_of, MAX_ATTEMPTS};
use super::{plan, policy};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::work::text_of;
use crate::layouts::{Phase, Reaction, Shown, StoreRef, WorkUnit};

/// Every task of the run, ready ones first in the plan's order.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let (_, s) = state::load_shared(cx, store)?;
    Ok(units(&s))
}

/// [`work`] of a state (pure). Readiness is the launch policy's ([`policy::may_launch`]), the
/// one decision the hook and the resume plan use too, so `next` never offers what a launch
/// would be denied.
pub fn units(s: &State) -> Vec<WorkUnit> {
    let p = plan::plan(s);
    // A ready unit's place: retries first, then new starts, in the plan's order.
    let ready: HashMap<&str, usize> = p
        .retry
        .iter()
        .map(|r| r.task.as_str())
        .chain(p.execute.iter().map(String::as_str))
        .enumerate()
        .map(|(i, id)| (id, i))
        .collect();
    let policy = policy::Policy::new(s);
    let mut out: Vec<(usize, WorkUnit)> = Vec::new();
    for (i, (id, t)) in s.tasks.iter().enumerate() {
        let st = t.status();
        let n = t.attempts();
        let held = policy.may_launch(id).err();
        let (phase, why, pass) = match (st, &held) {
            (TaskStatus::Completed, _) => (Phase::Done, None, None),
            (_, Some(h @ policy::Hold::EarlierLayer { .. })) => {
                (Phase::Blocked, Some(h.why()), None)
            }
            (_, Some(h)) => (
                Phase::Person,
                Some(format!("{}: {}", h.why(), h.fix())),
                None,
            ),
            (TaskStatus::Verified, None) => (
                Phase::InProgress,
                None,
                Some(format!("its merge: `git merge {}`", t.branch_of(id))),
            ),
            (TaskStatus::Verifying, None) => (
                Phase::InProgress,
                Some(format!("attempt {n}")),
                Some("its verification pass: check the work against the task's criteria".into()),
            ),
            (TaskStatus::InProgress | TaskStatus::Merging, None) => {
                (Phase::InProgress, Some(format!("attempt {n}")), None)
            }
            (TaskStatus::Failed, None) => (
                Phase::Ready,
                Some(format!("retry, attempt {} of {MAX_ATTEMPTS}", n + 1)),
                None,
            ),
            (_, None) => (
                Phase::Ready,
                layer_of(s, id).map(|l| format!("layer {l}")),
                None,
            ),
        };
        let order = match phase {
            Phase::Ready => ready.get(id).copied().unwrap_or(ready.len()),
            _ => ready.len() + 1 + i,
        };
        out.push((
            order,
            WorkUnit {
                title: title(t),
                status: st.as_str().to_string(),
                phase,
                why,
                deps: string_list(&t.dependencies),
                pass,
                since: [&t.completed_at, &t.started_at]
                    .iter()
                    .find_map(|k| k.value().and_then(Value::as_str))
                    .map(str::to_string),
                group: layer_of(s, id),
                parent: None,
                id: id.to_string(),
            },
        ));
    }
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, u)| u).collect()
}

fn title(t: &Task) -> Option<String> {
    [&t.title, &t.name, &t.description]
        .iter()
        .find_map(|k| k.value().and_then(Value::as_str))
        .map(|s| {
            s.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect::<String>()
        })
        .filter(|s| !s.trim().is_empty())
}

fn string_list(v: &Slot<Box<Value>>) -> Vec<String> {
    v.value()
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A task's description, attempts, last error and the feedback for its next attempt,
/// worktree, branch and commits.
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let (_, s) = state::load_shared(cx, store)?;
    let mut out = Shown::default();
    let Some(t) = s.task(unit) else {
        return Ok(out);
    };
    for (key, v) in [
        ("description", &t.description),
        ("acceptance criteria", &t.acceptance_criteria),
        ("files", &t.files),
    ] {
        out.add(key, text_of(v.value().unwrap_or(&Value::Null)));
    }
    let n = t.attempts();
    out.add(
        "attempts",
        format!(
            "{n} of {MAX_ATTEMPTS}; layer {}",
            layer_of(&s, unit).unwrap_or_default()
        ),
    );
    if let Some(e) = t.errors().last() {
        out.add(
            "last failure",
            format!(
                "attempt {}: {}{}",
                e.attempt,
                e.message,
                e.details
                    .as_deref()
                    .map(|d| format!("\n{d}"))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(f) = t.feedback_for(n + 1) {
        out.add("feedback for the next attempt", f.to_string());
    }
    let place: Vec<String> = [
        ("worktree", t.worktree.value().and_then(Value::as_str)),
        ("branch", t.branch.as_deref()),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}: {v}")))
    .collect();
    out.add("where", place.join("\n"));
    let commits: Vec<String> = t
        .commits()
        .iter()
        .map(|c| {
            format!(
                "{} ({}, attempt {})",
                c.hash,
                c.kind.as_deref().unwrap_or(""),
                c.attempt.unwrap_or(0)
            )
        })
        .collect();
    out.add("commits", commits.join("\n"));
    out.add("file", state::state_path(&store.root).display().to_string());
    Ok(out)
}

/// Gives a task back: its attempt ends as released, not counted (`attempts` − 1), and the task
/// returns to the status it had before the launch (`failed` when it has failed before, else
/// `pending`). Only an `in_progress` task is given back (one being verified finishes its pass).
pub fn release(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let (result, after) = super::hooks::transition(cx, store, |_, s, _| {
        let Some(t) = s.task_mut(unit) else {
            return (Err(format!("there is no task {unit}")), false);
        };
        let st = t.status();
        if st != TaskStatus::InProgress {
            let why = format!("{unit} is {st}, not in_progress; nothing to release");
            return (Err(why), false);
        }
        let failed_before = !t.errors().is_empty();
        t.attempts = Some(t.attempts().saturating_sub(1));
        t.status = Some(if failed_before {
            TaskStatus::Failed
        } else {
            TaskStatus::Pending
        });
        (Ok(()), true)
    })?;
    let result = result.map(|()| {
        after
            .task(unit)
            .map_or(TaskStatus::Pending, Task::status)
            .as_str()
            .to_string()
    });
    Ok(match result {
        Ok(to) => Reaction::status(to),
        Err(why) => Reaction::refused(why),
    })
}
