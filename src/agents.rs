//! taskhook's own record of subagents (CONTRACT §4), in `<project>/.claude/taskhook/agents.json`:
//!
//! - **bindings**: agentId → the unit names its prompt named, remembered at PostToolUse of the
//!   `Agent` tool (a background agent's SubagentStop comes much later);
//! - **notices**: what a subagent's signals changed, kept at SubagentStop (where
//!   `additionalContext` would give the subagent another turn) and handed to the main agent
//!   at its next PostToolUse.
//!
//! Both lists are bounded. A corrupt file holds nothing authoritative: it is moved aside and
//! started afresh.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::Result;
use crate::store::{lock_path_for, Loaded};

const SCHEMA: &str = "taskhook-agents";
/// Most bindings kept (oldest dropped first).
pub const MAX_BINDINGS: usize = 500;
/// Most pending notices kept (oldest dropped first).
pub const MAX_NOTICES: usize = 100;

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
        let bindings = doc["bindings"].as_object_mut().expect("schema: object");
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

/// Keeps a notice for the main agent.
pub fn push_notice(cx: &Ctx, project: &Path, agent_id: &str, text: &str) -> Result<()> {
    let at = cx.store.clock().stamp();
    update(cx, project, |doc| {
        let notices = doc["notices"].as_array_mut().expect("schema: array");
        notices.push(json!({"agent_id": agent_id, "text": text, "at": at}));
        let excess = notices.len().saturating_sub(MAX_NOTICES);
        notices.drain(..excess);
    })
}

/// Takes (removes and returns) the pending notices: all of them, or only `agent_id`'s. Writes
/// nothing, and takes no lock, when there is none to take.
pub fn take_notices(cx: &Ctx, project: &Path, agent_id: Option<&str>) -> Result<Vec<String>> {
    let path = path(project);
    let matches = |n: &Value| agent_id.is_none_or(|a| n["agent_id"] == a);
    // The hot path (every main-agent PostToolUse): one read and a plain parse; no schema
    // compilation and no lock unless there is something to take.
    let Some(bytes) = cx.store.read(&path)? else {
        return Ok(Vec::new());
    };
    let pending = crate::store::parse_json(&bytes)
        .ok()
        .and_then(|doc| {
            doc.get("notices")
                .and_then(Value::as_array)
                .map(|n| n.iter().any(matches))
        })
        .unwrap_or(false);
    if !pending {
        return Ok(Vec::new());
    }
    let mut taken = Vec::new();
    update(cx, project, |doc| {
        let notices = doc["notices"].as_array_mut().expect("schema: array");
        let (take, keep): (Vec<Value>, Vec<Value>) = notices.drain(..).partition(|n| matches(n));
        *notices = keep;
        taken = take
            .into_iter()
            .filter_map(|n| n["text"].as_str().map(str::to_string))
            .collect();
    })?;
    Ok(taken)
}
