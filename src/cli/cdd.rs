//! `taskhook cdd …`: seed 004's ten commands. Each prints exactly one JSON object on stdout,
//! `{"success":true,"data":{…}}` (exit 0) or `{"success":false,"error":"…","code":"…"}` (exit
//! 1), even for a wrong command line (code `USAGE`): the orchestrator parses it. `--human`
//! prints text for people instead (errors on stderr).

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::cdd::error::{CResult, Code, Failure};
use crate::layouts::cdd::{locate, ops, report, Paths};
use crate::shell::quote;

use super::Io;

const USAGE: &str = "\
usage: taskhook cdd VERB [ARGS] [--human]

  init                      the status folders, tmp/ and an empty history.jsonl (idempotent)
  import [PATH]             order.json (PATH: a file, or a folder holding order.json) into
                            tasks/order.json; new task files move into pending/
  next                      the task in progress, else the next pending task or stop
  start NAME                pending/ -> in_progress/
  done NAME                 in_progress/ -> completed/
  fail NAME [REASON]        pending/ or in_progress/ -> failed/
  escalate NAME REASON      one rung up the model/thinking ladder, back to pending/
                            (past level 4: failed/)
  continue STOP_ID          pass a stop
  list [STATUS]             the tasks (and stops) in order
  stats                     counts, elapsed time, escalations, stops

The workspace is $CDD_DIR, else \"cdd_dir\" in .claude/taskhook.json. Every command prints
one JSON object: {\"success\":true,\"data\":{...}} or {\"success\":false,\"error\":...,\"code\":...}.";

#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// init | import [PATH] | next | start NAME | done NAME | fail NAME [REASON] |
    /// escalate NAME REASON | continue STOP_ID | list [STATUS] | stats; --human for text.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "VERB [ARGS]"
    )]
    pub args: Vec<String>,
}

fn usage(msg: &str) -> Failure {
    Failure::new(Code::Usage, format!("{msg} (see taskhook cdd help)"))
}

/// The words after the verb, checked: `need` required, at most `max`.
fn operands<'a>(
    verb: &str,
    rest: &'a [&'a str],
    need: &[&str],
    max: usize,
) -> CResult<&'a [&'a str]> {
    if rest.len() < need.len() {
        return Err(usage(&format!(
            "`cdd {verb}` needs {}",
            need[rest.len()..].join(" ")
        )));
    }
    if rest.len() > max {
        return Err(usage(&format!(
            "`cdd {verb}` takes at most {max} argument(s), got {}",
            rest.len()
        )));
    }
    Ok(rest)
}

fn exec(cx: &Ctx, words: &[&str]) -> CResult<(String, Value)> {
    let Some((verb, rest)) = words.split_first() else {
        return Err(usage("no verb given"));
    };
    if let Some(flag) = rest.iter().find(|w| w.starts_with("--")) {
        return Err(usage(&format!("unknown option {flag}")));
    }
    let ops: &[&str] = match *verb {
        "init" | "next" | "stats" => operands(verb, rest, &[], 0)?,
        "import" | "list" => operands(verb, rest, &[], 1)?,
        "start" | "done" => operands(verb, rest, &["NAME"], 1)?,
        "fail" => operands(verb, rest, &["NAME"], 2)?,
        "escalate" => operands(verb, rest, &["NAME", "REASON"], 2)?,
        "continue" => operands(verb, rest, &["STOP_ID"], 1)?,
        other => return Err(usage(&format!("unknown verb {other:?}"))),
    };
    let project = cx.project(None);
    let paths: Paths = locate(cx, &project)?;
    let arg = |i: usize| ops.get(i).copied();
    let name = arg(0).unwrap_or_default();
    let data = match *verb {
        "init" => ops::init(cx, &paths)?,
        "import" => {
            let source = arg(0).map(|p| cx.absolute(std::path::Path::new(p)));
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
        "next" => ops::next(cx, &paths)?,
        "start" => ops::start(cx, &paths, name)?,
        "done" => ops::done(cx, &paths, name)?,
        "fail" => ops::fail(cx, &paths, name, arg(1))?,
        "escalate" => ops::escalate(cx, &paths, name, arg(1).unwrap_or_default())?,
        "continue" => ops::continue_stop(cx, &paths, &project.root, name)?,
        "list" => report::list(cx, &paths, arg(0))?,
        _ => report::stats(cx, &paths)?,
    };
    Ok((verb.to_string(), data))
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let human = args.args.iter().any(|a| a == "--human");
    let words: Vec<&str> = args
        .args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--human" && *a != "--json")
        .collect();
    if matches!(words.first(), Some(&("help" | "--help" | "-h"))) {
        super::out(io, USAGE)?;
        return Ok(0);
    }
    match (exec(cx, &words), human) {
        (Ok((_, data)), false) => {
            super::out_json(io, &json!({"success": true, "data": data}))?;
            Ok(0)
        }
        (Err(f), false) => {
            super::out_json(
                io,
                &json!({"success": false, "error": f.message, "code": f.code.as_str()}),
            )?;
            Ok(1)
        }
        (Ok((verb, data)), true) => {
            for w in data["warnings"].as_array().into_iter().flatten() {
                let _ = std::io::Write::write_all(
                    io.stderr,
                    format!("taskhook: warning: {}\n", s(w)).as_bytes(),
                );
            }
            super::out(io, &human_text(&verb, &data))?;
            Ok(0)
        }
        (Err(f), true) => {
            super::err(
                io,
                &format!("taskhook: {} [{}]", f.message, f.code.as_str()),
            );
            Ok(1)
        }
    }
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
fn human_text(verb: &str, d: &Value) -> String {
    let task_line = |t: &Value| {
        format!(
            "{} [{}] group {}, model {}, thinking {}",
            s(&t["task"]),
            s(&t["status"]),
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
                lines.push(format!(
                    "stop {} [{}] {}",
                    s(&st["stop"]),
                    s(&st["status"]),
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
