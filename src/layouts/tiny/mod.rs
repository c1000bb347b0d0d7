//! A sixth layout, for tests only: what a new layout touches (issue 21's done-when). Its whole
//! store is one file, `.claude/tiny/<id>/units.json` (`{"A": "pending", "B": "done"}`), and
//! its whole lifecycle one rule: a DONE signal completes a unit, and a bound subagent that
//! stops without one is asked for another pass.
//!
//! Adding it took this folder and one line in [`super::registry`] (behind `cfg(test)`, so the
//! binary never knows it); a layout people use adds `cli/<name>.rs` for its verbs, a schema
//! for its state file, and the README's section. It imports neither the engine nor the hook
//! protocol: it answers in [`Reaction`]s, reads a parsed final message from the [`Turn`], and
//! reaches the disk only through the store. `engine/sixth_layout.rs` drives it through the
//! engine, from a SubagentStop payload's bytes to the reply's JSON.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    Input, Layout, Reaction, Reconciled, StateFile, StoreRef, Summary, Turn, Unit,
};
use crate::project::Project;
use crate::signals::SignalKind;
use crate::store::{check_id, lock_path_for, parse_json, to_pretty};

/// The layout's name (and its folder under `.claude/`).
pub const NAME: &str = "tiny";

/// The layout.
pub struct Tiny;

/// Its one instance, as the registry lists it.
pub static LAYOUT: Tiny = Tiny;

fn units_path(store: &StoreRef) -> std::path::PathBuf {
    store.root.join("units.json")
}

/// The units and their statuses, in the file's order (empty when there is no file).
fn read(cx: &Ctx, store: &StoreRef) -> Result<Map<String, Value>> {
    let path = units_path(store);
    let Some(bytes) = cx.store.read(&path)? else {
        return Ok(Map::new());
    };
    match parse_json(&bytes) {
        Ok(Value::Object(units)) => Ok(units),
        Ok(_) => Err(corrupt(store, "not an object of unit statuses".into())),
        Err(why) => Err(corrupt(store, why)),
    }
}

fn corrupt(store: &StoreRef, details: String) -> Error {
    Error::Corrupt {
        path: units_path(store),
        store: store.root.display().to_string(),
        details,
    }
}

impl Layout for Tiny {
    fn name(&self) -> &'static str {
        NAME
    }

    /// No fact beyond its units' steps (the engine runs those for every layout with units).
    fn wants(&self, _fact: &Fact<'_>) -> bool {
        false
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let base = project.claude_dir().join(NAME);
        Ok(cx
            .store
            .list_dir(&base)?
            .into_iter()
            .filter(|e| e.is_dir && check_id("store id", &e.name).is_ok())
            .map(|e| StoreRef::new(NAME, &e.name, base.join(&e.name), &project.root))
            .collect())
    }

    fn state_files(&self, _cx: &Ctx, _store: &StoreRef) -> Result<Vec<StateFile>> {
        // A real layout names its files and their schema here, for the edit check and doctor.
        Ok(Vec::new())
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let mut counts = BTreeMap::new();
        for status in read(cx, store)?.values() {
            *counts
                .entry(status.as_str().unwrap_or("?").to_string())
                .or_default() += 1;
        }
        Ok(Summary {
            layout: NAME,
            id: store.id.clone(),
            path: units_path(store),
            headline: format!("tiny {}", store.id),
            counts,
            ..Default::default()
        })
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, _start: Option<Start>) -> Result<Reconciled> {
        Ok(Reconciled {
            summary: Some(self.summarize(cx, store)?),
            ..Default::default()
        })
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        Ok(read(cx, store)?
            .into_iter()
            .map(|(id, status)| Unit::new(id, status != "done"))
            .collect())
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        match input {
            Input::Signal(SignalKind::Done, _) => {
                let path = units_path(store);
                cx.store.with_lock(&lock_path_for(&path), || {
                    let mut units = read(cx, store)?;
                    units.insert(unit.to_string(), "done".into());
                    cx.store.replace(&path, &to_pretty(&Value::Object(units)))
                })?;
                Ok(Reaction {
                    status: Some("done".into()),
                    tell_user: vec![format!(
                        "taskhook: tiny {}: {unit} is done ({}).",
                        store.id,
                        if turn.message.did.is_empty() {
                            "no message"
                        } else {
                            &turn.message.did
                        }
                    )],
                    ..Default::default()
                })
            }
            Input::NoSignal if turn.bound => Ok(Reaction {
                instruction: Some(format!(
                    "{unit} is not done: finish it, then end with <signal>{unit}_DONE</signal>."
                )),
                ..Default::default()
            }),
            _ => Ok(Reaction::default()),
        }
    }
}
