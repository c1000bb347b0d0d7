//! `taskhook projects …`: seed 000's projects by hand: new, add, start, set, next, log,
//! velocity. Human output by default, one JSON object with `--json`.

use serde_json::json;

use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::projects::commands::{self, NewProject, NewTask};
use crate::layouts::projects::lifecycle::fmt_num;
use crate::layouts::projects::model::{name, Task};
use crate::layouts::projects::steps::Acted;
use crate::layouts::projects::velocity::velocity_line;

use super::paint::Paint;
use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Create .claude/projects/ID/ (project.json, tasks.json, progress/log.md, velocity.json).
    New {
        id: String,
        /// The project's name (default: the id).
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        description: Option<String>,
        /// The first phase.
        #[arg(long)]
        phase: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Add a task; with --parent, decompose that task (it becomes IN_PROGRESS).
    Add {
        id: String,
        task: String,
        #[arg(long)]
        title: String,
        /// Estimate in minutes.
        #[arg(long, value_name = "MIN", allow_negative_numbers = true)]
        estimate: Option<f64>,
        /// critical, high, medium, low, or a number (smaller first).
        #[arg(long)]
        priority: Option<String>,
        #[arg(long, value_name = "TASK")]
        parent: Option<String>,
        /// Tasks that must be COMPLETE first, comma-separated.
        #[arg(long, value_name = "A,B", value_delimiter = ',')]
        depends: Vec<String>,
        #[arg(long)]
        phase: Option<String>,
        /// epic, story, task, subtask or micro-task (default: one below the parent's).
        #[arg(long)]
        level: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Start a task (IN_PROGRESS, TASK_STARTED), as a bound subagent's launch does.
    Start {
        id: String,
        task: String,
        #[arg(long)]
        json: bool,
    },
    /// Set a task's status by hand (COMPLETE completes parents and phases as a signal does).
    Set {
        id: String,
        task: String,
        /// PENDING, IN_RESEARCH, RESEARCHED, IN_PROGRESS, VALIDATING, COMPLETE, BLOCKED, CANCELLED.
        status: String,
        /// Why (kept as blocked_reason for BLOCKED).
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The next ready task: a leaf whose dependencies are COMPLETE, by priority, then creation order.
    Next {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Append a log entry: SYNC_TO_{PLATFORM} (--detail = the external id), ERROR, LOOP_ITERATION.
    Log {
        id: String,
        event: String,
        #[arg(long)]
        task: Option<String>,
        #[arg(long)]
        detail: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Velocity recomputed from progress/log.md.
    Velocity {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

fn task_line(t: &Task, paint: Paint) -> String {
    let status = t.status.as_str();
    let mut s = format!("{}  {}", t.id, paint.status(status, status));
    if let Some(title) = &t.title {
        s.push_str(&format!("  {title}"));
    }
    if let Some(p) = &t.priority {
        s.push_str(&format!("  priority {p}"));
    }
    if let Some(e) = t.estimate() {
        s.push_str(&format!("  estimate {} min", fmt_num(e)));
    }
    s
}

fn acted(io: &mut Io<'_>, task: &str, a: &Acted, json: bool) -> Result<u8> {
    let o = &a.outcome;
    if json {
        super::out_json(
            io,
            &json!({
                "task": a.task,
                "previous_status": name(o.from),
                "status": name(o.to),
                "completed": o.completed,
                "phases_completed": o.phases,
                "ready_now": o.ready_now,
                "checkpoint": a.committed.checkpoint,
                "restored": a.committed.restored,
                "settled": a.committed.settled,
            }),
        )?;
        return Ok(0);
    }
    let paint = Paint::of(io);
    let (from, to) = (name(o.from), name(o.to));
    let (from, to) = (paint.status(from, from), paint.status(to, to));
    let mut line = format!("{task}: {from} → {to}");
    if o.from == o.to {
        line = format!("{task}: already {to}");
    }
    if let Some(m) = o.actual_minutes {
        line.push_str(&format!(" (actual {m} min)"));
    }
    super::out(io, &line)?;
    for id in o.completed.iter().skip(1) {
        super::out(io, &format!("{id}: COMPLETE (all its subtasks are)"))?;
    }
    for ph in &o.phases {
        super::out(io, &format!("phase {ph} complete"))?;
    }
    if !o.ready_now.is_empty() {
        super::out(io, &format!("ready now: {}", o.ready_now.join(", ")))?;
    }
    let notes = &a.committed;
    for note in notes
        .settled
        .iter()
        .chain(&notes.restored)
        .chain(&notes.checkpoint)
    {
        super::out(io, note)?;
    }
    Ok(0)
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    match args.command {
        Cmd::New {
            id,
            name,
            description,
            phase,
            json,
        } => {
            let n = NewProject {
                id,
                name,
                description,
                phase,
            };
            let (root, record) = commands::create(cx, &project, &n)?;
            if json {
                super::out_json(io, &json!({"path": root, "project": record}))?;
            } else {
                super::out(io, &format!("Created {}.", root.display()))?;
            }
            Ok(0)
        }
        Cmd::Add {
            id,
            task,
            title,
            estimate,
            priority,
            parent,
            depends,
            phase,
            level,
            json,
        } => {
            let n = NewTask {
                id: task,
                title,
                estimate,
                priority,
                parent,
                depends: depends
                    .into_iter()
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty())
                    .collect(),
                phase,
                level,
            };
            let t = commands::add(cx, &project, &id, &n)?;
            if json {
                super::out_json(io, &json!({"task": t}))?;
            } else {
                let under = n
                    .parent
                    .as_ref()
                    .map(|p| format!(" under {p} (now IN_PROGRESS)"))
                    .unwrap_or_default();
                super::out(
                    io,
                    &format!("Added {}{under}.", task_line(&t, Paint::of(io))),
                )?;
            }
            Ok(0)
        }
        Cmd::Start { id, task, json } => {
            let a = commands::start(cx, &project, &id, &task)?;
            acted(io, &task, &a, json)
        }
        Cmd::Set {
            id,
            task,
            status,
            reason,
            json,
        } => {
            let a = commands::set(cx, &project, &id, &task, &status, reason.as_deref())?;
            acted(io, &task, &a, json)
        }
        Cmd::Next { id, json } => {
            let n = commands::next(cx, &project, &id)?;
            if json {
                super::out_json(io, &json!({"task": n.task, "ready": n.ready}))?;
                return Ok(0);
            }
            match &n.task {
                Some(t) => {
                    super::out(io, &task_line(t, Paint::of(io)))?;
                    if n.ready.len() > 1 {
                        super::out(io, &format!("also ready: {}", n.ready[1..].join(", ")))?;
                    }
                }
                None if n.hint.is_empty() => super::out(io, "No task is ready.")?,
                None => super::out(io, &n.hint)?,
            }
            Ok(0)
        }
        Cmd::Log {
            id,
            event,
            task,
            detail,
            json,
        } => {
            let e = commands::append_entry(
                cx,
                &project,
                &id,
                &event,
                task.as_deref(),
                detail.as_deref(),
            )?;
            if json {
                super::out_json(io, &json!({"entry": e.render()}))?;
            } else {
                super::out(io, e.render().trim_end())?;
            }
            Ok(0)
        }
        Cmd::Velocity { id, json } => {
            let v = commands::velocity(cx, &project, &id)?;
            if json {
                super::out_json(io, &v)?;
            } else {
                let line = velocity_line(&v).unwrap_or_else(|| "no task completed yet".into());
                super::out(io, &format!("{id}: {line}"))?;
            }
            Ok(0)
        }
    }
}
