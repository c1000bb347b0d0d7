//! The layout's verbs: seed 002's TodoWrite / TodoRead as `taskhook tasks write|read`, each one
//! change through the write transaction ([`super::write::update`]).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::doc::*;
use super::list::List;
use super::model::Status;
use super::write::{update, Applied};
use super::{FORMAT_VERSION, STATUSES};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::json::present::deserialize as present;
use crate::layouts::json::{merge_keys, object_at, set_str};
use crate::layouts::StoreRef;

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

/// Most dependencies one write may name.
pub const MAX_DEPENDENCIES: usize = 10_000;

/// Creates or updates one task (seed 002's TodoWrite); returns the task as stored.
pub fn write_task(cx: &Ctx, store: &StoreRef, params: &WriteParams) -> Result<Applied<Value>> {
    if let Some(s) = &params.status {
        check_status(s)?;
    }
    if params
        .dependencies
        .as_ref()
        .is_some_and(|d| d.len() > MAX_DEPENDENCIES)
    {
        return Err(Error::BadInput(format!(
            "a task may be given at most {MAX_DEPENDENCIES} dependencies in one write; nothing \
             was written"
        )));
    }
    let id = match &params.id {
        Some(id) if id.trim().is_empty() => {
            return Err(Error::BadInput("task id must not be empty".into()))
        }
        Some(id) => id.clone(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let path = tasks_path(store);
    update(
        cx,
        store,
        |list, now| apply_write(list, params, &id, &path, now),
        |list, ()| {
            list.find(&id)
                .map(|i| Value::Object(list.value(i).into_owned()))
                .unwrap_or(Value::Null)
        },
    )
}

/// The change `tasks write` makes, on a parsed list.
pub(crate) fn apply_write(
    list: &mut List<'_>,
    params: &WriteParams,
    id: &str,
    path: &Path,
    now: &str,
) -> Result<()> {
    let existing = list.find(id);
    let i = match existing {
        Some(i) => i,
        None => {
            let Some(desc) = &params.description else {
                return Err(Error::BadInput(format!(
                    "no task {id:?} in `{}`: a new task needs a description",
                    path.display()
                )));
            };
            let status = params.status.as_deref().unwrap_or("pending");
            list.push(new_task(id, desc, status, now))
        }
    };
    let mut deps = None;
    if let Some(given) = &params.dependencies {
        let mut kept: Vec<&String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for d in given {
            if d == id {
                return Err(Error::Rule(format!(
                    "dependency cycle {id} → {id}: a task cannot depend on itself; nothing was written"
                )));
            }
            if list.find(d).is_none() {
                return Err(Error::Rule(format!(
                    "unknown dependency {d:?} of task {id:?}: no task with that id in `{}`; \
                     nothing was written",
                    path.display()
                )));
            }
            if seen.insert(d) {
                kept.push(d);
            }
        }
        deps = Some(json!(kept));
    }
    if let Some(p) = &params.parent_id {
        if p == id || list.find(p).is_none() {
            return Err(Error::Rule(format!(
                "parent_id {p:?} of task {id:?} is not another task of this list; nothing was written"
            )));
        }
    }
    list.edit(i, |task| {
        if existing.is_some() {
            if let Some(d) = &params.description {
                set_str(task, "description", d);
            }
            if let Some(s) = &params.status {
                set_str(task, "status", s);
            }
        }
        if let Some(list) = deps {
            task.insert("dependencies".into(), list);
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
    });
    let status = list.view(i).status;
    // Checked when this write sets the status or the dependencies: a task the mirror recorded
    // as started early can still have its description edited.
    let rule_applies = params.status.is_some() || params.dependencies.is_some();
    if rule_applies && matches!(status, Status::InProgress | Status::Completed) {
        let waiting = unmet(list, id);
        if !waiting.is_empty() {
            return Err(Error::Rule(format!(
                "task {id:?} cannot be {}: its dependencies are not completed: {}; nothing was \
                 written",
                status.as_str(),
                waiting.join(", ")
            )));
        }
    }
    // Seed 002's `blocked` means "waiting for a dependency": refused when nothing is waited for.
    if params.status.as_deref() == Some("blocked") && unmet(list, id).is_empty() {
        let why = if list.view(i).deps.is_empty() {
            "it has no dependencies"
        } else {
            "all of its dependencies are completed"
        };
        return Err(Error::Rule(format!(
            "task {id:?} cannot be blocked: {why}, and seed 002's `blocked` means waiting for a \
             dependency (write `pending` instead); nothing was written"
        )));
    }
    Ok(())
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
    let path = tasks_path(store);
    let text = read_text(cx, &path)?;
    let list = load_list(&path, &store.root.display().to_string(), text.as_deref())?
        .unwrap_or_else(|| List::empty(FORMAT_VERSION, ""));
    let mut counts: HashMap<Status, usize> = HashMap::new();
    let mut picked = Vec::new();
    let want = params.status.as_deref().map(Status::of);
    for (i, v) in list.live() {
        *counts.entry(v.status).or_default() += 1;
        let keep = want.is_none_or(|s| v.status == s)
            && params
                .assignee
                .as_deref()
                .is_none_or(|a| v.assignee.as_deref() == Some(a))
            && (params.include_completed
                || want == Some(Status::Completed)
                || v.status != Status::Completed);
        if keep {
            picked.push(Value::Object(list.value(i).into_owned()));
        }
    }
    let count = picked.len();
    let mut out = Map::new();
    out.insert("tasks".into(), Value::Array(picked));
    out.insert("count".into(), json!(count));
    for s in [
        Status::Pending,
        Status::InProgress,
        Status::Completed,
        Status::Blocked,
    ] {
        let n = counts.get(&s).copied().unwrap_or(0);
        out.insert(format!("{}_count", s.as_str()), json!(n));
    }
    Ok(Value::Object(out))
}
