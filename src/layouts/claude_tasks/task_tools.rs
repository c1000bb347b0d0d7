//! The mirror of TaskCreate and TaskUpdate. Claude Code's task `n` of a session is kept as
//! `n@<session>` (or as `n` in a shared list: [`super::scope`]). A TaskUpdate that failed
//! (`tool_response.success: false`) changes nothing; a task Claude Code made that the mirror
//! never saw created is imported from Claude Code's own `<N>.json` (read only) or as a
//! placeholder. Dependencies that would close a cycle are left out, with a note; the cycle
//! checks reach each task once per call, however many ids `addBlockedBy` names.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::commands::MAX_DEPENDENCIES;
use super::doc::*;
use super::lifecycle::{dep_path, reachable, reaching};
use super::list::List;
use super::mirror::{
    body_of, claude_own_dir, claude_own_task, early_starts, join_subject, mirror_reply,
};
use super::scope::Keys;
use super::write::update;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::fact::{TaskTool, TaskToolKind};
use crate::layouts::json::{array_at, merge_keys, object_at, set_str, str_field, string_list};
use crate::layouts::{Reaction, StoreRef};

/// Most notes about left-out dependencies one call reports (the rest are counted).
const MAX_CYCLE_NOTES: usize = 10;

/// The Claude Code task number a call is about.
fn task_number<'a>(t: &TaskTool<'a>) -> Option<&'a str> {
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
pub(crate) fn mirror(cx: &Ctx, store: &StoreRef, t: &TaskTool<'_>) -> Result<Reaction> {
    let Some(n) = task_number(t).filter(|_| succeeded(t)) else {
        return Ok(Reaction::default());
    };
    let (blocked_by, blocks) = (
        string_list(t.input, "addBlockedBy"),
        string_list(t.input, "addBlocks"),
    );
    if blocked_by.len() + blocks.len() > MAX_DEPENDENCIES {
        return Err(Error::BadInput(format!(
            "TaskUpdate of task #{n} names {} dependencies; taskhook mirrors at most \
             {MAX_DEPENDENCIES} in one call, so task list {} was left as it was",
            blocked_by.len() + blocks.len(),
            store.id
        )));
    }
    let create = t.kind == TaskToolKind::TaskCreate;
    let deleting = t.input.get("status").and_then(Value::as_str) == Some("deleted");
    let keys = Keys::for_session(cx, t.session_id);
    // Claude Code's own files for every task this call names, read once, before the lock.
    let mut own: HashMap<String, Value> = HashMap::new();
    if !create && !deleting {
        let dir = claude_own_dir(cx, t);
        for other in std::iter::once(n).chain(blocked_by.iter().chain(&blocks).map(String::as_str))
        {
            if let Some(v) = claude_own_task(cx, dir.as_deref(), other) {
                own.insert(other.to_string(), v);
            }
        }
    }
    let applied = update(
        cx,
        store,
        |list, now| {
            let at = if create {
                list.find(&keys.new_id(list, n))
            } else {
                keys.find(list, n)
            };
            // A task of the list with this id that another writer made is left alone.
            if let Some(i) = at.filter(|&i| list.view(i).origin() != Some("TaskCreate")) {
                let id = list.view(i).id.to_string();
                return Ok(vec![format!(
                    "taskhook: Claude Code task #{n} was not mirrored: the task list has a task \
                     {id:?} that did not come from TaskCreate."
                )]);
            }
            if deleting {
                if let Some(i) = at {
                    let id = list.view(i).id.to_string();
                    list.remove(&HashSet::from([id.as_str()]));
                }
                Ok(Vec::new())
            } else if create {
                create_task(list, &keys, n, t, now);
                Ok(Vec::new())
            } else {
                let ctx = Update {
                    keys: &keys,
                    t,
                    own: &own,
                    now,
                    blocked_by: &blocked_by,
                    blocks: &blocks,
                };
                Ok(update_task(list, n, &ctx))
            }
        },
        |_, notes| notes,
    )?;
    Ok(mirror_reply(applied))
}

fn create_task(list: &mut List<'_>, keys: &Keys, n: &str, t: &TaskTool<'_>, now: &str) {
    let (input, resp, session) = (t.input, t.response, t.session_id);
    let id = keys.new_id(list, n);
    let existing = list.find(&id);
    let same_session =
        existing.is_some_and(|i| session.is_some() && list.view(i).session() == session);
    let text = |key: &str| {
        input
            .get(key)
            .or_else(|| resp.pointer(&format!("/task/{key}")))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let (subject, body) = (text("subject"), text("description"));
    let active_form = input.get("activeForm").and_then(Value::as_str);
    match (existing, same_session) {
        // The same call seen again (a replay): refresh what TaskCreate set, keep the rest.
        (Some(i), true) => list.edit(i, |old| {
            set_str(old, "description", &join_subject(subject, body));
            let cf = custom_fields(old);
            set_str(cf, "subject", subject);
            if let Some(a) = active_form {
                set_str(cf, "activeForm", a);
            }
        }),
        (existing, _) => {
            let mut task = new_task(&id, &join_subject(subject, body), "pending", now);
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
            match existing {
                // A shared list whose number an earlier session used: replaced in place.
                Some(i) => list.replace(i, task),
                None => {
                    list.push(task);
                }
            }
        }
    }
}

/// What a TaskUpdate brings.
struct Update<'u, 't> {
    keys: &'u Keys,
    t: &'u TaskTool<'t>,
    own: &'u HashMap<String, Value>,
    now: &'u str,
    blocked_by: &'u [String],
    blocks: &'u [String],
}

/// A mirrored task for Claude Code's task `n`, which the mirror has not seen created: from
/// Claude Code's own file when it is readable, else a placeholder.
fn imported_task(
    id: &str,
    n: &str,
    own: Option<&Value>,
    session: Option<&str>,
    now: &str,
) -> Map<String, Value> {
    let subject = own.map_or("", |o| str_field(o, "subject"));
    let body = own.map_or("", |o| str_field(o, "description"));
    let description = match join_subject(subject, body) {
        d if d.is_empty() => format!("Claude Code task #{n}"),
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

/// The slot of Claude Code's task `n`, imported when the mirror lacks it.
fn slot_of(list: &mut List<'_>, n: &str, u: &Update<'_, '_>) -> usize {
    if let Some(i) = u.keys.find(list, n) {
        return i;
    }
    let id = u.keys.new_id(list, n);
    let task = imported_task(&id, n, u.own.get(n), u.t.session_id, u.now);
    list.push(task)
}

fn update_task(list: &mut List<'_>, n: &str, u: &Update<'_, '_>) -> Vec<String> {
    let input = u.t.input;
    let me = slot_of(list, n, u);
    let blockers: Vec<usize> = u.blocked_by.iter().map(|o| slot_of(list, o, u)).collect();
    let blocked: Vec<usize> = u.blocks.iter().map(|o| slot_of(list, o, u)).collect();
    list.edit(me, |task| apply_fields(task, input));
    let mut notes = Vec::new();
    let mut left_out = 0usize;
    // `t → d` closes a cycle exactly when d reaches t. Edges out of `me` do not change who
    // reaches `me`, and edges into `me` do not change what `me` reaches, so one search serves
    // every id of each list.
    let reach_me = reaching(list, me);
    let edges = blockers.into_iter().map(|b| (me, b, reach_me.contains(&b)));
    link(list, edges, &mut notes, &mut left_out);
    let from_me = reachable(list, me);
    let edges = blocked.into_iter().map(|o| (o, me, from_me.contains(&o)));
    link(list, edges, &mut notes, &mut left_out);
    if left_out > MAX_CYCLE_NOTES {
        notes.push(format!(
            "taskhook: and {} more dependencies left out for the same reason.",
            left_out - MAX_CYCLE_NOTES
        ));
    }
    notes.extend(early_starts(list, &[me]));
    notes
}

/// Adds each dependency `(task, dep, closes_a_cycle)`, or leaves it out with a note. Linear in
/// the edges: each task's dependencies are put in a set once, and each task is edited once,
/// with all its new dependencies in the order named (a dependency already there, or named
/// twice, is skipped; a left-out one is noted once).
fn link(
    list: &mut List<'_>,
    edges: impl Iterator<Item = (usize, usize, bool)>,
    notes: &mut Vec<String>,
    left_out: &mut usize,
) {
    // Per task, in slot order: the ids it depends on or was given (or had noted) by this
    // call, and the dependencies to add.
    let mut per_task: BTreeMap<usize, (HashSet<String>, Vec<Value>)> = BTreeMap::new();
    for (task, dep, closes) in edges {
        let (seen, add) = per_task.entry(task).or_insert_with(|| {
            let have = list.view(task).deps.iter().map(|d| d.to_string()).collect();
            (have, Vec::new())
        });
        let dep_id = list.view(dep).id.to_string();
        if seen.contains(&dep_id) {
            continue;
        }
        if task == dep || closes {
            cycle_note(list, task, dep, notes, left_out);
        } else {
            add.push(json!(dep_id));
        }
        seen.insert(dep_id);
    }
    for (task, (_, add)) in per_task {
        if !add.is_empty() {
            list.edit(task, |t| array_at(t, "dependencies").extend(add));
        }
    }
}

/// Notes that the dependency `task → dep`, not there yet, was left out: it would close a cycle.
fn cycle_note(
    list: &List<'_>,
    task: usize,
    dep: usize,
    notes: &mut Vec<String>,
    left_out: &mut usize,
) {
    *left_out += 1;
    if *left_out > MAX_CYCLE_NOTES {
        return;
    }
    let (t, d) = (list.shown(task).to_string(), list.shown(dep).to_string());
    let mut cycle = vec![t.clone()];
    cycle.extend(
        dep_path(list, dep, task)
            .map(|p| p.iter().map(|id| list.shown_id(id).to_string()).collect())
            .unwrap_or_else(|| vec![d.clone(), t.clone()]),
    );
    notes.push(format!(
        "taskhook: the task list mirror left out the dependency of {t} on {d}: it would close \
         the cycle {}.",
        cycle.join(" → ")
    ));
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
