//! The list's questions at a cost linear in the list (issue 23): the task list indexed once
//! ([`Index`]: id → task, the parent links both ways) and what is asked of it: a task's parent,
//! its unmet dependencies (its own and its ancestors'), and which tasks are ready, by priority.

use std::collections::{HashMap, HashSet};

use super::model::{Status, Task, TaskList};
use crate::graph;
use crate::layouts::shared::Shared;

impl TaskList {
    /// The list indexed once.
    pub fn index(&self) -> Index<'_> {
        Index::new(&self.tasks)
    }

    /// The parent of `id`: the task listing it in `subtasks`, else its `parent_id`.
    pub fn parent_of(&self, id: &str) -> Option<String> {
        self.index().parent_of(id).map(str::to_string)
    }

    /// The dependencies of `id` not COMPLETE yet, with their status (`unknown` when missing):
    /// its own and its ancestors' ([`Index::unmet_deps`]).
    pub fn unmet_deps(&self, id: &str) -> Vec<(String, String)> {
        self.index().unmet_deps(id)
    }

    /// The ready tasks: leaf tasks PENDING or RESEARCHED whose dependencies (and their
    /// ancestors') are all COMPLETE, by priority, then creation order. BLOCKED tasks are never
    /// ready.
    pub fn ready(&self) -> Vec<String> {
        self.index().ready()
    }
}

/// The list indexed once, for questions about every task at a cost linear in the list: what
/// [`TaskList::find`] and the parent links answer, without a scan of the list per question.
pub struct Index<'a> {
    tasks: &'a [Shared<Task>],
    /// Id → the first task with that id (the one [`TaskList::find`] returns), and the ids
    /// given twice: what the list's graph checks ask too ([`TaskList::problems`]).
    ids: graph::Ids<'a>,
    /// Id → the id of the first task listing it in `subtasks`.
    listed_in: HashMap<&'a str, &'a str>,
}

impl<'a> Index<'a> {
    pub fn new(tasks: &'a [Shared<Task>]) -> Self {
        let ids = graph::Ids::in_order(tasks.iter().map(|t| t.id.as_str()), tasks.len());
        let mut listed_in = HashMap::new();
        for t in tasks {
            for sub in t.subtasks() {
                listed_in.entry(sub).or_insert(t.id.as_str());
            }
        }
        Index {
            tasks,
            ids,
            listed_in,
        }
    }

    /// The task with id `id`, as [`TaskList::find`].
    pub fn find(&self, id: &str) -> Option<&'a Task> {
        self.ids.position(id).map(|i| &*self.tasks[i])
    }

    /// The status of task `id`.
    pub fn status_of(&self, id: &str) -> Option<Status> {
        self.find(id).map(|t| t.status)
    }

    /// The position of the task with id `id`, as [`TaskList::position`].
    pub fn position(&self, id: &str) -> Option<usize> {
        self.ids.position(id)
    }

    /// The ids indexed, for the list's graph checks.
    pub fn ids(&self) -> &graph::Ids<'a> {
        &self.ids
    }

    /// The parent of `id`: the task first listing it in `subtasks`, else its `parent_id` when
    /// that names another task of the list.
    pub fn parent_of(&self, id: &str) -> Option<&'a str> {
        if let Some(p) = self.listed_in.get(id) {
            return Some(p);
        }
        self.find(id)?
            .parent_id()
            .filter(|p| !p.is_empty() && *p != id && self.ids.position(p).is_some())
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
            for d in t.deps() {
                if !all.contains(&d) {
                    all.push(d);
                }
            }
        }
        all.into_iter()
            .filter_map(|d| match self.find(d) {
                Some(t) if t.status == Status::Complete => None,
                Some(t) => Some((d.to_string(), t.status.to_string())),
                None => Some((d.to_string(), "unknown".to_string())),
            })
            .collect()
    }

    /// Whether the task at `at`'s own dependencies are all COMPLETE.
    fn own_deps_met(&self, at: usize) -> bool {
        self.tasks[at]
            .deps()
            .all(|d| self.status_of(d) == Some(Status::Complete))
    }

    /// The position of the parent of the task at `at` ([`Index::parent_of`]).
    fn parent_at(&self, at: usize) -> Option<usize> {
        let p = self.parent_of(&self.tasks[at].id)?;
        self.position(p)
    }

    /// For every task asked about (by the position of its id's first task): whether it and all
    /// its ancestors have their dependencies met (no [`Index::unmet_deps`]). Its ancestors are
    /// everything its parent links reach, so the answer is its own, and its parent's: each is
    /// worked out once (`memo`, by position: 0 not yet, 1 met, 2 not), a cycle of parent links
    /// sharing one answer. `on_path` holds each position's place on a walk's path (`u32::MAX`
    /// before it is walked): a position leaves the path only with its answer, which is looked
    /// at first.
    fn waits_for_nothing(
        &self,
        start: usize,
        memo: &mut [u8],
        path: &mut Vec<usize>,
        on_path: &mut [u32],
    ) -> bool {
        let mark = |met: bool| if met { 1 } else { 2 };
        let mut cur = start;
        let mut answer = loop {
            if memo[cur] != 0 {
                break memo[cur] == 1;
            }
            if on_path[cur] != u32::MAX {
                let at = on_path[cur] as usize;
                let cycle = path[at..].iter().all(|&x| self.own_deps_met(x));
                for x in path.drain(at..) {
                    memo[x] = mark(cycle);
                }
                break cycle;
            }
            on_path[cur] = u32::try_from(path.len()).unwrap_or(u32::MAX - 1);
            path.push(cur);
            match self.parent_at(cur) {
                Some(p) => cur = p,
                None => break true,
            }
        };
        for x in path.drain(..).rev() {
            answer = answer && self.own_deps_met(x);
            memo[x] = mark(answer);
        }
        memo[start] == 1
    }

    /// [`TaskList::ready`], in one pass over the list: the walk up the parent links is by
    /// position, so a task costs the look-ups of its id, its parent and its dependencies.
    pub fn ready(&self) -> Vec<String> {
        let n = self.tasks.len();
        let (mut memo, mut on_path, mut path) = (vec![0u8; n], vec![u32::MAX; n], Vec::new());
        let mut out: Vec<(f64, usize, &str)> = Vec::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if !matches!(t.status, Status::Pending | Status::Researched) || t.is_parent() {
                continue;
            }
            // A task given twice is answered as its id's first task.
            let start = self.position(&t.id).unwrap_or(i);
            if self.waits_for_nothing(start, &mut memo, &mut path, &mut on_path) {
                out.push((t.priority_rank(), i, &t.id));
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

#[cfg(test)]
mod tests {
    use super::super::model::tests::{list, some_task};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The scans the index replaced (issue 23): the reference it must match.
    mod reference {
        use super::super::*;

        /// The parent of `id`: the task listing it in `subtasks`, else its `parent_id`.
        pub(super) fn parent_of(l: &TaskList, id: &str) -> Option<String> {
            l.tasks
                .iter()
                .find(|t| t.subtasks().any(|s| s == id))
                .map(|t| t.id.clone())
                .or_else(|| {
                    l.find(id)?
                        .parent_id()
                        .filter(|p| !p.is_empty() && *p != id && l.find(p).is_some())
                        .map(str::to_string)
                })
        }

        /// The ancestors of `id`, nearest first (a cycle in the hierarchy ends the walk).
        fn ancestors(l: &TaskList, id: &str) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            let mut cur = id.to_string();
            while let Some(p) = parent_of(l, &cur) {
                if p == id || out.contains(&p) {
                    break;
                }
                out.push(p.clone());
                cur = p;
            }
            out
        }

        /// The dependencies a task waits for: its own and its ancestors', each once.
        fn all_deps(l: &TaskList, id: &str) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            let own = std::iter::once(id.to_string());
            for a in own.chain(ancestors(l, id)) {
                for d in l.find(&a).into_iter().flat_map(Task::deps) {
                    if !out.iter().any(|o| o == d) {
                        out.push(d.to_string());
                    }
                }
            }
            out
        }

        /// The dependencies of `id` not COMPLETE yet, with their status (`unknown` when missing).
        pub(super) fn unmet_deps(l: &TaskList, id: &str) -> Vec<(String, String)> {
            all_deps(l, id)
                .into_iter()
                .filter_map(|d| match l.find(&d) {
                    Some(t) if t.status == Status::Complete => None,
                    Some(t) => Some((d, t.status.to_string())),
                    None => Some((d, "unknown".to_string())),
                })
                .collect()
        }
    }

    /// `ready` as it was before the index (issue 23): `unmet_deps` of every candidate, each
    /// walking the ancestors through `parent_of`'s scans. The reference the index must match.
    fn ready_reference(l: &TaskList) -> Vec<String> {
        let mut out: Vec<(f64, usize, String)> = l
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                !t.is_parent() && matches!(t.status, Status::Pending | Status::Researched)
            })
            .filter(|(_, t)| reference::unmet_deps(l, &t.id).is_empty())
            .map(|(i, t)| (t.priority_rank(), i, t.id.clone()))
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut seen = HashSet::new();
        out.into_iter()
            .map(|(_, _, id)| id)
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The index answers `ready` (and so the next task, its first), `find` and `parent_of`
        /// exactly as the scans do, on random lists: duplicate ids, parent cycles, unknown
        /// dependencies, parents named both ways.
        #[test]
        fn index_matches_the_scans(tasks in prop::collection::vec(some_task(), 0..24)) {
            let l = list(json!({"tasks": tasks}));
            let index = l.index();
            let want = ready_reference(&l);
            prop_assert_eq!(index.ready(), want.clone());
            let got = l.ready();
            prop_assert_eq!(got.first(), want.first());
            for n in 0..12 {
                let id = format!("T{n}");
                prop_assert_eq!(index.find(&id), l.find(&id));
                prop_assert_eq!(index.position(&id), l.position(&id));
                prop_assert_eq!(index.parent_of(&id).map(str::to_string), reference::parent_of(&l, &id));
                prop_assert_eq!(index.unmet_deps(&id), reference::unmet_deps(&l, &id));
            }
        }
    }

    fn doc() -> TaskList {
        list(json!({"tasks": [
            {"id": "E1", "status": "IN_PROGRESS", "subtasks": ["S1", "S2"], "dependencies": ["E0"]},
            {"id": "E0", "status": "PENDING"},
            {"id": "S1", "status": "PENDING", "parent_id": "E1"},
            {"id": "S2", "status": "PENDING", "priority": "high"},
            {"id": "M1", "status": "RESEARCHED", "priority": 3},
            {"id": "M2", "status": "PENDING", "priority": "critical", "dependencies": ["M1"]},
            {"id": "B1", "status": "BLOCKED"},
        ]}))
    }

    #[test]
    fn ready_is_leaves_with_met_deps_by_priority() {
        let d = doc();
        // S1, S2 wait for E1's dependency E0; M2 for M1.
        assert_eq!(d.ready(), ["E0", "M1"]);
        let mut d = d;
        d.tasks[1].status = Status::Complete;
        assert_eq!(d.ready(), ["S2", "S1", "M1"]);
        assert_eq!(d.parent_of("S2").as_deref(), Some("E1"));
        assert_eq!(
            d.unmet_deps("M2"),
            [("M1".to_string(), "RESEARCHED".to_string())]
        );
    }
}
