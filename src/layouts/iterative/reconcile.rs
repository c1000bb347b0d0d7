//! state.json against the whole of progress.md: seed 003's "Conflicting State" recovery
//! ("trust git/files; read progress.md for iteration history; rebuild state from progress
//! entries; log discrepancy"), in both directions.
//!
//! Per unit, the log is replayed through the lifecycle and compared with state.json:
//!
//! - **state.json lags** (fewer iterations than logged): the log's version is adopted.
//! - **state.json agrees**, or is ahead in a way the log supports (the seed's own skill logs
//!   work iterations but may not log every check pass: a unit `done` after 3 iterations whose
//!   log shows 2 with `T1_DONE` is supported): nothing to do.
//! - **state.json contradicts the log** (ahead of it, or a hand-edited status the log does
//!   not support): git decides. When git has commits that state.json records and progress.md
//!   does not name, the work happened after the log's last entry: state.json's unit is kept
//!   and a `set` note makes the log say so. Otherwise the log's version is adopted. Either
//!   way the discrepancy is logged with what state.json said and what git has or lacks of the
//!   commits the unit's entries name; commits git has that state.json lacks are added.

use std::collections::{HashMap, HashSet};

use super::git;
use super::lifecycle::{step, Counters, Effect, Input};
use super::log::{parse_records, Entry, Record};
use super::model::{Reason, State, Status, Unit};
use super::plan::*;
use super::state::{mark_done, Slug};
use crate::layouts::StoreRef;
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

/// A unit not started: pending, launched without a stop yet, or waiting on dependencies.
fn fresh(c: &Counters) -> bool {
    c.iterations_used == 0
        && (matches!(c.status, Status::Pending | Status::InProgress)
            || (c.status == Status::Blocked && matches!(c.reason, Some(Reason::Waiting(_)))))
}

fn agrees(s: &Counters, l: &Counters) -> bool {
    (fresh(s) && fresh(l))
        || (s.status == l.status
            && s.iterations_used == l.iterations_used
            && s.confirmations_used == l.confirmations_used)
}

/// Whether state.json's unit, ahead of the log, is something the log supports.
fn supported(s: &Counters, h: &History) -> bool {
    let rank = |st: Status| match st {
        Status::Confirming => 1,
        Status::Verifying => 2,
        Status::Done => 3,
        _ => 0,
    };
    match s.status {
        Status::Confirming | Status::Verifying | Status::Done => {
            rank(h.c.status) >= 1 && rank(s.status) >= rank(h.c.status)
        }
        Status::Pending | Status::InProgress => {
            matches!(h.c.status, Status::Pending | Status::InProgress)
        }
        Status::Blocked => h.documented_block,
        Status::Timeout => h.c.status == Status::Timeout || s.iterations_used >= s.max_iterations,
    }
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

/// How many of state.json's `commits` progress.md names, counting from the start, up to the
/// last one it names (entries name the commits recorded since the previous entry).
pub(crate) fn commits_named(state: &State, text: &str) -> usize {
    let records = parse_records(text);
    let named = named_hashes(&records);
    state
        .commits()
        .iter()
        .rposition(|c| named.contains(hash_of(c)))
        .map_or(0, |i| i + 1)
}

fn named_hashes(records: &[Record]) -> HashSet<&str> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Entry(e) => Some(e.commits()),
            Record::Note(_) => None,
        })
        .flatten()
        .collect()
}

/// The hash of a `hash: subject` commit line.
pub(crate) fn hash_of(commit: &str) -> &str {
    commit.split(':').next().unwrap_or("").trim()
}

/// Whether `a` and `b` name the same commit (one may be abbreviated).
fn same_commit(a: &str, b: &str) -> bool {
    !a.is_empty() && !b.is_empty() && (a.starts_with(b) || b.starts_with(a))
}

/// Checks state.json against the whole log (see the module doc); records what it finds and
/// does in `l.notes` / `l.sets`, marking `l.dirty` when state.json must be written.
pub(crate) fn check(store: &StoreRef, l: &mut Slug, text: &str) {
    let records = parse_records(text);
    let (log_order, groups) = by_unit(&records);
    let mut ids: Vec<String> = l.state.units().ids().cloned().collect();
    ids.extend(
        log_order
            .iter()
            .filter(|u| !l.state.units().contains(u))
            .map(|u| u.to_string()),
    );
    let mut conflicts: Vec<(String, Counters, History)> = Vec::new();
    for id in &ids {
        let s = match l.state.unit(id) {
            Some(u) => counters_of(u, l.plan.max_of(id)),
            None => counters_of(&Unit::default(), l.plan.max_of(id)),
        };
        let h = replay(
            groups.get(id.as_str()).into_iter().flatten().copied(),
            s.max_iterations,
        );
        if h.c.iterations_used > s.iterations_used {
            l.notes.push(format!(
                "state.json had {id} {} after {} iteration(s); progress.md logs {}: {id} {} {}",
                s.status,
                s.iterations_used,
                h.c.iterations_used,
                l.now_is(),
                h.c.status
            ));
            adopt(&mut l.state, id, &h);
            l.dirty = true;
        } else if !agrees(&s, &h.c) && !supported(&s, &h) {
            conflicts.push((id.clone(), s, h));
        }
    }
    if conflicts.is_empty() {
        return;
    }
    // Ask git once: the commits state.json records that the log does not name, and those the
    // conflicting units' entries name.
    let named = named_hashes(&records);
    let recorded: Vec<String> = l
        .state
        .commits()
        .iter()
        .map(|c| hash_of(c).to_string())
        .collect();
    let unnamed: Vec<&str> = recorded
        .iter()
        .map(String::as_str)
        .filter(|h| !named.iter().any(|n| same_commit(h, n)))
        .collect();
    let mut ask: Vec<&str> = unnamed.clone();
    for (_, _, h) in &conflicts {
        ask.extend(h.commits.iter().map(String::as_str));
    }
    let has = git::commits(&store.root, &ask);
    let proven: Vec<&str> = match &has {
        Some(m) => unnamed
            .iter()
            .copied()
            .filter(|h| m.contains_key(*h))
            .collect(),
        None => Vec::new(),
    };
    for (id, s, h) in conflicts {
        let what = format!(
            "{} after {} iteration(s) and {} confirmation(s)",
            s.status, s.iterations_used, s.confirmations_used
        );
        let evidence = git_words(has.as_ref(), &h.commits);
        if s.iterations_used > h.c.iterations_used && !proven.is_empty() {
            let why = format!(
                "kept state.json's {id} ({what}): git has commit(s) {} that state.json records and progress.md does not name",
                proven.join(", ")
            );
            l.notes.push(format!(
                "state.json is ahead of progress.md for {id} (progress.md logs {} iteration(s), {}){evidence}; {why}",
                h.c.iterations_used, h.c.status
            ));
            l.sets.push((id.clone(), counters_json(&s), why));
        } else {
            l.notes.push(format!(
                "state.json had {id} {what}, which progress.md does not support (it logs {} iteration(s){evidence}): {id} {} {}",
                h.c.iterations_used,
                l.now_is(),
                h.c.status
            ));
            adopt(&mut l.state, &id, &h);
        }
        l.dirty = true;
    }
    add_commits_git_has(l, &records, has.as_ref());
}

/// `; git has a, b; git lacks c` about the commits a unit's entries name (empty when git
/// cannot say or they name none).
fn git_words(has: Option<&HashMap<String, String>>, named: &[String]) -> String {
    let Some(has) = has else {
        return String::new();
    };
    let (yes, no): (Vec<&str>, Vec<&str>) = named
        .iter()
        .map(String::as_str)
        .partition(|h| has.contains_key(*h));
    let mut out = String::new();
    if !yes.is_empty() {
        out.push_str(&format!("; git has {}", yes.join(", ")));
    }
    if !no.is_empty() {
        out.push_str(&format!("; git lacks {}", no.join(", ")));
    }
    out
}

/// Commits the log names that git has and state.json's `commits` lacks are added.
fn add_commits_git_has(l: &mut Slug, records: &[Record], has: Option<&HashMap<String, String>>) {
    let (Some(has), Some(list)) = (has, l.state.commits.as_ref()) else {
        return;
    };
    let mut list = list.clone();
    let mut added: Vec<String> = Vec::new();
    let in_order = records.iter().filter_map(|r| match r {
        Record::Entry(e) => Some(e.commits()),
        Record::Note(_) => None,
    });
    for hash in in_order.flatten() {
        if added.iter().any(|a| a == hash) {
            continue;
        }
        let Some(subject) = has.get(hash) else {
            continue;
        };
        if list.iter().any(|c| same_commit(hash_of(c), hash)) {
            continue;
        }
        list.push(format!("{hash}: {subject}"));
        added.push(hash.to_string());
    }
    if !added.is_empty() {
        l.notes.push(format!(
            "git has commit(s) {} that progress.md names and state.json's commits lacked: added",
            added.join(", ")
        ));
        l.state.commits = Some(list);
        l.dirty = true;
    }
}
