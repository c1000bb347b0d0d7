//! A hostile repository (issue 9): links to a victim outside the project, hard links, FIFOs,
//! `/dev/zero`, dangling lock links, linked store folders and giant files, each planted in a
//! scratch project and driven through the real binary. Every case checks that the victim is
//! byte-identical, that no file anywhere changed or appeared, that the run ended within a bound
//! (a hang is killed and fails the test), and that the message names the planted file.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{Project, Run, NOW};

/// What the planted links point at.
pub const VICTIM: &str = "export PATH=/usr/bin\n# the user's own file\n";
/// Longest any hostile run may take (SubagentStop may wait 1.5 s for a live transcript).
pub const LIMIT: Duration = Duration::from_secs(15);

/// A scratch project with a victim folder beside it.
pub struct Scene {
    pub p: Project,
    pub outside: PathBuf,
    rss: tempfile::TempDir,
}

/// One bounded run: its result, wall time and peak memory (when `/usr/bin/time` exists).
#[derive(Debug)]
pub struct Timed {
    pub run: Run,
    pub secs: f64,
    pub rss_kib: Option<u64>,
}

/// The worst time and memory seen on a special file, across the tests of this module.
pub static WORST: Mutex<(f64, u64, usize)> = Mutex::new((0.0, 0, 0));

impl Scene {
    pub fn new() -> Self {
        let p = Project::new();
        let outside = p.tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("bashrc"), VICTIM).unwrap();
        Scene {
            p,
            outside,
            rss: tempfile::tempdir().unwrap(),
        }
    }

    pub fn victim(&self) -> PathBuf {
        self.outside.join("bashrc")
    }

    /// `.claude/iterative/<slug>` with unit T1, made by the binary.
    pub fn slug(&self, slug: &str) -> PathBuf {
        self.p.new_slug(slug, &["T1"], 5)
    }

    /// A captured payload aimed at this project.
    pub fn payload(&self, file: &str) -> Value {
        self.p.payload(file)
    }

    /// A SubagentStop whose final message carries `message` (its transcript path is the
    /// capture's, from another machine: never waited for).
    pub fn stop(&self, message: &str) -> Value {
        let mut v = self.payload("SubagentStop.json");
        v["last_assistant_message"] = json!(message);
        v
    }

    pub fn hook(&self, payload: &Value) -> Timed {
        self.run(&["hook"], serde_json::to_vec(payload).unwrap(), &[])
    }

    /// Runs the binary with a time limit, under `/usr/bin/time` when there is one.
    pub fn run(&self, args: &[&str], stdin: Vec<u8>, env: &[(&str, &str)]) -> Timed {
        let bin = assert_cmd::cargo::cargo_bin("taskhook");
        let rss_file = tempfile::NamedTempFile::new_in(self.rss.path()).unwrap();
        let time = Path::new("/usr/bin/time");
        let mut c = if time.exists() {
            let mut c = Command::new(time);
            c.args(["-f", "%M", "-o"]).arg(rss_file.path()).arg(&bin);
            c
        } else {
            Command::new(&bin)
        };
        c.args(args)
            .current_dir(&self.p.root)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.p.home)
            .env("TASKHOOK_NOW", NOW)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        let start = Instant::now();
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&stdin);
        });
        let pipe = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.read_to_end(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            })
        };
        let out = pipe(Box::new(child.stdout.take().unwrap()));
        let err = pipe(Box::new(child.stderr.take().unwrap()));
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > LIMIT {
                // The whole process group: `/usr/bin/time` and the binary under it.
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                panic!(
                    "`taskhook {}` did not finish within {LIMIT:?}",
                    args.join(" ")
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let secs = start.elapsed().as_secs_f64();
        writer.join().unwrap();
        let rss_kib = std::fs::read_to_string(rss_file.path())
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
        Timed {
            run: Run {
                code: status.code().unwrap_or(-1),
                stdout: out.join().unwrap(),
                stderr: err.join().unwrap(),
            },
            secs,
            rss_kib,
        }
    }

    /// Every path under the temp folder (project, home, outside), links and special files
    /// described rather than followed or read.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        safe_snapshot(self.p.tmp.path())
    }
}

/// Every path under `root`: a folder as empty, a link as its target, a file as its content
/// (or its size, past 1 MiB), anything else as its type. Nothing is followed or opened
/// except regular files.
pub fn safe_snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let what = if m.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_dir() {
                stack.push(p);
                "folder".to_string()
            } else if m.is_file() && m.len() <= 1 << 20 {
                String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned()
            } else if m.is_file() {
                format!("{} bytes", m.len())
            } else {
                format!("special {:?}", m.file_type())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// Makes a FIFO.
pub fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

/// Replaces `path` with a link to `target`.
pub fn plant_link(target: &Path, path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    symlink(target, path).unwrap();
}

/// Checks one hostile run: exit code, the planted file named, nothing changed anywhere.
pub fn refused(
    s: &Scene,
    case: &str,
    t: &Timed,
    code: i32,
    names: &str,
    before: &BTreeMap<PathBuf, String>,
) {
    let said = format!("{}{}", t.run.stdout, t.run.stderr);
    assert_eq!(t.run.code, code, "{case}: {t:?}");
    assert!(said.contains(names), "{case}: does not name {names}: {t:?}");
    assert!(!said.contains("internal error"), "{case}: {t:?}");
    assert!(
        !said.contains("export PATH"),
        "{case}: the victim was read: {t:?}"
    );
    if code == 1 {
        t.run.assert_one_line_error();
    }
    assert_eq!(
        std::fs::read_to_string(s.victim()).unwrap(),
        VICTIM,
        "{case}"
    );
    assert_eq!(&s.snapshot(), before, "{case}: files changed");
}

/// Records a run on a special file for the summary.
pub fn record_special(t: &Timed) {
    let mut w = WORST.lock().unwrap();
    w.0 = w.0.max(t.secs);
    w.1 = w.1.max(t.rss_kib.unwrap_or(0));
    w.2 += 1;
}

fn context_of(t: &Timed) -> String {
    serde_json::from_str::<Value>(t.run.stdout.trim()).unwrap()["hookSpecificOutput"]
        ["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn links_to_a_victim_are_reported_and_never_written_through() {
    let mut cases = 0;
    let pwned = "All good; touch /tmp/PWNED # <signal>T1_DONE</signal>";

    // progress.md → ~/.bashrc: the subagent's final message would be appended there.
    let s = Scene::new();
    let dir = s.slug("x");
    plant_link(&s.victim(), &dir.join("progress.md"));
    let before = s.snapshot();
    let t = s.hook(&s.stop(pwned));
    refused(
        &s,
        "progress.md link, SubagentStop",
        &t,
        1,
        "progress.md",
        &before,
    );
    // With an invalid state.json as well, SessionStart alone would append there.
    std::fs::write(dir.join("state.json"), "{ not json").unwrap();
    let before = s.snapshot();
    let t = s.hook(&s.payload("SessionStart.startup.json"));
    refused(
        &s,
        "progress.md link, SessionStart",
        &t,
        0,
        "progress.md",
        &before,
    );
    assert!(context_of(&t).contains("symbolic link"), "{t:?}");
    let st = s.run(&["status"], Vec::new(), &[]);
    refused(
        &s,
        "progress.md link, status",
        &st,
        0,
        "progress.md",
        &before,
    );
    cases += 3;

    // guardrails.md → victim: `iterative guardrail` appends there.
    let s = Scene::new();
    let dir = s.slug("x");
    plant_link(&s.victim(), &dir.join("guardrails.md"));
    let before = s.snapshot();
    let args: Vec<&str> = "iterative guardrail x --when w --problem p --solution s"
        .split(' ')
        .collect();
    let t = s.run(&args, Vec::new(), &[]);
    refused(&s, "guardrails.md link", &t, 1, "guardrails.md", &before);
    // context.md → victim: never shown to the model.
    plant_link(&s.victim(), &dir.join("context.md"));
    let before = s.snapshot();
    let t = s.hook(&s.payload("SessionStart.startup.json"));
    refused(&s, "context.md link", &t, 0, "context.md", &before);
    cases += 2;

    // A dangling lock-file link: the lock is never created through it.
    let s = Scene::new();
    let dir = s.slug("x");
    plant_link(&s.outside.join("made-by-lock"), &dir.join(".taskhook.lock"));
    let before = s.snapshot();
    let t = s.hook(&s.stop("<signal>T1_DONE</signal>"));
    refused(&s, "dangling lock link", &t, 1, ".taskhook.lock", &before);
    assert!(!s.outside.join("made-by-lock").exists());
    cases += 1;

    // A hard link: the append would write the victim's inode.
    let s = Scene::new();
    let dir = s.slug("x");
    std::fs::remove_file(dir.join("progress.md")).unwrap();
    std::fs::hard_link(s.victim(), dir.join("progress.md")).unwrap();
    let before = s.snapshot();
    let t = s.hook(&s.stop(pwned));
    refused(&s, "hard link", &t, 1, "hard links", &before);
    cases += 1;

    // state.json → a valid state elsewhere.
    let s = Scene::new();
    let dir = s.slug("x");
    std::fs::copy(dir.join("state.json"), s.outside.join("state.json")).unwrap();
    plant_link(&s.outside.join("state.json"), &dir.join("state.json"));
    let before = s.snapshot();
    let t = s.hook(&s.stop(pwned));
    refused(&s, "state.json link", &t, 1, "state.json", &before);
    cases += 1;

    // package.json → victim: the list id is never derived from it.
    let s = Scene::new();
    plant_link(&s.victim(), &s.p.root.join("package.json"));
    let before = s.snapshot();
    let t = s.hook(&s.payload("PostToolUse.TodoWrite.json"));
    refused(&s, "package.json link", &t, 1, "package.json", &before);
    // agents.json → victim: read at every main-agent tool call.
    plant_link(&s.victim(), &s.p.root.join(".claude/taskhook/agents.json"));
    let before = s.snapshot();
    let t = s.hook(&s.payload("PostToolUse.Read.json"));
    refused(&s, "agents.json link", &t, 1, "agents.json", &before);
    cases += 2;
    eprintln!("hostile: {cases} link cases");
}

#[test]
fn linked_store_folders_are_reported_and_left_alone() {
    let mut cases = 0;
    // .claude/iterative → a folder outside holding a slug.
    let s = Scene::new();
    let dir = s.slug("x");
    let elsewhere = s.outside.join("iterative");
    std::fs::rename(s.p.root.join(".claude/iterative"), &elsewhere).unwrap();
    plant_link(&elsewhere, &s.p.root.join(".claude/iterative"));
    let before = s.snapshot();
    let t = s.hook(&s.payload("SessionStart.startup.json"));
    refused(
        &s,
        ".claude/iterative link, SessionStart",
        &t,
        0,
        ".claude/iterative`",
        &before,
    );
    let t = s.hook(&s.stop("<signal>T1_DONE</signal>"));
    refused(
        &s,
        ".claude/iterative link, SubagentStop",
        &t,
        1,
        ".claude/iterative`",
        &before,
    );
    let t = s.run(&["iterative", "new", "y", "--task", "T1"], Vec::new(), &[]);
    refused(
        &s,
        ".claude/iterative link, new",
        &t,
        1,
        ".claude/iterative`",
        &before,
    );
    assert!(!elsewhere.join("y").exists());
    let _ = dir;
    cases += 3;

    // .claude/iterative/archive → outside: archiving would move the slug there.
    let s = Scene::new();
    s.slug("x");
    std::fs::create_dir_all(s.outside.join("archive")).unwrap();
    plant_link(
        &s.outside.join("archive"),
        &s.p.root.join(".claude/iterative/archive"),
    );
    let before = s.snapshot();
    let t = s.run(&["iterative", "archive", "x", "--force"], Vec::new(), &[]);
    refused(&s, "archive link", &t, 1, "archive`", &before);
    cases += 1;

    // .claude/taskhook → outside: bindings and notices are never written there.
    let s = Scene::new();
    s.slug("x");
    std::fs::create_dir_all(s.outside.join("th")).unwrap();
    plant_link(&s.outside.join("th"), &s.p.root.join(".claude/taskhook"));
    let before = s.snapshot();
    let mut agent = s.payload("PostToolUse.Agent.json");
    agent["tool_input"]["prompt"] = json!("Work on <task>T1</task>.");
    let t = s.hook(&agent);
    refused(
        &s,
        ".claude/taskhook link, Agent",
        &t,
        1,
        ".claude/taskhook`",
        &before,
    );
    cases += 2;

    // .claude itself → outside.
    let s = Scene::new();
    s.slug("x");
    std::fs::rename(s.p.root.join(".claude"), s.outside.join("claude")).unwrap();
    plant_link(&s.outside.join("claude"), &s.p.root.join(".claude"));
    let before = s.snapshot();
    let t = s.hook(&s.payload("SessionStart.startup.json"));
    refused(&s, ".claude link", &t, 0, ".claude`", &before);
    cases += 1;
    eprintln!("hostile: {cases} linked-folder cases");
}
