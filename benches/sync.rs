//! Team sync at scale, through the real (release) binary and real git, on local disk (no
//! network): `cargo bench --bench sync` (never part of `cargo test`).
//!
//! For 1,000 and 10,000 ops (completions of a projects store holding that many tasks):
//!
//! - **push**: a clone with that many completions queued pushes them (one commit, and the
//!   compaction snapshot that follows);
//! - **pull**: a clone that had synced before takes them (it rebuilds from the newest
//!   snapshot and the ops after it);
//! - **fresh**: a new clone's first `taskhook sync` (turns sync on, materialises the store);
//! - **replay** (1,000 only): a pull with compaction off, so every op is carried out by the
//!   layout's rules one by one: the per-op cost of applying the log.
//!
//! Then the log's size after 10,000 completions pushed ten to a commit (1,000 commits, as a
//! team working in bursts would push them), loose and after `git gc`.
//!
//! The completions are written straight into the pushing clone (its files and its queue), as
//! the verbs would leave them, so the bench times sync rather than 10,000 `taskhook done`s.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_taskhook"))
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.com")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn taskhook(dir: &Path, home: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin())
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("USER", "bench")
        .args(args)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(out.status.success(), "taskhook {args:?}: {out:?}");
    took
}

struct Team {
    tmp: tempfile::TempDir,
    remote: PathBuf,
    home: PathBuf,
}

impl Team {
    fn new() -> Team {
        let tmp = tempfile::tempdir().unwrap();
        let remote = tmp.path().join("remote.git");
        std::fs::create_dir_all(&remote).unwrap();
        git(&remote, &["init", "-q", "--bare"]);
        let seed = tmp.path().join("seed");
        std::fs::create_dir_all(&seed).unwrap();
        git(&seed, &["init", "-q"]);
        std::fs::write(seed.join("README.md"), "x\n").unwrap();
        git(&seed, &["add", "."]);
        git(&seed, &["commit", "-q", "-m", "init"]);
        git(
            &seed,
            &[
                "push",
                "-q",
                remote.to_str().unwrap(),
                "HEAD:refs/heads/main",
            ],
        );
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        Team { tmp, remote, home }
    }

    fn clone(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        git(
            self.tmp.path(),
            &[
                "clone",
                "-q",
                self.remote.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        dir
    }

    fn run(&self, dir: &Path, args: &[&str]) -> Duration {
        taskhook(dir, &self.home, args)
    }
}

fn store(dir: &Path) -> PathBuf {
    dir.join(".claude/projects/bench")
}

/// A projects store `bench` of `n` PENDING tasks in `dir`, written as `projects add` would.
fn make_store(team: &Team, dir: &Path, n: usize) {
    team.run(dir, &["projects", "new", "bench"]);
    team.run(
        dir,
        &["projects", "add", "bench", "T1", "--title", "Task 1"],
    );
    let path = store(dir).join("tasks.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let template = v["tasks"][0].clone();
    let tasks: Vec<Value> = (1..=n)
        .map(|i| {
            let mut t = template.clone();
            t["id"] = json!(format!("T{i}"));
            t["title"] = json!(format!("Task {i}"));
            t
        })
        .collect();
    v["tasks"] = json!(tasks);
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// Completes tasks `from..to` in `dir` as `taskhook done` would leave them (files and log),
/// and queues their ops.
fn complete(dir: &Path, from: usize, to: usize, base: chrono::DateTime<chrono::Utc>) {
    let path = store(dir).join("tasks.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut log = String::new();
    let mut queue = String::new();
    for i in from..to {
        let at = base + chrono::Duration::milliseconds(i as i64);
        let stamp = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let t = &mut v["tasks"][i];
        t["status"] = json!("COMPLETE");
        t["started_at"] = json!(stamp);
        t["completed_at"] = json!(stamp);
        t["actual_minutes"] = json!(0);
        let id = format!("T{}", i + 1);
        log.push_str(&format!(
            "\n## {stamp} — TASK_COMPLETE\n- Task: {id}\n- Previous status: IN_PROGRESS\n- New status: COMPLETE\n- actual_minutes: 0\n"
        ));
        let op = json!({
            "id": uuid::Uuid::new_v4().to_string(),
            "store": {"layout": "projects", "path": ".claude/projects/bench", "id": "bench"},
            "task": id,
            "kind": "done",
            "actor": "bench@machine",
            "machine": "machine",
            "time": at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        });
        queue.push_str(&format!("{op}\n"));
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(store(dir).join("progress/log.md"))
        .unwrap();
    f.write_all(log.as_bytes()).unwrap();
    let q = dir.join(".claude/taskhook/sync/queue.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(q)
        .unwrap();
    f.write_all(queue.as_bytes()).unwrap();
}

fn set_compact(dir: &Path, every: u64) {
    let p = dir.join(".claude/taskhook.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["sync"]["compact_every"] = json!(every);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

fn completed(dir: &Path) -> usize {
    let v: Value =
        serde_json::from_slice(&std::fs::read(store(dir).join("tasks.json")).unwrap()).unwrap();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "COMPLETE")
        .count()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// Bytes of every object reachable from the log's ref: (uncompressed, on disk).
fn log_size(remote: &Path) -> (u64, u64) {
    let objects = git(remote, &["rev-list", "--objects", "refs/taskhook/ops"]);
    let shas: String = objects
        .lines()
        .map(|l| format!("{}\n", l.split(' ').next().unwrap()))
        .collect();
    let mut child = Command::new("git")
        .current_dir(remote)
        .args(["cat-file", "--batch-check=%(objectsize) %(objectsize:disk)"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(shas.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let mut total = (0, 0);
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let mut p = l.split(' ');
        total.0 += p.next().unwrap().parse::<u64>().unwrap();
        total.1 += p.next().unwrap().parse::<u64>().unwrap();
    }
    total
}

fn kib(b: u64) -> String {
    format!("{:.0} KiB", b as f64 / 1024.0)
}

fn case(n: usize) {
    let team = Team::new();
    let a = team.clone("a");
    let b = team.clone("b");
    make_store(&team, &a, n);
    team.run(&a, &["sync", "init"]);
    team.run(&b, &["sync"]);
    complete(&a, 0, n, chrono::Utc::now());
    let push = team.run(&a, &["sync"]);
    let pull = team.run(&b, &["sync"]);
    assert_eq!(completed(&b), n);
    let c = team.clone("c");
    let fresh = team.run(&c, &["sync"]);
    assert_eq!(completed(&c), n);
    println!(
        "{n:>6} ops   push {:>8}   pull {:>8}   fresh clone {:>8}",
        secs(push),
        secs(pull),
        secs(fresh)
    );
}

fn replay(n: usize) {
    let team = Team::new();
    let a = team.clone("a");
    let b = team.clone("b");
    make_store(&team, &a, n);
    team.run(&a, &["sync", "init"]);
    set_compact(&a, 1 << 40);
    team.run(&b, &["sync"]);
    complete(&a, 0, n, chrono::Utc::now());
    team.run(&a, &["sync"]);
    let pull = team.run(&b, &["sync"]);
    assert_eq!(completed(&b), n);
    println!(
        "{n:>6} ops   pull with compaction off (every op replayed): {}  ({:.1} ms per op)",
        secs(pull),
        pull.as_secs_f64() * 1000.0 / n as f64
    );
}

fn growth(n: usize, per_commit: usize) {
    let team = Team::new();
    let a = team.clone("a");
    make_store(&team, &a, n);
    team.run(&a, &["sync", "init"]);
    let base = chrono::Utc::now();
    let start = Instant::now();
    let mut from = 0;
    while from < n {
        let to = (from + per_commit).min(n);
        complete(&a, from, to, base);
        team.run(&a, &["sync"]);
        from = to;
    }
    let took = start.elapsed();
    let commits = git(&team.remote, &["rev-list", "--count", "refs/taskhook/ops"]);
    let (raw, loose) = log_size(&team.remote);
    git(&team.remote, &["gc", "-q"]);
    let (_, packed) = log_size(&team.remote);
    let fresh_dir = team.clone("fresh");
    let fresh = team.run(&fresh_dir, &["sync"]);
    assert_eq!(completed(&fresh_dir), n);
    println!(
        "{n} completions, {per_commit} per push ({commits} commits, {}): log objects {} uncompressed, {} loose, {} after git gc; a fresh clone's first sync {}",
        secs(took),
        kib(raw),
        kib(loose),
        kib(packed),
        secs(fresh)
    );
}

fn main() {
    let only = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let want = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    println!("taskhook sync, release binary, local bare remote, wall time of one run each");
    if want("ops") {
        case(1_000);
        case(10_000);
    }
    if want("replay") {
        replay(1_000);
    }
    if want("growth") {
        growth(10_000, 10);
    }
}
