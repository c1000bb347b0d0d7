//! Process-level benchmark of the claude-tasks layout against a Python peer hook
//! (`benches/peer.py`, the same durable work: json.load, change, fcntl lock, temp file, fsync,
//! os.replace). Run with `cargo bench --bench tasks` (never part of `cargo test`).
//!
//! Lists of 1k, 10k and 100k tasks (about 480 bytes each, near the 440). Every case is a
//! fresh process; cases of one size run interleaved, round-robin, so drift on a shared machine
//! hits them alike. CPU time (user + system, from `wait4`) and peak memory (`ru_maxrss`) are
//! the child's own; no harness reset is inside a measurement (a state change alternates one
//! todo between two statuses, so each run changes the list). Prints medians, the ratios to
//! the peer, growth 10k → 100k, peak memory against the file, and the targets.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::exit
)]

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// Runs per case, by list size (each run of a 100k case takes up to a few seconds).
fn runs_for(n: usize) -> usize {
    match n {
        0..=1_000 => 41,
        1_001..=10_000 => 15,
        _ => 5,
    }
}

/// One finished child: CPU seconds and peak resident memory in bytes.
#[derive(Clone, Copy)]
struct Sample {
    cpu: f64,
    rss: u64,
}

/// Spawns `cmd` with `stdin`, waits with `wait4` for its own rusage (`wait4` reaps it).
#[allow(clippy::zombie_processes)]
fn measure(mut cmd: Command, stdin: &[u8]) -> Sample {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(stdin);
    }
    let u = common::wait_usage(&child);
    if !u.ok {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
        panic!("{cmd:?} failed ({}): {err}", u.status);
    }
    Sample {
        cpu: u.cpu.as_secs_f64(),
        rss: u.max_rss,
    }
}

/// A seed-002 list of `n` tasks, written the way taskhook writes it (2-space JSON), built
/// task by task so the harness stays small (a forked child's peak memory starts at its
/// parent's).
fn make_list(n: usize) -> Vec<u8> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut out = Vec::with_capacity(n * 460 + 100);
    out.extend_from_slice(b"{\n  \"tasks\": [");
    let mut done = vec![false; n];
    for i in 0..n {
        let mut deps = Vec::new();
        if i > 0 && rnd() % 10 < 3 {
            deps.push((rnd() as usize) % i);
        }
        let ready = deps.iter().all(|&d| done[d]);
        let status = if i < n * 4 / 10 && ready {
            done[i] = true;
            "completed"
        } else if !ready {
            "blocked"
        } else if rnd() % 5 == 0 {
            "in_progress"
        } else {
            "pending"
        };
        let task = json!({
            "id": format!("task-{i:06}"),
            "description": format!("Implement part {i} of the parser module"),
            "status": status,
            "created_at": "2026-01-14T10:30:00Z",
            "updated_at": "2026-01-14T10:30:00Z",
            "assignee": if i % 3 == 0 { json!("agent-123") } else { Value::Null },
            "dependencies": deps.iter().map(|d| format!("task-{d:06}")).collect::<Vec<_>>(),
            "metadata": {"priority": "high", "tags": ["backend"], "source": "user",
                         "custom_fields": {"estimate_minutes": 30}}
        });
        out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        for b in serde_json::to_vec_pretty(&task).unwrap() {
            out.push(b);
            if b == b'\n' {
                out.extend_from_slice(b"    ");
            }
        }
    }
    out.extend_from_slice(if n == 0 { b"]" } else { b"\n  ]" });
    out.extend_from_slice(
        b",\n  \"version\": 2,\n  \"last_updated\": \"2026-01-14T10:30:00Z\"\n}\n",
    );
    out
}

fn todo_write(cwd: &Path, flip: bool) -> Vec<u8> {
    let todo = |c: &str, s: &str| json!({"content": c, "status": s, "activeForm": c});
    let todos = vec![
        todo(
            "Write parser",
            if flip { "completed" } else { "in_progress" },
        ),
        todo("Test parser", "pending"),
        todo("Document parser", "pending"),
        todo("Review parser", "pending"),
        todo("Ship parser", "pending"),
    ];
    serde_json::to_vec(&json!({
        "session_id": "d0f25021-a11f-4950-869e-feafa9106abd",
        "cwd": cwd.display().to_string(), "hook_event_name": "PostToolUse",
        "tool_name": "TodoWrite", "tool_input": {"todos": todos},
        "tool_response": {"oldTodos": [], "newTodos": todos}
    }))
    .unwrap()
}

/// A throw-away home and project holding a copy of `list` as the project's task list.
struct Place {
    home: PathBuf,
    proj: PathBuf,
    list: PathBuf,
}

fn place(root: &Path, name: &str, list: &[u8]) -> Place {
    let home = root.join(name).join("home");
    let proj = root.join(name).join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    let file = home.join(".claude/tasks/proj/tasks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, list).unwrap();
    Place {
        home,
        proj,
        list: file,
    }
}

fn taskhook(pl: &Place, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_taskhook"));
    c.args(args)
        .env_clear()
        .env("HOME", &pl.home)
        .current_dir(&pl.proj);
    c
}

fn python(args: &[&str]) -> Command {
    let mut c = Command::new("python3");
    c.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    c
}

#[path = "tasks/report.rs"]
mod report;
use report::{mib, report, Row};

type Make = Box<dyn Fn(usize) -> (Command, Vec<u8>)>;

struct Case {
    name: &'static str,
    make: Make,
    samples: Vec<Sample>,
    runs: usize,
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Runs `cases` interleaved: `warm` unmeasured rounds, then `runs` measured ones.
fn interleave(cases: &mut [Case], runs: usize, warm: usize) {
    for round in 0..warm + runs {
        for c in cases.iter_mut() {
            let (cmd, stdin) = (c.make)(c.runs);
            c.runs += 1;
            let s = measure(cmd, &stdin);
            if round >= warm {
                c.samples.push(s);
            }
        }
    }
}

fn summarize(cases: &[Case]) -> BTreeMap<&'static str, Row> {
    cases
        .iter()
        .map(|c| {
            let mut cpu: Vec<f64> = c.samples.iter().map(|s| s.cpu).collect();
            let rss = c.samples.iter().map(|s| s.rss).max().unwrap_or(0);
            (
                c.name,
                Row {
                    cpu: median(&mut cpu),
                    rss,
                },
            )
        })
        .collect()
}

fn main() {
    let root = std::env::temp_dir().join(format!("taskhook-bench-tasks-{}", std::process::id()));
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peer.py");
    let peer = peer.to_str().unwrap().to_string();
    let load = "import json,sys; json.load(open(sys.argv[1], encoding='utf-8'))";
    // TASKHOOK_BENCH_SIZES=1000,10000 runs only those sizes.
    let sizes: Vec<usize> = std::env::var("TASKHOOK_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let mut table: BTreeMap<usize, BTreeMap<&'static str, Row>> = BTreeMap::new();
    let mut file_size = BTreeMap::new();
    for &n in &sizes {
        let list = make_list(n);
        file_size.insert(n, list.len() as u64);
        let dir = root.join(n.to_string());
        let th = place(&dir, "change", &list);
        let py = place(&dir, "peer", &list);
        let noop = place(&dir, "noop", &list);
        drop(list);
        // The no-op's list already holds the todos.
        measure(taskhook(&noop, &["hook"]), &todo_write(&noop.proj, false));
        let start = serde_json::to_vec(&json!({"session_id": "s", "cwd": noop.proj,
            "hook_event_name": "SessionStart", "source": "startup"}))
        .unwrap();
        let (th, py, noop) = (
            std::rc::Rc::new(th),
            std::rc::Rc::new(py),
            std::rc::Rc::new(noop),
        );
        let mut cases: Vec<Case> = Vec::new();
        let mut add = |name, make: Make| {
            cases.push(Case {
                name,
                make,
                samples: Vec::new(),
                runs: 0,
            })
        };
        let t = th.clone();
        add(
            "change",
            Box::new(move |i| (taskhook(&t, &["hook"]), todo_write(&t.proj, i % 2 == 1))),
        );
        let (p, peer) = (py.clone(), peer.clone());
        add(
            "peer change",
            Box::new(move |i| {
                (
                    python(&[&peer, p.list.to_str().unwrap()]),
                    todo_write(&p.proj, i % 2 == 1),
                )
            }),
        );
        let t = noop.clone();
        add(
            "no-op change",
            Box::new(move |_| (taskhook(&t, &["hook"]), todo_write(&t.proj, false))),
        );
        let t = noop.clone();
        add(
            "one read + parse (tasks read)",
            Box::new(move |_| {
                (
                    taskhook(&t, &["tasks", "read", "--status", "in_progress"]),
                    Vec::new(),
                )
            }),
        );
        let t = noop.clone();
        add(
            "SessionStart",
            Box::new(move |_| (taskhook(&t, &["hook"]), start.clone())),
        );
        let t = noop.clone();
        add(
            "status",
            Box::new(move |_| (taskhook(&t, &["status"]), Vec::new())),
        );
        let t = noop.clone();
        add(
            "validate",
            Box::new(move |_| (taskhook(&t, &["validate"]), Vec::new())),
        );
        let t = noop.clone();
        add(
            "python json.load",
            Box::new(move |_| (python(&["-c", load, t.list.to_str().unwrap()]), Vec::new())),
        );
        eprintln!(
            "{n} tasks ({}): {} runs per case…",
            mib(file_size[&n]),
            runs_for(n)
        );
        interleave(&mut cases, runs_for(n), 2);
        table.insert(n, summarize(&cases));
    }
    let loops = payload_loops(&root.join("loops"));
    let _ = std::fs::remove_dir_all(&root);
    report(&table, &file_size, &loops);
}

/// One-shot payload-driven loops (median of 3, each on a fresh list): CPU seconds.
fn payload_loops(dir: &Path) -> Vec<(&'static str, f64)> {
    let todos = |items: Vec<Value>, cwd: &Path| {
        serde_json::to_vec(
            &json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "TodoWrite", "tool_input": {"todos": items}, "tool_response": {}}),
        )
        .unwrap()
    };
    let mut out = Vec::new();
    type Payload = Box<dyn Fn(&Path) -> Vec<u8>>;
    // Task 1 blocked by tasks 2..=k+1, none known to the list yet (issue 20 item 21: linear).
    let blocked_by = |k: usize| -> Payload {
        Box::new(move |cwd: &Path| {
            let ids: Vec<String> = (2..k + 2).map(|n| n.to_string()).collect();
            serde_json::to_vec(
                &json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PostToolUse",
                "tool_name": "TaskUpdate", "tool_input": {"taskId": "1", "addBlockedBy": ids},
                "tool_response": {"success": true, "taskId": "1"}}),
            )
            .unwrap()
        })
    };
    let cases: Vec<(&'static str, Payload)> = vec![
        (
            "TodoWrite of 20,000 todos",
            Box::new(move |cwd: &Path| {
                todos(
                    (0..20_000)
                        .map(|i| json!({"content": format!("todo {i}"), "status": "pending"}))
                        .collect(),
                    cwd,
                )
            }),
        ),
        (
            "TodoWrite of 4,000 identical todos",
            Box::new(move |cwd: &Path| {
                todos(
                    vec![json!({"content": "Same", "status": "pending"}); 4_000],
                    cwd,
                )
            }),
        ),
        ("TaskUpdate addBlockedBy with 1,000 ids", blocked_by(1_000)),
        ("TaskUpdate addBlockedBy with 3,000 ids", blocked_by(3_000)),
        (
            "TaskUpdate addBlockedBy with 10,000 ids",
            blocked_by(10_000),
        ),
    ];
    for (name, payload) in cases {
        let mut cpu = Vec::new();
        for run in 0..3 {
            let pl = place(
                &dir.join(format!("{name}-{run}").replace(' ', "_")),
                "x",
                b"",
            );
            std::fs::remove_file(&pl.list).unwrap();
            cpu.push(measure(taskhook(&pl, &["hook"]), &payload(&pl.proj)).cpu);
        }
        out.push((name, median(&mut cpu)));
    }
    out
}
