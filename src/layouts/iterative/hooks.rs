//! Facts → [`Reaction`]: one stop or launch of a unit's subagent (the lifecycle stepped
//! ([`super::lifecycle`]), the progress entry logged (first: it is the authority on recovery),
//! state.json written, and what the subagent and the main agent hear), a commit recorded in the
//! slug whose unit is in work, and a `<task>` or `<signal>` name resolved without a full load.
//!
//! A unit that is held (timed out, or blocked by the failed-confirmation cap) or that waits on
//! unfinished dependencies is not moved by subagents: a launch naming it is refused, and a
//! signal for it is not applied but logged as an `ignored` note and reported to the main agent
//! and the user. Stops without a signal count nothing.

use super::lifecycle::{step, Counters, Effect};
use super::log::{render_entry, render_note, Entry};
use super::markdown::{self, PlanUnit};
use super::model::{Hold, Stage, Status};
use super::plan::*;
use super::state::*;
use super::Paths;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::Commit;
use crate::layouts::unit::{Budget, Input, Reaction, Turn};
use crate::layouts::{StoreRef, Unit};
use crate::signals::Signal;
use crate::store::folder_lock_path;

/// What a person can do about a held unit.
fn person_hint(store: &StoreRef, unit: &str, c: &Counters) -> String {
    let s = &store.id;
    if c.hold() == Some(Hold::TimedOut) {
        format!(
            "A person decides: `taskhook iterative set-max {s} {unit} N` gives it more iterations, `taskhook iterative reset {s} {unit}` starts it over."
        )
    } else {
        format!(
            "A person decides: `taskhook iterative unblock {s} {unit}` sends it back to work, `taskhook iterative reset {s} {unit}` starts it over."
        )
    }
}

/// One stop of a unit (a signal, or none): counts the iteration, steps the lifecycle, logs the
/// entry, writes state.json, and says what the subagent and main agent hear.
pub fn stop(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    signal: Option<&Signal>,
    turn: &Turn<'_>,
) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, store, true)?;
        let Some(u) = l.state.unit(unit) else {
            save(cx, store, &mut l)?;
            return Ok(Reaction::default());
        };
        let plan_unit = l.plan.get(unit).cloned();
        let mut c = counters_of(u, l.plan.max_of(unit));
        let waiting = if not_started(&l.state, unit) {
            unfinished_deps(&l.state, &l.plan, unit)
        } else {
            Vec::new()
        };
        let input = match signal {
            Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
            None => Input::NoSignal,
        };
        let effect = if waiting.is_empty() {
            step(&mut c, input)
        } else {
            Effect::Held(format!("it waits on {} (not done)", waiting.join(", ")))
        };
        match effect {
            Effect::Unchanged | Effect::Started => {
                save(cx, store, &mut l)?;
                return Ok(Reaction::default());
            }
            Effect::Held(why) => return ignored(cx, store, &mut l, unit, &c, signal, &why),
            _ => {}
        }
        let now = cx.store.clock().stamp();
        {
            let u = l.state.units_mut().entry(unit);
            write_counters(u, &c);
            u.start_at(&now);
            if let Some(s) = signal {
                u.last_signal = Some(s.text());
            }
            if effect == Effect::Completed {
                mark_done(u, &now);
            }
        }
        if c.status.in_work() {
            l.state.set_current(Some(unit.to_string()));
        }
        l.state.updated = Some(now.clone());
        if matches!(l.state.phase, Stage::Plan | Stage::Discover) {
            l.state.phase = Stage::Execute;
        }
        let ready = advance(&mut l.state, &l.plan);
        // progress.md's last entry of the unit is read only when the entry needs it.
        let last_remaining = || Ok(last_entry(cx, &p, unit)?.and_then(|e| e.remaining));
        let (remaining, blockers) = entry_fields(&effect, &c, signal, turn, last_remaining)?;
        let commits: Vec<String> = l
            .state
            .commits()
            .iter()
            .skip(l.commits_logged)
            .map(|c| super::reconcile::hash_of(c).to_string())
            .filter(|h| !h.is_empty())
            .collect();
        l.commits_logged = l.state.commits().len();
        let entry = Entry {
            unit: unit.to_string(),
            iteration: c.iterations_used,
            timestamp: now.clone(),
            did: Some(did_text(&turn.message.did)),
            remaining: Some(remaining.clone()),
            blockers,
            signal: signal.map(|s| match &s.reason {
                Some(r) => format!("{}: {r}", s.text()),
                None => s.text(),
            }),
            commit: Some(if commits.is_empty() {
                "none".into()
            } else {
                commits.join(", ")
            }),
        };
        // The log first: if the state write is lost, SessionStart replays the log.
        log_notes(cx, &p, &mut l)?;
        append_progress(cx, &p, &mut l, &render_entry(&entry))?;
        write_state(cx, &p, &mut l)?;
        let plan_file = if is_knowledge(cx, store) {
            "plan.md"
        } else {
            "tasks.md"
        };
        Ok(reply(
            store,
            unit,
            &c,
            &effect,
            plan_unit.as_ref(),
            &remaining,
            &ready,
            plan_file,
        ))
    })
}

/// The entry's **Remaining** and, for an entry without a signal, its **Blockers** (the seed's
/// format: signal entries carry **Signal** instead). `last_remaining` (the unit's previous
/// entry's, read from progress.md) is called only when the subagent did not state it and the
/// entry needs it.
fn entry_fields(
    effect: &Effect,
    c: &Counters,
    signal: Option<&Signal>,
    turn: &Turn<'_>,
    last_remaining: impl FnOnce() -> Result<Option<String>>,
) -> Result<(String, Option<String>)> {
    let stated = || -> Result<String> {
        if let Some(said) = &turn.message.remaining {
            return Ok(said.clone());
        }
        Ok(last_remaining()?
            .filter(|r| !r.eq_ignore_ascii_case("none"))
            .unwrap_or_else(|| "Not stated by the subagent".into()))
    };
    let timeout = format!("Hit max iterations ({}): status timeout", c.max_iterations);
    let done_declared = signal.is_some_and(|s| s.kind == crate::signals::SignalKind::Done);
    let remaining = match effect {
        _ if done_declared => "None".to_string(),
        Effect::Returned(r) => format!(
            "Fix what the check found{}",
            r.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
        ),
        Effect::Blocked(r) if r == super::lifecycle::CONFIRMATION_CAP_REASON => {
            format!("Needs review by a person: {r}")
        }
        Effect::Timeout if signal.is_some() => format!("{} ({timeout})", stated()?),
        _ => stated()?,
    };
    if signal.is_some() {
        return Ok((remaining, None));
    }
    let blockers = match effect {
        Effect::Timeout => timeout,
        Effect::Returned(Some(r)) | Effect::KeepGoing(Some(r)) | Effect::Blocked(r) => r.clone(),
        _ => turn
            .message
            .blockers
            .clone()
            .unwrap_or_else(|| "None".into()),
    };
    Ok((remaining, Some(blockers)))
}

/// A stop on a unit subagents cannot move: a signal is logged as an `ignored` note and reported
/// to the main agent and the user; state.json does not change.
fn ignored(
    cx: &Ctx,
    store: &StoreRef,
    l: &mut Slug,
    unit: &str,
    c: &Counters,
    signal: Option<&Signal>,
    why: &str,
) -> Result<Reaction> {
    let p = Paths::of(&store.root);
    let Some(s) = signal else {
        save(cx, store, l)?;
        return Ok(Reaction::default());
    };
    let hint = if why.starts_with("it waits on") {
        "Finish what it depends on first.".to_string()
    } else {
        person_hint(store, unit, c)
    };
    let text = format!(
        "<signal>{}</signal> from a subagent was not applied: {unit} is unchanged because {why}",
        s.text()
    );
    log_notes(cx, &p, l)?;
    let note = render_note(&cx.store.clock().stamp(), "ignored", Some(unit), &text);
    append_progress(cx, &p, l, &note)?;
    write_state(cx, &p, l)?;
    let msg = format!(
        "iterative {}: {unit} is unchanged: a subagent signalled {} but {why}.",
        store.id,
        s.text()
    );
    Ok(Reaction {
        status: Some(c.status.to_string()),
        tell_user: vec![format!("taskhook: {msg}")],
        tell_main: vec![format!("{msg} {hint}")],
        refused: Some(format!("{unit} is unchanged because {why}. {hint}")),
        ..Default::default()
    })
}

/// A launch of a subagent bound to `unit` (PreToolUse of `Agent`): a unit not started (or
/// that a subagent reported BLOCKED) becomes `in_progress`; a held unit, or one waiting on
/// unfinished dependencies, is refused. Decided on an unlocked read; only a change locks.
pub fn launch(cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
    cx.store.transact(&folder_lock_path(&store.root), |pass| {
        let mut l = load(cx, store, pass.writes())?;
        if l.state.unit(unit).is_none() {
            return finish(cx, store, &mut l, pass.writes(), Reaction::default());
        }
        let waiting = if not_started(&l.state, unit) {
            unfinished_deps(&l.state, &l.plan, unit)
        } else {
            Vec::new()
        };
        if !waiting.is_empty() {
            let deny = format!(
                "iterative {}: {unit} waits on {} (not done yet): launch a subagent for {} first.",
                store.id,
                waiting.join(", "),
                waiting[0]
            );
            return finish(cx, store, &mut l, pass.writes(), Reaction::refused(deny));
        }
        let mut c = counters_of(
            l.state.unit(unit).unwrap_or(&Default::default()),
            l.plan.max_of(unit),
        );
        let prev = c.clone();
        let step = match step(&mut c, Input::Launch) {
            Effect::Held(why) => Reaction::refused(format!(
                "iterative {}: {unit} is held because {why}. {}",
                store.id,
                person_hint(store, unit, &c)
            )),
            Effect::Started => {
                let now = cx.store.clock().stamp();
                let u = l.state.units_mut().entry(unit);
                write_counters(u, &c);
                u.start_at(&now);
                if prev.iterations_used > 0 {
                    // The log ends on the BLOCKED: say that a launch resumed it.
                    l.sets.push((
                        unit.to_string(),
                        counters_json(&c),
                        format!(
                            "relaunched after {}",
                            prev.reason.as_ref().map_or("a block", |r| r.text())
                        ),
                    ));
                }
                advance(&mut l.state, &l.plan);
                l.state.updated = Some(now);
                l.dirty = true;
                Reaction::status(c.status.to_string())
            }
            _ => Reaction::default(),
        };
        finish(cx, store, &mut l, pass.writes(), step)
    })
}

fn finish(
    cx: &Ctx,
    store: &StoreRef,
    l: &mut Slug,
    writes: bool,
    step: Reaction,
) -> Result<(Reaction, bool)> {
    let change = l.dirty || !l.sets.is_empty();
    if writes {
        save(cx, store, l)?;
    }
    Ok((step, change))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn reply(
    store: &StoreRef,
    unit: &str,
    c: &Counters,
    effect: &Effect,
    plan: Option<&PlanUnit>,
    remaining: &str,
    ready: &[String],
    plan_file: &str,
) -> Reaction {
    let mut r = Reaction {
        status: Some(c.status.to_string()),
        budget: Some(Budget {
            used: c.iterations_used,
            max: c.max_iterations,
        }),
        ready: ready.to_vec(),
        ..Default::default()
    };
    let sig = format!("<signal>{unit}_DONE</signal>");
    let fail = format!("<signal>{unit}_FAILED: what is wrong</signal>");
    let criteria = plan
        .and_then(|p| p.criteria.clone())
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    let budget = c.budget_text();
    let where_ = format!(".claude/iterative/{}/{plan_file}", store.id);
    r.instruction = match effect {
        Effect::Confirm => Some(format!(
            "{unit}: confirmation pass ({budget}). You declared {unit} done. Re-check every criterion of {unit} in {where_}{criteria}: run the checks again, fix anything that does not hold, and emit {sig} again only if all of it holds. If something cannot be fixed now, emit {fail}."
        )),
        Effect::Verify => Some(format!(
            "{unit}: verification pass ({budget}). Confirmation held. Now review the work for quality against {unit}'s criteria in {where_}{criteria}: read the diff as a reviewer, run the tests and linters, look for missed edge cases and leftovers. Emit {sig} again only if it passes review; otherwise emit {fail}."
        )),
        Effect::Returned(reason) => Some(format!(
            "{unit}: the check found problems{}; {unit} is back in progress ({budget}). Fix them, then emit {sig} when every criterion holds.",
            reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
        )),
        Effect::KeepGoing(_) => Some(format!(
            "{unit} is not done yet ({budget}). Remaining: {remaining}. Keep working; read .claude/iterative/{}/guardrails.md if you have not; when every criterion holds, emit {sig}.",
            store.id
        )),
        _ => None,
    };
    match effect {
        Effect::Completed => {
            let ready_txt = if ready.is_empty() {
                String::new()
            } else {
                format!(" Ready now: {}.", name_some(ready))
            };
            r.tell_main.push(format!(
                "iterative {}: {unit} is done (confirmed and verified after {} iterations).{ready_txt}",
                store.id, c.iterations_used
            ));
        }
        Effect::Blocked(reason) => {
            let msg = format!("iterative {}: {unit} is blocked: {reason}.", store.id);
            r.tell_user.push(format!("taskhook: {msg}"));
            let next = if c.held().is_some() {
                person_hint(store, unit, c)
            } else {
                "Ask the user for input, or move on to another ready unit.".to_string()
            };
            r.tell_main.push(format!("{msg} {next}"));
        }
        Effect::Timeout => {
            let msg = format!(
                "iterative {}: {unit} timed out after {} iterations (max_iterations {}).",
                store.id, c.iterations_used, c.max_iterations
            );
            r.tell_user.push(format!("taskhook: {msg}"));
            r.tell_main.push(format!(
                "{msg} Ask the user whether to raise max_iterations (`taskhook iterative set-max {} {unit} N`), simplify the criteria, or step in.",
                store.id
            ));
        }
        _ => {}
    }
    r
}

/// What the subagent did ([`crate::signals::FinalMessage::did`]) as the entry's **Did**.
pub(crate) fn did_text(did: &str) -> String {
    let out = markdown::one_paragraph(did);
    if out.is_empty() {
        "(no final message)".into()
    } else {
        out
    }
}

/// Records a commit (`hash: message`) in a slug whose current unit is not done yet (a subagent
/// commits during its first iteration, while the unit is still `pending`). Decided on an
/// unlocked read first; only a commit to record takes the lock (re-checked under it).
pub(crate) fn record_commit(cx: &Ctx, store: &StoreRef, c: &Commit<'_>) -> Result<Reaction> {
    let wants = |l: &Slug| {
        let Some(cur) = l.state.current() else {
            return false;
        };
        let status = l.state.status_of(cur);
        let in_work = status == Status::Pending || status.in_work();
        let known = l.state.commits().iter().any(|x| x.starts_with(&c.hash));
        in_work && !known
    };
    cx.store
        .transact(&folder_lock_path(&store.root), |pass| {
            let mut l = match load(cx, store, pass.writes()) {
                Ok(l) => l,
                Err(Error::NotFound(_)) => return Ok(((), false)),
                Err(e) => return Err(e),
            };
            let record = wants(&l);
            if pass.writes() {
                if record {
                    let commits = l.state.commits.get_or_insert_with(Vec::new);
                    commits.push(format!("{}: {}", c.hash, c.message));
                    l.state.updated = Some(cx.store.clock().stamp());
                    l.dirty = true;
                }
                save(cx, store, &mut l)?;
            }
            Ok(((), record))
        })
        .map(|()| Reaction::default())
}

/// The units a `<task>` or `<signal>` name can resolve to, read without a full load: when
/// state.json has a cursor and progress.md holds nothing past it, its units (and the plan's)
/// are all there are. `None` when a full load must decide (no cursor, a tail to apply, a file
/// that does not parse).
pub(crate) fn units_cheaply(cx: &Ctx, store: &StoreRef) -> Result<Option<Vec<Unit>>> {
    let p = Paths::of(&store.root);
    let Some(bytes) = cx.store.read(&p.state)? else {
        return Ok(None);
    };
    // Typed once for the event: the step's load that follows takes this reading over.
    let (_, Ok(state)) = super::state::typed_state(bytes)? else {
        return Ok(None);
    };
    let log_len = cx.store.len(&p.progress).unwrap_or(0);
    if state.taskhook.as_ref().map(|c| c.progress_bytes) != Some(log_len) {
        return Ok(None);
    }
    let Some(units) = state.units_present() else {
        return Ok(None);
    };
    let archived = state.phase == Stage::Complete;
    let plan = read_plan(cx, &p)?;
    let mut out: Vec<Unit> = units
        .iter()
        .map(|(id, u)| Unit::new(id, !archived && u.status != Status::Done))
        .collect();
    out.extend(
        plan.units
            .iter()
            .filter(|u| !units.contains(&u.id))
            .map(|u| Unit::new(&u.id, !archived)),
    );
    Ok(Some(out))
}
