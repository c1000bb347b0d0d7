//! Whether a task may be launched now: the one decision behind a launch (a subagent bound to
//! the task, or `taskhook execute start`) and the resume plan, so the plan never proposes a
//! launch the hook would deny.
//!
//! A launch is held when the task has used its attempts, when the user stopped the run
//! (`taskhook execute stop`), when the run is abandoned (a task failed 5 times and its layer is
//! stopped: new starts only; subagents still running continue), or when an earlier layer is not
//! completed (seed 001 runs its layers in order: a layer's tasks build on the merged work of
//! the layers before it).
//!
//! The state given is derived ([`super::derive::derive`]): layer statuses are read, not
//! recounted, so deciding one task costs a walk over the layers, not over the tasks (a task's
//! earlier layer's unfinished tasks are listed only when it is refused for them).

use serde_json::Value;

use super::state::{attempts, global, layer_of, layer_order, layer_tasks, status, MAX_ATTEMPTS};

/// Why a launch is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// The task is abandoned, or failed with every attempt used.
    NoAttempts { id: String, abandoned: bool },
    /// The user stopped the run.
    Stopped { reason: Option<String> },
    /// A task of the run is abandoned: its layer is stopped and the run is abandoned.
    RunAbandoned { by: Vec<String> },
    /// An earlier layer is not completed.
    EarlierLayer {
        layer: String,
        earlier: String,
        completed: u64,
        total: u64,
        /// Its unfinished tasks, `ID status`.
        left: Vec<String>,
    },
}

/// Most unfinished tasks of an earlier layer named in a refusal.
const NAMED: usize = 5;

impl Hold {
    /// Why, in one clause (the same for every task it holds, so the plan can group them).
    pub fn why(&self) -> String {
        match self {
            Hold::NoAttempts {
                id,
                abandoned: true,
            } => format!("{id} is abandoned after {MAX_ATTEMPTS} attempts"),
            Hold::NoAttempts { id, .. } => format!("{id} has used all {MAX_ATTEMPTS} attempts"),
            Hold::Stopped { reason: Some(r) } => format!("the run is stopped ({r})"),
            Hold::Stopped { reason: None } => "the run is stopped".into(),
            Hold::RunAbandoned { by } => format!(
                "the run is abandoned ({} failed {MAX_ATTEMPTS} times and {} stopped)",
                by.join(", "),
                if by.len() == 1 {
                    "its layer is"
                } else {
                    "their layers are"
                }
            ),
            Hold::EarlierLayer {
                layer,
                earlier,
                completed,
                total,
                ..
            } => format!(
                "its layer {layer} waits for layer {earlier} ({completed}/{total} completed)"
            ),
        }
    }

    /// What lifts it, as a sentence.
    pub fn fix(&self) -> String {
        match self {
            Hold::NoAttempts { id, .. } => {
                format!("`taskhook execute reset-task {id}` gives it fresh attempts.")
            }
            Hold::Stopped { .. } => "`taskhook execute resume` continues a stopped run.".into(),
            Hold::RunAbandoned { by } => {
                let first = by.first().map_or("ID", String::as_str);
                format!(
                    "Ask the user, or give {first} fresh attempts with `taskhook execute reset-task {first}`."
                )
            }
            Hold::EarlierLayer { earlier, left, .. } => {
                let mut named: Vec<String> = left.iter().take(NAMED).cloned().collect();
                if left.len() > NAMED {
                    named.push(format!("and {} more", left.len() - NAMED));
                }
                let named = if named.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", named.join(", "))
                };
                format!("Layers run in order: finish layer {earlier} first{named}.")
            }
        }
    }
}

/// The user's stop, when the run has one: `stop: {at, reason?}`, or a `stopped` status the
/// seed's skill wrote.
pub fn stop_of(state: &Value) -> Option<Option<String>> {
    let reason = state["stop"]["reason"].as_str().map(str::to_string);
    (state["stop"].is_object() || global(state) == "stopped").then_some(reason)
}

/// Whether task `id` may be launched now in the derived `state`. A task that is completed,
/// verified or merging is not held (a launch of it changes nothing).
pub fn may_launch(state: &Value, id: &str) -> Result<(), Hold> {
    let t = &state["tasks"][id];
    let st = status(t);
    let starts = matches!(st, "pending" | "failed");
    if st == "abandoned" || (st == "failed" && attempts(t) >= MAX_ATTEMPTS) {
        return Err(Hold::NoAttempts {
            id: id.to_string(),
            abandoned: st == "abandoned",
        });
    }
    if !starts && !matches!(st, "in_progress" | "verifying") {
        return Ok(());
    }
    if let Some(reason) = stop_of(state) {
        return Err(Hold::Stopped { reason });
    }
    if !starts {
        // A relaunch continues the attempt under way, even in a stopped layer.
        return Ok(());
    }
    let by = abandoned(state);
    if !by.is_empty() {
        return Err(Hold::RunAbandoned { by });
    }
    earlier_layer(state, id)
}

/// The abandoned tasks, in the file's order.
pub fn abandoned(state: &Value) -> Vec<String> {
    state["tasks"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, t)| status(t) == "abandoned")
                .map(|(id, _)| id.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The first layer before the task's own that is not completed.
fn earlier_layer(state: &Value, id: &str) -> Result<(), Hold> {
    let Some(layer) = layer_of(state, id) else {
        return Ok(());
    };
    for l in layer_order(state) {
        if l == layer {
            return Ok(());
        }
        let info = &state["layers"][&l];
        if info["status"] == "completed" {
            continue;
        }
        let left = layer_tasks(state, &l)
            .into_iter()
            .map(|t| (status(&state["tasks"][&t]).to_string(), t))
            .filter(|(s, _)| s != "completed")
            .map(|(s, t)| format!("{t} {s}"))
            .collect();
        return Err(Hold::EarlierLayer {
            layer,
            earlier: l,
            completed: info["tasks_completed"].as_u64().unwrap_or(0),
            total: info["tasks_total"].as_u64().unwrap_or(0),
            left,
        });
    }
    Ok(())
}
