//! The mirror of Claude Code's own task tools into the list (CONTRACT §5): TodoWrite's whole
//! list, and the pieces TaskCreate / TaskUpdate share ([`super::task_tools`]); plus the
//! TaskCompleted refusal. The mirror records what Claude Code did (the tool already ran), even
//! a start before the dependencies completed, and then says so.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::doc::*;
use super::write::{new_task, remove_task, update, Applied};
use super::TODO_ID_PREFIX;
use crate::context::Ctx;
use crate::engine::facts::TaskTool;
use crate::env::CLAUDE_CODE_TASK_LIST_ID;
use crate::error::Result;
use crate::graph;
use crate::hook::output::Reply;
use crate::layouts::json::{array_at, set_str, str_field};
use crate::layouts::StoreRef;
use crate::store::check_id;

/// Largest Claude Code `<N>.json` read.
const OWN_TASK_CAP: usize = 4 * 1024 * 1024;

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

/// Mirrors TodoWrite's full list: one task per todo, todos gone from the list removed (only
/// TodoWrite's own tasks of the same agent: the main agent and each subagent keep their lists).
pub(crate) fn mirror_todos(cx: &Ctx, store: &StoreRef, t: &TaskTool<'_>) -> Result<Reply> {
    let Some(todos) = t.input.get("todos").and_then(Value::as_array) else {
        return Ok(Reply::default());
    };
    let scope = t.agent_id;
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
    Ok(mirror_reply(applied))
}

/// Notes for tasks the mirror recorded as started or completed before their dependencies.
pub(crate) fn early_starts(before: &Value, doc: &Value, ids: &[String]) -> Vec<String> {
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

pub(crate) fn mirror_reply(applied: Applied<Vec<String>>) -> Reply {
    let mut r = Reply {
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
pub(crate) fn body_of(description: &str, subject: &str) -> String {
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
pub(crate) fn claude_own_dir(cx: &Ctx, t: &TaskTool<'_>) -> Option<PathBuf> {
    let id = match cx.env.get(CLAUDE_CODE_TASK_LIST_ID) {
        Some(id) => id,
        None => t.session_id?,
    };
    let id = check_id("session id", id).ok()?;
    Some(cx.claude_config_dir().join("tasks").join(id))
}

/// Reads Claude Code's own `<N>.json` for a task id, when it is there and parses.
pub(crate) fn claude_own_task(cx: &Ctx, dir: Option<&Path>, id: &str) -> Option<Value> {
    let dir = dir?;
    check_id("task id", id).ok()?;
    let bytes = cx
        .store
        .read_capped(&dir.join(format!("{id}.json")), OWN_TASK_CAP)
        .ok()??;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// A mirrored task for a Claude Code task the mirror has not seen created: from Claude Code's
/// own file when it is readable, else a placeholder.
pub(crate) fn imported_task(
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
pub(crate) fn add_dependency(doc: &mut Value, task: &str, dep: &str, notes: &mut Vec<String>) {
    if find(doc, task).is_none_or(|t| deps_of(t).contains(&dep)) {
        return;
    }
    let mut trial = doc.clone();
    if let Some(deps) = find_mut(&mut trial, task).map(|t| array_at(t, "dependencies")) {
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

/// Refuses (exit 2) completing a mirrored task whose dependencies are not completed.
pub(crate) fn task_completed(cx: &Ctx, store: &StoreRef, id: &str) -> Result<Reply> {
    let Some(doc) = load(cx, store)? else {
        return Ok(Reply::default());
    };
    if find(&doc, id).is_none() {
        return Ok(Reply::default());
    }
    let waiting = unmet(&doc, id);
    if waiting.is_empty() {
        return Ok(Reply::default());
    }
    Ok(Reply {
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
