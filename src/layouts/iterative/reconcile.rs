//! SessionStart's reconcile and `taskhook recover`: state.json against the whole of
//! progress.md (seed 003's "Conflicting State" recovery: "trust git/files; read progress.md for
//! iteration history; rebuild state from progress entries; log discrepancy"), in both
//! directions, a state.json rebuilt when it is missing or unusable, and salvage of a damaged
//! one.
//!
//! **Check.** Per unit, the log is replayed through the lifecycle ([`super::replay`]) and
//! compared with state.json:
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
//!
//! **Rebuild.** A state.json missing or unusable is rebuilt: units and counters from the plan
//! and progress.md (replayed, with `started_at` / `completed_at` from the entries'
//! timestamps), and what the log cannot know salvaged from wherever it survives: the task name,
//! `created`, `domain` and `commits` from the unusable file's bytes (its string literals), else
//! brief.md; commits the log names, with their subjects from git.
//!
//! **Recover** (`taskhook recover`): salvage what survives, never start from nothing.
//!
//! - A valid state.json is checked against the whole of progress.md (as SessionStart does
//!   when its cursor is lost), and fixed where the log contradicts it.
//! - A state.json that parses but fails its schema keeps every top-level field and every unit
//!   that still validates; each unit that does not is listed with its reason and rebuilt from
//!   progress.md. The result is then checked against the log.
//! - A state.json that does not parse keeps what its string literals still say (the task name,
//!   `created`, `domain`, `commits`); units come from the plan and progress.md.
//!
//! The original bytes are moved aside (`state.json.corrupt-<time>`), never deleted. With
//! `--dry-run` the same runs in memory and the message says what would be kept and dropped.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::git;
use super::lifecycle::{Counters, DEFAULT_MAX_ITERATIONS};
use super::log::{is_hash, parse_records, render_note, Record};
use super::model::{Mode, Reason, State, Status, Unit, Units};
use super::plan::*;
use super::replay::{adopt, by_unit, replay, unit_from, History};
use super::state::{self, is_knowledge, load, read_log, read_plan, save, Slug};
use super::{Paths, SCHEMA};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::typed;
use crate::layouts::StoreRef;
use crate::store::clock::parse_time;
use crate::store::{folder_lock_path, parse_json, schema};

/// SessionStart's work for one slug: decided on an unlocked read; only a slug with something to
/// fix (state.json to rebuild or catch up, stale temp files) is locked and written.
pub(crate) fn reconcile_slug(cx: &Ctx, store: &StoreRef) -> Result<Option<Slug>> {
    let state_file = Paths::of(&store.root).state;
    cx.store.transact(&folder_lock_path(&store.root), |pass| {
        let removed = if pass.writes() {
            cx.store.clean_stale_temps_of(&state_file)?
        } else {
            cx.store.stale_temps_of(&state_file)?
        };
        let mut l = match load(cx, store, pass.writes()) {
            Ok(l) => l,
            Err(Error::NotFound(_)) => return Ok((None, false)),
            Err(e) => return Err(e),
        };
        let dirty = l.dirty || !removed.is_empty();
        if pass.writes() {
            if !removed.is_empty() {
                l.notes
                    .push(format!("removed {} abandoned temp file(s)", removed.len()));
            }
            save(cx, store, &mut l)?;
        }
        Ok((Some(l), dirty))
    })
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

/// The commits the log's entries name, in order (a commit named twice, twice).
fn logged_commits(records: &[Record]) -> impl Iterator<Item = &str> {
    records.iter().flat_map(|r| match r {
        Record::Entry(e) => e.commits(),
        Record::Note(_) => Vec::new(),
    })
}

fn named_hashes(records: &[Record]) -> HashSet<&str> {
    logged_commits(records).collect()
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
    let mut ids: Vec<String> = l.state.units().keys().map(str::to_string).collect();
    ids.extend(
        log_order
            .iter()
            .filter(|u| !l.state.units().contains(u))
            .map(|u| u.to_string()),
    );
    let mut conflicts: Vec<(String, Counters, History)> = Vec::new();
    let blank = Unit::default();
    for id in &ids {
        let s = counters_of(l.state.unit(id).unwrap_or(&blank), l.plan.max_of(id));
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
    for hash in logged_commits(records) {
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

/// Largest brief.md read.
const BRIEF_CAP: usize = 1024 * 1024;

/// The string literals of a (possibly cut or broken) JSON text, each with whether a `:`
/// follows it (a key).
fn string_literals(bytes: &[u8]) -> Vec<(String, bool)> {
    let text = String::from_utf8_lossy(bytes);
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '"' {
            i += 1;
            continue;
        }
        let mut raw = String::from("\"");
        let mut j = i + 1;
        let mut closed = false;
        while j < chars.len() {
            let ch = chars[j];
            raw.push(ch);
            if ch == '\\' && j + 1 < chars.len() {
                raw.push(chars[j + 1]);
                j += 2;
                continue;
            }
            j += 1;
            if ch == '"' {
                closed = true;
                break;
            }
        }
        if !closed {
            break;
        }
        let key = chars[j..]
            .iter()
            .find(|c| !c.is_whitespace())
            .is_some_and(|c| *c == ':');
        if let Ok(s) = serde_json::from_str::<String>(&raw) {
            out.push((s, key));
        }
        i = j;
    }
    out
}

/// What survives in an unusable state.json's bytes.
#[derive(Debug, Default)]
pub(crate) struct Salvage {
    pub fields: Map<String, Value>,
    pub commits: Vec<String>,
}

impl Salvage {
    pub(crate) fn scan(bytes: Option<&[u8]>) -> Salvage {
        let mut s = Salvage::default();
        let lits = bytes.map(string_literals).unwrap_or_default();
        let mut last_key = "";
        for (i, (text, is_key)) in lits.iter().enumerate() {
            if *is_key {
                last_key = text;
                if let (Some((value, false)), true) = (
                    lits.get(i + 1),
                    ["task", "created", "domain", "mode"].contains(&text.as_str()),
                ) {
                    s.fields.entry(text.clone()).or_insert_with(|| json!(value));
                }
            } else if last_key == "commits"
                && text.split_once(": ").is_some_and(|(h, _)| is_hash(h))
            {
                s.commits.push(text.clone());
            }
        }
        s
    }

    fn text(&self, k: &str) -> Option<&str> {
        self.fields.get(k).and_then(Value::as_str)
    }
}

/// What brief.md says: its `# {Task Name}`, `**Created:**` and `**Domain:**`, unless still the
/// template's placeholders.
#[derive(Debug, Default)]
struct Brief {
    name: Option<String>,
    created: Option<String>,
    domain: Option<String>,
}

fn brief(cx: &Ctx, p: &Paths) -> Brief {
    let Ok(Some(bytes)) = cx.store.read_capped(&p.brief, BRIEF_CAP) else {
        return Brief::default();
    };
    let text = String::from_utf8_lossy(&bytes);
    let real = |s: &str| {
        let s = s.trim();
        (!s.is_empty() && !s.starts_with('{') && !s.starts_with('(')).then(|| s.to_string())
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(real)
    };
    Brief {
        name: text
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .and_then(real),
        created: field("**Created:**").filter(|t| parse_time(t).is_some()),
        domain: field("**Domain:**"),
    }
}

/// Rebuilds state.json from the plan and the log, salvaging from `old` (the unusable file).
pub(crate) fn rebuild(
    cx: &Ctx,
    store: &StoreRef,
    plan: &Plan,
    records: &[Record],
    old: Option<&[u8]>,
) -> State {
    let p = Paths::of(&store.root);
    let salvage = Salvage::scan(old);
    let knowledge = match salvage.text("mode") {
        Some("knowledge") => true,
        Some("development") => false,
        _ => is_knowledge(cx, store),
    };
    let (log_order, groups) = by_unit(records);
    let mut ids: Vec<String> = plan.units.iter().map(|u| u.id.clone()).collect();
    let planned: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let extra: Vec<String> = log_order
        .iter()
        .filter(|u| !planned.contains(**u))
        .map(|u| u.to_string())
        .collect();
    ids.extend(extra);
    let units: Units = ids
        .iter()
        .map(|id| {
            let max = plan.max_of(id).unwrap_or(DEFAULT_MAX_ITERATIONS).max(1);
            let h = replay(groups.get(id.as_str()).into_iter().flatten().copied(), max);
            (id.clone(), unit_from(&h))
        })
        .collect();
    let mut named: Vec<&str> = Vec::new();
    for h in logged_commits(records) {
        if !named.contains(&h) {
            named.push(h);
        }
    }
    let now = cx.store.clock().stamp();
    let first_entry = records.iter().find_map(|r| match r {
        Record::Entry(e) if parse_time(&e.timestamp).is_some() => Some(e.timestamp.clone()),
        _ => None,
    });
    let brief = brief(cx, &p);
    let created = salvage
        .text("created")
        .filter(|t| parse_time(t).is_some())
        .map(str::to_string)
        .or(brief.created)
        .or(first_entry)
        .unwrap_or_else(|| now.clone());
    let task = salvage
        .text("task")
        .map(str::to_string)
        .or(brief.name)
        .unwrap_or_else(|| store.id.clone());
    let mode = if knowledge {
        Mode::Knowledge
    } else {
        Mode::Development
    };
    let mut state = State::new(&store.id, mode, units);
    state.task = Some(task);
    state.created = Some(created);
    state.updated = Some(now);
    state.current_iteration = Some(0);
    state.domain = salvage.text("domain").map(str::to_string).or(brief.domain);
    if !knowledge || !salvage.commits.is_empty() || !named.is_empty() {
        state.commits = Some(commits(&store.root, &salvage.commits, &named));
    }
    advance(&mut state, plan);
    state
}

/// The salvaged commit lines, then each commit the log names that they lack, with its subject
/// when git has it.
fn commits(dir: &std::path::Path, salvaged: &[String], named: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = salvaged.to_vec();
    let missing: Vec<&str> = named
        .iter()
        .copied()
        .filter(|h| {
            !salvaged.iter().any(|c| {
                let have = hash_of(c);
                have.starts_with(h) || h.starts_with(have)
            })
        })
        .collect();
    if missing.is_empty() {
        return out;
    }
    let subjects = git::commits(dir, &missing).unwrap_or_default();
    for h in missing {
        out.push(match subjects.get(h) {
            Some(s) => format!("{h}: {s}"),
            None => format!("{h}: (subject unknown: named in progress.md)"),
        });
    }
    out
}

/// The schema problems of `value`, in one line, or why the model cannot hold it; `None` when
/// it validates.
fn problems<T: serde::de::DeserializeOwned>(value: &Value) -> Result<Option<String>> {
    Ok(schema::check(SCHEMA, value)?
        .err()
        .map(|issues| schema::summarize(&issues))
        .or_else(|| typed::<T>(value).err()))
}

/// What recovery kept and dropped, for the message.
#[derive(Default)]
struct Outcome {
    kept: Vec<String>,
    kept_units: Vec<String>,
    dropped: Vec<String>,
}

/// Salvages a parsed but invalid state.json into `state` (rebuilt from the plan and the log,
/// in `mode`, as JSON).
fn salvage_parsed(state: &mut Value, mode: Mode, old: &Value, out: &mut Outcome) -> Result<()> {
    let Some(old_map) = old.as_object() else {
        out.dropped
            .push("everything (state.json is not a JSON object)".into());
        return Ok(());
    };
    let ukey = mode.units_key();
    for (k, v) in old_map {
        if k == "tasks" || k == "phases" || k == "taskhook" {
            continue;
        }
        let mut trial = state.clone();
        trial[k.as_str()] = v.clone();
        match problems::<State>(&trial)? {
            None => {
                *state = trial;
                out.kept.push(k.clone());
            }
            Some(why) => out.dropped.push(format!("{k} ({why})")),
        }
    }
    let Some(units) = old_map.get(ukey).and_then(Value::as_object) else {
        return Ok(());
    };
    for (id, unit) in units {
        let alone = json!({"slug": "x", "mode": mode.as_str(), "phase": "execute", ukey: {id.as_str(): unit}});
        match problems::<State>(&alone)?.or_else(|| typed::<Unit>(unit).err()) {
            None => {
                state[ukey][id.as_str()] = unit.clone();
                out.kept_units.push(id.clone());
            }
            Some(why) => out
                .dropped
                .push(format!("{id} ({why}; rebuilt from progress.md)")),
        }
    }
    Ok(())
}

/// Recovers the slug's state.json; returns what was (or, in a dry run, would be) done.
pub fn recover(cx: &Ctx, store: &StoreRef) -> Result<String> {
    let p = Paths::of(&store.root);
    let dry = cx.store.is_dry_run();
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let bytes = cx.store.read(&p.state)?;
        let parsed = bytes.as_deref().map(parse_json);
        if let Some(Ok(v)) = &parsed {
            if problems::<State>(v)?.is_none() {
                let mut l = state::load_with(cx, store, true, true)?;
                state::save(cx, store, &mut l)?;
                let found = if l.notes.is_empty() {
                    "they agree; nothing to change".to_string()
                } else {
                    l.notes.join("; ")
                };
                return Ok(format!(
                    "{} is valid; checked it against the whole of progress.md: {found}.",
                    p.state.display()
                ));
            }
        }
        let plan = read_plan(cx, &p)?;
        let text = read_log(cx, &p)?;
        let records = parse_records(&text);
        let entries = records
            .iter()
            .filter(|r| matches!(r, Record::Entry(_)))
            .count();
        let rebuilt = rebuild(cx, store, &plan, &records, bytes.as_deref());
        let mode = rebuilt.mode;
        let mut doc = serde_json::to_value(&rebuilt).map_err(|e| Error::BadInput(e.to_string()))?;
        let mut out = Outcome::default();
        match &parsed {
            Some(Ok(old)) => salvage_parsed(&mut doc, mode, old, &mut out)?,
            Some(Err(_)) => {
                let s = Salvage::scan(bytes.as_deref());
                out.kept.extend(s.fields.keys().cloned());
                if !s.commits.is_empty() {
                    out.kept.push(format!("{} commit(s)", s.commits.len()));
                }
                out.dropped.push("the rest of state.json (it does not parse as JSON)".into());
            }
            None => {}
        }
        let state: State = typed(&doc).map_err(Error::BadInput)?;
        let no_units = state.units().is_empty();
        if no_units && entries == 0 && out.kept.is_empty() {
            return Err(Error::NotFound(format!(
                "nothing to recover {} from: progress.md has no entries, {} lists no units, and nothing of state.json survives",
                p.state.display(),
                state.mode.plan_file()
            )));
        }
        let log_len = cx.store.len(&p.progress).unwrap_or(0);
        let mut l = Slug::new(crate::layouts::json::Source::Value(doc), state, plan, log_len, !dry);
        l.commits_logged = commits_named(&l.state, &text);
        check(store, &mut l, &text);
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
        let aside = match &bytes {
            Some(_) => Some(cx.store.quarantine(&p.state)?),
            None => None,
        };
        let (verb, keep, drop, move_) = if dry {
            ("Would rebuild", "would keep", "would drop", "would move the original bytes to")
        } else {
            ("Rebuilt", "kept", "dropped", "the original bytes are in")
        };
        let mut lines = vec![format!(
            "{verb} {} from progress.md ({entries} entries) and what survived of it.",
            p.state.display()
        )];
        let mut kept = out.kept.clone();
        if !out.kept_units.is_empty() {
            kept.push(format!("units {}", name_some(&out.kept_units)));
        }
        if !kept.is_empty() {
            lines.push(format!("  {keep}: {}", kept.join(", ")));
        }
        for d in &out.dropped {
            lines.push(format!("  {drop}: {d}"));
        }
        for n in &l.notes {
            lines.push(format!("  reconciled: {n}"));
        }
        if let Some(a) = &aside {
            lines.push(format!(
                "  {move_} {}",
                a.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        let note = format!(
            "taskhook recover rebuilt state.json from progress.md ({entries} entries); kept: {}; dropped: {}",
            if kept.is_empty() { "nothing".into() } else { kept.join(", ") },
            if out.dropped.is_empty() { "nothing".into() } else { out.dropped.join("; ") }
        );
        let note = render_note(&cx.store.clock().stamp(), "recovered", None, &note);
        state::log_notes(cx, &p, &mut l)?;
        state::append_progress(cx, &p, &mut l, &note)?;
        state::write_state(cx, &p, &mut l)?;
        Ok(lines.join("\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvage_from_cut_json() {
        let bytes = br#"{"task": "User \"auth\"", "slug": "s", "created": "2026-01-14T10:30:00Z", "commits": ["abc1234: feat: model", "def5678: fix"], "tasks": {"T1": {"status": "do"#;
        let s = Salvage::scan(Some(bytes));
        assert_eq!(s.text("task"), Some("User \"auth\""));
        assert_eq!(s.text("created"), Some("2026-01-14T10:30:00Z"));
        assert_eq!(s.commits, ["abc1234: feat: model", "def5678: fix"]);
        assert!(Salvage::scan(Some(b"garbage")).fields.is_empty());
    }
}
