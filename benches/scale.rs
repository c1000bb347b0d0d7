//! Issue 23: every layout at 100 / 1k / 10k / 100k tasks, as whole processes of the release
//! binary, against a minimal Python hook (`benches/scale_peer.py`). Run with
//! `cargo bench --bench scale` (never part of `cargo test`).
//!
//! For each size and layout the bench writes three copies of one store in the layout's own
//! format ([`gen`]: dependencies, parents, layers, stops, history proportional to the tasks,
//! and for execute the git history of its done tasks),
//! then runs, interleaved round-robin so drift on a shared machine hits them alike (every size
//! of a layout in the same rounds, so growth compares runs made side by side):
//!
//! - `SessionStart` (source `startup`) on the first copy, after one DONE there (a store taskhook
//!   has worked on: the iterative layout's state then records how much of its log it reflects);
//! - a bound subagent's `SubagentStop` whose final message is `<signal>ID_DONE</signal>`, on
//!   the second copy, a different task each run (every run is a real change);
//! - the no-op event (a main-agent PostToolUse `Read`) on the first copy;
//! - the Python peer marking the same task done, on the third copy.
//!
//! CPU time (user + system) and peak memory (`ru_maxrss`) are the child's own, from `wait4`.
//! One unmeasured warm-up round first; afterwards the peer's `check` confirms that every DONE
//! moved its task on, in both copies. Prints the CPU medians, the ratio to the peer, growth per
//! 10×, peak memory against the store's size (the bytes of the files an event reads), and the
//! issue's targets with their verdicts; exits 1 when one is missed.
//!
//! Environment: `TASKHOOK_SCALE_SIZES=100,1000` and `TASKHOOK_SCALE_LAYOUTS=projects,cdd`
//! select; `TASKHOOK_SCALE_RUNS=5` overrides the runs per case; `TASKHOOK_SCALE_TIMEOUT`
//! (seconds, default 300) kills a run that takes longer (the case is then reported as over
//! it); `TASKHOOK_SCALE_KEEP=1` keeps the stores and prints where.
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
#[path = "scale/gen.rs"]
mod gen;
#[path = "scale/report.rs"]
mod report;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use report::{Cell, Table};

/// Measured runs per case, by size (a 100k case takes seconds per run today).
fn runs_for(n: usize) -> usize {
    if let Some(r) = env_list("TASKHOOK_SCALE_RUNS").first() {
        return (*r).max(1);
    }
    // 10k is where the ratios to the peer are taken and growth to 100k starts: a run there
    // swings by a third on this machine, so it takes as many runs as the small sizes.
    match n {
        0..=10_000 => 15,
        _ => 5,
    }
}

fn env_list(name: &str) -> Vec<usize> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// One finished child.
#[derive(Clone, Copy)]
pub struct Sample {
    pub cpu: f64,
    pub rss: u64,
}

/// How one run ended.
enum Ran {
    Ok(Sample),
    /// Killed after the timeout.
    Timeout,
    /// Exited non-zero: its status and stderr.
    Failed(String),
}

/// Spawns `cmd` with `stdin`, waits with `wait4` for its own rusage; a watchdog kills it after
/// `limit`.
#[allow(clippy::zombie_processes)]
fn measure(mut cmd: Command, stdin: &[u8], limit: Duration) -> Ran {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(limit).is_err() {
            // SAFETY: `pid` is our child, not reaped until wait_usage returns below.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return true;
        }
        false
    });
    {
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(stdin);
    }
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let u = common::wait_usage(&child);
    let _ = tx.send(());
    let killed = watchdog.join().unwrap();
    let err = reader.join().unwrap();
    if killed {
        Ran::Timeout
    } else if !u.ok {
        Ran::Failed(format!("status {}: {}", u.status, err.trim()))
    } else {
        Ran::Ok(Sample {
            cpu: u.cpu.as_secs_f64(),
            rss: u.max_rss,
        })
    }
}

/// A place: a project (`proj`) and its home (`home`).
struct Place {
    dir: PathBuf,
}

impl Place {
    fn proj(&self) -> PathBuf {
        self.dir.join("proj")
    }

    fn taskhook(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_taskhook"));
        c.arg("hook")
            .env_clear()
            .env("HOME", self.dir.join("home"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(self.proj());
        c
    }
}

/// The Python interpreter itself (`python3` may be a shim, such as pyenv's, whose own
/// processes would be counted as the peer's).
fn python_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    })
}

fn python(args: &[&str]) -> Command {
    let mut c = Command::new(python_exe());
    c.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    c
}

fn session_start(cwd: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "5c0a7f57-0c0b-4b8e-9d55-1a4f4e0b6f3e",
        "transcript_path": "/nonexistent/session.jsonl", "cwd": cwd,
        "hook_event_name": "SessionStart", "source": "startup"
    }))
    .unwrap()
}

fn noop(cwd: &Path) -> Vec<u8> {
    let file = cwd.join("src/main.rs");
    serde_json::to_vec(&json!({
        "session_id": "5c0a7f57-0c0b-4b8e-9d55-1a4f4e0b6f3e",
        "transcript_path": "/nonexistent/session.jsonl", "cwd": cwd,
        "hook_event_name": "PostToolUse", "tool_name": "Read",
        "tool_input": {"file_path": file},
        "tool_response": {"type": "text", "file": {"filePath": file, "content": "fn main() {}\n",
            "numLines": 2, "startLine": 1, "totalLines": 2}},
        "tool_use_id": "toolu_01"
    }))
    .unwrap()
}

/// A subagent bound to `id` (its transcript's prompt names it) signalling DONE.
fn done(cwd: &Path, transcripts: &Path, run: usize, id: &str) -> Vec<u8> {
    let t = transcripts.join(format!("agent-{run}.jsonl"));
    let last = format!("Implemented and tested.\n<signal>{id}_DONE</signal>");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": format!("Work on <task>{id}</task>; signal when done.")}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": last}]}}),
    ];
    std::fs::write(&t, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    serde_json::to_vec(&json!({
        "session_id": "5c0a7f57-0c0b-4b8e-9d55-1a4f4e0b6f3e",
        "transcript_path": "/nonexistent/session.jsonl", "cwd": cwd,
        "hook_event_name": "SubagentStop", "stop_hook_active": false,
        "agent_id": format!("a{run:05}"), "agent_type": "general-purpose",
        "agent_transcript_path": t, "last_assistant_message": last,
    }))
    .unwrap()
}

/// Writes a store by running this bench's own binary as the generator (see [`gen`]): returns
/// its folder (relative to the place), the DONE candidates and its size.
fn generate(layout: &str, n: usize, k: usize, place: &Path) -> (String, Vec<String>, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("TASKHOOK_SCALE_GENERATE", format!("{layout},{n},{k}"))
        .env("TASKHOOK_SCALE_PLACE", place)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "generating {layout} {n}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["root"].as_str().unwrap().to_string(),
        v["done_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
        v["bytes"].as_u64().unwrap(),
    )
}

/// The generator's side of [`generate`].
fn generator(spec: &str) {
    let parts: Vec<&str> = spec.split(',').collect();
    let (layout, n, k) = (
        parts[0],
        parts[1].parse().unwrap(),
        parts[2].parse().unwrap(),
    );
    let place = PathBuf::from(std::env::var_os("TASKHOOK_SCALE_PLACE").unwrap());
    let g = gen::generate(layout, n, k, &place);
    println!(
        "{}",
        json!({"root": g.root, "done_ids": g.done_ids, "bytes": g.bytes})
    );
}

type Make = Box<dyn Fn(usize) -> (Command, Vec<u8>)>;

struct Case {
    name: &'static str,
    make: Make,
    samples: Vec<Sample>,
    /// Why the case stopped running (a timeout, a failure).
    broken: Option<String>,
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Runs every size's cases round-robin, smallest size first in each round: one unmeasured
/// round, then each size's own number of measured ones. The sizes of a layout share their
/// rounds, so the growth from one size to the next compares runs made side by side, not
/// minutes apart (a shared machine drifts).
fn interleave(sizes: &mut [Prepared], limit: Duration) {
    let rounds = sizes.iter().map(|p| p.runs).max().unwrap_or(0);
    for round in 0..=rounds {
        for p in sizes.iter_mut().filter(|p| round <= p.runs) {
            for c in p.cases.iter_mut() {
                if c.broken.is_some() {
                    continue;
                }
                let (cmd, stdin) = (c.make)(round);
                match measure(cmd, &stdin, limit) {
                    Ran::Ok(s) if round > 0 => c.samples.push(s),
                    Ran::Ok(_) => {}
                    Ran::Timeout => c.broken = Some(format!("> {} s", limit.as_secs())),
                    Ran::Failed(why) => {
                        eprintln!("  {} failed: {why}", c.name);
                        c.broken = Some("failed".into());
                    }
                }
            }
        }
    }
}

fn cell(c: &Case) -> Cell {
    if let Some(b) = &c.broken {
        return Cell::Broken(b.clone());
    }
    let mut cpu: Vec<f64> = c.samples.iter().map(|s| s.cpu).collect();
    Cell::Ok {
        cpu: median(&mut cpu),
        rss: c.samples.iter().map(|s| s.rss).max().unwrap_or(0),
    }
}

/// One layout at one size, ready to run: its stores written, its cases made.
struct Prepared {
    layout: &'static str,
    n: usize,
    runs: usize,
    dir: PathBuf,
    cases: Vec<Case>,
    ids: std::rc::Rc<Vec<String>>,
    start: std::rc::Rc<Place>,
    done_store: PathBuf,
    peer_store: PathBuf,
    bytes: u64,
}

/// Writes one layout's stores at one size and makes its cases.
fn prepare(root: &Path, layout: &'static str, n: usize, limit: Duration) -> Prepared {
    let runs = runs_for(n);
    let dir = root.join(format!("{layout}-{n}"));
    let k = runs + 1;
    let places: Vec<Place> = ["start", "done", "peer"]
        .iter()
        .map(|p| Place { dir: dir.join(p) })
        .collect();
    let mut store = String::new();
    let mut ids = Vec::new();
    let mut bytes = 0;
    for p in &places {
        (store, ids, bytes) = generate(layout, n, k, &p.dir);
    }
    assert!(
        ids.len() >= k,
        "{layout} {n}: {} DONE candidates",
        ids.len()
    );
    let transcripts = dir.join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scale_peer.py");
    let peer = peer.to_str().unwrap().to_string();
    let [start, done_place, peer_place] = <[Place; 3]>::try_from(places).ok().unwrap();
    let peer_store = peer_place.dir.join(&store);
    let done_store = done_place.dir.join(&store);
    let (start, done_place) = (std::rc::Rc::new(start), std::rc::Rc::new(done_place));
    let ids = std::rc::Rc::new(ids);
    let mut cases: Vec<Case> = Vec::new();
    let mut add = |name, make: Make| {
        cases.push(Case {
            name,
            make,
            samples: Vec::new(),
            broken: None,
        })
    };
    // The SessionStart copy is one taskhook has worked on: one DONE (of the task the other
    // copies complete first), as a store in use would have had.
    let primed = measure(
        start.taskhook(),
        &done(&start.proj(), &transcripts, 999_999, &ids[0]),
        limit,
    );
    if let Ran::Failed(why) = primed {
        eprintln!("  priming DONE failed: {why}");
    }
    let s = start.clone();
    add(
        "SessionStart",
        Box::new(move |_| (s.taskhook(), session_start(&s.proj()))),
    );
    let (d, i, t) = (done_place.clone(), ids.clone(), transcripts.clone());
    add(
        "DONE",
        Box::new(move |r| (d.taskhook(), done(&d.proj(), &t, r, &i[r]))),
    );
    let s = start.clone();
    add("no-op", Box::new(move |_| (s.taskhook(), noop(&s.proj()))));
    let (i, t, ps, cwd) = (
        ids.clone(),
        transcripts.clone(),
        peer_store.clone(),
        peer_place.proj(),
    );
    add(
        "peer DONE",
        Box::new(move |r| {
            (
                python(&[&peer, "done", layout, ps.to_str().unwrap(), &i[r]]),
                done(&cwd, &t, 100_000 + r, &i[r]),
            )
        }),
    );
    Prepared {
        layout,
        n,
        runs,
        dir,
        cases,
        ids,
        start,
        done_store,
        peer_store,
        bytes,
    }
}

/// Checks what one size's runs did and returns its row.
fn finish(p: Prepared) -> report::Row {
    let (layout, n, cases, ids) = (p.layout, p.n, &p.cases, &p.ids);
    // Every DONE run must have moved its task on, taskhook's and the peer's.
    let peer_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scale_peer.py");
    let mut verified = true;
    for (who, dir, case) in [("taskhook", &p.done_store, 1), ("peer", &p.peer_store, 3)] {
        if cases[case].broken.is_some() {
            continue;
        }
        let mut args = vec![
            peer_path.to_str().unwrap().to_string(),
            "check".into(),
            layout.into(),
            dir.to_str().unwrap().into(),
        ];
        args.extend(ids[..=p.runs].iter().cloned());
        let out = python(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .output()
            .unwrap();
        if !out.status.success() {
            eprintln!(
                "  {layout} {n}: a {who} DONE changed nothing: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            verified = false;
        }
    }
    // SessionStart must have read the store: its context names the layout and refuses
    // nothing.
    let mut c = p.start.taskhook();
    let out = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(&session_start(&p.start.proj()))?;
            child.wait_with_output()
        })
        .unwrap();
    let context = String::from_utf8_lossy(&out.stdout);
    if !context.contains(layout) || context.contains("refusing") {
        eprintln!("  {layout} {n}: SessionStart did not read the store: {context}");
        verified = false;
    }
    if std::env::var_os("TASKHOOK_SCALE_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&p.dir);
    }
    report::Row {
        start: cell(&cases[0]),
        done: cell(&cases[1]),
        noop: cell(&cases[2]),
        peer: cell(&cases[3]),
        bytes: p.bytes,
        verified,
    }
}

fn main() {
    if let Ok(spec) = std::env::var("TASKHOOK_SCALE_GENERATE") {
        generator(&spec);
        return;
    }
    let mut sizes = env_list("TASKHOOK_SCALE_SIZES");
    if sizes.is_empty() {
        sizes = vec![100, 1_000, 10_000, 100_000];
    }
    let layouts: Vec<&'static str> = match std::env::var("TASKHOOK_SCALE_LAYOUTS") {
        Ok(v) => gen::LAYOUTS
            .iter()
            .copied()
            .filter(|l| v.split(',').any(|w| w.trim() == *l))
            .collect(),
        Err(_) => gen::LAYOUTS.to_vec(),
    };
    let limit = Duration::from_secs(
        env_list("TASKHOOK_SCALE_TIMEOUT")
            .first()
            .map_or(300, |&s| s as u64),
    );
    let root = std::env::temp_dir().join(format!("taskhook-bench-scale-{}", std::process::id()));
    let mut table: Table = BTreeMap::new();
    for &layout in &layouts {
        let mut prepared: Vec<Prepared> = sizes
            .iter()
            .map(|&n| {
                eprintln!("{layout}, {n} tasks: {} runs per case…", runs_for(n));
                prepare(&root, layout, n, limit)
            })
            .collect();
        interleave(&mut prepared, limit);
        for p in prepared {
            let n = p.n;
            table.entry(layout).or_default().insert(n, finish(p));
        }
    }
    if std::env::var_os("TASKHOOK_SCALE_KEEP").is_some() {
        println!("kept {}", root.display());
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
    if !report::report(&layouts, &table) {
        std::process::exit(1);
    }
}
