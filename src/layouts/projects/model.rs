//! The task master list as taskhook reads it: a JSON document `{"tasks": [...]}` kept as a
//! [`Value`] so unknown fields (of the file and of every task) survive a rewrite. Pure helpers:
//! statuses, the hierarchy (`subtasks` on parents, `parent_id` as a fallback), dependencies,
//! priority, which tasks are ready, stale, and what a phase holds.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::graph::{self, Node};
use crate::layouts::json::string_list;
use crate::store::clock::parse_time;

pub const PENDING: &str = "PENDING";
pub const IN_RESEARCH: &str = "IN_RESEARCH";
pub const RESEARCHED: &str = "RESEARCHED";
pub const IN_PROGRESS: &str = "IN_PROGRESS";
pub const VALIDATING: &str = "VALIDATING";
pub const COMPLETE: &str = "COMPLETE";
pub const BLOCKED: &str = "BLOCKED";
pub const CANCELLED: &str = "CANCELLED";

/// Every status seed 000 names.
pub const STATUSES: [&str; 8] = [
    PENDING,
    IN_RESEARCH,
    RESEARCHED,
    IN_PROGRESS,
    VALIDATING,
    COMPLETE,
    BLOCKED,
    CANCELLED,
];

/// The seed's stale threshold: IN_PROGRESS for longer than this many times the estimate.
pub const STALE_FACTOR: i64 = 4;
/// The blocked reason of a task stale a second time (the seed's words).
pub const STALE_TWICE: &str = "Stale twice — requires human review";

/// The tasks of a document (empty when it has none).
pub fn tasks(doc: &Value) -> &[Value] {
    doc["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The task with id `id`.
pub fn find<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    tasks(doc).iter().find(|t| t["id"] == id)
}

/// The index of the task with id `id`.
pub fn index(doc: &Value, id: &str) -> Option<usize> {
    tasks(doc).iter().position(|t| t["id"] == id)
}

pub fn id(t: &Value) -> &str {
    t["id"].as_str().unwrap_or("")
}

pub fn status(t: &Value) -> &str {
    t["status"].as_str().unwrap_or(PENDING)
}

/// The status of task `id` (`""` when there is none).
pub fn status_of<'a>(doc: &'a Value, id: &str) -> &'a str {
    find(doc, id).map_or("", status)
}

pub fn subtasks(t: &Value) -> Vec<String> {
    string_list(t, "subtasks")
}

pub fn deps(t: &Value) -> Vec<String> {
    string_list(t, "dependencies")
}

/// A parent task: one with subtasks. It is never executed directly.
pub fn is_parent(t: &Value) -> bool {
    !subtasks(t).is_empty()
}

/// Finished for good: COMPLETE or CANCELLED.
pub fn is_finished(status: &str) -> bool {
    status == COMPLETE || status == CANCELLED
}

/// Mid-work states the seed's reconciliation resets.
pub fn is_transitional(status: &str) -> bool {
    matches!(status, IN_RESEARCH | IN_PROGRESS | VALIDATING)
}

/// The title, else the description, shortened for one line.
pub fn title(t: &Value) -> Option<String> {
    let s = t["title"].as_str().or_else(|| t["description"].as_str())?;
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let short: String = s.chars().take(80).collect();
    Some(if s.chars().count() > 80 {
        format!("{short}…")
    } else {
        short
    })
}

/// The parent of `id`: the task listing it in `subtasks`, else its `parent_id`
/// ([`Index::parent_of`]; for many questions about one list, make one [`Index`]).
pub fn parent_of(doc: &Value, id: &str) -> Option<String> {
    Index::new(doc).parent_of(id).map(str::to_string)
}

/// The dependencies of `id` not COMPLETE yet, with their status (`unknown` when missing):
/// its own and its ancestors' ([`Index::unmet_deps`]).
pub fn unmet_deps(doc: &Value, id: &str) -> Vec<(String, String)> {
    Index::new(doc).unmet_deps(id)
}

/// Scheduling rank of a priority, smaller first: `critical`/`urgent` 0, `high` 1, `medium`
/// (and no priority, or a label taskhook does not know) 2, `low` 3; a number (or `P0`, `p2`)
/// ranks as itself.
pub fn priority_rank(t: &Value) -> f64 {
    match &t["priority"] {
        Value::Number(n) => n.as_f64().unwrap_or(2.0),
        Value::String(s) => {
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
        _ => 2.0,
    }
}

/// The ready tasks: leaf tasks PENDING or RESEARCHED whose dependencies (and their ancestors')
/// are all COMPLETE, by priority, then creation order. BLOCKED tasks are never ready.
pub fn ready(doc: &Value) -> Vec<String> {
    Index::new(doc).ready()
}

/// The list indexed once, for questions about every task at a cost linear in the list: what
/// [`find`] and the parent links answer, without a scan of the list per question.
pub struct Index<'a> {
    tasks: &'a [Value],
    /// Id → the first task with that id (the one [`find`] returns).
    first: HashMap<&'a str, usize>,
    /// Id → the id of the first task listing it in `subtasks`.
    listed_in: HashMap<&'a str, &'a str>,
}

/// The non-empty strings of a task's list field, borrowed (as [`string_list`] reads it).
fn strs<'a>(t: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    t.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|s| !s.is_empty())
}

impl<'a> Index<'a> {
    pub fn new(doc: &'a Value) -> Self {
        let tasks = tasks(doc);
        let mut first = HashMap::with_capacity(tasks.len());
        let mut listed_in = HashMap::new();
        for (i, t) in tasks.iter().enumerate() {
            if let Some(id) = t["id"].as_str() {
                first.entry(id).or_insert(i);
            }
            for sub in strs(t, "subtasks") {
                listed_in.entry(sub).or_insert(id(t));
            }
        }
        Index {
            tasks,
            first,
            listed_in,
        }
    }

    /// The task with id `id`, as [`find`].
    pub fn find(&self, id: &str) -> Option<&'a Value> {
        self.first.get(id).map(|&i| &self.tasks[i])
    }

    /// The parent of `id`: the task first listing it in `subtasks`, else its `parent_id` when that
    /// names another task of the list.
    pub fn parent_of(&self, id: &str) -> Option<&'a str> {
        if let Some(p) = self.listed_in.get(id) {
            return Some(p);
        }
        self.find(id)?["parent_id"]
            .as_str()
            .filter(|p| !p.is_empty() && *p != id && self.first.contains_key(p))
    }

    /// The ancestors of `id`, nearest first (a cycle in the hierarchy ends the walk).
    pub fn ancestors(&self, id: &str) -> Vec<&'a str> {
        let mut out: Vec<&'a str> = Vec::new();
        let mut cur = id;
        while let Some(p) = self.parent_of(cur) {
            if p == id || out.contains(&p) {
                break;
            }
            out.push(p);
            cur = p;
        }
        out
    }

    /// The dependencies of `id` not COMPLETE yet, with their status (`unknown` when missing):
    /// its own and its ancestors' (an epic that waits for another epic holds back its stories
    /// too), each once.
    pub fn unmet_deps(&self, id: &str) -> Vec<(String, String)> {
        let mut all: Vec<&'a str> = Vec::new();
        let own = self.find(id).into_iter();
        let above = self.ancestors(id).into_iter().filter_map(|a| self.find(a));
        for t in own.chain(above) {
            for d in strs(t, "dependencies") {
                if !all.contains(&d) {
                    all.push(d);
                }
            }
        }
        all.into_iter()
            .filter_map(|d| match self.find(d) {
                Some(t) if status(t) == COMPLETE => None,
                Some(t) => Some((d.to_string(), status(t).to_string())),
                None => Some((d.to_string(), "unknown".to_string())),
            })
            .collect()
    }

    /// Whether the task's own dependencies are all COMPLETE.
    fn own_deps_met(&self, id: &str) -> bool {
        self.find(id).is_none_or(|t| {
            strs(t, "dependencies").all(|d| self.find(d).is_some_and(|d| status(d) == COMPLETE))
        })
    }

    /// For every id asked about: whether it and all its ancestors have their dependencies
    /// met (no [`unmet_deps`]). `id`'s ancestors are everything its parent links reach, so
    /// the answer is its own, and its parent's: each id is worked out once, a cycle of parent
    /// links sharing one answer.
    fn waits_for_nothing(
        &self,
        id: &'a str,
        memo: &mut HashMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
        on_path: &mut HashMap<&'a str, usize>,
    ) -> bool {
        path.clear();
        on_path.clear();
        let mut cur = id;
        let mut answer = loop {
            if let Some(&known) = memo.get(cur) {
                break known;
            }
            if let Some(&at) = on_path.get(cur) {
                let cycle = path[at..].iter().all(|x| self.own_deps_met(x));
                for x in path.drain(at..) {
                    memo.insert(x, cycle);
                }
                break cycle;
            }
            on_path.insert(cur, path.len());
            path.push(cur);
            match self.parent_of(cur) {
                Some(p) => cur = p,
                None => break true,
            }
        };
        for x in path.drain(..).rev() {
            answer = answer && self.own_deps_met(x);
            memo.insert(x, answer);
        }
        memo.get(id).copied().unwrap_or(answer)
    }

    /// [`ready`], in one pass over the list.
    pub fn ready(&self) -> Vec<String> {
        let mut memo = HashMap::with_capacity(self.tasks.len());
        let (mut path, mut on_path) = (Vec::new(), HashMap::new());
        let mut out: Vec<(f64, usize, &str)> = Vec::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if !matches!(status(t), PENDING | RESEARCHED) || strs(t, "subtasks").next().is_some() {
                continue;
            }
            if self.waits_for_nothing(id(t), &mut memo, &mut path, &mut on_path) {
                out.push((priority_rank(t), i, id(t)));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut seen = HashSet::with_capacity(out.len());
        out.into_iter()
            .filter(|(_, _, id)| seen.insert(*id))
            .map(|(_, _, id)| id.to_string())
            .collect()
    }
}

/// A number as JSON: an integer when it is whole (`30`, not `30.0`).
pub fn num(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// Minutes between two times, rounded to the nearest whole minute (never negative).
pub fn minutes_between(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    ((to - from).num_seconds().max(0) + 30) / 60
}

/// When a leaf IN_PROGRESS task with an estimate has run longer than 4 × its estimate:
/// `(minutes running, estimate)`.
pub fn overdue(t: &Value, now: DateTime<Utc>) -> Option<(i64, f64)> {
    if status(t) != IN_PROGRESS || is_parent(t) {
        return None;
    }
    let estimate = t["estimate_minutes"].as_f64().filter(|e| *e > 0.0)?;
    let started = parse_time(t["started_at"].as_str()?)?;
    let running = (now - started).num_seconds();
    (running as f64 > STALE_FACTOR as f64 * estimate * 60.0)
        .then(|| (minutes_between(started, now), estimate))
}

/// The phase a task belongs to.
pub fn phase(t: &Value) -> Option<&str> {
    t["phase"].as_str().filter(|p| !p.is_empty())
}

/// Whether every task of `phase` is finished with at least one COMPLETE (a CANCELLED task does
/// not hold a phase, or a parent, back).
pub fn phase_complete(doc: &Value, phase: &str) -> bool {
    let of: Vec<&Value> = tasks(doc)
        .iter()
        .filter(|t| self::phase(t) == Some(phase))
        .collect();
    all_done(of.iter().map(|t| status(t)))
}

/// Whether the statuses are all finished and at least one is COMPLETE.
pub fn all_done<'a>(mut statuses: impl Iterator<Item = &'a str> + Clone) -> bool {
    statuses.clone().all(is_finished) && statuses.any(|s| s == COMPLETE)
}

/// The first phase, in creation order, that still has work (None when all are done).
pub fn next_phase(doc: &Value) -> Option<String> {
    tasks(doc)
        .iter()
        .filter(|t| !is_finished(status(t)))
        .find_map(phase)
        .map(str::to_string)
}

/// Problems of the list a person should fix: duplicate ids, unknown dependencies, cycles.
pub fn problems(doc: &Value) -> Vec<String> {
    let list = tasks(doc);
    let dep_lists: Vec<Vec<String>> = list.iter().map(deps).collect();
    let nodes: Vec<Node<'_>> = list
        .iter()
        .zip(&dep_lists)
        .map(|(t, d)| Node::new(id(t), d.iter().map(String::as_str)))
        .collect();
    let mut out = Vec::new();
    for d in graph::duplicate_ids(&nodes) {
        out.push(format!("task id {d} is used more than once"));
    }
    for (t, d) in graph::unknown_deps(&nodes) {
        out.push(format!(
            "{t} depends on {d}, which is not a task of the list"
        ));
    }
    if let Some(c) = graph::find_cycle(&nodes) {
        out.push(format!("dependency cycle {}", graph::describe_cycle(&c)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The scans the index replaced (issue 23): the reference it must match.
    mod reference {
        use super::super::*;

        /// The parent of `id`: the task listing it in `subtasks`, else its `parent_id`.
        pub(super) fn parent_of(doc: &Value, id: &str) -> Option<String> {
            tasks(doc)
                .iter()
                .find(|t| subtasks(t).iter().any(|s| s == id))
                .map(|t| self::id(t).to_string())
                .or_else(|| {
                    find(doc, id)?["parent_id"]
                        .as_str()
                        .filter(|p| !p.is_empty() && *p != id && find(doc, p).is_some())
                        .map(str::to_string)
                })
        }

        /// The ancestors of `id`, nearest first (a cycle in the hierarchy ends the walk).
        fn ancestors(doc: &Value, id: &str) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            let mut cur = id.to_string();
            while let Some(p) = parent_of(doc, &cur) {
                if p == id || out.contains(&p) {
                    break;
                }
                out.push(p.clone());
                cur = p;
            }
            out
        }

        /// The dependencies a task waits for: its own and its ancestors' (an epic that waits for
        /// another epic holds back its stories too), each once.
        fn all_deps(doc: &Value, id: &str) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            let own = std::iter::once(id.to_string());
            for a in own.chain(ancestors(doc, id)) {
                for d in find(doc, &a).map(deps).unwrap_or_default() {
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
            out
        }

        /// The dependencies of `id` not COMPLETE yet, with their status (`unknown` when missing).
        pub(super) fn unmet_deps(doc: &Value, id: &str) -> Vec<(String, String)> {
            all_deps(doc, id)
                .into_iter()
                .filter_map(|d| match find(doc, &d) {
                    Some(t) if status(t) == COMPLETE => None,
                    Some(t) => Some((d, status(t).to_string())),
                    None => Some((d, "unknown".to_string())),
                })
                .collect()
        }
    }

    /// `ready` as it was before the index (issue 23): `unmet_deps` of every candidate, each
    /// walking the ancestors through `parent_of`'s scans. The reference the index must match.
    fn ready_reference(doc: &Value) -> Vec<String> {
        let mut out: Vec<(f64, usize, String)> = tasks(doc)
            .iter()
            .enumerate()
            .filter(|(_, t)| !is_parent(t) && matches!(status(t), PENDING | RESEARCHED))
            .filter(|(_, t)| reference::unmet_deps(doc, id(t)).is_empty())
            .map(|(i, t)| (priority_rank(t), i, id(t).to_string()))
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut seen = HashSet::new();
        out.into_iter()
            .map(|(_, _, id)| id)
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// Ids from a small pool (so duplicates, cycles and self-references happen), sometimes
    /// empty, unknown or not a string.
    fn some_id() -> impl Strategy<Value = Value> {
        prop_oneof![
            8 => (0..12u8).prop_map(|n| json!(format!("T{n}"))),
            1 => Just(json!("")),
            1 => Just(json!("X")),
            1 => Just(Value::Null),
        ]
    }

    fn some_task() -> impl Strategy<Value = Value> {
        (
            some_id(),
            prop::sample::select(STATUSES.to_vec()),
            prop::collection::vec(some_id(), 0..3),
            prop::collection::vec(some_id(), 0..3),
            prop::option::of(some_id()),
            prop::sample::select(vec![json!("high"), json!("low"), json!(1), json!(null)]),
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

        /// The index answers `ready` (and so the next task, its first), `find` and `parent_of`
        /// exactly as the scans do, on random lists: duplicate ids, parent cycles, unknown
        /// dependencies, parents named both ways.
        #[test]
        fn index_matches_the_scans(list in prop::collection::vec(some_task(), 0..24)) {
            let doc = json!({"tasks": list});
            let index = Index::new(&doc);
            let want = ready_reference(&doc);
            prop_assert_eq!(index.ready(), want.clone());
            let got = ready(&doc);
            prop_assert_eq!(got.first(), want.first());
            for n in 0..12 {
                let id = format!("T{n}");
                prop_assert_eq!(index.find(&id), find(&doc, &id));
                prop_assert_eq!(index.parent_of(&id).map(str::to_string), reference::parent_of(&doc, &id));
                prop_assert_eq!(index.unmet_deps(&id), reference::unmet_deps(&doc, &id));
            }
        }
    }

    fn doc() -> Value {
        json!({"tasks": [
            {"id": "E1", "status": "IN_PROGRESS", "subtasks": ["S1", "S2"], "dependencies": ["E0"]},
            {"id": "E0", "status": "PENDING"},
            {"id": "S1", "status": "PENDING", "parent_id": "E1"},
            {"id": "S2", "status": "PENDING", "priority": "high"},
            {"id": "M1", "status": "RESEARCHED", "priority": 3},
            {"id": "M2", "status": "PENDING", "priority": "critical", "dependencies": ["M1"]},
            {"id": "B1", "status": "BLOCKED"},
        ]})
    }

    #[test]
    fn ready_is_leaves_with_met_deps_by_priority() {
        let d = doc();
        // S1, S2 wait for E1's dependency E0; M2 for M1.
        assert_eq!(ready(&d), ["E0", "M1"]);
        let mut d = d;
        d["tasks"][1]["status"] = json!("COMPLETE");
        assert_eq!(ready(&d), ["S2", "S1", "M1"]);
        assert_eq!(parent_of(&d, "S2").as_deref(), Some("E1"));
        assert_eq!(
            unmet_deps(&d, "M2"),
            [("M1".to_string(), "RESEARCHED".to_string())]
        );
    }

    #[test]
    fn priorities_rank() {
        let r = |p: Value| priority_rank(&json!({"priority": p}));
        assert!(r(json!("critical")) < r(json!("high")));
        assert!(r(json!("high")) < r(json!("medium")));
        assert_eq!(r(json!("P1")), 1.0);
        assert_eq!(r(json!(5)), 5.0);
        assert_eq!(priority_rank(&json!({})), 2.0);
    }

    #[test]
    fn overdue_after_four_estimates() {
        let now = parse_time("2026-03-01T12:00:00Z").unwrap();
        let t = |started: &str| json!({"status": "IN_PROGRESS", "estimate_minutes": 30, "started_at": started});
        assert_eq!(overdue(&t("2026-03-01T09:59:00Z"), now), Some((121, 30.0)));
        assert_eq!(overdue(&t("2026-03-01T10:00:00Z"), now), None);
        assert_eq!(
            overdue(
                &json!({"status": "IN_PROGRESS", "started_at": "2020-01-01T00:00:00Z"}),
                now
            ),
            None
        );
    }

    #[test]
    fn phases_and_problems() {
        let d = json!({"tasks": [
            {"id": "A", "status": "COMPLETE", "phase": "p1"},
            {"id": "B", "status": "CANCELLED", "phase": "p1"},
            {"id": "C", "status": "PENDING", "phase": "p2", "dependencies": ["Z", "C"]},
        ]});
        assert!(phase_complete(&d, "p1"));
        assert!(!phase_complete(&d, "p2"));
        assert_eq!(next_phase(&d).as_deref(), Some("p2"));
        let p = problems(&d);
        assert!(p.iter().any(|l| l.contains("C depends on Z")), "{p:?}");
        assert!(p.iter().any(|l| l.contains("cycle C → C")), "{p:?}");
    }
}
