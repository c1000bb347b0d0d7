//! The task list document of seed 002 and where it lives: the list id (seed 002's precedence),
//! the store, and read-only helpers over the JSON document (which keeps unknown fields).

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::{FILE_NAME, FORMAT_VERSION, NAME};
use crate::context::Ctx;
use crate::env::CLAUDE_CODE_TASK_LIST_ID;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::json::{object_at, set_str, str_field};
use crate::layouts::StoreRef;
use crate::project::Project;
use crate::store::{check_id, sanitize_id};

/// Largest `package.json` read for the project's name.
const PACKAGE_JSON_CAP: usize = 4 * 1024 * 1024;

/// The list id (seed 002's precedence): `CLAUDE_CODE_TASK_LIST_ID` (checked: a hostile value is
/// an error), else the project's name (`name` in its `package.json`, else the folder holding
/// `.git`), else the project folder's name, else `default`. Derived names are made safe.
pub fn list_id(cx: &Ctx, project: &Project) -> Result<String> {
    if let Some(raw) = cx.env.get_os(CLAUDE_CODE_TASK_LIST_ID) {
        let raw = raw.to_str().ok_or_else(|| Error::UnsafeId {
            kind: "task list id (CLAUDE_CODE_TASK_LIST_ID)",
            id: raw.to_string_lossy().into_owned(),
            reason: "it is not valid UTF-8",
        })?;
        return check_id("task list id (CLAUDE_CODE_TASK_LIST_ID)", raw).map(str::to_string);
    }
    let package = cx
        .store
        .read_capped(&project.root.join("package.json"), PACKAGE_JSON_CAP)?;
    if let Some(bytes) = package {
        let name = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
            .filter(|n| !n.trim().is_empty());
        if let Some(name) = name {
            return Ok(sanitize_id(&name));
        }
    }
    for dir in project.git_root.iter().chain([&project.root]) {
        if let Some(name) = dir.file_name() {
            return Ok(sanitize_id(&name.to_string_lossy()));
        }
    }
    Ok("default".to_string())
}

/// The store of the project's list, whether or not its file exists yet.
pub fn store_for(cx: &Ctx, project: &Project) -> Result<StoreRef> {
    let id = list_id(cx, project)?;
    Ok(StoreRef {
        layout: NAME,
        root: cx.claude_config_dir().join("tasks").join(&id),
        id,
    })
}

/// `tasks.json` of a store.
pub fn tasks_path(store: &StoreRef) -> PathBuf {
    store.root.join(FILE_NAME)
}

/// Loads the list: `None` when there is none; a corrupt file is [`Error::Corrupt`].
pub fn load(cx: &Ctx, store: &StoreRef) -> Result<Option<Value>> {
    cx.store
        .load_or_refuse(&tasks_path(store), NAME, &store.root)
}

pub(crate) fn empty_doc(now: &str) -> Value {
    json!({"tasks": [], "version": FORMAT_VERSION, "last_updated": now})
}

/// The tasks of a document.
pub fn tasks(doc: &Value) -> &[Value] {
    doc.get("tasks")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The tasks of a document, made an array when the document has none.
pub(crate) fn tasks_mut(doc: &mut Value) -> &mut Vec<Value> {
    crate::layouts::json::array_at(crate::layouts::json::ensure_object(doc), "tasks")
}

pub(crate) fn id_of(t: &Value) -> &str {
    str_field(t, "id")
}

pub(crate) fn status_of(t: &Value) -> &str {
    str_field(t, "status")
}

pub(crate) fn deps_of(t: &Value) -> Vec<&str> {
    t.get("dependencies")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(crate) fn origin_of(t: &Value) -> &str {
    t.pointer("/metadata/custom_fields/origin")
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub(crate) fn nodes(doc: &Value) -> Vec<Node<'_>> {
    tasks(doc)
        .iter()
        .map(|t| Node::new(id_of(t), deps_of(t)))
        .collect()
}

pub(crate) fn done_set(doc: &Value) -> HashSet<&str> {
    tasks(doc)
        .iter()
        .filter(|t| status_of(t) == "completed")
        .map(id_of)
        .collect()
}

pub(crate) fn position(doc: &Value, id: &str) -> Option<usize> {
    tasks(doc).iter().position(|t| id_of(t) == id)
}

pub(crate) fn find<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    tasks(doc).iter().find(|t| id_of(t) == id)
}

pub(crate) fn find_mut<'a>(doc: &'a mut Value, id: &str) -> Option<&'a mut Map<String, Value>> {
    tasks_mut(doc)
        .iter_mut()
        .find(|t| id_of(t) == id)
        .and_then(Value::as_object_mut)
}

/// `id "description"` with the description shortened, for messages.
pub(crate) fn label(doc: &Value, id: &str) -> String {
    match find(doc, id).map(|t| str_field(t, "description")) {
        Some(d) if !d.trim().is_empty() => format!("{id} ({})", short(d, 60)),
        _ => id.to_string(),
    }
}

pub(crate) fn short(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    if first.chars().count() <= max && first.len() == s.trim().len() {
        return first.to_string();
    }
    let cut: String = first.chars().take(max).collect();
    format!("{cut}…")
}

/// The dependencies of `id` that are not completed, as `dep (status)`.
pub(crate) fn unmet(doc: &Value, id: &str) -> Vec<String> {
    let Some(t) = find(doc, id) else {
        return Vec::new();
    };
    let done = done_set(doc);
    let node = Node::new(id, deps_of(t));
    graph::pending_deps(&node, &done)
        .into_iter()
        .map(|d| match find(doc, d) {
            Some(dt) => format!("{} [{}]", label(doc, d), status_of(dt)),
            None => format!("{d} [unknown]"),
        })
        .collect()
}

pub(crate) fn custom_fields(task: &mut Map<String, Value>) -> &mut Map<String, Value> {
    object_at(object_at(task, "metadata"), "custom_fields")
}

/// Marks a mirrored task as agent-made with its origin.
pub(crate) fn mark_agent(task: &mut Map<String, Value>, origin: &str) {
    set_str(object_at(task, "metadata"), "source", "agent");
    set_str(custom_fields(task), "origin", origin);
}

/// Sets the status Claude Code reports; `pending` leaves a `blocked` task blocked (blocked is
/// pending with unmet dependencies, which `recompute_blocked` decides).
pub(crate) fn set_mirrored_status(task: &mut Map<String, Value>, status: &str) {
    let cur = task.get("status").and_then(Value::as_str).unwrap_or("");
    if status == "pending" && cur == "blocked" {
        return;
    }
    set_str(task, "status", status);
}
