//! The straightforward implementation the fast path is held to: the whole document as a JSON
//! tree, cloned before the change, compared and re-serialised after it (what taskhook did
//! before issue 13), with the same rules. Plus the random edits, applied to the tree.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::super::doc::new_task;
use super::{pid, Op, Run, NOW};
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::store::{schema, to_pretty};
pub fn tasks(doc: &Value) -> &[Value] {
    doc["tasks"].as_array().map_or(&[], Vec::as_slice)
}

pub fn tasks_mut(doc: &mut Value) -> &mut Vec<Value> {
    doc["tasks"].as_array_mut().unwrap()
}

fn id_of(t: &Value) -> &str {
    t["id"].as_str().unwrap_or("")
}

fn status_of(t: &Value) -> &str {
    t["status"].as_str().unwrap_or("")
}

fn deps_of(t: &Value) -> Vec<&str> {
    t["dependencies"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
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

pub fn find_mut<'a>(doc: &'a mut Value, id: &str) -> Option<&'a mut Map<String, Value>> {
    tasks_mut(doc)
        .iter_mut()
        .find(|t| id_of(t) == id)
        .and_then(Value::as_object_mut)
}

pub fn remove(doc: &mut Value, id: &str) {
    let list = tasks_mut(doc);
    let len = list.len();
    list.retain(|t| id_of(t) != id);
    if list.len() != len {
        for t in list.iter_mut() {
            if let Some(deps) = t.get_mut("dependencies").and_then(Value::as_array_mut) {
                deps.retain(|d| d.as_str() != Some(id));
            }
        }
    }
}

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

fn normalise(doc: &mut Value) {
    for t in tasks_mut(doc) {
        if let Some(m) = t.as_object_mut() {
            crate::layouts::claude_tasks::list::normalise(m);
        }
    }
}

/// The whole pipeline: parse, normalise, change, check, recompute, stamp, serialise.
pub fn run(text: Option<&str>, change: impl Fn(&mut Value, &str) -> Result<()>) -> Result<Run> {
    let before = match text {
        Some(t) => {
            let mut v: Value = serde_json::from_str(t).unwrap();
            normalise(&mut v);
            v
        }
        None => json!({"tasks": [], "version": 2, "last_updated": NOW}),
    };
    let mut doc = before.clone();
    change(&mut doc, NOW)?;
    check_graph(&before, &doc)?;
    // Recompute `blocked`, re-blocking on a reopened dependency.
    let done_before: HashSet<String> = done_set(&before).into_iter().map(str::to_string).collect();
    let done: HashSet<String> = done_set(&doc).into_iter().map(str::to_string).collect();
    let mut reblocked = Vec::new();
    for t in tasks_mut(&mut doc).iter_mut() {
        let deps = deps_of(t);
        let all_done = deps.iter().all(|d| done.contains(*d));
        let lost = deps
            .iter()
            .any(|d| done_before.contains(*d) && !done.contains(*d));
        let new = match (status_of(t), all_done) {
            ("pending", false) => "blocked",
            ("blocked", true) => "pending",
            ("in_progress", false) if lost => "blocked",
            _ => continue,
        };
        if new == "blocked" && lost {
            reblocked.push(id_of(t).to_string());
        }
        t["status"] = json!(new);
    }
    let old: std::collections::HashMap<&str, &Value> =
        tasks(&before).iter().map(|t| (id_of(t), t)).collect();
    for t in tasks_mut(&mut doc).iter_mut() {
        if old.get(id_of(t)).is_none_or(|o| *o != t) {
            let m = t.as_object_mut().unwrap();
            m.insert("updated_at".into(), json!(NOW));
            m.entry("created_at").or_insert(json!(NOW));
        }
    }
    let nodes_after = nodes(&doc);
    let unblocked: Vec<String> =
        graph::unblocked(&nodes_after, &done_set(&before), &done_set(&doc))
            .into_iter()
            .map(str::to_string)
            .collect();
    if before == doc {
        return Ok((None, unblocked, reblocked));
    }
    if doc.get("version").and_then(Value::as_u64) != Some(2) {
        doc["version"] = json!(2);
    }
    doc["last_updated"] = json!(NOW);
    if let Err(issues) = schema::check("claude-tasks", &doc)? {
        return Err(Error::BadInput(schema::summarize(&issues)));
    }
    Ok((Some(to_pretty(&doc)), unblocked, reblocked))
}

/// `tasks write` as it was written on the JSON tree (status, dependencies, description).
fn reference_write(
    doc: &mut Value,
    k: usize,
    s: Option<&str>,
    d: Option<&Vec<usize>>,
    now: &str,
) -> Result<()> {
    let id = pid(k);
    let exists = find_mut(doc, &id).is_some();
    if !exists {
        let status = s.unwrap_or("pending");
        tasks_mut(doc).push(Value::Object(new_task(&id, "w", status, now)));
    }
    let mut deps = None;
    if let Some(given) = d {
        let mut list: Vec<String> = Vec::new();
        for d in given.iter().map(|&x| pid(x)) {
            if d == id {
                return Err(Error::Rule(format!(
                    "dependency cycle {id} → {id}: a task cannot depend on itself; nothing was written"
                )));
            }
            if find_mut(doc, &d).is_none() {
                return Err(Error::Rule(format!(
                    "unknown dependency {d:?} of task {id:?}: no task with that id in \
                     `/l/tasks.json`; nothing was written"
                )));
            }
            if !list.contains(&d) {
                list.push(d);
            }
        }
        deps = Some(list);
    }
    let t = find_mut(doc, &id).unwrap();
    if exists {
        t.insert("description".into(), json!("w"));
        if let Some(s) = s {
            t.insert("status".into(), json!(s));
        }
    }
    if let Some(list) = deps {
        t.insert("dependencies".into(), json!(list));
    }
    let status = t["status"].as_str().unwrap_or("").to_string();
    let my_deps: Vec<String> = t["dependencies"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let snapshot = doc.clone();
    let unmet: Vec<String> = {
        let mut seen = HashSet::new();
        my_deps
            .iter()
            .filter(|d| seen.insert(d.to_string()))
            .filter_map(|d| {
                let dt = tasks(&snapshot).iter().find(|t| t["id"] == **d);
                match dt {
                    Some(dt) if dt["status"] == "completed" => None,
                    Some(dt) => {
                        let desc = dt["description"].as_str().unwrap_or("");
                        let short = super::super::doc::short(desc, 60);
                        let label = if desc.trim().is_empty() {
                            d.clone()
                        } else {
                            format!("{d} ({short})")
                        };
                        Some(format!("{label} [{}]", dt["status"].as_str().unwrap_or("")))
                    }
                    None => Some(format!("{d} [unknown]")),
                }
            })
            .collect()
    };
    if (s.is_some() || d.is_some())
        && matches!(status.as_str(), "in_progress" | "completed")
        && !unmet.is_empty()
    {
        {
            return Err(Error::Rule(format!(
                "task {id:?} cannot be {status}: its dependencies are not completed: {}; nothing \
                 was written",
                unmet.join(", ")
            )));
        }
    }
    if s == Some("blocked") && unmet.is_empty() {
        let why = if my_deps.is_empty() {
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

pub fn reference_op(doc: &mut Value, op: &Op, now: &str) -> Result<()> {
    match op {
        Op::Status(k, s) => {
            if let Some(t) = find_mut(doc, &pid(*k)) {
                t.insert("status".into(), json!(s));
            }
        }
        Op::Deps(k, d) => {
            if let Some(t) = find_mut(doc, &pid(*k)) {
                let deps: Vec<String> = d.iter().map(|&d| pid(d)).collect();
                t.insert("dependencies".into(), json!(deps));
            }
        }
        Op::Add(k, d) => {
            if find_mut(doc, &pid(*k)).is_none() {
                let mut t = new_task(&pid(*k), "new", "pending", now);
                t["dependencies"] = json!(d.iter().map(|&d| pid(d)).collect::<Vec<_>>());
                tasks_mut(doc).push(Value::Object(t));
            }
        }
        Op::Remove(k) => remove(doc, &pid(*k)),
        Op::Desc(k, d) => {
            if let Some(t) = find_mut(doc, &pid(*k)) {
                t.insert("description".into(), json!(d));
            }
        }
        Op::Write(k, s, d) => reference_write(doc, *k, *s, d.as_ref(), now)?,
    }
    Ok(())
}
