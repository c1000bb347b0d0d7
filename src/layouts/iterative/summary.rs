//! The summary of one slug for `status` and the SessionStart context: mode and phase, the
//! current unit with its budget and last "Remaining", ready, blocked, timed-out and done units,
//! and the slug's context.md and guardrails.md (capped) for the model.

use super::lifecycle::Counters;
use super::markdown;
use super::state::*;
use super::Paths;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Item, StoreRef, Summary};

/// Per-file cap for context.md / guardrails.md in the SessionStart context, in characters.
const FILE_CAP: usize = 4000;
/// Largest context.md / guardrails.md read.
const FILE_READ_CAP: usize = 4 * 1024 * 1024;

/// Summarizes a loaded slug.
pub(crate) fn summarize(cx: &Ctx, store: &StoreRef, l: &Slug) -> Result<Summary> {
    let p = Paths::of(&store.root);
    let s = &l.state;
    let key = units_key(s);
    let mut out = Summary {
        layout: "iterative",
        id: store.id.clone(),
        path: store.root.clone(),
        headline: format!(
            "taskhook · iterative \"{}\" ({} mode, phase {}), .claude/iterative/{}/",
            store.id,
            s["mode"].as_str().unwrap_or("development"),
            s["phase"].as_str().unwrap_or("execute"),
            store.id
        ),
        quiet: s["phase"] == "complete",
        ..Default::default()
    };
    let last = markdown::last_entries(&l.entries);
    match s[current_key(s)].as_str() {
        Some(cur) => {
            let c: Counters = counters_of(&s[key][cur], None);
            out.current.push(Item {
                detail: Some(format!(
                    "{}, iteration {} of {}",
                    c.status, c.iterations_used, c.max_iterations
                )),
                ..Item::id(cur)
            });
            let mut line = String::new();
            if let Some(rem) = last.get(cur).and_then(|e| e.remaining.as_deref()) {
                line.push_str(&format!("Last remaining: {rem} "));
            }
            line.push_str(&format!("Completion signal: <signal>{cur}_DONE</signal>."));
            out.context_extra.push(line);
        }
        None => out.context_extra.push("No current unit.".into()),
    }
    out.ready = ready_units(s, &l.plan).into_iter().map(Item::id).collect();
    let ids = unit_ids(s);
    let with = |st: &str| -> Vec<Item> {
        ids.iter()
            .filter(|u| status_of(s, u) == st)
            .map(|u| Item {
                detail: s[key][u.as_str()]["reason"].as_str().map(str::to_string),
                ..Item::id(u.clone())
            })
            .collect()
    };
    out.blocked = with("blocked");
    out.more.push(("Timed out", with("timeout"), true));
    out.more.push(("Done", with("done"), false));
    for u in &ids {
        *out.counts.entry(status_of(s, u).to_string()).or_default() += 1;
    }
    for (name, path) in [
        ("context.md", &p.context),
        ("guardrails.md (read before every iteration)", &p.guardrails),
    ] {
        let Some(bytes) = cx.store.read_capped(path, FILE_READ_CAP)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if !text.is_empty() {
            let shown: String = text.chars().take(FILE_CAP).collect();
            let cut = if text.chars().count() > FILE_CAP {
                "\n[…]"
            } else {
                ""
            };
            out.context_extra
                .push(format!("\n\n--- {name} ---\n{shown}{cut}"));
        }
    }
    Ok(out)
}
