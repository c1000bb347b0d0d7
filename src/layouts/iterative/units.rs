//! The units of one slug as state.json holds them: keys by mode, counters, dependencies
//! (tasks.md `Depends:`, plan.md chains, a blocked unit's `Waiting on T3`), readiness, and the
//! current pointer. Every pass here is linear in the number of units.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::lifecycle::{Counters, DEFAULT_MAX_ITERATIONS};
use super::markdown::PlanUnit;
use crate::graph::{self, Node};

/// The prefix of a blocked unit's reason when it waits on its dependencies (seed 003's T5).
pub const WAITING_PREFIX: &str = "Waiting on ";
/// Most units named in one message; the rest are counted.
const NAMED_CAP: usize = 10;

pub(crate) fn units_key(state: &Value) -> &'static str {
    if state["mode"] == "knowledge" {
        "phases"
    } else {
        "tasks"
    }
}

pub(crate) fn current_key(state: &Value) -> &'static str {
    if state["mode"] == "knowledge" {
        "current_phase"
    } else {
        "current_task"
    }
}

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

pub(crate) fn counters_of(unit: &Value, plan_max: Option<u64>) -> Counters {
    let n = |k: &str| unit.get(k).and_then(Value::as_u64).unwrap_or(0);
    Counters {
        status: unit["status"].as_str().unwrap_or("pending").to_string(),
        iterations_used: n("iterations_used"),
        confirmations_used: n("confirmations_used"),
        failed_confirmations: n("failed_confirmations"),
        max_iterations: unit
            .get("max_iterations")
            .and_then(Value::as_u64)
            .or(plan_max)
            .unwrap_or(DEFAULT_MAX_ITERATIONS)
            .max(1),
        reason: unit
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

pub(crate) fn write_counters(unit: &mut Map<String, Value>, c: &Counters) {
    unit.insert("status".into(), json!(c.status));
    unit.insert("iterations_used".into(), json!(c.iterations_used));
    unit.insert("confirmations_used".into(), json!(c.confirmations_used));
    if c.failed_confirmations > 0 || unit.contains_key("failed_confirmations") {
        unit.insert("failed_confirmations".into(), json!(c.failed_confirmations));
    }
    unit.insert("max_iterations".into(), json!(c.max_iterations));
    match &c.reason {
        Some(r) => unit.insert("reason".into(), json!(r)),
        None => unit.remove("reason"),
    };
}

/// The counters as a `set` note carries them.
pub(crate) fn counters_json(c: &Counters) -> Value {
    let mut m = Map::new();
    write_counters(&mut m, c);
    m.insert("failed_confirmations".into(), json!(c.failed_confirmations));
    Value::Object(m)
}

pub(crate) fn unit_ids(state: &Value) -> Vec<String> {
    state[units_key(state)]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

pub(crate) fn status_of<'a>(state: &'a Value, unit: &str) -> &'a str {
    unit_status(&state[units_key(state)][unit])
}

/// The units of a state, in order (empty when there are none).
pub(crate) fn units_of(state: &Value) -> impl Iterator<Item = (&String, &Value)> {
    state[units_key(state)].as_object().into_iter().flatten()
}

pub(crate) fn unit_status(unit: &Value) -> &str {
    unit["status"].as_str().unwrap_or("pending")
}

fn unit_reason(unit: &Value) -> Option<&str> {
    unit["reason"].as_str()
}

/// Whether a unit is blocked only because it waits on its dependencies.
pub(crate) fn unit_waiting(unit: &Value) -> bool {
    unit_status(unit) == "blocked"
        && unit_reason(unit).is_some_and(|r| r.starts_with(WAITING_PREFIX))
}

/// Whether a unit has not started: pending, or blocked only on its dependencies.
pub(crate) fn unit_not_started(unit: &Value) -> bool {
    unit_status(unit) == "pending" || unit_waiting(unit)
}

/// Whether a unit of `state` has not started.
pub(crate) fn not_started(state: &Value, unit: &str) -> bool {
    unit_not_started(&state[units_key(state)][unit])
}

/// The dependencies of a unit: the plan's, plus `Waiting on X, Y` in a blocked unit's reason.
fn unit_deps(plan: &Plan, id: &str, unit: &Value) -> Vec<String> {
    let mut deps: Vec<String> = plan.get(id).map(|p| p.depends.clone()).unwrap_or_default();
    if let Some(list) = unit_reason(unit).and_then(|r| r.strip_prefix(WAITING_PREFIX)) {
        for d in list
            .split([',', ' '])
            .map(str::trim)
            .filter(|d| !d.is_empty() && *d != "and")
        {
            if !deps.iter().any(|x| x == d) {
                deps.push(d.to_string());
            }
        }
    }
    deps
}

/// The dependencies of a unit of `state`.
pub(crate) fn deps_of(state: &Value, plan: &Plan, unit: &str) -> Vec<String> {
    unit_deps(plan, unit, &state[units_key(state)][unit])
}

/// The units that are done.
fn done_set(state: &Value) -> HashSet<&str> {
    units_of(state)
        .filter(|(_, u)| unit_status(u) == "done")
        .map(|(id, _)| id.as_str())
        .collect()
}

/// The dependencies of `unit` that are not done yet, in order.
pub(crate) fn unfinished_deps(state: &Value, plan: &Plan, unit: &str) -> Vec<String> {
    deps_of(state, plan, unit)
        .into_iter()
        .filter(|d| status_of(state, d) != "done")
        .collect()
}

/// `Waiting on T3` / `Waiting on T3, T4`.
pub(crate) fn waiting_reason(deps: &[String]) -> String {
    format!("{WAITING_PREFIX}{}", deps.join(", "))
}

/// Names at most ten units: `T1, T2, and 3 more`.
pub(crate) fn name_some(ids: &[String]) -> String {
    let mut shown: Vec<String> = ids.iter().take(NAMED_CAP).cloned().collect();
    if ids.len() > NAMED_CAP {
        shown.push(format!("and {} more", ids.len() - NAMED_CAP));
    }
    shown.join(", ")
}

/// Units not started whose dependencies are not all done, each with those dependencies, in
/// state order.
pub(crate) fn waiting_units(state: &Value, plan: &Plan) -> Vec<(String, Vec<String>)> {
    let done = done_set(state);
    units_of(state)
        .filter(|(_, u)| unit_not_started(u))
        .filter_map(|(id, u)| {
            let open: Vec<String> = unit_deps(plan, id, u)
                .into_iter()
                .filter(|d| !done.contains(d.as_str()))
                .collect();
            (!open.is_empty()).then(|| (id.clone(), open))
        })
        .collect()
}

/// Units that can start now: not started, with every dependency done, in state order (the
/// shared graph rule, [`crate::graph::deps_done`]).
pub fn ready_units(state: &Value, plan: &Plan) -> Vec<String> {
    let done = done_set(state);
    units_of(state)
        .filter(|(_, u)| unit_not_started(u))
        .filter(|(id, u)| {
            let deps = unit_deps(plan, id, u);
            graph::deps_done(&Node::new(id, deps.iter().map(String::as_str)), &done)
        })
        .map(|(id, _)| id.clone())
        .collect()
}

fn working(unit: &Value) -> bool {
    matches!(
        unit_status(unit),
        "in_progress" | "confirming" | "verifying"
    )
}

/// Brings the units' dependency blocks, the current pointer, `current_iteration` and the phase
/// up to date after a change: a unit not started whose dependencies are not all done becomes
/// `blocked` with `Waiting on …`; a waiting unit whose dependencies are done becomes `pending`;
/// the current pointer stays on a unit in work, else moves to the first ready unit; the phase
/// becomes `verify` when every unit is done. Returns the ready units.
pub(crate) fn advance(state: &mut Value, plan: &Plan) -> Vec<String> {
    let key = units_key(state);
    let waits: HashMap<String, Vec<String>> = waiting_units(state, plan).into_iter().collect();
    let lifted: Vec<String> = units_of(state)
        .filter(|(id, u)| unit_waiting(u) && !waits.contains_key(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect();
    if let Some(units) = state[key].as_object_mut() {
        for id in lifted {
            if let Some(u) = units.get_mut(&id).and_then(Value::as_object_mut) {
                u.insert("status".into(), json!("pending"));
                u.remove("reason");
            }
        }
        for (id, open) in &waits {
            if let Some(u) = units.get_mut(id).and_then(Value::as_object_mut) {
                let reason = waiting_reason(open);
                if u.get("status") != Some(&json!("blocked"))
                    || u.get("reason").and_then(Value::as_str) != Some(reason.as_str())
                {
                    u.insert("status".into(), json!("blocked"));
                    u.insert("reason".into(), json!(reason));
                }
            }
        }
    }
    let ready = ready_units(state, plan);
    let ck = current_key(state);
    let cur = state[ck]
        .as_str()
        .filter(|c| working(&state[key][*c]))
        .map(str::to_string);
    let next = cur
        .or_else(|| {
            units_of(state)
                .find(|(_, u)| working(u))
                .map(|(id, _)| id.clone())
        })
        .or_else(|| ready.first().cloned());
    state[ck] = next.map_or(Value::Null, Value::String);
    let mut all_done = true;
    let mut any = false;
    for (_, u) in units_of(state) {
        any = true;
        all_done &= unit_status(u) == "done";
    }
    if any && all_done {
        state["phase"] = json!("verify");
    } else if state["phase"] == "verify" {
        state["phase"] = json!("execute");
    }
    set_current_iteration(state);
    ready
}

/// `current_iteration`: the current unit's `iterations_used` (0 without a current unit).
pub(crate) fn set_current_iteration(state: &mut Value) {
    let key = units_key(state);
    let n = state[current_key(state)]
        .as_str()
        .and_then(|c| state[key][c]["iterations_used"].as_u64())
        .unwrap_or(0);
    state["current_iteration"] = json!(n);
}
