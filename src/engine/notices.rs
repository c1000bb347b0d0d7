//! taskhook's own record for the main agent (CONTRACT §4–§6), in
//! `<project>/.claude/taskhook/agents.json`:
//!
//! - **bindings**: agentId → the unit names its prompt named, remembered at PreToolUse and
//!   PostToolUse of the `Agent` tool (a background agent's SubagentStop comes much later);
//! - **notices**: what a subagent's signals changed, kept at SubagentStop (where
//!   `additionalContext` would give the subagent another turn) and handed to the main agent at
//!   its next PostToolUse, once;
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
use crate::store::{lock_path_for, Loaded};

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

/// Keeps notices for the main agent, and sets or lifts halts, in one write.
pub fn keep(
    cx: &Ctx,
    project: &Path,
    agent_id: &str,
    notices: &[String],
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
        for text in notices {
            list.push(json!({"agent_id": agent_id, "text": text, "at": at}));
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
    let mut taken = Vec::new();
    update(cx, project, |doc| {
        if let Some(list) = array(doc, "notices") {
            taken = list
                .drain(..)
                .filter_map(|n| n["text"].as_str().map(str::to_string))
                .collect();
        }
    })?;
    Ok(Delivery {
        notices: taken,
        halts,
    })
}
