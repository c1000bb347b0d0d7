//! The harness of the team-sync tests: a bare repository on disk as the remote and plain
//! `git clone`s of a repository holding the project, each clone a machine of its own (its own
//! home folder, its own Claude Code session), driving the real binary. No network.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::Run;

/// A team: the remote and its clones.
pub struct Team {
    pub tmp: tempfile::TempDir,
    pub remote: PathBuf,
    pub clones: Vec<PathBuf>,
}

/// Runs git (the real one) in `dir`; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, b"")
}

/// git with `input` on stdin; panics when it fails.
pub fn git_in(dir: &Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = Std::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A session id for clone `i`.
pub fn session(i: usize) -> String {
    format!("{i:08x}-aaaa-4aaa-8aaa-{i:012x}")
}

impl Team {
    /// A bare remote holding one commit, and `n` clones of it.
    pub fn new(n: usize) -> Team {
        let tmp = tempfile::tempdir().unwrap();
        let remote = tmp.path().join("remote.git");
        std::fs::create_dir_all(&remote).unwrap();
        git(&remote, &["init", "-q", "--bare"]);
        let seed = tmp.path().join("seed");
        std::fs::create_dir_all(&seed).unwrap();
        git(&seed, &["init", "-q"]);
        std::fs::write(seed.join("README.md"), "# the project\n").unwrap();
        git(&seed, &["add", "README.md"]);
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
        let mut team = Team {
            tmp,
            remote,
            clones: Vec::new(),
        };
        for _ in 0..n {
            team.add_clone();
        }
        team
    }

    /// One more clone (a plain `git clone`); returns its index.
    pub fn add_clone(&mut self) -> usize {
        let i = self.clones.len();
        let dir = self.tmp.path().join(format!("clone{i}"));
        git(
            self.tmp.path(),
            &[
                "clone",
                "-q",
                self.remote.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        std::fs::create_dir_all(self.home(i)).unwrap();
        self.clones.push(dir);
        i
    }

    pub fn home(&self, i: usize) -> PathBuf {
        self.tmp.path().join(format!("home{i}"))
    }

    /// The binary in clone `i`, as its session, with a clean environment.
    pub fn cmd(&self, i: usize) -> Command {
        let mut c = Command::cargo_bin("taskhook").unwrap();
        c.current_dir(&self.clones[i])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home(i))
            .env("USER", format!("dev{i}"))
            .env("CLAUDE_CODE_SESSION_ID", session(i));
        c
    }

    /// Runs `taskhook <args>` in clone `i`.
    pub fn run(&self, i: usize, args: &[&str]) -> Run {
        self.run_with(self.cmd(i), args, "")
    }

    pub fn run_with(&self, c: Command, args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
        crate::common::run_command(c, args, stdin)
    }

    /// Runs and requires exit 0.
    pub fn ok(&self, i: usize, args: &[&str]) -> Run {
        let r = self.run(i, args);
        assert_eq!(r.code, 0, "clone {i}: taskhook {args:?}: {r:?}");
        r
    }

    /// A projects store `plan` with tasks T1..T`n` in clone `i`.
    pub fn plan(&self, i: usize, n: usize) {
        self.ok(i, &["projects", "new", "plan"]);
        for t in 1..=n {
            let id = format!("T{t}");
            let title = format!("Task {t}");
            self.ok(i, &["projects", "add", "plan", &id, "--title", &title]);
        }
    }

    /// `tasks.json` of the plan in clone `i`.
    pub fn tasks(&self, i: usize) -> Value {
        let p = self.clones[i].join(".claude/projects/plan/tasks.json");
        serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
        .unwrap()
    }

    /// Each task's status in clone `i`, by id.
    pub fn statuses(&self, i: usize) -> Vec<(String, String)> {
        self.tasks(i)["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_string(),
                    t["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The status of one task in clone `i`.
    pub fn status_of(&self, i: usize, task: &str) -> String {
        self.statuses(i)
            .into_iter()
            .find(|(id, _)| id == task)
            .map(|(_, s)| s)
            .unwrap_or_else(|| panic!("no {task} in clone {i}"))
    }

    /// Every op on the remote's ref, oldest first (all commits, not only the window).
    pub fn remote_ops(&self) -> Vec<Value> {
        let commits = git(
            &self.remote,
            &[
                "rev-list",
                "--reverse",
                "--first-parent",
                "refs/taskhook/ops",
            ],
        );
        let mut ops = Vec::new();
        for c in commits.lines() {
            let out = Std::new("git")
                .current_dir(&self.remote)
                .args(["cat-file", "-p", &format!("{c}:ops.jsonl")])
                .output()
                .unwrap();
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    ops.push(v);
                }
            }
        }
        ops
    }

    /// The remote ref's commit.
    pub fn remote_tip(&self) -> String {
        git(&self.remote, &["rev-parse", "refs/taskhook/ops"])
    }

    /// Sets a key of clone `i`'s sync settings.
    pub fn set_sync(&self, i: usize, key: &str, value: Value) {
        let p = self.clones[i].join(".claude/taskhook.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        v["sync"][key] = value;
        std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }

    /// The ops queued in clone `i`.
    pub fn queued(&self, i: usize) -> usize {
        std::fs::read_to_string(self.clones[i].join(".claude/taskhook/sync/queue.jsonl"))
            .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0)
    }
}

/// Every file below `dir` (hidden ones left out), by path, with its bytes.
pub fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if name.starts_with('.') {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}
