//! taskhook's own record for the main agent (CONTRACT §4–§6), in
//! `<project>/.claude/taskhook/agents.json`:
//!
//! - **bindings**: agentId → the unit names its prompt named, remembered at PreToolUse and
//!   PostToolUse of the `Agent` tool (a background agent's SubagentStop comes much later);
//! - **notices**: what a subagent's signals changed, kept at SubagentStop (where
//!   `additionalContext` would give the subagent another turn) and handed to the main agent at
//!   its next PostToolUse, once. A notice about a unit records it (`about`: layout, store,
//!   unit, and the unit's status when the notice was written, [`Layout::unit_status`]); a
//!   later notice about the same unit supersedes it, and at delivery it is dropped when the
//!   unit's status has changed since (a reset, a merge, a command run by hand): a notice a
//!   later event made false never reaches the main agent;
//! - **halts**: a stop a person must pass (seed 004): every main-agent PostToolUse answers
//!   `continue: false` with its message until `taskhook cdd continue` lifts it, in this session
//!   and every later one.
//!
//! The main agent's PostToolUse (the hot path) costs one read and a plain parse of this file;
//! it locks and writes only when there are notices to take. Lists are bounded. A corrupt file
//! holds nothing authoritative: it is moved aside and started afresh.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{registry, Layout, StoreRef};
use crate::store::strict::{
    checked_record, list, non_empty, non_empty_strings, record, string, string_or_null, takes,
    timestamp, values_of,
};
use crate::store::{lock_path_for, Loaded};

/// A unit a notice is about, and its status when the notice was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct About {
    pub layout: &'static str,
    pub store: String,
    pub root: PathBuf,
    pub unit: String,
    /// [`Layout::unit_status`] right after the step the notice tells of.
    pub status: Option<String>,
}

impl About {
    fn to_json(&self) -> Value {
        json!({"layout": self.layout, "store": self.store, "root": self.root,
            "unit": self.unit, "status": self.status})
    }

    /// Whether a kept notice's `about` names the same unit.
    fn same_unit(&self, kept: &Value) -> bool {
        kept["layout"] == self.layout
            && kept["root"].as_str() == self.root.to_str()
            && kept["unit"] == self.unit.as_str()
    }
}

/// What the main agent should be told, and the unit it is about (when it is about one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub about: Option<About>,
}

impl Notice {
    /// A notice about no unit in particular: delivered as it is.
    pub fn plain(text: String) -> Self {
        Notice { text, about: None }
    }
}

const SCHEMA: &str = "taskhook-agents";
/// Most bindings kept (oldest dropped first).
pub const MAX_BINDINGS: usize = 500;
/// Most pending notices kept (oldest dropped first).
pub const MAX_NOTICES: usize = 100;
/// Largest agents.json read on the hot path.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// The file's path for a project.
pub fn path(project: &Path) -> PathBuf {
    project.join(".claude").join("taskhook").join("agents.json")
}

fn empty() -> Value {
    json!({"bindings": {}, "notices": []})
}

checked_record! {
    /// agents.json (`taskhook-agents`).
    FileCheck,
    ["bindings", "notices", "halts"],
    required: ["bindings", "notices"],
    |m, name| {
        match name {
            "bindings" => values_of::<BindingCheck, _>(m)?,
            "notices" => _ = list::<NoticeCheck, _>(m)?,
            _ => _ = list::<HaltCheck, _>(m)?,
        }
        Ok(())
    }
}

checked_record! {
    /// A subagent's binding to its units.
    BindingCheck,
    ["units", "at"],
    required: ["units", "at"],
    |m, name| {
        match name {
            "units" => _ = non_empty_strings(m, name)?,
            _ => _ = timestamp(m, name)?,
        }
        Ok(())
    }
}

checked_record! {
    /// A notice waiting for its agent.
    NoticeCheck,
    ["agent_id", "text", "at", "about"],
    required: ["agent_id", "text", "at"],
    |m, name| {
        match name {
            "at" => _ = timestamp(m, name)?,
            "about" => _ = record::<AboutCheck, _>(m)?,
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

checked_record! {
    /// What a notice is about.
    AboutCheck,
    ["layout", "store", "root", "unit", "status"],
    required: [],
    |m, name| {
        match name {
            "status" => _ = string_or_null(m)?,
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

checked_record! {
    /// A halt said once.
    HaltCheck,
    ["key", "message", "at"],
    required: ["key", "message", "at"],
    |m, name| {
        match name {
            "key" => _ = non_empty(m, name)?,
            "at" => _ = timestamp(m, name)?,
            _ => _ = string(m)?,
        }
        Ok(())
    }
}

/// `taskhook-agents`' own check ([`crate::store::schema::Native`]).
pub fn is_valid(doc: &Value) -> bool {
    takes::<FileCheck>(doc)
}

fn load(cx: &Ctx, path: &Path) -> Result<Value> {
    Ok(match cx.store.load_json(path, SCHEMA)? {
        Loaded::Valid(v) => v,
        Loaded::Missing => empty(),
        Loaded::Invalid(_) => {
            cx.store.quarantine(path)?;
            empty()
        }
    })
}

/// The object at `key` of the document, made one when it is missing or of another kind.
fn object<'a>(doc: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let slot = doc
        .as_object_mut()?
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// The array at `key` of the document, made one when it is missing or of another kind.
fn array<'a>(doc: &'a mut Value, key: &str) -> Option<&'a mut Vec<Value>> {
    let slot = doc
        .as_object_mut()?
        .entry(key)
        .or_insert_with(|| Value::Array(Vec::new()));
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut()
}

/// Changes the file under its lock (re-read under the lock); writes only when `f` changed it.
fn update(cx: &Ctx, project: &Path, f: impl FnOnce(&mut Value)) -> Result<()> {
    let path = path(project);
    cx.store.create_dir_all(path.parent().unwrap_or(project))?;
    cx.store.with_lock(&lock_path_for(&path), || {
        let mut doc = load(cx, &path)?;
        let before = doc.clone();
        f(&mut doc);
        if doc != before {
            cx.store.replace_json(&path, SCHEMA, &doc)?;
        }
        Ok(())
    })
}

/// Remembers which units an agent's prompt named.
pub fn remember_binding(cx: &Ctx, project: &Path, agent_id: &str, units: &[String]) -> Result<()> {
    let at = cx.store.clock().stamp();
    update(cx, project, |doc| {
        let Some(bindings) = object(doc, "bindings") else {
            return;
        };
        if bindings.get(agent_id).and_then(|b| b.get("units")) == Some(&json!(units)) {
            return;
        }
        bindings.shift_remove(agent_id);
        bindings.insert(agent_id.to_string(), json!({"units": units, "at": at}));
        while bindings.len() > MAX_BINDINGS {
            let Some(oldest) = bindings.keys().next().cloned() else {
                break;
            };
            bindings.shift_remove(&oldest);
        }
    })
}

/// The units an agent was bound to, when remembered. Reads only.
pub fn binding(cx: &Ctx, project: &Path, agent_id: &str) -> Result<Vec<String>> {
    let path = path(project);
    let Loaded::Valid(doc) = cx.store.load_json(&path, SCHEMA)? else {
        return Ok(Vec::new());
    };
    Ok(doc["bindings"][agent_id]["units"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

/// The agents remembered as bound to any of `names` (a unit as `ID` and as `STORE/ID`), oldest
/// first. Reads only.
pub fn agents_bound_to(cx: &Ctx, project: &Path, names: &[String]) -> Result<Vec<String>> {
    let Loaded::Valid(doc) = cx.store.load_json(&path(project), SCHEMA)? else {
        return Ok(Vec::new());
    };
    Ok(doc["bindings"]
        .as_object()
        .map(|b| {
            b.iter()
                .filter(|(_, v)| {
                    v["units"].as_array().is_some_and(|u| {
                        u.iter()
                            .any(|x| x.as_str().is_some_and(|x| names.iter().any(|n| n == x)))
                    })
                })
                .map(|(agent, _)| agent.clone())
                .collect()
        })
        .unwrap_or_default())
}

/// Keeps notices for the main agent, and sets or lifts halts, in one write. A notice about a
/// unit supersedes the notices kept earlier about the same unit.
pub fn keep(
    cx: &Ctx,
    project: &Path,
    agent_id: &str,
    notices: &[Notice],
    halts: &[(String, String)],
) -> Result<()> {
    if notices.is_empty() && halts.is_empty() {
        return Ok(());
    }
    let at = cx.store.clock().stamp();
    update(cx, project, |doc| {
        let Some(list) = array(doc, "notices") else {
            return;
        };
        list.retain(|kept| {
            !notices
                .iter()
                .filter_map(|n| n.about.as_ref())
                .any(|a| a.same_unit(&kept["about"]))
        });
        for n in notices {
            let mut v = json!({"agent_id": agent_id, "text": n.text, "at": at});
            if let Some(a) = &n.about {
                v["about"] = a.to_json();
            }
            list.push(v);
        }
        let excess = list.len().saturating_sub(MAX_NOTICES);
        list.drain(..excess);
        if let Some(h) = array(doc, "halts").filter(|_| !halts.is_empty()) {
            for (key, message) in halts {
                h.retain(|x| x["key"] != key.as_str());
                h.push(json!({"key": key, "message": message, "at": at}));
            }
        }
    })
}

/// The keys of the halts in force. Reads only.
pub fn halt_keys(cx: &Ctx, project: &Path) -> Result<Vec<String>> {
    let Loaded::Valid(doc) = cx.store.load_json(&path(project), SCHEMA)? else {
        return Ok(Vec::new());
    };
    Ok(doc["halts"]
        .as_array()
        .map(|h| {
            h.iter()
                .filter_map(|x| x["key"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

/// Lifts the halt `key`; returns whether there was one.
pub fn lift_halt(cx: &Ctx, project: &Path, key: &str) -> Result<bool> {
    let path = path(project);
    let has = |doc: &Value| {
        doc["halts"]
            .as_array()
            .is_some_and(|h| h.iter().any(|x| x["key"] == key))
    };
    match cx.store.load_json(&path, SCHEMA)? {
        Loaded::Valid(doc) if has(&doc) => {}
        _ => return Ok(false),
    }
    update(cx, project, |doc| {
        if let Some(h) = array(doc, "halts") {
            h.retain(|x| x["key"] != key);
        }
        if doc["halts"].as_array().is_some_and(Vec::is_empty) {
            if let Some(m) = doc.as_object_mut() {
                m.shift_remove("halts");
            }
        }
    })?;
    Ok(true)
}

/// What the main agent is handed at a PostToolUse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Notices taken (removed from the file).
    pub notices: Vec<String>,
    /// Messages of the halts in force (they stay until lifted).
    pub halts: Vec<String>,
}

/// Takes the pending notices and reads the halts in force. The hot path (every main-agent
/// PostToolUse): one read and a plain parse; no schema compilation, and no lock unless there is
/// a notice to take.
pub fn deliver(cx: &Ctx, project: &Path) -> Result<Delivery> {
    let path = path(project);
    let Some(bytes) = cx.store.read_capped(&path, MAX_FILE_BYTES)? else {
        return Ok(Delivery::default());
    };
    let Ok(doc) = crate::store::parse_json(&bytes) else {
        return Ok(Delivery::default());
    };
    let halts: Vec<String> = doc
        .get("halts")
        .and_then(Value::as_array)
        .map(|h| {
            h.iter()
                .filter_map(|x| x.get("message").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let pending = doc
        .get("notices")
        .and_then(Value::as_array)
        .is_some_and(|n| !n.is_empty());
    if !pending {
        return Ok(Delivery {
            notices: Vec::new(),
            halts,
        });
    }
    let mut taken: Vec<Value> = Vec::new();
    update(cx, project, |doc| {
        if let Some(list) = array(doc, "notices") {
            taken = std::mem::take(list);
        }
    })?;
    Ok(Delivery {
        notices: taken
            .iter()
            .filter(|n| still_true(cx, project, &n["about"]))
            .filter_map(|n| n["text"].as_str().map(str::to_string))
            .collect(),
        halts,
    })
}

/// Whether a notice is still true: it is about no unit, or its unit's status is what it was
/// when the notice was written (or cannot be told now). Only stores in the project or the
/// home folder are read.
fn still_true(cx: &Ctx, project: &Path, about: &Value) -> bool {
    let (Some(name), Some(root), Some(unit)) = (
        about["layout"].as_str(),
        about["root"].as_str().map(PathBuf::from),
        about["unit"].as_str(),
    ) else {
        return true;
    };
    let Some(then) = about["status"].as_str() else {
        return true;
    };
    if !root.starts_with(project) && !root.starts_with(&cx.home) {
        return true;
    }
    let Some(layout) = registry().iter().find(|l| l.name() == name) else {
        return true;
    };
    let store = StoreRef {
        layout: layout.name(),
        id: about["store"].as_str().unwrap_or_default().to_string(),
        root,
        project: project.to_path_buf(),
    };
    match layout.unit_status(cx, &store, unit) {
        Ok(Some(now)) => now == then,
        _ => true,
    }
}

/// What a notice about `unit` of `store` records: the unit and its status now.
pub fn about(cx: &Ctx, layout: &dyn Layout, store: &StoreRef, unit: &str) -> About {
    About {
        layout: layout.name(),
        store: store.id.clone(),
        root: store.root.clone(),
        unit: unit.to_string(),
        status: layout.unit_status(cx, store, unit).ok().flatten(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use crate::store::schema::tests::native_is_the_schema;
    use crate::store::strict::tests::{any_value, object, pick, stamp};

    fn doc() -> impl Strategy<Value = Value> {
        let text = || pick(vec![json!("a1"), json!(""), json!(2), Value::Null]);
        let binding = object(
            vec![
                (
                    "units",
                    pick(vec![json!(["T1"]), json!([]), json!([""]), json!("T1")]),
                ),
                ("at", stamp()),
            ],
            vec![
                ("units", json!(["T2"])),
                ("at", json!("2026-01-05T08:00:00Z")),
            ],
            2,
        );
        let about = object(
            vec![
                ("layout", text()),
                ("store", text()),
                ("root", text()),
                ("unit", text()),
                ("status", text()),
            ],
            vec![],
            3,
        );
        let notice = object(
            vec![
                ("agent_id", text()),
                ("text", text()),
                ("at", stamp()),
                ("about", about.boxed()),
            ],
            vec![
                ("agent_id", json!("a1")),
                ("text", json!("T1 is done")),
                ("at", json!("2026-01-05T08:00:00Z")),
            ],
            3,
        );
        let halt = object(
            vec![("key", text()), ("message", text()), ("at", stamp())],
            vec![
                ("key", json!("k")),
                ("message", json!("stop")),
                ("at", json!("2026-01-05T08:00:00Z")),
            ],
            2,
        );
        let bindings = prop::collection::vec(binding, 0..3).prop_map(|b| {
            Value::Object(
                b.into_iter()
                    .enumerate()
                    .map(|(i, b)| (format!("a{i}"), b))
                    .collect(),
            )
        });
        object(
            vec![
                ("bindings", bindings.boxed()),
                (
                    "notices",
                    prop::collection::vec(notice, 0..3)
                        .prop_map(Value::from)
                        .boxed(),
                ),
                (
                    "halts",
                    prop::collection::vec(halt, 0..3)
                        .prop_map(Value::from)
                        .boxed(),
                ),
            ],
            vec![("bindings", json!({})), ("notices", json!([]))],
            3,
        )
        .boxed()
        .prop_union(any_value().boxed())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// agents.json's own check is its schema.
        #[test]
        fn the_check_is_the_schema(v in doc()) {
            native_is_the_schema("taskhook-agents", &v)?;
        }
    }
}
