//! The plan of one slug: tasks.md / plan.md indexed by unit id, and the order of work over the
//! model's units: counters for the lifecycle, dependencies (tasks.md `Depends:`, plan.md
//! chains, a blocked unit's `Waiting on T3`), readiness, and the current pointer. Every pass
//! here is linear in the number of units.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::lifecycle::{Counters, DEFAULT_MAX_ITERATIONS};
use super::markdown::PlanUnit;
use super::model::{Reason, Stage, State, Status, Unit};
use crate::graph::{self, Node};
use crate::layouts::summary::first_few;

pub use super::model::WAITING_PREFIX;
/// Most units named in one message; the rest are counted.
const NAMED_CAP: usize = 10;

/// tasks.md / plan.md, indexed by unit id.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub units: Vec<PlanUnit>,
    index: HashMap<String, usize>,
}

impl Plan {
    pub fn new(units: Vec<PlanUnit>) -> Self {
        let mut index = HashMap::with_capacity(units.len());
        for (i, u) in units.iter().enumerate() {
            index.entry(u.id.clone()).or_insert(i);
        }
        Plan { units, index }
    }

    pub fn get(&self, id: &str) -> Option<&PlanUnit> {
        self.index.get(id).map(|&i| &self.units[i])
    }

    /// The plan's `Max iterations:` for a unit.
    pub fn max_of(&self, id: &str) -> Option<u64> {
        self.get(id).and_then(|u| u.max_iterations)
    }
}

/// A unit's counters for the lifecycle (the plan's `Max iterations:` when state.json has none).
pub(crate) fn counters_of(unit: &Unit, plan_max: Option<u64>) -> Counters {
    Counters {
        status: unit.status,
        iterations_used: unit.iterations_used.unwrap_or(0),
        confirmations_used: unit.confirmations_used.unwrap_or(0),
        failed_confirmations: unit.failed_confirmations.unwrap_or(0),
        max_iterations: unit
            .max_iterations
            .or(plan_max)
            .unwrap_or(DEFAULT_MAX_ITERATIONS)
            .max(1),
        reason: unit.reason.clone(),
    }
}

/// Writes the lifecycle's counters into a unit (`failed_confirmations` only when it counts or
/// the unit had the field).
pub(crate) fn write_counters(unit: &mut Unit, c: &Counters) {
    unit.status = c.status;
    unit.iterations_used = Some(c.iterations_used);
    unit.confirmations_used = Some(c.confirmations_used);
    if c.failed_confirmations > 0 || unit.failed_confirmations.is_some() {
        unit.failed_confirmations = Some(c.failed_confirmations);
    }
    unit.max_iterations = Some(c.max_iterations);
    unit.reason = c.reason.clone();
}

/// A fresh unit holding the counters.
pub(crate) fn unit_with(c: &Counters) -> Unit {
    let mut u = Unit::default();
    write_counters(&mut u, c);
    u
}

/// The counters as a `set` note carries them (`failed_confirmations` always).
pub(crate) fn counters_json(c: &Counters) -> Value {
    let mut v = serde_json::to_value(unit_with(c)).unwrap_or_default();
    if let Value::Object(m) = &mut v {
        m.entry("failed_confirmations")
            .or_insert(Value::from(c.failed_confirmations));
    }
    v
}

/// A `set` note's counters as a unit (`None` when they are not one).
pub(crate) fn set_unit(counters: &Value) -> Option<Unit> {
    crate::layouts::json::typed(counters).ok()
}

/// The dependencies of a unit: the plan's, plus `Waiting on X, Y` in a blocked unit's reason.
fn unit_deps(plan: &Plan, id: &str, unit: Option<&Unit>) -> Vec<String> {
    let mut deps: Vec<String> = plan.get(id).map(|p| p.depends.clone()).unwrap_or_default();
    if let Some(r) = unit.and_then(|u| u.reason.as_ref()) {
        for d in r.waits_on() {
            if !deps.iter().any(|x| x == d) {
                deps.push(d.to_string());
            }
        }
    }
    deps
}

/// The dependencies of a unit of `state`.
pub(crate) fn deps_of(state: &State, plan: &Plan, unit: &str) -> Vec<String> {
    unit_deps(plan, unit, state.unit(unit))
}

/// Whether a unit of `state` has not started (a unit state.json lacks has not).
pub(crate) fn not_started(state: &State, unit: &str) -> bool {
    state.unit(unit).is_none_or(Unit::not_started)
}

/// The units that are done.
fn done_set(state: &State) -> HashSet<&str> {
    state
        .units()
        .iter()
        .filter(|(_, u)| u.status == Status::Done)
        .map(|(id, _)| id)
        .collect()
}

/// The dependencies of `unit` that are not done yet, in order.
pub(crate) fn unfinished_deps(state: &State, plan: &Plan, unit: &str) -> Vec<String> {
    deps_of(state, plan, unit)
        .into_iter()
        .filter(|d| state.status_of(d) != Status::Done)
        .collect()
}

/// `Waiting on T3` / `Waiting on T3, T4`.
pub(crate) fn waiting_reason(deps: &[String]) -> String {
    Reason::waiting(deps).text().to_string()
}

/// Names at most ten units: `T1, T2, and 3 more`.
pub(crate) fn name_some(ids: &[String]) -> String {
    first_few(ids.iter().cloned(), ids.len(), NAMED_CAP).join(", ")
}

/// Units not started whose dependencies are not all done, each with those dependencies, in
/// state order.
pub(crate) fn waiting_units(state: &State, plan: &Plan) -> Vec<(String, Vec<String>)> {
    let done = done_set(state);
    state
        .units()
        .iter()
        .filter(|(_, u)| u.not_started())
        .filter_map(|(id, u)| {
            let open: Vec<String> = unit_deps(plan, id, Some(u))
                .into_iter()
                .filter(|d| !done.contains(d.as_str()))
                .collect();
            (!open.is_empty()).then(|| (id.to_string(), open))
        })
        .collect()
}

/// Units that can start now: not started, with every dependency done, in state order (the
/// shared graph rule, [`crate::graph::deps_done`]).
pub fn ready_units(state: &State, plan: &Plan) -> Vec<String> {
    let done = done_set(state);
    state
        .units()
        .iter()
        .filter(|(_, u)| u.not_started())
        .filter(|(id, u)| {
            let deps = unit_deps(plan, id, Some(u));
            graph::deps_done(&Node::new(id, deps.iter().map(String::as_str)), &done)
        })
        .map(|(id, _)| id.to_string())
        .collect()
}

/// Brings the units' dependency blocks, the current pointer, `current_iteration` and the phase
/// up to date after a change: a unit not started whose dependencies are not all done becomes
/// `blocked` with `Waiting on …`; a waiting unit whose dependencies are done becomes `pending`;
/// the current pointer stays on a unit in work, else moves to the first ready unit; the phase
/// becomes `verify` when every unit is done. Returns the ready units.
pub(crate) fn advance(state: &mut State, plan: &Plan) -> Vec<String> {
    let waits: HashMap<String, Vec<String>> = waiting_units(state, plan).into_iter().collect();
    for (id, u) in state.units_mut().iter_mut() {
        if let Some(open) = waits.get(id) {
            let reason = Reason::waiting(open);
            if u.status != Status::Blocked || u.reason.as_ref() != Some(&reason) {
                u.status = Status::Blocked;
                u.reason = Some(reason);
            }
        } else if u.waiting() {
            u.status = Status::Pending;
            u.reason = None;
        }
    }
    let ready = ready_units(state, plan);
    let units = state.units();
    let cur = state
        .current()
        .filter(|c| units.get(c).is_some_and(|u| u.status.in_work()))
        .map(str::to_string);
    let next = cur
        .or_else(|| {
            units
                .iter()
                .find(|(_, u)| u.status.in_work())
                .map(|(id, _)| id.to_string())
        })
        .or_else(|| ready.first().cloned());
    let all_done = !units.is_empty() && units.iter().all(|(_, u)| u.status == Status::Done);
    state.set_current(next);
    if all_done {
        state.phase = Stage::Verify;
    } else if state.phase == Stage::Verify {
        state.phase = Stage::Execute;
    }
    set_current_iteration(state);
    ready
}

/// `current_iteration`: the current unit's `iterations_used` (0 without a current unit).
pub(crate) fn set_current_iteration(state: &mut State) {
    let n = state
        .current()
        .and_then(|c| state.unit(c))
        .and_then(|u| u.iterations_used)
        .unwrap_or(0);
    state.current_iteration = Some(n);
}
