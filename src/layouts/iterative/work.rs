//! The iterative layout's units for the agent's verbs and the board
//! ([`crate::layouts::work`]): every unit of the slug with its phase, the ready ones in state
//! order (the current unit first); a unit in its confirmation or verification pass owes that
//! pass; what `taskhook show` prints of a unit (its criteria, budget, guardrails, last
//! entries); and a release (back to `pending`, counters kept, a `set` note in progress.md so a
//! rebuild from the log agrees).

use super::lifecycle::Counters;
use super::log;
use super::model::{Stage, Status};
use super::plan::*;
use super::state::{load, read_log, Slug};
use super::Paths;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Phase, Reaction, Shown, StoreRef, WorkUnit};

/// Every unit of the slug, ready ones (the current first) before the rest.
pub fn work(cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
    let l = match load(cx, store, false) {
        Ok(l) => l,
        Err(Error::NotFound(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(units(&l))
}

/// [`work`] of a loaded slug (pure).
pub(crate) fn units(l: &Slug) -> Vec<WorkUnit> {
    let s = &l.state;
    let archived = s.phase == Stage::Complete;
    let current = s.current();
    let ready: std::collections::HashSet<String> = ready_units(s, &l.plan).into_iter().collect();
    let waiting: std::collections::HashMap<String, Vec<String>> =
        waiting_units(s, &l.plan).into_iter().collect();
    let mut out: Vec<(u8, WorkUnit)> = Vec::new();
    for (id, u) in s.units().iter() {
        let c: Counters = counters_of(u, l.plan.max_of(id));
        let status = u.status;
        let budget = format!("iteration {} of {}", c.iterations_used, c.max_iterations);
        let (phase, why, pass) = if archived || status == Status::Done {
            (Phase::Done, None, None)
        } else if let Some(held) = c.held() {
            (Phase::Person, Some(held), None)
        } else {
            match status {
                Status::Confirming => (
                    Phase::InProgress,
                    Some(budget),
                    Some("its confirmation pass: check the work against the criteria".into()),
                ),
                Status::Verifying => (
                    Phase::InProgress,
                    Some(budget),
                    Some("its verification pass: run the checks and review".into()),
                ),
                Status::InProgress => (Phase::InProgress, Some(budget), None),
                _ if waiting.contains_key(id) => {
                    (Phase::Blocked, Some(waiting_reason(&waiting[id])), None)
                }
                _ if ready.contains(id) => (Phase::Ready, Some(budget), None),
                Status::Blocked => (
                    Phase::Person,
                    Some(
                        c.reason
                            .clone()
                            .map_or_else(|| "blocked, no reason given".into(), String::from),
                    ),
                    None,
                ),
                _ => (Phase::Blocked, Some(status.to_string()), None),
            }
        };
        let order = match (phase, Some(id) == current) {
            (Phase::Ready, true) => 0,
            (Phase::Ready, false) => 1,
            _ => 2,
        };
        out.push((
            order,
            WorkUnit {
                id: id.to_string(),
                title: l
                    .plan
                    .get(id)
                    .map(|p| p.title.clone())
                    .filter(|t| !t.is_empty()),
                status: status.to_string(),
                phase,
                why,
                deps: deps_of(s, &l.plan, id),
                pass,
                since: u.completed_at().map(str::to_string),
                ..Default::default()
            },
        ));
    }
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, u)| u).collect()
}

/// A unit's criteria, budget, the slug's guardrails and the unit's last progress entries.
pub fn show(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
    let p = Paths::of(&store.root);
    let l = load(cx, store, false)?;
    let mut s = Shown::default();
    if let Some(plan) = l.plan.get(unit) {
        s.add("criteria", plan.criteria.clone().unwrap_or_default());
    }
    if let Some(u) = l.state.unit(unit) {
        let c = counters_of(u, l.plan.max_of(unit));
        let mut facts = vec![
            format!("iterations: {} of {}", c.iterations_used, c.max_iterations),
            format!("confirmations: {}", c.confirmations_used),
        ];
        if c.failed_confirmations > 0 {
            facts.push(format!("failed confirmations: {}", c.failed_confirmations));
        }
        if let Some(r) = &c.reason {
            facts.push(format!("reason: {r}"));
        }
        s.add("budget", facts.join("\n"));
    }
    s.add(
        "signal",
        format!("end the subagent's final message with <signal>{unit}_DONE</signal>"),
    );
    if let Some(shown) = super::summary::excerpt(cx, &p.guardrails)? {
        s.add("guardrails (read before every pass)", shown);
    }
    s.add(
        "files",
        format!(
            "state: {}\nprogress: {}\nguardrails: {}\ncontext: {}",
            p.state.display(),
            p.progress.display(),
            p.guardrails.display(),
            p.context.display()
        ),
    );
    let text = read_log(cx, &p)?;
    let entries: Vec<String> = log::parse_progress(&text)
        .into_iter()
        .filter(|e| e.unit == unit)
        .map(|e| {
            let mut line = format!("{} iteration {}", e.timestamp, e.iteration);
            if let Some(sig) = &e.signal {
                line.push_str(&format!(", signal {sig}"));
            }
            if let Some(r) = &e.remaining {
                line.push_str(&format!(", remaining: {r}"));
            }
            line
        })
        .collect();
    let from = entries.len().saturating_sub(5);
    s.add("recent passes", entries[from..].join("\n"));
    Ok(s)
}

/// Gives a unit back: `pending` again with its counters kept (nothing charged), logged as a
/// `set` note so a rebuild from progress.md gives the same state.
pub fn release(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    let done = super::commands::in_store(
        cx,
        store,
        unit,
        "released by its owner (taskhook release)",
        |_, c, _| {
            if !c.status.in_work() {
                return Err(Error::Rule(format!(
                    "{unit} is {}, not in progress; nothing to release",
                    c.status
                )));
            }
            let was = c.status;
            c.status = Status::Pending;
            c.reason = None;
            Ok(format!(
                "{unit}: released (was {was}); pending again, counters kept."
            ))
        },
    );
    match done {
        Ok(d) => Ok(Reaction {
            status: Some(d.unit.status.to_string()),
            tell_user: vec![d.message],
            ..Default::default()
        }),
        Err(Error::Rule(why)) => Ok(Reaction::refused(why)),
        Err(e) => Err(e),
    }
}

/// A line about a unit's claim in progress.md, as a note.
pub fn note(cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
    let p = Paths::of(&store.root);
    let now = cx.store.clock().stamp();
    cx.store
        .with_lock(&crate::store::folder_lock_path(&store.root), || {
            super::state::append_raw(cx, &p, &log::render_note(&now, "claim", Some(unit), text))
        })
}
