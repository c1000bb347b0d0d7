//! Process-level cost of `taskhook hook` on a big iterative store (issue 13): SessionStart and
//! SubagentStop with 20k units and 100k progress.md entries (target: at most 0.5 s each), the
//! same at half the size (cost linear in the log, or better), and SessionStart on a store the
//! seed's own skill wrote (no cursor in state.json: the whole log is checked). Run with
//! `cargo bench --bench iterative`.
//!
//! Each case spawns the release binary with one payload; cases are interleaved round-robin.
//! Medians of the child's CPU time (user + system, from `wait4`: what the target is about, and
//! steady on a shared machine) and of wall time (which includes the fsyncs and, on a loaded
//! machine, waiting for a core).
//! `TASKHOOK_BENCH_KEEP=1` keeps the stores (for profiling) and prints where.
//! Every SubagentStop is a real state change (a different in-progress unit each time declares
//! itself done: an entry appended, state.json rewritten).
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

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

const RUNS: usize = 11;
const TS: &str = "2026-01-01T00:00:00Z";

/// Writes `.claude/iterative/big/` with `units` units and `units * 5` entries: the first half
/// done after 7 stops (4 work, confirmation, verification, done), the second half in progress
/// after 3.
fn make_store(project: &Path, units: usize) {
    let dir = project.join(".claude/iterative/big");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let half = units / 2;
    let mut tasks = String::from("# big - Tasks\n\n## Tasks\n\n");
    let mut progress = String::from("# Progress Log\n\n");
    let mut state_units = Map::new();
    for n in 1..=units {
        let id = format!("T{n}");
        writeln!(
            tasks,
            "- [ ] **{id}**: unit {n}\n  - Completion: `<signal>{id}_DONE</signal>`\n  - Max iterations: 10\n  - Depends: none\n"
        )
        .unwrap();
        let done = n <= half;
        let stops = if done { 7 } else { 3 };
        for i in 1..=stops {
            let signal = done && i > 4;
            write!(
                progress,
                "## {id} - Iteration {i} - {TS}\n**Did:** worked on the parser, its error messages and their tests\n"
            )
            .unwrap();
            if signal {
                write!(progress, "**Remaining:** None\n**Signal:** {id}_DONE\n").unwrap();
            } else {
                write!(
                    progress,
                    "**Remaining:** the edge cases\n**Blockers:** None\n"
                )
                .unwrap();
            }
            progress.push_str("**Commit:** none\n\n");
        }
        let unit = if done {
            json!({"status": "done", "iterations_used": 7, "confirmations_used": 1,
                   "verification_passed": true, "max_iterations": 10,
                   "started_at": TS, "completed_at": TS})
        } else {
            json!({"status": "in_progress", "iterations_used": 3, "confirmations_used": 0,
                   "max_iterations": 10, "started_at": TS})
        };
        state_units.insert(id, unit);
    }
    let state = json!({
        "task": "big", "slug": "big", "mode": "development", "created": TS, "updated": TS,
        "phase": "execute", "current_task": format!("T{}", half + 1), "current_iteration": 3,
        "tasks": Value::Object(state_units), "commits": [],
    });
    std::fs::write(dir.join("tasks.md"), tasks).unwrap();
    std::fs::write(dir.join("progress.md"), progress).unwrap();
    std::fs::write(
        dir.join("state.json"),
        serde_json::to_vec_pretty(&state).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("guardrails.md"), "# Guardrails\n").unwrap();
}

struct Case {
    name: String,
    project: PathBuf,
    /// Builds the payload of run `i`.
    payload: Box<dyn Fn(usize) -> Vec<u8>>,
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

/// One run: (wall time, CPU time of the child (user + system), stdout).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its CPU time
fn run(bin: &Path, home: &Path, project: &Path, payload: &[u8]) -> (Duration, Duration, String) {
    let start = Instant::now();
    let mut child = Command::new(bin)
        .arg("hook")
        .env_clear()
        .env("HOME", home)
        .env("TASKHOOK_NOW", "2026-03-01T12:00:00Z")
        .current_dir(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child.stdin.take().unwrap().write_all(payload).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        out
    });
    let u = common::wait_usage(&child);
    let wall = start.elapsed();
    assert!(u.ok, "taskhook exited with status {}", u.status);
    (wall, u.cpu, reader.join().unwrap())
}

fn session_start(project: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "b", "transcript_path": "/nonexistent/t.jsonl",
        "cwd": project, "hook_event_name": "SessionStart", "source": "startup"
    }))
    .unwrap()
}

/// A bound subagent (its transcript's prompt names the unit) declaring unit `n` done.
fn subagent_stop(project: &Path, transcripts: &Path, n: usize) -> Vec<u8> {
    let t = transcripts.join(format!("agent-{n}.jsonl"));
    let prompt = json!({"type": "user", "message": {"role": "user", "content": format!("Work on <task>T{n}</task>.")}});
    std::fs::write(&t, format!("{prompt}\n")).unwrap();
    serde_json::to_vec(&json!({
        "session_id": "b", "transcript_path": "/nonexistent/t.jsonl", "cwd": project,
        "hook_event_name": "SubagentStop", "stop_hook_active": false,
        "agent_id": format!("a{n}"), "agent_type": "general-purpose",
        "agent_transcript_path": t,
        "last_assistant_message": format!("Done.\n<signal>T{n}_DONE</signal>"),
    }))
    .unwrap()
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_taskhook"));
    let tmp = std::env::temp_dir().join(format!("taskhook-bench-iterative-{}", std::process::id()));
    let home = tmp.join("home");
    let transcripts = tmp.join("transcripts");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&transcripts).unwrap();
    let mut cases: Vec<Case> = Vec::new();
    for units in [10_000, 20_000] {
        let entries = units * 5;
        // A store taskhook has written: one hand signal gives state.json its cursor.
        let project = tmp.join(format!("cursor-{units}"));
        make_store(&project, units);
        let sig = Command::new(&bin)
            .args(["iterative", "signal", "big", &format!("T{units}"), "DONE"])
            .env_clear()
            .env("HOME", &home)
            .current_dir(&project)
            .output()
            .unwrap();
        assert!(sig.status.success(), "{sig:?}");
        // The seed's own skill wrote this one: no cursor.
        let seed = tmp.join(format!("seed-{units}"));
        make_store(&seed, units);
        let size = std::fs::metadata(project.join(".claude/iterative/big/progress.md"))
            .unwrap()
            .len();
        println!(
            "store: {units} units, {entries} progress entries ({:.1} MB progress.md)",
            size as f64 / 1e6
        );
        let p = project.clone();
        cases.push(Case {
            name: format!("SessionStart, {units} units / {entries} entries"),
            project: project.clone(),
            payload: Box::new(move |_| session_start(&p)),
            wall: vec![],
            cpu: vec![],
        });
        let (p, t) = (project.clone(), transcripts.clone());
        let first = units / 2 + 1;
        cases.push(Case {
            name: format!("SubagentStop DONE, {units} units / {entries} entries"),
            project: project.clone(),
            payload: Box::new(move |i| subagent_stop(&p, &t, first + i)),
            wall: vec![],
            cpu: vec![],
        });
        let p = seed.clone();
        cases.push(Case {
            name: format!("SessionStart, no cursor (seed-written), {units} / {entries}"),
            project: seed,
            payload: Box::new(move |_| session_start(&p)),
            wall: vec![],
            cpu: vec![],
        });
    }
    // Warm the page cache, and check that a SubagentStop really changes the store.
    for case in &cases {
        let (_, _, out) = run(&bin, &home, &case.project, &(case.payload)(RUNS + 1));
        if case.name.starts_with("SubagentStop") {
            assert!(out.contains("confirmation pass"), "{}: {out}", case.name);
        }
    }
    for i in 0..RUNS {
        for case in cases.iter_mut() {
            let (wall, cpu, _) = run(&bin, &home, &case.project, &(case.payload)(i));
            case.wall.push(wall);
            case.cpu.push(cpu);
        }
    }
    println!(
        "{:<58} {:>10} {:>10}   ({RUNS} runs each, interleaved)",
        "case", "CPU", "wall"
    );
    let mut medians = Vec::new();
    for case in cases.iter_mut() {
        let cpu = median(&mut case.cpu);
        let wall = median(&mut case.wall);
        medians.push(cpu);
        println!(
            "{:<58} {:>8.1}ms {:>8.1}ms",
            case.name,
            cpu.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3
        );
    }
    let growth = |i: usize| medians[i + 3].as_secs_f64() / medians[i].as_secs_f64();
    println!(
        "CPU growth 10k → 20k units (2x): SessionStart {:.2}x, SubagentStop {:.2}x, no-cursor SessionStart {:.2}x",
        growth(0),
        growth(1),
        growth(2)
    );
    if std::env::var_os("TASKHOOK_BENCH_KEEP").is_some() {
        println!("kept {}", tmp.display());
    } else {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let worst = medians[3..].iter().max().copied().unwrap_or_default();
    if worst > Duration::from_millis(500) {
        eprintln!("a case at 20k units / 100k entries takes over 0.5 s of CPU");
        std::process::exit(1);
    }
}
