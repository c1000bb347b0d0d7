//! One read of a workspace: `order.json`, `history.jsonl` and the four status folders, and what
//! follows from them: each task's status (the folder holding its file), each stop's (its last
//! `stop_*` event), and what `next` answers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::error::{CResult, Code, Failure};
use super::history::{self, History, StopState};
use super::order::{Item, Order, Stop, Task};
use super::{check_task_name, Folder, Paths, FOLDERS};
use crate::context::Ctx;
use crate::store::parse_json;

/// Where a task's file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// In exactly one status folder.
    In(Folder),
    /// In several (SessionStart repairs it from the history).
    Several(Vec<Folder>),
    /// Not in a status folder; the file waits in `tasks/` for `import`.
    NotImported,
    /// Nowhere.
    Missing,
}

impl Status {
    /// The status as `list` and `stats` name it.
    pub fn name(&self) -> &'static str {
        match self {
            Status::In(f) => f.as_str(),
            Status::Several(_) => "conflict",
            Status::NotImported => "not_imported",
            Status::Missing => "missing",
        }
    }
}

/// What `next` answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Task(Task, Folder),
    Stop(Stop, StopState),
    Done,
}

/// A workspace as read.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub paths: Paths,
    /// `None` when there is no order.json yet.
    pub order: Option<Order>,
    pub history: History,
    /// File name → the status folders holding it (task names only: [`check_task_name`]).
    pub files: BTreeMap<String, Vec<Folder>>,
    /// Files directly in `tasks/` (waiting for import; never order.json or history.jsonl).
    pub loose: BTreeSet<String>,
}

/// Largest order.json read.
pub const MAX_ORDER_BYTES: usize = 16 * 1024 * 1024;

/// Reads and checks an order file; `None` when missing.
pub fn read_order(cx: &Ctx, path: &std::path::Path) -> CResult<Option<Order>> {
    let Some(bytes) = cx.store.read_capped(path, MAX_ORDER_BYTES)? else {
        return Ok(None);
    };
    let fix = "; fix it (`taskhook schema cdd-order` shows the format) or import the order again";
    let doc = parse_json(&bytes).map_err(|why| {
        Failure::new(
            Code::InvalidOrder,
            format!("`{}` is {why}{fix}", path.display()),
        )
    })?;
    Order::parse(doc, &format!("`{}`", path.display()))
        .map(Some)
        .map_err(|f| Failure::new(f.code, format!("{}{fix}", f.message)))
}

/// The failure of a command on a workspace that has no `tasks/` yet.
pub fn not_initialized(paths: &Paths) -> Failure {
    Failure::new(
        Code::NotInitialized,
        format!(
            "`{}` does not exist; run `taskhook cdd init`",
            paths.tasks.display()
        ),
    )
}

impl Workspace {
    /// Reads the workspace; `tasks/` must exist.
    pub fn load(cx: &Ctx, paths: &Paths) -> CResult<Workspace> {
        if !cx.store.is_dir(&paths.tasks) {
            return Err(not_initialized(paths));
        }
        let order = read_order(cx, &paths.order)?;
        let history = history::read(cx, &paths.history)?;
        let mut files: BTreeMap<String, Vec<Folder>> = BTreeMap::new();
        for f in FOLDERS {
            for e in cx.store.list_dir(&paths.folder(f))? {
                if !e.is_dir && check_task_name(&e.name).is_ok() {
                    files.entry(e.name).or_default().push(f);
                }
            }
        }
        let loose = cx
            .store
            .list_dir(&paths.tasks)?
            .into_iter()
            .filter(|e| !e.is_dir && check_task_name(&e.name).is_ok())
            .map(|e| e.name)
            .collect();
        Ok(Workspace {
            paths: paths.clone(),
            order,
            history,
            files,
            loose,
        })
    }

    /// A command's `data` with `warnings` added when there is something to warn of (history
    /// lines no event can be read from).
    pub fn warned(&self, mut data: Value) -> Value {
        if let (Some(w), Some(m)) = (
            history::bad_lines_warning(&self.history, &self.paths.tasks),
            data.as_object_mut(),
        ) {
            m.insert("warnings".into(), Value::Array(vec![Value::String(w)]));
        }
        data
    }

    /// The order, which must exist.
    pub fn order(&self) -> CResult<&Order> {
        self.order.as_ref().ok_or_else(|| {
            Failure::new(
                Code::NoOrder,
                format!(
                    "`{}` does not exist; write it and run `taskhook cdd import` (or `taskhook cdd import PATH`)",
                    self.paths.order.display()
                ),
            )
        })
    }

    /// The task `name` of the order.
    pub fn task(&self, name: &str) -> CResult<&Task> {
        check_task_name(name)?;
        self.order()?.task(name).ok_or_else(|| {
            Failure::new(
                Code::NotFound,
                format!("{name:?} is not a task of `{}`", self.paths.order.display()),
            )
        })
    }

    /// Where a task's file is.
    pub fn status(&self, name: &str) -> Status {
        match self.files.get(name).map(Vec::as_slice) {
            Some([one]) => Status::In(*one),
            Some(many) if !many.is_empty() => Status::Several(many.to_vec()),
            _ if self.loose.contains(name) => Status::NotImported,
            _ => Status::Missing,
        }
    }

    /// The tasks of the order in folder `f`.
    pub fn in_folder(&self, f: Folder) -> Vec<&Task> {
        self.order
            .iter()
            .flat_map(Order::tasks)
            .filter(|t| self.status(&t.name) == Status::In(f))
            .collect()
    }

    /// The first stop before `task` in the order that has not been passed.
    pub fn stop_before(&self, task: &Task) -> Option<&Stop> {
        self.order
            .iter()
            .flat_map(Order::stops)
            .filter(|s| s.index < task.index)
            .find(|s| self.history.stop_state(&s.id) != StopState::Passed)
    }

    /// What `next` answers: a task already in progress first, else in order the first entry
    /// that is not done: a pending task, or a stop not passed. Completed and failed tasks are
    /// skipped; a task not imported, or in several folders, is an error where it is reached.
    pub fn next(&self) -> CResult<Next> {
        let order = self.order()?;
        if let Some(t) = order
            .tasks()
            .find(|t| self.status(&t.name) == Status::In(Folder::InProgress))
        {
            return Ok(Next::Task(t.clone(), Folder::InProgress));
        }
        for item in &order.items {
            match item {
                Item::Stop(s) => {
                    let state = self.history.stop_state(&s.id);
                    if state != StopState::Passed {
                        return Ok(Next::Stop(s.clone(), state));
                    }
                }
                Item::Task(t) => match self.status(&t.name) {
                    Status::In(Folder::Completed | Folder::Failed) => {}
                    Status::In(f) => return Ok(Next::Task(t.clone(), f)),
                    other => return Err(self.unusable(&t.name, &other)),
                },
            }
        }
        Ok(Next::Done)
    }

    /// Why a task whose file is not in exactly one folder cannot be used.
    pub fn unusable(&self, name: &str, status: &Status) -> Failure {
        let tasks = self.paths.tasks.display();
        match status {
            Status::Several(fs) => Failure::new(
                Code::Inconsistent,
                format!(
                    "{name} is in several folders ({}); run `taskhook reconcile` (SessionStart does it) to repair it from the history",
                    fs.iter().map(|f| format!("{}/", f.as_str())).collect::<Vec<_>>().join(", ")
                ),
            ),
            Status::NotImported => Failure::new(
                Code::NotImported,
                format!("{name} is in order.json but its file is still in `{tasks}`; run `taskhook cdd import`"),
            ),
            _ => Failure::new(
                Code::NotImported,
                format!("{name} is in order.json but its file is in no folder of `{tasks}`; put it in pending/ (or beside order.json and run `taskhook cdd import`)"),
            ),
        }
    }
}

/// A task as `next` and `list` show it.
pub fn task_json(t: &Task, status: &str) -> Value {
    serde_json::json!({
        "task": t.name,
        "group": t.group,
        "model": t.model,
        "thinking": t.thinking,
        "status": status,
    })
}
