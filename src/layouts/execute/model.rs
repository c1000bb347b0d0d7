//! execute-state.json as a typed model (seed 001, schema v2.0): the run, its layers, its tasks
//! (in the file's order, found by id through an index), the merge queue and the metrics, with
//! status enums instead of strings. Read with [`crate::layouts::json::typed`] from the checked
//! document and put back with [`crate::layouts::json::write_back`], so the file keeps its key
//! order; every object taskhook touches keeps the fields it does not know in `rest`. A field the
//! seed allows to be `null` is a [`Slot`]: absent, `null` or a value, each written back as found.

use std::fmt;

use crate::layouts::rest::Rest;
use crate::layouts::shared::Shared;
use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// A field that may be absent, `null` or a value: written back as it was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Slot<T> {
    #[default]
    Absent,
    Null,
    Is(T),
}

impl Slot<Box<Value>> {
    /// The value kept as written, when there is one (boxed: most tasks lack most of these
    /// fields, and an unboxed JSON value is as large as ten pointers).
    pub fn value(&self) -> Option<&Value> {
        self.get().map(|b| &**b)
    }
}

impl<T> Slot<T> {
    /// The value, when there is one.
    pub fn get(&self) -> Option<&T> {
        match self {
            Slot::Is(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the field is not in the file (it is then not written).
    pub fn is_absent(&self) -> bool {
        matches!(self, Slot::Absent)
    }

    /// Sets the value, `null` for `None`.
    pub fn set(&mut self, v: Option<T>) {
        *self = Slot::from(v);
    }

    /// Makes a value `null` (an absent or `null` field stays as it is).
    pub fn clear(&mut self) {
        if let Slot::Is(_) = self {
            *self = Slot::Null;
        }
    }
}

impl Slot<String> {
    /// The string, when there is one.
    pub fn as_deref(&self) -> Option<&str> {
        self.get().map(String::as_str)
    }

    /// The string, when there is one and it is not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.as_deref().filter(|s| !s.is_empty())
    }
}

impl<T: Serialize> Serialize for Slot<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Slot::Is(v) => v.serialize(s),
            _ => s.serialize_none(),
        }
    }
}

/// A present field: its value, or `null` for `None`.
impl<T> From<Option<T>> for Slot<T> {
    fn from(v: Option<T>) -> Self {
        match v {
            Some(v) => Slot::Is(v),
            None => Slot::Null,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(d).map(Slot::from)
    }
}

/// A record only taskhook writes (`stop`, a task's `verification`), kept as found when it is
/// not of the shape taskhook writes (an edit by hand): never a reason to refuse the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Loose<T> {
    Typed(T),
    Other(Value),
}

impl<T> Loose<T> {
    /// The record, when it has the shape taskhook writes.
    pub fn typed(&self) -> Option<&T> {
        match self {
            Loose::Typed(t) => Some(t),
            Loose::Other(_) => None,
        }
    }

    /// Whether it is an object (of taskhook's shape or not).
    pub fn is_object(&self) -> bool {
        matches!(self, Loose::Typed(_) | Loose::Other(Value::Object(_)))
    }
}

pub use crate::layouts::keyed::Keyed;

/// Whole numbers as the schema takes them: an integer, or a number with no fraction (`2.0`,
/// which JSON Schema counts as an integer too; written back as `2` when taskhook writes it).
pub(super) mod int {
    use serde::de::{Deserializer, Error};
    use serde::Deserialize;
    use serde_json::Number;

    use super::Slot;

    fn whole<E: Error>(n: &Number) -> Result<i128, E> {
        if let Some(i) = n.as_i64() {
            return Ok(i.into());
        }
        if let Some(u) = n.as_u64() {
            return Ok(u.into());
        }
        match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i128),
            _ => Err(E::custom(format!("{n} is not a whole number"))),
        }
    }

    /// A count as taskhook reads one (a whole number of at most 9e15, not negative).
    pub fn count<E: Error>(n: &Number) -> Result<u64, E> {
        u64::try_from(whole::<E>(n)?).map_err(|_| E::custom(format!("{n} is not a count")))
    }

    pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        count(&Number::deserialize(d)?)
    }

    /// `with` for an optional count.
    pub mod opt {
        use super::*;

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            Option::<Number>::deserialize(d)?
                .map(|n| count(&n))
                .transpose()
        }

        pub use crate::layouts::json::as_is as serialize;
    }

    /// `with` for a count that may be `null`.
    pub mod slot {
        use super::*;

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Slot<u64>, D::Error> {
            opt::deserialize(d).map(Slot::from)
        }

        pub use crate::layouts::json::as_is as serialize;
    }

    pub fn i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let n = Number::deserialize(d)?;
        i64::try_from(whole::<D::Error>(&n)?)
            .map_err(|_| D::Error::custom(format!("{n} is out of range")))
    }
}

/// The run's status (seed 001's global status).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    /// Stopped by the user.
    Stopped,
    /// A task failed 5 times.
    Abandoned,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::InProgress => "in_progress",
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Abandoned => "abandoned",
        }
    }
}

/// A layer's status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
}

impl LayerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerStatus::Pending => "pending",
            LayerStatus::InProgress => "in_progress",
            LayerStatus::Completed => "completed",
        }
    }
}

/// A task's status (seed 001's task lifecycle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    #[default]
    Pending,
    InProgress,
    Verifying,
    Verified,
    Merging,
    /// Merged to main.
    Completed,
    /// Failed, will retry.
    Failed,
    /// Failed 5 times.
    Abandoned,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Verifying => "verifying",
            TaskStatus::Verified => "verified",
            TaskStatus::Merging => "merging",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Abandoned => "abandoned",
        }
    }

    /// Still to be worked on (CONTRACT §4's "active").
    pub fn is_active(self) -> bool {
        !matches!(self, TaskStatus::Completed | TaskStatus::Abandoned)
    }

    /// A subagent works on it (`in_progress` or `verifying`).
    pub fn is_running(self) -> bool {
        matches!(self, TaskStatus::InProgress | TaskStatus::Verifying)
    }

    /// A launch starts a new attempt of it (`pending` or `failed`).
    pub fn starts(self) -> bool {
        matches!(self, TaskStatus::Pending | TaskStatus::Failed)
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A merge-queue entry's status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueStatus {
    #[default]
    Pending,
    Ready,
    Merging,
    Merged,
}

impl QueueStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Pending => "pending",
            QueueStatus::Ready => "ready",
            QueueStatus::Merging => "merging",
            QueueStatus::Merged => "merged",
        }
    }
}

/// The whole state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub current_layer: Slot<String>,
    #[serde(default, with = "int::slot", skip_serializing_if = "Slot::is_absent")]
    pub current_batch: Slot<u64>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub started_at: Slot<String>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub updated_at: Slot<String>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub completed_at: Slot<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<Keyed<Layer>>,
    #[serde(default)]
    pub tasks: Keyed<Task>,
    /// Shared between copies of the state until one changes it (a run's queue has an entry
    /// per task merged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_queue: Option<Shared<Vec<QueueEntry>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// taskhook: the user's stop (`taskhook execute stop`).
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub stop: Slot<Loose<Stop>>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl State {
    /// The global status (`pending` when missing).
    pub fn status(&self) -> RunStatus {
        self.status.unwrap_or_default()
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    pub fn task_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.get_mut(id)
    }

    pub fn layer(&self, key: &str) -> Option<&Layer> {
        self.layers.as_ref()?.get(key)
    }

    /// The merge queue (empty when missing).
    pub fn queue(&self) -> &[QueueEntry] {
        self.merge_queue.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The metrics (all missing when there are none).
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone().unwrap_or_default()
    }
}

/// One layer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<LayerStatus>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub tasks_total: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub tasks_completed: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub tasks_failed: Option<u64>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub started_at: Slot<String>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub completed_at: Slot<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl Layer {
    /// Its status (`pending` when missing).
    pub fn status(&self) -> LayerStatus {
        self.status.unwrap_or_default()
    }
}

/// One task. The fields most tasks lack (a failure's records, taskhook's own bookkeeping past
/// the batch, what the seed's skill writes for display) are [`Rare`]: one pointer when a task
/// has none of them (issue 23: 250 bytes less for each of 10,000 tasks), read and changed as
/// the task's own ([`std::ops::Deref`] to [`RareFields`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u64>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub worktree_path: Slot<String>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub branch: Slot<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<Vec<CommitRecord>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub merged_at: Slot<String>,
    /// taskhook: the batch of its layer it was launched in.
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    #[serde(flatten)]
    pub rare: Rare,
    #[serde(flatten)]
    pub rest: Rest,
}

/// The fields of a task most tasks lack.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RareFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ErrorRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_feedback: Option<Vec<Feedback>>,
    /// taskhook: its layer, when its id does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// taskhook: the subagent on it and the blocks it has had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<Box<Subagent>>,
    /// taskhook: earlier runs, moved here by `reset-task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets: Option<Vec<ResetRecord>>,
    /// taskhook: the verification pass asked for.
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub verification: Slot<Box<Loose<Verification>>>,
    /// Read for display only (any JSON), as the seed's skill may write them.
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub title: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub name: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub description: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub acceptance_criteria: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub files: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub dependencies: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub worktree: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub started_at: Slot<Box<Value>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub completed_at: Slot<Box<Value>>,
}

/// A task's [`RareFields`]: none (one pointer) until one is set. Reads see the fields (all
/// absent when there are none); a change makes them.
#[derive(Clone, Default)]
pub struct Rare(Option<Box<RareFields>>);

impl Rare {
    fn none() -> &'static RareFields {
        static NONE: std::sync::OnceLock<RareFields> = std::sync::OnceLock::new();
        NONE.get_or_init(RareFields::default)
    }
}

impl std::ops::Deref for Rare {
    type Target = RareFields;

    fn deref(&self) -> &RareFields {
        self.0.as_deref().unwrap_or_else(|| Rare::none())
    }
}

impl std::ops::DerefMut for Rare {
    fn deref_mut(&mut self) -> &mut RareFields {
        self.0.get_or_insert_with(Default::default)
    }
}

/// Equal when they hold the same fields (none made and none set are the same).
impl PartialEq for Rare {
    fn eq(&self, other: &Rare) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Rare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Rare {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Rare {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rare, D::Error> {
        let f = RareFields::deserialize(d)?;
        Ok(Rare((f != RareFields::default()).then(|| Box::new(f))))
    }
}

/// The task's rare fields read and changed as its own (`t.errors`, `t.layer = …`).
impl std::ops::Deref for Task {
    type Target = RareFields;

    fn deref(&self) -> &RareFields {
        &self.rare
    }
}

impl std::ops::DerefMut for Task {
    fn deref_mut(&mut self) -> &mut RareFields {
        &mut self.rare
    }
}

impl Task {
    /// Its status (`pending` when missing).
    pub fn status(&self) -> TaskStatus {
        self.status.unwrap_or_default()
    }

    /// Its attempts so far.
    pub fn attempts(&self) -> u64 {
        self.attempts.unwrap_or(0)
    }

    pub fn commits(&self) -> &[CommitRecord] {
        self.commits.as_deref().unwrap_or_default()
    }

    pub fn errors(&self) -> &[ErrorRecord] {
        self.errors.as_deref().unwrap_or_default()
    }

    pub fn feedback(&self) -> &[Feedback] {
        self.retry_feedback.as_deref().unwrap_or_default()
    }

    pub fn resets(&self) -> &[ResetRecord] {
        self.resets.as_deref().unwrap_or_default()
    }

    /// The retry feedback recorded for `attempt` (the last one given).
    pub fn feedback_for(&self, attempt: u64) -> Option<&str> {
        self.feedback()
            .iter()
            .rev()
            .find(|f| f.attempt == attempt)
            .map(|f| f.feedback.as_str())
    }

    /// The branch it is merged from: its `branch`, else `worktree-ID`.
    pub fn branch_of(&self, id: &str) -> String {
        self.branch
            .non_empty()
            .map_or_else(|| format!("worktree-{id}"), str::to_string)
    }

    /// The verification record, when it has taskhook's shape.
    pub fn verification(&self) -> Option<&Verification> {
        self.verification.get().and_then(|v| v.typed())
    }
}

/// A commit recorded against a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitRecord {
    pub hash: String,
    /// `implementation` or `fix`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// A failed attempt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorRecord {
    #[serde(deserialize_with = "int::u64")]
    pub attempt: u64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// The feedback for an attempt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    #[serde(deserialize_with = "int::u64")]
    pub attempt: u64,
    pub feedback: String,
    #[serde(flatten)]
    pub rest: Rest,
}

/// taskhook: the subagent working on a task and the hook blocks it has had in a row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subagent {
    #[serde(default)]
    pub agent_id: Slot<String>,
    #[serde(deserialize_with = "int::u64")]
    pub blocks: u64,
    #[serde(flatten)]
    pub rest: Rest,
}

/// taskhook: an earlier run of a task, kept by `reset-task`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResetRecord {
    pub reset_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ErrorRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_feedback: Option<Vec<Feedback>>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub merged_at: Slot<String>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// taskhook: the verification pass asked for a task (by a block to `asked`, or of a subagent
/// the main agent launches: `launched`, with the agents already bound then in `earlier`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    #[serde(default, skip_serializing_if = "Slot::is_absent")]
    pub asked: Slot<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<Vec<String>>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// taskhook: the user's stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// A merge-queue entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub task_id: String,
    #[serde(deserialize_with = "int::i64")]
    pub priority: i64,
    pub status: QueueStatus,
    #[serde(flatten)]
    pub rest: Rest,
}

/// The run's metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub total_tasks: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub completed_tasks: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub failed_tasks: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub total_attempts: Option<u64>,
    #[serde(default, with = "int::opt", skip_serializing_if = "Option::is_none")]
    pub total_commits: Option<u64>,
    /// A number as written (an integer stays one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_time_seconds: Option<Number>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::json::{typed, write_back};

    /// A task's rare fields cost one pointer until one is there; read or written, the task
    /// is the same JSON in the same key order, and a made but empty set equals none.
    #[test]
    fn rare_fields_cost_a_pointer_until_one_is_there() {
        assert!(
            std::mem::size_of::<Task>() <= 160,
            "{}",
            std::mem::size_of::<Task>()
        );
        let plain = r#"{"status":"completed","attempts":1,"worktree_path":null,"branch":null,"batch":1,"x":[1]}"#;
        let t: Task = serde_json::from_str(plain).unwrap();
        assert!(t.rare.0.is_none());
        assert_eq!(serde_json::to_string(&t).unwrap(), plain);
        let rare = r#"{"status":"failed","attempts":2,"errors":[{"attempt":1,"message":"red"}],"layer":"1-core","title":"T","completed_at":null,"x":true}"#;
        let mut r: Task = serde_json::from_str(rare).unwrap();
        assert!(r.rare.0.is_some());
        assert_eq!(r.layer.as_deref(), Some("1-core"));
        assert_eq!(r.errors().len(), 1);
        assert_eq!(r.completed_at, Slot::Null);
        assert_eq!(serde_json::to_string(&r).unwrap(), rare);
        let mut made = t.clone();
        made.layer = Some("x".into());
        made.layer = None;
        assert!(made.rare.0.is_some());
        assert_eq!(made, t);
        r.layer = None;
        assert_ne!(r, t);
    }

    fn seed() -> Value {
        let text = include_str!(
            "../../../tests/fixtures/schemas/execute-state/valid/seed-full-example.json"
        );
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_seed_example_round_trips_byte_for_byte() {
        let doc = seed();
        let s: State = typed(&doc).unwrap();
        assert_eq!(s.task("L2-003").unwrap().status(), TaskStatus::InProgress);
        assert_eq!(s.completed_at, Slot::Null);
        let mut again = doc.clone();
        write_back(&mut again, &s).unwrap();
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&doc).unwrap()
        );
    }

    #[test]
    fn whole_numbers_written_with_a_fraction_are_read() {
        let doc = serde_json::json!({"status": "pending", "current_batch": 2.0,
            "tasks": {"A": {"status": "failed", "attempts": 1.0}},
            "merge_queue": [{"task_id": "A", "priority": -1.0, "status": "pending"}]});
        let s: State = typed(&doc).unwrap();
        assert_eq!(s.task("A").unwrap().attempts(), 1);
        assert_eq!(
            (s.current_batch.get(), s.queue()[0].priority),
            (Some(&2), -1)
        );
        let half = serde_json::json!({"status": "pending", "tasks": {"A": {"attempts": 1.5}}});
        assert!(typed::<State>(&half).is_err());
    }

    #[test]
    fn absent_null_and_values_stay_as_written() {
        let text = r#"{"z":{"k":1},"status":"pending","tasks":{"A":{"x":null,"branch":null,"status":"failed","verification":{"asked":7},"attempts":2}},"current_batch":null,"metrics":{"elapsed_time_seconds":1.5}}"#;
        let mut doc: Value = serde_json::from_str(text).unwrap();
        let mut s: State = typed(&doc).unwrap();
        assert_eq!(s.current_layer, Slot::Absent);
        assert_eq!(s.current_batch, Slot::Null);
        let t = s.task("A").unwrap();
        assert!(t.verification.get().is_some_and(|v| v.is_object()) && t.verification().is_none());
        write_back(&mut doc, &s).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), text);
        s.tasks.get_mut("A").unwrap().attempts = Some(3);
        s.current_batch.set(Some(2));
        write_back(&mut doc, &s).unwrap();
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            text.replace(r#""attempts":2"#, r#""attempts":3"#)
                .replace(r#""current_batch":null"#, r#""current_batch":2"#)
        );
    }
}
