//! `taskhook cdd …`: the cdd format's ten commands. Each prints exactly one JSON object on
//! stdout, `{"success":true,"data":{…}}` (exit 0) or `{"success":false,"error":"…","code":"…"}`
//! (exit 1), even for a wrong command line (code `USAGE`, exit 2, clap's message also on
//! stderr): the orchestrator parses it. `--human` prints text for people instead (errors on
//! stderr).

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::cdd::error::{CResult, Code};
use crate::layouts::cdd::{locate, ops, report, Paths};
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

impl Verb {
    fn name(&self) -> &'static str {
        match self {
            Verb::Init => "init",
            Verb::Import { .. } => "import",
            Verb::Next => "next",
            Verb::Start { .. } => "start",
            Verb::Done { .. } => "done",
            Verb::Fail { .. } => "fail",
            Verb::Escalate { .. } => "escalate",
            Verb::Continue { .. } => "continue",
            Verb::List { .. } => "list",
            Verb::Stats => "stats",
        }
    }
}

fn exec(cx: &Ctx, verb: &Verb) -> CResult<Value> {
    let project = cx.project(None);
    let paths: Paths = locate(cx, &project)?;
    Ok(match verb {
        Verb::Init => ops::init(cx, &paths)?,
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
            ops::import(cx, &paths, source.as_deref())?
        }
        Verb::Next => ops::next(cx, &paths)?,
        Verb::Start { name } => ops::start(cx, &paths, name)?,
        Verb::Done { name } => ops::done(cx, &paths, name)?,
        Verb::Fail { name, reason } => ops::fail(cx, &paths, name, reason.as_deref())?,
        Verb::Escalate { name, reason } => ops::escalate(cx, &paths, name, reason)?,
        Verb::Continue { stop_id } => ops::continue_stop(cx, &paths, &project.root, stop_id)?,
        Verb::List { status } => report::list(cx, &paths, status.as_deref())?,
        Verb::Stats => report::stats(cx, &paths)?,
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
            for w in data["warnings"].as_array().into_iter().flatten() {
                let _ = std::io::Write::write_all(
                    io.stderr,
                    format!("taskhook: warning: {}\n", s(w)).as_bytes(),
                );
            }
            let text = human_text(args.verb.name(), &data, super::paint::Paint::of(io));
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

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn names(v: &Value) -> String {
    let list: Vec<String> = v.as_array().into_iter().flatten().map(s).collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// What `--human` prints for a successful command.
fn human_text(verb: &str, d: &Value, paint: super::paint::Paint) -> String {
    let task_line = |t: &Value| {
        let status = s(&t["status"]);
        format!(
            "{} [{}] group {}, model {}, thinking {}",
            s(&t["task"]),
            paint.status(&status, &status),
            s(&t["group"]),
            s(&t["model"]),
            s(&t["thinking"])
        )
    };
    match verb {
        "next" => match d["type"].as_str() {
            Some("task") => format!("Next task: {}", task_line(d)),
            Some("stop") => format!(
                "Stop {}: {}\nPass it with: taskhook cdd continue {}",
                s(&d["stop"]),
                s(&d["message"]),
                quote(&s(&d["stop"]))
            ),
            _ => "Nothing left: every task is finished.".into(),
        },
        "start" | "done" | "fail" => {
            let secs = d["elapsed_seconds"]
                .as_i64()
                .map(|x| format!(" ({x} s)"))
                .unwrap_or_default();
            format!(
                "{}: {} -> {}{secs}",
                s(&d["task"]),
                s(&d["from"]),
                s(&d["to"])
            )
        }
        "escalate" if d["to"] == "failed" => format!(
            "{}: past escalation level 4; moved to failed/ ({})",
            s(&d["task"]),
            s(&d["reason"])
        ),
        "escalate" => format!(
            "{}: escalated to level {} ({}/{}); back in pending/",
            s(&d["task"]),
            s(&d["level"]),
            s(&d["to_model"]),
            s(&d["to_thinking"])
        ),
        "continue" => format!(
            "Stop {}: {}{}",
            s(&d["stop"]),
            if d["already_passed"] == true {
                "already passed"
            } else {
                "passed"
            },
            if d["halt_lifted"] == true {
                "; the orchestrator's halt is lifted"
            } else {
                ""
            }
        ),
        "init" => format!(
            "Workspace {} ready; created: {}",
            s(&d["tasks"]),
            names(&d["created"])
        ),
        "import" => format!(
            "Imported: {}. Already imported: {}. Order: {} task(s), {} stop(s).",
            names(&d["imported"]),
            names(&d["already_imported"]),
            s(&d["tasks"]),
            s(&d["stops"])
        ),
        "list" => {
            let mut lines: Vec<String> = d["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(task_line)
                .collect();
            for st in d["stops"].as_array().into_iter().flatten() {
                let status = s(&st["status"]);
                lines.push(format!(
                    "stop {} [{}] {}",
                    s(&st["stop"]),
                    paint.status(&status, &status),
                    s(&st["message"])
                ));
            }
            if lines.is_empty() {
                "No tasks.".into()
            } else {
                lines.join("\n")
            }
        }
        _ => {
            let counts: Vec<String> = d["counts"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let e = &d["escalations"];
            let levels: Vec<String> = e["by_level"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("level {k}: {v}"))
                .collect();
            format!(
                "Tasks: {} ({})\nElapsed: {} s in all ({} s completed, {} s failed)\nEscalations: {} ({}; {} failed at the top)\nStops: passed {}; waiting {}; ahead {}",
                s(&d["tasks"]),
                counts.join(", "),
                s(&d["elapsed_seconds"]["total"]),
                s(&d["elapsed_seconds"]["completed"]),
                s(&d["elapsed_seconds"]["failed"]),
                s(&e["total"]),
                levels.join(", "),
                s(&e["failed_at_max_level"]),
                names(&d["stops"]["passed"]),
                names(&d["stops"]["waiting"]),
                names(&d["stops"]["ahead"])
            )
        }
    }
}
