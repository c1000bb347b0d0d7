//! The board's model, pure: every store of the project as cards in the five columns of
//! [`Phase`], with each card's claim (owner, lease) and age, and the dependency graph (nodes
//! and edges) drawn from the same units. Built from what [`crate::engine::agent::stores`] and
//! the claims give; every renderer (terminal, text, HTML, DOT, Mermaid, JSON) reads only this.
//!
//! Text is kept as the stores hold it: each renderer escapes it for its own medium and cuts it
//! to its own width ([`cut`]).

use std::collections::HashMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::claims::{label, relative_to};
use crate::engine::agent::reference;
use crate::layouts::{Phase, WorkUnit};
use crate::store::clock::parse_time;

/// One store as the board reads it.
#[derive(Debug, Clone)]
pub struct StoreIn {
    pub layout: &'static str,
    pub name: String,
    pub path: PathBuf,
    pub units: Vec<WorkUnit>,
    /// The id each unit's claims are recorded under, in the same order (a claude-tasks
    /// session's task `1` is claimed as `1@<list>`); a unit without one is claimed by its id.
    pub keys: Vec<String>,
}

/// What is wrong with a store: it cannot be read at all (nor can the claims' record), or its
/// layout read it but says something is wrong (a state file it had to rebuild in memory, an
/// unknown dependency, a cycle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub layout: String,
    pub store: String,
    pub problem: String,
    /// The store could not be read (it has no cards of its own).
    pub unreadable: bool,
}

impl Problem {
    /// `cannot be read` or `problem`.
    pub fn kind(&self) -> &'static str {
        if self.unreadable {
            "cannot be read"
        } else {
            "problem"
        }
    }
}

/// A claim as the board reads it: whose, since when, and when its lease ends.
#[derive(Debug, Clone)]
pub struct ClaimIn {
    pub layout: String,
    pub store: String,
    pub task: String,
    pub owner: String,
    pub since: Option<DateTime<Utc>>,
    pub lease_end: DateTime<Utc>,
}

/// The whole board at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct Board {
    pub project: PathBuf,
    /// When it was read (RFC 3339).
    pub written: String,
    pub stores: Vec<StoreView>,
    /// What is wrong with stores; each is also a card in the "waiting for a person" column.
    pub problems: Vec<Problem>,
    pub cards: Vec<Card>,
}

/// A store's line in the header.
#[derive(Debug, Clone, Serialize)]
pub struct StoreView {
    pub layout: String,
    pub name: String,
    pub path: PathBuf,
    /// Cards per column, in [`Phase::ALL`]'s order.
    pub counts: [usize; 5],
}

/// One card: a unit, or what is wrong with a store.
#[derive(Debug, Clone, Serialize)]
pub struct Card {
    /// `STORE/TASK`; for a broken store, `STORE` (or the layout's name).
    pub reference: String,
    /// Index into [`Board::stores`]; `None` for a store that cannot be read.
    #[serde(skip)]
    pub store: Option<usize>,
    pub layout: String,
    pub store_name: String,
    pub task: String,
    pub title: Option<String>,
    pub status: String,
    pub phase: Phase,
    pub why: Option<String>,
    pub pass: Option<String>,
    pub claim: Option<Held>,
    /// How long the unit has been in its status (`3 h`), where known.
    pub age: Option<String>,
    pub deps: Vec<String>,
    pub group: Option<String>,
    pub parent: Option<String>,
    /// What is wrong, for a card of a store's problem.
    pub problem: Option<String>,
}

/// Who holds a unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    /// `session 1a2b3c4d` or `alice@laptop`.
    pub owner: String,
    /// `lease ends in 25 min`, `lease ended 2 h ago`.
    pub lease: String,
    pub live: bool,
}

impl Card {
    /// What the card says of the unit's state: status, why, the pass it owes (for a store
    /// that cannot be read, what is wrong).
    pub fn state_line(&self) -> String {
        if let Some(p) = &self.problem {
            return format!("{}: {p}", self.status);
        }
        let mut parts = vec![self.status.clone()];
        parts.extend(self.why.iter().cloned());
        if let Some(p) = &self.pass {
            parts.push(format!("owes {p}"));
        }
        parts.join(" · ")
    }

    /// Who holds it and until when, and how long it has been in its state (empty when neither
    /// is known).
    pub fn held_line(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(h) = &self.claim {
            parts.push(format!("{}, {}", h.owner, h.lease));
        }
        parts.extend(self.age.iter().cloned());
        parts.join(" · ")
    }

    /// Both lines in one.
    pub fn detail(&self) -> String {
        let held = self.held_line();
        if held.is_empty() {
            self.state_line()
        } else {
            format!("{} · {held}", self.state_line())
        }
    }

    /// Whether the card matches a filter (case-insensitive, in its reference, title, status,
    /// why and owner); an empty filter matches every card.
    pub fn matches(&self, filter: &str) -> bool {
        if filter.is_empty() {
            return true;
        }
        let f = filter.to_lowercase();
        let hay = [
            Some(&self.reference),
            self.title.as_ref(),
            Some(&self.status),
            self.why.as_ref(),
            self.claim.as_ref().map(|c| &c.owner),
            self.problem.as_ref(),
        ];
        hay.iter().flatten().any(|s| s.to_lowercase().contains(&f))
    }
}

/// Builds the board from the stores, the stores that could not be read, and the claims.
pub fn build(
    project: PathBuf,
    now: DateTime<Utc>,
    stores: Vec<StoreIn>,
    problems: Vec<Problem>,
    claims: &[ClaimIn],
) -> Board {
    let held: HashMap<(&str, &str, &str), &ClaimIn> = claims
        .iter()
        .map(|c| ((c.layout.as_str(), c.store.as_str(), c.task.as_str()), c))
        .collect();
    let mut views = Vec::with_capacity(stores.len());
    let mut cards = Vec::with_capacity(stores.iter().map(|s| s.units.len()).sum());
    for (i, s) in stores.into_iter().enumerate() {
        let mut counts = [0usize; 5];
        for (j, u) in s.units.into_iter().enumerate() {
            counts[column(u.phase)] += 1;
            let key = s.keys.get(j).map_or(u.id.as_str(), String::as_str);
            let c = held.get(&(s.layout, s.name.as_str(), key));
            let claim = c.map(|c| Held {
                owner: label(&c.owner),
                lease: if c.lease_end > now {
                    format!("lease ends {}", relative_to(now, c.lease_end))
                } else {
                    format!("lease ended {}", relative_to(now, c.lease_end))
                },
                live: c.lease_end > now,
            });
            let since = u
                .since
                .as_deref()
                .and_then(parse_time)
                .or_else(|| c.and_then(|c| c.since));
            cards.push(Card {
                reference: reference(&s.name, &u.id),
                store: Some(i),
                layout: s.layout.to_string(),
                store_name: s.name.clone(),
                task: u.id,
                title: u.title,
                status: u.status,
                phase: u.phase,
                why: u.why,
                pass: u.pass,
                claim,
                age: since.map(|t| age(now, t)),
                deps: u.deps,
                group: u.group,
                parent: u.parent,
                problem: None,
            });
        }
        views.push(StoreView {
            layout: s.layout.to_string(),
            name: s.name,
            path: s.path,
            counts,
        });
    }
    for p in &problems {
        let store = views
            .iter()
            .position(|v| !p.unreadable && v.layout == p.layout && v.name == p.store);
        cards.push(Card {
            reference: if p.store.is_empty() {
                p.layout.clone()
            } else {
                p.store.clone()
            },
            store,
            layout: p.layout.clone(),
            store_name: p.store.clone(),
            task: String::new(),
            title: None,
            status: p.kind().into(),
            phase: Phase::Person,
            why: None,
            pass: None,
            claim: None,
            age: None,
            deps: Vec::new(),
            group: None,
            parent: None,
            problem: Some(p.problem.clone()),
        });
    }
    Board {
        project,
        written: crate::store::clock::stamp(now),
        stores: views,
        problems,
        cards,
    }
}

/// How long since `t`: `for 3 h` (`in 5 min` for a time ahead of the clock).
fn age(now: DateTime<Utc>, t: DateTime<Utc>) -> String {
    let r = relative_to(now, t);
    match r.strip_suffix(" ago") {
        Some(d) => format!("for {d}"),
        None => r,
    }
}

/// A phase's column, 0 to 4 in [`Phase::ALL`]'s order.
pub fn column(p: Phase) -> usize {
    Phase::ALL.iter().position(|x| *x == p).unwrap_or(0)
}

impl Board {
    /// The cards of each column (indices into [`Board::cards`]) that pass the filters: one store
    /// (an index into [`Board::stores`]) or all, and a text filter ([`Card::matches`]). A broken
    /// store's card shows only when no store is picked.
    pub fn columns(&self, store: Option<usize>, filter: &str) -> [Vec<usize>; 5] {
        let mut cols: [Vec<usize>; 5] = Default::default();
        for (i, c) in self.cards.iter().enumerate() {
            let in_store = match store {
                None => true,
                Some(s) => c.store == Some(s),
            };
            if in_store && c.matches(filter) {
                cols[column(c.phase)].push(i);
            }
        }
        cols
    }

    /// Cards in all.
    pub fn total(&self) -> usize {
        self.cards.len()
    }

    /// Keeps only the stores named `name` (and their cards); `false` when none is.
    pub fn only_store(&mut self, name: &str) -> bool {
        let keep: Vec<usize> = (0..self.stores.len())
            .filter(|&i| self.stores[i].name == name)
            .collect();
        let problem = self.problems.iter().any(|p| p.store == name);
        if keep.is_empty() && !problem {
            return false;
        }
        let remap: HashMap<usize, usize> = keep.iter().enumerate().map(|(n, &o)| (o, n)).collect();
        self.stores = keep.iter().map(|&i| self.stores[i].clone()).collect();
        self.problems.retain(|p| p.store == name);
        self.cards.retain(|c| match c.store {
            Some(s) => remap.contains_key(&s),
            None => c.store_name == name,
        });
        for c in &mut self.cards {
            c.store = c.store.and_then(|s| remap.get(&s).copied());
        }
        true
    }

    /// The dependency graph of the board's units.
    pub fn graph(&self) -> Graph {
        Graph::of(self)
    }
}

/// What an edge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// `from` must be finished before `to` (a dependency, an earlier order entry).
    Before,
    /// `from` is part of `to` (a projects subtask and its parent).
    PartOf,
}

/// A node of the graph: a unit, or a dependency a unit names that its store does not hold.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// `STORE/TASK`.
    pub id: String,
    pub layout: String,
    pub store: String,
    pub task: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub status: String,
    /// `None` for a dependency the store does not hold.
    pub phase: Option<Phase>,
    /// The cluster it is drawn in (an execute layer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Index into [`Board::stores`].
    #[serde(skip)]
    pub store_index: usize,
}

/// An edge of the graph, between indices into [`Graph::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

/// The dependency graph: every unit of every store, edges within a store.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

impl Graph {
    fn of(b: &Board) -> Graph {
        let mut g = Graph::default();
        let mut at: HashMap<(usize, &str), usize> = HashMap::new();
        // The edges drawn so far: a dependency named twice draws one edge.
        let mut drawn: std::collections::HashSet<Edge> = std::collections::HashSet::new();
        let units: Vec<&Card> = b.cards.iter().filter(|c| c.problem.is_none()).collect();
        for c in &units {
            let s = c.store.unwrap_or(0);
            if at.contains_key(&(s, c.task.as_str())) {
                continue;
            }
            at.insert((s, c.task.as_str()), g.nodes.len());
            g.nodes.push(Node {
                id: c.reference.clone(),
                layout: c.layout.clone(),
                store: c.store_name.clone(),
                task: c.task.clone(),
                title: c.title.clone(),
                status: c.status.clone(),
                phase: Some(c.phase),
                group: c.group.clone(),
                store_index: s,
            });
        }
        for c in &units {
            let s = c.store.unwrap_or(0);
            let Some(&me) = at.get(&(s, c.task.as_str())) else {
                continue;
            };
            let links = c
                .deps
                .iter()
                .map(|d| (d, EdgeKind::Before))
                .chain(c.parent.iter().map(|p| (p, EdgeKind::PartOf)));
            for (other, kind) in links {
                let o = match at.get(&(s, other.as_str())) {
                    Some(&o) => o,
                    None => {
                        let o = g.nodes.len();
                        at.insert((s, other.as_str()), o);
                        g.nodes.push(Node {
                            id: reference(&c.store_name, other),
                            layout: c.layout.clone(),
                            store: c.store_name.clone(),
                            task: other.clone(),
                            title: None,
                            status: "not in the store".into(),
                            phase: None,
                            group: None,
                            store_index: s,
                        });
                        o
                    }
                };
                let e = match kind {
                    EdgeKind::Before => Edge {
                        from: o,
                        to: me,
                        kind,
                    },
                    EdgeKind::PartOf => Edge {
                        from: me,
                        to: o,
                        kind,
                    },
                };
                if drawn.insert(e) {
                    g.edges.push(e);
                }
            }
        }
        g
    }

    /// Each node's rank: the longest chain of `Before` edges leading to it (0 for a node that
    /// waits for nothing). A cycle is broken where it is met; linear in nodes and edges.
    pub fn ranks(&self) -> Vec<usize> {
        let n = self.nodes.len();
        let mut indeg = vec![0usize; n];
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in self.edges.iter().filter(|e| e.kind == EdgeKind::Before) {
            if e.from != e.to {
                succ[e.from].push(e.to);
                indeg[e.to] += 1;
            }
        }
        let mut rank = vec![0usize; n];
        let mut done = vec![false; n];
        let mut queue: std::collections::VecDeque<usize> =
            (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut left = n;
        loop {
            while let Some(i) = queue.pop_front() {
                if done[i] {
                    continue;
                }
                done[i] = true;
                left -= 1;
                for &j in &succ[i] {
                    if done[j] {
                        continue;
                    }
                    rank[j] = rank[j].max(rank[i] + 1);
                    indeg[j] = indeg[j].saturating_sub(1);
                    if indeg[j] == 0 {
                        queue.push_back(j);
                    }
                }
            }
            if left == 0 {
                break;
            }
            // A cycle: start again from its first node not yet placed.
            match (0..n).find(|&i| !done[i]) {
                Some(i) => {
                    indeg[i] = 0;
                    queue.push_back(i);
                }
                None => break,
            }
        }
        rank
    }
}

/// `s` cut to at most `max` characters, `…` marking the cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One line: newlines and tabs become spaces.
pub fn one_line(s: &str) -> String {
    s.replace(['\n', '\r', '\t'], " ")
}

/// Units and boards for the tests of the model and its renderers.
#[cfg(test)]
pub(crate) mod fixture {
    use super::*;

    /// A `PENDING` unit titled `title` in `phase`, waiting for `deps`.
    pub fn unit(id: &str, title: &str, phase: Phase, deps: &[&str]) -> WorkUnit {
        WorkUnit {
            id: id.into(),
            title: Some(title.into()),
            status: "PENDING".into(),
            phase,
            why: None,
            deps: deps.iter().map(|d| d.to_string()).collect(),
            pass: None,
            since: None,
            group: None,
            parent: None,
        }
    }

    /// A board, now, of one store per `(layout, name, units)`, with `problems`.
    pub fn board(
        stores: Vec<(&'static str, &str, Vec<WorkUnit>)>,
        problems: Vec<Problem>,
    ) -> Board {
        let stores = stores
            .into_iter()
            .map(|(layout, name, units)| StoreIn {
                layout,
                name: name.into(),
                path: format!("/p/{name}").into(),
                units,
                keys: Vec::new(),
            })
            .collect();
        build("/p".into(), Utc::now(), stores, problems, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(id: &str, phase: Phase, deps: &[&str]) -> WorkUnit {
        fixture::unit(id, &format!("title of {id}"), phase, deps)
    }

    fn at(s: &str) -> DateTime<Utc> {
        parse_time(s).unwrap()
    }

    fn board() -> Board {
        let mut t2 = unit("T2", Phase::InProgress, &["T1"]);
        t2.since = Some("2026-03-01T10:00:00Z".into());
        let mut t3 = unit("T3", Phase::Blocked, &["T2", "T9"]);
        t3.parent = Some("T1".into());
        let stores = vec![
            StoreIn {
                layout: "projects",
                name: "web".into(),
                path: "/p/web".into(),
                units: vec![unit("T1", Phase::Done, &[]), t2, t3],
                keys: Vec::new(),
            },
            StoreIn {
                layout: "cdd",
                name: "ws".into(),
                path: "/p/ws".into(),
                units: vec![unit("a.md", Phase::Ready, &[])],
                keys: Vec::new(),
            },
        ];
        let problems = vec![Problem {
            layout: "iterative".into(),
            store: "bad".into(),
            problem: "state.json does not parse".into(),
            unreadable: true,
        }];
        let claims = vec![ClaimIn {
            layout: "projects".into(),
            store: "web".into(),
            task: "T2".into(),
            owner: "aaaaaaaa-1111".into(),
            since: Some(at("2026-03-01T11:50:00Z")),
            lease_end: at("2026-03-01T12:20:00Z"),
        }];
        build(
            "/p".into(),
            at("2026-03-01T12:00:00Z"),
            stores,
            problems,
            &claims,
        )
    }

    #[test]
    fn cards_land_in_their_phase_columns_with_claims_and_ages() {
        let b = board();
        let cols = b.columns(None, "");
        let refs = |c: &[usize]| -> Vec<&str> {
            c.iter().map(|&i| b.cards[i].reference.as_str()).collect()
        };
        assert_eq!(refs(&cols[0]), ["ws/a.md"]);
        assert_eq!(refs(&cols[1]), ["web/T2"]);
        assert_eq!(refs(&cols[2]), ["bad"]);
        assert_eq!(refs(&cols[3]), ["web/T3"]);
        assert_eq!(refs(&cols[4]), ["web/T1"]);
        let t2 = &b.cards[cols[1][0]];
        let held = t2.claim.as_ref().unwrap();
        assert_eq!(held.owner, "session aaaaaaaa");
        assert_eq!(held.lease, "lease ends in 20 min");
        assert!(held.live);
        assert_eq!(t2.age.as_deref(), Some("for 2 h"));
        assert!(t2
            .detail()
            .contains("session aaaaaaaa, lease ends in 20 min"));
        assert_eq!(b.stores[0].counts, [0, 1, 0, 1, 1]);
        assert!(b.cards[cols[2][0]]
            .detail()
            .contains("state.json does not parse"));
    }

    #[test]
    fn filters_by_store_and_text() {
        let b = board();
        let cols = b.columns(Some(1), "");
        assert_eq!(cols.iter().map(Vec::len).sum::<usize>(), 1);
        let cols = b.columns(None, "SESSION AAAA");
        assert_eq!(cols[1].len(), 1);
        assert_eq!(cols.iter().map(Vec::len).sum::<usize>(), 1);
        let mut only = board();
        assert!(only.only_store("ws"));
        assert_eq!(only.cards.len(), 1);
        assert_eq!(only.cards[0].store, Some(0));
        assert!(!board().only_store("nope"));
    }

    #[test]
    fn the_graph_has_dependencies_parents_and_missing_nodes() {
        let g = board().graph();
        let id = |i: usize| g.nodes[i].id.as_str();
        let edges: Vec<(&str, &str, EdgeKind)> = g
            .edges
            .iter()
            .map(|e| (id(e.from), id(e.to), e.kind))
            .collect();
        assert!(edges.contains(&("web/T1", "web/T2", EdgeKind::Before)));
        assert!(edges.contains(&("web/T2", "web/T3", EdgeKind::Before)));
        assert!(edges.contains(&("web/T9", "web/T3", EdgeKind::Before)));
        assert!(edges.contains(&("web/T3", "web/T1", EdgeKind::PartOf)));
        let missing = g.nodes.iter().find(|n| n.task == "T9").unwrap();
        assert_eq!(missing.phase, None);
        // The broken store is no node.
        assert!(g.nodes.iter().all(|n| n.store != "bad"));
        let r = g.ranks();
        let rank = |t: &str| r[g.nodes.iter().position(|n| n.task == t).unwrap()];
        assert_eq!((rank("T1"), rank("T2"), rank("T3")), (0, 1, 2));
    }

    #[test]
    fn ranks_survive_cycles() {
        let stores = vec![StoreIn {
            layout: "projects",
            name: "w".into(),
            path: "/w".into(),
            units: vec![
                unit("A", Phase::Blocked, &["B"]),
                unit("B", Phase::Blocked, &["A"]),
                unit("C", Phase::Blocked, &["C"]),
            ],
            keys: Vec::new(),
        }];
        let b = build("/".into(), at("2026-03-01T12:00:00Z"), stores, vec![], &[]);
        let g = b.graph();
        assert_eq!(g.ranks().len(), 3);
    }

    #[test]
    fn cut_marks_the_cut() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(one_line("a\nb\tc"), "a b c");
    }
}
