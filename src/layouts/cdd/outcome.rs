//! What each of the seed's commands answers: the `data` of `{"success":true,"data":…}`, typed.
//! Serialized, each is the JSON object the orchestrator parses (keys in this order); the
//! `--human` printer and the hooks read the same fields.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::order::Task;

/// A command's answer with the workspace's warnings (history lines it could not read) after it.
#[derive(Debug, Clone, Serialize)]
pub struct Data<T> {
    #[serde(flatten)]
    pub body: T,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl<T> Data<T> {
    /// An answer with no warnings.
    pub fn plain(body: T) -> Data<T> {
        Data {
            body,
            warnings: Vec::new(),
        }
    }
}

/// Any command's answer, as the CLI prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    Init(Init),
    Import(Data<Import>),
    Next(Data<Next>),
    Start(Data<Started>),
    Moved(Data<Moved>),
    Escalated(Data<Escalated>),
    Continue(Data<Continued>),
    List(Data<List>),
    Stats(Data<Box<Stats>>),
}

impl Outcome {
    /// The workspace's warnings that came with the answer.
    pub fn warnings(&self) -> &[String] {
        match self {
            Outcome::Init(_) => &[],
            Outcome::Import(d) => &d.warnings,
            Outcome::Next(d) => &d.warnings,
            Outcome::Start(d) => &d.warnings,
            Outcome::Moved(d) => &d.warnings,
            Outcome::Escalated(d) => &d.warnings,
            Outcome::Continue(d) => &d.warnings,
            Outcome::List(d) => &d.warnings,
            Outcome::Stats(d) => &d.warnings,
        }
    }
}

/// One task of the order with its status.
#[derive(Debug, Clone, Serialize)]
pub struct TaskLine {
    pub task: String,
    pub group: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub status: String,
}

impl TaskLine {
    pub fn of(t: &Task, status: &str) -> TaskLine {
        TaskLine {
            task: t.name.clone(),
            group: t.group.as_deref().map(str::to_string),
            model: t.model.as_deref().map(str::to_string),
            thinking: t.thinking.as_deref().map(str::to_string),
            status: status.to_string(),
        }
    }
}

/// `init`.
#[derive(Debug, Clone, Serialize)]
pub struct Init {
    pub workspace: PathBuf,
    pub tasks: PathBuf,
    pub created: Vec<PathBuf>,
}

/// `import`.
#[derive(Debug, Clone, Serialize)]
pub struct Import {
    pub imported: Vec<String>,
    pub already_imported: Vec<String>,
    pub order: PathBuf,
    pub tasks: usize,
    pub stops: usize,
}

/// `next`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Next {
    Task(TaskLine),
    Stop {
        stop: String,
        message: Option<String>,
    },
    Done,
}

/// `start`: the task as it now is, and the move.
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    #[serde(flatten)]
    pub task: TaskLine,
    pub from: String,
    pub to: String,
}

/// `done` and `fail` (and `escalate` past the top, with `level: null`).
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub task: String,
    pub from: String,
    pub to: String,
    pub elapsed_seconds: Option<i64>,
    /// `fail` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Option<String>>,
    /// `escalate` past the top only: always `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Option<usize>>,
}

/// `escalate`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Escalated {
    /// Past the top of the ladder: moved to failed/.
    Failed(Moved),
    /// One rung up, back in pending/.
    Up {
        task: String,
        level: usize,
        from: String,
        to: String,
        from_model: Option<String>,
        from_thinking: String,
        to_model: String,
        to_thinking: String,
        reason: Option<String>,
    },
}

/// `continue`.
#[derive(Debug, Clone, Serialize)]
pub struct Continued {
    pub stop: String,
    pub passed: bool,
    /// Absent when the stop is no longer in the order (only its halt was lifted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_passed: Option<bool>,
    pub halt_lifted: bool,
}

/// One stop of the order with its state (`list`).
#[derive(Debug, Clone, Serialize)]
pub struct StopLine {
    pub stop: String,
    pub message: Option<String>,
    pub status: String,
}

/// `list`.
#[derive(Debug, Clone, Serialize)]
pub struct List {
    pub tasks: Vec<TaskLine>,
    pub count: usize,
    /// Without a STATUS only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stops: Option<Vec<StopLine>>,
}

/// `stats`.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub tasks: usize,
    /// Tasks per status, the four folders first.
    pub counts: Map<String, Value>,
    pub in_progress: Vec<String>,
    pub elapsed_seconds: Elapsed,
    pub escalations: Escalations,
    pub stops: Stops,
    pub problems: Vec<String>,
}

/// Seconds spent, whole numbers when they are.
#[derive(Debug, Clone, Serialize)]
pub struct Elapsed {
    pub total: Value,
    pub completed: Value,
    pub failed: Value,
    pub per_task: BTreeMap<String, Value>,
}

/// Escalations per level.
#[derive(Debug, Clone, Serialize)]
pub struct Escalations {
    pub total: usize,
    pub by_level: BTreeMap<usize, u64>,
    pub failed_at_max_level: usize,
}

/// The stops by state.
#[derive(Debug, Clone, Serialize)]
pub struct Stops {
    pub total: usize,
    pub passed: Vec<String>,
    pub waiting: Vec<String>,
    pub ahead: Vec<String>,
}
