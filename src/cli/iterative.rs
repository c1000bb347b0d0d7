//! `taskhook iterative …`: iterative loops (seed 003's store) by hand: new, status, signal,
//! guardrail, archive.

use serde_json::json;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::iterative::commands::{self, Guardrail, NewSlug};
use crate::layouts::iterative::{kind_from_str, state, LAYOUT};
use crate::layouts::Layout;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Create .claude/iterative/SLUG/ with state.json, progress.md, guardrails.md and a plan.
    New {
        slug: String,
        /// development (tasks, tasks.md) or knowledge (phases, plan.md).
        #[arg(long, default_value = "development", value_parser = ["development", "knowledge"])]
        mode: String,
        /// A unit id (T1, R1, …); repeat for several, in order.
        #[arg(long = "task", value_name = "ID")]
        tasks: Vec<String>,
        /// Each unit's max_iterations.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
        max_iterations: u64,
        /// The task's name (state.json `task`; default: the slug).
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one slug, or all of them.
    Status {
        slug: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Apply a signal by hand: the same transition a subagent's signal causes.
    Signal {
        slug: String,
        unit: String,
        /// DONE, FAILED or BLOCKED.
        kind: String,
        reason: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Append a lesson (when, problem, solution) to guardrails.md, which every pass reads.
    Guardrail {
        slug: String,
        #[arg(long)]
        when: String,
        #[arg(long)]
        problem: String,
        #[arg(long)]
        solution: String,
        /// The pattern's name (default: the problem's first words).
        #[arg(long)]
        name: Option<String>,
        /// Where it was learned (default: the current unit and iteration).
        #[arg(long)]
        learned: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Mark the slug complete and move it to .claude/iterative/archive/SLUG-YYYYMMDD.
    Archive {
        slug: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    match args.command {
        Cmd::New {
            slug,
            mode,
            tasks,
            max_iterations,
            name,
            json,
        } => {
            let n = NewSlug {
                slug,
                knowledge: mode == "knowledge",
                units: tasks,
                max_iterations,
                name,
            };
            let (root, state) = commands::create(cx, &project, &n)?;
            if json {
                super::out_json(io, &json!({"path": root, "state": state}))?;
            } else {
                super::out(
                    io,
                    &format!("Created {} ({} unit(s)).", root.display(), n.units.len()),
                )?;
            }
            Ok(0)
        }
        Cmd::Status { slug, json } => {
            let stores = match slug {
                Some(s) => vec![commands::store_ref(cx, &project, &s)?],
                None => LAYOUT.discover(cx, &project)?,
            };
            let mut all = Vec::new();
            for s in &stores {
                let l = state::load(cx, s, false)?;
                let ready = state::ready_units(&l.state, &l.plan);
                all.push(json!({"slug": s.id, "path": s.root, "state": l.state, "ready": ready, "notes": l.notes}));
                if json {
                    continue;
                }
                super::out(
                    io,
                    &format!(
                        "{}  phase {}  {}",
                        s.id,
                        l.state["phase"].as_str().unwrap_or("?"),
                        s.root.display()
                    ),
                )?;
                if let Some(units) = l.state[state::units_key(&l.state)].as_object() {
                    for (id, u) in units {
                        let reason = u["reason"]
                            .as_str()
                            .map(|r| format!("  ({r})"))
                            .unwrap_or_default();
                        super::out(
                            io,
                            &format!(
                                "  {id:<8} {:<12} iterations {}/{}{reason}",
                                u["status"].as_str().unwrap_or("?"),
                                u["iterations_used"].as_u64().unwrap_or(0),
                                u["max_iterations"].as_u64().unwrap_or(0),
                            ),
                        )?;
                    }
                }
                if !ready.is_empty() {
                    super::out(io, &format!("  ready: {}", ready.join(", ")))?;
                }
            }
            if json {
                super::out_json(io, &json!({"stores": all}))?;
            } else if stores.is_empty() {
                super::out(io, "No iterative stores.")?;
            }
            Ok(0)
        }
        Cmd::Signal {
            slug,
            unit,
            kind,
            reason,
            json,
        } => {
            let kind = kind_from_str(&kind).ok_or_else(|| {
                Error::Usage(format!(
                    "signal kind must be DONE, FAILED or BLOCKED, got {kind:?}"
                ))
            })?;
            let (unit_state, step) = commands::signal(cx, &project, &slug, &unit, kind, reason)?;
            if json {
                super::out_json(
                    io,
                    &json!({"unit": unit, "state": unit_state, "instruction": step.instruction, "messages": step.tell_main}),
                )?;
            } else {
                super::out(
                    io,
                    &format!("{unit}: {}", unit_state["status"].as_str().unwrap_or("?")),
                )?;
                for line in step.instruction.iter().chain(&step.tell_main) {
                    super::out(io, line)?;
                }
            }
            Ok(0)
        }
        Cmd::Guardrail {
            slug,
            when,
            problem,
            solution,
            name,
            learned,
            json,
        } => {
            let g = Guardrail {
                when,
                problem,
                solution,
                name,
                learned,
            };
            let (name, path) = commands::add_guardrail(cx, &project, &slug, g)?;
            if json {
                super::out_json(io, &json!({"path": path, "name": name}))?;
            } else {
                super::out(
                    io,
                    &format!("Added guardrail \"{name}\" to {}.", path.display()),
                )?;
            }
            Ok(0)
        }
        Cmd::Archive { slug, json } => {
            let target = commands::archive(cx, &project, &slug)?;
            if json {
                super::out_json(io, &json!({"slug": slug, "path": target}))?;
            } else {
                super::out(io, &format!("Archived {slug} to {}.", target.display()))?;
            }
            Ok(0)
        }
    }
}
