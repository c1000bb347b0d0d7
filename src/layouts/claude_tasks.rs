//! Layout `claude-tasks` (seed 002): the task list `<claude config>/tasks/{list-id}/tasks.json`,
//! written by `taskhook tasks write` and kept as a durable mirror of Claude Code's own task
//! tools (TodoWrite, TaskCreate, TaskUpdate).
//!
//! Guarantees:
//! - every write takes `.tasks.json.lock`, re-reads under it, applies, recomputes `blocked` for
//!   every task, refreshes `updated_at` only on tasks that changed, and replaces the file
//!   atomically after schema validation; a change that changes nothing writes nothing (and takes
//!   no lock when an unlocked read already shows that);
//! - unknown fields of the file and of each task are kept (the document is handled as JSON);
//! - dependency ids must exist and may not form a cycle; a task is `in_progress` or `completed`
//!   only when all its dependencies are completed, except where the mirror records what Claude
//!   Code already did, which it then says in `additionalContext`;
//! - a corrupt or schema-invalid file is never overwritten: writes are refused with
//!   [`Error::Corrupt`]; `taskhook recover` moves it aside on request;
//! - Claude Code's own `<N>.json` files are read, never written.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::env::CLAUDE_CODE_TASK_LIST_ID;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::hook::input::{Event, Payload, TaskEvent, ToolUse};
use crate::layouts::{Layout, Reaction, StateFile, StoreRef, StoreStatus, Turn, Unit};
use crate::signals::{Signal, SignalKind};
use crate::store::{check_id, lock_path_for, sanitize_id, Loaded};

/// The layout's name, and its schema's.
pub const NAME: &str = "claude-tasks";
/// The format version taskhook writes (seed 002: 2 added dependencies and metadata).
pub const FORMAT_VERSION: u64 = 2;
/// The state file inside the list folder.
pub const FILE_NAME: &str = "tasks.json";
/// The statuses seed 002 allows.
pub const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "blocked"];
/// Prefix of the ids derived from TodoWrite contents.
pub const TODO_ID_PREFIX: &str = "todo-";

/// The `claude-tasks` layout.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeTasks;

/// The registered instance.
pub static LAYOUT: ClaudeTasks = ClaudeTasks;

// ---- where the list lives ---------------------------------------------------------------

/// The list id (seed 002's precedence): `CLAUDE_CODE_TASK_LIST_ID` (checked: a hostile value is
/// an error), else the project's name (`name` in its `package.json`, else the folder holding
/// `.git`), else the project folder's name, else `default`. Derived names are made safe.
pub fn list_id(cx: &Ctx, project: &Path) -> Result<String> {
    if let Some(raw) = cx.env.get_os(CLAUDE_CODE_TASK_LIST_ID) {
        let raw = raw.to_str().ok_or_else(|| Error::UnsafeId {
            kind: "task list id (CLAUDE_CODE_TASK_LIST_ID)",
            id: raw.to_string_lossy().into_owned(),
            reason: "it is not valid UTF-8",
        })?;
        return check_id("task list id (CLAUDE_CODE_TASK_LIST_ID)", raw).map(str::to_string);
    }
    if let Some(bytes) = cx.store.read(&project.join("package.json"))? {
        let name = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
            .filter(|n| !n.trim().is_empty());
        if let Some(name) = name {
            return Ok(sanitize_id(&name));
        }
    }
    let git_root = project
        .ancestors()
        .filter(|d| *d != cx.home)
        .find(|d| cx.store.exists(&d.join(".git")));
    for dir in git_root.into_iter().chain([project]) {
        if let Some(name) = dir.file_name() {
            return Ok(sanitize_id(&name.to_string_lossy()));
        }
    }
    Ok("default".to_string())
}

/// The store of the project's list, whether or not its file exists yet.
pub fn store_for(cx: &Ctx, project: &Path) -> Result<StoreRef> {
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

// ---- reading the document ---------------------------------------------------------------

/// Loads the list: `None` when there is none; a corrupt file is [`Error::Corrupt`].
pub fn load(cx: &Ctx, store: &StoreRef) -> Result<Option<Value>> {
    cx.store
        .load_or_refuse(&tasks_path(store), NAME, &store.root)
}

fn empty_doc(now: &str) -> Value {
    json!({"tasks": [], "version": FORMAT_VERSION, "last_updated": now})
}

/// The tasks of a document.
pub fn tasks(doc: &Value) -> &[Value] {
    doc.get("tasks")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn tasks_mut(doc: &mut Value) -> &mut Vec<Value> {
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let slot = &mut doc["tasks"];
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    match slot {
        Value::Array(a) => a,
        _ => unreachable!("set to an array above"),
    }
}

fn str_field<'a>(t: &'a Value, key: &str) -> &'a str {
    t.get(key).and_then(Value::as_str).unwrap_or("")
}

fn id_of(t: &Value) -> &str {
    str_field(t, "id")
}

fn status_of(t: &Value) -> &str {
    str_field(t, "status")
}

fn deps_of(t: &Value) -> Vec<&str> {
    t.get("dependencies")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn origin_of(t: &Value) -> &str {
    t.pointer("/metadata/custom_fields/origin")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn nodes(doc: &Value) -> Vec<Node<'_>> {
    tasks(doc)
        .iter()
        .map(|t| Node::new(id_of(t), deps_of(t)))
        .collect()
}

fn done_set(doc: &Value) -> HashSet<&str> {
    tasks(doc)
        .iter()
        .filter(|t| status_of(t) == "completed")
        .map(id_of)
        .collect()
}

fn position(doc: &Value, id: &str) -> Option<usize> {
    tasks(doc).iter().position(|t| id_of(t) == id)
}

fn find<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    tasks(doc).iter().find(|t| id_of(t) == id)
}

fn find_mut<'a>(doc: &'a mut Value, id: &str) -> Option<&'a mut Map<String, Value>> {
    tasks_mut(doc)
        .iter_mut()
        .find(|t| id_of(t) == id)
        .and_then(Value::as_object_mut)
}

/// `id "description"` with the description shortened, for messages.
fn label(doc: &Value, id: &str) -> String {
    match find(doc, id).map(|t| str_field(t, "description")) {
        Some(d) if !d.trim().is_empty() => format!("{id} ({})", short(d, 60)),
        _ => id.to_string(),
    }
}

fn short(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    if first.chars().count() <= max && first.len() == s.trim().len() {
        return first.to_string();
    }
    let cut: String = first.chars().take(max).collect();
    format!("{cut}…")
}

/// The dependencies of `id` that are not completed, as `dep (status)`.
fn unmet(doc: &Value, id: &str) -> Vec<String> {
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

// ---- the write pipeline -----------------------------------------------------------------

/// What a write did.
#[derive(Debug, Clone)]
pub struct Applied<T> {
    /// What the change function returned.
    pub value: T,
    /// The document after the change.
    pub doc: Value,
    /// Whether the file changed.
    pub changed: bool,
    /// Tasks this change unblocked (a completion made all their dependencies completed).
    pub unblocked: Vec<String>,
}

/// Applies `change` to the list under its lock: re-reads the file under the lock, runs
/// `change(doc, now)`, checks the dependency graph, recomputes `blocked`, stamps `updated_at` on
/// the tasks that changed and `last_updated` when anything did, validates and writes. `change`
/// may run twice (an unlocked dry pass first: when it changes nothing, no lock is taken).
pub fn update<T>(
    cx: &Ctx,
    store: &StoreRef,
    change: impl Fn(&mut Value, &str) -> Result<T>,
) -> Result<Applied<T>> {
    let path = tasks_path(store);
    let now = cx.store.clock().stamp();
    let attempt = || -> Result<Applied<T>> {
        let before = match load(cx, store)? {
            Some(doc) => {
                check_version(&path, &doc)?;
                doc
            }
            None => empty_doc(&now),
        };
        let mut doc = before.clone();
        let value = change(&mut doc, &now)?;
        check_graph(&before, &doc)?;
        let changed = finalize(&before, &mut doc, &now);
        let done_before = done_set(&before);
        let done_after = done_set(&doc);
        let unblocked = graph::unblocked(&nodes(&doc), &done_before, &done_after)
            .into_iter()
            .map(str::to_string)
            .collect();
        Ok(Applied {
            value,
            doc,
            changed,
            unblocked,
        })
    };
    match attempt() {
        Ok(dry) if !dry.changed => return Ok(dry),
        // Only `taskhook recover` changes a corrupt file: no need to lock to learn it again.
        Err(e @ Error::Corrupt { .. }) => return Err(e),
        // A refused first write creates nothing, not even the folder and its lock file.
        Err(e) if !cx.store.exists(&path) => return Err(e),
        _ => {}
    }
    cx.store.with_lock(&lock_path_for(&path), || {
        let applied = attempt()?;
        if applied.changed {
            cx.store.replace_json(&path, NAME, &applied.doc)?;
        }
        Ok(applied)
    })
}

fn check_version(path: &Path, doc: &Value) -> Result<()> {
    match doc.get("version").and_then(Value::as_u64) {
        Some(v) if v > FORMAT_VERSION => Err(Error::Rule(format!(
            "`{}` has format version {v}; this taskhook writes version {FORMAT_VERSION} and will \
             not rewrite it (upgrade taskhook)",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses graph problems the change introduced (problems already in the file are reported by
/// `status`, not blamed on an unrelated write).
fn check_graph(before: &Value, after: &Value) -> Result<()> {
    let (nb, na) = (nodes(before), nodes(after));
    let old_dups = graph::duplicate_ids(&nb);
    if let Some(d) = graph::duplicate_ids(&na)
        .into_iter()
        .find(|d| !old_dups.contains(d))
    {
        return Err(Error::Rule(format!("two tasks would have the id {d:?}")));
    }
    let old_unknown = graph::unknown_deps(&nb);
    if let Some((t, d)) = graph::unknown_deps(&na)
        .into_iter()
        .find(|p| !old_unknown.contains(p))
    {
        return Err(Error::Rule(format!(
            "task {t:?} depends on {d:?}, which is not a task of this list; nothing was written"
        )));
    }
    if graph::find_cycle(&nb).is_none() {
        if let Some(cycle) = graph::find_cycle(&na) {
            return Err(Error::Rule(format!(
                "dependency cycle {}; nothing was written",
                graph::describe_cycle(&cycle)
            )));
        }
    }
    Ok(())
}

/// Recomputes `blocked`, stamps changed tasks and the root; returns whether anything changed.
fn finalize(before: &Value, doc: &mut Value, now: &str) -> bool {
    recompute_blocked(doc);
    let old: HashMap<&str, &Value> = tasks(before).iter().map(|t| (id_of(t), t)).collect();
    for t in tasks_mut(doc).iter_mut() {
        let differs = old.get(id_of(t)).is_none_or(|o| *o != t);
        if differs {
            if let Some(m) = t.as_object_mut() {
                m.insert("updated_at".into(), Value::String(now.to_string()));
                if !m.contains_key("created_at") {
                    m.insert("created_at".into(), Value::String(now.to_string()));
                }
            }
        }
    }
    if before == doc {
        return false;
    }
    if doc.get("version").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        doc["version"] = json!(FORMAT_VERSION);
    }
    doc["last_updated"] = Value::String(now.to_string());
    true
}

/// `pending` with a dependency not completed becomes `blocked`; `blocked` with every dependency
/// completed returns to `pending`. `in_progress` and `completed` are never changed here.
fn recompute_blocked(doc: &mut Value) {
    let done: HashSet<String> = done_set(doc).into_iter().map(str::to_string).collect();
    for t in tasks_mut(doc).iter_mut() {
        let all_done = deps_of(t).iter().all(|d| done.contains(*d));
        let new = match (status_of(t), all_done) {
            ("pending", false) => "blocked",
            ("blocked", true) => "pending",
            _ => continue,
        };
        t["status"] = Value::String(new.into());
    }
}

/// Removes a task and every dependency on it.
fn remove_task(doc: &mut Value, id: &str) -> bool {
    let list = tasks_mut(doc);
    let len = list.len();
    list.retain(|t| id_of(t) != id);
    let removed = list.len() != len;
    if removed {
        for t in list.iter_mut() {
            if let Some(deps) = t.get_mut("dependencies").and_then(Value::as_array_mut) {
                deps.retain(|d| d.as_str() != Some(id));
            }
        }
    }
    removed
}

/// A new task with seed 002's fields in the seed's order.
fn new_task(id: &str, description: &str, status: &str, now: &str) -> Map<String, Value> {
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

/// `metadata.custom_fields` of a task, created when missing.
fn custom_fields(task: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let meta = object_entry(task, "metadata");
    object_entry(meta, "custom_fields")
}

fn object_entry<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = m
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(o) => o,
        _ => unreachable!("set to an object above"),
    }
}

/// Merges `patch` into `target`: a `null` value deletes the key.
fn merge_keys(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            target.shift_remove(k);
        } else {
            target.insert(k.clone(), v.clone());
        }
    }
}

fn set_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    m.insert(key.to_string(), Value::String(v.to_string()));
}

/// Marks a mirrored task as agent-made with its origin.
fn mark_agent(task: &mut Map<String, Value>, origin: &str) {
    set_str(object_entry(task, "metadata"), "source", "agent");
    set_str(custom_fields(task), "origin", origin);
}

/// Sets the status Claude Code reports; `pending` leaves a `blocked` task blocked (blocked is
/// pending with unmet dependencies, which `recompute_blocked` decides).
fn set_mirrored_status(task: &mut Map<String, Value>, status: &str) {
    let cur = task.get("status").and_then(Value::as_str).unwrap_or("");
    if status == "pending" && cur == "blocked" {
        return;
    }
    set_str(task, "status", status);
}

// ---- taskhook tasks write / read ------------------------------------------------------------

/// Seed 002's TodoWrite parameters (plus `parent_id`), as `taskhook tasks write` takes them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteParams {
    pub id: Option<String>,
    pub description: Option<String>,
    pub status: Option<String>,
    pub dependencies: Option<Vec<String>>,
    /// `Some(None)` is an explicit `null`: clear the assignee.
    #[serde(default, deserialize_with = "present")]
    pub assignee: Option<Option<String>>,
    pub metadata: Option<Map<String, Value>>,
    pub parent_id: Option<String>,
}

fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

fn check_status(s: &str) -> Result<&str> {
    if STATUSES.contains(&s) {
        Ok(s)
    } else {
        Err(Error::BadInput(format!(
            "invalid status {s:?}: expected one of {}",
            STATUSES.join(", ")
        )))
    }
}

/// Creates or updates one task (seed 002's TodoWrite); returns the task as stored.
pub fn write_task(cx: &Ctx, store: &StoreRef, params: &WriteParams) -> Result<Applied<Value>> {
    if let Some(s) = &params.status {
        check_status(s)?;
    }
    let id = match &params.id {
        Some(id) if id.trim().is_empty() => {
            return Err(Error::BadInput("task id must not be empty".into()))
        }
        Some(id) => id.clone(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let path = tasks_path(store);
    let applied = update(cx, store, |doc, now| {
        let exists = position(doc, &id).is_some();
        if !exists {
            let Some(desc) = &params.description else {
                return Err(Error::BadInput(format!(
                    "no task {id:?} in `{}`: a new task needs a description",
                    path.display()
                )));
            };
            let status = params.status.as_deref().unwrap_or("pending");
            tasks_mut(doc).push(Value::Object(new_task(&id, desc, status, now)));
        }
        let mut deps = None;
        if let Some(given) = &params.dependencies {
            let mut list: Vec<String> = Vec::new();
            for d in given {
                if d == &id {
                    return Err(Error::Rule(format!(
                        "dependency cycle {id} → {id}: a task cannot depend on itself; nothing was written"
                    )));
                }
                if position(doc, d).is_none() {
                    return Err(Error::Rule(format!(
                        "unknown dependency {d:?} of task {id:?}: no task with that id in `{}`; \
                         nothing was written",
                        path.display()
                    )));
                }
                if !list.contains(d) {
                    list.push(d.clone());
                }
            }
            deps = Some(list);
        }
        if let Some(p) = &params.parent_id {
            if p == &id || position(doc, p).is_none() {
                return Err(Error::Rule(format!(
                    "parent_id {p:?} of task {id:?} is not another task of this list; nothing was written"
                )));
            }
        }
        let task = find_mut(doc, &id).ok_or_else(|| Error::NotFound(format!("no task {id:?}")))?;
        if exists {
            if let Some(d) = &params.description {
                set_str(task, "description", d);
            }
            if let Some(s) = &params.status {
                set_str(task, "status", s);
            }
        }
        if let Some(list) = deps {
            task.insert("dependencies".into(), json!(list));
        }
        match &params.assignee {
            Some(Some(a)) => set_str(task, "assignee", a),
            Some(None) => {
                task.insert("assignee".into(), Value::Null);
            }
            None => {}
        }
        if let Some(p) = &params.parent_id {
            set_str(task, "parent_id", p);
        }
        if let Some(meta) = &params.metadata {
            merge_keys(object_entry(task, "metadata"), meta);
        }
        let status = task
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // Checked when this write sets the status or the dependencies: a task the mirror
        // recorded as started early can still have its description edited.
        let rule_applies = params.status.is_some() || params.dependencies.is_some();
        if rule_applies && matches!(status.as_str(), "in_progress" | "completed") {
            let waiting = unmet(doc, &id);
            if !waiting.is_empty() {
                return Err(Error::Rule(format!(
                    "task {id:?} cannot be {status}: its dependencies are not completed: {}; \
                     nothing was written",
                    waiting.join(", ")
                )));
            }
        }
        Ok(())
    })?;
    let task = find(&applied.doc, &id).cloned().unwrap_or(Value::Null);
    Ok(Applied {
        value: task,
        doc: applied.doc,
        changed: applied.changed,
        unblocked: applied.unblocked,
    })
}

/// Seed 002's TodoRead parameters.
#[derive(Debug, Clone, Default)]
pub struct ReadParams {
    pub status: Option<String>,
    pub assignee: Option<String>,
    pub include_completed: bool,
}

/// Seed 002's TodoRead: `{tasks, count, pending_count, in_progress_count, completed_count,
/// blocked_count}`. Completed tasks are left out unless asked for (`include_completed`, or a
/// `status` filter of `completed`); `count` is the number returned, the `*_count`s cover the
/// whole list.
pub fn read_tasks(cx: &Ctx, store: &StoreRef, params: &ReadParams) -> Result<Value> {
    if let Some(s) = &params.status {
        check_status(s)?;
    }
    let doc = load(cx, store)?.unwrap_or_else(|| empty_doc(""));
    let all = tasks(&doc);
    let count_of = |s: &str| all.iter().filter(|t| status_of(t) == s).count();
    let picked: Vec<Value> = all
        .iter()
        .filter(|t| params.status.as_deref().is_none_or(|s| status_of(t) == s))
        .filter(|t| {
            params
                .assignee
                .as_deref()
                .is_none_or(|a| t.get("assignee").and_then(Value::as_str) == Some(a))
        })
        .filter(|t| {
            params.include_completed
                || params.status.as_deref() == Some("completed")
                || status_of(t) != "completed"
        })
        .cloned()
        .collect();
    let count = picked.len();
    let mut out = Map::new();
    out.insert("tasks".into(), Value::Array(picked));
    out.insert("count".into(), json!(count));
    for s in ["pending", "in_progress", "completed", "blocked"] {
        out.insert(format!("{s}_count"), json!(count_of(s)));
    }
    Ok(Value::Object(out))
}

// ---- the mirror -------------------------------------------------------------------------

/// The task id of a TodoWrite item: `todo-` and the 16 hex digits of the 64-bit FNV-1a hash of
/// its `content` (UTF-8 bytes, as given). The same text always maps to the same id, across
/// calls, processes and versions; a second identical item in one list gets `-2`, `-3`, ….
pub fn todo_id(content: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in content.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{TODO_ID_PREFIX}{h:016x}")
}

fn agent_scope(payload: &Payload) -> Option<&str> {
    payload.common.agent_id.as_deref().filter(|a| !a.is_empty())
}

/// Mirrors TodoWrite's full list: one task per todo, todos gone from the list removed (only
/// TodoWrite's own tasks of the same agent: the main agent and each subagent keep their lists).
fn mirror_todos(cx: &Ctx, store: &StoreRef, payload: &Payload, t: &ToolUse) -> Result<Reaction> {
    let Some(todos) = t.tool_input.get("todos").and_then(Value::as_array) else {
        return Ok(Reaction::default());
    };
    let scope = agent_scope(payload);
    let applied = update(cx, store, |doc, now| {
        let before = doc.clone();
        let mut seen: Vec<String> = Vec::new();
        for todo in todos {
            let content = str_field(todo, "content");
            if content.trim().is_empty() {
                continue;
            }
            let status = match str_field(todo, "status") {
                s @ ("pending" | "in_progress" | "completed") => s,
                _ => "pending",
            };
            let base = todo_id(content);
            let mut id = base.clone();
            let mut n = 1;
            while seen.contains(&id) {
                n += 1;
                id = format!("{base}-{n}");
            }
            seen.push(id.clone());
            if position(doc, &id).is_none() {
                tasks_mut(doc).push(Value::Object(new_task(&id, content, status, now)));
            }
            let Some(task) = find_mut(doc, &id) else {
                continue;
            };
            set_str(task, "description", content);
            set_mirrored_status(task, status);
            mark_agent(task, "TodoWrite");
            let cf = custom_fields(task);
            match todo.get("activeForm").and_then(Value::as_str) {
                Some(a) => set_str(cf, "activeForm", a),
                None => {
                    cf.shift_remove("activeForm");
                }
            }
            match scope {
                Some(a) => set_str(cf, "agent_id", a),
                None => {
                    cf.shift_remove("agent_id");
                }
            }
        }
        let gone: Vec<String> = tasks(doc)
            .iter()
            .filter(|t| origin_of(t) == "TodoWrite")
            .filter(|t| {
                t.pointer("/metadata/custom_fields/agent_id")
                    .and_then(Value::as_str)
                    == scope
            })
            .map(|t| id_of(t).to_string())
            .filter(|id| !seen.contains(id))
            .collect();
        for id in &gone {
            remove_task(doc, id);
        }
        Ok(early_starts(&before, doc, &seen))
    })?;
    Ok(mirror_reaction(applied))
}

/// Notes for tasks the mirror recorded as started or completed before their dependencies.
fn early_starts(before: &Value, doc: &Value, ids: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    for id in ids {
        let Some(t) = find(doc, id) else { continue };
        let status = status_of(t);
        if !matches!(status, "in_progress" | "completed") {
            continue;
        }
        if find(before, id).is_some_and(|b| status_of(b) == status) {
            continue;
        }
        let waiting = unmet(doc, id);
        if !waiting.is_empty() {
            notes.push(format!(
                "taskhook: task {} is {status} although its dependencies are not completed ({}); \
                 the task list mirror records it as Claude Code did.",
                label(doc, id),
                waiting.join(", ")
            ));
        }
    }
    notes
}

fn mirror_reaction(applied: Applied<Vec<String>>) -> Reaction {
    let mut r = Reaction {
        context: applied.value,
        ..Default::default()
    };
    if !applied.unblocked.is_empty() {
        let ready: Vec<String> = applied
            .unblocked
            .iter()
            .map(|id| label(&applied.doc, id))
            .collect();
        r.context.push(format!(
            "taskhook: now ready (all dependencies completed): {}.",
            ready.join(", ")
        ));
    }
    r
}

/// Joins a Claude Code task's subject and description into seed 002's one `description`: the
/// subject, a blank line, the description; just one of them when the other is empty or equal.
pub fn join_subject(subject: &str, body: &str) -> String {
    if body.trim().is_empty() || body == subject {
        subject.to_string()
    } else if subject.trim().is_empty() {
        body.to_string()
    } else {
        format!("{subject}\n\n{body}")
    }
}

/// The description part of a joined description (inverse of [`join_subject`]).
fn body_of(description: &str, subject: &str) -> String {
    if description == subject {
        return String::new();
    }
    description
        .strip_prefix(&format!("{subject}\n\n"))
        .unwrap_or(description)
        .to_string()
}

/// Claude Code's own folder for this session: `<config>/tasks/<CLAUDE_CODE_TASK_LIST_ID or
/// session id>/` (read only).
fn claude_own_dir(cx: &Ctx, payload: &Payload) -> Option<PathBuf> {
    let id = match cx.env.get(CLAUDE_CODE_TASK_LIST_ID) {
        Some(id) => id,
        None => payload.common.session_id.as_deref()?,
    };
    let id = check_id("session id", id).ok()?;
    Some(cx.claude_config_dir().join("tasks").join(id))
}

/// Reads Claude Code's own `<N>.json` for a task id, when it is there and parses.
fn claude_own_task(cx: &Ctx, dir: Option<&Path>, id: &str) -> Option<Value> {
    let dir = dir?;
    check_id("task id", id).ok()?;
    let bytes = cx.store.read(&dir.join(format!("{id}.json"))).ok()??;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// A mirrored task for a Claude Code task the mirror has not seen created: from Claude Code's
/// own file when it is readable, else a placeholder.
fn imported_task(
    id: &str,
    own: Option<&Value>,
    session: Option<&str>,
    now: &str,
) -> Map<String, Value> {
    let subject = own.map_or("", |o| str_field(o, "subject"));
    let body = own.map_or("", |o| str_field(o, "description"));
    let description = match join_subject(subject, body) {
        d if d.is_empty() => format!("Claude Code task #{id}"),
        d => d,
    };
    let status = own
        .map(|o| str_field(o, "status"))
        .filter(|s| matches!(*s, "in_progress" | "completed"))
        .unwrap_or("pending");
    let mut task = new_task(id, &description, status, now);
    if let Some(owner) = own
        .and_then(|o| o.get("owner"))
        .and_then(Value::as_str)
        .filter(|o| !o.is_empty())
    {
        set_str(&mut task, "assignee", owner);
    }
    mark_agent(&mut task, "TaskCreate");
    let cf = custom_fields(&mut task);
    if !subject.is_empty() {
        set_str(cf, "subject", subject);
    }
    if let Some(sid) = session {
        set_str(cf, "session_id", sid);
    }
    if let Some(a) = own
        .and_then(|o| o.get("activeForm"))
        .and_then(Value::as_str)
    {
        set_str(cf, "activeForm", a);
    }
    if let Some(m) = own
        .and_then(|o| o.get("metadata"))
        .filter(|m| m.as_object().is_some_and(|m| !m.is_empty()))
    {
        cf.insert("metadata".into(), m.clone());
    }
    task
}

/// Adds the dependency `task → dep` unless it is there or would close a cycle (then a note).
fn add_dependency(doc: &mut Value, task: &str, dep: &str, notes: &mut Vec<String>) {
    if find(doc, task).is_none_or(|t| deps_of(t).contains(&dep)) {
        return;
    }
    let mut trial = doc.clone();
    if let Some(deps) = find_mut(&mut trial, task).map(|t| object_entry_array(t, "dependencies")) {
        deps.push(json!(dep));
    }
    if let Some(cycle) = graph::find_cycle(&nodes(&trial)) {
        notes.push(format!(
            "taskhook: the task list mirror left out the dependency of {task} on {dep}: it would \
             close the cycle {}.",
            graph::describe_cycle(&cycle)
        ));
        return;
    }
    *doc = trial;
}

fn object_entry_array<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Vec<Value> {
    let slot = m
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    match slot {
        Value::Array(a) => a,
        _ => unreachable!("set to an array above"),
    }
}

fn string_list(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Mirrors TaskCreate / TaskUpdate, keyed by Claude Code's task id.
fn mirror_task_tool(
    cx: &Ctx,
    store: &StoreRef,
    payload: &Payload,
    t: &ToolUse,
) -> Result<Reaction> {
    let input = &t.tool_input;
    let resp = &t.tool_response;
    let create = t.tool_name == "TaskCreate";
    let id = if create {
        resp.pointer("/task/id").and_then(Value::as_str)
    } else {
        input
            .get("taskId")
            .and_then(Value::as_str)
            .or_else(|| resp.get("taskId").and_then(Value::as_str))
    };
    let Some(id) = id.filter(|i| !i.is_empty()) else {
        return Ok(Reaction::default());
    };
    if !create && resp.get("success").and_then(Value::as_bool) == Some(false) {
        return Ok(Reaction::default());
    }
    let status = input.get("status").and_then(Value::as_str);
    let session = payload
        .common
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty());
    let blocked_by = string_list(input, "addBlockedBy");
    let blocks = string_list(input, "addBlocks");
    // Claude Code's own files for every task this call names, read once, before the lock.
    let own_dir = claude_own_dir(cx, payload);
    let mut own: HashMap<String, Value> = HashMap::new();
    if !create && status != Some("deleted") {
        for other in std::iter::once(id)
            .chain(blocked_by.iter().map(String::as_str))
            .chain(blocks.iter().map(String::as_str))
        {
            if let Some(v) = claude_own_task(cx, own_dir.as_deref(), other) {
                own.insert(other.to_string(), v);
            }
        }
    }
    let applied = update(cx, store, |doc, now| {
        let before = doc.clone();
        let mut notes = Vec::new();
        // Claude Code's ids are "1", "2", …: a task of the list with such an id that another
        // writer made is left alone.
        if find(doc, id).is_some_and(|t| origin_of(t) != "TaskCreate") {
            notes.push(format!(
                "taskhook: Claude Code task #{id} was not mirrored: the task list has a task \
                 {id:?} that did not come from TaskCreate."
            ));
            return Ok(notes);
        }
        if status == Some("deleted") {
            remove_task(doc, id);
            return Ok(notes);
        }
        if create {
            let mut same_session = false;
            if let Some(existing) = find(doc, id) {
                same_session = session.is_some()
                    && existing
                        .pointer("/metadata/custom_fields/session_id")
                        .and_then(Value::as_str)
                        == session;
            }
            let subject = input
                .get("subject")
                .or_else(|| resp.pointer("/task/subject"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let body = input
                .get("description")
                .or_else(|| resp.pointer("/task/description"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut task = new_task(id, &join_subject(subject, body), "pending", now);
            mark_agent(&mut task, "TaskCreate");
            let cf = custom_fields(&mut task);
            set_str(cf, "subject", subject);
            if let Some(sid) = session {
                set_str(cf, "session_id", sid);
            }
            if let Some(a) = input.get("activeForm").and_then(Value::as_str) {
                set_str(cf, "activeForm", a);
            }
            if let Some(m) = input.get("metadata").and_then(Value::as_object) {
                let mut kept = Map::new();
                merge_keys(&mut kept, m);
                if !kept.is_empty() {
                    cf.insert("metadata".into(), Value::Object(kept));
                }
            }
            match (position(doc, id), same_session) {
                // The same call seen again (a replay): refresh what TaskCreate set, keep the rest.
                (Some(_), true) => {
                    if let Some(old) = find_mut(doc, id) {
                        set_str(old, "description", &join_subject(subject, body));
                        let cf = custom_fields(old);
                        set_str(cf, "subject", subject);
                        if let Some(a) = input.get("activeForm").and_then(Value::as_str) {
                            set_str(cf, "activeForm", a);
                        }
                    }
                }
                // Claude Code numbers tasks per session: a task of an earlier session with the
                // same number is replaced in place.
                (Some(i), false) => tasks_mut(doc)[i] = Value::Object(task),
                (None, _) => tasks_mut(doc).push(Value::Object(task)),
            }
            return Ok(notes);
        }
        for other in std::iter::once(id)
            .chain(blocked_by.iter().map(String::as_str))
            .chain(blocks.iter().map(String::as_str))
        {
            if position(doc, other).is_none() {
                let task = imported_task(other, own.get(other), session, now);
                tasks_mut(doc).push(Value::Object(task));
            }
        }
        let Some(task) = find_mut(doc, id) else {
            return Ok(notes);
        };
        let old_desc = task
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let old_subject = task
            .get("metadata")
            .and_then(|m| m.pointer("/custom_fields/subject"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let new_subject = input.get("subject").and_then(Value::as_str);
        let new_body = input.get("description").and_then(Value::as_str);
        if new_subject.is_some() || new_body.is_some() {
            let subject = new_subject
                .map(str::to_string)
                .or_else(|| old_subject.clone())
                .unwrap_or_default();
            let body = match new_body {
                Some(b) => b.to_string(),
                None => match &old_subject {
                    Some(s) => body_of(&old_desc, s),
                    None => old_desc.clone(),
                },
            };
            set_str(task, "description", &join_subject(&subject, &body));
            if let Some(s) = new_subject {
                set_str(custom_fields(task), "subject", s);
            }
        }
        if let Some(a) = input.get("activeForm").and_then(Value::as_str) {
            set_str(custom_fields(task), "activeForm", a);
        }
        if let Some(owner) = input.get("owner").and_then(Value::as_str) {
            if owner.is_empty() {
                task.insert("assignee".into(), Value::Null);
            } else {
                set_str(task, "assignee", owner);
            }
        }
        if let Some(m) = input.get("metadata").and_then(Value::as_object) {
            let cf = custom_fields(task);
            let meta = object_entry(cf, "metadata");
            merge_keys(meta, m);
            if meta.is_empty() {
                cf.shift_remove("metadata");
            }
        }
        if let Some(s @ ("pending" | "in_progress" | "completed")) = status {
            set_mirrored_status(task, s);
        }
        for dep in &blocked_by {
            add_dependency(doc, id, dep, &mut notes);
        }
        for other in &blocks {
            add_dependency(doc, other, id, &mut notes);
        }
        notes.extend(early_starts(&before, doc, &[id.to_string()]));
        Ok(notes)
    })?;
    Ok(mirror_reaction(applied))
}

/// Refuses (exit 2) completing a mirrored task whose dependencies are not completed.
fn task_completed(cx: &Ctx, store: &StoreRef, e: &TaskEvent) -> Result<Reaction> {
    let Some(id) = e.task_id.as_deref() else {
        return Ok(Reaction::default());
    };
    let Some(doc) = load(cx, store)? else {
        return Ok(Reaction::default());
    };
    if find(&doc, id).is_none() {
        return Ok(Reaction::default());
    }
    let waiting = unmet(&doc, id);
    if waiting.is_empty() {
        return Ok(Reaction::default());
    }
    Ok(Reaction {
        refuse: Some(format!(
            "Task {} cannot be completed yet: its dependencies are not completed: {}. Complete \
             them first (task list `{}`).",
            label(&doc, id),
            waiting.join(", "),
            tasks_path(store).display()
        )),
        ..Default::default()
    })
}

/// Completes `ids` in the list under its lock (seed 002's SubagentStop `tasks_completed`), and
/// returns the SubagentStop reaction: `tasks_to_update` naming every task of the list among
/// `ids` (never `block`, never `context`); unknown ids go to `systemMessage`.
pub fn complete_tasks(cx: &Ctx, store: &StoreRef, ids: &[String]) -> Result<Reaction> {
    complete(cx, store, ids).map(|(r, _)| r)
}

/// [`complete_tasks`], also returning the tasks the completion unblocked (as labels).
fn complete(cx: &Ctx, store: &StoreRef, ids: &[String]) -> Result<(Reaction, Vec<String>)> {
    let applied = update(cx, store, |doc, _now| {
        let mut found = Vec::new();
        let mut unknown = Vec::new();
        for id in ids {
            match find_mut(doc, id) {
                Some(t) => {
                    set_str(t, "status", "completed");
                    if !found.contains(id) {
                        found.push(id.clone());
                    }
                }
                None => unknown.push(id.clone()),
            }
        }
        Ok((found, unknown))
    })?;
    let (found, unknown) = applied.value;
    let mut r = Reaction::default();
    if !found.is_empty() {
        let list: Vec<Value> = found
            .iter()
            .map(|id| json!({"task_id": id, "status": "completed"}))
            .collect();
        r.extra.insert("tasks_to_update".into(), Value::Array(list));
    }
    if !unknown.is_empty() {
        r.system.push(format!(
            "taskhook: tasks_completed names tasks that are not in task list {}: {}",
            store.id,
            unknown.join(", ")
        ));
    }
    let ready = applied
        .unblocked
        .iter()
        .map(|id| label(&applied.doc, id))
        .collect();
    Ok((r, ready))
}

// ---- summaries --------------------------------------------------------------------------

/// Counts, current, ready and blocked tasks of a valid document (ids, in list order).
struct Summary {
    counts: std::collections::BTreeMap<String, usize>,
    current: Vec<String>,
    ready: Vec<String>,
    /// Blocked tasks with the dependencies they wait for.
    blocked: Vec<(String, Vec<String>)>,
    problems: Vec<String>,
}

impl Summary {
    fn blocked_lines(&self) -> Vec<String> {
        self.blocked
            .iter()
            .map(|(id, waits)| format!("{id} (waits for {})", waits.join(", ")))
            .collect()
    }
}

fn summarize(doc: &Value) -> Summary {
    let mut counts = std::collections::BTreeMap::new();
    for t in tasks(doc) {
        *counts.entry(status_of(t).to_string()).or_insert(0) += 1;
    }
    let ns = nodes(doc);
    let done = done_set(doc);
    let current = tasks(doc)
        .iter()
        .filter(|t| status_of(t) == "in_progress")
        .map(|t| id_of(t).to_string())
        .collect();
    let ready = graph::ready(&ns, &done)
        .into_iter()
        .filter(|id| find(doc, id).is_some_and(|t| status_of(t) == "pending"))
        .map(str::to_string)
        .collect();
    let blocked = tasks(doc)
        .iter()
        .filter(|t| status_of(t) == "blocked")
        .map(|t| {
            let node = Node::new(id_of(t), deps_of(t));
            let waits = graph::pending_deps(&node, &done)
                .into_iter()
                .map(str::to_string)
                .collect();
            (id_of(t).to_string(), waits)
        })
        .collect();
    let mut problems = Vec::new();
    for d in graph::duplicate_ids(&ns) {
        problems.push(format!("several tasks have the id {d:?}"));
    }
    for (t, d) in graph::unknown_deps(&ns) {
        problems.push(format!("task {t:?} depends on unknown task {d:?}"));
    }
    if let Some(c) = graph::find_cycle(&ns) {
        problems.push(format!("dependency cycle {}", graph::describe_cycle(&c)));
    }
    Summary {
        counts,
        current,
        ready,
        blocked,
        problems,
    }
}

/// Lines describing Claude Code's own `<N>.json` files in `dir` (read only).
fn claude_own_lines(cx: &Ctx, dir: &Path) -> Result<Vec<String>> {
    let mut files: Vec<(u64, String)> = cx
        .store
        .list_dir(dir)?
        .into_iter()
        .filter(|e| !e.is_dir)
        .filter_map(|e| {
            let n = e.name.strip_suffix(".json")?.parse::<u64>().ok()?;
            Some((n, e.name))
        })
        .collect();
    if files.is_empty() {
        return Ok(Vec::new());
    }
    files.sort();
    let mut lines = vec![format!(
        "Claude Code's own tasks (read-only) in {}:",
        dir.display()
    )];
    for (n, name) in files {
        let v = cx
            .store
            .read(&dir.join(&name))?
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        let Some(v) = v else {
            lines.push(format!("  #{n} (unreadable)"));
            continue;
        };
        let mut line = format!(
            "  #{n} [{}] {}",
            str_field(&v, "status"),
            str_field(&v, "subject")
        );
        if let Some(o) = v.get("owner").and_then(Value::as_str) {
            line.push_str(&format!(" ({o})"));
        }
        let by = string_list(&v, "blockedBy");
        if !by.is_empty() {
            let by: Vec<String> = by.iter().map(|b| format!("#{b}")).collect();
            line.push_str(&format!(" [blocked by {}]", by.join(", ")));
        }
        lines.push(line);
    }
    Ok(lines)
}

fn has_claude_own_files(cx: &Ctx, dir: &Path) -> Result<bool> {
    Ok(cx.store.list_dir(dir)?.iter().any(|e| {
        !e.is_dir
            && e.name
                .strip_suffix(".json")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }))
}

fn is_mirrored_tool(t: &ToolUse) -> bool {
    match t.tool_name.as_str() {
        "TodoWrite" | "TaskCreate" => true,
        "TaskUpdate" => t.tool_response.get("success").and_then(Value::as_bool) != Some(false),
        _ => false,
    }
}

impl Layout for ClaudeTasks {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, payload: &Payload) -> bool {
        match &payload.event {
            Event::PostToolUse(t) => is_mirrored_tool(t),
            Event::TaskCompleted(_) | Event::SessionStart(_) => true,
            Event::SubagentStop(s) => s.tasks_completed.as_ref().is_some_and(|v| !v.is_empty()),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Path) -> Result<Vec<StoreRef>> {
        let store = store_for(cx, project)?;
        if cx.store.exists(&tasks_path(&store)) || has_claude_own_files(cx, &store.root)? {
            Ok(vec![store])
        } else {
            Ok(Vec::new())
        }
    }

    fn discover_for_event(
        &self,
        cx: &Ctx,
        project: &Path,
        payload: &Payload,
    ) -> Result<Vec<StoreRef>> {
        match &payload.event {
            Event::PostToolUse(t) if is_mirrored_tool(t) => Ok(vec![store_for(cx, project)?]),
            _ => self.discover(cx, project),
        }
    }

    fn state_files(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        let path = tasks_path(store);
        Ok(if cx.store.exists(&path) {
            vec![StateFile {
                path,
                schema: NAME,
                json_lines: false,
            }]
        } else {
            Vec::new()
        })
    }

    fn status(&self, cx: &Ctx, store: &StoreRef) -> Result<StoreStatus> {
        let path = tasks_path(store);
        let mut st = StoreStatus {
            layout: NAME,
            id: store.id.clone(),
            path: path.clone(),
            ..Default::default()
        };
        match cx.store.load_json(&path, NAME)? {
            Loaded::Missing => {}
            Loaded::Invalid(details) => st.problems.push(format!(
                "`{}` is corrupt ({details}); writes are refused: see `taskhook validate`, or \
                 `taskhook recover {}` to move it aside",
                path.display(),
                store.root.display()
            )),
            Loaded::Valid(doc) => {
                let s = summarize(&doc);
                let waits: Vec<String> = s
                    .blocked
                    .iter()
                    .map(|(id, deps)| format!("{id} waits for {}", deps.join(", ")))
                    .collect();
                st.counts = s.counts;
                st.current = (!s.current.is_empty()).then(|| s.current.join(", "));
                st.notes = waits;
                st.ready = s.ready;
                st.blocked = s.blocked.into_iter().map(|(id, _)| id).collect();
                st.problems = s.problems;
            }
        }
        st.notes.extend(claude_own_lines(cx, &store.root)?);
        Ok(st)
    }

    fn session_start(&self, cx: &Ctx, store: &StoreRef) -> Result<Reaction> {
        let path = tasks_path(store);
        cx.store.clean_stale_temps_of(&path)?;
        let doc = match cx.store.load_json(&path, NAME)? {
            Loaded::Missing => return Ok(Reaction::default()),
            Loaded::Invalid(details) => {
                let line = format!(
                    "taskhook: task list `{}` is corrupt ({details}); taskhook will not write to \
                     it: run `taskhook validate`, or `taskhook recover {}` to move it aside.",
                    path.display(),
                    store.root.display()
                );
                return Ok(Reaction {
                    context: vec![line.clone()],
                    system: vec![line],
                    ..Default::default()
                });
            }
            Loaded::Valid(doc) => doc,
        };
        let all = tasks(&doc);
        if all.is_empty() {
            return Ok(Reaction::default());
        }
        let s = summarize(&doc);
        let count = |k: &str| s.counts.get(k).copied().unwrap_or(0);
        let mut lines = vec![format!(
            "Task list {} ({}): {} tasks: {} in progress, {} pending, {} blocked, {} completed.",
            store.id,
            path.display(),
            all.len(),
            count("in_progress"),
            count("pending"),
            count("blocked"),
            count("completed"),
        )];
        let labels =
            |ids: &[String]| -> Vec<String> { ids.iter().map(|id| label(&doc, id)).collect() };
        for (label, list) in [
            ("In progress", &labels(&s.current)),
            ("Ready", &labels(&s.ready)),
            ("Blocked", &s.blocked_lines()),
            ("Problems", &s.problems),
        ] {
            if list.is_empty() {
                continue;
            }
            let mut shown: Vec<String> = list.iter().take(10).cloned().collect();
            if list.len() > 10 {
                shown.push(format!("and {} more", list.len() - 10));
            }
            lines.push(format!("{label}: {}.", shown.join("; ")));
        }
        Ok(Reaction {
            context: vec![lines.join("\n")],
            ..Default::default()
        })
    }

    fn on_event(&self, cx: &Ctx, store: &StoreRef, payload: &Payload) -> Result<Reaction> {
        match &payload.event {
            Event::PostToolUse(t) => match t.tool_name.as_str() {
                "TodoWrite" => mirror_todos(cx, store, payload, t),
                "TaskCreate" | "TaskUpdate" => mirror_task_tool(cx, store, payload, t),
                _ => Ok(Reaction::default()),
            },
            Event::TaskCompleted(e) => task_completed(cx, store, e),
            Event::SubagentStop(s) => match &s.tasks_completed {
                Some(ids) if !ids.is_empty() => complete_tasks(cx, store, ids),
                _ => Ok(Reaction::default()),
            },
            _ => Ok(Reaction::default()),
        }
    }

    /// Every task is a unit; completed ones are inactive.
    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        Ok(load(cx, store)?
            .map(|doc| {
                tasks(&doc)
                    .iter()
                    .map(|t| Unit {
                        id: id_of(t).to_string(),
                        active: status_of(t) != "completed",
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `DONE` completes the task like `tasks_completed` (reply: `tasks_to_update`); the main
    /// agent later learns which tasks became ready. `FAILED` and `BLOCKED` change nothing (seed
    /// 002 has no such status; `blocked` means unmet dependencies): the main agent is told.
    fn apply_signal(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        signal: &Signal,
        _turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let reason = signal
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        match signal.kind {
            SignalKind::Done => {
                let (mut r, ready) = complete(cx, store, &[unit.to_string()])?;
                let mut line = format!("taskhook: a subagent completed task {unit} of list {}", store.id);
                if !ready.is_empty() {
                    line.push_str(&format!("; now ready: {}", ready.join(", ")));
                }
                r.context.push(format!("{line}."));
                Ok(r)
            }
            SignalKind::Failed | SignalKind::Blocked => Ok(Reaction {
                context: vec![format!(
                    "taskhook: a subagent reported task {unit} of list {} as {}{reason}; its status \
                     is unchanged.",
                    store.id,
                    signal.kind.word()
                )],
                ..Default::default()
            }),
        }
    }

    /// This layout keeps no checkpoints: recovering moves an unreadable `tasks.json` aside
    /// (bytes kept as `tasks.json.corrupt-<UTC>`) so the list can start again.
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let path = tasks_path(store);
        cx.store.with_lock(&lock_path_for(&path), || {
            match cx.store.load_json(&path, NAME)? {
                Loaded::Missing => Ok(format!(
                    "No task list at `{}`; nothing to recover.",
                    path.display()
                )),
                Loaded::Valid(_) => Ok(format!(
                    "`{}` is valid; nothing to recover.",
                    path.display()
                )),
                Loaded::Invalid(details) => {
                    let aside = cx.store.quarantine(&path)?;
                    Ok(format!(
                        "Moved the unreadable `{}` ({details}) aside to `{}`; this layout keeps no \
                         checkpoints, so the list starts empty at its next write.",
                        path.display(),
                        aside.display()
                    ))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todo_ids_are_stable_and_documented() {
        // FNV-1a 64 of the empty string is its offset basis.
        assert_eq!(todo_id(""), "todo-cbf29ce484222325");
        assert_eq!(todo_id("a"), "todo-af63dc4c8601ec8c");
        assert_eq!(todo_id("Write parser"), todo_id("Write parser"));
        assert_ne!(todo_id("Write parser"), todo_id("Write parser "));
    }

    #[test]
    fn subject_join_round_trips() {
        assert_eq!(
            join_subject("Write parser", "Implement it"),
            "Write parser\n\nImplement it"
        );
        assert_eq!(join_subject("Write parser", ""), "Write parser");
        assert_eq!(join_subject("", "Implement it"), "Implement it");
        assert_eq!(join_subject("Same", "Same"), "Same");
        let d = join_subject("S", "B\n\nmore");
        assert_eq!(body_of(&d, "S"), "B\n\nmore");
        assert_eq!(body_of("S", "S"), "");
    }

    #[test]
    fn blocked_is_recomputed_without_downgrading() {
        let mut doc = json!({"tasks": [
            {"id": "a", "status": "pending"},
            {"id": "b", "status": "pending", "dependencies": ["a"]},
            {"id": "c", "status": "in_progress", "dependencies": ["a"]},
            {"id": "d", "status": "blocked", "dependencies": []},
        ]});
        recompute_blocked(&mut doc);
        let st: Vec<&str> = tasks(&doc).iter().map(status_of).collect();
        assert_eq!(st, ["pending", "blocked", "in_progress", "pending"]);
    }

    #[test]
    fn finalize_stamps_only_changed_tasks() {
        let before = json!({"tasks": [
            {"id": "a", "status": "pending", "updated_at": "old"},
            {"id": "b", "status": "pending", "updated_at": "old"},
        ], "version": 2, "last_updated": "old"});
        let mut same = before.clone();
        assert!(!finalize(&before, &mut same, "now"));
        assert_eq!(same, before);
        let mut doc = before.clone();
        doc["tasks"][1]["status"] = json!("completed");
        assert!(finalize(&before, &mut doc, "now"));
        assert_eq!(doc["tasks"][0]["updated_at"], "old");
        assert_eq!(doc["tasks"][1]["updated_at"], "now");
        assert_eq!(doc["last_updated"], "now");
    }
}
