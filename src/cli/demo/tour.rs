//! The tour's stage: the scratch project, sending payloads through the hook path, running
//! commands, and printing what happened for a person.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::engine;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::hook::Outcome;

/// A tour in progress: the scratch project and where the story is printed.
pub struct Tour<'a> {
    pub root: PathBuf,
    pub home: PathBuf,
    pub cx: Ctx,
    out: &'a mut dyn Write,
    chapter: usize,
}

impl Tour<'_> {
    fn line(&mut self, text: &str) -> Result<()> {
        match writeln!(self.out, "{text}") {
            // `taskhook demo | head`: the reader has seen enough.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Error::io("write", "stdout", e))
            }
            _ => Ok(()),
        }
    }

    /// Starts a chapter.
    pub fn chapter(&mut self, title: &str) -> Result<()> {
        self.chapter += 1;
        let n = self.chapter;
        self.line("")?;
        self.line(&format!("── {n}. {title} "))
    }

    /// Explains a step.
    pub fn say(&mut self, text: &str) -> Result<()> {
        self.line(&format!("   {text}"))
    }

    /// A payload of `event` with the fields every payload carries, plus `fields`.
    pub fn payload(&self, event: &str, fields: Value) -> Value {
        let mut v = json!({
            "session_id": "demo-session",
            "transcript_path": self.home.join(".claude/projects/demo/demo-session.jsonl"),
            "cwd": self.root,
            "permission_mode": "default",
            "hook_event_name": event,
        });
        if let (Some(m), Value::Object(f)) = (v.as_object_mut(), fields) {
            m.extend(f);
        }
        v
    }

    /// Sends a payload through the hook path and prints what happened.
    pub fn send(&mut self, what: &str, payload: &Value) -> Result<Outcome> {
        let bytes = serde_json::to_vec(payload).unwrap_or_default();
        self.line(&format!("   ▸ {what}"))?;
        let (_, result) = engine::run(&self.cx, &bytes);
        let outcome = match result {
            Ok(o) => o,
            Err(e) => {
                self.line(&format!("     exit 1: taskhook: {}", e.one_line()))?;
                return Ok(Outcome::default());
            }
        };
        let rel = |p: &Path| -> String {
            p.strip_prefix(&self.root)
                .map(|r| r.display().to_string())
                .or_else(|_| {
                    p.strip_prefix(&self.home)
                        .map(|r| format!("~/{}", r.display()))
                })
                .unwrap_or_else(|_| p.display().to_string())
        };
        let changed: Vec<String> = outcome.changed.iter().map(|p| rel(p)).collect();
        if !changed.is_empty() {
            self.line(&format!("     changed: {}", changed.join(", ")))?;
        }
        if let Some(o) = &outcome.output {
            if let Some(r) = &o.reason {
                self.line(&format!(
                    "     → another pass for the subagent: {}",
                    short(r, 150)
                ))?;
            }
            if let Some(r) = &o.stop_reason {
                self.line(&format!("     → halts the main agent: {}", short(r, 150)))?;
            }
            if let Some(h) = &o.hook_specific_output {
                if let Some(c) = &h.additional_context {
                    self.line("     → tells the model:")?;
                    for l in c.lines().filter(|l| !l.trim().is_empty()).take(8) {
                        self.line(&format!("         {}", short(l, 110)))?;
                    }
                }
                if let Some(r) = &h.permission_decision_reason {
                    self.line(&format!("     → refuses the tool call: {}", short(r, 150)))?;
                }
                if !h.extra.is_empty() {
                    let extra = serde_json::to_string(&h.extra).unwrap_or_default();
                    self.line(&format!("     → answers: {}", short(&extra, 150)))?;
                }
            }
            if let Some(m) = &o.system_message {
                self.line(&format!("     → tells the user: {}", short(m, 150)))?;
            }
        }
        if let Some(r) = &outcome.refusal {
            self.line(&format!("     → refuses (exit 2): {}", short(r, 150)))?;
        }
        if changed.is_empty() && outcome.output.is_none() && outcome.refusal.is_none() {
            self.line("     (nothing to do: no file opened for writing, no reply)")?;
        }
        Ok(outcome)
    }

    /// Runs `taskhook <args>` in-process in the scratch project (the real CLI) and prints the
    /// command and the first `lines` lines of its output.
    pub fn cmd(&mut self, args: &[&str], lines: usize) -> Result<String> {
        let mut argv: Vec<std::ffi::OsString> = vec!["taskhook".into()];
        argv.extend(args.iter().map(Into::into));
        let (mut stdin, mut stdout, mut stderr) = (std::io::empty(), Vec::new(), Vec::new());
        let mut io = crate::cli::Io {
            stdin: &mut stdin,
            stdin_is_terminal: true,
            color: false,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        let code = crate::cli::run(argv, self.cx.env.clone(), self.root.clone(), &mut io);
        self.line(&format!("   $ taskhook {}", args.join(" ")))?;
        let text = String::from_utf8_lossy(&stdout).into_owned();
        for l in text.lines().take(lines) {
            self.line(&format!("       {}", short(l, 110)))?;
        }
        if code != 0 {
            let err = String::from_utf8_lossy(&stderr).into_owned();
            self.line(&format!("     exit {code}: {}", short(&err, 150)))?;
        }
        Ok(text)
    }

    /// Writes a file of the scratch project (the demo's own set-up, as a person would).
    pub fn write(&mut self, rel: &str, text: &str) -> Result<()> {
        let path = self.root.join(rel);
        self.write_abs(&path, text)
    }

    /// Writes a file inside the scratch folder (a transcript Claude Code would write).
    pub fn write_abs(&mut self, path: &Path, text: &str) -> Result<()> {
        if let Some(dir) = path.parent() {
            self.cx.store.create_dir_all(dir)?;
        }
        self.cx.store.replace(path, text.as_bytes())?;
        let _ = self.cx.store.take_changed();
        Ok(())
    }

    /// Prints the first lines of a file of the scratch project.
    pub fn show(&mut self, path: &Path, lines: usize) -> Result<()> {
        let text = self
            .cx
            .store
            .read_text(path)?
            .unwrap_or_else(|| "(missing)".into());
        for l in text.lines().take(lines) {
            let cut: String = l.chars().take(110).collect();
            self.line(&format!("       │ {cut}"))?;
        }
        if text.lines().count() > lines {
            self.line("       │ …")?;
        }
        Ok(())
    }
}

/// The first line of `s`, cut to `max` characters.
fn short(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("").trim();
    if first.chars().count() > max {
        format!("{}…", first.chars().take(max).collect::<String>())
    } else {
        first.to_string()
    }
}

/// Runs the tour in a fresh scratch folder; `keep` leaves the folder (and says where).
pub fn run(out: &mut dyn Write, keep: bool) -> Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix("taskhook-demo-")
        .tempdir()
        .map_err(|e| Error::io("create", std::env::temp_dir(), e))?;
    let root = tmp.path().join("demo-project");
    let home = tmp.path().join("home");
    let cdd = tmp.path().join("demo-project").join("work").join("cdd");
    let env = Env::from_pairs([("HOME", home.as_os_str()), ("CDD_DIR", cdd.as_os_str())]);
    let cx = Ctx::new(env, None, Some(home.clone()), root.clone(), false)?;
    // The scratch folder is the tour's own to write.
    cx.store.trust(tmp.path(), false);
    cx.store.create_dir_all(&root.join(".git"))?;
    cx.store.create_dir_all(&home)?;
    let mut tour = Tour {
        root,
        home,
        cx,
        out,
        chapter: 0,
    };
    tour.line(
        "taskhook demo: a tour of what taskhook does for Claude Code, on a scratch project.",
    )?;
    tour.line(&format!(
        "Scratch project: {} (removed at the end{}).",
        tour.root.display(),
        if keep { "; kept: --keep" } else { "" }
    ))?;
    super::chapters::all(&mut tour)?;
    tour.line("")?;
    tour.line(
        "That was every layout. In a real project: `taskhook install`, then start Claude Code;",
    )?;
    tour.line("hooks load with the next session. `taskhook status` shows the stores at any time.")?;
    if keep {
        let kept = tmp.keep();
        tour.line(&format!("Kept the scratch folder: {}", kept.display()))?;
    }
    Ok(())
}
