//! The SessionStart context (CONTRACT §7): an index first, one line per store (layout, name,
//! counts, the next ready unit), every store always named; then how to act (`taskhook next`,
//! `show`, `claim`, `done`, `fail`); then details by priority: this session's claims, claims
//! whose lease ended, what reconciliation changed, stops and problems waiting for a person,
//! then each store's own summary (ready units, the current loop's guardrails, …), cut at
//! [`BUDGET`] characters with a line that says how many stores' details were left out.
//!
//! With so many stores that one line each would take more than half the budget, the index
//! collapses by layout with counts, still naming every store that holds work for this session
//! or waits for a person.

use std::collections::BTreeMap;

use crate::claims::{self, Claims};
use crate::context::Ctx;
use crate::layouts::Summary;

/// The context's budget, in characters as Claude Code counts them (UTF-16 code units).
pub const BUDGET: usize = 8000;

/// The length of `s` in UTF-16 code units.
fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The longest start of `s` of at most `max` UTF-16 units, cut on a character boundary.
fn cut_to(s: &str, max: usize) -> &str {
    let mut n = 0;
    for (i, c) in s.char_indices() {
        n += c.len_utf16();
        if n > max {
            return &s[..i];
        }
    }
    s
}

/// One store as SessionStart saw it.
pub struct Seen {
    pub summary: Summary,
    /// What reconciliation changed, one line each.
    pub changes: Vec<String>,
}

impl Seen {
    fn total(&self) -> usize {
        self.summary.counts.values().sum()
    }

    fn counts(&self) -> String {
        let parts: Vec<String> = self
            .summary
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        parts.join(", ")
    }

    fn waits_for_person(&self) -> bool {
        !self.summary.stops_waiting.is_empty()
            || self
                .summary
                .more
                .iter()
                .any(|(_, items, person)| *person && !items.is_empty())
    }

    /// The store's line in the index.
    fn line(&self) -> String {
        let s = &self.summary;
        let mut line = format!("- {} {}: {} units", s.layout, s.id, self.total());
        if !s.counts.is_empty() {
            line.push_str(&format!(" ({})", self.counts()));
        }
        if let Some(r) = s.ready.first() {
            line.push_str(&format!("; next ready: {}/{}", s.id, r.id));
            if let Some(t) = &r.title {
                let short: String = t.chars().take(60).collect();
                line.push_str(&format!(" ({short})"));
            }
        } else if let Some(stop) = s.stops_waiting.first() {
            line.push_str(&format!("; a stop waits for a person: {}", stop.id));
        } else if !s.current.is_empty() {
            line.push_str(&format!("; in progress: {}", s.current[0].id));
        } else if s.quiet {
            line.push_str("; finished");
        }
        if self.waits_for_person() && s.stops_waiting.is_empty() {
            line.push_str("; something waits for a person");
        }
        if !s.problems.is_empty() {
            line.push_str(&format!("; {} problem(s)", s.problems.len()));
        }
        line
    }
}

const HOW_TO_ACT: &str = "How to act: `taskhook next` names the unit to work on now and the commands for it (`--json` for one object); `taskhook show STORE/TASK` gives what it needs; `taskhook claim STORE/TASK` takes it for this session, then `taskhook done STORE/TASK` or `taskhook fail STORE/TASK --reason \"why\"` (`taskhook release STORE/TASK` gives it back). To run a unit in a subagent, name it in the prompt, <task>STORE/TASK</task>; the subagent ends with <signal>TASK_DONE</signal> (or TASK_FAILED: why).";

/// Builds the context; `None` when there is nothing to say.
pub fn context(cx: &Ctx, seen: &[Seen], held: &Claims, session: Option<&str>) -> Option<String> {
    let speaks = |s: &Seen| !s.summary.quiet || !s.changes.is_empty();
    if !seen.iter().any(speaks) && held.claims.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = Vec::new();
    let index: Vec<String> = seen.iter().map(Seen::line).collect();
    let index_len: usize = index.iter().map(|l| units(l) + 1).sum();
    let mine: Vec<&claims::Claim> = held
        .claims
        .iter()
        .filter(|c| Some(c.owner.as_str()) == session)
        .collect();
    lines.push(format!(
        "taskhook · {} store(s) in this project:",
        seen.len()
    ));
    if index_len <= BUDGET / 2 {
        lines.extend(index);
    } else {
        lines.extend(collapsed(seen, &mine));
    }
    lines.push(HOW_TO_ACT.into());
    let mut text = lines.join("\n");
    // Details, by priority.
    let mut details: Vec<String> = Vec::new();
    if !mine.is_empty() {
        let list: Vec<String> = mine
            .iter()
            .map(|c| format!("{}/{}", c.store, c.task))
            .collect();
        details.push(format!(
            "Your claims (this session holds them; finish or release them): {}.",
            list.join(", ")
        ));
    }
    let expired: Vec<String> = held
        .claims
        .iter()
        .filter(|c| Some(c.owner.as_str()) != session && !claims::is_live(cx, c))
        .map(|c| {
            format!(
                "{}/{} ({}, lease ended {})",
                c.store,
                c.task,
                claims::label(&c.owner),
                claims::relative(cx, claims::lease_end(cx, c))
            )
        })
        .collect();
    if !expired.is_empty() {
        details.push(format!(
            "Claims whose lease ended (claiming takes them over): {}.",
            expired.join(", ")
        ));
    }
    let others: Vec<String> = held
        .claims
        .iter()
        .filter(|c| Some(c.owner.as_str()) != session && claims::is_live(cx, c))
        .map(|c| format!("{}/{} ({})", c.store, c.task, claims::label(&c.owner)))
        .collect();
    if !others.is_empty() {
        details.push(format!(
            "Held by other sessions (not yours to work on): {}.",
            others.join(", ")
        ));
    }
    // Stores in priority order: changed or waiting for a person first, then those with work,
    // then the rest that speak.
    let rank = |s: &Seen| {
        if !s.changes.is_empty() || s.waits_for_person() || !s.summary.problems.is_empty() {
            0
        } else if !s.summary.ready.is_empty() || !s.summary.current.is_empty() {
            1
        } else {
            2
        }
    };
    let mut order: Vec<&Seen> = seen.iter().filter(|s| speaks(s)).collect();
    order.sort_by_key(|s| rank(s));
    let stores: Vec<String> = order
        .iter()
        .map(|s| s.summary.context(&s.changes))
        .collect();
    for d in details {
        if units(&text) + units(&d) + 2 > BUDGET {
            break;
        }
        text.push_str("\n\n");
        text.push_str(&d);
    }
    let tail = |rest: usize| format!("\n\n[{rest} more store detail(s): `taskhook status`]");
    for (i, s) in stores.iter().enumerate() {
        let rest = stores.len() - i;
        let room = BUDGET.saturating_sub(units(&text) + 2 + units(&tail(rest)));
        if units(s) <= room {
            text.push_str("\n\n");
            text.push_str(s);
            continue;
        }
        // The first store that does not fit is shown cut, when there is room for some of it.
        const CUT: &str = "\n[… cut: `taskhook status` shows the rest]";
        if room > 400 {
            text.push_str("\n\n");
            text.push_str(cut_to(s, room - units(CUT)));
            text.push_str(CUT);
            if rest > 1 {
                text.push_str(&tail(rest - 1));
            }
        } else {
            text.push_str(&tail(rest));
        }
        break;
    }
    Some(text)
}

/// The index by layout, for projects with very many stores: counts per layout, and the stores
/// that hold this session's work or wait for a person by name.
fn collapsed(seen: &[Seen], mine: &[&claims::Claim]) -> Vec<String> {
    let mut by: BTreeMap<&str, Vec<&Seen>> = BTreeMap::new();
    for s in seen {
        by.entry(s.summary.layout).or_default().push(s);
    }
    let mut out = Vec::new();
    for (layout, stores) in by {
        let ready = stores
            .iter()
            .filter(|s| !s.summary.ready.is_empty())
            .count();
        let done = stores.iter().filter(|s| s.summary.quiet).count();
        let named: Vec<String> = stores
            .iter()
            .filter(|s| {
                s.waits_for_person()
                    || mine
                        .iter()
                        .any(|c| c.layout == s.summary.layout && c.store == s.summary.id)
            })
            .map(|s| s.summary.id.clone())
            .collect();
        let mut line = format!(
            "- {layout}: {} stores ({ready} with ready units, {done} finished)",
            stores.len()
        );
        if !named.is_empty() {
            line.push_str(&format!(
                "; yours or waiting for a person: {}",
                named.join(", ")
            ));
        }
        out.push(line);
    }
    out.push(
        "(`taskhook status` lists every store; `taskhook next` picks across all of them.)".into(),
    );
    out
}
