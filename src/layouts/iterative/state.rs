//! One slug's state as taskhook works with it: state.json checked against progress.md (the
//! authority on recovery), caught up, checked or rebuilt from it, and written back.
//!
//! **The log cursor.** state.json carries `taskhook: {progress_bytes, commits_logged,
//! checksum}`: how much of progress.md it reflects, how many of its `commits` an entry has
//! named, and a checksum of every unit's counters as taskhook wrote them. While the checksum
//! holds, a load reads only the log's tail from `progress_bytes` on and applies it unit by unit
//! (normally there is none), so an event costs the size of state.json, not of the log. Without
//! a cursor (a store the seed's own skill wrote), with a checksum that no longer matches (a
//! hand edit), or with a log shorter than the cursor, the whole log is checked
//! ([`super::reconcile`]).

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use super::lifecycle::Effect;
use super::log::{self, parse_records, render_note, Record};
use super::markdown::parse_plan;
use super::model::{Cursor, State, Status, Unit};
use super::plan::*;
use super::{reconcile, replay};
use super::{Paths, SCHEMA};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::{write_back, write_in_place, Shape, Source};
use crate::layouts::StoreRef;
use crate::store::Bytes;
use crate::store::{parsed, Loaded};

/// Largest progress.md (or tail of it) read.
pub const LOG_CAP: usize = 512 * 1024 * 1024;
/// Largest tasks.md / plan.md read.
const PLAN_CAP: usize = 64 * 1024 * 1024;
/// How far back from the end of progress.md a unit's last entry is looked for.
const LAST_ENTRY_WINDOW: u64 = 4 * 1024 * 1024;

/// Whether a slug is in knowledge mode by its files (plan.md and no tasks.md).
pub(crate) fn is_knowledge(cx: &Ctx, store: &StoreRef) -> bool {
    let p = Paths::of(&store.root);
    cx.store.exists(&p.plan_md) && !cx.store.exists(&p.tasks_md)
}

/// Everything loaded for one operation on a slug.
pub struct Slug {
    /// state.json as read (or `null` for one built here): what `write_state` writes the
    /// model back over, so its key order and unknown fields survive.
    pub source: Source,
    /// The state `source` holds, when it is a file's bytes: what tells a write which units
    /// it changes (the others keep their bytes).
    pub was: Option<Rc<State>>,
    pub state: State,
    pub plan: Rc<Plan>,
    /// What reconciliation found and did (one line each): logged as notes, shown in summaries.
    pub notes: Vec<String>,
    /// How many of `notes` are in progress.md already.
    pub notes_logged: usize,
    /// `set` notes to log with the next write: (unit, counters, why).
    pub sets: Vec<(String, Value, String)>,
    /// Whether `state` differs from the file on disk.
    pub dirty: bool,
    /// progress.md's length as far as `state` reflects it (0 when missing).
    pub log_len: u64,
    /// Bytes this operation appended to progress.md.
    pub appended: u64,
    /// How many of `commits` progress.md names (they are named in order).
    pub commits_logged: usize,
    /// Whether the load wrote the past tense (it may write) or the conditional (read-only).
    pub writes: bool,
}

impl Slug {
    /// A slug as loaded from `state` (read from `doc`) with the log at `log_len` bytes.
    pub(crate) fn new(
        source: Source,
        state: State,
        plan: Rc<Plan>,
        log_len: u64,
        writes: bool,
    ) -> Self {
        Slug {
            source,
            was: None,
            state,
            plan,
            notes: Vec::new(),
            notes_logged: 0,
            sets: Vec::new(),
            dirty: false,
            log_len,
            appended: 0,
            commits_logged: 0,
            writes,
        }
    }

    /// state.json as the model now says it, in the file's key order (what a write would put
    /// there, without the cursor).
    pub fn to_json(&self) -> Value {
        let mut doc = self.source.to_value().unwrap_or(Value::Null);
        // Serializing a model of strings, numbers and maps cannot fail; the doc stays as read
        // if it did.
        let _ = write_back(&mut doc, &self.state);
        doc
    }

    /// "is now" when this load writes, "would become" when it only reads.
    pub(crate) fn now_is(&self) -> &'static str {
        if self.writes {
            "is now"
        } else {
            "would become"
        }
    }
}

/// The slug's plan (tasks.md, else plan.md), shared: the same bytes read again in this
/// invocation give the plan already parsed, not a copy of it.
pub(crate) fn read_plan(cx: &Ctx, p: &Paths) -> Result<Rc<Plan>> {
    let text = match cx.store.read_capped(&p.tasks_md, PLAN_CAP)? {
        Some(t) => t,
        None => cx
            .store
            .read_capped(&p.plan_md, PLAN_CAP)?
            .unwrap_or_default(),
    };
    // Read again in the same invocation (a unit's name resolved, then its stop), the same
    // bytes give the plan already parsed.
    let (_, plan) = parsed::remembered("iterative-plan", text, |b| {
        Plan::new(parse_plan(&String::from_utf8_lossy(b)))
    });
    Ok(plan)
}

/// progress.md whole (capped), as text.
pub(crate) fn read_log(cx: &Ctx, p: &Paths) -> Result<String> {
    Ok(cx
        .store
        .read_range(&p.progress, 0, LOG_CAP)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default())
}

/// FNV-1a over every unit's id and counters (status, iterations, confirmations, budget; `-`
/// for one the unit lacks), in state order.
pub(crate) fn checksum(state: &State) -> String {
    let mut h = crate::fnv::OFFSET;
    let mut eat = |bytes: &[u8]| h = crate::fnv::add(h, bytes);
    eat(state.units_key().as_bytes());
    for (id, u) in state.units().iter() {
        eat(id.as_bytes());
        eat(b"\0");
        eat(u.status.as_str().as_bytes());
        for n in [u.iterations_used, u.confirmations_used, u.max_iterations] {
            eat(b"\0");
            match n {
                Some(n) => eat(&n.to_le_bytes()),
                None => eat(b"-"),
            }
        }
        eat(b"\n");
    }
    format!("{h:016x}")
}

/// The cursor of a state whose checksum still holds.
fn valid_cursor(state: &State) -> Option<&Cursor> {
    state
        .taskhook
        .as_ref()
        .filter(|c| c.checksum == checksum(state))
}

/// Loads a slug: state.json caught up with progress.md's tail, or checked against the whole
/// log, or rebuilt from it when missing or unusable. Units tasks.md / plan.md lists that
/// state.json lacks are added. Call under the folder lock when `write` is true; a read-only
/// load describes what a writing one would do.
pub fn load(cx: &Ctx, store: &StoreRef, write: bool) -> Result<Slug> {
    load_with(cx, store, write, false)
}

/// [`load`], with `full` forcing the whole log to be checked (`taskhook recover`).
pub(crate) fn load_with(cx: &Ctx, store: &StoreRef, write: bool, full: bool) -> Result<Slug> {
    let p = Paths::of(&store.root);
    let plan = read_plan(cx, &p)?;
    let log_len = cx.store.len(&p.progress).unwrap_or(0);
    let writes = write && !cx.store.is_dry_run();
    // The file still holds the bytes parsed last: compared, not read into a second copy.
    let loaded = match cx.store.still_parsed::<State>(TYPED, &p.state) {
        Some(read) => Ok(read),
        None => match cx.store.read(&p.state)? {
            None => Err(Loaded::Missing),
            Some(bytes) => match typed_state(bytes)? {
                (bytes, Ok(state)) => Ok((bytes, state)),
                (_, Err(why)) => Err(Loaded::Invalid(why)),
            },
        },
    };
    let mut l = match loaded {
        Ok((bytes, was)) => {
            let cursor = valid_cursor(&was).cloned();
            let mut l = Slug::new(Source::Bytes(bytes), (*was).clone(), plan, log_len, writes);
            l.was = Some(was);
            match cursor {
                Some(c) if !full && c.progress_bytes <= log_len => {
                    l.commits_logged = usize::try_from(c.commits_logged).unwrap_or(usize::MAX);
                    let tail = cx
                        .store
                        .read_range(&p.progress, c.progress_bytes, LOG_CAP)?
                        .unwrap_or_default();
                    catch_up(&mut l, &parse_records(&String::from_utf8_lossy(&tail)));
                }
                _ => {
                    let text = read_log(cx, &p)?;
                    if let Some(c) = &l.state.taskhook {
                        if c.progress_bytes > log_len {
                            l.notes.push(format!(
                                "progress.md has {log_len} bytes, fewer than the {} state.json was written after (was it cut or replaced?): checked state.json against the whole log",
                                c.progress_bytes
                            ));
                            l.dirty = true;
                        }
                    }
                    l.commits_logged = reconcile::commits_named(&l.state, &text);
                    reconcile::check(store, &mut l, &text);
                }
            }
            l
        }
        Err(other) => {
            let text = read_log(cx, &p)?;
            let records = parse_records(&text);
            if matches!(other, Loaded::Missing) && !records.iter().any(|r| r.unit().is_some()) {
                return Err(Error::NotFound(format!(
                    "`{}` has no state.json and no progress.md entries to rebuild it from",
                    store.root.display()
                )));
            }
            let why = match other {
                Loaded::Invalid(why) => why,
                _ => "it is missing".to_string(),
            };
            let old = cx.store.read(&p.state).ok().flatten();
            let state = reconcile::rebuild(cx, store, &plan, &records, old.as_deref());
            let mut note = format!("state.json was unusable ({why}); ");
            if write && cx.store.exists(&p.state) {
                let aside = cx.store.quarantine(&p.state)?;
                let aside = aside.file_name().unwrap_or_default().to_string_lossy();
                note.push_str(&if writes {
                    format!("moved it to {aside} and rebuilt it from progress.md")
                } else {
                    format!("would move it to {aside} and rebuild it from progress.md")
                });
            } else if writes {
                note.push_str("rebuilt it from progress.md");
            } else {
                note.push_str(
                    "taskhook reconcile (or the next session start) would move it aside and rebuild it from progress.md",
                );
            }
            let mut l = Slug::new(Source::Value(Value::Null), state, plan, log_len, writes);
            l.notes.push(note);
            l.dirty = true;
            l.commits_logged = reconcile::commits_named(&l.state, &text);
            l
        }
    };
    add_plan_units(&mut l);
    if l.dirty {
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
    }
    Ok(l)
}

/// Applies progress.md records written after the cursor on top of state.json's counters.
fn catch_up(l: &mut Slug, records: &[Record]) {
    let mut order: Vec<String> = Vec::new();
    let mut before: HashMap<String, Unit> = HashMap::new();
    for r in records {
        let Some(id) = r.unit() else { continue };
        let set = match r {
            Record::Note(n) => match n.counters.as_ref().and_then(set_unit) {
                Some(set) => Some(set),
                None => continue,
            },
            Record::Entry(_) => None,
        };
        let mut unit = l.state.unit(id).cloned().unwrap_or_default();
        if !before.contains_key(id) {
            order.push(id.to_string());
            before.insert(id.to_string(), unit.clone());
        }
        let mut c = counters_of(&unit, l.plan.max_of(id));
        match (r, set) {
            (Record::Entry(e), _) => {
                let was_pending = c.status == Status::Pending;
                let effect = replay::step_entry(&mut c, e);
                if was_pending {
                    unit.start_at(&e.timestamp);
                }
                if effect == Effect::Completed {
                    mark_done(&mut unit, &e.timestamp);
                }
            }
            (_, Some(set)) => c = counters_of(&set, Some(c.max_iterations)),
            _ => continue,
        }
        write_counters(&mut unit, &c);
        l.state.units_mut().insert(id.to_string(), unit);
    }
    for id in order {
        let (Some(old), Some(now)) = (before.get(&id), l.state.unit(&id)) else {
            continue;
        };
        if now == old {
            continue;
        }
        let had = counters_of(old, None);
        let has = counters_of(now, None);
        l.notes.push(format!(
            "state.json had {id} {} after {} iteration(s); progress.md logs {}: {id} {} {}",
            had.status,
            had.iterations_used,
            has.iterations_used,
            l.now_is(),
            has.status
        ));
        l.dirty = true;
    }
}

/// Marks a unit done at `at`: `verification_passed`, `completed_at`.
pub(crate) fn mark_done(u: &mut Unit, at: &str) {
    u.verification_passed = Some(true);
    if crate::store::clock::parse_time(at).is_some() {
        u.completed_at.get_or_insert_with(|| Some(at.to_string()));
    }
}

/// Units tasks.md / plan.md lists that state.json lacks become pending units.
fn add_plan_units(l: &mut Slug) {
    let file = l.state.mode.plan_file();
    let have = l.state.units();
    let missing: Vec<(String, Option<u64>)> = l
        .plan
        .units
        .iter()
        .filter(|u| !have.contains(&u.id))
        .map(|u| (u.id.clone(), u.max_iterations))
        .collect();
    if missing.is_empty() {
        return;
    }
    let units = l.state.units_mut();
    for (id, max) in &missing {
        let c = super::lifecycle::Counters::pending(
            max.unwrap_or(super::lifecycle::DEFAULT_MAX_ITERATIONS)
                .max(1),
        );
        units.insert(id.clone(), unit_with(&c));
    }
    let ids: Vec<String> = missing.into_iter().map(|(id, _)| id).collect();
    let verb = if l.writes { "added" } else { "would add" };
    l.notes.push(format!(
        "{file} lists {}, which state.json lacked: {verb} as pending",
        name_some(&ids)
    ));
    l.dirty = true;
}

/// Appends to progress.md (creating it with the seed's header), counting the bytes.
pub(crate) fn append_progress(cx: &Ctx, p: &Paths, l: &mut Slug, text: &str) -> Result<()> {
    if !cx.store.exists(&p.progress) {
        let head = "# Progress Log\n\n";
        cx.store.append(&p.progress, head.as_bytes())?;
        l.appended += head.len() as u64;
    }
    cx.store.append(&p.progress, text.as_bytes())?;
    l.appended += text.len() as u64;
    Ok(())
}

/// Appends to progress.md outside a loaded slug (a note while state.json is unusable).
pub(crate) fn append_raw(cx: &Ctx, p: &Paths, text: &str) -> Result<()> {
    if !cx.store.exists(&p.progress) {
        cx.store.append(&p.progress, b"# Progress Log\n\n")?;
    }
    cx.store.append(&p.progress, text.as_bytes())
}

/// Logs the slug's pending notes: each reconciliation note, then each `set` note.
pub(crate) fn log_notes(cx: &Ctx, p: &Paths, l: &mut Slug) -> Result<()> {
    let now = cx.store.clock().stamp();
    let mut text = String::new();
    for n in &l.notes[l.notes_logged.min(l.notes.len())..] {
        text.push_str(&render_note(&now, "reconciled", None, n));
    }
    l.notes_logged = l.notes.len();
    for (unit, counters, why) in std::mem::take(&mut l.sets) {
        text.push_str(&log::render_set(&now, &unit, &counters, &why));
    }
    if text.is_empty() {
        return Ok(());
    }
    append_progress(cx, p, l, &text)
}

/// Writes state.json with a fresh cursor (when progress.md holds exactly what this operation
/// appended beyond what the state reflects; else none, so the next load checks the whole log).
pub(crate) fn write_state(cx: &Ctx, p: &Paths, l: &mut Slug) -> Result<bool> {
    let now_len = cx.store.len(&p.progress).unwrap_or(0);
    let grew = now_len.checked_sub(l.log_len);
    let exact = grew.is_some_and(|g| g == l.appended || g == l.appended + 1);
    l.state.taskhook = exact.then(|| Cursor {
        progress_bytes: now_len,
        commits_logged: l.commits_logged.min(l.state.commits().len()) as u64,
        checksum: checksum(&l.state),
    });
    let in_place = match (&l.source, &l.was) {
        (Source::Bytes(bytes), Some(was)) => in_place(bytes, was, &mut l.state)?,
        _ => None,
    };
    let bytes = match in_place {
        Some(bytes) => bytes,
        None => {
            let mut doc = l.source.to_value().map_err(Error::BadInput)?;
            // The cursor goes last, as a key added to the file.
            if let Value::Object(m) = &mut doc {
                m.shift_remove(CURSOR);
            }
            write_back(&mut doc, &l.state).map_err(|details| Error::SchemaInvalid {
                path: p.state.clone(),
                schema: SCHEMA,
                details,
            })?;
            match cx.store.checked_json(&p.state, SCHEMA, &doc) {
                Ok(bytes) => bytes,
                Err(e) => {
                    cx.store.keep_through_failure(|| {
                        append_raw(cx, p, &invalid_note(cx, &e.one_line()))
                    })?;
                    return Err(e);
                }
            }
        }
    };
    // The undo keeps the bytes as read (still the file's: compared, not read again).
    let written = cx.store.replace_from(&p.state, &bytes, l.source.bytes())?;
    // What the file now holds is the state (a typed parse gives it back): the next write, or a
    // look later in this event, starts from it.
    let was = Rc::new(l.state.clone());
    let bytes = Bytes::new(bytes);
    parsed::remember_shared(TYPED, bytes.clone(), was.clone());
    l.was = Some(was);
    l.source = Source::Bytes(bytes);
    l.log_len = now_len;
    l.appended = 0;
    Ok(written)
}

/// The key of taskhook's cursor in state.json.
const CURSOR: &str = "taskhook";

/// What [`typed_state`] remembers: the typed state of the last valid bytes of state.json.
const TYPED: &str = "iterative state.json, typed";

/// The state the bytes hold, or why they are unusable, with the bytes (shared with what
/// remembers their parse): parsed, schema-checked and typed once per invocation for the same
/// bytes.
#[allow(clippy::type_complexity)]
pub(crate) fn typed_state(
    bytes: Vec<u8>,
) -> Result<(Bytes, std::result::Result<Rc<State>, String>)> {
    parsed::remembered_valid(TYPED, bytes, parse_state)
}

/// The state the bytes hold, or why they are unusable.
fn parse_state(bytes: &[u8]) -> Result<std::result::Result<State, String>> {
    // Unit by unit, each straight into its type (no tree, no schema check per unit:
    // `reading`); the whole reading words a refusal.
    crate::store::entries::read_strict(
        bytes,
        SCHEMA,
        "tasks",
        // A unit given twice is refused here (the whole reading then decides).
        |units: &mut super::model::Units, id, u: Unit| id.is_some_and(|id| units.add(id, u)),
        crate::store::entries::NoSide,
        |state: &mut State, units, present, _| {
            if present {
                state.tasks = Some(units);
            }
        },
    )
}

/// The state written over `bytes` (which hold `was`) in place ([`write_in_place`]), when its
/// units are the same ids in the same order: only the changed units' bytes replaced, the
/// cursor put last as the whole write puts it.
fn in_place(bytes: &[u8], was: &State, state: &mut State) -> Result<Option<Vec<u8>>> {
    let (Some(old), Some(new)) = (was.units_present(), state.units_present()) else {
        return Ok(None);
    };
    if was.mode != state.mode || old.ids().ne(new.ids()) {
        return Ok(None);
    }
    let units = state
        .units_field()
        .replace(Default::default())
        .unwrap_or_default();
    let out = write_in_place(
        bytes,
        state.units_key(),
        &*state,
        old.iter().map(|(_, u)| u),
        units.iter().map(|(_, u)| u),
        Shape {
            schema: SCHEMA,
            last: &[CURSOR],
            kept: &[],
        },
    )
    .map(|s| s.map(|s| s.to_vec(bytes)));
    *state.units_field() = Some(units);
    out
}

/// The progress.md note for a state.json that is (or would be) invalid: a note, not an
/// iteration entry, so the seed's readers skip it.
pub(crate) fn invalid_note(cx: &Ctx, message: &str) -> String {
    render_note(
        &cx.store.clock().stamp(),
        "invalid",
        None,
        &format!("state.json: {message}"),
    )
}

/// Writes a loaded slug back: its notes to progress.md, then state.json when it changed (or
/// its cursor must follow what was appended).
pub(crate) fn save(cx: &Ctx, store: &StoreRef, l: &mut Slug) -> Result<()> {
    let p = Paths::of(&store.root);
    log_notes(cx, &p, l)?;
    if l.dirty || l.appended > 0 {
        write_state(cx, &p, l)?;
    }
    Ok(())
}

/// The last progress entry of `unit`, looked for in the log's last few MiB.
pub(crate) fn last_entry(cx: &Ctx, p: &Paths, unit: &str) -> Result<Option<log::Entry>> {
    let len = cx.store.len(&p.progress).unwrap_or(0);
    let mut window = 64 * 1024;
    loop {
        let from = len.saturating_sub(window);
        let Some(bytes) = cx.store.read_range(&p.progress, from, LOG_CAP)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Some(e) = log::last_entry_of(&text, unit) {
            return Ok(Some(e));
        }
        if from == 0 || window >= LAST_ENTRY_WINDOW {
            return Ok(None);
        }
        window *= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Cursor, Status};
    use super::*;
    use serde_json::json;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// A state written in place is the state written back whole: byte for byte over a file
        /// taskhook wrote, the same document over one formatted otherwise, the cursor put last
        /// either way; units changed in any mix, the slug's own fields too; units added, or a
        /// change the schema refuses: the whole write.
        #[test]
        fn a_state_written_in_place_is_the_whole_write(
            changes in proptest::collection::vec((0..3usize, 0..4u8), 0..5),
            cursor in proptest::prelude::any::<bool>(),
            add in proptest::prelude::any::<bool>(),
        ) {
            let text = include_str!(
                "../../../tests/fixtures/schemas/iterative-state/valid/seed-development-mode.json"
            );
            let mut doc: Value = serde_json::from_str(text).unwrap();
            // A cursor in the middle of the file, as another writer may leave it.
            let mut m = serde_json::Map::new();
            for (k, v) in doc.as_object().unwrap() {
                m.insert(k.clone(), v.clone());
                if k == "phase" {
                    m.insert(CURSOR.into(), json!({"progress_bytes": 1, "commits_logged": 0, "checksum": "x"}));
                }
            }
            doc = Value::Object(m);
            let was: State = crate::layouts::json::typed(&doc).unwrap();
            let mut s = was.clone();
            let ids: Vec<String> = s.units().ids().map(str::to_string).collect();
            for (i, what) in changes {
                let u = s.units_mut().entry(&ids[i]);
                match what {
                    0 => u.status = Status::Done,
                    1 => u.iterations_used = Some(u.iterations_used.unwrap_or(0) + 1),
                    2 => { u.rest.insert("x-note".into(), json!([1, null])); }
                    _ => u.max_iterations = Some(0),
                }
            }
            s.updated = Some("2026-11-26T09:00:00Z".into());
            s.taskhook = cursor.then(|| Cursor { progress_bytes: 9, commits_logged: 0, checksum: "y".into() });
            if add {
                s.units_mut().entry("T9");
            }
            let mut whole = doc.clone();
            whole.as_object_mut().unwrap().shift_remove(CURSOR);
            write_back(&mut whole, &s).unwrap();
            let valid = matches!(crate::store::schema::check(SCHEMA, &whole), Ok(Ok(())));
            let pretty = crate::store::to_pretty(&doc);
            let got = in_place(&pretty, &was, &mut s).unwrap();
            proptest::prop_assert_eq!(got.is_none(), add || !valid);
            if let Some(got) = got {
                proptest::prop_assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(crate::store::to_pretty(&whole)).unwrap()
                );
                let compact = serde_json::to_vec(&doc).unwrap();
                let got = in_place(&compact, &was, &mut s).unwrap().unwrap();
                proptest::prop_assert_eq!(serde_json::from_slice::<Value>(&got).unwrap(), whole);
            }
            proptest::prop_assert_eq!(s.units().len(), ids.len() + usize::from(add));
        }
    }
}
