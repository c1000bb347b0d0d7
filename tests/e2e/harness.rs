//! The end-to-end runner: the pinned Claude Code CLI (installed once with `npm ci`), a fake
//! Messages API per scenario (`fake_api.py`, loopback only, stopped by its pid), and a
//! throw-away project with its own `git init`, `HOME` and `taskhook install`.
//!
//! `E2E_KEEP=1` keeps every scenario's folder (its path is printed); a failing scenario's
//! folder is always kept.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The Claude Code version the suite pins (tests/e2e/package.json).
pub const CLAUDE_VERSION: &str = "2.1.330";
/// One `claude -p` run may take this long before it is killed (by its pid) and the test fails.
const CLAUDE_TIMEOUT: Duration = Duration::from_secs(180);
/// The fake server's own lifetime bound (it also exits when the scenario ends).
const SERVER_MAX_SECONDS: u64 = 600;

/// `tests/e2e/`.
pub fn e2e_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("e2e")
}

/// The taskhook binary cargo built for this test run.
pub fn taskhook_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_taskhook"))
}

/// The pinned `claude` binary, installed with `npm ci` on first use (once per test binary).
/// Panics (fails the test) with a clear message when node or npm is missing.
pub fn claude_bin() -> &'static Path {
    static CLI: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CLI.get_or_init(install_cli) {
        Ok(p) => p,
        Err(e) => panic!("e2e: {e}"),
    }
}

fn tool_version(tool: &str) -> Option<String> {
    let out = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn install_cli() -> Result<PathBuf, String> {
    let dir = e2e_dir();
    let bin = dir.join("node_modules").join(".bin").join("claude");
    let lock = std::fs::read(dir.join("package-lock.json"))
        .map_err(|e| format!("cannot read tests/e2e/package-lock.json: {e}"))?;
    let stamp = dir.join("node_modules").join(".taskhook-e2e-lock");
    let fresh = std::fs::read(&stamp).ok().as_deref() == Some(&lock[..]) && bin.exists();
    if !fresh {
        let missing: Vec<&str> = ["node", "npm"]
            .into_iter()
            .filter(|t| tool_version(t).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not found: the end-to-end suite installs the real Claude Code CLI with npm \
                 and cannot run without it. Install Node.js and npm (on Debian: `apt-get update \
                 && apt-get install -y nodejs npm`; .ci/run does this), then run the tests again.",
                missing.join(" and ")
            ));
        }
        let started = Instant::now();
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run npm ci: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`npm ci` in {} failed ({}):\n{}\n{}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::fs::write(&stamp, &lock).map_err(|e| format!("{}: {e}", stamp.display()))?;
        eprintln!(
            "e2e: npm ci installed Claude Code in {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }
    let version = tool_version(&bin.display().to_string())
        .ok_or_else(|| format!("{} --version failed", bin.display()))?;
    if !version.starts_with(CLAUDE_VERSION) {
        return Err(format!(
            "{} is {version:?}, expected {CLAUDE_VERSION}",
            bin.display()
        ));
    }
    Ok(bin)
}

/// Runs a command to completion within `limit`, killing it by its pid when it overruns.
fn run_bounded(mut cmd: Command, limit: Duration, what: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut so = child.stdout.take().expect("piped");
    let mut se = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let status: ExitStatus = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not finish within {limit:?}; killed pid {}",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

/// One request the fake server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request's number in the log, from 1.
    pub n: u64,
    /// `main`, `compacted` (the main agent after a compaction), `compact` (the summary
    /// request), an agent key such as `SUBAGENT-T1`, or `side`.
    pub stream: String,
    /// Assistant messages already in the request.
    pub turn: u64,
    pub body: Value,
}

/// The text of a message's content: a string, or its text and tool_result blocks, joined.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or_default().to_string(),
                Some("tool_result") => content_text(&b["content"]),
                _ => String::new(),
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl Request {
    /// `(role, text)` of every message, in order.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.body["messages"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        (
                            m["role"].as_str().unwrap_or_default().to_string(),
                            content_text(&m["content"]),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Texts of the messages with `role`.
    pub fn texts(&self, role: &str) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|(r, _)| r == role)
            .map(|(_, t)| t)
            .collect()
    }

    /// Every message text joined (for "does this request mention X" checks).
    pub fn all_text(&self) -> String {
        self.messages()
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The pieces of system-role text that start with `prefix`, each up to the next blank
    /// line followed by another hook's prefix or the end of its message. Hook contexts are
    /// concatenated into system messages, so this cuts them apart again.
    pub fn hook_contexts(&self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        for text in self.texts("system") {
            let mut rest = text.as_str();
            while let Some(i) = rest.find(prefix) {
                let piece = &rest[i..];
                let end = piece[prefix.len()..]
                    .find(prefix)
                    .map_or(piece.len(), |j| j + prefix.len());
                out.push(piece[..end].to_string());
                rest = &piece[end..];
            }
        }
        out
    }

    /// The last message with role `user`, as text.
    pub fn last_user_text(&self) -> String {
        self.texts("user").pop().unwrap_or_default()
    }
}

/// One finished `claude -p` run.
#[derive(Debug)]
pub struct ClaudeRun {
    pub result: Value,
}

impl ClaudeRun {
    pub fn session_id(&self) -> String {
        self.result["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session_id in {}", self.result))
            .to_string()
    }

    pub fn text(&self) -> String {
        self.result["result"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// A throw-away project (`proj/`, `git init`, taskhook installed), its `home/`, a `bin/`
/// holding `taskhook` (first on claude's PATH, as after `cargo install`), and a fake Messages
/// API playing `script`.
pub struct Scenario {
    pub name: &'static str,
    pub dir: PathBuf,
    pub proj: PathBuf,
    pub home: PathBuf,
    log: PathBuf,
    server: Child,
    pub port: u16,
    claude: PathBuf,
    started: Instant,
}

impl Scenario {
    /// A scenario whose project has taskhook registered by `taskhook install`.
    pub fn new(name: &'static str, script: &Value) -> Self {
        let s = Self::without_install(name, script);
        let out = s.taskhook(&["install"]);
        assert!(
            s.proj.join(".claude/settings.json").exists(),
            "taskhook install wrote no settings.json: {out:?}"
        );
        s
    }

    /// A scenario with nothing registered (the plugin scenario loads taskhook's hooks itself).
    pub fn without_install(name: &'static str, script: &Value) -> Self {
        let claude = claude_bin().to_path_buf();
        let dir = tempfile::Builder::new()
            .prefix(&format!("taskhook-e2e-{name}-"))
            .tempdir()
            .expect("temp dir")
            .keep();
        let proj = dir.join("proj");
        let home = dir.join("home");
        for d in [&proj, &home, &dir.join("tmp"), &dir.join("bin")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::os::unix::fs::symlink(taskhook_bin(), dir.join("bin").join("taskhook"))
            .expect("link bin/taskhook");
        let out = Command::new("git")
            .args(["init", "-q", "--initial-branch=main"])
            .current_dir(&proj)
            .env("HOME", &home)
            .output()
            .expect("git init");
        assert!(out.status.success(), "git init: {out:?}");
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, serde_json::to_vec_pretty(script).unwrap()).unwrap();
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        let server = Command::new("python3")
            .arg(e2e_dir().join("fake_api.py"))
            .arg("--script")
            .arg(&script_path)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--max-seconds")
            .arg(SERVER_MAX_SECONDS.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("e2e: cannot start python3 for the fake API: {e}"));
        let mut s = Scenario {
            name,
            dir,
            proj,
            home,
            log,
            server,
            port: 0,
            claude,
            started: Instant::now(),
        };
        let t0 = Instant::now();
        s.port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().parse().expect("port");
            }
            if let Some(st) = s.server.try_wait().expect("wait") {
                panic!("e2e: the fake API exited at start ({st})");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "e2e: the fake API did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        s
    }

    /// `bin/` (holding `taskhook`) followed by this process's PATH.
    pub fn path_env(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.dir.join("bin")];
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        std::env::join_paths(dirs).expect("PATH")
    }

    /// Runs `taskhook ARGS` in the project (with this scenario's HOME); asserts exit 0.
    pub fn taskhook(&self, args: &[&str]) -> Output {
        let out = Command::new(taskhook_bin())
            .args(args)
            .current_dir(&self.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .expect("run taskhook");
        assert!(
            out.status.success(),
            "taskhook {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs `claude ARGS --output-format json --dangerously-skip-permissions` in the project,
    /// against the fake API, with `extra_env`. Asserts exit 0 and returns the result JSON.
    pub fn claude(&self, args: &[&str], extra_env: &[(&str, &str)]) -> ClaudeRun {
        let mut cmd = Command::new(&self.claude);
        let tmp = self.dir.join("tmp");
        cmd.args(args)
            .args(["--output-format", "json", "--dangerously-skip-permissions"])
            .current_dir(&self.proj)
            .env_clear()
            .env("PATH", self.path_env())
            .env("HOME", &self.home)
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-ant-e2e-dummy-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("IS_SANDBOX", "1")
            .env("CLAUDE_CODE_TMPDIR", &tmp)
            .env("XDG_RUNTIME_DIR", &tmp);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let what = format!("claude {args:?} ({})", self.name);
        let out = run_bounded(cmd, CLAUDE_TIMEOUT, &what);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{what} exited {}:\nstdout: {stdout}\nstderr: {stderr}",
            out.status
        );
        let result: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}): {stdout}"));
        assert_eq!(result["is_error"], false, "{what}: {result}");
        ClaudeRun { result }
    }

    /// Every request the fake server has logged so far.
    pub fn requests(&self) -> Vec<Request> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).expect("log line");
                Request {
                    n: v["n"].as_u64().unwrap_or_default(),
                    stream: v["stream"].as_str().unwrap_or_default().to_string(),
                    turn: v["turn"].as_u64().unwrap_or_default(),
                    body: v["body"].clone(),
                }
            })
            .collect()
    }

    /// The requests of one stream, in order.
    pub fn stream(&self, stream: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.stream == stream)
            .collect()
    }

    /// A path inside the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.proj.join(rel)
    }

    /// A file inside the project, as text.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel))
            .unwrap_or_else(|e| panic!("{}: {e}", self.path(rel).display()))
    }

    /// A JSON file inside the project.
    pub fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.read(rel)).unwrap_or_else(|e| panic!("{rel} is not JSON: {e}"))
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        // Stop the server by its pid; it would exit on its own after SERVER_MAX_SECONDS.
        let _ = Command::new("kill")
            .arg(self.server.id().to_string())
            .status();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.server.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !matches!(self.server.try_wait(), Ok(Some(_))) {
            let _ = self.server.kill();
            let _ = self.server.wait();
        }
        let secs = self.started.elapsed().as_secs_f64();
        if std::thread::panicking() || std::env::var_os("E2E_KEEP").is_some() {
            eprintln!(
                "e2e {}: {secs:.1}s; kept {} (requests.jsonl is the fake API's log)",
                self.name,
                self.dir.display()
            );
        } else {
            eprintln!("e2e {}: {secs:.1}s", self.name);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
