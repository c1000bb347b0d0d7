//! `taskhook board` without a terminal (plain text, colour) and `taskhook graph` (DOT read by
//! Graphviz, Mermaid's edges, JSON) on a project holding every layout; hostile text and broken
//! stores on every surface. The HTML page is `board_html.rs`'s (headless Chromium), the
//! terminal board `board_tui.rs`'s (tmux).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{Project, Run};

pub const A: &str = "aaaaaaaa-1111-4111-8111-111111111111";

/// Every unit of [`five_stores`]: its reference and the column it starts in.
pub const UNITS: &[(&str, &str)] = &[
    ("web/T1", "in progress"),
    ("web/T2", "blocked"),
    ("web/T3", "blocked"),
    ("web/T4", "blocked"),
    ("auth/R1", "ready"),
    ("auth/R2", "blocked"),
    ("run/L0-001", "ready"),
    ("run/L0-002", "ready"),
    ("run/L1-001", "blocked"),
    ("work/a.md", "done"),
    ("work/b.md", "ready"),
    ("work/look", "waiting for a person"),
    ("work/c.md", "blocked"),
    ("proj/t1", "ready"),
    ("proj/t2", "blocked"),
];

/// Runs the binary in the project and asserts it succeeded.
pub fn ok(p: &Project, args: &[&str]) -> Run {
    let r = p.run(args, "");
    assert_eq!(r.code, 0, "{args:?}: {r:?}");
    r
}

/// A project with one store of each layout, dependencies in each, a claim and a finished unit:
/// projects `web` (T2 after T1, T3 after T1 and T2, T4 part of T3 (so T3 is a parent in
/// progress, blocked on its subtask); T1 claimed by session A),
/// iterative `auth` (R2 after R1), execute `run` (layers 0-setup and 1-build, L1-001 after
/// L0-001), cdd `work` (a.md done, b.md, a stop `look`, c.md), claude-tasks `proj` (t2 after t1).
pub fn five_stores(p: &Project) {
    crate::agent::projects_store(p);
    ok(
        p,
        &[
            "projects",
            "add",
            "web",
            "T3",
            "--title",
            "Ship it",
            "--depends",
            "T1,T2",
        ],
    );
    ok(
        p,
        &[
            "projects",
            "add",
            "web",
            "T4",
            "--title",
            "Release notes",
            "--parent",
            "T3",
        ],
    );
    ok(
        p,
        &["iterative", "new", "auth", "--task", "R1", "--task", "R2"],
    );
    let plan = p.root.join(".claude/iterative/auth/tasks.md");
    let text = std::fs::read_to_string(&plan).unwrap();
    let (head, tail) = text.split_at(text.find("**R2**").unwrap());
    std::fs::write(
        &plan,
        format!("{head}{}", tail.replacen("Depends: none", "Depends: R1", 1)),
    )
    .unwrap();
    ok(
        p,
        &[
            "execute",
            "init",
            "docs/tasks/run",
            "--layer",
            "0-setup=L0-001,L0-002",
            "--layer",
            "1-build=L1-001",
        ],
    );
    let state = p.root.join("docs/tasks/run/execute-state.json");
    let mut s: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    s["tasks"]["L1-001"]["dependencies"] = json!(["L0-001"]);
    std::fs::write(&state, serde_json::to_vec_pretty(&s).unwrap()).unwrap();
    let ws = p.root.join("work");
    p.write(
        ".claude/taskhook.json",
        serde_json::to_vec(&json!({"cdd_dir": ws})).unwrap(),
    );
    ok(p, &["cdd", "init"]);
    p.write(
        "work/tasks/order.json",
        r#"{"tasks": [{"task": "a.md"}, {"task": "b.md"}, {"stop": "look", "message": "Look at it"}, {"task": "c.md"}]}"#,
    );
    for t in ["a.md", "b.md", "c.md"] {
        p.write(&format!("work/tasks/{t}"), t);
    }
    ok(p, &["cdd", "import"]);
    ok(p, &["done", "work/a.md"]);
    let tasks = json!({"version": 2, "last_updated": "2026-01-01T00:00:00Z", "tasks": [
        {"id": "t1", "description": "Mirror one", "status": "pending", "created_at": "2026-01-01T00:00:00Z",
         "updated_at": "2026-01-01T00:00:00Z", "assignee": null, "dependencies": []},
        {"id": "t2", "description": "Mirror two", "status": "pending", "created_at": "2026-01-01T00:00:00Z",
         "updated_at": "2026-01-01T00:00:00Z", "assignee": null, "dependencies": ["t1"]}
    ]});
    let list = p.home.join(".claude/tasks/proj/tasks.json");
    std::fs::create_dir_all(list.parent().unwrap()).unwrap();
    std::fs::write(&list, serde_json::to_vec_pretty(&tasks).unwrap()).unwrap();
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_SESSION_ID", A);
    let r = p.run_with(c, &["claim", "web/T1"], "");
    assert_eq!(r.code, 0, "{r:?}");
}

/// A projects store `evil` whose titles carry a terminal's escapes (colour, clear screen, a
/// window title, a hyperlink), a bidi override, HTML and a 20,000-character title; one id is
/// 3,000 characters long. Beside it, an iterative store whose state does not parse and one whose
/// state is over its size cap (a sparse file: nothing is written).
pub fn hostile_stores(p: &Project) {
    ok(p, &["projects", "new", "evil"]);
    let long_id = format!("L{}", "x".repeat(3000));
    let titles = [
        ("E1", "\x1b[31mred\x1b[0m \x1b[2J cleared".to_string()),
        (
            "E2",
            "\x1b]0;pwned\x07 title \x1b]8;;file:///etc/passwd\x07link\x1b]8;;\x07".into(),
        ),
        (
            "E3",
            "<script>alert('x')</script> <img src=x onerror=alert(1)> \"quoted\" | [b] {c}".into(),
        ),
        ("E4", "\u{202e}reversed\u{202c} and a\nnew line\ttab".into()),
        ("E5", format!("long {}", "y".repeat(20_000))),
        (long_id.as_str(), "a very long id".into()),
    ];
    let tasks: Vec<Value> = titles
        .iter()
        .map(|(id, t)| {
            json!({"id": id, "title": t, "status": "PENDING", "parent_id": null, "subtasks": [],
                   "dependencies": if *id == "E2" { json!(["E1"]) } else { json!([]) },
                   "actual_minutes": null, "created_at": "2026-03-01T11:00:00Z",
                   "started_at": null, "completed_at": null, "blocked_reason": null})
        })
        .collect();
    std::fs::write(
        p.root.join(".claude/projects/evil/tasks.json"),
        serde_json::to_vec_pretty(&json!({"tasks": tasks})).unwrap(),
    )
    .unwrap();
    ok(p, &["iterative", "new", "broken", "--task", "R1"]);
    std::fs::write(
        p.root.join(".claude/iterative/broken/state.json"),
        "{ not json \x1b[2J",
    )
    .unwrap();
    ok(p, &["iterative", "new", "huge", "--task", "R1"]);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(p.root.join(".claude/iterative/huge/state.json"))
        .unwrap();
    f.set_len(65 << 20).unwrap();
}

/// Where a program is on PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Mermaid flowchart's edges, as unit references (`from`, `to`, `part of`?).
pub fn mermaid_edges(m: &str) -> BTreeSet<(String, String, bool)> {
    let mut names: HashMap<String, String> = HashMap::new();
    for l in m.lines() {
        let l = l.trim();
        if let Some((id, rest)) = l.split_once("[\"") {
            if id.starts_with('n') && id[1..].chars().all(|c| c.is_ascii_digit()) {
                let label = rest.split("<br/>").next().unwrap_or("");
                names.insert(id.to_string(), label.trim_end_matches("\"]").to_string());
            }
        }
    }
    let mut edges = BTreeSet::new();
    for l in m.lines() {
        let l = l.trim();
        let (from, to, part) = if let Some((a, b)) = l.split_once(" --> ") {
            (a, b, false)
        } else if let Some((a, b)) = l.split_once(" -. part of .-> ") {
            (a, b, true)
        } else {
            continue;
        };
        edges.insert((names[from].clone(), names[to].clone(), part));
    }
    edges
}

fn edge(a: &str, b: &str) -> (String, String, bool) {
    (a.to_string(), b.to_string(), false)
}

#[test]
fn without_a_terminal_the_board_prints_once_as_plain_text() {
    let p = Project::new();
    five_stores(&p);
    let r = ok(&p, &["board"]);
    assert!(
        !r.stdout.contains('\x1b'),
        "no colour off a terminal: {r:?}"
    );
    // Each unit under its column's heading.
    let mut column = "";
    let mut seen = HashMap::new();
    for l in r.stdout.lines() {
        if let Some(head) = l
            .split(" (")
            .next()
            .filter(|h| *h == h.to_uppercase() && !h.is_empty() && !l.starts_with(' '))
        {
            column = head;
            continue;
        }
        if let Some(reference) = l
            .strip_prefix("  ")
            .and_then(|x| x.split_whitespace().next())
        {
            seen.insert(reference.to_string(), column.to_lowercase());
        }
    }
    for (unit, col) in UNITS {
        assert_eq!(
            seen.get(*unit).map(String::as_str),
            Some(*col),
            "{unit}: {}",
            r.stdout
        );
    }
    // The header counts each store; the claim and its lease are on the card.
    assert!(
        r.stdout.contains("projects web: 1 in progress · 3 blocked"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("cdd work: 1 ready · 1 waiting for a person · 1 blocked · 1 done"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("session aaaaaaaa, lease ends in 30 min"),
        "{}",
        r.stdout
    );
    // Colours follow --color and NO_COLOR.
    let always = ok(&p, &["board", "--color", "always"]);
    assert!(
        always.stdout.contains("\x1b[33mIN PROGRESS (1)\x1b[0m"),
        "{always:?}"
    );
    let mut c = p.cmd();
    c.env("NO_COLOR", "1");
    let r = p.run_with(c, &["board", "--color", "auto"], "");
    assert!(!r.stdout.contains('\x1b'));
    let never = ok(&p, &["board", "--color", "never"]);
    assert!(!never.stdout.contains('\x1b'));
}

#[test]
fn graph_dot_is_read_by_graphviz_and_mermaid_has_every_edge() {
    let p = Project::new();
    five_stores(&p);
    let dot = ok(&p, &["graph"]).stdout;
    assert!(dot.starts_with("digraph taskhook {"), "{dot}");
    // Execute layers are clusters inside their store's cluster.
    assert!(dot.contains("label=\"execute · run\""), "{dot}");
    assert!(dot.contains("label=\"layer 0-setup\""), "{dot}");
    assert!(dot.contains("label=\"layer 1-build\""), "{dot}");
    let svg = graphviz(&dot).replace("&#45;", "-");
    for (unit, _) in UNITS {
        assert!(svg.contains(unit), "{unit} not drawn");
    }
    assert!(svg.contains("layer 0-setup"));
    let m = ok(&p, &["graph", "--format", "mermaid"]).stdout;
    assert!(m.starts_with("flowchart LR\n"));
    assert!(
        m.contains("subgraph s2g0[\"layer 0-setup\"]") || m.contains("[\"layer 0-setup\"]"),
        "{m}"
    );
    let edges = mermaid_edges(&m);
    let want = [
        edge("web/T1", "web/T2"),
        edge("web/T1", "web/T3"),
        edge("web/T2", "web/T3"),
        ("web/T4".into(), "web/T3".into(), true),
        edge("auth/R1", "auth/R2"),
        edge("run/L0-001", "run/L1-001"),
        edge("work/a.md", "work/b.md"),
        edge("work/b.md", "work/look"),
        edge("work/look", "work/c.md"),
        edge("proj/t1", "proj/t2"),
    ];
    assert_eq!(edges, want.into_iter().collect(), "{m}");
    // JSON: the same nodes and edges, with their states.
    let j = ok(&p, &["graph", "--format", "json"]).json();
    let nodes: HashMap<String, Value> = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap().to_string(), n.clone()))
        .collect();
    assert_eq!(nodes["web/T1"]["phase"], "in_progress");
    assert_eq!(nodes["work/look"]["phase"], "person");
    assert_eq!(nodes["run/L1-001"]["group"], "1-build");
    assert_eq!(j["edges"].as_array().unwrap().len(), 10, "{j}");
    // One store.
    let one = ok(&p, &["graph", "--store", "work", "--format", "mermaid"]).stdout;
    assert_eq!(mermaid_edges(&one).len(), 3, "{one}");
    assert!(!one.contains("web/T1"));
    let bad = p.run(&["graph", "--store", "nope"], "");
    bad.assert_one_line_error();
    assert!(bad.stderr.contains("no store \"nope\""), "{bad:?}");
    let usage = p.run(&["graph", "--format", "png"], "");
    assert_ne!(usage.code, 0);
}

/// Runs `dot -Tsvg` on a graph; asserts Graphviz accepted it. Fails (never skips) without
/// Graphviz: `.ci/run` installs it.
pub fn graphviz(dot: &str) -> String {
    assert!(
        which("dot").is_some(),
        "Graphviz's `dot` is not on PATH (apt-get install graphviz; .ci/run does)"
    );
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), dot.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dot refused the graph: {err}\n{dot}");
    assert!(!err.contains("syntax error"), "{err}");
    let svg = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(svg.contains("<svg"), "{svg}");
    svg
}

/// No terminal escape, window title or bidi override reaches the text.
pub fn assert_inert(what: &str, s: &str) {
    for bad in ['\x1b', '\x07', '\u{202e}', '\u{9b}'] {
        assert!(!s.contains(bad), "{what}: {bad:?} in output");
    }
}

#[test]
fn hostile_text_and_broken_stores_are_escaped_or_cut_on_every_surface() {
    let p = Project::new();
    hostile_stores(&p);
    // Text.
    let t = ok(&p, &["board"]).stdout;
    assert_inert("text", &t);
    assert!(t.contains("\\u{1b}]0;pwned"), "{t}");
    assert!(
        t.contains("<script>alert('x')</script>"),
        "text keeps HTML as text: {t}"
    );
    assert!(t.lines().all(|l| l.chars().count() < 1200), "lines are cut");
    assert!(t.contains("…"), "{t}");
    // The store whose state does not parse: its layout rebuilt it in memory and says so; the
    // one over its cap cannot be read at all. Each is a card.
    assert!(
        t.contains("iterative broken: problem: state.json was unusable"),
        "{t}"
    );
    assert!(
        t.contains("iterative huge: cannot be read: refusing to read"),
        "{t}"
    );
    assert!(t.contains("over taskhook's 64 MiB cap"), "{t}");
    assert!(
        t.contains("\n  broken\n      problem: state.json was unusable"),
        "{t}"
    );
    assert!(t.contains("\n  huge\n      cannot be read: "), "{t}");
    // DOT: Graphviz reads it; the hostile labels are quoted.
    let dot = ok(&p, &["graph"]).stdout;
    assert_inert("dot", &dot);
    let svg = graphviz(&dot);
    assert!(!svg.contains("<script>"), "the SVG keeps markup as text");
    assert!(
        dot.lines().all(|l| l.chars().count() < 1000),
        "labels are cut"
    );
    // Mermaid: nothing that ends a label or opens markup.
    let m = ok(&p, &["graph", "--format", "mermaid"]).stdout;
    assert_inert("mermaid", &m);
    for l in m.lines().filter(|l| l.contains("[\"")) {
        let inside = l.split_once("[\"").unwrap().1;
        let inside = inside.rsplit_once("\"]").unwrap().0;
        for bad in ['"', '<', '>', '|', '[', ']', '{', '}', '`'] {
            assert!(!inside.replace("<br/>", "").contains(bad), "{bad:?} in {l}");
        }
    }
    assert_eq!(mermaid_edges(&m).len(), 1, "{m}");
    // JSON carries the text as data, escaped by JSON itself.
    let j = ok(&p, &["graph", "--format", "json"]).json();
    assert_eq!(j["problems"].as_array().unwrap().len(), 2, "{j}");
    // HTML: markup and escapes inert, long text cut.
    let page = ok(&p, &["board", "--html", "-"]).stdout;
    assert_inert("html", &page);
    assert!(!page.contains("<script>alert"));
    assert!(!page.contains("<img"));
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(page.len() < 200_000, "{}", page.len());
    assert!(page.contains("cannot be read"));
    // Nothing was changed by reading.
    let before = stamps(&p.root);
    ok(&p, &["board"]);
    ok(&p, &["graph"]);
    assert_eq!(before, stamps(&p.root));
}

#[test]
fn an_empty_project_says_so() {
    let p = Project::new();
    let r = ok(&p, &["board"]);
    assert!(r.stdout.contains("No taskhook stores found"), "{r:?}");
    let r = ok(&p, &["graph"]);
    assert!(r.stdout.starts_with("digraph taskhook {"));
    let r = p.run(&["board", "--html", "-", "--watch"], "");
    r.assert_one_line_usage_error();
    let r = p.run(&["board", "--watch"], "");
    assert_ne!(r.code, 0, "--watch needs --html");
    // The page goes to an existing folder, as a regular file: no folder is created, no link
    // or FIFO written through.
    let r = p.run(&["board", "--html", "no/such/folder/board.html"], "");
    r.assert_one_line_error();
    assert!(r.stderr.contains("there is no folder"), "{r:?}");
    assert!(!p.root.join("no").exists());
    let target = p.tmp.path().join("target");
    std::os::unix::fs::symlink(&target, p.tmp.path().join("link.html")).unwrap();
    let r = p.run(
        &[
            "board",
            "--html",
            p.tmp.path().join("link.html").to_str().unwrap(),
        ],
        "",
    );
    r.assert_one_line_error();
    assert!(r.stderr.contains("symbolic link"), "{r:?}");
    assert!(!target.exists());
}

/// Every file below `dir` with its length and modification time (nothing is read).
pub fn stamps(dir: &Path) -> BTreeMap<std::path::PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(e.path());
            } else {
                out.insert(e.path(), (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

/// A task list of `n` tasks (`proj/B00000`, …; Claude Code's own list, the layout built for
/// lists of tens of thousands): one in ten completed, one in seven waiting for the task before
/// it, the rest ready.
pub fn big_store(p: &Project, n: usize) {
    let tasks: Vec<Value> = (0..n)
        .map(|i| {
            let deps = if i % 7 == 0 && i > 0 {
                json!([format!("B{:05}", i - 1)])
            } else {
                json!([])
            };
            let status = if i % 10 == 0 { "completed" } else { "pending" };
            json!({"id": format!("B{i:05}"), "description": format!("Task number {i}"),
                   "status": status, "created_at": "2026-03-01T11:00:00Z",
                   "updated_at": "2026-03-01T11:00:00Z", "assignee": null, "dependencies": deps})
        })
        .collect();
    let doc = json!({"version": 2, "last_updated": "2026-03-01T11:00:00Z", "tasks": tasks});
    let list = p.home.join(".claude/tasks/proj/tasks.json");
    std::fs::create_dir_all(list.parent().unwrap()).unwrap();
    std::fs::write(&list, serde_json::to_vec(&doc).unwrap()).unwrap();
}
