//! The execute layout's units for the agent's verbs and the board
//! ([`crate::layouts::work`]): every task of the run with its phase, the ready ones first
//! (the seed's resume tree: retry a failed task with attempts left, execute a pending one, in
//! the current layer only); a task being verified owes its verification pass, a verified one
//! its merge; what `taskhook show` prints of a task (its description, attempts, last failure
//! and the feedback for the next attempt, worktree, branch, commits); a release (the attempt
//! ends as released: back to `pending` or `failed` as before it, the attempt not counted).

use std::collections::HashMap;

use serde_json::Value;

use super::state::{self, attempts, layer_of, load, status, task_ids, MAX_ATTEMPTS};
use super::{plan, policy};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::work::text_of;
use crate::layouts::{Phase, Reaction, Shown, StoreRef, WorkUnit};

/// Every task of the run, ready ones first in the plan's order.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let s = load(cx, store)?;
    Ok(units(&s))
}

/// [`work`] of a state (pure). Readiness is the launch policy's ([`policy::may_launch`]), the
/// one decision the hook and the resume plan use too, so `next` never offers what a launch
/// would be denied.
pub fn units(s: &Value) -> Vec<WorkUnit> {
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
    for (i, id) in task_ids(s).into_iter().enumerate() {
        let t = &s["tasks"][&id];
        let st = status(t).to_string();
        let n = attempts(t);
        let held = policy.may_launch(&id).err();
        let (phase, why, pass) = match (st.as_str(), &held) {
            ("completed", _) => (Phase::Done, None, None),
            (_, Some(h @ policy::Hold::EarlierLayer { .. })) => {
                (Phase::Blocked, Some(h.why()), None)
            }
            (_, Some(h)) => (
                Phase::Person,
                Some(format!("{}: {}", h.why(), h.fix())),
                None,
            ),
            ("verified", None) => (
                Phase::InProgress,
                None,
                Some(format!(
                    "its merge: `git merge {}`",
                    state::branch_of(t, &id)
                )),
            ),
            ("verifying", None) => (
                Phase::InProgress,
                Some(format!("attempt {n}")),
                Some("its verification pass: check the work against the task's criteria".into()),
            ),
            ("in_progress" | "merging", None) => {
                (Phase::InProgress, Some(format!("attempt {n}")), None)
            }
            ("failed", None) => (
                Phase::Ready,
                Some(format!("retry, attempt {} of {MAX_ATTEMPTS}", n + 1)),
                None,
            ),
            (_, None) => (
                Phase::Ready,
                layer_of(s, &id).map(|l| format!("layer {l}")),
                None,
            ),
        };
        let order = match phase {
            Phase::Ready => ready.get(id.as_str()).copied().unwrap_or(ready.len()),
            _ => ready.len() + 1 + i,
        };
        out.push((
            order,
            WorkUnit {
                title: title(t),
                status: st,
                phase,
                why,
                deps: string_list(t, "dependencies"),
                pass,
                since: ["completed_at", "started_at"]
                    .iter()
                    .find_map(|k| t[*k].as_str())
                    .map(str::to_string),
                group: layer_of(s, &id),
                parent: None,
                id,
            },
        ));
    }
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, u)| u).collect()
}

fn title(t: &Value) -> Option<String> {
    ["title", "name", "description"]
        .iter()
        .find_map(|k| t[*k].as_str())
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

fn string_list(t: &Value, key: &str) -> Vec<String> {
    t[key]
        .as_array()
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
    let s = load(cx, store)?;
    let mut out = Shown::default();
    let Some(t) = state::task(&s, unit) else {
        return Ok(out);
    };
    for key in ["description", "acceptance_criteria", "files"] {
        out.add(&key.replace('_', " "), text_of(&t[key]));
    }
    let n = attempts(t);
    out.add(
        "attempts",
        format!(
            "{n} of {MAX_ATTEMPTS}; layer {}",
            layer_of(&s, unit).unwrap_or_default()
        ),
    );
    if let Some(e) = t["errors"].as_array().and_then(|a| a.last()) {
        out.add(
            "last failure",
            format!(
                "attempt {}: {}{}",
                e["attempt"].as_u64().unwrap_or(0),
                e["message"].as_str().unwrap_or(""),
                e["details"]
                    .as_str()
                    .map(|d| format!("\n{d}"))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(f) = t["retry_feedback"].as_array().and_then(|a| {
        a.iter()
            .rev()
            .find(|f| f["attempt"].as_u64() == Some(n + 1))
    }) {
        out.add(
            "feedback for the next attempt",
            f["feedback"].as_str().unwrap_or("").to_string(),
        );
    }
    let place: Vec<String> = ["worktree", "branch"]
        .iter()
        .filter_map(|k| t[*k].as_str().map(|v| format!("{k}: {v}")))
        .collect();
    out.add("where", place.join("\n"));
    let commits: Vec<String> = t["commits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} ({}, attempt {})",
                c["hash"].as_str().unwrap_or(""),
                c["type"].as_str().unwrap_or(""),
                c["attempt"].as_u64().unwrap_or(0)
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
    let now = cx.store.clock().stamp();
    let result = cx.store.transact(&state::lock_path(&store.root), |pass| {
        let before = load(cx, store)?;
        let Some(t) = state::task(&before, unit) else {
            return Ok((Err(format!("there is no task {unit}")), false));
        };
        let st = status(t);
        if st != "in_progress" {
            return Ok((
                Err(format!(
                    "{unit} is {st}, not in_progress; nothing to release"
                )),
                false,
            ));
        }
        let failed_before = t["errors"].as_array().is_some_and(|a| !a.is_empty());
        let mut s = before.clone();
        if let Some(m) = state::task_mut(&mut s, unit) {
            let n = m.get("attempts").and_then(Value::as_u64).unwrap_or(0);
            m.insert("attempts".into(), Value::from(n.saturating_sub(1)));
            m.insert(
                "status".into(),
                Value::from(if failed_before { "failed" } else { "pending" }),
            );
        }
        super::derive::derive(&before, &mut s, &now);
        if pass.writes() {
            state::save(cx, store, &s)?;
        }
        let to = state::task(&s, unit)
            .map(status)
            .unwrap_or("pending")
            .to_string();
        Ok((Ok(to), true))
    })?;
    Ok(match result {
        Ok(to) => Reaction {
            status: Some(to),
            ..Default::default()
        },
        Err(why) => Reaction::refused(why),
    })
}
