//! One stop of a unit's subagent: the iteration counted, the lifecycle stepped
//! ([`super::lifecycle`]), the progress entry logged (first: it is the authority on recovery),
//! state.json written, and the [`Step`] that says what the subagent and the main agent hear.

use serde_json::{json, Value};

use super::lifecycle::{step, Counters, Effect};
use super::markdown::{self, render_entry, Entry, PlanUnit};
use super::state::*;
use super::{Paths, SCHEMA};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::unit::{Budget, Input, Step, Turn};
use crate::layouts::StoreRef;
use crate::signals::Signal;
use crate::store::folder_lock_path;

/// Writes state.json; a value its schema refuses writes nothing and is noted in progress.md.
pub(crate) fn write_state(cx: &Ctx, p: &Paths, state: &Value) -> Result<bool> {
    cx.store
        .replace_json_logged(&p.state, SCHEMA, state, |msg| {
            append_progress(cx, p, &invalid_note(cx, msg))
        })
}

/// The progress.md note for a state.json that is (or would be) invalid: not an iteration
/// entry, so the seed's readers skip it.
pub(crate) fn invalid_note(cx: &Ctx, message: &str) -> String {
    format!(
        "## Invalid state.json - {}\n**Problem:** {message}\n\n",
        cx.store.clock().stamp()
    )
}

/// One stop of a unit (a signal, or none): counts the iteration, steps the lifecycle, logs the
/// entry, writes state.json, and says what the subagent and main agent hear.
pub fn stop(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    signal: Option<&Signal>,
    turn: &Turn<'_>,
) -> Result<Step> {
    let p = Paths::of(&store.root);
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, store, true)?;
        let key = units_key(&l.state);
        let ck = current_key(&l.state);
        let plan_unit = l.plan.iter().find(|u| u.id == unit).cloned();
        if l.state[key].get(unit).is_none() {
            return Ok(Step::default());
        }
        let mut c = counters_of(
            &l.state[key][unit],
            plan_unit.as_ref().and_then(|u| u.max_iterations),
        );
        let prev_status = c.status.clone();
        let input = match signal {
            Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
            None => Input::NoSignal,
        };
        let effect = step(&mut c, input);
        if effect == Effect::AlreadyDone {
            save(cx, store, &l)?;
            return Ok(Step::default());
        }
        let now = cx.store.clock().stamp();
        {
            let m = crate::layouts::json::ensure_object(&mut l.state[key][unit]);
            write_counters(m, &c);
            if prev_status == "pending" {
                m.entry("started_at").or_insert(json!(now));
            }
            if let Some(s) = signal {
                m.insert("last_signal".into(), json!(s.text()));
            }
            if effect == Effect::Completed {
                m.insert("verification_passed".into(), json!(true));
                m.insert("completed_at".into(), json!(now));
            }
        }
        l.state[ck] = json!(unit);
        l.state["current_iteration"] = json!(c.iterations_used);
        l.state["updated"] = json!(now);
        if l.state["phase"] == "plan" || l.state["phase"] == "discover" {
            l.state["phase"] = json!("execute");
        }
        let ready = if c.status == "done" || c.status == "blocked" || c.status == "timeout" {
            advance(&mut l.state, &l.plan)
        } else {
            Vec::new()
        };
        // The entry: what the subagent did, what remains, blockers, signal, commits.
        let said_remaining = markdown::message_field(turn.final_text, "Remaining");
        let said_blockers = markdown::message_field(turn.final_text, "Blockers");
        let last_remaining = l
            .entries
            .iter()
            .rev()
            .find(|e| e.unit == unit)
            .and_then(|e| e.remaining.clone());
        let remaining = match &effect {
            Effect::Confirm => "Confirmation pass: re-check every criterion".to_string(),
            Effect::Verify => "Verification pass: quality and code review".to_string(),
            Effect::Completed => "None".to_string(),
            Effect::Returned(r) => format!(
                "Fix what the check found{}",
                r.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
            ),
            _ => said_remaining
                .clone()
                .or(last_remaining.clone())
                .unwrap_or_else(|| "Not stated by the subagent".into()),
        };
        let blockers = match &effect {
            Effect::Blocked(r) => r.clone(),
            Effect::Timeout => {
                format!("Hit max iterations ({}): status timeout", c.max_iterations)
            }
            Effect::Returned(Some(r)) | Effect::KeepGoing(Some(r)) => r.clone(),
            _ => said_blockers.unwrap_or_else(|| "None".into()),
        };
        let commits = unlogged_commits(&l.state, &l.progress_text);
        let entry = Entry {
            unit: unit.to_string(),
            iteration: c.iterations_used,
            timestamp: now.clone(),
            did: Some(did_text(turn.final_text)),
            remaining: Some(remaining.clone()),
            blockers: Some(blockers.clone()),
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
        log_notes(cx, &p, &l.notes)?;
        append_progress(cx, &p, &render_entry(&entry))?;
        write_state(cx, &p, &l.state)?;
        Ok(reply(
            store,
            unit,
            &c,
            &effect,
            plan_unit.as_ref(),
            &remaining,
            &ready,
            if is_knowledge(cx, store) {
                "plan.md"
            } else {
                "tasks.md"
            },
        ))
    })
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
) -> Step {
    let mut r = Step {
        status: Some(c.status.clone()),
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
    let budget = format!("iteration {} of {}", c.iterations_used, c.max_iterations);
    let where_ = format!(".claude/iterative/{}/{plan_file}", store.id);
    let block = match effect {
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
    r.instruction = block;
    match effect {
        Effect::Completed => {
            let ready_txt = if ready.is_empty() {
                String::new()
            } else {
                format!(" Ready now: {}.", ready.join(", "))
            };
            r.tell_main.push(format!(
                "iterative {}: {unit} is done (confirmed and verified after {} iterations).{ready_txt}",
                store.id, c.iterations_used
            ));
        }
        Effect::Blocked(reason) => {
            let msg = format!("iterative {}: {unit} is blocked: {reason}.", store.id);
            r.tell_user.push(format!("taskhook: {msg}"));
            r.tell_main.push(format!(
                "{msg} Ask the user for input, or move on to another ready unit."
            ));
        }
        Effect::Timeout => {
            let msg = format!(
                "iterative {}: {unit} timed out after {} iterations (max_iterations {}).",
                store.id, c.iterations_used, c.max_iterations
            );
            r.tell_user.push(format!("taskhook: {msg}"));
            r.tell_main.push(format!(
                "{msg} Ask the user whether to raise max_iterations, simplify the criteria, or step in."
            ));
        }
        _ => {}
    }
    r
}

/// The final message without its signal tags, as the entry's **Did**.
pub(crate) fn did_text(message: &str) -> String {
    let mut out = message.to_string();
    while let Some(i) = out.find("<signal>") {
        match out[i..].find("</signal>") {
            Some(j) => out.replace_range(i..i + j + "</signal>".len(), ""),
            None => break,
        }
    }
    // The subagent's own "Remaining:" / "Blockers:" lines go to their fields, not into Did.
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| {
            !["Remaining", "Blockers", "Signal", "Commit"]
                .iter()
                .any(|f| markdown::message_field(l, f).is_some())
        })
        .collect();
    let out = markdown::one_paragraph(kept.join("\n").trim());
    if out.is_empty() {
        "(no final message)".into()
    } else {
        out
    }
}

/// Commit hashes in state.json not yet named in progress.md.
pub(crate) fn unlogged_commits(state: &Value, progress: &str) -> Vec<String> {
    state["commits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter_map(|c| c.split(':').next())
                .map(str::trim)
                .filter(|h| !h.is_empty() && !progress.contains(h))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
