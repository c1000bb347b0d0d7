//! What a step of a task says, and to whom: the block reasons a bound subagent gets (verify,
//! retry with its feedback and the earlier errors, signal please), and the notices for the main
//! agent (verified and queued, failed and waiting for a relaunch, abandoned and the layer
//! stopped, a subagent let go at Claude Code's 8-block limit).

use super::lifecycle::{Effect, NotAsked, Outcome, MAX_BLOCKS};
use super::model::{LayerStatus, RunStatus, State, Task};
use super::plan::plan;
use super::state::{layer_of, MAX_ATTEMPTS};
use crate::layouts::unit::Budget;
use crate::layouts::{Reaction, StoreRef};

fn signals(id: &str, again: bool) -> String {
    let again = if again { " again" } else { "" };
    format!(
        "end your final message with <signal>{id}_DONE</signal>{again}. If it cannot pass, end it with <signal>{id}_FAILED: what broke</signal>, the failing output in <details>…</details> and what the next attempt should do in <feedback>…</feedback>."
    )
}

/// ` in its worktree PATH (branch B)`, when the task has one.
fn place(t: &Task) -> String {
    let w = t.worktree_path.non_empty();
    let b = t.branch.non_empty();
    match (w, b) {
        (Some(w), Some(b)) => format!(" in its worktree {w} (branch {b})"),
        (Some(w), None) => format!(" in its worktree {w}"),
        (None, Some(b)) => format!(" on its branch {b}"),
        (None, None) => String::new(),
    }
}

/// The task's errors, one line each.
fn error_lines(t: &Task) -> Vec<String> {
    t.errors()
        .iter()
        .map(|e| {
            let details = e
                .details
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!("- attempt {}: {}{details}", e.attempt, e.message)
        })
        .collect()
}

/// The verification pass (block reason).
pub fn verify(id: &str, t: &Task) -> String {
    format!(
        "{id}: verification (attempt {} of {MAX_ATTEMPTS}). Before {id} can be merged, verify it{}: run the task's tests and its acceptance checks, and review the diff. If everything passes, {}",
        t.attempts().max(1),
        place(t),
        signals(id, true)
    )
}

/// The retry in the same subagent (block reason): the feedback and every error so far.
pub fn retry(id: &str, t: &Task, failed: u64, feedback: &str) -> String {
    let last = t.errors().last().map_or("", |e| e.message.as_str());
    format!(
        "{id} failed on attempt {failed} of {MAX_ATTEMPTS}: {last}. Attempt {} of {MAX_ATTEMPTS} starts now, in this session{}.\nFeedback for attempt {}: {feedback}\nErrors so far:\n{}\nFix the cause and commit, then {}",
        failed + 1,
        place(t),
        failed + 1,
        error_lines(t).join("\n"),
        signals(id, false)
    )
}

/// A bound subagent stopped without a signal (block reason).
pub fn nudge(id: &str, t: &Task) -> String {
    format!(
        "{id} is {} (attempt {} of {MAX_ATTEMPTS}) and your final message has no signal for it. Finish the work{}, then {}",
        t.status(),
        t.attempts().max(1),
        place(t),
        signals(id, false)
    )
}

fn relaunch(id: &str) -> String {
    format!("Launch a new subagent with <task>{id}</task> to continue")
}

/// Where a report came from: a subagent (hooks) or a person (`taskhook execute done|fail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Subagent,
    Hand,
}

/// The step's reply: status, budget, another pass for a bound subagent, notices.
pub fn reply(store: &StoreRef, id: &str, out: &Outcome, state: &State, origin: Origin) -> Reaction {
    let blank = Task::default();
    let t = state.task(id).unwrap_or(&blank);
    let mut step = Reaction {
        status: Some(t.status().as_str().to_string()),
        budget: Some(Budget {
            used: t.attempts(),
            max: MAX_ATTEMPTS,
        }),
        ..Default::default()
    };
    let who = format!("execute {}", store.id);
    let n = t.attempts().max(1);
    let limit = format!(
        "{who}: Claude Code lets a subagent go after {MAX_BLOCKS} hook blocks in a row, so the subagent on {id} was not sent back again; {id} is {} at attempt {n} of {MAX_ATTEMPTS}.",
        t.status()
    );
    match &out.effect {
        Effect::Denied(hold) => {
            step.refused = Some(format!(
                "taskhook: {who}: not starting {id}: {}. {}",
                hold.why(),
                hold.fix()
            ));
        }
        Effect::Verify { .. } if out.block => step.instruction = Some(verify(id, t)),
        Effect::Verify { .. } if out.limit => {
            step.tell_main.push(format!("{limit} {} (verification).", relaunch(id)))
        }
        Effect::Verify { .. } if origin == Origin::Hand => step.tell_main.push(format!(
            "{who}: {id} is verifying: run its tests and acceptance checks{}, then `taskhook execute done {id}` again (or `fail`); or launch a subagent with <task>{id}</task> to verify it.",
            place(t)
        )),
        Effect::Verify { .. } => step.tell_main.push(format!(
            "{who}: {id} is verifying (a subagent not bound to it signalled DONE). Launch a subagent with <task>{id}</task> to verify it."
        )),
        Effect::NotVerification { from, why } => {
            let x = from.as_deref().map_or("a subagent".to_string(), |a| format!("subagent {a}"));
            let (why, todo) = match why {
                NotAsked::AskedOf(a) => (
                    format!("verification was asked of subagent {a}"),
                    format!("Wait for its report, or launch a subagent with <task>{id}</task> to verify it."),
                ),
                NotAsked::NoneLaunched => (
                    "no subagent has been launched to verify it since verification was asked".to_string(),
                    format!("Launch a subagent with <task>{id}</task> to verify it."),
                ),
                NotAsked::Earlier => (
                    format!("{} was working on it before verification was asked", from.as_deref().unwrap_or("it")),
                    "Wait for the report of the subagent launched to verify it.".to_string(),
                ),
                NotAsked::Unbound => (
                    "it is not bound to the task".to_string(),
                    format!("Launch a subagent with <task>{id}</task> to verify it."),
                ),
            };
            step.tell_main.push(format!(
                "{who}: {id} is verifying; the DONE from {x} does not count as the verification pass ({why}). {todo}"
            ));
        }
        Effect::Verified { priority } => {
            let next = plan(state).merge.into_iter().next();
            let next = match next {
                Some(m) if m.task == id => format!("it is next: `git merge {}`", t.branch_of(id)),
                Some(m) => format!("next is {} (priority {})", m.task, m.priority),
                None => String::new(),
            };
            step.tell_main.push(format!(
                "{who}: {id} is verified and queued for merge (priority {priority}). Merge in priority order; {next} (after a merge done another way: `taskhook execute merged ID`)."
            ));
        }
        Effect::Retry {
            failed_attempt,
            feedback,
            now: true,
        } => step.instruction = Some(retry(id, t, *failed_attempt, feedback)),
        Effect::Retry {
            failed_attempt,
            feedback,
            ..
        } => {
            let head = if out.limit {
                limit.clone()
            } else {
                format!("{who}: {id} failed attempt {failed_attempt} of {MAX_ATTEMPTS}.")
            };
            step.tell_main.push(format!(
                "{head} Relaunch it with <task>{id}</task> for attempt {} and give the subagent this feedback: {feedback}",
                failed_attempt + 1
            ));
        }
        Effect::Abandoned { message } => {
            let layer = layer_of(state, id)
                .map(|l| format!("Layer {l} is stopped and the run is abandoned"))
                .unwrap_or_else(|| "The run is abandoned".into());
            let msg = format!(
                "{who}: {id} is abandoned after {MAX_ATTEMPTS} failed attempts (last: {message}). {layer}: do not start more tasks; ask the user. `taskhook execute reset-task {id}` gives it fresh attempts."
            );
            step.tell_user.push(format!("taskhook: {msg}"));
            step.tell_main.push(msg);
        }
        Effect::Nudge if out.block => step.instruction = Some(nudge(id, t)),
        Effect::Nudge => step.tell_main.push(format!("{limit} {}.", relaunch(id))),
        Effect::Reported(reason) => {
            let msg = format!(
                "{who}: the subagent on {id} reports it is blocked: {reason}. {id} stays {}; resolve the blocker, then launch a subagent with <task>{id}</task>.",
                t.status()
            );
            step.tell_user.push(format!("taskhook: {msg}"));
            step.tell_main.push(msg);
        }
        Effect::Unchanged | Effect::Started { .. } | Effect::Merged { .. } => {}
    }
    if out.limit && !step.tell_main.is_empty() {
        step.tell_user.push(format!("taskhook: {limit}"));
    }
    step
}

/// What the main agent hears after merges: completed tasks, a layer finished, the next layer,
/// the run finished, a merge out of priority order.
pub fn merged(
    store: &StoreRef,
    done: &[(String, Option<String>, String)],
    state: &State,
) -> Vec<String> {
    let who = format!("execute {}", store.id);
    let mut out = Vec::new();
    for (id, ahead, was) in done {
        let mut line = format!("{who}: {id} is merged and completed.");
        if was != "verified" && was != "merging" {
            line.push_str(&format!(" It was {was}, not verified, when it was merged."));
        }
        if let Some(a) = ahead {
            line.push_str(&format!(
                " It was merged out of priority order ({a} was ready before it)."
            ));
        }
        out.push(line);
    }
    let p = plan(state);
    if p.status == RunStatus::Completed.as_str() {
        out.push(format!(
            "{who}: every layer is completed: the run is completed."
        ));
    } else if let Some(l) = &p.layer {
        let finished: Vec<String> = done
            .iter()
            .filter_map(|(id, _, _)| layer_of(state, id))
            .filter(|dl| {
                dl != l && state.layer(dl).and_then(|x| x.status) == Some(LayerStatus::Completed)
            })
            .collect();
        if let Some(f) = finished.first() {
            let ready = if p.execute.is_empty() {
                String::new()
            } else {
                format!(" Ready: {}.", p.execute.join(", "))
            };
            out.push(format!(
                "{who}: layer {f} is completed; layer {l} is current.{ready}"
            ));
        }
    }
    out
}
