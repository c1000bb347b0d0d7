//! What every change to a list goes through once its edits are made, on the parsed
//! [`List`] and never on a copy of it: the dependency checks (only around the tasks the change
//! touched), `blocked` recomputed (and re-blocked when a dependency is reopened), `updated_at`
//! on the tasks that really changed, `version` and `last_updated` when anything did.
//!
//! The rules are those of the straightforward implementation (the whole document before and
//! after, compared); `tests.rs` holds that implementation and checks, on random lists and
//! random edits, that both give the same bytes.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::list::{Base, List};
use super::model::Status;
use super::FORMAT_VERSION;
use crate::error::{Error, Result};
use crate::graph::{self, Node};

/// What finishing a change found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The file must be written.
    pub changed: bool,
    /// Tasks whose dependencies this change completed (ids, in list order).
    pub unblocked: Vec<String>,
    /// Tasks blocked again because a dependency of theirs is no longer completed.
    pub reblocked: Vec<String>,
}

/// Refuses graph problems the change introduced; problems already in the file are reported by
/// `status`, not blamed on an unrelated write. Looks only at the tasks the change touched,
/// except to name a new cycle (then the whole graph, once).
pub(crate) fn check_graph(list: &List<'_>) -> Result<()> {
    let slots = &list.slots;
    if list.dup_ids {
        for s in slots.iter().filter(|s| s.is_new() && !s.removed) {
            let id = &*s.view.id;
            let now = slots
                .iter()
                .filter(|o| !o.removed && o.view.id == id)
                .count();
            let before = slots
                .iter()
                .filter(|o| !o.is_new() && o.view.id == id)
                .count();
            if now > 1 && before <= 1 {
                return Err(Error::Rule(format!("two tasks would have the id {id:?}")));
            }
        }
    }
    let mut new_edges: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, s) in slots.iter().enumerate() {
        if s.removed || !s.touched {
            continue;
        }
        let before: HashSet<&str> = if s.is_new() {
            HashSet::new()
        } else {
            list.deps_before(i).iter().map(|d| &**d).collect()
        };
        for d in &s.view.deps {
            match list.find(d) {
                Some(j) if !before.contains(&**d) => new_edges.entry(i).or_default().push(j),
                Some(_) => {}
                None => {
                    let existed = slots.iter().any(|o| !o.is_new() && o.view.id == *d);
                    if !before.contains(&**d) || existed {
                        return Err(Error::Rule(format!(
                            "task {:?} depends on {d:?}, which is not a task of this list; \
                             nothing was written",
                            s.view.id
                        )));
                    }
                }
            }
        }
    }
    if new_edges.is_empty() {
        return Ok(());
    }
    match first_cycle_from(list, &new_edges) {
        Some(true) if !before_has_cycle(list) => {
            let nodes: Vec<Node<'_>> = list
                .live()
                .map(|(_, v)| Node::new(&v.id, v.deps.iter().map(|d| &**d)))
                .collect();
            let cycle = graph::find_cycle(&nodes).unwrap_or_default();
            Err(Error::Rule(format!(
                "dependency cycle {}; nothing was written",
                graph::describe_cycle(&cycle)
            )))
        }
        _ => Ok(()),
    }
}

/// Depth-first search from the tasks that gained edges: `None` when no cycle is reachable,
/// else whether the first cycle found uses a new edge (if not, the file had a cycle already).
fn first_cycle_from(list: &List<'_>, new_edges: &HashMap<usize, Vec<usize>>) -> Option<bool> {
    let mut starts: Vec<usize> = new_edges.keys().copied().collect();
    starts.sort_unstable();
    let edge = |node: usize, k: usize| list.slots[node].view.deps.get(k).map(|d| list.find(d));
    let cycle = graph::cycle_from(list.slots.len(), starts, edge)?;
    Some(
        cycle
            .windows(2)
            .any(|w| new_edges.get(&w[0]).is_some_and(|e| e.contains(&w[1]))),
    )
}

/// Whether the graph as loaded (before this change) had a cycle.
fn before_has_cycle(list: &List<'_>) -> bool {
    let nodes: Vec<Node<'_>> = list
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_new())
        .map(|(i, s)| Node::new(&s.view.id, list.deps_before(i).iter().map(|d| &**d)))
        .collect();
    graph::find_cycle(&nodes).is_some()
}

/// Recomputes `blocked`, stamps the tasks that changed and the root; says what changed.
///
/// `pending` with a dependency not completed becomes `blocked`; `blocked` with every dependency
/// completed returns to `pending`; `in_progress` with a dependency that was completed and no
/// longer is becomes `blocked` (seed 002: "a task becomes `blocked` if any dependency is not
/// `completed`"); `completed` is never changed here.
pub(crate) fn finalize(list: &mut List<'_>, now: &str) -> Outcome {
    let mut out = Outcome::default();
    let mut flips: Vec<(usize, Status)> = Vec::new();
    {
        let slots = &list.slots;
        let done_after: HashSet<&str> = slots
            .iter()
            .filter(|s| !s.removed && s.view.status == Status::Completed)
            .map(|s| &*s.view.id)
            .collect();
        let reopened: HashSet<&str> = slots
            .iter()
            .filter(|s| s.orig_status == Some(Status::Completed))
            .filter(|s| s.removed || s.view.status != Status::Completed)
            .map(|s| &*s.view.id)
            .filter(|id| !done_after.contains(id))
            .collect();
        let newly_done: HashSet<&str> = slots
            .iter()
            .filter(|s| !s.removed && s.view.status == Status::Completed)
            .filter(|s| s.orig_status != Some(Status::Completed))
            .map(|s| &*s.view.id)
            .collect();
        let done_before =
            |d: &str| reopened.contains(d) || (done_after.contains(d) && !newly_done.contains(d));
        for (i, s) in slots.iter().enumerate().filter(|(_, s)| !s.removed) {
            let v = &s.view;
            let all_done = v.deps.iter().all(|d| done_after.contains(&**d));
            let lost = v.deps.iter().any(|d| reopened.contains(&**d));
            let new = match (v.status, all_done) {
                (Status::Pending, false) => Some(Status::Blocked),
                (Status::Blocked, true) => Some(Status::Pending),
                (Status::InProgress, false) if lost => Some(Status::Blocked),
                _ => None,
            };
            if let Some(st) = new {
                if st == Status::Blocked && lost {
                    out.reblocked.push(v.id.to_string());
                }
                flips.push((i, st));
            }
            let was_done = |d: &Cow<'_, str>| done_before(d);
            if !v.deps.is_empty()
                && all_done
                && v.status != Status::Completed
                && !v.deps.iter().all(was_done)
            {
                out.unblocked.push(v.id.to_string());
            }
        }
    }
    for (i, st) in flips {
        list.edit(i, |m| {
            m.insert("status".into(), Value::String(st.as_str().into()));
        });
    }
    let mut changed = false;
    for s in list.slots.iter_mut() {
        if s.removed {
            changed |= !s.is_new();
            continue;
        }
        if !s.touched {
            continue;
        }
        let Some(m) = s.value.as_mut() else { continue };
        let differs = match &s.base {
            Base::New => true,
            Base::Snapshot(b) => **b != **m,
            Base::Raw => s
                .raw
                .and_then(|r| serde_json::from_str::<Map<String, Value>>(r).ok())
                .is_none_or(|b| b != **m),
        };
        if differs {
            m.insert("updated_at".into(), Value::String(now.to_string()));
            if !m.contains_key("created_at") {
                m.insert("created_at".into(), Value::String(now.to_string()));
            }
            changed = true;
        } else {
            s.touched = false;
        }
    }
    if changed {
        if list.version() != Some(FORMAT_VERSION) {
            list.set_root("version", Value::from(FORMAT_VERSION));
        }
        list.set_root("last_updated", Value::String(now.to_string()));
    }
    out.changed = changed;
    out
}

/// The slots that `from` reaches through dependencies (itself included).
pub(crate) fn reachable(list: &List<'_>, from: usize) -> HashSet<usize> {
    let mut seen = HashSet::from([from]);
    let mut stack = vec![from];
    while let Some(i) = stack.pop() {
        for d in &list.slots[i].view.deps {
            if let Some(j) = list.find(d) {
                if seen.insert(j) {
                    stack.push(j);
                }
            }
        }
    }
    seen
}

/// The slots that reach `to` through dependencies (itself included).
pub(crate) fn reaching(list: &List<'_>, to: usize) -> HashSet<usize> {
    let mut back: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, v) in list.live() {
        for d in &v.deps {
            if let Some(j) = list.find(d) {
                back.entry(j).or_default().push(i);
            }
        }
    }
    let mut seen = HashSet::from([to]);
    let mut stack = vec![to];
    while let Some(j) = stack.pop() {
        for &i in back.get(&j).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(i) {
                stack.push(i);
            }
        }
    }
    seen
}

/// A path of dependencies from `from` to `to` (ids, both ends included), when there is one.
pub(crate) fn dep_path(list: &List<'_>, from: usize, to: usize) -> Option<Vec<String>> {
    let mut parent: HashMap<usize, usize> = HashMap::from([(from, from)]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(i) = queue.pop_front() {
        if i == to {
            let mut path = vec![i];
            let mut cur = i;
            while cur != from {
                cur = parent.get(&cur).copied().unwrap_or(from);
                path.push(cur);
            }
            path.reverse();
            return Some(path.iter().map(|&p| list.view(p).id.to_string()).collect());
        }
        for d in &list.slots[i].view.deps {
            if let Some(j) = list.find(d) {
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(j) {
                    e.insert(i);
                    queue.push_back(j);
                }
            }
        }
    }
    None
}
