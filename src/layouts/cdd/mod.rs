//! Layout `cdd` (seed 004): a workspace `$CDD_DIR` (env `CDD_DIR`, else `cdd_dir` in
//! `.claude/taskhook.json`, relative to the project) whose `tasks/` holds the four status
//! folders (`pending/`, `in_progress/`, `completed/`, `failed/`: a task's status is the folder
//! holding its file), `order.json` (tasks and stops, in order) and `history.jsonl` (the
//! append-only audit log; a stop's status is its last `stop_*` event). `tmp/` is the seed's
//! scratch folder; everything else in `$CDD_DIR` is ignored.
//!
//! The rooms (the same in every layout): [`model`] (the status folders, one read of the
//! workspace, each task's status, `next`), [`lifecycle`] (a task's step: launches and signals
//! through the commands' own moves), [`log`] (history.jsonl: reading it, writing lines in the
//! seed's shape), [`hooks`] (Bash calls of subagents and of the orchestrator, edits of
//! order.json), [`reconcile`] (SessionStart: folders checked against order.json and the
//! history, repaired, halts kept in step with the stops; `recover`), [`summary`],
//! [`commands`] (the moving commands, each move one rename plus one history line under the
//! workspace lock) with [`report`] (`list`, `stats`) and [`outcome`] (what each answers,
//! typed), [`work`] (the agent's verbs). Its own: [`order`] (order.json, the escalation
//! ladder), [`error`] (the failure codes).

pub mod commands;
pub mod error;
pub mod hooks;
pub mod lifecycle;
pub mod log;
pub mod model;
pub mod order;
pub mod outcome;
pub mod reading;
pub mod reconcile;
pub mod report;
pub mod summary;
pub mod work;

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::env::CDD_DIR;
use crate::error::Result;
use crate::layouts::fact::{Fact, Start};
use crate::layouts::{
    name_of, Input, Layout, Reaction, Reconciled, Shown, StateFile, StoreRef, Summary, Turn, Unit,
    WorkUnit,
};
use crate::project::Project;
use crate::store::{check_id, folder_lock_path, sanitize_id, unsafe_id};

use error::{CResult, Code, Failure};
pub use model::{Folder, FOLDERS};
use model::{Status, Workspace};

/// The layout's name.
pub const NAME: &str = "cdd";

/// Names the workspace uses itself, in `tasks/` or beside it: no task may take one (compared
/// without case, as macOS and Windows do).
const OWN_NAMES: [&str; 8] = [
    "order.json",
    "history.jsonl",
    "pending",
    "in_progress",
    "completed",
    "failed",
    "tmp",
    "tasks",
];

/// Beginnings of the names of the workspace files' copies (`order.json.tmp`,
/// `history.jsonl.corrupt-…`). taskhook's own lock and temp files start with `.`, which
/// [`check_id`] refuses.
const OWN_PREFIXES: [&str; 2] = ["order.json.", "history.jsonl."];

/// Checks a task's name, which is its file's name in a status folder: a safe file name
/// ([`check_id`]) that is none of the workspace's own names.
pub fn check_task_name(name: &str) -> Result<&str> {
    check_id("task name", name)?;
    // ASCII (a listing's names, thousands of them) compared without a lowered copy; other
    // names lowered in full, as a character may lower to ASCII.
    let own = |name: &str| {
        OWN_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n))
            || OWN_PREFIXES.iter().any(|p| {
                name.get(..p.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(p))
            })
    };
    let is_own = if name.is_ascii() {
        own(name)
    } else {
        own(&name.to_lowercase())
    };
    if is_own {
        return Err(unsafe_id(
            "task name",
            name,
            "it is a name the workspace uses itself (order.json, history.jsonl and their copies order.json.* and history.jsonl.*, the folders pending, in_progress, completed, failed, tmp and tasks)",
        ));
    }
    Ok(name)
}

/// The files of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$CDD_DIR`.
    pub ws: PathBuf,
    /// `$CDD_DIR/tasks`, the store's root.
    pub tasks: PathBuf,
    pub order: PathBuf,
    pub history: PathBuf,
    /// `$CDD_DIR/tmp`.
    pub tmp: PathBuf,
    /// `tasks/.taskhook.lock`, held by every write.
    pub lock: PathBuf,
}

impl Paths {
    pub fn of(ws: &Path) -> Paths {
        let tasks = ws.join("tasks");
        Paths {
            ws: ws.to_path_buf(),
            order: tasks.join("order.json"),
            history: tasks.join("history.jsonl"),
            tmp: ws.join("tmp"),
            lock: folder_lock_path(&tasks),
            tasks,
        }
    }

    /// The paths of a store found by [`Layout::discover`].
    pub fn of_store(store: &StoreRef) -> Paths {
        Paths::of(store.root.parent().unwrap_or(&store.root))
    }

    /// A status folder.
    pub fn folder(&self, f: Folder) -> PathBuf {
        self.tasks.join(f.as_str())
    }

    /// A task's file in a status folder.
    pub fn file(&self, f: Folder, name: &str) -> PathBuf {
        self.folder(f).join(name)
    }

    /// The workspace's name: its folder's (the `STORE` of `STORE/NAME`, and of halt keys).
    pub fn id(&self) -> String {
        sanitize_id(&name_of(&self.ws))
    }
}

/// The workspace of a project: `CDD_DIR`, else `cdd_dir` in `.claude/taskhook.json`, each
/// relative to the project folder when relative (so a command run from a subfolder, or a hook
/// of a subagent working there, finds the same workspace).
pub fn locate(cx: &Ctx, project: &Project) -> CResult<Paths> {
    if let Some(dir) = cx.env.get_os(CDD_DIR) {
        let ws = project.root.join(dir);
        // What the environment names is the user's choice (see Ctx::new).
        cx.store.trust(&ws, false);
        return Ok(Paths::of(&ws));
    }
    let config = project
        .config(&cx.store)
        .map_err(|e| Failure::new(Code::ConfigInvalid, e.one_line()))?;
    match config.cdd_dir.as_deref().filter(|d| !d.is_empty()) {
        Some(dir) => Ok(Paths::of(&project.root.join(dir))),
        None => Err(Failure::new(
            Code::CddDirNotSet,
            "CDD_DIR is not set (export CDD_DIR=/path/to/workspace, or set \"cdd_dir\" in .claude/taskhook.json)",
        )),
    }
}

/// The store of a located workspace.
pub fn store_ref(paths: &Paths, project: &Project) -> StoreRef {
    StoreRef::new(NAME, paths.id(), paths.tasks.clone(), &project.root)
}

/// Whether a task of the order is still to do: its file is not in completed/ or failed/.
fn active(ws: &Workspace, name: &str) -> bool {
    !matches!(
        ws.status(name),
        Status::In(Folder::Completed | Folder::Failed)
    )
}

/// The layout.
pub struct Cdd;

/// The registered instance.
pub static LAYOUT: Cdd = Cdd;

/// Whether `path` looks like a workspace's order.json or history.jsonl.
fn is_state_path(path: &str) -> bool {
    let p = Path::new(path);
    p.file_name()
        .is_some_and(|n| n == "order.json" || n == "history.jsonl")
        && p.parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "tasks")
}

impl Layout for Cdd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn wants(&self, fact: &Fact<'_>) -> bool {
        match fact {
            Fact::SessionStart(_) => true,
            Fact::Edit(path) => is_state_path(path),
            Fact::Bash(b) => hooks::wants_bash(b),
            _ => false,
        }
    }

    fn discover(&self, cx: &Ctx, project: &Project) -> Result<Vec<StoreRef>> {
        let paths = match locate(cx, project) {
            Ok(p) => p,
            Err(f) if f.code == Code::CddDirNotSet => return Ok(Vec::new()),
            Err(f) => return Err(f.into()),
        };
        if !cx.store.is_dir(&paths.tasks) {
            return Ok(Vec::new());
        }
        Ok(vec![store_ref(&paths, project)])
    }

    fn discover_for(&self, cx: &Ctx, project: &Project, fact: &Fact<'_>) -> Result<Vec<StoreRef>> {
        // A subagent's state-changing Bash call is refused even where no workspace is found:
        // it could point CDD_DIR anywhere itself.
        if let Fact::Bash(b) = fact {
            if b.stdout.is_none() {
                let found = self.discover(cx, project).unwrap_or_default();
                return Ok(if found.is_empty() {
                    vec![StoreRef::new(NAME, "", PathBuf::new(), &project.root)]
                } else {
                    found
                });
            }
        }
        self.discover(cx, project)
    }

    fn state_files(&self, _cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>> {
        let p = Paths::of_store(store);
        Ok(vec![
            StateFile::doc(p.order, order::SCHEMA),
            StateFile {
                path: p.history,
                schema: log::SCHEMA,
                json_lines: true,
            },
        ])
    }

    fn summarize(&self, cx: &Ctx, store: &StoreRef) -> Result<Summary> {
        let paths = Paths::of_store(store);
        Ok(match Workspace::load(cx, &paths) {
            Ok(ws) => summary::summarize(&ws),
            Err(f) => Summary::problem(NAME, &store.id, store.root.clone(), f.to_string()),
        })
    }

    fn reconcile(&self, cx: &Ctx, store: &StoreRef, start: Option<Start>) -> Result<Reconciled> {
        reconcile::reconcile(cx, store, &store.project, start)
    }

    fn work(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<WorkUnit>> {
        work::work(cx, store)
    }

    fn show(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Shown> {
        work::show(cx, store, unit)
    }

    fn release(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Reaction> {
        work::release(cx, store, unit)
    }

    fn note(&self, cx: &Ctx, store: &StoreRef, unit: &str, text: &str) -> Result<()> {
        work::note(cx, store, unit, text)
    }

    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let ws = Workspace::peek(cx, &Paths::of_store(store)).map_err(crate::error::Error::from)?;
        Ok(ws
            .order
            .iter()
            .flat_map(|o| o.tasks())
            .map(|t| Unit::new(&t.name, active(&ws, &t.name)))
            .collect())
    }

    fn unit_status(&self, cx: &Ctx, store: &StoreRef, unit: &str) -> Result<Option<String>> {
        // One task's status from the shared look, not every task's.
        let ws = Workspace::peek(cx, &Paths::of_store(store)).map_err(crate::error::Error::from)?;
        let known = ws.order.as_ref().is_some_and(|o| o.task(unit).is_some());
        Ok(Some(
            match (known, active(&ws, unit)) {
                (false, _) => "gone",
                (true, false) => "inactive",
                (true, true) => "active",
            }
            .to_string(),
        ))
    }

    fn step(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        input: Input<'_>,
        _turn: &Turn<'_>,
    ) -> Result<Reaction> {
        // Signals apply whoever sends them (CONTRACT §4), and nothing here asks for another pass.
        lifecycle::step(cx, store, unit, input)
    }

    fn log_error(&self, cx: &Ctx, store: &StoreRef, message: &str) -> Result<()> {
        let paths = Paths::of_store(store);
        commands::locked(cx, &paths, || {
            log::Line::event(cx, "error")
                .with("message", message)
                .append(cx, &paths.history)
        })
        .map_err(Into::into)
    }

    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        reconcile::recover(cx, store)
    }

    fn on_fact(&self, cx: &Ctx, store: &StoreRef, fact: &Fact<'_>) -> Result<Reaction> {
        match fact {
            Fact::Bash(b) => hooks::on_bash(cx, store, b),
            Fact::Edit(path) => hooks::on_edit(cx, store, path),
            _ => Ok(Reaction::default()),
        }
    }
}
