//! The write pipeline of a task list: every change goes through [`update`] (the store's
//! read → decide → lock → re-read → write transaction), which checks the dependency graph,
//! recomputes `blocked`, stamps only what changed, validates and replaces the file. On top of
//! it, seed 002's TodoWrite / TodoRead as `taskhook tasks write|read`, and completing tasks
//! (SubagentStop's `tasks_completed`, a `_DONE` signal).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::doc::*;
use super::{FORMAT_VERSION, NAME, STATUSES};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph;
use crate::layouts::json::{merge_keys, object_at, set_str};
use crate::layouts::StoreRef;
use crate::store::lock_path_for;

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
/// may run twice ([`crate::store::Store::transact`]: an unlocked pass first; when it changes
/// nothing, no lock is taken).
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
    cx.store.transact(&lock_path_for(&path), |pass| {
        let applied = attempt()?;
        if applied.changed && pass.writes() {
            cx.store.replace_json(&path, NAME, &applied.doc)?;
        }
        let changed = applied.changed;
        Ok((applied, changed))
    })
}

pub(crate) fn check_version(path: &Path, doc: &Value) -> Result<()> {
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
pub(crate) fn check_graph(before: &Value, after: &Value) -> Result<()> {
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
pub(crate) fn finalize(before: &Value, doc: &mut Value, now: &str) -> bool {
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
pub(crate) fn recompute_blocked(doc: &mut Value) {
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
pub(crate) fn remove_task(doc: &mut Value, id: &str) -> bool {
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

pub(crate) fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

pub(crate) fn check_status(s: &str) -> Result<&str> {
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
            merge_keys(object_at(task, "metadata"), meta);
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

/// What completing tasks did.
#[derive(Debug, Clone, Default)]
pub struct Completed {
    /// Ids of the list among those asked for, each once.
    pub found: Vec<String>,
    /// Ids that are not tasks of the list.
    pub unknown: Vec<String>,
    /// Tasks the completion unblocked, as labels (`id (description)`).
    pub ready: Vec<String>,
}

/// Completes `ids` in the list under its lock (seed 002's SubagentStop `tasks_completed`, a
/// `_DONE` signal).
pub fn complete(cx: &Ctx, store: &StoreRef, ids: &[String]) -> Result<Completed> {
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
    let ready = applied
        .unblocked
        .iter()
        .map(|id| label(&applied.doc, id))
        .collect();
    Ok(Completed {
        found,
        unknown,
        ready,
    })
}
