//! `taskhook execute …`: seed 001's runs by hand: init, status, start, done, fail, merged,
//! resume [--dry-run], stop [--reason], reset-task, reset --all, metrics. `--json` everywhere.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::execute::commands::{self, HandEvent};
use crate::layouts::execute::init::{self as new_run, Init};
use crate::layouts::execute::model::{
    Keyed, Layer, LayerStatus, Metrics, QueueEntry, RunStatus, Slot, Task, TaskStatus,
};
use crate::layouts::execute::plan::Plan;
use crate::layouts::execute::{derive, reconcile, state};
use crate::layouts::{Reaction, StoreRef};

use super::paint::Paint;
use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run (its folder's name, e.g. the PRD slug) when the project has several.
    #[arg(long, global = true, value_name = "SLUG")]
    pub store: Option<String>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Cmd,
}

impl Args {
    /// Whether the command writes nothing (`resume --dry-run`).
    pub fn dry_run(&self) -> bool {
        matches!(self.command, Cmd::Resume { dry_run: true })
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Create TASKS_PATH/execute-state.json with every task pending.
    Init {
        tasks_path: PathBuf,
        #[arg(long)]
        prd_slug: Option<String>,
        #[arg(long)]
        project_path: Option<String>,
        #[arg(long)]
        worktree_dir: Option<String>,
        /// A layer and its tasks, in execution order: `--layer 0-setup=L0-001,L0-002`.
        #[arg(long = "layer", value_name = "NAME=ID,ID")]
        layers: Vec<String>,
        /// A JSON plan: {"layers": {"0-setup": ["L0-001"], …}, "prd_slug"?, …}.
        #[arg(long, value_name = "FILE")]
        plan: Option<PathBuf>,
    },
    /// The run: status, layers, tasks, merge queue, metrics and the resume plan.
    Status,
    /// Start a task (what a launch of a subagent bound to it does).
    Start { task: String },
    /// Report a task done (in progress → verifying; verifying → verified and queued).
    Done { task: String },
    /// Report a task's attempt failed.
    Fail {
        task: String,
        #[arg(long)]
        message: String,
        #[arg(long)]
        details: Option<String>,
        /// What the next attempt should do.
        #[arg(long)]
        feedback: Option<String>,
    },
    /// Record that a task's branch was merged (completes it).
    Merged { task: String },
    /// Resume: skip what is done, retry what failed, resume what runs; git recovery, a corrupt state rebuilt from its .bak.
    Resume {
        /// Print the plan and what would change; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Stop the run: launches of its tasks are refused until `taskhook execute resume`.
    Stop {
        /// Why (shown in every refusal).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Back up the state to execute-state.json.bak, then make a task pending with fresh attempts.
    ResetTask { task: String },
    /// Back up the state, then start the whole run over (worktrees and branches are left to git).
    Reset {
        /// Required: reset every task.
        #[arg(long)]
        all: bool,
    },
    /// The run's metrics and layer counters, recounted.
    Metrics,
}

fn print_step(
    io: &mut Io<'_>,
    json: bool,
    id: &str,
    t: &Task,
    step: &Reaction,
    store: &StoreRef,
) -> Result<()> {
    let messages: Vec<&String> = step.instruction.iter().chain(&step.tell_main).collect();
    if json {
        return super::out_json(
            io,
            &json!({"store": store.id, "task": id, "status": t.status, "attempts": t.attempts,
                "state": t, "messages": messages}),
        );
    }
    let status = t.status.map_or("?", TaskStatus::as_str);
    super::out(
        io,
        &format!(
            "{id}: {} (attempt {} of {})",
            Paint::of(io).status(status, status),
            t.attempts(),
            state::MAX_ATTEMPTS
        ),
    )?;
    for m in messages {
        super::out(io, m)?;
    }
    Ok(())
}

/// One task in `taskhook execute status`.
#[derive(Serialize)]
struct TaskRow {
    status: TaskStatus,
    attempts: u64,
    commits: usize,
    layer: Option<String>,
}

/// One run in `taskhook execute status`.
#[derive(Serialize)]
struct RunView {
    store: String,
    path: PathBuf,
    status: Option<RunStatus>,
    current_layer: Slot<String>,
    current_batch: Slot<u64>,
    layers: Option<Keyed<Layer>>,
    tasks: Keyed<TaskRow>,
    merge_queue: Option<crate::layouts::shared::Shared<Vec<QueueEntry>>>,
    metrics: Option<Metrics>,
    plan: Plan,
    plan_lines: Vec<String>,
}

fn status_of(cx: &Ctx, s: &StoreRef) -> Result<RunView> {
    let (_, st) = state::load_shared(cx, s)?;
    let mut d = (*st).clone();
    derive::derive(&st, &mut d, &cx.store.clock().stamp());
    let p = crate::layouts::execute::plan_with_git(cx, s, &d);
    let mut tasks = Keyed::default();
    for (id, t) in d.tasks.iter() {
        let row = TaskRow {
            status: t.status(),
            attempts: t.attempts(),
            commits: t.commits().len(),
            layer: state::layer_of(&d, id),
        };
        tasks.insert(id.to_string(), row);
    }
    Ok(RunView {
        store: s.id.clone(),
        path: state::state_path(&s.root),
        plan_lines: p.lines(),
        plan: p,
        status: d.status,
        current_layer: d.current_layer,
        current_batch: d.current_batch,
        layers: d.layers,
        tasks,
        merge_queue: d.merge_queue,
        metrics: d.metrics,
    })
}

/// A count as the JSON shows it (`null` when missing).
fn num(n: Option<u64>) -> String {
    n.map_or_else(|| "null".to_string(), |n| n.to_string())
}

/// The metrics in one line: `C/T tasks completed, F failed, A attempts, K commits, S s`.
fn metrics_line(m: Option<&Metrics>) -> String {
    let m = m.cloned().unwrap_or_default();
    format!(
        "{}/{} tasks completed, {} failed, {} attempts, {} commits, {} s",
        num(m.completed_tasks),
        num(m.total_tasks),
        num(m.failed_tasks),
        num(m.total_attempts),
        num(m.total_commits),
        m.elapsed_time_seconds
            .map_or_else(|| "null".to_string(), |n| n.to_string())
    )
}

fn print_status(io: &mut Io<'_>, v: &RunView) -> Result<()> {
    super::out(io, &format!("execute  {}  {}", v.store, v.path.display()))?;
    let batch = v
        .current_batch
        .get()
        .map(|b| format!(" · batch {b}"))
        .unwrap_or_default();
    super::out(
        io,
        &format!(
            "  run {} · current layer {}{batch}",
            v.status.map_or("?", RunStatus::as_str),
            v.current_layer.as_deref().unwrap_or("none")
        ),
    )?;
    for (name, l) in v.layers.iter().flat_map(Keyed::iter) {
        super::out(
            io,
            &format!(
                "  layer {name:<16} {:<12} {}/{} completed, {} failed",
                l.status.map_or("?", LayerStatus::as_str),
                num(l.tasks_completed),
                num(l.tasks_total),
                num(l.tasks_failed)
            ),
        )?;
    }
    for (id, t) in v.tasks.iter() {
        super::out(
            io,
            &format!(
                "    {id:<10} {:<12} attempts {} · commits {}",
                t.status.as_str(),
                t.attempts,
                t.commits
            ),
        )?;
    }
    super::out(
        io,
        &format!("  metrics: {}", metrics_line(v.metrics.as_ref())),
    )?;
    for line in &v.plan_lines {
        super::out(io, &format!("  {line}"))?;
    }
    Ok(())
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    let json = args.json;
    let store_flag = args.store.as_deref();
    match args.command {
        Cmd::Init {
            tasks_path,
            prd_slug,
            project_path,
            worktree_dir,
            layers,
            plan,
        } => {
            let mut i = Init {
                tasks_path,
                prd_slug,
                project_path,
                worktree_dir,
                layers: Vec::new(),
            };
            if let Some(p) = plan {
                new_run::read_plan(cx, &cx.absolute(&p), &mut i)?;
            }
            for l in &layers {
                let (name, ids) = l
                    .split_once('=')
                    .ok_or_else(|| Error::Usage(format!("--layer takes NAME=ID,ID (got {l:?})")))?;
                let ids = ids
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                i.layers.push((name.trim().to_string(), ids));
            }
            let (path, s) = new_run::init(cx, &project, &i)?;
            if json {
                super::out_json(io, &json!({"path": path, "state": s}))?;
            } else {
                super::out(
                    io,
                    &format!(
                        "Created {} ({} layer(s), {} task(s)).",
                        path.display(),
                        i.layers.len(),
                        i.layers.iter().map(|(_, ids)| ids.len()).sum::<usize>()
                    ),
                )?;
            }
            Ok(0)
        }
        Cmd::Status => {
            let stores = commands::selected(cx, &project, store_flag)?;
            let mut all = Vec::new();
            for s in &stores {
                match status_of(cx, s) {
                    Ok(v) => {
                        if !json {
                            print_status(io, &v)?;
                        }
                        all.push(json!(v));
                    }
                    Err(e) => {
                        let p = e.one_line();
                        if !json {
                            super::out(io, &format!("execute  {}  problem: {p}", s.id))?;
                        }
                        all.push(json!({"store": s.id, "path": state::state_path(&s.root), "problem": p}));
                    }
                }
            }
            if json {
                super::out_json(io, &json!({"stores": all}))?;
            } else if stores.is_empty() {
                super::out(
                    io,
                    "No execute runs (taskhook execute init TASKS_PATH --layer NAME=ID,ID).",
                )?;
            }
            Ok(0)
        }
        Cmd::Start { task } => hand(cx, &project, store_flag, &task, HandEvent::Start, json, io),
        Cmd::Done { task } => hand(cx, &project, store_flag, &task, HandEvent::Done, json, io),
        Cmd::Fail {
            task,
            message,
            details,
            feedback,
        } => hand(
            cx,
            &project,
            store_flag,
            &task,
            HandEvent::Fail {
                message,
                details,
                feedback,
            },
            json,
            io,
        ),
        Cmd::Merged { task } => {
            let (store, id) = commands::find_task(cx, &project, store_flag, &task)?;
            let (t, lines) = commands::merged(cx, &store, &id)?;
            if json {
                super::out_json(
                    io,
                    &json!({"store": store.id, "task": id, "status": t.status, "state": t, "messages": lines}),
                )?;
            } else {
                for l in &lines {
                    super::out(io, l)?;
                }
            }
            Ok(0)
        }
        Cmd::Resume { dry_run } => {
            let stores = commands::selected(cx, &project, store_flag)?;
            let mut all = Vec::new();
            for s in &stores {
                let Some(r) = reconcile::resume(cx, s, true)? else {
                    continue;
                };
                let p = r.plan();
                if !json {
                    let verb = if dry_run { "would change" } else { "changed" };
                    super::out(
                        io,
                        &format!(
                            "execute {}: resume plan{}",
                            s.id,
                            if dry_run {
                                " (dry run: nothing written)"
                            } else {
                                ""
                            }
                        ),
                    )?;
                    for l in p.lines() {
                        super::out(io, &format!("  {l}"))?;
                    }
                    for c in &r.changes {
                        super::out(io, &format!("  {verb}: {c}"))?;
                    }
                    for l in &r.rebuild_report {
                        super::out(io, &format!("  {l}"))?;
                    }
                    for n in &r.notes {
                        super::out(io, &format!("  note: {n}"))?;
                    }
                    if let Some(g) = &r.git_skipped {
                        super::out(io, &format!("  git recovery skipped: {g}"))?;
                    }
                }
                all.push(
                    json!({"store": s.id, "plan": p, "plan_lines": p.lines(), "changes": r.changes,
                    "notes": r.notes, "rebuilt": r.rebuilt, "rebuild_report": r.rebuild_report,
                    "git_skipped": r.git_skipped}),
                );
            }
            if json {
                super::out_json(io, &json!({"dry_run": dry_run, "stores": all}))?;
            } else if stores.is_empty() {
                super::out(io, "No execute runs.")?;
            }
            Ok(0)
        }
        Cmd::Stop { reason } => {
            let store = commands::pick_store(cx, &project, store_flag)?;
            let done = commands::stop(cx, &store, reason.as_deref())?;
            let (record, line) = match &done {
                commands::Stop::Stopped(r) => (r, format!(
                    "Stopped run {}: launches of its tasks are refused until `taskhook execute resume`{}.",
                    store.id,
                    r.reason.as_deref().map(|w| format!(" (reason: {w})")).unwrap_or_default()
                )),
                commands::Stop::Already(r) => {
                    let since = match (r.at.as_deref(), r.reason.as_deref()) {
                        (Some(at), Some(w)) => format!(" (since {at}: {w})"),
                        (Some(at), None) => format!(" (since {at})"),
                        (None, Some(w)) => format!(" ({w})"),
                        (None, None) => String::new(),
                    };
                    (r, format!("Run {} is already stopped{since}.", store.id))
                }
            };
            if json {
                super::out_json(
                    io,
                    &json!({"store": store.id, "status": "stopped", "stop": record,
                        "already": matches!(done, commands::Stop::Already(_))}),
                )?;
            } else {
                super::out(io, &line)?;
            }
            Ok(0)
        }
        Cmd::ResetTask { task } => {
            let (store, id) = commands::find_task(cx, &project, store_flag, &task)?;
            let (bak, t) = commands::reset_task(cx, &store, &id)?;
            if json {
                super::out_json(
                    io,
                    &json!({"store": store.id, "task": id, "backup": bak, "state": t}),
                )?;
            } else {
                super::out(io, &format!("Backed up to {}; {id} is pending with fresh attempts (its commits, worktree and branch are kept; its earlier run is in `resets`).", bak.display()))?;
            }
            Ok(0)
        }
        Cmd::Reset { all } => {
            if !all {
                return Err(Error::Usage("`taskhook execute reset` resets every task and needs --all (one task: `taskhook execute reset-task ID`)".into()));
            }
            let store = commands::pick_store(cx, &project, store_flag)?;
            let (bak, left) = commands::reset_all(cx, &store)?;
            if json {
                super::out_json(io, &json!({"store": store.id, "backup": bak, "git": left}))?;
            } else {
                super::out(
                    io,
                    &format!(
                        "Backed up to {}; every task of {} is pending again.",
                        bak.display(),
                        store.id
                    ),
                )?;
                for l in &left {
                    super::out(io, &format!("  {l}"))?;
                }
                if !left.is_empty() {
                    super::out(io, "  then `git worktree prune`.")?;
                }
            }
            Ok(0)
        }
        Cmd::Metrics => {
            let stores = commands::selected(cx, &project, store_flag)?;
            let mut all = Vec::new();
            for s in &stores {
                let v = commands::metrics(cx, s)?;
                if !json {
                    super::out(
                        io,
                        &format!("{}: {} elapsed", s.id, metrics_line(Some(&v.metrics))),
                    )?;
                }
                all.push(json!(v));
            }
            if json {
                super::out_json(io, &json!({"stores": all}))?;
            }
            Ok(0)
        }
    }
}

fn hand(
    cx: &Ctx,
    project: &crate::project::Project,
    store_flag: Option<&str>,
    task: &str,
    ev: HandEvent,
    json: bool,
    io: &mut Io<'_>,
) -> Result<u8> {
    let (store, id) = commands::find_task(cx, project, store_flag, task)?;
    let (t, step) = commands::by_hand(cx, &store, &id, ev)?;
    print_step(io, json, &id, &t, &step, &store)?;
    Ok(0)
}
