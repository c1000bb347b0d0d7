//! The dependency graph as Graphviz DOT, a Mermaid flowchart, or JSON (`taskhook graph`).
//!
//! Every store is a cluster (a Mermaid subgraph); an execute store's layers are clusters inside
//! it. Edges go from what must finish first to what waits for it (dependencies, `blockedBy`,
//! each cdd entry after the one before it, iterative plan order); a projects subtask points at
//! its parent with a dashed "part of" edge. Nodes are filled by column (ready, in progress,
//! waiting for a person, blocked, done); a dependency the store does not hold is drawn dashed.
//! Labels are the unit reference and its title, escaped for the format ([`crate::display::text`]
//! first, then the format's own quoting) and cut to [`LABEL`] characters.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use super::model::{cut, one_line, Board, EdgeKind, Graph, Node};
use crate::display;
use crate::layouts::Phase;

/// Longest reference or title in a label, in characters.
pub const LABEL: usize = 60;

/// Fill and stroke colours of a node in `phase` (`None`: not in the store).
pub fn colours(phase: Option<Phase>) -> (&'static str, &'static str) {
    match phase {
        Some(Phase::Ready) => ("#dbeafe", "#2563eb"),
        Some(Phase::InProgress) => ("#fef3c7", "#d97706"),
        Some(Phase::Person) => ("#fae8ff", "#a21caf"),
        Some(Phase::Blocked) => ("#fee2e2", "#dc2626"),
        Some(Phase::Done) => ("#dcfce7", "#16a34a"),
        None => ("#ffffff", "#6b7280"),
    }
}

/// The class of a phase (`ready`, `in_progress`, …; `missing` for a node the store lacks).
pub fn class(phase: Option<Phase>) -> &'static str {
    match phase {
        Some(Phase::Ready) => "ready",
        Some(Phase::InProgress) => "in_progress",
        Some(Phase::Person) => "person",
        Some(Phase::Blocked) => "blocked",
        Some(Phase::Done) => "done",
        None => "missing",
    }
}

/// Text from a store made printable and one line, cut for a label.
fn plain(s: &str) -> String {
    display::text(&cut(&one_line(s), LABEL)).into_owned()
}

/// A node's label lines: its reference, its title, its status.
fn label_lines(n: &Node) -> Vec<String> {
    let mut lines = vec![plain(&n.id)];
    if let Some(t) = &n.title {
        lines.push(plain(t));
    }
    lines.push(plain(&n.status));
    lines
}

/// The stores' clusters: for each store (index into the board's stores), its nodes outside any
/// group, and its groups with their nodes, in order.
type Clusters = BTreeMap<usize, (Vec<usize>, Vec<(String, Vec<usize>)>)>;

fn clusters(g: &Graph) -> Clusters {
    let mut out: Clusters = BTreeMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let entry = out.entry(n.store_index).or_default();
        match &n.group {
            None => entry.0.push(i),
            Some(grp) => match entry.1.iter_mut().find(|(g, _)| g == grp) {
                Some((_, v)) => v.push(i),
                None => entry.1.push((grp.clone(), vec![i])),
            },
        }
    }
    out
}

fn store_title(b: &Board, s: usize) -> String {
    b.stores
        .get(s)
        .map(|v| format!("{} · {}", v.layout, plain(&v.name)))
        .unwrap_or_default()
}

/// A DOT double-quoted string's content.
fn dot_quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The graph in Graphviz's DOT language (`dot -Tsvg` draws it).
pub fn dot(b: &Board, g: &Graph) -> String {
    let mut o = String::new();
    o.push_str("digraph taskhook {\n");
    o.push_str("  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11];\n");
    o.push_str(
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n",
    );
    o.push_str("  edge [color=\"#6b7280\"];\n");
    let node = |o: &mut String, indent: &str, i: usize| {
        let n = &g.nodes[i];
        let (fill, stroke) = colours(n.phase);
        let label: Vec<String> = label_lines(n).iter().map(|l| dot_quote(l)).collect();
        let style = if n.phase.is_none() {
            ", style=\"rounded,dashed\""
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "{indent}n{i} [label=\"{}\", fillcolor=\"{fill}\", color=\"{stroke}\"{style}];",
            label.join("\\n")
        );
    };
    for (s, (loose, groups)) in clusters(g) {
        let _ = writeln!(o, "  subgraph cluster_s{s} {{");
        let _ = writeln!(o, "    label=\"{}\";", dot_quote(&store_title(b, s)));
        o.push_str("    style=\"rounded\"; color=\"#9ca3af\";\n");
        for (k, (grp, members)) in groups.iter().enumerate() {
            let _ = writeln!(o, "    subgraph cluster_s{s}_g{k} {{");
            let _ = writeln!(o, "      label=\"layer {}\";", dot_quote(&plain(grp)));
            o.push_str("      style=\"dashed\"; color=\"#9ca3af\";\n");
            for &i in members {
                node(&mut o, "      ", i);
            }
            o.push_str("    }\n");
        }
        for i in loose {
            node(&mut o, "    ", i);
        }
        o.push_str("  }\n");
    }
    for e in &g.edges {
        let attrs = match e.kind {
            EdgeKind::Before => "",
            EdgeKind::PartOf => " [style=dashed, arrowhead=empty, label=\"part of\"]",
        };
        let _ = writeln!(o, "  n{} -> n{}{attrs};", e.from, e.to);
    }
    o.push_str("}\n");
    o
}

/// A Mermaid label's content: every character that is not plainly safe as a numeric entity
/// (`#35;`), which Mermaid decodes, so no quote, bracket, pipe or markup can end the label.
fn mermaid_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || " -_./:,()@+=*~".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", u32::from(c));
        }
    }
    out
}

/// The graph as a Mermaid flowchart.
pub fn mermaid(b: &Board, g: &Graph) -> String {
    let mut o = String::new();
    o.push_str("flowchart LR\n");
    let node = |o: &mut String, indent: &str, i: usize| {
        let n = &g.nodes[i];
        let label: Vec<String> = label_lines(n).iter().map(|l| mermaid_quote(l)).collect();
        let _ = writeln!(
            o,
            "{indent}n{i}[\"{}\"]:::{}",
            label.join("<br/>"),
            class(n.phase)
        );
    };
    for (s, (loose, groups)) in clusters(g) {
        let _ = writeln!(
            o,
            "  subgraph s{s}[\"{}\"]",
            mermaid_quote(&store_title(b, s))
        );
        for (k, (grp, members)) in groups.iter().enumerate() {
            let _ = writeln!(
                o,
                "    subgraph s{s}g{k}[\"layer {}\"]",
                mermaid_quote(&plain(grp))
            );
            for &i in members {
                node(&mut o, "      ", i);
            }
            o.push_str("    end\n");
        }
        for i in loose {
            node(&mut o, "    ", i);
        }
        o.push_str("  end\n");
    }
    for e in &g.edges {
        match e.kind {
            EdgeKind::Before => {
                let _ = writeln!(o, "  n{} --> n{}", e.from, e.to);
            }
            EdgeKind::PartOf => {
                let _ = writeln!(o, "  n{} -. part of .-> n{}", e.from, e.to);
            }
        }
    }
    for p in [
        Some(Phase::Ready),
        Some(Phase::InProgress),
        Some(Phase::Person),
        Some(Phase::Blocked),
        Some(Phase::Done),
        None,
    ] {
        let (fill, stroke) = colours(p);
        let dash = if p.is_none() {
            ",stroke-dasharray:4 3"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "  classDef {} fill:{fill},stroke:{stroke}{dash}",
            class(p)
        );
    }
    o
}

/// The graph as one JSON object: `nodes` (`id` is the unit reference), `edges` (`from` must
/// finish before `to`; `part_of`: `from` is part of `to`), and the stores that could not be
/// read (`problems`).
pub fn json(b: &Board, g: &Graph) -> serde_json::Value {
    let edges: Vec<serde_json::Value> = g
        .edges
        .iter()
        .map(|e| {
            json!({
                "from": g.nodes[e.from].id,
                "to": g.nodes[e.to].id,
                "kind": e.kind,
            })
        })
        .collect();
    json!({
        "project_dir": b.project,
        "written": b.written,
        "nodes": g.nodes,
        "edges": edges,
        "problems": b.problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::model::fixture::{self, unit};

    fn board() -> Board {
        let u = |id: &str, deps: &[&str], group: Option<&str>| {
            let title = format!("\"{id}\" <script>alert(1)</script> \\N |x| ]\x1b[31m");
            let mut u = unit(id, &title, Phase::Ready, deps);
            u.group = group.map(str::to_string);
            u
        };
        fixture::board(
            vec![(
                "execute",
                "auth",
                vec![
                    u("L0-001", &[], Some("0-setup")),
                    u("L1-001", &["L0-001"], Some("1-build")),
                    u("X", &["L1-001"], None),
                ],
            )],
            vec![],
        )
    }

    #[test]
    fn dot_has_layer_clusters_and_quotes_labels() {
        let b = board();
        let d = dot(&b, &b.graph());
        assert!(d.contains("subgraph cluster_s0 {"));
        assert!(d.contains("label=\"layer 0-setup\""));
        assert!(d.contains("n0 -> n1;"));
        assert!(d.contains("n1 -> n2;"));
        assert!(d.contains("\\\"L0-001\\\""), "{d}");
        assert!(d.contains("\\\\N"));
        assert!(!d.contains('\x1b'));
    }

    #[test]
    fn mermaid_escapes_everything_that_could_end_a_label() {
        let b = board();
        let m = mermaid(&b, &b.graph());
        assert!(m.starts_with("flowchart LR\n"));
        assert!(m.contains("subgraph s0g0[\"layer 0-setup\"]"));
        assert!(m.contains("  n0 --> n1\n"));
        for bad in ["<script>", "|x|", "\x1b"] {
            assert!(!m.contains(bad), "{bad:?} in {m}");
        }
        assert!(m.contains("#60;script#62;"));
        let j = json(&b, &b.graph());
        assert_eq!(j["edges"][0]["from"], "auth/L0-001");
        assert_eq!(j["edges"][0]["kind"], "before");
        assert_eq!(j["nodes"][0]["group"], "0-setup");
    }
}
