//! What `taskhook projects …` does, so the CLI only parses and prints: create a project, add a
//! task (decomposing its parent), start one, set a status by hand, name the next task, append a
//! log entry (SYNC_TO_{PLATFORM} with its external id), and recompute velocity from the log.
//! Transitions go through the same step as hooks ([`super::steps::act`]).

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::files::{self, Change, Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};
use super::lifecycle::Action;
use super::log::{self, Entry};
use super::model::{self, IN_PROGRESS, PENDING, STATUSES};
use super::steps::{self, Acted};
use super::{base, store_ref, SCHEMA_TASKS};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::store::check_unit_id;

/// What `projects new` creates.
#[derive(Debug, Clone, Default)]
pub struct NewProject {
    pub id: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub phase: Option<String>,
}

/// Creates `.claude/projects/ID/` with project.json, tasks.json, progress/log.md,
/// progress/velocity.json and the research/, checkpoints/ and temp/ folders.
pub fn create(cx: &Ctx, project: &Project, n: &NewProject) -> Result<(PathBuf, Value)> {
    check_unit_id("project id", &n.id)?;
    let root = base(&project.root).join(&n.id);
    let p = Paths::of(&root);
    if cx.store.exists(&p.project) || cx.store.exists(&p.tasks) {
        return Err(Error::Rule(format!("`{}` already exists", root.display())));
    }
    let now = cx.store.clock().stamp();
    let mut record = Map::new();
    record.insert("id".into(), json!(n.id));
    record.insert("name".into(), json!(n.name.clone().unwrap_or(n.id.clone())));
    if let Some(d) = &n.description {
        record.insert("description".into(), json!(d));
    }
    record.insert("status".into(), json!("active"));
    if let Some(ph) = &n.phase {
        record.insert("phase".into(), json!(ph));
    }
    record.insert("created_at".into(), json!(now));
    record.insert("updated_at".into(), json!(now));
    record.insert("current_task".into(), Value::Null);
    let record = Value::Object(record);
    cx.store.create_dir_all(&root)?;
    cx.store.with_lock(&p.lock(), || {
        for dir in [&p.research, &p.checkpoints, &p.temp] {
            cx.store.create_dir_all(dir)?;
        }
        files::write_json(cx, &p, &p.project, SCHEMA_PROJECT, &record, None)?;
        files::write_json(cx, &p, &p.tasks, SCHEMA_TASKS, &json!({"tasks": []}), None)?;
        if !cx.store.exists(&p.log) {
            cx.store
                .append(&p.log, files::log_header(&root).as_bytes())?;
        }
        let v = log::velocity(&[], &now);
        files::write_json(cx, &p, &p.velocity, SCHEMA_VELOCITY, &v, None)?;
        Ok(())
    })?;
    Ok((root, record))
}

/// What `projects add` adds.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    pub id: String,
    pub title: String,
    pub estimate: Option<f64>,
    pub priority: Option<String>,
    pub parent: Option<String>,
    pub depends: Vec<String>,
    pub phase: Option<String>,
    pub level: Option<String>,
}

/// The level below `level` in seed 000's hierarchy.
fn level_below(level: &str) -> Option<&'static str> {
    match level {
        "epic" => Some("story"),
        "story" => Some("task"),
        "task" => Some("subtask"),
        "subtask" | "micro-task" => Some("micro-task"),
        _ => None,
    }
}

/// Appends a task; with `parent`, decomposes it: the parent's `subtasks` gains the child and
/// the parent moves to IN_PROGRESS (TASK_STARTED). Returns the task as written.
pub fn add(cx: &Ctx, project: &Project, store_id: &str, n: &NewTask) -> Result<Value> {
    let store = store_ref(cx, project, store_id)?;
    check_unit_id("task id", &n.id)?;
    let p = Paths::of(&store.root);
    cx.store.with_lock(&p.lock(), || {
        let mut t = files::load(cx, &p)?;
        let doc = &mut t.doc;
        if model::find(doc, &n.id).is_some() {
            return Err(Error::Rule(format!(
                "task {} already exists in {store_id}",
                n.id
            )));
        }
        for d in &n.depends {
            if d == &n.id {
                return Err(Error::Rule(format!(
                    "task {} cannot depend on itself",
                    n.id
                )));
            }
            if model::find(doc, d).is_none() {
                return Err(Error::Rule(format!(
                    "unknown dependency {d:?} of task {}: not a task of {store_id}",
                    n.id
                )));
            }
        }
        let parent = match &n.parent {
            Some(pid) => Some(model::find(doc, pid).cloned().ok_or_else(|| {
                Error::Rule(format!("unknown parent {pid:?}: not a task of {store_id}"))
            })?),
            None => None,
        };
        let now = cx.store.clock().stamp();
        let mut task = Map::new();
        task.insert("id".into(), json!(n.id));
        task.insert("title".into(), json!(n.title));
        let level = n.level.clone().or_else(|| {
            parent
                .as_ref()
                .and_then(|p| p["level"].as_str())
                .and_then(level_below)
                .map(str::to_string)
        });
        if let Some(l) = level {
            task.insert("level".into(), json!(l));
        }
        task.insert("status".into(), json!(PENDING));
        if let Some(pr) = &n.priority {
            let v = pr.parse::<i64>().map_or_else(|_| json!(pr), |n| json!(n));
            task.insert("priority".into(), v);
        }
        let phase = n.phase.clone().or_else(|| {
            parent
                .as_ref()
                .and_then(|p| model::phase(p))
                .map(str::to_string)
        });
        if let Some(ph) = phase {
            task.insert("phase".into(), json!(ph));
        }
        task.insert("parent_id".into(), json!(n.parent));
        task.insert("subtasks".into(), json!([]));
        task.insert("dependencies".into(), json!(n.depends));
        if let Some(e) = n.estimate {
            task.insert("estimate_minutes".into(), model::num(e));
        }
        task.insert("actual_minutes".into(), Value::Null);
        task.insert("created_at".into(), json!(now));
        task.insert("started_at".into(), Value::Null);
        task.insert("completed_at".into(), Value::Null);
        task.insert("blocked_reason".into(), Value::Null);
        let task = Value::Object(task);
        crate::layouts::json::ensure_array(&mut doc["tasks"]).push(task.clone());
        let mut entries = Vec::new();
        if let Some(pid) = &n.parent {
            if let Some(i) = model::index(doc, pid) {
                let from = model::status(&doc["tasks"][i]).to_string();
                if let Some(m) = doc["tasks"][i].as_object_mut() {
                    crate::layouts::json::array_at(m, "subtasks").push(json!(n.id));
                    if from != IN_PROGRESS {
                        m.insert("status".into(), json!(IN_PROGRESS));
                        if m.get("started_at").is_none_or(Value::is_null) {
                            m.insert("started_at".into(), json!(now));
                        }
                        if from == model::COMPLETE {
                            m.insert("completed_at".into(), Value::Null);
                            m.insert("actual_minutes".into(), Value::Null);
                        }
                        entries.push(
                            Entry::task(&now, log::TASK_STARTED, pid, &from, IN_PROGRESS)
                                .detail("Detail", format!("decomposed: new subtask {}", n.id)),
                        );
                    }
                }
            }
        }
        let change = Change {
            entries,
            tasks_changed: true,
            task: Some((n.id.clone(), "(new)".into(), PENDING.into())),
            ..Default::default()
        };
        files::commit(cx, &p, &t, &change)?;
        Ok(task)
    })
}

/// `projects start`: the launch step by hand; a refusal is an error.
pub fn start(cx: &Ctx, project: &Project, store_id: &str, task: &str) -> Result<Acted> {
    let store = store_ref(cx, project, store_id)?;
    let a = steps::act(cx, &store, task, Action::Start)?;
    match &a.outcome.refused {
        Some(why) => Err(Error::Rule(why.clone())),
        None => Ok(a),
    }
}

/// A status as given on the command line (case ignored).
pub fn parse_status(s: &str) -> Result<&'static str> {
    let up = s.trim().to_ascii_uppercase();
    STATUSES
        .iter()
        .copied()
        .find(|st| *st == up)
        .ok_or_else(|| {
            Error::Usage(format!(
                "unknown status {s:?}: one of {}",
                STATUSES.join(", ")
            ))
        })
}

/// `projects set`: a person sets a status; only a parent's COMPLETE before its subtasks is
/// refused.
pub fn set(
    cx: &Ctx,
    project: &Project,
    store_id: &str,
    task: &str,
    status: &str,
    reason: Option<&str>,
) -> Result<Acted> {
    let store = store_ref(cx, project, store_id)?;
    let status = parse_status(status)?;
    let a = steps::act(cx, &store, task, Action::Set(status, reason))?;
    match &a.outcome.refused {
        Some(why) => Err(Error::Rule(why.clone())),
        None => Ok(a),
    }
}

/// What `projects next` answers.
#[derive(Debug, Clone)]
pub struct Next {
    /// The next ready task, when one is.
    pub task: Option<Value>,
    /// Every ready task, in order.
    pub ready: Vec<String>,
    /// What the rest waits for, when nothing is ready.
    pub hint: String,
}

/// `projects next`: the next ready task (BLOCKED tasks are skipped until a person acts).
pub fn next(cx: &Ctx, project: &Project, store_id: &str) -> Result<Next> {
    let store = store_ref(cx, project, store_id)?;
    let t = files::load(cx, &Paths::of(&store.root))?;
    let ready = model::ready(&t.doc);
    let task = ready
        .first()
        .and_then(|id| model::find(&t.doc, id))
        .cloned();
    let hint = steps::next_hint(&t.doc).trim().to_string();
    Ok(Next { task, ready, hint })
}

/// `projects log`: appends an entry that changes no status: SYNC_TO_{PLATFORM} (with the
/// external id, also kept in the task's `external_ids`), ERROR, LOOP_ITERATION. Returns it.
pub fn append_entry(
    cx: &Ctx,
    project: &Project,
    store_id: &str,
    event: &str,
    task: Option<&str>,
    detail: Option<&str>,
) -> Result<Entry> {
    let store = store_ref(cx, project, store_id)?;
    let event = event.trim().to_ascii_uppercase();
    let sync = log::is_sync(&event);
    if !sync && event != log::ERROR && event != log::LOOP_ITERATION {
        let how = match event.as_str() {
            log::TASK_STARTED => "`taskhook projects start`",
            log::TASK_COMPLETE | log::TASK_BLOCKED | log::TASK_RESEARCHED => {
                "`taskhook projects set ID TASK STATUS`"
            }
            _ => "",
        };
        return Err(Error::Usage(if how.is_empty() {
            format!("`projects log` writes SYNC_TO_{{PLATFORM}}, ERROR or LOOP_ITERATION entries, not {event:?}")
        } else {
            format!("{event} records a status change: use {how}, which logs it")
        }));
    }
    let detail = detail.map(str::trim).filter(|d| !d.is_empty());
    if (sync || event == log::ERROR) && detail.is_none() {
        return Err(Error::Usage(format!(
            "{event} needs --detail ({})",
            if sync {
                "the external id"
            } else {
                "the error message"
            }
        )));
    }
    if event == log::LOOP_ITERATION && task.is_none() {
        return Err(Error::Usage("LOOP_ITERATION needs --task".into()));
    }
    let p = Paths::of(&store.root);
    cx.store.with_lock(&p.lock(), || {
        let mut t = files::load(cx, &p)?;
        let now = cx.store.clock().stamp();
        let mut entry = match task {
            Some(id) => {
                let st = model::find(&t.doc, id)
                    .map(model::status)
                    .ok_or_else(|| Error::Rule(format!("there is no task {id} in {store_id}")))?
                    .to_string();
                Entry::task(&now, &event, id, &st, &st)
            }
            None => Entry::new(&now, &event),
        };
        let label = match event.as_str() {
            _ if sync => "External ID",
            log::ERROR => "Error",
            _ => "Detail",
        };
        if let Some(d) = detail {
            entry = entry.detail(label, d);
        }
        let mut changed = false;
        if let (true, Some(id), Some(ext)) = (sync, task, detail) {
            let platform = event.trim_start_matches("SYNC_TO_").to_string();
            if let Some(i) = model::index(&t.doc, id) {
                if let Some(m) = t.doc["tasks"][i].as_object_mut() {
                    let ids = crate::layouts::json::object_at(m, "external_ids");
                    changed = ids.get(&platform) != Some(&json!(ext));
                    ids.insert(platform, json!(ext));
                }
            }
        }
        let change = Change {
            entries: vec![entry.clone()],
            tasks_changed: changed,
            ..Default::default()
        };
        files::commit(cx, &p, &t, &change)?;
        Ok(entry)
    })
}

/// `projects velocity`: recomputed from the log (read-only).
pub fn velocity(cx: &Ctx, project: &Project, store_id: &str) -> Result<Value> {
    let store = store_ref(cx, project, store_id)?;
    let p = Paths::of(&store.root);
    let doc = files::load(cx, &p)?.doc;
    let entries = log::parse(&files::read_log(cx, &p)?);
    Ok(log::velocity(
        &log::completions(&entries, &doc),
        &cx.store.clock().stamp(),
    ))
}
