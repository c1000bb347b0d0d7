//! The mirror of Claude Code's own task tools into the list (CONTRACT §5): TodoWrite's whole
//! list, and the pieces TaskCreate / TaskUpdate share ([`super::task_tools`]); plus the
//! TaskCompleted refusal. The mirror records what Claude Code did (the tool already ran), even
//! a start before the dependencies completed, and then says so.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::doc::*;
use super::list::List;
use super::model::{Status, View};
use super::scope::{Keys, TodoScope};
use super::write::{update, Applied};
use super::TODO_ID_PREFIX;
use crate::context::Ctx;
use crate::env::CLAUDE_CODE_TASK_LIST_ID;
use crate::error::{Error, Result};
use crate::layouts::fact::TaskTool;
use crate::layouts::json::{set_str, str_field};
use crate::layouts::{Reaction, StoreRef};
use crate::store::check_id;

/// Largest Claude Code `<N>.json` read.
const OWN_TASK_CAP: usize = 4 * 1024 * 1024;
/// Most todos one TodoWrite may carry (Claude Code sends the whole list each time).
pub const MAX_TODOS: usize = 50_000;

/// The task id of a TodoWrite item: `todo-` and the 16 hex digits of the 64-bit FNV-1a hash of
/// its `content` (UTF-8 bytes, as given). The same text always maps to the same id, across
/// calls, processes and versions; a second identical item in one list gets `-2`, `-3`, ….
pub fn todo_id(content: &str) -> String {
    format!(
        "{TODO_ID_PREFIX}{:016x}",
        crate::fnv::hash(content.as_bytes())
    )
}

/// Who is writing todos now: the project the store was found for, the session and the agent.
fn todo_scope(store: &StoreRef, t: &TaskTool<'_>) -> TodoScope {
    TodoScope {
        project: Some(store.project.display().to_string()),
        session: t.session_id.map(str::to_string),
        agent: t.agent_id.map(str::to_string),
    }
}

fn is_mine(v: &View<'_>, scope: &TodoScope) -> bool {
    v.origin() == Some("TodoWrite") && scope.owns(v.project(), v.session(), v.agent())
}

/// Mirrors TodoWrite's full list: one task per todo; todos gone from the list removed. Only
/// todos this project, session and agent wrote are claimed or removed; a todo whose id another
/// writer's task holds gets the next free `-N` id instead.
pub(crate) fn mirror_todos(cx: &Ctx, store: &StoreRef, t: &TaskTool<'_>) -> Result<Reaction> {
    let Some(todos) = t.input.get("todos").and_then(Value::as_array) else {
        return Ok(Reaction::default());
    };
    if todos.len() > MAX_TODOS {
        return Err(Error::BadInput(format!(
            "TodoWrite sent {} todos; taskhook mirrors at most {MAX_TODOS} in one call, so task \
             list {} was left as it was",
            todos.len(),
            store.id
        )));
    }
    let scope = todo_scope(store, t);
    let applied = update(
        cx,
        store,
        |list, now| {
            let mut seen: HashSet<String> = HashSet::with_capacity(todos.len());
            let mut order: Vec<usize> = Vec::with_capacity(todos.len());
            let mut next: HashMap<String, u64> = HashMap::new();
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
                let mut n = next.get(&base).copied().unwrap_or(1);
                let id = loop {
                    let id = if n == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    };
                    n += 1;
                    let free = !seen.contains(&id)
                        && list.find(&id).is_none_or(|i| is_mine(list.view(i), &scope));
                    if free {
                        break id;
                    }
                };
                next.insert(base, n);
                let i = match list.find(&id) {
                    Some(i) => i,
                    None => list.push(new_task(&id, content, status, now)),
                };
                seen.insert(id);
                order.push(i);
                list.edit(i, |task| {
                    set_str(task, "description", content);
                    set_mirrored_status(task, status);
                    mark_agent(task, "TodoWrite");
                    let cf = custom_fields(task);
                    let active = todo.get("activeForm").and_then(Value::as_str);
                    put(cf, "activeForm", active);
                    put(cf, "agent_id", scope.agent.as_deref());
                    put(cf, "session_id", scope.session.as_deref());
                    put(cf, "project", scope.project.as_deref());
                });
            }
            let gone: HashSet<&str> = list
                .live()
                .filter(|(_, v)| is_mine(v, &scope) && !seen.contains(&*v.id))
                .map(|(_, v)| &*v.id)
                .collect();
            let gone: HashSet<String> = gone.into_iter().map(str::to_string).collect();
            list.remove(&gone.iter().map(String::as_str).collect());
            Ok(early_starts(list, &order))
        },
        |_, notes| notes,
    )?;
    Ok(mirror_reply(applied))
}

/// Sets `key` to `value`, or removes it for `None`.
fn put(m: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    match value {
        Some(v) => set_str(m, key, v),
        None => {
            m.shift_remove(key);
        }
    }
}

/// Notes for tasks the mirror recorded as started or completed before their dependencies.
pub(crate) fn early_starts(list: &List<'_>, slots: &[usize]) -> Vec<String> {
    let mut notes = Vec::new();
    for &i in slots {
        let s = &list.slots[i];
        if s.removed || !matches!(s.view.status, Status::InProgress | Status::Completed) {
            continue;
        }
        if s.orig_status == Some(s.view.status) {
            continue;
        }
        let id = &s.view.id;
        let waiting = unmet(list, id);
        if !waiting.is_empty() {
            notes.push(format!(
                "taskhook: task {} is {} although its dependencies are not completed ({}); \
                 the task list mirror records it as Claude Code did.",
                label(list, id),
                s.view.status.as_str(),
                waiting.join(", ")
            ));
        }
    }
    notes
}

/// The reply to a mirrored change: its notes, then tasks blocked again and tasks now ready.
pub(crate) fn mirror_reply(applied: Applied<Vec<String>>) -> Reaction {
    let mut r = Reaction::context(applied.value);
    if !applied.reblocked.is_empty() {
        r.context.push(format!(
            "taskhook: blocked again (a dependency is no longer completed): {}.",
            applied.reblocked.join(", ")
        ));
    }
    if !applied.unblocked_labels.is_empty() {
        r.context.push(format!(
            "taskhook: now ready (all dependencies completed): {}.",
            applied.unblocked_labels.join(", ")
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
    claude_own_dir_of(cx, t.session_id)
}

/// Claude Code's own folder of `session`'s tasks: `<config>/tasks/<CLAUDE_CODE_TASK_LIST_ID or
/// session id>/` (read only).
pub(crate) fn claude_own_dir_of(cx: &Ctx, session: Option<&str>) -> Option<PathBuf> {
    let id = match cx.env.get(CLAUDE_CODE_TASK_LIST_ID) {
        Some(id) => id,
        None => session?,
    };
    let id = check_id("session id", id).ok()?;
    Some(cx.claude_config_dir().join("tasks").join(id))
}

/// Reads Claude Code's own `<N>.json` for a task number, when it is there and parses.
pub(crate) fn claude_own_task(cx: &Ctx, dir: Option<&Path>, n: &str) -> Option<Value> {
    let dir = dir?;
    check_id("task id", n).ok()?;
    let bytes = cx
        .store
        .read_capped(&dir.join(format!("{n}.json")), OWN_TASK_CAP)
        .ok()??;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// Refuses (exit 2) completing a mirrored task whose dependencies are not completed. The task
/// number resolves as every name does ([`Keys::resolve`]).
pub(crate) fn task_completed(cx: &Ctx, store: &StoreRef, n: &str) -> Result<Reaction> {
    let keys = Keys::of(cx);
    with_list(cx, store, |list| {
        let Some(list) = list else {
            return Reaction::default();
        };
        let Some(i) = keys.resolve(list, n) else {
            return Reaction::default();
        };
        let id = list.view(i).id.to_string();
        let waiting = unmet(list, &id);
        if waiting.is_empty() {
            return Reaction::default();
        }
        Reaction::refused(format!(
            "Task {} cannot be completed yet: its dependencies are not completed: {}. \
                 Complete them first (task list `{}`).",
            label(list, &id),
            waiting.join(", "),
            tasks_path(store).display()
        ))
    })
}
