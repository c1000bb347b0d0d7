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
//! recounted. A [`Policy`] finds what every decision shares once (the stop, the abandoned
//! tasks, the first layer not completed, that layer's unfinished tasks when a task is first
//! refused for it), so deciding every task of a run is one pass over the tasks.

use std::cell::OnceCell;
use std::collections::HashMap;

use super::model::{LayerStatus, Loose, RunStatus, State, Task, TaskStatus};
use super::state::{layer_of, layer_order, layer_tasks, MAX_ATTEMPTS};

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
        /// Its first unfinished tasks, `ID status` (at most five).
        left: Vec<String>,
        /// How many more are unfinished.
        more: usize,
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
            Hold::EarlierLayer {
                earlier,
                left,
                more,
                ..
            } => {
                let mut named = left.clone();
                if *more > 0 {
                    named.push(format!("and {more} more"));
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
pub fn stop_of(state: &State) -> Option<Option<String>> {
    let stop = state.stop.get();
    let reason = stop.and_then(Loose::typed).and_then(|s| s.reason.clone());
    (stop.is_some_and(Loose::is_object) || state.status() == RunStatus::Stopped).then_some(reason)
}

/// The launch decision for many tasks of one derived state: what every decision shares (the
/// user's stop, the abandoned tasks, the layers in order and the first one not completed) is
/// found once, and an earlier layer's unfinished tasks are listed once, when a task is first
/// refused for it. Deciding every task of a run is then one pass, not one pass per task.
pub struct Policy<'a> {
    state: &'a State,
    stop: Option<Option<String>>,
    abandoned: Vec<String>,
    /// Layer → its place in the run's order.
    place: HashMap<String, usize>,
    /// The first layer not completed, with its place.
    open: Option<(usize, String)>,
    /// The open layer's first unfinished tasks and how many more, listed when a task is
    /// first refused for it.
    unfinished: OnceCell<(Vec<String>, usize)>,
}

impl<'a> Policy<'a> {
    /// The shared part of every decision on `state` (derived).
    pub fn new(state: &'a State) -> Self {
        let order = layer_order(state);
        let open = order
            .iter()
            .enumerate()
            .find(|(_, l)| state.layer(l).and_then(|x| x.status) != Some(LayerStatus::Completed))
            .map(|(i, l)| (i, l.clone()));
        Policy {
            state,
            stop: stop_of(state),
            abandoned: abandoned(state),
            place: order.into_iter().enumerate().map(|(i, l)| (l, i)).collect(),
            open,
            unfinished: OnceCell::new(),
        }
    }

    /// Whether task `id` may be launched now. A task that is completed, verified or merging
    /// is not held (a launch of it changes nothing).
    pub fn may_launch(&self, id: &str) -> Result<(), Hold> {
        let st = self
            .state
            .task(id)
            .map_or(TaskStatus::Pending, Task::status);
        let attempts = self.state.task(id).map_or(0, Task::attempts);
        let starts = st.starts();
        if st == TaskStatus::Abandoned || (st == TaskStatus::Failed && attempts >= MAX_ATTEMPTS) {
            return Err(Hold::NoAttempts {
                id: id.to_string(),
                abandoned: st == TaskStatus::Abandoned,
            });
        }
        if !starts && !st.is_running() {
            return Ok(());
        }
        if let Some(reason) = &self.stop {
            return Err(Hold::Stopped {
                reason: reason.clone(),
            });
        }
        if !starts {
            // A relaunch continues the attempt under way, even in a stopped layer.
            return Ok(());
        }
        if !self.abandoned.is_empty() {
            return Err(Hold::RunAbandoned {
                by: self.abandoned.clone(),
            });
        }
        self.earlier_layer(id)
    }

    /// The first layer before the task's own that is not completed.
    fn earlier_layer(&self, id: &str) -> Result<(), Hold> {
        let Some(layer) = layer_of(self.state, id) else {
            return Ok(());
        };
        let (Some(mine), Some((first, open))) = (self.place.get(&layer), &self.open) else {
            return Ok(());
        };
        if first >= mine {
            return Ok(());
        }
        let (left, more) = self
            .unfinished
            .get_or_init(|| unfinished(self.state, open))
            .clone();
        let info = self.state.layer(open);
        Err(Hold::EarlierLayer {
            layer,
            earlier: open.clone(),
            completed: info.and_then(|i| i.tasks_completed).unwrap_or(0),
            total: info.and_then(|i| i.tasks_total).unwrap_or(0),
            left,
            more,
        })
    }
}

/// The first [`NAMED`] unfinished tasks of `layer` (`ID status`), and how many more there are.
fn unfinished(state: &State, layer: &str) -> (Vec<String>, usize) {
    let mut left = Vec::new();
    let mut more = 0;
    for t in layer_tasks(state, layer) {
        let s = state.task(&t).map_or(TaskStatus::Pending, Task::status);
        if s == TaskStatus::Completed {
            continue;
        }
        if left.len() < NAMED {
            left.push(format!("{t} {s}"));
        } else {
            more += 1;
        }
    }
    (left, more)
}

/// Whether task `id` may be launched now in the derived `state` ([`Policy::may_launch`]; for
/// many tasks of one state, make one [`Policy`]).
pub fn may_launch(state: &State, id: &str) -> Result<(), Hold> {
    Policy::new(state).may_launch(id)
}

/// The abandoned tasks, in the file's order.
pub fn abandoned(state: &State) -> Vec<String> {
    state
        .tasks
        .iter()
        .filter(|(_, t)| t.status() == TaskStatus::Abandoned)
        .map(|(id, _)| id.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::execute::derive::{derive, tests::some_state};
    use crate::layouts::json::typed;
    use proptest::prelude::*;

    /// The decision as it was made before [`Policy`]: every task on its own, the earlier
    /// layer's unfinished tasks listed in full (issue 23 keeps it as the reference).
    fn reference(state: &State, id: &str) -> Result<(), (String, String)> {
        let fresh = Policy::new(state).may_launch(id);
        let Err(Hold::EarlierLayer { .. }) = &fresh else {
            return fresh.map_err(|h| (h.why(), h.fix()));
        };
        let layer = layer_of(state, id).unwrap_or_default();
        for l in layer_order(state) {
            if l == layer {
                break;
            }
            let info = state.layer(&l).cloned().unwrap_or_default();
            if info.status == Some(LayerStatus::Completed) {
                continue;
            }
            let left: Vec<String> = layer_tasks(state, &l)
                .into_iter()
                .map(|t| {
                    (
                        state
                            .task(&t)
                            .map_or(TaskStatus::Pending, Task::status)
                            .to_string(),
                        t,
                    )
                })
                .filter(|(s, _)| s != "completed")
                .map(|(s, t)| format!("{t} {s}"))
                .collect();
            let mut named: Vec<String> = left.iter().take(NAMED).cloned().collect();
            if left.len() > NAMED {
                named.push(format!("and {} more", left.len() - NAMED));
            }
            let named = if named.is_empty() {
                String::new()
            } else {
                format!(" ({})", named.join(", "))
            };
            return Err((
                format!(
                    "its layer {layer} waits for layer {l} ({}/{} completed)",
                    info.tasks_completed.unwrap_or(0),
                    info.tasks_total.unwrap_or(0)
                ),
                format!("Layers run in order: finish layer {l} first{named}."),
            ));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// One policy reused for every task of a state decides each as the reference does.
        #[test]
        fn one_policy_decides_every_task_as_alone(state in some_state()) {
            let state: State = typed(&state).unwrap();
            let mut view = state.clone();
            derive(&state, &mut view, "2026-01-01T01:00:00Z");
            let policy = Policy::new(&view);
            for id in view.tasks.keys() {
                let got = policy.may_launch(id).map_err(|h| (h.why(), h.fix()));
                prop_assert_eq!(got, reference(&view, id), "{}", id);
            }
        }
    }

    #[test]
    fn a_refusal_names_five_unfinished_tasks_and_counts_the_rest() {
        let mut tasks = serde_json::Map::new();
        for i in 0..8 {
            tasks.insert(
                format!("L0-00{i}"),
                serde_json::json!({"status": "pending"}),
            );
        }
        tasks.insert("L1-001".into(), serde_json::json!({"status": "pending"}));
        let state: State = typed(&serde_json::json!({
            "layers": {"0-setup": {"status": "in_progress"}, "1-core": {"status": "pending"}},
            "tasks": tasks,
        }))
        .unwrap();
        let hold = Policy::new(&state).may_launch("L1-001").unwrap_err();
        assert_eq!(
            hold.fix(),
            "Layers run in order: finish layer 0-setup first (L0-000 pending, L0-001 pending, L0-002 pending, L0-003 pending, L0-004 pending, and 3 more)."
        );
    }
}
