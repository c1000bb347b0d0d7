//! A person's commands on units (`taskhook iterative add | set-max | reset | unblock`): the only
//! way a held unit (timed out, or blocked by the failed-confirmation cap) moves again, seed
//! 003's "ask user: increase max, simplify criteria, or intervene".
//!
//! Each command runs under the slug's lock, writes the unit's new counters to state.json and a
//! `set` note to progress.md (so a replay of the log gives the same state), and brings
//! dependency blocks and the current pointer up to date.

use super::commands::{check_budget, store_ref};
use super::lifecycle::{Counters, DEFAULT_MAX_ITERATIONS};
use super::model::{Reason, Stage, Status, Unit};
use super::plan::*;
use super::state::{self, is_knowledge, load, Slug};
use super::{templates, Paths};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::StoreRef;
use crate::project::Project;
use crate::store::{check_id, check_unit_id, folder_lock_path};

/// What a command did: the unit after it, and one line for the person.
#[derive(Debug, Clone)]
pub struct Done {
    pub unit: Unit,
    pub message: String,
}

/// Runs `change` on a unit under the lock; logs a `set` note with `why` and writes state.json.
fn person<F>(
    cx: &Ctx,
    project: &Project,
    slug: &str,
    unit: &str,
    why: &str,
    change: F,
) -> Result<Done>
where
    F: FnOnce(&mut Slug, &mut Counters, &mut Unit) -> Result<String>,
{
    let store = store_ref(cx, project, slug)?;
    in_store(cx, &store, unit, why, change)
}

/// [`person`] on a store already found (the agent's `release` too).
pub(crate) fn in_store<F>(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    why: &str,
    change: F,
) -> Result<Done>
where
    F: FnOnce(&mut Slug, &mut Counters, &mut Unit) -> Result<String>,
{
    check_id("unit id", unit)?;
    let slug = store.id.as_str();
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, store, true)?;
        let Some(mut u) = l.state.unit(unit).cloned() else {
            return Err(Error::NotFound(format!("{slug} has no unit {unit:?}")));
        };
        let mut c = counters_of(&u, l.plan.max_of(unit));
        let message = change(&mut l, &mut c, &mut u)?;
        write_counters(&mut u, &c);
        l.state.units_mut().insert(unit.into(), u);
        l.sets
            .push((unit.to_string(), counters_json(&c), why.to_string()));
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
        l.dirty = true;
        state::save(cx, store, &mut l)?;
        Ok(Done {
            unit: l.state.unit(unit).cloned().unwrap_or_default(),
            message,
        })
    })
}

/// `reset`: the unit starts over (pending, counters at zero, budget kept).
pub fn reset(cx: &Ctx, project: &Project, slug: &str, unit: &str) -> Result<Done> {
    let why = "reset by a person (taskhook iterative reset)";
    person(cx, project, slug, unit, why, |_, c, u| {
        let was = format!("{} after {} iteration(s)", c.status, c.iterations_used);
        *c = Counters::pending(c.max_iterations);
        u.started_at = None;
        u.completed_at = None;
        u.verification_passed = None;
        u.last_signal = None;
        u.failed_confirmations = Some(0);
        Ok(format!(
            "{unit}: reset (was {was}); it starts over with max_iterations {}.",
            c.max_iterations
        ))
    })
}

/// `unblock`: a blocked unit (the confirmation cap, or a subagent's BLOCKED) goes back to
/// work, its failed confirmations cleared.
pub fn unblock(cx: &Ctx, project: &Project, slug: &str, unit: &str) -> Result<Done> {
    let why = "unblocked by a person (taskhook iterative unblock)";
    person(cx, project, slug, unit, why, |l, c, _| {
        if c.status != Status::Blocked || matches!(c.reason, Some(Reason::Waiting(_))) {
            let waits = unfinished_deps(&l.state, &l.plan, unit);
            return Err(Error::Rule(if waits.is_empty() {
                format!("{unit} is {}, not blocked: nothing to unblock", c.status)
            } else {
                format!(
                    "{unit} waits on {}: it starts by itself when they are done",
                    waits.join(", ")
                )
            }));
        }
        let was = c.reason.take().map(String::from).unwrap_or_default();
        c.status = if c.iterations_used == 0 {
            Status::Pending
        } else {
            Status::InProgress
        };
        c.reason = None;
        c.failed_confirmations = 0;
        let mut msg = format!("{unit}: unblocked (was: {was}); it is {} again.", c.status);
        if c.iterations_used >= c.max_iterations {
            msg.push_str(&format!(
                " Its budget is used up ({} of {}): raise it with `taskhook iterative set-max {slug} {unit} N` or its next work pass times out.",
                c.iterations_used, c.max_iterations
            ));
        }
        Ok(msg)
    })
}

/// `set-max`: a new `max_iterations`. A timed-out unit given room goes back to work.
pub fn set_max(cx: &Ctx, project: &Project, slug: &str, unit: &str, max: u64) -> Result<Done> {
    check_budget(max)?;
    let why = format!("max_iterations {max} by a person (taskhook iterative set-max)");
    person(cx, project, slug, unit, &why, |_, c, _| {
        let old = c.max_iterations;
        if c.status == Status::Timeout {
            if max <= c.iterations_used {
                return Err(Error::Rule(format!(
                    "{unit} timed out after {} iterations: a max_iterations of {max} gives none back; use at least {}",
                    c.iterations_used,
                    c.iterations_used + 1
                )));
            }
            c.max_iterations = max;
            c.status = Status::InProgress;
            c.reason = None;
            return Ok(format!(
                "{unit}: max_iterations {old} → {max}; it was timed out and is in progress again ({} iteration(s) left).",
                max - c.iterations_used
            ));
        }
        c.max_iterations = max;
        let mut msg = format!("{unit}: max_iterations {old} → {max}.");
        if max <= c.iterations_used && c.status != Status::Done {
            msg.push_str(&format!(
                " It has used {} already: its next work pass times out.",
                c.iterations_used
            ));
        }
        Ok(msg)
    })
}

/// What `add` is told about the new unit.
#[derive(Debug, Clone, Default)]
pub struct NewUnit {
    pub id: String,
    pub title: Option<String>,
    pub criteria: Option<String>,
    pub depends: Vec<String>,
    pub max_iterations: Option<u64>,
}

/// `add`: a new unit in state.json and in tasks.md / plan.md (after its last unit), pending or
/// waiting on its dependencies. Unknown dependencies and cycles are refused.
pub fn add(cx: &Ctx, project: &Project, slug: &str, u: &NewUnit) -> Result<Done> {
    let store = store_ref(cx, project, slug)?;
    check_unit_id("unit id", &u.id)?;
    for d in &u.depends {
        check_id("dependency", d)?;
    }
    let max = check_budget(u.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS))?;
    let p = Paths::of(&store.root);
    let knowledge = is_knowledge(cx, &store);
    let why = "added by a person (taskhook iterative add)";
    let done = cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, &store, true)?;
        if l.state.units().contains(&u.id) {
            return Err(Error::Rule(format!("{slug} already has a unit {}", u.id)));
        }
        if let Some(d) = u.depends.iter().find(|d| !l.state.units().contains(d)) {
            return Err(Error::Rule(format!(
                "{} cannot depend on {d}: {slug} has no unit {d}",
                u.id
            )));
        }
        let mut ids: Vec<String> = l.state.units().ids().cloned().collect();
        ids.push(u.id.clone());
        let deps: Vec<Vec<String>> = ids
            .iter()
            .map(|i| {
                if *i == u.id {
                    u.depends.clone()
                } else {
                    deps_of(&l.state, &l.plan, i)
                }
            })
            .collect();
        let nodes: Vec<Node<'_>> = ids
            .iter()
            .zip(&deps)
            .map(|(i, d)| Node::new(i, d.iter().map(String::as_str)))
            .collect();
        if let Some(cycle) = graph::find_cycle(&nodes) {
            return Err(Error::Rule(format!(
                "adding {} would make a dependency cycle: {}",
                u.id,
                graph::describe_cycle(&cycle)
            )));
        }
        let plan_path = if knowledge { &p.plan_md } else { &p.tasks_md };
        let text = cx.store.read_text(plan_path)?.unwrap_or_default();
        let block = templates::unit_block(
            &u.id,
            u.title.as_deref().unwrap_or(&u.id),
            u.criteria.as_deref(),
            max,
            &u.depends,
            knowledge,
        );
        cx.store
            .replace(plan_path, templates::insert_unit(&text, &block).as_bytes())?;
        l.plan = state::read_plan(cx, &p)?;
        let c = Counters::pending(max);
        l.state.units_mut().insert(u.id.clone(), unit_with(&c));
        l.sets
            .push((u.id.clone(), counters_json(&c), why.to_string()));
        if matches!(l.state.phase, Stage::Plan | Stage::Discover) {
            l.state.phase = Stage::Execute;
        }
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
        l.dirty = true;
        state::save(cx, &store, &mut l)?;
        let unit = l.state.unit(&u.id).cloned().unwrap_or_default();
        let file = if knowledge { "plan.md" } else { "tasks.md" };
        let mut message = format!(
            "Added {} to {slug} (state.json and {file}), max_iterations {max}",
            u.id
        );
        match &unit.reason {
            Some(r) => message.push_str(&format!("; blocked: {r}.")),
            None => message.push('.'),
        }
        Ok(Done { unit, message })
    })?;
    Ok(done)
}
