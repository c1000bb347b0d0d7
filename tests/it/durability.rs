//! Failed writes leave every file as it was (issue 9 item 3): a full disk (a small tmpfs, when
//! this runs as root) and `ulimit -f`, through the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{Project, Run};
use crate::hostile::safe_snapshot;

/// A project with slug `x` (unit T1) and a transcript binding subagent `a1` to T1.
struct Stopper {
    p: Project,
    transcript: PathBuf,
}

impl Stopper {
    fn new(p: Project) -> Self {
        p.new_slug("x", &["T1"], 50);
        let transcript = p.tmp.path().join("agent-a1.jsonl");
        let line = json!({"type": "user", "message": {"content": "Work on <task>T1</task>."}});
        std::fs::write(&transcript, format!("{line}\n")).unwrap();
        Stopper { p, transcript }
    }

    fn dir(&self) -> PathBuf {
        self.p.root.join(".claude/iterative/x")
    }

    /// A bound SubagentStop without a signal (T1 keeps going). Its progress entry is about
    /// `kib` KiB: the entry keeps 1,500 characters of each field (Did, Remaining, Blockers), so
    /// the text is 4-byte characters.
    fn payload(&self, kib: usize) -> Value {
        let chars = kib * 1024 / 4;
        let did = "😀".repeat(chars.min(1500));
        let remaining = "😀".repeat(chars.saturating_sub(1500).min(1500));
        let blockers = "😀".repeat(chars.saturating_sub(3000).min(1500));
        let mut v = self.p.payload("SubagentStop.json");
        v["agent_id"] = json!("a1");
        v["agent_transcript_path"] = json!(self.transcript);
        v["last_assistant_message"] = json!(format!(
            "{did}\nRemaining: {remaining}x\nBlockers: {blockers}x"
        ));
        v
    }

    fn stop(&self, kib: usize) -> Run {
        self.p.hook(&self.payload(kib))
    }

    fn progress_len(&self) -> u64 {
        std::fs::metadata(self.dir().join("progress.md"))
            .unwrap()
            .len()
    }
}

/// Unmounts on drop (also when the test panics).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Mounts a 1 MiB tmpfs over the project folder; `None` (with the reason) when not allowed.
fn mount_small_tmpfs(root: &Path) -> Result<Mounted, String> {
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(root)
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    std::fs::create_dir_all(root.join(".git")).unwrap();
    Ok(Mounted(root.to_path_buf()))
}

/// Fills the filesystem of `dir`, then frees `pages` pages of 4 KiB.
fn fill_leaving(dir: &Path, pages: u64) -> PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while matches!(f.write(&chunk), Ok(n) if n > 0) {}
    let len = f.metadata().unwrap().len() / 4096 * 4096;
    f.set_len(len - pages * 4096).unwrap();
    f.sync_all().unwrap();
    filler
}

#[test]
fn disk_full_leaves_every_file_as_it_was() {
    let p = Project::new();
    let _mounted = match mount_small_tmpfs(&p.root) {
        Ok(m) => m,
        Err(why) => {
            eprintln!("disk-full test skipped: no small tmpfs can be mounted here ({why})");
            return;
        }
    };
    let s = Stopper::new(p);
    assert_eq!(s.progress_len(), 16, "a fresh log fits in its first page");

    // (a) The entry (11 KiB) is larger than what is left: the append is cut short. Without
    // the fix, progress.md keeps a torn entry that the next SessionStart would replay.
    let filler = fill_leaving(&s.p.root, 1);
    let before = safe_snapshot(&s.p.root);
    let run = s.stop(11);
    run.assert_one_line_error();
    assert!(
        run.stderr.contains("progress.md") && run.stderr.contains("No space left"),
        "{run:?}"
    );
    assert_eq!(safe_snapshot(&s.p.root), before, "a torn append was left");

    // (b) The entry (6 KiB) fits in what is left (the log's first page and one more), the
    // state.json write after it does not: the locked operation is undone, the entry cut out.
    let run = s.stop(6);
    run.assert_one_line_error();
    assert!(
        run.stderr.contains("state.json") && run.stderr.contains("No space left"),
        "{run:?}"
    );
    assert_eq!(
        safe_snapshot(&s.p.root),
        before,
        "the append was not undone"
    );

    // (c) With room again, the same stop counts once.
    std::fs::remove_file(filler).unwrap();
    let run = s.stop(6);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("T1 is not done yet"), "{run:?}");
    let progress = std::fs::read_to_string(s.dir().join("progress.md")).unwrap();
    assert_eq!(
        progress.matches("## T1 - Iteration").count(),
        1,
        "{progress}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(s.dir().join("state.json")).unwrap()).unwrap();
    assert_eq!(state["tasks"]["T1"]["iterations_used"], 1);
    eprintln!("disk-full test: 2 failed writes on a full tmpfs left every file as it was");
}

#[test]
fn a_write_past_ulimit_f_fails_cleanly_instead_of_killing_the_process() {
    use std::os::unix::process::CommandExt;
    let s = Stopper::new(Project::new());
    let before = safe_snapshot(&s.p.root);
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("taskhook"));
    c.arg("hook")
        .current_dir(&s.p.root)
        .env_clear()
        .env("HOME", &s.p.home)
        .env("TASKHOOK_NOW", crate::common::NOW)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 8192,
                rlim_max: 8192,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let payload = serde_json::to_vec(&s.payload(11)).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &payload).unwrap();
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    // Without SIGXFSZ ignored the process dies silently (no exit code) with a torn entry.
    run.assert_one_line_error();
    assert!(
        run.stderr.contains("progress.md") && run.stderr.contains("too large"),
        "{run:?}"
    );
    assert_eq!(safe_snapshot(&s.p.root), before);
}
