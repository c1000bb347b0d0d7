//! Where a task list lives (the list id by seed 002's precedence, the store) and reading it:
//! the file's text once, parsed the fast way ([`List::parse`]) or, when that parse cannot vouch
//! for it, as a JSON tree checked against the schema. Plus the small helpers the rooms share
//! (labels for messages, unmet dependencies, a new task in the seed's field order).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::list::List;
use super::model::Status;
use super::scope::Keys;
use super::{FILE_NAME, NAME};
use crate::context::Ctx;
use crate::env::CLAUDE_CODE_TASK_LIST_ID;
use crate::error::{Error, Result};
use crate::layouts::json::{object_at, set_str};
use crate::layouts::StoreRef;
use crate::project::Project;
use crate::store::{check_id, parse_json, sanitize_id, schema};

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
    for dir in project
        .git_root(&cx.store)
        .into_iter()
        .chain([project.root.as_path()])
    {
        if let Some(name) = dir.file_name() {
            return Ok(sanitize_id(&name.to_string_lossy()));
        }
    }
    Ok("default".to_string())
}

/// The store of the project's list, whether or not its file exists yet.
pub fn store_for(cx: &Ctx, project: &Project) -> Result<StoreRef> {
    let id = list_id(cx, project)?;
    let root = cx.claude_config_dir().join("tasks").join(&id);
    Ok(StoreRef::new(NAME, id, root, &project.root))
}

/// `tasks.json` of a store.
pub fn tasks_path(store: &StoreRef) -> PathBuf {
    store.root.join(FILE_NAME)
}

/// Reads the list's text; `None` when there is no file. Bytes that are not UTF-8 make the file
/// corrupt (reported, never rewritten).
pub fn read_text(cx: &Ctx, path: &Path) -> Result<Option<String>> {
    let Some(bytes) = cx.store.read(path)? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| Error::Corrupt {
            path: path.to_path_buf(),
            store: path.parent().unwrap_or(path).display().to_string(),
            details: format!("not valid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        })
}

/// Parses a list's text: the fast way, else (the fast parse cannot vouch for it) as a JSON tree
/// checked against the schema. `None` for no text; a file that does not parse or fails its
/// schema is [`Error::Corrupt`] (`store_root` names the store in the fix).
pub fn load_list<'t>(
    path: &Path,
    store_root: &str,
    text: Option<&'t str>,
) -> Result<Option<List<'t>>> {
    let Some(text) = text else {
        return Ok(None);
    };
    if let Some(list) = List::parse(text) {
        return Ok(Some(list));
    }
    let corrupt = |details: String| Error::Corrupt {
        path: path.to_path_buf(),
        store: store_root.to_string(),
        details,
    };
    let value = parse_json(text.as_bytes()).map_err(corrupt)?;
    match schema::check(NAME, &value)? {
        Ok(()) => Ok(Some(List::from_value(value))),
        Err(issues) => Err(corrupt(format!(
            "does not match schema {NAME}: {}",
            schema::summarize(&issues)
        ))),
    }
}

/// Reads and parses the list of `store` (read-only); `None` when there is none.
pub fn with_list<R>(
    cx: &Ctx,
    store: &StoreRef,
    f: impl FnOnce(Option<&List<'_>>) -> R,
) -> Result<R> {
    let path = tasks_path(store);
    let text = read_text(cx, &path)?;
    let mut list = load_list(&path, &store.root.display().to_string(), text.as_deref())?;
    if let Some(l) = list.as_mut() {
        l.keys = Keys::of(cx);
    }
    Ok(f(list.as_ref()))
}

/// `id (description)` with the description shortened, for messages; the id as the session
/// reading the list knows it ([`List::shown`]: `1`, never `1@defa37fe`, for its own task).
pub(crate) fn label(list: &List<'_>, id: &str) -> String {
    let desc = list
        .find(id)
        .map(|i| list.description(i))
        .unwrap_or_default();
    let name = list.shown_id(id);
    if desc.trim().is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", short(&desc, 60))
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

/// The dependencies of `id` that are not completed, as `dep (description) [status]`.
pub(crate) fn unmet(list: &List<'_>, id: &str) -> Vec<String> {
    let Some(i) = list.find(id) else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    list.view(i)
        .deps
        .iter()
        .filter(|d| seen.insert(&***d))
        .filter_map(|d| match list.find(d) {
            Some(j) if list.view(j).status == Status::Completed => None,
            Some(j) => Some(format!(
                "{} [{}]",
                label(list, d),
                list.view(j).status.as_str()
            )),
            None => Some(format!("{d} [unknown]")),
        })
        .collect()
}

/// A new task with seed 002's fields in the seed's order.
pub(crate) fn new_task(id: &str, description: &str, status: &str, now: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("description".into(), json!(description));
    m.insert("status".into(), json!(status));
    m.insert("created_at".into(), json!(now));
    m.insert("updated_at".into(), json!(now));
    m.insert("assignee".into(), Value::Null);
    m.insert("dependencies".into(), json!([]));
    m
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
/// pending with unmet dependencies, which the pipeline decides).
pub(crate) fn set_mirrored_status(task: &mut Map<String, Value>, status: &str) {
    let cur = task.get("status").and_then(Value::as_str).unwrap_or("");
    if status == "pending" && cur == "blocked" {
        return;
    }
    set_str(task, "status", status);
}
