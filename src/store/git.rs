//! The one bounded git runner: every git process taskhook starts goes through [`Git::run`]
//! (sync's fetches and pushes, and the read-only questions recovery asks: [`read_only`]).
//! `Command::new` is a disallowed method everywhere else (clippy.toml).
//!
//! A run is bounded and non-interactive, whatever the repository or the environment holds:
//!
//! - **time**: a deadline; past it the whole process group (git, its `ssh`, a credential
//!   helper) is killed with SIGKILL and the run reports a timeout. git runs in a process group
//!   of its own, so a child it left behind cannot keep taskhook waiting either: the output is
//!   read by threads that are abandoned, not joined, once the deadline has passed;
//! - **no prompt**: `GIT_TERMINAL_PROMPT=0`, stdin closed (or fed what the caller gives), and
//!   ssh in `BatchMode` through `GIT_SSH_COMMAND=ssh -o BatchMode=yes` when neither
//!   `GIT_SSH_COMMAND` nor `GIT_SSH` is set (so a password or host-key question fails at once
//!   instead of waiting for a person);
//! - **the repository it is told**: the variables that send git to another repository, index
//!   or object store (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, …, see [`REDIRECTS`]) are
//!   removed from the child's environment; a caller that needs one (a private index) passes it
//!   explicitly;
//! - **output**: stdout and stderr are capped ([`Limits`]); what is past the cap is read and
//!   dropped, and the run says it was truncated;
//! - **messages in English**: `LC_ALL=C`, so the caller can tell a lost race from a failure.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::env::{Env, GIT_SSH, GIT_SSH_COMMAND};
use crate::error::{Error, Result};

/// Variables that point git at another repository, work tree, index, object store or
/// configuration: never inherited by a git taskhook runs.
pub const REDIRECTS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EDITOR",
    "GIT_EXEC_PATH",
];

/// The ssh command used when the environment names none: never asks a person anything.
pub const BATCH_SSH: &str = "ssh -o BatchMode=yes";

/// How much of each stream a run keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub stdout: usize,
    pub stderr: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stdout: 64 << 20,
            stderr: 64 << 10,
        }
    }
}

/// One git invocation: where, what, with which input and until when.
#[derive(Debug, Clone)]
pub struct Git<'a> {
    dir: &'a Path,
    deadline: Instant,
    limits: Limits,
    env: Vec<(&'a str, &'a OsStr)>,
    /// The environment names an ssh command of its own (`GIT_SSH_COMMAND` or `GIT_SSH`).
    ssh_named: bool,
}

/// What a finished (or killed) run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code; `None` when killed (a timeout) or ended by a signal.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    /// stderr as text (lossy), capped.
    pub stderr: String,
    /// The deadline passed and the process group was killed.
    pub timed_out: bool,
    /// Some output was past its cap and dropped.
    pub truncated: bool,
}

impl Output {
    /// Exit 0, in time.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// stdout as text, trimmed.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim().to_string()
    }

    /// The most telling line of stderr (its last non-empty `fatal:`/`error:` line, else its
    /// last non-empty line), for a one-line report.
    pub fn reason(&self) -> String {
        if self.timed_out {
            return "timed out".into();
        }
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let pick = lines
            .iter()
            .rev()
            .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
            .or(lines.last())
            .copied()
            .unwrap_or("");
        let pick = pick
            .trim_start_matches("fatal: ")
            .trim_start_matches("error: ");
        if pick.is_empty() {
            match self.code {
                Some(c) => format!("git exited with {c}"),
                None => "git was killed".into(),
            }
        } else {
            crate::error::one_line(pick)
        }
    }
}

impl<'a> Git<'a> {
    /// A run in `dir` that must end within `timeout`; `env` is the invocation's environment
    /// (the child inherits the process's, less [`REDIRECTS`]).
    pub fn new(dir: &'a Path, timeout: Duration, env: &Env) -> Self {
        Git::until(dir, Instant::now() + timeout, env)
    }

    /// A run that must end by `deadline` (several runs sharing one budget).
    pub fn until(dir: &'a Path, deadline: Instant, env: &Env) -> Self {
        Git {
            dir,
            deadline,
            limits: Limits::default(),
            env: Vec::new(),
            ssh_named: env.get_os(GIT_SSH_COMMAND).is_some() || env.get_os(GIT_SSH).is_some(),
        }
    }

    /// A local run that needs no environment: it never reaches a remote, so no ssh is named.
    pub fn local(dir: &'a Path, timeout: Duration) -> Self {
        Git {
            dir,
            deadline: Instant::now() + timeout,
            limits: Limits::default(),
            env: Vec::new(),
            ssh_named: false,
        }
    }

    /// Caps the output kept.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets a variable for the child (a private `GIT_INDEX_FILE`, committer identity).
    pub fn env(mut self, key: &'a str, value: &'a OsStr) -> Self {
        self.env.push((key, value));
        self
    }

    /// Runs `git <args>` with `stdin` (none: stdin is closed).
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S], stdin: Option<&[u8]>) -> Result<Output> {
        run_with(self, args, stdin)
    }
}

/// A read-only question to the repository at `dir` (recovery's `worktree list`, `log`,
/// `cat-file --batch`): no pager, no fsmonitor hook, optional locks off, within `timeout`, at
/// most `cap` bytes of stdout kept. Its stdout when git answered (exit 0, in time); `None` when
/// git cannot say (no git, no repository, a failure or a timeout).
pub fn read_only(
    dir: &Path,
    timeout: Duration,
    cap: usize,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> Option<Vec<u8>> {
    let mut all = vec!["-c", "core.fsmonitor=false", "--no-pager"];
    all.extend_from_slice(args);
    let out = Git::local(dir, timeout)
        .limits(Limits {
            stdout: cap,
            stderr: 4 << 10,
        })
        .run(&all, stdin)
        .ok()?;
    out.ok().then_some(out.stdout)
}

fn run_with<S: AsRef<OsStr>>(g: &Git<'_>, args: &[S], stdin: Option<&[u8]>) -> Result<Output> {
    // The one place taskhook starts a process.
    #[allow(clippy::disallowed_methods)]
    let mut cmd = Command::new("git");
    cmd.current_dir(g.dir)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for k in REDIRECTS {
        cmd.env_remove(k);
    }
    // GIT_FLUSH=0: git's output is read whole at the end, so git need not write each
    // commit of a log on its own (into a pipe it does unless told: `maybe_flush_or_die`).
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_FLUSH", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C");
    if !g.ssh_named {
        cmd.env(GIT_SSH_COMMAND, BATCH_SSH);
    }
    for (k, v) in &g.env {
        cmd.env(k, v);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    if Instant::now() >= g.deadline {
        return Ok(timed_out());
    }
    let mut child = cmd.spawn().map_err(|e| {
        Error::BadInput(format!(
            "git could not be started ({e}); sync needs git on PATH"
        ))
    })?;
    let (tx, rx) = mpsc::channel::<(u8, Vec<u8>, bool)>();
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    if let Some(pipe) = child.stdout.take() {
        spawn_reader(pipe, 1, g.limits.stdout, tx.clone());
    }
    if let Some(pipe) = child.stderr.take() {
        spawn_reader(pipe, 2, g.limits.stderr, tx.clone());
    }
    drop(tx);
    let (code, killed) = wait(&mut child, g.deadline);
    // The streams close when every process holding them ended; one that escaped the group
    // keeps them open, so the wait for them is bounded too (a short grace past the deadline).
    let grace = Instant::now().max(g.deadline) + Duration::from_millis(200);
    let mut out = Output {
        code,
        stdout: Vec::new(),
        stderr: String::new(),
        timed_out: killed,
        truncated: false,
    };
    for _ in 0..2 {
        let left = grace.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((1, bytes, cut)) => {
                out.stdout = bytes;
                out.truncated |= cut;
            }
            Ok((_, bytes, cut)) => {
                out.stderr = String::from_utf8_lossy(&bytes).into_owned();
                out.truncated |= cut;
            }
            Err(_) => {
                out.timed_out = true;
                break;
            }
        }
    }
    Ok(out)
}

fn timed_out() -> Output {
    Output {
        code: None,
        stdout: Vec::new(),
        stderr: String::new(),
        timed_out: true,
        truncated: false,
    }
}

/// Reads a stream of the child into memory, up to `cap` bytes (the rest is read and dropped:
/// `cut`), and sends it when the stream ends.
fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    which: u8,
    cap: usize,
    tx: mpsc::Sender<(u8, Vec<u8>, bool)>,
) {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        let mut cut = false;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    cut |= n > room;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send((which, kept, cut));
    });
}

/// Waits for the child until `deadline`; past it, kills its whole process group. Returns the
/// exit code (`None` when killed or signalled) and whether it was killed for time.
fn wait(child: &mut Child, deadline: Instant) -> (Option<i32>, bool) {
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (status.code(), false),
            Ok(None) => {}
            Err(_) => {
                kill_group(child);
                return (None, false);
            }
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(child);
            return (None, true);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group the child leads
            // (it was started with process_group(0)); no memory is passed.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let out = Git::new(dir.path(), Duration::from_secs(10), &Env::default())
            .run(&["init", "-q"], None)
            .unwrap();
        assert!(out.ok(), "{out:?}");
        dir
    }

    #[test]
    fn runs_and_feeds_stdin() {
        let dir = repo();
        let g = Git::new(dir.path(), Duration::from_secs(10), &Env::default());
        let out = g
            .run(&["hash-object", "-w", "--stdin"], Some(b"hello\n"))
            .unwrap();
        assert!(out.ok(), "{out:?}");
        assert_eq!(out.text(), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn a_failure_has_a_one_line_reason() {
        let dir = repo();
        let out = Git::new(dir.path(), Duration::from_secs(10), &Env::default())
            .run(&["rev-parse", "--verify", "refs/nope"], None)
            .unwrap();
        assert!(!out.ok());
        assert!(!out.reason().contains('\n'), "{}", out.reason());
    }

    #[test]
    fn output_is_capped() {
        let dir = repo();
        let out = Git::new(dir.path(), Duration::from_secs(10), &Env::default())
            .limits(Limits {
                stdout: 3,
                stderr: 3,
            })
            .run(&["hash-object", "--stdin"], Some(b"x"))
            .unwrap();
        assert_eq!(out.stdout.len(), 3);
        assert!(out.truncated);
    }

    /// A stream past the pipe's size is read whole and in order, whether git writes it faster
    /// than the reader or a page at a time; past the cap, the rest is read and dropped, so git
    /// never blocks. git is told not to write each commit of a log on its own.
    #[test]
    fn a_stream_is_read_whole_fast_or_slow() {
        let dir = repo();
        let g = Git::new(dir.path(), Duration::from_secs(20), &Env::default());
        let fast = g
            .run(&["-c", "alias.fast=!seq 1 200000", "fast"], None)
            .unwrap();
        let want: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
        assert!(fast.ok(), "{fast:?}");
        assert_eq!(String::from_utf8(fast.stdout).unwrap(), want);
        let slow = g
            .run(
                &[
                    "-c",
                    "alias.slow=!for i in $(seq 1 40); do printf '%04999d\\n' $i; sleep 0.001; done",
                    "slow",
                ],
                None,
            )
            .unwrap();
        let want: String = (1..=40).map(|i| format!("{i:04999}\n")).collect();
        assert!(slow.ok(), "{slow:?}");
        assert_eq!(String::from_utf8(slow.stdout).unwrap(), want);
        let flush = g
            .run(&["-c", "alias.flush=!printenv GIT_FLUSH", "flush"], None)
            .unwrap();
        assert_eq!(flush.text(), "0");
        let capped = g
            .limits(Limits {
                stdout: 10,
                stderr: 10,
            })
            .run(&["-c", "alias.fast=!seq 1 200000", "fast"], None)
            .unwrap();
        assert!(capped.ok() && capped.truncated, "{capped:?}");
        assert_eq!(capped.stdout, b"1\n2\n3\n4\n5\n");
    }

    #[test]
    fn a_hanging_git_and_its_children_are_killed_at_the_deadline() {
        let dir = repo();
        let start = Instant::now();
        let out = Git::new(dir.path(), Duration::from_millis(300), &Env::default())
            .run(&["-c", "alias.hang=!sleep 30; echo late", "hang"], None)
            .unwrap();
        assert!(out.timed_out, "{out:?}");
        assert!(out.text().is_empty(), "{out:?}");
        assert!(start.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_past_deadline_runs_nothing() {
        let dir = repo();
        let out = Git::until(
            dir.path(),
            Instant::now() - Duration::from_secs(1),
            &Env::default(),
        )
        .run(&["status"], None)
        .unwrap();
        assert!(out.timed_out);
        assert_eq!(out.reason(), "timed out");
    }
}
