//! One slug's state as taskhook works with it: state.json checked against progress.md (the
//! authority on recovery), rebuilt or caught up from it when it is missing, corrupt or lags,
//! and the helpers over units, counters, dependencies and readiness.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::lifecycle::{step, Counters, DEFAULT_MAX_ITERATIONS};
use super::markdown::{parse_plan, parse_progress, Entry, PlanUnit};
use super::{Paths, SCHEMA};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::unit::Input;
use crate::layouts::StoreRef;
use crate::signals::parse_signals;
use crate::store::Loaded;

/// Whether a slug is in knowledge mode by its files (plan.md and no tasks.md).
pub(crate) fn is_knowledge(cx: &Ctx, store: &StoreRef) -> bool {
    let p = Paths::of(&store.root);
    cx.store.exists(&p.plan_md) && !cx.store.exists(&p.tasks_md)
}

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

/// Everything loaded for one operation on a slug.
pub struct Slug {
    pub state: Value,
    pub plan: Vec<PlanUnit>,
    pub entries: Vec<Entry>,
    pub progress_text: String,
    /// What reconciliation changed and why (one line each), for the summary.
    pub notes: Vec<String>,
    /// Whether `state` differs from the file on disk.
    pub dirty: bool,
}

pub(crate) fn read_plan(cx: &Ctx, p: &Paths) -> Result<Vec<PlanUnit>> {
    let text = match cx.store.read_text(&p.tasks_md)? {
        Some(t) => t,
        None => cx.store.read_text(&p.plan_md)?.unwrap_or_default(),
    };
    Ok(parse_plan(&text))
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
    if c.failed_confirmations > 0 {
        unit.insert("failed_confirmations".into(), json!(c.failed_confirmations));
    }
    unit.insert("max_iterations".into(), json!(c.max_iterations));
    match &c.reason {
        Some(r) => unit.insert("reason".into(), json!(r)),
        None => unit.remove("reason"),
    };
}

/// Replays progress entries through the lifecycle, per unit, from a fresh start.
pub(crate) fn replay(entries: &[Entry], unit: &str, max: u64) -> Counters {
    let mut c = Counters::pending(max);
    for e in entries.iter().filter(|e| e.unit == unit) {
        let signal = e.signal.as_deref().and_then(|s| {
            parse_signals(&format!("<signal>{s}</signal>"))
                .into_iter()
                .next()
        });
        let input = match &signal {
            Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
            None => Input::NoSignal,
        };
        step(&mut c, input);
    }
    c
}

/// The dependencies of a unit: the plan's, plus `Waiting on X, Y` in a blocked unit's reason.
pub(crate) fn deps_of(state: &Value, plan: &[PlanUnit], unit: &str) -> Vec<String> {
    let mut deps: Vec<String> = plan
        .iter()
        .find(|p| p.id == unit)
        .map(|p| p.depends.clone())
        .unwrap_or_default();
    if let Some(r) = state[units_key(state)][unit]["reason"].as_str() {
        if let Some(list) = r.strip_prefix("Waiting on ") {
            for d in list
                .split([',', ' '])
                .map(|d| d.trim())
                .filter(|d| !d.is_empty() && *d != "and")
            {
                if !deps.contains(&d.to_string()) {
                    deps.push(d.to_string());
                }
            }
        }
    }
    deps
}

pub(crate) fn unit_ids(state: &Value) -> Vec<String> {
    state[units_key(state)]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

pub(crate) fn status_of<'a>(state: &'a Value, unit: &str) -> &'a str {
    state[units_key(state)][unit]["status"]
        .as_str()
        .unwrap_or("pending")
}

/// Units that can start now: pending (or blocked only on dependencies) with every dependency
/// done, in state order (the shared graph rule, [`crate::graph::ready`]).
pub fn ready_units(state: &Value, plan: &[PlanUnit]) -> Vec<String> {
    let ids = unit_ids(state);
    let deps: Vec<Vec<String>> = ids.iter().map(|u| deps_of(state, plan, u)).collect();
    let nodes: Vec<Node<'_>> = ids
        .iter()
        .zip(&deps)
        .map(|(u, d)| Node::new(u, d.iter().map(String::as_str)))
        .collect();
    let done: HashSet<&str> = ids
        .iter()
        .filter(|u| status_of(state, u) == "done")
        .map(String::as_str)
        .collect();
    let key = units_key(state);
    graph::ready(&nodes, &done)
        .into_iter()
        .filter(|u| {
            let st = status_of(state, u);
            let waiting = st == "blocked"
                && state[key][*u]["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("Waiting on "));
            st == "pending" || waiting
        })
        .map(str::to_string)
        .collect()
}

/// After a unit finished: waiting units whose dependencies are all done become pending, the
/// current pointer moves to the next unit, and the phase becomes `verify` when all are done.
pub(crate) fn advance(state: &mut Value, plan: &[PlanUnit]) -> Vec<String> {
    let ready = ready_units(state, plan);
    let key = units_key(state);
    for u in &ready {
        if let Some(unit) = state[key][u.as_str()].as_object_mut() {
            if unit.get("status") == Some(&json!("blocked")) {
                unit.insert("status".into(), json!("pending"));
                unit.remove("reason");
            }
        }
    }
    let ids = unit_ids(state);
    let working = ids
        .iter()
        .find(|u| {
            matches!(
                status_of(state, u),
                "in_progress" | "confirming" | "verifying"
            )
        })
        .cloned();
    let next = working.or_else(|| ready.first().cloned());
    let ck = current_key(state);
    state[ck] = next.map_or(Value::Null, Value::String);
    if !ids.is_empty() && ids.iter().all(|u| status_of(state, u) == "done") {
        state["phase"] = json!("verify");
    }
    ready
}

/// Loads a slug, rebuilding state.json from progress.md when it is missing (but progress
/// exists), corrupt, or lags progress.md. Rebuilds move the bad bytes aside and log the
/// discrepancy in progress.md. Call under the folder lock when `write` is true.
pub fn load(cx: &Ctx, store: &StoreRef, write: bool) -> Result<Slug> {
    let p = Paths::of(&store.root);
    let plan = read_plan(cx, &p)?;
    let progress_text = cx.store.read_text(&p.progress)?.unwrap_or_default();
    let entries = parse_progress(&progress_text);
    let mut notes = Vec::new();
    let mut dirty = false;
    let now = cx.store.clock().stamp();
    let mut state = match cx.store.load_json(&p.state, SCHEMA)? {
        Loaded::Valid(v) => v,
        Loaded::Missing if entries.is_empty() => {
            return Err(Error::NotFound(format!(
                "`{}` has no state.json and no progress.md entries to rebuild it from",
                store.root.display()
            )))
        }
        other => {
            let why = match other {
                Loaded::Invalid(why) => why,
                _ => "it is missing".to_string(),
            };
            if write && cx.store.exists(&p.state) {
                let aside = cx.store.quarantine(&p.state)?;
                notes.push(format!(
                    "state.json was unusable ({why}); moved it to {} and rebuilt it from progress.md",
                    aside.file_name().unwrap_or_default().to_string_lossy()
                ));
            } else {
                notes.push(format!("state.json {why}; rebuilt it from progress.md"));
            }
            dirty = true;
            rebuild(cx, store, &plan, &entries, &now)
        }
    };
    // A state.json that lags progress.md (fewer iterations than logged) is rebuilt unit
    // by unit from the log.
    let key = units_key(&state);
    let mut ids = unit_ids(&state);
    for e in &entries {
        if !ids.contains(&e.unit) {
            ids.push(e.unit.clone());
        }
    }
    for id in ids {
        let logged = entries.iter().filter(|e| e.unit == id).count() as u64;
        let unit = state[key]
            .get(id.as_str())
            .cloned()
            .unwrap_or_else(|| json!({}));
        let plan_max = plan
            .iter()
            .find(|u| u.id == id)
            .and_then(|u| u.max_iterations);
        let have = counters_of(&unit, plan_max);
        if logged > have.iterations_used {
            let replayed = replay(&entries, &id, have.max_iterations);
            notes.push(format!(
                "state.json had {id} {} after {} iteration(s); progress.md logs {logged}: {id} is now {}",
                have.status, have.iterations_used, replayed.status
            ));
            let units = crate::layouts::json::ensure_object(&mut state[key]);
            let obj = units.entry(id.clone()).or_insert_with(|| json!({}));
            if let Some(m) = obj.as_object_mut() {
                write_counters(m, &replayed);
                if replayed.status == "done" {
                    m.insert("verification_passed".into(), json!(true));
                    let at = entries
                        .iter()
                        .rev()
                        .find(|e| e.unit == id)
                        .map_or(now.clone(), |e| e.timestamp.clone());
                    if crate::store::clock::parse_time(&at).is_some() {
                        m.entry("completed_at").or_insert(json!(at));
                    }
                }
            }
            dirty = true;
        }
    }
    if dirty {
        advance(&mut state, &plan);
        state["updated"] = json!(now);
    }
    Ok(Slug {
        state,
        plan,
        entries,
        progress_text,
        notes,
        dirty,
    })
}

/// A state.json rebuilt from the plan and progress.md alone.
pub(crate) fn rebuild(
    cx: &Ctx,
    store: &StoreRef,
    plan: &[PlanUnit],
    entries: &[Entry],
    now: &str,
) -> Value {
    let knowledge = is_knowledge(cx, store);
    let mut units = Map::new();
    let mut ids: Vec<String> = plan.iter().map(|u| u.id.clone()).collect();
    for e in entries {
        if !ids.contains(&e.unit) {
            ids.push(e.unit.clone());
        }
    }
    for id in &ids {
        let max = plan
            .iter()
            .find(|u| &u.id == id)
            .and_then(|u| u.max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS);
        let c = replay(entries, id, max);
        let mut m = Map::new();
        write_counters(&mut m, &c);
        if c.status == "done" {
            m.insert("verification_passed".into(), json!(true));
        }
        units.insert(id.clone(), Value::Object(m));
    }
    let created = entries
        .iter()
        .map(|e| e.timestamp.as_str())
        .find(|t| crate::store::clock::parse_time(t).is_some())
        .unwrap_or(now)
        .to_string();
    let (ukey, ckey) = if knowledge {
        ("phases", "current_phase")
    } else {
        ("tasks", "current_task")
    };
    let mut state = json!({
        "task": store.id,
        "slug": store.id,
        "mode": if knowledge { "knowledge" } else { "development" },
        "created": created,
        "updated": now,
        "phase": "execute",
        ckey: null,
        "current_iteration": 0,
        ukey: Value::Object(units),
    });
    advance(&mut state, plan);
    if let Some(cur) = state[ckey].as_str().map(str::to_string) {
        state["current_iteration"] = state[ukey][cur.as_str()]["iterations_used"].clone();
    }
    state
}

/// Writes a loaded slug back: reconciliation notes to progress.md, then state.json.
pub(crate) fn save(cx: &Ctx, store: &StoreRef, l: &Slug) -> Result<()> {
    let p = Paths::of(&store.root);
    log_notes(cx, &p, &l.notes)?;
    if l.dirty {
        cx.store.replace_json(&p.state, SCHEMA, &l.state)?;
    }
    Ok(())
}

/// Logs reconciliation notes as one `## Reconciled` block (not an iteration entry).
pub(crate) fn log_notes(cx: &Ctx, p: &Paths, notes: &[String]) -> Result<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let mut note = format!("## Reconciled - {}\n", cx.store.clock().stamp());
    for n in notes {
        note.push_str(&format!("**Discrepancy:** {n}\n"));
    }
    note.push('\n');
    append_progress(cx, p, &note)
}

pub(crate) fn append_progress(cx: &Ctx, p: &Paths, text: &str) -> Result<()> {
    if !cx.store.exists(&p.progress) {
        cx.store.append(&p.progress, b"# Progress Log\n\n")?;
    }
    cx.store.append(&p.progress, text.as_bytes())
}
