//! `taskhook sync init [--remote NAME] | sync [--json] | sync status`: team sync over git
//! (CONTRACT §8). Thin: the work is [`crate::sync`]'s.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::sync::{self, Report};

use super::{out, out_json, Io};

/// `taskhook sync`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = false)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Cmd>,
    /// Print one JSON object.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Turn sync on for this project (.claude/taskhook.json) and publish every store to the
    /// remote's refs/taskhook/ops.
    Init {
        /// The git remote that holds the log.
        #[arg(long, value_name = "NAME", default_value = "origin")]
        remote: String,
    },
    /// What is synced and what is not pushed yet, without the network.
    Status,
}

/// Runs a layout command again from the log, in-process, its output dropped.
pub fn run_command(env: Env, root: &Path, args: &[String]) -> (u8, String) {
    let mut argv: Vec<OsString> = vec!["taskhook".into(), "--project-dir".into(), root.into()];
    argv.extend(args.iter().map(OsString::from));
    let mut stdin = std::io::empty();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut io = Io {
        stdin: &mut stdin,
        stdin_is_terminal: false,
        stdout: &mut stdout,
        stderr: &mut stderr,
        color: false,
    };
    let code = super::run(argv, env, root.to_path_buf(), &mut io);
    let text = String::from_utf8_lossy(if stderr.is_empty() { &stdout } else { &stderr })
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("taskhook: ")
        .to_string();
    (code, text)
}

fn deadline(cfg: &crate::config::SyncConfig, factor: u64) -> Instant {
    Instant::now() + Duration::from_secs(cfg.timeout_seconds.max(1).saturating_mul(factor))
}

/// The one line a sync's problem gets, and exit 1.
fn failed(io: &mut Io<'_>, r: &Report, json: bool) -> Result<u8> {
    if json {
        out_json(io, r)?;
    }
    let p = r.problem.clone().unwrap_or_default();
    let q = if r.queued > 0 {
        format!("; {} change(s) not yet pushed stay queued", r.queued)
    } else {
        String::new()
    };
    super::err(io, &format!("taskhook: sync: {p}{q}"));
    Ok(1)
}

/// The lines a sync's report gives a person.
pub fn report_lines(r: &Report) -> Vec<String> {
    let a = &r.applying;
    let mut lines = vec![format!(
        "sync with {}: {} op(s) in, {} out, {} applied{}",
        r.remote,
        a.ops_in,
        r.ops_out,
        a.applied,
        r.tip
            .as_deref()
            .map(|t| format!("; log at {}", t.get(..8).unwrap_or(t)))
            .unwrap_or_default()
    )];
    if !a.rebuilt.is_empty() {
        lines.push(format!("made from the log: {}", a.rebuilt.join(", ")));
    }
    if let Some(w) = &r.rewound {
        lines.push(format!("rewound: {w}"));
    }
    for c in &r.compacted {
        lines.push(format!("snapshot published: {c}"));
    }
    for t in &a.takeovers {
        lines.push(format!("takeover: {t}"));
    }
    lines.extend(a.lost.iter().cloned());
    for s in a.skipped.iter().chain(&r.queue_problems) {
        lines.push(format!("skipped: {s}"));
    }
    for f in &a.failed {
        lines.push(format!("not applied: {f}"));
    }
    if r.queued > 0 {
        lines.push(format!("{} change(s) not yet pushed", r.queued));
    }
    lines.extend(r.config.iter().cloned());
    lines
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    match args.command {
        Some(Cmd::Init { remote }) => init(cx, &project, &remote, args.json, io),
        Some(Cmd::Status) => status(cx, &project, args.json, io),
        None => sync_now(cx, &project, args.json, io),
    }
}

fn sync_now(cx: &Ctx, project: &Project, json: bool, io: &mut Io<'_>) -> Result<u8> {
    let (cfg, enabled) = match sync::config(cx, project) {
        Some(c) => (c, Vec::new()),
        None => {
            // A fresh clone: the remote's log turns sync on here.
            let cfg = crate::config::SyncConfig::default();
            let r = sync::remote_of(cx, project, &cfg, deadline(&cfg, 3));
            if r.toplevel().is_none() || !r.exists() {
                return Err(Error::Usage(format!(
                    "sync is off for {} and it has no git remote `{}`; turn it on with `taskhook sync init --remote NAME`",
                    project.root.display(),
                    cfg.remote
                )));
            }
            match r.has_log() {
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(Error::Usage(format!(
                        "sync is off for this project and {} holds no taskhook log; turn it on with `taskhook sync init`",
                        r.label()
                    )))
                }
                Err(p) => return Err(Error::BadInput(p.line().to_string())),
            }
            sync::enable(cx, &project.root, &cfg.remote)?;
            let line = format!("sync turned on: {} holds a taskhook log", r.label());
            (cfg.clone(), vec![line])
        }
    };
    let run = run_command;
    let r = sync::run(
        cx,
        project,
        &cfg,
        sync::Options {
            deadline: deadline(&cfg, 3),
            claim: None,
            heartbeats: true,
            run: &run,
        },
    )?;
    if r.problem.is_some() {
        return failed(io, &r, json);
    }
    if json {
        let mut v = serde_json::to_value(&r).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("enabled".into(), json!(!enabled.is_empty()));
        }
        out_json(io, &v)?;
    } else {
        let mut lines = enabled;
        lines.extend(report_lines(&r));
        out(io, &lines.join("\n"))?;
    }
    Ok(if r.applying.failed.is_empty() { 0 } else { 1 })
}

fn init(cx: &Ctx, project: &Project, remote: &str, json: bool, io: &mut Io<'_>) -> Result<u8> {
    let cfg = crate::config::SyncConfig {
        remote: remote.to_string(),
        ..sync::config(cx, project).unwrap_or_default()
    };
    let done = sync::init(cx, project, &cfg, deadline(&cfg, 3), &run_command)?;
    if let Some(r) = &done.report {
        if r.problem.is_some() {
            for l in &done.left_out {
                super::err(io, &format!("taskhook: sync init: {l}"));
            }
            return failed(io, r, json);
        }
    }
    if json {
        out_json(io, &done)?;
        return Ok(0);
    }
    let mut lines = vec![format!(
        "sync is on: the log is {} on {}",
        sync::remote::REF,
        done.remote
    )];
    if !done.published.is_empty() {
        lines.push(format!("published: {}", done.published.join(", ")));
    }
    if !done.from_remote.is_empty() {
        lines.push(format!(
            "already on the remote (taken from it): {}",
            done.from_remote.join(", ")
        ));
    }
    lines.extend(done.left_out.iter().cloned());
    if let Some(r) = &done.report {
        lines.extend(report_lines(r));
    }
    out(io, &lines.join("\n"))?;
    Ok(0)
}

fn status(cx: &Ctx, project: &Project, json: bool, io: &mut Io<'_>) -> Result<u8> {
    let s = sync::status(cx, project)?;
    if json {
        out_json(io, &s)?;
        return Ok(0);
    }
    let mut lines = Vec::new();
    match &s.remote {
        None => lines.push("sync is off for this project (taskhook sync init turns it on)".into()),
        Some(r) => lines.push(format!(
            "sync is on: {} on {r}; last read {}",
            sync::remote::REF,
            s.tip
                .as_deref()
                .map(|t| t.get(..8).unwrap_or(t).to_string())
                .unwrap_or_else(|| "never".into())
        )),
    }
    lines.push(format!("{} change(s) not yet pushed", s.queued));
    for st in &s.stores {
        lines.push(format!(
            "  {} {} ({}): {}",
            st.layout, st.id, st.path, st.state
        ));
    }
    out(io, &lines.join("\n"))?;
    Ok(0)
}

/// The line a verb adds about its push: pushed, or queued and why.
pub fn verb_line(r: &Report) -> String {
    match &r.problem {
        None => format!("pushed to {}", r.remote),
        Some(p) => format!(
            "applied here; {} change(s) not yet pushed ({p}); `taskhook sync` pushes them",
            r.queued.max(1)
        ),
    }
}

/// After a layout command by hand changed files: with sync on, its op is queued and one
/// bounded push tried. The command's own output is left as it is (cdd's is one JSON object);
/// a push that did not land says so on stderr.
pub fn after_layout_command(cx: &Ctx, words: Option<Vec<String>>, io: &mut Io<'_>) {
    let project = cx.project(None);
    let Some(cfg) = sync::config(cx, &project) else {
        return;
    };
    let changed = cx.store.take_changed();
    match sync::record_command(cx, &project, &words.unwrap_or_default(), &changed) {
        Err(e) => {
            super::err(
                io,
                &format!(
                    "taskhook: sync: the change was made here but not queued for the others: {}",
                    e.one_line()
                ),
            );
            return;
        }
        Ok(0) => return,
        Ok(_) => {}
    }
    let run = run_command;
    let result = sync::run(
        cx,
        &project,
        &cfg,
        sync::Options {
            deadline: deadline(&cfg, 1),
            claim: None,
            heartbeats: true,
            run: &run,
        },
    );
    match result {
        Ok(r) if r.problem.is_none() => {}
        Ok(r) => super::err(io, &format!("taskhook: sync: {}", verb_line(&r))),
        Err(e) => super::err(
            io,
            &format!("taskhook: sync: applied here, not pushed: {}", e.one_line()),
        ),
    }
}
