//! progress.md replayed through the lifecycle ([`super::lifecycle::step`]): what the log says
//! about one unit (its counters, when it started and finished, whether its last entry documents
//! a blocker, the commits its entries name), and that history written into a unit. The check
//! against state.json and the rebuild of a lost one ([`super::reconcile`]) and the catch-up of a
//! load ([`super::state`]) all read the log this one way.

use std::collections::HashMap;

use super::lifecycle::{step, Counters, Effect, Input};
use super::log::{Entry, Record};
use super::model::{State, Status, Unit};
use super::plan::*;
use super::state::mark_done;
use crate::signals::{parse_signals, Signal};

/// A logged entry's signal, parsed.
pub(crate) fn signal_of(e: &Entry) -> Option<Signal> {
    let s = e.signal.as_deref()?;
    parse_signals(&format!("<signal>{s}</signal>"))
        .into_iter()
        .next()
}

/// Applies one logged entry to a unit's counters.
pub(crate) fn step_entry(c: &mut Counters, e: &Entry) -> Effect {
    let sig = signal_of(e);
    let input = match &sig {
        Some(s) => Input::Signal(s.kind, s.reason.as_deref()),
        None => Input::NoSignal,
    };
    step(c, input)
}

/// What the log says about one unit.
#[derive(Debug, Clone)]
pub(crate) struct History {
    pub c: Counters,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// Whether the last entry documents a blocker (a BLOCKED signal, or `**Blockers:**` other
    /// than None, as the seed's own skill logs a blocked unit).
    pub documented_block: bool,
    /// Commit hashes the unit's entries name.
    pub commits: Vec<String>,
}

/// Replays a unit's records (entries and `set` notes) from a fresh start.
pub(crate) fn replay<'a>(records: impl IntoIterator<Item = &'a Record>, max: u64) -> History {
    let mut h = History {
        c: Counters::pending(max),
        started_at: None,
        completed_at: None,
        documented_block: false,
        commits: Vec::new(),
    };
    for r in records {
        match r {
            Record::Entry(e) => {
                if h.c.status == Status::Pending && h.started_at.is_none() {
                    h.started_at = Some(e.timestamp.clone());
                }
                if step_entry(&mut h.c, e) == Effect::Completed {
                    h.completed_at = Some(e.timestamp.clone());
                }
                h.documented_block = e
                    .blockers
                    .as_deref()
                    .is_some_and(|b| !b.is_empty() && !b.eq_ignore_ascii_case("none"))
                    || h.c.status == Status::Blocked;
                h.commits
                    .extend(e.commits().into_iter().map(str::to_string));
            }
            Record::Note(n) => {
                if let Some(set) = n.counters.as_ref().and_then(set_unit) {
                    h.c = counters_of(&set, Some(h.c.max_iterations));
                    if h.c.status == Status::Done && h.completed_at.is_none() {
                        h.completed_at = Some(n.timestamp.clone());
                    }
                }
            }
        }
    }
    h
}

/// Records grouped by unit, in file order, with the units in order of first appearance.
pub(crate) fn by_unit(records: &[Record]) -> (Vec<&str>, HashMap<&str, Vec<&Record>>) {
    let mut order = Vec::new();
    let mut groups: HashMap<&str, Vec<&Record>> = HashMap::new();
    for r in records {
        if let Some(u) = r.unit() {
            groups
                .entry(u)
                .or_insert_with(|| {
                    order.push(u);
                    Vec::new()
                })
                .push(r);
        }
    }
    (order, groups)
}

/// Writes the log's version of a unit into state.json (unknown fields kept).
pub(crate) fn adopt(state: &mut State, id: &str, h: &History) {
    adopt_unit(state.units_mut().entry(id), h);
}

/// Writes the log's version into a unit.
fn adopt_unit(u: &mut Unit, h: &History) {
    write_counters(u, &h.c);
    if let Some(at) = &h.started_at {
        u.start_at(at);
    }
    if h.c.status == Status::Done {
        if let Some(at) = &h.completed_at {
            mark_done(u, at);
        }
        u.verification_passed = Some(true);
    } else {
        u.completed_at = None;
        u.verification_passed = None;
    }
}

/// The unit as a fresh state.json holds it, from its history.
pub(crate) fn unit_from(h: &History) -> Unit {
    let mut u = Unit::default();
    adopt_unit(&mut u, h);
    u
}
