//! `taskhook recover` for an iterative slug: salvage what survives, never start from nothing.
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

use serde_json::{json, Value};

use super::log::{parse_records, render_note, Record};
use super::model::{Mode, State, Unit};
use super::plan::*;
use super::rebuild::{rebuild, Salvage};
use super::reconcile;
use super::state::{self, read_log, read_plan, Slug};
use super::{Paths, SCHEMA};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::typed;
use crate::layouts::StoreRef;
use crate::store::{folder_lock_path, parse_json, schema};

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
        let mut l = Slug::new(doc, state, plan, log_len, !dry);
        l.commits_logged = reconcile::commits_named(&l.state, &text);
        reconcile::check(store, &mut l, &text);
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
