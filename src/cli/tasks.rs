//! `taskhook tasks write|read`: seed 002's TodoWrite and TodoRead on the project's
//! `claude-tasks` list, with the seed's parameters and return shapes (JSON on stdout).

use std::io::Read;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::claude_tasks::{self, ReadParams, WriteParams};

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: TasksCommand,
}

/// The task-list commands.
#[derive(Debug, clap::Subcommand)]
pub enum TasksCommand {
    /// Create or update one task (like Claude Code's TodoWrite): parameters as flags, or
    /// without flags as a JSON object on stdin. Prints the task as JSON.
    Write(WriteArgs),
    /// List tasks (like Claude Code's TodoRead) as {tasks, count, pending_count,
    /// in_progress_count, completed_count, blocked_count}.
    Read(ReadArgs),
}

#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    /// Task id (a new UUID v4 when omitted).
    #[arg(long)]
    pub id: Option<String>,
    /// Task description (markdown); required to create a task.
    #[arg(long)]
    pub description: Option<String>,
    /// pending, in_progress, completed or blocked (a new task defaults to pending).
    #[arg(long)]
    pub status: Option<String>,
    /// Id of a task that must complete first; repeat for several. Replaces the list.
    #[arg(long = "dependency", value_name = "ID")]
    pub dependencies: Vec<String>,
    /// Agent or user the task is assigned to.
    #[arg(long)]
    pub assignee: Option<String>,
    /// JSON object merged into the task's metadata (a null value deletes the key).
    #[arg(long, value_name = "JSON")]
    pub metadata: Option<String>,
    /// Accepted for uniformity: the output is always JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// Only tasks with this status.
    #[arg(long)]
    pub status: Option<String>,
    /// Only tasks assigned to this agent or user.
    #[arg(long)]
    pub assignee: Option<String>,
    /// Include completed tasks (left out by default).
    #[arg(long)]
    pub include_completed: bool,
    /// Accepted for uniformity: the output is always JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    match args.command {
        TasksCommand::Write(a) => {
            let params = write_params(a, io)?;
            let store = claude_tasks::store_for(cx, &project)?;
            let applied = claude_tasks::write_task(cx, &store, &params)?;
            super::out_json(io, &applied.value)?;
            if !applied.reblocked.is_empty() {
                super::err(
                    io,
                    &format!(
                        "taskhook: blocked again (a dependency is no longer completed): {}",
                        applied.reblocked.join(", ")
                    ),
                );
            }
            if !applied.unblocked.is_empty() {
                super::err(
                    io,
                    &format!(
                        "taskhook: now ready (all dependencies completed): {}",
                        applied.unblocked.join(", ")
                    ),
                );
            }
        }
        TasksCommand::Read(a) => {
            let store = claude_tasks::store_for(cx, &project)?;
            let params = ReadParams {
                status: a.status,
                assignee: a.assignee,
                include_completed: a.include_completed,
            };
            super::out_json(io, &claude_tasks::read_tasks(cx, &store, &params)?)?;
        }
    }
    Ok(0)
}

/// The parameters from flags, or, when no parameter flag is given, from a JSON object on stdin.
fn write_params(a: WriteArgs, io: &mut Io<'_>) -> Result<WriteParams> {
    let flagged = a.id.is_some()
        || a.description.is_some()
        || a.status.is_some()
        || !a.dependencies.is_empty()
        || a.assignee.is_some()
        || a.metadata.is_some();
    if flagged {
        let metadata = match &a.metadata {
            None => None,
            Some(raw) => match serde_json::from_str::<Value>(raw) {
                Ok(Value::Object(m)) => Some(m),
                Ok(_) => return Err(Error::BadInput("--metadata must be a JSON object".into())),
                Err(e) => {
                    return Err(Error::BadInput(format!(
                        "--metadata is not valid JSON: {e}"
                    )))
                }
            },
        };
        return Ok(WriteParams {
            id: a.id,
            description: a.description,
            status: a.status,
            dependencies: (!a.dependencies.is_empty()).then_some(a.dependencies),
            assignee: a.assignee.map(Some),
            metadata,
            parent_id: None,
        });
    }
    let mut buf = Vec::new();
    io.stdin
        .take(16 * 1024 * 1024)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", "stdin", e))?;
    if buf.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::BadInput(
            "tasks write needs the task as flags (--description …) or as a JSON object on stdin"
                .into(),
        ));
    }
    let v: Value = serde_json::from_slice(&buf)
        .map_err(|e| Error::BadInput(format!("stdin is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(Error::BadInput(
            "stdin must hold one JSON object with TodoWrite's parameters".into(),
        ));
    }
    serde_json::from_value(v)
        .map_err(|e| Error::BadInput(format!("invalid tasks write parameters: {e}")))
}
