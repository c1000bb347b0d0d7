//! The list's questions at a cost linear in the list (issue 23): the task list indexed once
//! ([`Index`]: id → task, the parent links both ways) and what is asked of it: a task's parent,
//! its unmet dependencies (its own and its ancestors'), and which tasks are ready, by priority.

use std::collections::HashSet;

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
    /// The same links by position, for the questions about every task.
    links: Links,
}

/// No task: a position [`Links`] holds where an id names none.
const NONE: u32 = u32::MAX;

/// The list's links by position, owned: its parents, dependencies and subtasks, each the
/// position of the first task with the id named (as [`Index::find`] answers). A change of
/// statuses (all a transition makes, with its timestamps) leaves them as they are, so one
/// `Links` answers before and after it ([`super::lifecycle::apply`]); questions of a list
/// whose ids or links changed need new ones. Asked with the list they were made of.
pub struct Links {
    /// The position of the first task with each task's id.
    first: Vec<u32>,
    /// The position of each task's parent ([`Index::parent_of`] of its id), or [`NONE`].
    parent: Vec<u32>,
    /// Where each task's dependencies start in `deps` (one more entry: the end).
    deps_at: Vec<u32>,
    /// Every task's dependencies, in order: a position, or [`NONE`] for an unknown id.
    deps: Vec<u32>,
    /// Where each task's subtasks start in `subs` (one more entry: the end).
    subs_at: Vec<u32>,
    /// Every task's subtasks, in order: a position, or [`NONE`] for an unknown id.
    subs: Vec<u32>,
}

/// A position as [`Links`] holds it (a list past `u32::MAX` tasks is far past what is read).
fn at(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

/// A position [`Links`] holds, `None` for [`NONE`].
fn known(p: u32) -> Option<usize> {
    (p != NONE).then_some(p as usize)
}

impl<'a> Index<'a> {
    pub fn new(tasks: &'a [Shared<Task>]) -> Self {
        let n = tasks.len();
        let ids = graph::Ids::in_order(tasks.iter().map(|t| t.id.as_str()), n);
        let pos = |id: &str| ids.position(id).map_or(NONE, at);
        // Without ids given twice, every task is its id's first (no look-up needed).
        let first: Vec<u32> = if ids.duplicates().is_empty() {
            (0..n).map(at).collect()
        } else {
            tasks.iter().map(|t| pos(&t.id)).collect()
        };
        let (mut subs_at, mut subs) = (Vec::with_capacity(n + 1), Vec::new());
        let (mut deps_at, mut deps) = (Vec::with_capacity(n + 1), Vec::new());
        // Id (by its first position) → the first task listing it in `subtasks`.
        let mut listed = vec![NONE; n];
        for (i, t) in tasks.iter().enumerate() {
            subs_at.push(at(subs.len()));
            for s in t.subtasks() {
                let p = pos(s);
                if let Some(l) = listed.get_mut(p as usize) {
                    if *l == NONE {
                        *l = first[i];
                    }
                }
                subs.push(p);
            }
            deps_at.push(at(deps.len()));
            deps.extend(t.deps().map(pos));
        }
        subs_at.push(at(subs.len()));
        deps_at.push(at(deps.len()));
        let mut parent = vec![NONE; n];
        for i in 0..n {
            let f = first[i] as usize;
            parent[i] = if f != i {
                parent[f]
            } else if listed[i] != NONE {
                listed[i]
            } else {
                let t = &tasks[i];
                t.parent_id()
                    .filter(|p| !p.is_empty() && *p != t.id)
                    .map_or(NONE, pos)
            };
        }
        Index {
            tasks,
            ids,
            links: Links {
                first,
                parent,
                deps_at,
                deps,
                subs_at,
                subs,
            },
        }
    }

    /// The links by position, kept past the list's borrow (see [`Links`]).
    pub fn into_links(self) -> Links {
        self.links
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
    /// that names another task of the list. An id no task has can still be listed: that is a
    /// scan (nothing asks it of every task).
    pub fn parent_of(&self, id: &str) -> Option<&'a str> {
        let Some(i) = self.position(id) else {
            return self
                .tasks
                .iter()
                .find(|t| t.subtasks().any(|s| s == id))
                .map(|t| t.id.as_str());
        };
        self.links.parent_at(i).map(|p| self.tasks[p].id.as_str())
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

    /// The dependencies naming no task of the list, as `(task, dependency)`, each pair once,
    /// in order: [`graph::Ids::unknown_deps`], read off the links.
    pub fn unknown_deps(&self) -> Vec<(&'a str, &'a str)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (i, t) in self.tasks.iter().enumerate() {
            for (d, p) in t.deps().zip(self.links.deps_of(i)) {
                if *p == NONE && seen.insert((t.id.as_str(), d)) {
                    out.push((t.id.as_str(), d));
                }
            }
        }
        out
    }

    /// A dependency cycle, as the path of ids that closes it: [`graph::Ids::find_cycle`], read
    /// off the links (no id looked up again).
    pub fn dep_cycle(&self) -> Option<Vec<String>> {
        let l = &self.links;
        let starts = (0..self.tasks.len()).filter(|&i| l.first[i] as usize == i);
        let edge = |node: usize, k: usize| Some(known(*l.deps_of(node).get(k)?));
        let cycle = graph::cycle_from(self.tasks.len(), starts, edge)?;
        Some(cycle.iter().map(|&i| self.tasks[i].id.clone()).collect())
    }

    /// The positions of [`TaskList::ready`] ([`Links::ready`]).
    pub fn ready_at(&self) -> Vec<usize> {
        self.links.ready(self.tasks)
    }

    /// [`TaskList::ready`] ([`Links::ready`]).
    pub fn ready(&self) -> Vec<String> {
        self.ready_at()
            .into_iter()
            .map(|i| self.tasks[i].id.clone())
            .collect()
    }
}

impl Links {
    /// The position of the parent of the task at `i`.
    pub fn parent_at(&self, i: usize) -> Option<usize> {
        known(self.parent[i])
    }

    /// The positions of the subtasks of the task at `i`, `None` for an id no task has.
    pub fn subtasks_at(&self, i: usize) -> impl Iterator<Item = Option<usize>> + Clone + '_ {
        let (from, to) = (self.subs_at[i] as usize, self.subs_at[i + 1] as usize);
        self.subs[from..to].iter().map(|p| known(*p))
    }

    /// The dependencies of the task at `i`, as positions ([`NONE`]: no such task).
    fn deps_of(&self, i: usize) -> &[u32] {
        &self.deps[self.deps_at[i] as usize..self.deps_at[i + 1] as usize]
    }

    /// Whether the task at `at`'s own dependencies are all COMPLETE.
    fn own_deps_met(&self, tasks: &[Shared<Task>], at: usize) -> bool {
        self.deps_of(at)
            .iter()
            .all(|d| *d != NONE && tasks[*d as usize].status == Status::Complete)
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
        tasks: &[Shared<Task>],
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
                let cycle = path[at..].iter().all(|&x| self.own_deps_met(tasks, x));
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
            answer = answer && self.own_deps_met(tasks, x);
            memo[x] = mark(answer);
        }
        memo[start] == 1
    }

    /// The positions of [`TaskList::ready`] of `tasks` (the list these links were made of,
    /// statuses as they are now), in one pass: the walk up the parent links is by position,
    /// with no look-up of an id. Each ready id once, at the position it ranks first.
    pub fn ready(&self, tasks: &[Shared<Task>]) -> Vec<usize> {
        let n = tasks.len();
        let (mut memo, mut on_path, mut path) = (vec![0u8; n], vec![u32::MAX; n], Vec::new());
        let mut out: Vec<(f64, usize)> = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            if !matches!(t.status, Status::Pending | Status::Researched) || t.is_parent() {
                continue;
            }
            // A task given twice is answered as its id's first task.
            let start = self.first[i] as usize;
            if self.waits_for_nothing(tasks, start, &mut memo, &mut path, &mut on_path) {
                out.push((t.priority_rank(), i));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut seen = vec![false; n];
        out.into_iter()
            .filter(|(_, i)| !std::mem::replace(&mut seen[self.first[*i] as usize], true))
            .map(|(_, i)| i)
            .collect()
    }

    /// Of the positions `after` ([`Links::ready`] now), those whose id was not among
    /// `before` (the same, earlier).
    pub fn newly_ready(&self, before: &[usize], after: Vec<usize>) -> Vec<usize> {
        let mut was = vec![false; self.first.len()];
        for &i in before {
            was[self.first[i] as usize] = true;
        }
        after
            .into_iter()
            .filter(|i| !was[self.first[*i] as usize])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::tests::{list, some_task};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::collections::HashSet;

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
            let nodes: Vec<graph::Node<'_>> =
                l.tasks.iter().map(|t| graph::Node::new(&t.id, t.deps())).collect();
            prop_assert_eq!(index.unknown_deps(), graph::unknown_deps(&nodes));
            prop_assert_eq!(index.dep_cycle(), graph::find_cycle(&nodes));
        }

        /// Links made before a change of statuses (all a transition changes) answer after it
        /// as the scans of the changed list do: `ready`, each parent and each task's
        /// subtasks; and what became ready is the difference of the two ready sets.
        #[test]
        fn links_hold_across_a_change_of_statuses(
            tasks in prop::collection::vec(some_task(), 1..24),
            changes in prop::collection::vec(
                (any::<prop::sample::Index>(), prop::sample::select(Status::ALL.to_vec())),
                0..6,
            ),
        ) {
            let mut l = list(json!({"tasks": tasks}));
            let links = l.index().into_links();
            let (before_ids, before) = (ready_reference(&l), l.ready_positions());
            for (i, st) in changes {
                let i = i.index(l.tasks.len());
                l.tasks[i].status = st;
            }
            let after = links.ready(&l.tasks);
            let ids = |p: &[usize]| p.iter().map(|&i| l.tasks[i].id.clone()).collect::<Vec<_>>();
            let want = ready_reference(&l);
            prop_assert_eq!(ids(&after), want.clone());
            let newly = ids(&links.newly_ready(&before, after));
            let fresh: Vec<String> = want.into_iter().filter(|id| !before_ids.contains(id)).collect();
            prop_assert_eq!(newly, fresh);
            for (i, t) in l.tasks.iter().enumerate() {
                let first = l.position(&t.id).unwrap();
                prop_assert_eq!(
                    links.parent_at(first).map(|p| l.tasks[p].id.clone()),
                    reference::parent_of(&l, &t.id)
                );
                let subs: Vec<Option<&Task>> = links.subtasks_at(i).map(|s| s.map(|s| &*l.tasks[s])).collect();
                let want: Vec<Option<&Task>> = t.subtasks().map(|s| l.find(s)).collect();
                prop_assert_eq!(subs, want);
            }
        }
    }

    impl TaskList {
        /// The positions of the ready tasks, on links made now.
        fn ready_positions(&self) -> Vec<usize> {
            self.index().into_links().ready(&self.tasks)
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
