//! What `taskhook projects …` does, so the CLI only parses and prints: create a project, add a
//! task (decomposing its parent), start one, set a status by hand, name the next task, append a
//! log entry (SYNC_TO_{PLATFORM} with its external id), and recompute velocity from the log.
//! Transitions go through the same step as hooks ([`super::steps::act`]).

use std::path::PathBuf;
use std::rc::Rc;

use serde_json::{json, Value};

use super::files::{self, to_doc, Change, Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};
use super::hooks;
use super::lifecycle::Action;
use super::log::{self, Entry};
use super::model::{self, Priority, ProjectRecord, Status, Task, TaskList, Velocity};
use super::save;
use super::steps::{self, Acted};
use super::velocity;
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
pub fn create(cx: &Ctx, project: &Project, n: &NewProject) -> Result<(PathBuf, ProjectRecord)> {
    check_unit_id("project id", &n.id)?;
    let root = base(&project.root).join(&n.id);
    let p = Paths::of(&root);
    if cx.store.exists(&p.project) || cx.store.exists(&p.tasks) {
        return Err(Error::Rule(format!("`{}` already exists", root.display())));
    }
    let now = cx.store.clock().stamp();
    let record = ProjectRecord {
        id: n.id.clone(),
        name: Some(n.name.clone().unwrap_or(n.id.clone())),
        description: n.description.clone(),
        status: Some("active".to_string()),
        phase: n.phase.clone(),
        created_at: Some(now.clone()),
        updated_at: Some(now.clone()),
        current_task: Some(None),
        rest: Default::default(),
    };
    cx.store.create_dir_all(&root)?;
    cx.store.with_lock(&p.lock(), || {
        for dir in [&p.research, &p.checkpoints, &p.temp] {
            cx.store.create_dir_all(dir)?;
        }
        files::write_json(cx, &p, &p.project, SCHEMA_PROJECT, &to_doc(&record), None)?;
        let tasks = to_doc(&TaskList::default());
        files::write_json(cx, &p, &p.tasks, SCHEMA_TASKS, &tasks, None)?;
        if !cx.store.exists(&p.log) {
            cx.store
                .append(&p.log, files::log_header(&root).as_bytes())?;
        }
        let v = to_doc(&velocity::velocity(&[], &now));
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
pub fn add(cx: &Ctx, project: &Project, store_id: &str, n: &NewTask) -> Result<Task> {
    let store = store_ref(cx, project, store_id)?;
    check_unit_id("task id", &n.id)?;
    let p = Paths::of(&store.root);
    cx.store.with_lock(&p.lock(), || {
        let mut t = files::load(cx, &p)?;
        let index = t.list.index();
        if index.find(&n.id).is_some() {
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
            if index.find(d).is_none() {
                return Err(Error::Rule(format!(
                    "unknown dependency {d:?} of task {}: not a task of {store_id}",
                    n.id
                )));
            }
        }
        let parent = match &n.parent {
            Some(pid) => Some(index.find(pid).ok_or_else(|| {
                Error::Rule(format!("unknown parent {pid:?}: not a task of {store_id}"))
            })?),
            None => None,
        };
        let now = cx.store.clock().stamp();
        let mut task = Task::new(&n.id, Status::Pending);
        task.title = Some(n.title.clone());
        task.level = n.level.as_deref().map(Rc::from).or_else(|| {
            parent
                .and_then(|p| p.level.as_deref())
                .and_then(level_below)
                .map(Rc::from)
        });
        task.priority = n.priority.as_ref().map(|pr| {
            pr.parse::<i64>().map_or_else(
                |_| Priority::Label(Rc::from(pr.as_str())),
                |n| Priority::Rank(n.into()),
            )
        });
        task.phase = n
            .phase
            .as_deref()
            .map(Rc::from)
            .or_else(|| parent.and_then(|p| p.phase.clone().filter(|ph| !ph.is_empty())));
        task.parent_id = Some(n.parent.as_deref().map(Rc::from));
        task.subtasks = Some(Vec::new());
        task.dependencies = Some(n.depends.clone());
        match n.estimate.map(model::num) {
            Some(Some(e)) => task.estimate_minutes = Some(e),
            // Not a JSON number: written as `null`, which the schema refuses (ERROR logged).
            Some(None) => {
                task.rest.insert("estimate_minutes".into(), Value::Null);
            }
            None => {}
        }
        task.actual_minutes = Some(None);
        task.created_at = Some(now.clone());
        task.started_at = Some(None);
        task.completed_at = Some(None);
        task.blocked_reason = Some(None);
        let parent_at = n.parent.as_ref().and_then(|pid| t.list.position(pid));
        t.list_mut().tasks.push(task.clone().into());
        let mut entries = Vec::new();
        if let (Some(pid), Some(i)) = (&n.parent, parent_at) {
            let parent = &mut t.list_mut().tasks[i];
            let from = parent.status;
            parent
                .subtasks
                .get_or_insert_with(Vec::new)
                .push(n.id.clone());
            if from != Status::InProgress {
                parent.status = Status::InProgress;
                if parent.started_at().is_none() {
                    parent.started_at = Some(Some(now.clone()));
                }
                if from == Status::Complete {
                    parent.completed_at = Some(None);
                    parent.actual_minutes = Some(None);
                }
                let in_progress = Status::InProgress.as_str();
                entries.push(
                    Entry::task(&now, log::TASK_STARTED, pid, from.as_str(), in_progress)
                        .detail("Detail", format!("decomposed: new subtask {}", n.id)),
                );
            }
        }
        let change = Change {
            entries,
            tasks_changed: true,
            task: Some((n.id.clone(), "(new)".into(), Status::Pending.to_string())),
            ..Default::default()
        };
        save::commit(cx, &p, &mut t, &change)?;
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
pub fn parse_status(s: &str) -> Result<Status> {
    Status::parse(&s.trim().to_ascii_uppercase()).ok_or_else(|| {
        let all: Vec<&str> = Status::ALL.iter().map(|st| st.as_str()).collect();
        Error::Usage(format!("unknown status {s:?}: one of {}", all.join(", ")))
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
    pub task: Option<Task>,
    /// Every ready task, in order.
    pub ready: Vec<String>,
    /// What the rest waits for, when nothing is ready.
    pub hint: String,
}

/// `projects next`: the next ready task (BLOCKED tasks are skipped until a person acts).
pub fn next(cx: &Ctx, project: &Project, store_id: &str) -> Result<Next> {
    let store = store_ref(cx, project, store_id)?;
    let (list, _) = files::read(cx, &Paths::of(&store.root))?;
    let ready = list.ready();
    let task = ready.first().and_then(|id| list.find(id)).cloned();
    let hint = hooks::next_hint(&list).trim().to_string();
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
                let st = t
                    .list
                    .status_of(id)
                    .ok_or_else(|| Error::Rule(format!("there is no task {id} in {store_id}")))?
                    .as_str();
                Entry::task(&now, &event, id, st, st)
            }
            None => Entry::new(&now, &event),
        };
        let label = match event.as_str() {
            _ if sync => log::label::EXTERNAL_ID,
            log::ERROR => "Error",
            _ => "Detail",
        };
        if let Some(d) = detail {
            entry = entry.detail(label, d);
        }
        let mut changed = false;
        if let (true, Some(id), Some(ext)) = (sync, task, detail) {
            let platform = event.trim_start_matches("SYNC_TO_").to_string();
            if let Some(i) = t.list.position(id) {
                let ids = t.list_mut().tasks[i]
                    .external_ids
                    .get_or_insert_with(Box::default);
                changed = ids.get(&platform) != Some(&json!(ext));
                ids.insert(platform, json!(ext));
            }
        }
        let change = Change {
            entries: vec![entry.clone()],
            tasks_changed: changed,
            ..Default::default()
        };
        save::commit(cx, &p, &mut t, &change)?;
        Ok(entry)
    })
}

/// `projects velocity`: recomputed from the log (read-only).
pub fn velocity(cx: &Ctx, project: &Project, store_id: &str) -> Result<Velocity> {
    let store = store_ref(cx, project, store_id)?;
    let p = Paths::of(&store.root);
    let (list, _) = files::read(cx, &p)?;
    Ok(files::recount(cx, &p, &list, &cx.store.clock().stamp())?.0)
}
