//! Dependency graphs of tasks, shared by every layout: unknown dependency ids, cycles (named as
//! `task-a → task-b → task-a`), which tasks are ready or blocked, and which tasks a completion
//! unblocked.
//!
//! Pure functions over `(id, dependencies)` pairs: no I/O, deterministic (results follow the
//! order of the input), and tolerant of bad input (a duplicate id keeps its first occurrence; an
//! unknown dependency is never ready and never part of a cycle).

use std::collections::{HashMap, HashSet};

/// One task as the graph sees it: its id and the ids it depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node<'a> {
    pub id: &'a str,
    pub deps: Vec<&'a str>,
}

impl<'a> Node<'a> {
    /// A node from an id and its dependencies.
    pub fn new(id: &'a str, deps: impl IntoIterator<Item = &'a str>) -> Self {
        Node {
            id,
            deps: deps.into_iter().collect(),
        }
    }
}

/// The nodes' ids indexed once (each id at its first node), for the checks below: a caller
/// that makes all three builds one map, not three.
pub struct Ids<'a> {
    first: HashMap<&'a str, usize>,
    /// The ids that occur more than once, in order of their second occurrence.
    twice: Vec<&'a str>,
}

impl<'a> Ids<'a> {
    pub fn of(nodes: &[Node<'a>]) -> Ids<'a> {
        Ids::in_order(nodes.iter().map(|n| n.id), nodes.len())
    }

    /// The ids of nodes given in order (`len` of them, for the map's capacity): one index a
    /// caller can keep for its own look-ups too ([`Ids::position`]).
    pub fn in_order(ids: impl Iterator<Item = &'a str>, len: usize) -> Ids<'a> {
        let mut first = HashMap::with_capacity(len);
        let (mut twice, mut reported) = (Vec::new(), HashSet::new());
        for (i, id) in ids.enumerate() {
            match first.entry(id) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i);
                }
                std::collections::hash_map::Entry::Occupied(_) => {
                    if reported.insert(id) {
                        twice.push(id);
                    }
                }
            }
        }
        Ids { first, twice }
    }

    /// The position of the first node with id `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.first.get(id).copied()
    }

    /// The ids that occur more than once, in order of their second occurrence.
    pub fn duplicates(&self) -> &[&'a str] {
        &self.twice
    }

    /// Every `(task, dependency)` pair whose dependency is not a task of the graph, in order.
    pub fn unknown_deps(&self, nodes: &[Node<'a>]) -> Vec<(&'a str, &'a str)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for n in nodes {
            for &d in &n.deps {
                if !self.first.contains_key(d) && seen.insert((n.id, d)) {
                    out.push((n.id, d));
                }
            }
        }
        out
    }

    /// A dependency cycle, as the path that closes it ([`find_cycle`]), of the nodes these
    /// ids were made of.
    pub fn find_cycle(&self, nodes: &[Node<'a>]) -> Option<Vec<String>> {
        self.checks(nodes).1
    }

    /// [`Ids::unknown_deps`] and [`Ids::find_cycle`] of the nodes these ids were made of, at
    /// once: each dependency looked up once, and no node's own id again when none is given
    /// twice (every node is then its id's first).
    #[allow(clippy::type_complexity)]
    pub fn checks(&self, nodes: &[Node<'a>]) -> (Vec<(&'a str, &'a str)>, Option<Vec<String>>) {
        let (mut at, mut to) = (Vec::with_capacity(nodes.len() + 1), Vec::new());
        let (mut seen, mut unknown) = (HashSet::new(), Vec::new());
        for n in nodes {
            at.push(to.len());
            for &d in &n.deps {
                let p = self.first.get(d).copied();
                if p.is_none() && seen.insert((n.id, d)) {
                    unknown.push((n.id, d));
                }
                to.push(p);
            }
        }
        at.push(to.len());
        let all_first = self.twice.is_empty();
        let starts =
            (0..nodes.len()).filter(|&i| all_first || self.first.get(nodes[i].id) == Some(&i));
        let edge = |node: usize, k: usize| to[at[node]..at[node + 1]].get(k).copied();
        let cycle = cycle_from(nodes.len(), starts, edge)
            .map(|c| c.iter().map(|&i| nodes[i].id.to_string()).collect());
        (unknown, cycle)
    }
}

/// Returns every `(task, dependency)` pair whose dependency is not a task of the graph, in order.
pub fn unknown_deps<'a>(nodes: &[Node<'a>]) -> Vec<(&'a str, &'a str)> {
    Ids::of(nodes).unknown_deps(nodes)
}

/// Returns the ids that occur more than once, in order of their second occurrence.
pub fn duplicate_ids<'a>(nodes: &[Node<'a>]) -> Vec<&'a str> {
    Ids::of(nodes).twice
}

/// Finds a dependency cycle, returned as the path that closes it (`[a, b, a]`: `a` depends on
/// `b`, which depends on `a`). `None` when the graph is acyclic. Unknown ids are ignored.
pub fn find_cycle(nodes: &[Node<'_>]) -> Option<Vec<String>> {
    Ids::of(nodes).find_cycle(nodes)
}

/// Depth-first search for a cycle over nodes `0..len`, from each of `starts` in turn (nodes
/// seen from an earlier start are not searched again). `edge(node, k)` is the `k`-th
/// dependency of `node`: `None` past the last one, `Some(None)` for one that is not a node.
/// Returns the first cycle met, as node indices with the first repeated at the end.
pub fn cycle_from(
    len: usize,
    starts: impl IntoIterator<Item = usize>,
    edge: impl Fn(usize, usize) -> Option<Option<usize>>,
) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; len];
    for start in starts {
        if mark[start] != Mark::New {
            continue;
        }
        // Iterative depth-first search; `path` holds the open nodes, `next` the next edge of each.
        let mut path = vec![start];
        let mut next = vec![0usize];
        mark[start] = Mark::Open;
        while let Some(&node) = path.last() {
            let Some(k) = next.last_mut() else { break };
            let Some(dep) = edge(node, *k) else {
                mark[node] = Mark::Done;
                path.pop();
                next.pop();
                continue;
            };
            *k += 1;
            let Some(d) = dep else { continue };
            match mark[d] {
                Mark::Done => {}
                Mark::Open => {
                    // An open node is always on the path.
                    let from = path.iter().position(|&p| p == d).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(d);
                    return Some(cycle);
                }
                Mark::New => {
                    mark[d] = Mark::Open;
                    path.push(d);
                    next.push(0);
                }
            }
        }
    }
    None
}

/// Renders a cycle from [`find_cycle`] as `a → b → a`.
pub fn describe_cycle(cycle: &[String]) -> String {
    cycle.join(" → ")
}

/// Whether every dependency of `node` is in `done`.
pub fn deps_done(node: &Node<'_>, done: &HashSet<&str>) -> bool {
    node.deps.iter().all(|d| done.contains(d))
}

/// The dependencies of `node` that are not in `done`, in order.
pub fn pending_deps<'a>(node: &Node<'a>, done: &HashSet<&str>) -> Vec<&'a str> {
    node.deps
        .iter()
        .copied()
        .filter(|d| !done.contains(d))
        .collect()
}

/// Tasks not done whose dependencies are all done, in order.
pub fn ready<'a>(nodes: &[Node<'a>], done: &HashSet<&str>) -> Vec<&'a str> {
    nodes
        .iter()
        .filter(|n| !done.contains(n.id) && deps_done(n, done))
        .map(|n| n.id)
        .collect()
}

/// Tasks not done with at least one dependency not done, in order.
pub fn blocked<'a>(nodes: &[Node<'a>], done: &HashSet<&str>) -> Vec<&'a str> {
    nodes
        .iter()
        .filter(|n| !done.contains(n.id) && !deps_done(n, done))
        .map(|n| n.id)
        .collect()
}

/// Tasks that completing tasks unblocked: not done after, with at least one dependency, every
/// dependency done after, and not every dependency done before.
pub fn unblocked<'a>(
    nodes: &[Node<'a>],
    done_before: &HashSet<&str>,
    done_after: &HashSet<&str>,
) -> Vec<&'a str> {
    nodes
        .iter()
        .filter(|n| {
            !n.deps.is_empty()
                && !done_after.contains(n.id)
                && deps_done(n, done_after)
                && !deps_done(n, done_before)
        })
        .map(|n| n.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn g<'a>(spec: &[(&'a str, &[&'a str])]) -> Vec<Node<'a>> {
        spec.iter()
            .map(|(id, deps)| Node::new(id, deps.iter().copied()))
            .collect()
    }

    #[test]
    fn unknown_and_duplicate_ids() {
        let nodes = g(&[("a", &["x"]), ("b", &["a", "y", "x"]), ("a", &[])]);
        assert_eq!(
            unknown_deps(&nodes),
            vec![("a", "x"), ("b", "y"), ("b", "x")]
        );
        assert_eq!(duplicate_ids(&nodes), vec!["a"]);
    }

    #[test]
    fn cycles_are_named() {
        let nodes = g(&[("task-a", &["task-b"]), ("task-b", &["task-a"])]);
        let c = find_cycle(&nodes).unwrap();
        assert_eq!(describe_cycle(&c), "task-a → task-b → task-a");
        let selfdep = g(&[("a", &[]), ("b", &["b"])]);
        assert_eq!(find_cycle(&selfdep).unwrap(), vec!["b", "b"]);
        let longer = g(&[("a", &["b"]), ("b", &["c"]), ("c", &["d", "b"]), ("d", &[])]);
        assert_eq!(describe_cycle(&find_cycle(&longer).unwrap()), "b → c → b");
        let diamond = g(&[
            ("a", &["b", "c"]),
            ("b", &["d"]),
            ("c", &["d"]),
            ("d", &["z"]),
        ]);
        assert_eq!(find_cycle(&diamond), None);
    }

    #[test]
    fn ready_blocked_unblocked() {
        let nodes = g(&[
            ("a", &[]),
            ("b", &["a"]),
            ("c", &["a", "b"]),
            ("d", &["ghost"]),
        ]);
        let none = HashSet::new();
        assert_eq!(ready(&nodes, &none), vec!["a"]);
        assert_eq!(blocked(&nodes, &none), vec!["b", "c", "d"]);
        let a: HashSet<&str> = ["a"].into();
        assert_eq!(unblocked(&nodes, &none, &a), vec!["b"]);
        assert_eq!(pending_deps(&nodes[2], &a), vec!["b"]);
        let ab: HashSet<&str> = ["a", "b"].into();
        assert_eq!(unblocked(&nodes, &a, &ab), vec!["c"]);
        assert_eq!(unblocked(&nodes, &ab, &ab), Vec::<&str>::new());
    }

    /// Kahn's algorithm: whether the known edges admit a topological order.
    fn acyclic(n: usize, edges: &[Vec<usize>]) -> bool {
        let mut indeg = vec![0; n];
        for deps in edges {
            for &d in deps {
                indeg[d] += 1;
            }
        }
        let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut seen = 0;
        while let Some(i) = queue.pop() {
            seen += 1;
            for &d in &edges[i] {
                indeg[d] -= 1;
                if indeg[d] == 0 {
                    queue.push(d);
                }
            }
        }
        seen == n
    }

    proptest! {
        // The order of the walk's starts matters only with ids given twice: many cases.
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// [`Ids::checks`] answers as looking up every id one at a time does (the cycle walk
        /// from each id's first node), ids given twice included.
        #[test]
        fn checks_match_lookups_one_at_a_time(
            names in proptest::collection::vec(0usize..6, 1..9),
            raw in proptest::collection::vec(proptest::collection::vec(0usize..8, 0..3), 9),
        ) {
            let ids: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
            let nodes: Vec<Node<'_>> = names
                .iter()
                .enumerate()
                .map(|(i, &k)| Node::new(&ids[k], raw[i].iter().map(|&d| ids[d].as_str())))
                .collect();
            let mut first: HashMap<&str, usize> = HashMap::new();
            for (i, n) in nodes.iter().enumerate() {
                first.entry(n.id).or_insert(i);
            }
            let starts = (0..nodes.len()).filter(|&i| first.get(nodes[i].id) == Some(&i));
            let edge = |node: usize, k: usize| nodes[node].deps.get(k).map(|d| first.get(d).copied());
            let want: Option<Vec<String>> = cycle_from(nodes.len(), starts, edge)
                .map(|c| c.iter().map(|&i| nodes[i].id.to_string()).collect());
            let index = Ids::of(&nodes);
            let (unknown, cycle) = index.checks(&nodes);
            prop_assert_eq!(cycle, want);
            prop_assert_eq!(unknown, index.unknown_deps(&nodes));
        }
    }

    proptest! {
        /// No accepted graph has a cycle, and every reported cycle is a real one.
        #[test]
        fn cycle_detection_is_sound_and_complete(
            n in 1usize..9,
            raw in proptest::collection::vec(proptest::collection::vec(0usize..12, 0..4), 9),
        ) {
            let ids: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
            // Dependencies >= n point at unknown ids.
            let edges: Vec<Vec<usize>> = raw[..n].to_vec();
            let nodes: Vec<Node<'_>> = (0..n)
                .map(|i| Node::new(&ids[i], edges[i].iter().map(|&d| ids[d].as_str())))
                .collect();
            let known: Vec<Vec<usize>> =
                edges.iter().map(|d| d.iter().copied().filter(|&x| x < n).collect()).collect();
            match find_cycle(&nodes) {
                None => prop_assert!(acyclic(n, &known)),
                Some(cycle) => {
                    prop_assert!(cycle.len() >= 2);
                    prop_assert_eq!(cycle.first(), cycle.last());
                    let inner = &cycle[..cycle.len() - 1];
                    let distinct: HashSet<&String> = inner.iter().collect();
                    prop_assert_eq!(distinct.len(), inner.len());
                    for w in cycle.windows(2) {
                        let from = nodes.iter().find(|x| x.id == w[0]).unwrap();
                        prop_assert!(from.deps.contains(&w[1].as_str()), "{:?}", cycle);
                    }
                }
            }
        }
    }
}
