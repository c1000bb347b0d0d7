//! The summary of one run for `taskhook status` and the SessionStart context: the run's status
//! and metrics in one line, the tasks under way, ready (to execute or retry), abandoned, the
//! merge queue, and the resume plan in the seed's words ([`super::plan`]).

use std::path::Path;

use super::model::{RunStatus, State};
use super::plan::Plan;
use super::state::MAX_ATTEMPTS;
use super::state::{self, state_path, Read, Unread, FILE};
use super::{derive, plan, project_root, reconcile, NAME};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Item, StoreRef, Summary};

/// The summary of a (derived) state and its plan; `project` shortens the path shown.
pub fn summarize(
    store: &StoreRef,
    project: &Path,
    state: &State,
    plan: &Plan,
    problems: Vec<String>,
) -> Summary {
    let path = super::state::state_path(&store.root);
    let shown = path
        .strip_prefix(project)
        .unwrap_or(&path)
        .display()
        .to_string();
    let m = state.metrics();
    let layer = match &plan.layer {
        Some(l) => {
            let batch = state
                .current_batch
                .get()
                .map(|b| format!(", batch {b}"))
                .unwrap_or_default();
            format!(
                ", layer {l} {}/{} completed{batch}",
                plan.layer_completed, plan.layer_total
            )
        }
        None => String::new(),
    };
    let headline = format!(
        "taskhook · execute \"{}\" ({shown}): run {}{layer}; {}/{} tasks completed, {} attempts, {} commits.",
        store.id,
        plan.status,
        m.completed_tasks.unwrap_or(0),
        m.total_tasks.unwrap_or(0),
        m.total_attempts.unwrap_or(0),
        m.total_commits.unwrap_or(0),
    );
    let mut s = Summary {
        layout: super::NAME,
        id: store.id.clone(),
        path,
        headline,
        current_label: "In progress",
        quiet: plan.status == RunStatus::Completed.as_str(),
        problems,
        ..Default::default()
    };
    for t in state.tasks.values() {
        *s.counts.entry(t.status().as_str().to_string()).or_default() += 1;
    }
    s.current = plan
        .resume
        .iter()
        .map(|r| {
            let d = format!("{}, attempt {} of {MAX_ATTEMPTS}", r.status, r.attempt);
            Item::with(&r.task, d)
        })
        .collect();
    s.ready = plan
        .retry
        .iter()
        .map(|r| {
            Item::with(
                &r.task,
                format!("retry, attempt {} of {MAX_ATTEMPTS}", r.attempt),
            )
        })
        .chain(plan.execute.iter().map(Item::id))
        .collect();
    let abandoned = format!("abandoned after {MAX_ATTEMPTS} attempts; its layer is stopped");
    s.blocked = plan
        .abandoned
        .iter()
        .map(|id| Item::with(id, &abandoned))
        .chain(
            plan.held
                .iter()
                .map(|h| Item::with(&h.task, format!("held: {}", h.why))),
        )
        .chain(plan.unmergeable.iter().map(|u| {
            Item::with(
                &u.task,
                format!("verified, but git has no branch {} to merge", u.branch),
            )
        }))
        .collect();
    s.context_extra.extend(plan.context_lines());
    if !s.quiet {
        s.context_extra.push(
            "A subagent bound with <task>ID</task> ends with <signal>ID_DONE</signal> (twice: work, then verification) or <signal>ID_FAILED: what broke</signal> with <details>…</details> and <feedback>…</feedback>.".into(),
        );
    }
    s
}

/// The summary of a store for `taskhook status` and the status line: a corrupt, missing or
/// too big state is one problem line; no git (SessionStart and `execute status` check the queue
/// against git).
pub fn of_store(cx: &Ctx, store: &StoreRef) -> Result<Summary> {
    let path = state_path(&store.root);
    // Read as a stream (its bytes not held beside its tasks), shared with the invocation's
    // other reads.
    let state = match state::read_shared(cx, &path)? {
        Ok((_, state)) => state,
        Err(Unread::Missing) => {
            return Ok(Summary::problem(NAME, &store.id, path, "missing".into()))
        }
        Err(Unread::TooBig(n)) => {
            return Ok(Summary::problem(
                NAME,
                &store.id,
                path,
                state::too_big(store, n).one_line(),
            ))
        }
        Err(Unread::Invalid(why)) => {
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
    let mut s = (*state).clone();
    derive::derive(&state, &mut s, &cx.store.clock().stamp());
    // No git here: `taskhook status` and the status line stay cheap (SessionStart and
    // `taskhook execute status` check the merge queue against git's branches).
    let p = plan::plan(&s);
    Ok(summarize(
        store,
        &project_root(cx, store),
        &s,
        &p,
        state::seed_temp_note(cx, store, state.updated_at.as_deref())
            .into_iter()
            .collect(),
    ))
}
