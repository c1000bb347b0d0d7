//! The mirror of TaskCreate and TaskUpdate, keyed by Claude Code's task id (`"1"`, `"2"`, …).
//! A TaskUpdate that failed (`tool_response.success: false`) changes nothing; a task Claude Code
//! made that the mirror never saw created is imported from Claude Code's own `<N>.json` (read
//! only) or as a placeholder.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::doc::*;
use super::mirror::{
    add_dependency, body_of, claude_own_dir, claude_own_task, early_starts, imported_task,
    join_subject, mirror_reply,
};
use super::write::{new_task, remove_task, update};
use crate::context::Ctx;
use crate::engine::facts::{TaskTool, TaskToolKind};
use crate::error::Result;
use crate::hook::output::Reply;
use crate::layouts::json::{merge_keys, object_at, set_str, string_list};
use crate::layouts::StoreRef;

/// The Claude Code task id a call is about.
fn task_id<'a>(t: &TaskTool<'a>) -> Option<&'a str> {
    let id = match t.kind {
        TaskToolKind::TaskCreate => t.response.pointer("/task/id").and_then(Value::as_str),
        _ => t
            .input
            .get("taskId")
            .and_then(Value::as_str)
            .or_else(|| t.response.get("taskId").and_then(Value::as_str)),
    };
    id.filter(|i| !i.is_empty())
}

/// Whether the call changed Claude Code's tasks (a failed TaskUpdate did not).
pub(crate) fn succeeded(t: &TaskTool<'_>) -> bool {
    t.kind != TaskToolKind::TaskUpdate
        || t.response.get("success").and_then(Value::as_bool) != Some(false)
}

/// Mirrors one TaskCreate or TaskUpdate.
pub(crate) fn mirror(cx: &Ctx, store: &StoreRef, t: &TaskTool<'_>) -> Result<Reply> {
    let Some(id) = task_id(t).filter(|_| succeeded(t)) else {
        return Ok(Reply::default());
    };
    let create = t.kind == TaskToolKind::TaskCreate;
    let deleting = t.input.get("status").and_then(Value::as_str) == Some("deleted");
    // Claude Code's own files for every task this call names, read once, before the lock.
    let mut own: HashMap<String, Value> = HashMap::new();
    if !create && !deleting {
        let dir = claude_own_dir(cx, t);
        for other in named(t, id) {
            if let Some(v) = claude_own_task(cx, dir.as_deref(), &other) {
                own.insert(other, v);
            }
        }
    }
    let applied = update(cx, store, |doc, now| {
        // Claude Code's ids are "1", "2", …: a task of the list with such an id that another
        // writer made is left alone.
        if find(doc, id).is_some_and(|t| origin_of(t) != "TaskCreate") {
            return Ok(vec![format!(
                "taskhook: Claude Code task #{id} was not mirrored: the task list has a task \
                 {id:?} that did not come from TaskCreate."
            )]);
        }
        if deleting {
            remove_task(doc, id);
            Ok(Vec::new())
        } else if create {
            create_task(doc, id, t, now);
            Ok(Vec::new())
        } else {
            Ok(update_task(doc, id, t, &own, now))
        }
    })?;
    Ok(mirror_reply(applied))
}

/// The task a call is about, then those it adds as blockers and as blocked.
fn named(t: &TaskTool<'_>, id: &str) -> Vec<String> {
    let mut all = vec![id.to_string()];
    all.extend(string_list(t.input, "addBlockedBy"));
    all.extend(string_list(t.input, "addBlocks"));
    all
}

fn create_task(doc: &mut Value, id: &str, t: &TaskTool<'_>, now: &str) {
    let (input, resp, session) = (t.input, t.response, t.session_id);
    let same_session = find(doc, id).is_some_and(|existing| {
        session.is_some()
            && existing
                .pointer("/metadata/custom_fields/session_id")
                .and_then(Value::as_str)
                == session
    });
    let text = |key: &str| {
        input
            .get(key)
            .or_else(|| resp.pointer(&format!("/task/{key}")))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let (subject, body) = (text("subject"), text("description"));
    let active_form = input.get("activeForm").and_then(Value::as_str);
    let mut task = new_task(id, &join_subject(subject, body), "pending", now);
    mark_agent(&mut task, "TaskCreate");
    let cf = custom_fields(&mut task);
    set_str(cf, "subject", subject);
    if let Some(sid) = session {
        set_str(cf, "session_id", sid);
    }
    if let Some(a) = active_form {
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
                if let Some(a) = active_form {
                    set_str(cf, "activeForm", a);
                }
            }
        }
        // Claude Code numbers tasks per session: a task of an earlier session with the same
        // number is replaced in place.
        (Some(i), false) => tasks_mut(doc)[i] = Value::Object(task),
        (None, _) => tasks_mut(doc).push(Value::Object(task)),
    }
}

fn update_task(
    doc: &mut Value,
    id: &str,
    t: &TaskTool<'_>,
    own: &HashMap<String, Value>,
    now: &str,
) -> Vec<String> {
    let before = doc.clone();
    let input = t.input;
    let mut notes = Vec::new();
    for other in named(t, id) {
        if position(doc, &other).is_none() {
            let task = imported_task(&other, own.get(&other), t.session_id, now);
            tasks_mut(doc).push(Value::Object(task));
        }
    }
    let Some(task) = find_mut(doc, id) else {
        return notes;
    };
    apply_fields(task, input);
    for dep in string_list(input, "addBlockedBy") {
        add_dependency(doc, id, &dep, &mut notes);
    }
    for other in string_list(input, "addBlocks") {
        add_dependency(doc, &other, id, &mut notes);
    }
    notes.extend(early_starts(&before, doc, &[id.to_string()]));
    notes
}

/// Applies TaskUpdate's subject, description, activeForm, owner, metadata and status.
fn apply_fields(task: &mut Map<String, Value>, input: &Value) {
    let text =
        |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    let old_desc = text(task, "description").unwrap_or_default();
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
        let body = match (new_body, &old_subject) {
            (Some(b), _) => b.to_string(),
            (None, Some(s)) => body_of(&old_desc, s),
            (None, None) => old_desc.clone(),
        };
        set_str(task, "description", &join_subject(&subject, &body));
        if let Some(s) = new_subject {
            set_str(custom_fields(task), "subject", s);
        }
    }
    if let Some(a) = input.get("activeForm").and_then(Value::as_str) {
        set_str(custom_fields(task), "activeForm", a);
    }
    match input.get("owner").and_then(Value::as_str) {
        Some("") => {
            task.insert("assignee".into(), Value::Null);
        }
        Some(owner) => set_str(task, "assignee", owner),
        None => {}
    }
    if let Some(m) = input.get("metadata").and_then(Value::as_object) {
        let cf = custom_fields(task);
        let meta = object_at(cf, "metadata");
        merge_keys(meta, m);
        if meta.is_empty() {
            cf.shift_remove("metadata");
        }
    }
    if let Some(s @ ("pending" | "in_progress" | "completed")) =
        input.get("status").and_then(Value::as_str)
    {
        set_mirrored_status(task, s);
    }
}
