//! The summary of one slug for `status` and the SessionStart context: mode and phase, the
//! current unit with its budget and last "Remaining", ready units, blocked units (with
//! `Waiting on T3` for those waiting on dependencies), units held for a person, timed-out and
//! done units, and the slug's context.md and guardrails.md (capped) for the model.

use super::lifecycle::Counters;
use super::model::{Stage, Status};
use super::plan::*;
use super::state::*;
use super::Paths;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Item, StoreRef, Summary};

/// Per-file cap for context.md / guardrails.md in the SessionStart context and `show`, in
/// characters.
const FILE_CAP: usize = 4000;
/// Largest context.md / guardrails.md read.
const FILE_READ_CAP: usize = 4 * 1024 * 1024;

/// Summarizes a loaded slug.
pub(crate) fn summarize(cx: &Ctx, store: &StoreRef, l: &Slug) -> Result<Summary> {
    let p = Paths::of(&store.root);
    let s = &l.state;
    let mut out = Summary {
        layout: "iterative",
        id: store.id.clone(),
        path: store.root.clone(),
        headline: format!(
            "taskhook · iterative \"{}\" ({} mode, phase {}), .claude/iterative/{}/",
            store.id,
            s.mode.as_str(),
            s.phase.as_str(),
            store.id
        ),
        quiet: s.phase == Stage::Complete,
        ..Default::default()
    };
    match s.current() {
        Some(cur) => {
            let c: Counters = counters_of(
                s.unit(cur).unwrap_or(&Default::default()),
                l.plan.max_of(cur),
            );
            let at = format!("iteration {} of {}", c.iterations_used, c.max_iterations);
            out.current
                .push(Item::with(cur, format!("{}, {at}", c.status)));
            let mut line = String::new();
            match c.status {
                Status::Confirming => line.push_str("Next: its confirmation pass. "),
                Status::Verifying => line.push_str("Next: its verification pass. "),
                _ => {
                    if let Some(rem) = last_entry(cx, &p, cur)?.and_then(|e| e.remaining) {
                        line.push_str(&format!("Last remaining: {rem} "));
                    }
                }
            }
            line.push_str(&format!("Completion signal: <signal>{cur}_DONE</signal>."));
            out.context_extra.push(line);
        }
        None => out.context_extra.push("No current unit.".into()),
    }
    out.ready = ready_units(s, &l.plan).into_iter().map(Item::id).collect();
    // Blocked, with the units not started that wait on unfinished dependencies (seed 003's
    // T5); held, timed-out and done units; counts. One pass.
    let mut waiting: std::collections::HashMap<String, Vec<String>> =
        waiting_units(s, &l.plan).into_iter().collect();
    let (mut timed_out, mut done, mut held) = (Vec::new(), Vec::new(), Vec::new());
    for (id, u) in s.units().iter() {
        let status = u.status;
        *out.counts.entry(status.to_string()).or_default() += 1;
        let item = |detail: Option<String>| Item {
            detail,
            ..Item::id(id)
        };
        let reason = u.reason.as_ref().map(|r| r.text().to_string());
        match status {
            Status::Blocked | Status::Pending => {
                if let Some(open) = waiting.remove(id) {
                    out.blocked.push(item(Some(waiting_reason(&open))));
                } else if status == Status::Blocked {
                    out.blocked.push(item(reason));
                }
            }
            Status::Timeout => timed_out.push(item(reason)),
            Status::Done => done.push(item(None)),
            _ => {}
        }
        if u.hold().is_some() {
            held.push(id.to_string());
        }
    }
    if !held.is_empty() {
        out.context_extra.push(format!(
            "Held until a person acts (subagents cannot move them): {}. A person runs `taskhook iterative set-max|unblock|reset {} UNIT`.",
            name_some(&held),
            crate::shell::quote(&store.id)
        ));
    }
    out.more.push(("Timed out", timed_out, true));
    out.more.push(("Done", done, false));
    for (name, path) in [
        ("context.md", &p.context),
        ("guardrails.md (read before every iteration)", &p.guardrails),
    ] {
        if let Some(shown) = excerpt(cx, path)?.filter(|t| !t.is_empty()) {
            out.context_extra
                .push(format!("\n\n--- {name} ---\n{shown}"));
        }
    }
    Ok(out)
}

/// A slug's context.md or guardrails.md as the model is shown it: trimmed, at most
/// [`FILE_CAP`] characters (`[…]` where it is cut); `None` when it is missing.
pub(crate) fn excerpt(cx: &Ctx, path: &std::path::Path) -> Result<Option<String>> {
    let Some(bytes) = cx.store.read_capped(path, FILE_READ_CAP)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    let mut shown: String = text.chars().take(FILE_CAP).collect();
    if shown.len() < text.len() {
        shown.push_str("\n[…]");
    }
    Ok(Some(shown))
}
