//! The project's documents as taskhook reads them, typed: the task master list
//! ([`TaskList`], `{"tasks": [...]}`), the project record ([`ProjectRecord`]) and the velocity
//! metrics ([`Velocity`]). Unknown fields (of a file and of every task) are kept in `rest`, and
//! a field absent stays absent while one written `null` stays `null` ([`present`]), so a write
//! ([`crate::layouts::json::write_back`]) changes only what taskhook changed. Pure helpers:
//! statuses, the hierarchy (`subtasks` on parents, `parent_id` as a fallback), dependencies,
//! priority, which tasks are stale, and what a phase holds. What is asked of the whole list at
//! once (a task's parent, unmet dependencies, which tasks are ready) is in `index.rs`.

use std::fmt;
use std::rc::Rc;

use crate::layouts::rest::Rest;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::graph;
use crate::layouts::json::{lenient, present};
use crate::layouts::shared::Shared;
use crate::store::clock::parse_time;

/// A task's status, uppercase as seed 000 writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    #[default]
    Pending,
    InResearch,
    Researched,
    InProgress,
    Validating,
    Complete,
    Blocked,
    Cancelled,
}

impl Status {
    /// Every status seed 000 names, in its order.
    pub const ALL: [Status; 8] = [
        Status::Pending,
        Status::InResearch,
        Status::Researched,
        Status::InProgress,
        Status::Validating,
        Status::Complete,
        Status::Blocked,
        Status::Cancelled,
    ];

    /// The status as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::InResearch => "IN_RESEARCH",
            Status::Researched => "RESEARCHED",
            Status::InProgress => "IN_PROGRESS",
            Status::Validating => "VALIDATING",
            Status::Complete => "COMPLETE",
            Status::Blocked => "BLOCKED",
            Status::Cancelled => "CANCELLED",
        }
    }

    /// The status `s` names exactly.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Finished for good: COMPLETE or CANCELLED.
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Complete | Status::Cancelled)
    }

    /// Mid-work states the seed's reconciliation resets.
    pub fn is_transitional(self) -> bool {
        matches!(
            self,
            Status::InResearch | Status::InProgress | Status::Validating
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status that may be missing (no such task) as text: `""` then.
pub fn name(s: Option<Status>) -> &'static str {
    s.map_or("", Status::as_str)
}

/// The seed's stale threshold: IN_PROGRESS for longer than this many times the estimate.
pub const STALE_FACTOR: i64 = 4;
/// The blocked reason of a task stale a second time (the seed's words).
pub const STALE_TWICE: &str = "Stale twice — requires human review";

/// A nullable field's value (`None` when absent or `null`).
fn inner<T>(v: &Option<Option<T>>) -> Option<&T> {
    v.as_ref().and_then(Option::as_ref)
}

/// The `tasks` array of a document that may not validate (recovery reads damaged files,
/// `taskhook validate` judges them).
pub fn raw_tasks(doc: &Value) -> Option<&Vec<Value>> {
    doc.get("tasks")?.as_array()
}

/// The string `id` of a task that may not validate.
pub fn raw_id(t: &Value) -> Option<&str> {
    t.get("id")?.as_str()
}

/// A task's scheduling priority: a label or a number (the seed does not fix its form).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Priority {
    Rank(Number),
    /// One copy per label in a list read whole ([`super::reading::Interning`]).
    Label(Rc<str>),
}

impl Priority {
    /// Scheduling rank, smaller first: `critical`/`urgent` 0, `high` 1, `medium` (and a label
    /// taskhook does not know) 2, `low` 3; a number (or `P0`, `p2`) ranks as itself.
    pub fn rank(&self) -> f64 {
        match self {
            Priority::Rank(n) => n.as_f64().unwrap_or(2.0),
            Priority::Label(s) => {
                let s = s.trim().to_ascii_lowercase();
                match s.as_str() {
                    "critical" | "urgent" | "highest" | "blocker" => 0.0,
                    "high" => 1.0,
                    "low" | "lowest" | "minor" => 3.0,
                    _ => s
                        .strip_prefix('p')
                        .unwrap_or(&s)
                        .parse::<f64>()
                        .unwrap_or(2.0),
                }
            }
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Priority::Rank(n) => write!(f, "{n}"),
            Priority::Label(s) => f.write_str(s),
        }
    }
}

/// One task of the master list (`projects-tasks` schema). The fields are in the order
/// `projects add` writes them; others are kept in `rest`. Read by [`super::reading`] (its
/// `Deserialize`, and the strict reading that is its schema check).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Task {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// One copy per value in a list read whole ([`super::reading::Interning`]), as `phase`
    /// and `parent_id`: a handful of values shared by thousands of tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Rc<str>>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Rc<str>>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<Option<Rc<str>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtasks: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_minutes: Option<Number>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub actual_minutes: Option<Option<Number>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Option<String>>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Option<String>>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_count: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Boxed: most tasks have none, and a map held inline is 72 bytes in every task.
    pub external_ids: Option<Box<Map<String, Value>>>,
    /// Not in the schema: any JSON (`null` kept).
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub description: Option<Description>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// A task's `description` as it was read: any JSON (the schema does not name it), nearly
/// always a string, which is held as one (a `Value` would take 72 bytes in every task).
#[derive(Debug, Clone, PartialEq)]
pub enum Description {
    Text(String),
    Other(Box<Value>),
}

impl Description {
    /// The description when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Description::Text(s) => Some(s),
            Description::Other(_) => None,
        }
    }

    /// The description as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Description::Text(s) => Value::String(s.clone()),
            Description::Other(v) => (**v).clone(),
        }
    }
}

impl Serialize for Description {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Description::Text(t) => s.serialize_str(t),
            Description::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Description {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Description::Text(s),
            other => Description::Other(Box::new(other)),
        })
    }
}

/// The non-empty ids of a list field.
fn ids(list: &Option<Vec<String>>) -> impl Iterator<Item = &str> + Clone {
    list.iter()
        .flatten()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
}

impl Task {
    /// A task with only an id and a status.
    pub fn new(id: &str, status: Status) -> Task {
        let id = id.to_string();
        Task {
            id,
            status,
            ..Default::default()
        }
    }

    /// Its subtasks' ids.
    pub fn subtasks(&self) -> impl Iterator<Item = &str> + Clone {
        ids(&self.subtasks)
    }

    /// The ids it depends on.
    pub fn deps(&self) -> impl Iterator<Item = &str> + Clone {
        ids(&self.dependencies)
    }

    /// A parent task: one with subtasks. It is never executed directly.
    pub fn is_parent(&self) -> bool {
        self.subtasks().next().is_some()
    }

    /// The title, else the description, shortened for one line.
    pub fn title(&self) -> Option<String> {
        let s = self
            .title
            .as_deref()
            .or_else(|| self.description.as_ref().and_then(Description::as_str))?;
        crate::layouts::work::title_of(s.trim())
    }

    /// The phase it belongs to.
    pub fn phase(&self) -> Option<&str> {
        self.phase.as_deref().filter(|p| !p.is_empty())
    }

    /// `parent_id` (when set).
    pub fn parent_id(&self) -> Option<&str> {
        inner(&self.parent_id).map(|p| &**p)
    }

    pub fn started_at(&self) -> Option<&str> {
        inner(&self.started_at).map(String::as_str)
    }

    pub fn completed_at(&self) -> Option<&str> {
        inner(&self.completed_at).map(String::as_str)
    }

    pub fn blocked_reason(&self) -> Option<&str> {
        inner(&self.blocked_reason).map(String::as_str)
    }

    pub fn estimate(&self) -> Option<f64> {
        self.estimate_minutes.as_ref().and_then(Number::as_f64)
    }

    pub fn actual(&self) -> Option<f64> {
        inner(&self.actual_minutes).and_then(Number::as_f64)
    }

    /// Scheduling rank of its priority ([`Priority::rank`]; none ranks as `medium`).
    pub fn priority_rank(&self) -> f64 {
        self.priority.as_ref().map_or(2.0, Priority::rank)
    }

    /// When a leaf IN_PROGRESS task with an estimate has run longer than 4 × its estimate:
    /// `(minutes running, estimate)`.
    pub fn overdue(&self, now: DateTime<Utc>) -> Option<(i64, f64)> {
        if self.status != Status::InProgress || self.is_parent() {
            return None;
        }
        let estimate = self.estimate().filter(|e| *e > 0.0)?;
        let started = parse_time(self.started_at()?)?;
        let running = (now - started).num_seconds();
        (running as f64 > STALE_FACTOR as f64 * estimate * 60.0)
            .then(|| (minutes_between(started, now), estimate))
    }
}

/// The master list, `tasks.json` (and a checkpoint).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct TaskList {
    pub tasks: Vec<Shared<Task>>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl TaskList {
    /// The task with id `id` (a scan; for many questions, make one [`super::index::Index`]).
    pub fn find(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id).map(|t| &**t)
    }

    /// The position of the task with id `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.id == id)
    }

    /// The status of task `id`.
    pub fn status_of(&self, id: &str) -> Option<Status> {
        self.find(id).map(|t| t.status)
    }

    /// Each phase of the list once, in the order of its first task, with whether it is
    /// complete ([`TaskList::phase_complete`]): one pass, however many phases there are.
    pub fn phases_complete(&self) -> Vec<(&str, bool)> {
        let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        // A phase, whether all its tasks are finished, whether one is COMPLETE.
        let mut out: Vec<(&str, bool, bool)> = Vec::new();
        for t in &self.tasks {
            let Some(ph) = t.phase() else { continue };
            let i = *at.entry(ph).or_insert_with(|| {
                out.push((ph, true, false));
                out.len() - 1
            });
            out[i].1 &= t.status.is_finished();
            out[i].2 |= t.status == Status::Complete;
        }
        out.into_iter()
            .map(|(ph, finished, complete)| (ph, finished && complete))
            .collect()
    }

    /// Whether every task of `phase` is finished with at least one COMPLETE (a CANCELLED task
    /// does not hold a phase, or a parent, back).
    pub fn phase_complete(&self, phase: &str) -> bool {
        let of = self.tasks.iter().filter(|t| t.phase() == Some(phase));
        all_done(of.map(|t| Some(t.status)))
    }

    /// The first phase, in creation order, that still has work (None when all are done).
    pub fn next_phase(&self) -> Option<String> {
        self.tasks
            .iter()
            .filter(|t| !t.status.is_finished())
            .find_map(|t| t.phase())
            .map(str::to_string)
    }

    /// Problems of the list a person should fix: duplicate ids, unknown dependencies, cycles,
    /// asked of the list's index (its ids, indexed once for the three checks and whatever else
    /// the caller asks of it).
    pub fn problems(&self, index: &super::index::Index<'_>) -> Vec<String> {
        let mut out = Vec::new();
        for d in index.ids().duplicates() {
            out.push(format!("task id {d} is used more than once"));
        }
        for (t, d) in index.unknown_deps() {
            out.push(format!(
                "{t} depends on {d}, which is not a task of the list"
            ));
        }
        if let Some(c) = index.dep_cycle() {
            out.push(format!("dependency cycle {}", graph::describe_cycle(&c)));
        }
        out
    }
}

/// Whether the statuses are all finished and at least one is COMPLETE (`None`: no such task).
pub fn all_done(mut statuses: impl Iterator<Item = Option<Status>> + Clone) -> bool {
    statuses.clone().all(|s| s.is_some_and(Status::is_finished))
        && statuses.any(|s| s == Some(Status::Complete))
}

/// A number as JSON: an integer when it is whole (`30`, not `30.0`); `None` when it is not
/// finite (JSON has no such number: written as `null`, which the schemas refuse).
pub fn num(n: f64) -> Option<Number> {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        Some(Number::from(n as i64))
    } else {
        Number::from_f64(n)
    }
}

/// Minutes between two times, rounded to the nearest whole minute (never negative).
pub fn minutes_between(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    ((to - from).num_seconds().max(0) + 30) / 60
}

/// `project.json`, the project record (`projects-project` schema), in the order
/// `projects new` writes it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ProjectRecord {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(default, with = "present", skip_serializing_if = "Option::is_none")]
    pub current_task: Option<Option<String>>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// `progress/velocity.json` (`projects-velocity` schema), recomputed whole from the log: every
/// field is written (`null` where there is no value), and read leniently (a field missing, or
/// of a form taskhook would not write, reads as none).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Velocity {
    #[serde(default, with = "lenient")]
    pub tasks_completed: Option<u64>,
    #[serde(default, with = "lenient")]
    pub total_estimate_minutes: Option<Number>,
    #[serde(default, with = "lenient")]
    pub total_actual_minutes: Option<Number>,
    #[serde(default, with = "lenient")]
    pub ratio: Option<f64>,
    #[serde(default, with = "lenient")]
    pub window_size: Option<u64>,
    #[serde(default, with = "lenient")]
    pub window_ratio: Option<f64>,
    #[serde(default, with = "lenient")]
    pub window: Option<Vec<Completed>>,
    #[serde(default, with = "lenient")]
    pub updated_at: Option<String>,
}

/// One completion of the velocity window.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Completed {
    pub task_id: String,
    pub estimate_minutes: Option<Number>,
    pub actual_minutes: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::layouts::json::{typed, write_back};
    use proptest::prelude::*;
    use serde_json::json;

    pub(crate) fn list(v: Value) -> TaskList {
        typed(&v).unwrap()
    }

    /// Ids from a small pool (so duplicates, cycles and self-references happen), sometimes
    /// empty or unknown.
    fn some_id() -> impl Strategy<Value = Value> {
        prop_oneof![
            8 => (0..12u8).prop_map(|n| json!(format!("T{n}"))),
            1 => Just(json!("")),
            1 => Just(json!("X")),
        ]
    }

    pub(crate) fn some_task() -> impl Strategy<Value = Value> {
        (
            some_id(),
            prop::sample::select(Status::ALL.to_vec()),
            prop::collection::vec(some_id(), 0..3),
            prop::collection::vec(some_id(), 0..3),
            prop::option::of(prop_oneof![some_id(), Just(Value::Null)]),
            prop::sample::select(vec![json!("high"), json!("low"), json!(1), json!(2.5)]),
            0..4u8,
        )
            .prop_map(|(id, st, subs, deps, parent, prio, shape)| {
                let mut t = json!({"id": id, "status": st, "priority": prio});
                // Parents are rarer than leaves; some tasks name their parent only by id.
                if shape == 0 {
                    t["subtasks"] = json!(subs);
                }
                if shape < 3 {
                    t["dependencies"] = json!(deps);
                }
                if let Some(p) = parent {
                    t["parent_id"] = p;
                }
                t
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Read and written back unchanged, a list is the same document, byte for byte: absent
        /// fields stay absent, `null`s stay `null`, numbers keep their form, unknown fields and
        /// key order stay.
        #[test]
        fn a_list_round_trips(tasks in prop::collection::vec(some_task(), 0..8)) {
            let mut doc = json!({"z": 1, "tasks": tasks, "a": {"b": null}});
            if let Some(t) = doc["tasks"].get_mut(0) {
                t["actual_minutes"] = json!(null);
                t["estimate_minutes"] = json!(7.0);
                t["stale_count"] = json!(1);
                t["x-extra"] = json!({"k": [1, null]});
                t["description"] = json!(null);
            }
            let before = serde_json::to_string(&doc).unwrap();
            let l = list(doc.clone());
            write_back(&mut doc, &l).unwrap();
            prop_assert_eq!(serde_json::to_string(&doc).unwrap(), before);
        }
    }

    #[test]
    fn priorities_rank() {
        let r = |p: Value| {
            list(json!({"tasks": [{"id": "A", "status": "PENDING", "priority": p}]})).tasks[0]
                .priority_rank()
        };
        assert!(r(json!("critical")) < r(json!("high")));
        assert!(r(json!("high")) < r(json!("medium")));
        assert_eq!(r(json!("P1")), 1.0);
        assert_eq!(r(json!(5)), 5.0);
        assert_eq!(Task::new("A", Status::Pending).priority_rank(), 2.0);
    }

    #[test]
    fn overdue_after_four_estimates() {
        let now = parse_time("2026-03-01T12:00:00Z").unwrap();
        let t = |v: Value| list(json!({"tasks": [v]})).tasks.remove(0);
        let started = |s: &str| {
            t(json!({"id": "A", "status": "IN_PROGRESS", "estimate_minutes": 30, "started_at": s}))
        };
        assert_eq!(
            started("2026-03-01T09:59:00Z").overdue(now),
            Some((121, 30.0))
        );
        assert_eq!(started("2026-03-01T10:00:00Z").overdue(now), None);
        let no_estimate =
            t(json!({"id": "A", "status": "IN_PROGRESS", "started_at": "2020-01-01T00:00:00Z"}));
        assert_eq!(no_estimate.overdue(now), None);
    }

    #[test]
    fn phases_and_problems() {
        let d = list(json!({"tasks": [
            {"id": "A", "status": "COMPLETE", "phase": "p1"},
            {"id": "B", "status": "CANCELLED", "phase": "p1"},
            {"id": "C", "status": "PENDING", "phase": "p2", "dependencies": ["Z", "C"]},
        ]}));
        assert!(d.phase_complete("p1"));
        assert!(!d.phase_complete("p2"));
        assert_eq!(d.next_phase().as_deref(), Some("p2"));
        let p = d.problems(&d.index());
        assert!(p.iter().any(|l| l.contains("C depends on Z")), "{p:?}");
        assert!(p.iter().any(|l| l.contains("cycle C → C")), "{p:?}");
    }

    proptest! {
        /// Each phase once, in order of its first task, complete exactly when
        /// `phase_complete` says so.
        #[test]
        fn phases_complete_is_phase_complete_of_each(
            tasks in prop::collection::vec(
                (0..5usize, prop::sample::select(Status::ALL.to_vec())), 0..16),
        ) {
            let l = list(json!({"tasks": tasks.iter().enumerate().map(|(i, (ph, st))| {
                let mut t = json!({"id": format!("T{i}"), "status": st});
                if *ph > 0 {
                    t["phase"] = json!(format!("p{ph}"));
                }
                t
            }).collect::<Vec<_>>()}));
            let mut seen = Vec::new();
            for t in &l.tasks {
                if let Some(ph) = t.phase() {
                    if !seen.contains(&ph) {
                        seen.push(ph);
                    }
                }
            }
            let want: Vec<(&str, bool)> = seen.iter().map(|ph| (*ph, l.phase_complete(ph))).collect();
            prop_assert_eq!(l.phases_complete(), want);
        }
    }

    #[test]
    fn statuses_read_and_write_as_the_seed_spells_them() {
        for st in Status::ALL {
            assert_eq!(serde_json::to_value(st).unwrap(), json!(st.as_str()));
            assert_eq!(Status::parse(st.as_str()), Some(st));
        }
        assert_eq!(Status::parse("pending"), None);
    }
}
