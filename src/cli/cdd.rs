//! `taskhook cdd …`: the cdd format's ten commands. Each prints exactly one JSON object on
//! stdout, `{"success":true,"data":{…}}` (exit 0) or `{"success":false,"error":"…","code":"…"}`
//! (exit 1), even for a wrong command line (code `USAGE`, exit 2, clap's message also on
//! stderr): the orchestrator parses it. `--human` prints text for people instead (errors on
//! stderr).

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::cdd::error::{CResult, Code};
use crate::layouts::cdd::outcome::{Escalated, Next, Outcome, TaskLine};
use crate::layouts::cdd::{commands, locate, report, Paths};
use crate::shell::quote;

use super::Io;

/// The cdd verbs, parsed by clap like every other command (help per verb, suggestions for a
/// mistyped one); a usage error still prints the one JSON object the orchestrator parses (see
/// [`usage_failure`]).
#[derive(Debug, clap::Args)]
#[command(
    subcommand_required = true,
    arg_required_else_help = true,
    after_help = "The workspace is $CDD_DIR (relative: to the project folder), else \"cdd_dir\" in \
                  .claude/taskhook.json. Every verb prints one JSON object on stdout: \
                  {\"success\":true,\"data\":{...}} (exit 0) or \
                  {\"success\":false,\"error\":...,\"code\":...} (exit 1; exit 2 with code USAGE for \
                  a wrong command line, whose message also goes to stderr). --human prints text \
                  instead."
)]
pub struct Args {
    /// Print text for people instead of one JSON object (errors on stderr).
    #[arg(long, global = true)]
    pub human: bool,
    /// Accepted for uniformity: the output is JSON unless --human.
    #[arg(long, global = true, hide = true)]
    pub json: bool,
    #[command(subcommand)]
    pub verb: Verb,
}

/// Seed 004's ten commands.
#[derive(Debug, clap::Subcommand)]
pub enum Verb {
    /// The status folders, tmp/ and an empty history.jsonl (idempotent).
    Init,
    /// order.json (PATH: a file, or a folder holding order.json; default the workspace's own)
    /// into tasks/order.json; new task files move into pending/.
    Import { path: Option<String> },
    /// The task in progress, else the next pending task or stop.
    Next,
    /// pending/ -> in_progress/.
    Start { name: String },
    /// in_progress/ -> completed/.
    Done { name: String },
    /// pending/ or in_progress/ -> failed/.
    Fail {
        name: String,
        reason: Option<String>,
    },
    /// One rung up the model/thinking ladder, back to pending/ (past level 4: failed/).
    Escalate { name: String, reason: String },
    /// Pass a stop.
    Continue { stop_id: String },
    /// The tasks (and stops) in order; STATUS: pending, in_progress, completed or failed.
    List { status: Option<String> },
    /// Counts, elapsed time, escalations, stops.
    Stats,
}

fn exec(cx: &Ctx, verb: &Verb) -> CResult<Outcome> {
    let project = cx.project(None);
    let paths: Paths = locate(cx, &project)?;
    Ok(match verb {
        Verb::Init => Outcome::Init(commands::init(cx, &paths)?),
        Verb::Import { path } => {
            let source = path.as_ref().map(|p| cx.absolute(std::path::Path::new(p)));
            // A folder the person named on the command line is theirs to move files from.
            if let Some(src) = &source {
                let folder = if cx.store.is_dir(src) {
                    src.as_path()
                } else {
                    src.parent().unwrap_or(src)
                };
                cx.store.trust(folder, true);
            }
            Outcome::Import(commands::import(cx, &paths, source.as_deref())?)
        }
        Verb::Next => Outcome::Next(commands::next(cx, &paths)?),
        Verb::Start { name } => Outcome::Start(commands::start(cx, &paths, name)?),
        Verb::Done { name } => Outcome::Moved(commands::done(cx, &paths, name)?),
        Verb::Fail { name, reason } => {
            Outcome::Moved(commands::fail(cx, &paths, name, reason.as_deref())?)
        }
        Verb::Escalate { name, reason } => {
            Outcome::Escalated(commands::escalate(cx, &paths, name, reason)?)
        }
        Verb::Continue { stop_id } => {
            Outcome::Continue(commands::continue_stop(cx, &paths, &project.root, stop_id)?)
        }
        Verb::List { status } => Outcome::List(report::list(cx, &paths, status.as_deref())?),
        Verb::Stats => Outcome::Stats(report::stats(cx, &paths)?),
    })
}

/// The exit status of a failure: 2 for a wrong command line, else 1.
fn exit_of(code: Code) -> u8 {
    if code == Code::Usage {
        super::EXIT_USAGE
    } else {
        1
    }
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    match (exec(cx, &args.verb), args.human) {
        (Ok(data), false) => {
            super::out_json(io, &json!({"success": true, "data": data}))?;
            Ok(0)
        }
        (Err(f), false) => {
            super::out_json(
                io,
                &json!({"success": false, "error": f.message, "code": f.code.as_str()}),
            )?;
            Ok(exit_of(f.code))
        }
        (Ok(data), true) => {
            for w in data.warnings() {
                let _ = std::io::Write::write_all(
                    io.stderr,
                    format!("taskhook: warning: {w}\n").as_bytes(),
                );
            }
            let text = human_text(&data, super::paint::Paint::of(io));
            super::out(io, &text)?;
            Ok(0)
        }
        (Err(f), true) => {
            super::err(
                io,
                &format!("taskhook: {} [{}]", f.message, f.code.as_str()),
            );
            Ok(exit_of(f.code))
        }
    }
}

/// A command line clap refused under `taskhook cdd`: the one JSON object the orchestrator
/// parses (code `USAGE`, clap's message in one line) unless `--human` was given. clap's full
/// message goes to stderr either way (the caller prints it).
pub fn usage_failure(line: &str) -> Value {
    json!({"success": false, "error": line, "code": Code::Usage.as_str()})
}

fn names(list: &[impl AsRef<std::ffi::OsStr>]) -> String {
    if list.is_empty() {
        "none".into()
    } else {
        list.iter()
            .map(|n| n.as_ref().to_string_lossy())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An optional field as printed: `-` when it is absent.
fn or_dash(v: &Option<impl std::fmt::Display>) -> String {
    v.as_ref().map_or("-".into(), |v| v.to_string())
}

/// A whole or fractional number of seconds as written in the JSON.
fn num(v: &Value) -> String {
    v.to_string()
}

/// What `--human` prints for a successful command.
fn human_text(d: &Outcome, paint: super::paint::Paint) -> String {
    let task_line = |t: &TaskLine| {
        format!(
            "{} [{}] group {}, model {}, thinking {}",
            t.task,
            paint.status(&t.status, &t.status),
            or_dash(&t.group),
            or_dash(&t.model),
            or_dash(&t.thinking)
        )
    };
    match d {
        Outcome::Next(n) => match &n.body {
            Next::Task(t) => format!("Next task: {}", task_line(t)),
            Next::Stop { stop, message } => format!(
                "Stop {stop}: {}\nPass it with: taskhook cdd continue {}",
                or_dash(message),
                quote(stop)
            ),
            Next::Done => "Nothing left: every task is finished.".into(),
        },
        Outcome::Start(m) => format!("{}: {} -> {}", m.body.task.task, m.body.from, m.body.to),
        Outcome::Moved(m) => {
            let m = &m.body;
            let secs = m
                .elapsed_seconds
                .map(|x| format!(" ({x} s)"))
                .unwrap_or_default();
            format!("{}: {} -> {}{secs}", m.task, m.from, m.to)
        }
        Outcome::Escalated(e) => match &e.body {
            Escalated::Failed(m) => format!(
                "{}: past escalation level 4; moved to failed/ ({})",
                m.task,
                m.reason.clone().flatten().unwrap_or_else(|| "-".into())
            ),
            Escalated::Up {
                task,
                level,
                to_model,
                to_thinking,
                ..
            } => format!(
                "{task}: escalated to level {level} ({to_model}/{to_thinking}); back in pending/"
            ),
        },
        Outcome::Continue(c) => format!(
            "Stop {}: {}{}",
            c.body.stop,
            if c.body.already_passed == Some(true) {
                "already passed"
            } else {
                "passed"
            },
            if c.body.halt_lifted {
                "; the orchestrator's halt is lifted"
            } else {
                ""
            }
        ),
        Outcome::Init(i) => format!(
            "Workspace {} ready; created: {}",
            i.tasks.display(),
            names(&i.created)
        ),
        Outcome::Import(i) => format!(
            "Imported: {}. Already imported: {}. Order: {} task(s), {} stop(s).",
            names(&i.body.imported),
            names(&i.body.already_imported),
            i.body.tasks,
            i.body.stops
        ),
        Outcome::List(l) => {
            let mut lines: Vec<String> = l.body.tasks.iter().map(task_line).collect();
            for st in l.body.stops.iter().flatten() {
                lines.push(format!(
                    "stop {} [{}] {}",
                    st.stop,
                    paint.status(&st.status, &st.status),
                    or_dash(&st.message)
                ));
            }
            if lines.is_empty() {
                "No tasks.".into()
            } else {
                lines.join("\n")
            }
        }
        Outcome::Stats(st) => {
            let d = &st.body;
            let counts: Vec<String> = d.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let e = &d.escalations;
            let levels: Vec<String> = e
                .by_level
                .iter()
                .map(|(k, v)| format!("level {k}: {v}"))
                .collect();
            format!(
                "Tasks: {} ({})\nElapsed: {} s in all ({} s completed, {} s failed)\nEscalations: {} ({}; {} failed at the top)\nStops: passed {}; waiting {}; ahead {}",
                d.tasks,
                counts.join(", "),
                num(&d.elapsed_seconds.total),
                num(&d.elapsed_seconds.completed),
                num(&d.elapsed_seconds.failed),
                e.total,
                levels.join(", "),
                e.failed_at_max_level,
                names(&d.stops.passed),
                names(&d.stops.waiting),
                names(&d.stops.ahead)
            )
        }
    }
}
