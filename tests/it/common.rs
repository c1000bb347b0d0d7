//! Test harness: a throw-away project and home, a fixed clock, and helpers that run the real
//! binary with a payload on stdin and snapshot every file.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// Where the captured Claude Code payloads live (copied into the repo; tests/fixtures/README.md).
pub fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.330/payloads")
}

/// `PATH` with the folder of the built `taskhook` first (as after `cargo install`), for tests
/// of registrations that run `taskhook` from PATH.
pub fn path_with_bin() -> std::ffi::OsString {
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    let mut dirs = vec![bin.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// `PATH` without any folder holding a `taskhook` (the test process's PATH may have one).
pub fn path_without_bin() -> std::ffi::OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("taskhook").exists())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

/// The fixed time every test runs at.
pub const NOW: &str = "2026-03-01T12:00:00Z";

/// A temp folder holding `proj/` (with `.git/`) and `home/`.
pub struct Project {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

/// One finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Parses stdout as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout))
    }

    /// The reply's `hookSpecificOutput.additionalContext` (panics when there is none).
    pub fn context(&self) -> String {
        self.json()["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("no additionalContext: {self:?}"))
            .to_string()
    }

    /// Parses stdout as JSON Lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Asserts exit 1 with exactly one `taskhook: ` line on stderr and nothing on stdout.
    pub fn assert_one_line_error(&self) {
        self.assert_one_line_exit(1);
    }

    /// Asserts a usage error taskhook (not clap) found: exit 2, one `taskhook: ` line.
    pub fn assert_one_line_usage_error(&self) {
        self.assert_one_line_exit(2);
    }

    /// Asserts exit `code` with exactly one `taskhook: ` line on stderr and nothing on stdout.
    pub fn assert_one_line_exit(&self, code: i32) {
        assert_eq!(self.code, code, "{self:?}");
        assert!(self.stdout.is_empty(), "{self:?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{self:?}");
        assert!(lines[0].starts_with("taskhook: "), "{self:?}");
    }
}

impl Run {
    /// Asserts a usage error: exit 2, nothing on stdout, clap's whole message on stderr (what
    /// is wrong, its tips and usage line where clap gives them, where to read more).
    pub fn assert_usage_error(&self) {
        assert_eq!(self.code, 2, "{self:?}");
        assert!(self.stdout.is_empty(), "{self:?}");
        assert!(self.stderr.starts_with("error: "), "{self:?}");
        assert!(
            self.stderr
                .trim_end()
                .ends_with("For more information, try '--help'."),
            "{self:?}"
        );
    }
}

/// Runs a prepared command with `args` and `stdin`.
pub fn run_command(mut c: Command, args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
    let out = c.args(args).write_stdin(stdin).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Project {
    pub fn new() -> Self {
        Self::with_tmp(tempfile::tempdir().unwrap())
    }

    /// A project in memory (`/dev/shm`) where the machine has it, else as [`Project::new`]:
    /// for tests that kill the binary thousands of times, where fsync (free there) is not
    /// what is tested (a SIGKILL never loses what the kernel accepted).
    pub fn in_memory() -> Self {
        match tempfile::tempdir_in("/dev/shm") {
            Ok(tmp) => Self::with_tmp(tmp),
            Err(_) => Self::new(),
        }
    }

    fn with_tmp(tmp: tempfile::TempDir) -> Self {
        let root = tmp.path().join("proj");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Project { tmp, root, home }
    }

    /// The binary, run in the project with a clean environment, `HOME` inside the temp folder
    /// and the clock fixed at [`NOW`].
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("taskhook").unwrap();
        c.current_dir(&self.root).env_clear();
        c.env("PATH", path_without_bin())
            .env("HOME", &self.home)
            .env("TASKHOOK_NOW", NOW);
        c
    }

    /// Runs `taskhook <args>` with `stdin`.
    pub fn run(&self, args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
        self.run_with(self.cmd(), args, stdin)
    }

    /// Runs a prepared command.
    pub fn run_with(&self, c: Command, args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
        run_command(c, args, stdin)
    }

    /// Runs `taskhook hook` with one payload.
    pub fn hook(&self, payload: &Value) -> Run {
        self.run(&["hook"], serde_json::to_vec(payload).unwrap())
    }

    /// A SubagentStop of `agent` whose transcript (written in the temp folder) starts with
    /// `prompt` and whose final message is `message`. A later stop of the same agent with the
    /// same prompt (its next pass) appends to the transcript, as Claude Code does: each stop is
    /// a distinct event.
    pub fn subagent_stop(&self, agent: &str, prompt: &str, message: &str) -> Value {
        let transcript = self.tmp.path().join(format!("agent-{agent}.jsonl"));
        let first =
            serde_json::json!({"type": "user", "message": {"role": "user", "content": prompt}});
        let last = serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": message}]}});
        let text = match std::fs::read_to_string(&transcript) {
            Ok(old) if old.starts_with(&format!("{first}\n")) => {
                let more = serde_json::json!({"type": "user", "message": {"role": "user", "content": "(stop hook feedback)"}});
                format!("{old}{more}\n{last}\n")
            }
            _ => format!("{first}\n{last}\n"),
        };
        std::fs::write(&transcript, text).unwrap();
        let mut payload = self.payload("SubagentStop.json");
        payload["agent_id"] = Value::String(agent.into());
        payload["agent_transcript_path"] = Value::String(transcript.display().to_string());
        payload["last_assistant_message"] = Value::String(message.into());
        payload
    }

    /// Starts `taskhook hook` with `payload` on stdin (the same environment as [`Project::cmd`])
    /// without waiting for it, for tests of processes running at once.
    pub fn spawn_hook(&self, payload: &Value) -> std::process::Child {
        use std::io::Write;
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskhook"))
            .arg("hook")
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TASKHOOK_NOW", NOW)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&serde_json::to_vec(payload).unwrap())
            .unwrap();
        child
    }

    /// A captured payload with its `cwd` pointed at this project. Each call is a new tool call
    /// (a fresh `tool_use_id`, as Claude Code gives every call): taskhook applies a tool event
    /// once per id.
    pub fn payload(&self, file: &str) -> Value {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let mut v = reference_payload(file);
        v["cwd"] = Value::String(self.root.display().to_string());
        if v.get("tool_use_id").is_some() {
            let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            v["tool_use_id"] = Value::String(format!("toolu_test_{n:06}"));
        }
        v
    }

    /// Every file and folder under the project and the home folder, with its content.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut all = snapshot(&self.root);
        for (k, v) in snapshot(&self.home) {
            all.insert(Path::new("~").join(k), v);
        }
        all
    }

    /// Creates `.claude/iterative/<slug>` with `units` (each with `max` iterations) through
    /// the binary; returns its folder.
    pub fn new_slug(&self, slug: &str, units: &[&str], max: u64) -> PathBuf {
        let max = max.to_string();
        let mut args = vec!["iterative", "new", slug, "--max-iterations", &max];
        for u in units {
            args.extend(["--task", u]);
        }
        let run = self.run(&args, "");
        assert_eq!(run.code, 0, "{run:?}");
        self.root.join(".claude/iterative").join(slug)
    }

    /// Writes a file (creating folders) inside the project.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }
}

/// A captured payload by file name.
pub fn reference_payload(file: &str) -> Value {
    let text = std::fs::read_to_string(reference_dir().join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The names of every captured payload (excluding `hook_env.*`, which are environments).
pub fn reference_payload_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(reference_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") && !n.starts_with("hook_env."))
        .collect();
    names.sort();
    names
}

/// Every file (and folder, as `name/`) under `root`, with its content (lossy UTF-8, so a
/// failing comparison prints readably).
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                out.insert(p.strip_prefix(root).unwrap().join(""), String::new());
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                );
            }
        }
    }
    out
}
