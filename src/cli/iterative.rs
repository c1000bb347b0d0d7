//! `taskhook iterative …`: iterative loops (seed 003's store) by hand: new, status, signal,
//! guardrail, archive, and a person's commands on units: add, set-max, reset, unblock.

use serde_json::json;

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::iterative::commands::{self, Guardrail, NewSlug};
use crate::layouts::iterative::commands::{self as admin, NewUnit};
use crate::layouts::iterative::{kind_from_str, plan, state, LAYOUT};
use crate::layouts::Layout;

use super::paint::Paint;
use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Create .claude/iterative/SLUG/ with state.json, progress.md, guardrails.md, brief.md,
    /// context.md and a plan, from the iterative skill's templates.
    New(NewArgs),
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
    /// Mark the slug complete and move it to .claude/iterative/archive/SLUG-YYYYMMDD (-2, -3
    /// for another archive the same day). Refuses unfinished work unless --force.
    Archive {
        slug: String,
        /// Archive even though some units are not done.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add a unit to state.json and tasks.md / plan.md.
    Add {
        slug: String,
        unit: String,
        /// Its title in tasks.md / plan.md (default: the id).
        #[arg(long)]
        title: Option<String>,
        /// Its measurable criteria.
        #[arg(long)]
        criteria: Option<String>,
        /// A unit it depends on; repeat for several.
        #[arg(long = "depends", value_name = "ID")]
        depends: Vec<String>,
        /// Its max_iterations (default 5).
        #[arg(long)]
        max_iterations: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Set a unit's max_iterations; a timed-out unit given more goes back to work.
    SetMax {
        slug: String,
        unit: String,
        max_iterations: u64,
        #[arg(long)]
        json: bool,
    },
    /// Start a unit over: pending, counters at zero, budget kept.
    Reset {
        slug: String,
        unit: String,
        #[arg(long)]
        json: bool,
    },
    /// Send a blocked unit (the 3-failed-confirmations cap, or a subagent's BLOCKED) back to
    /// work.
    Unblock {
        slug: String,
        unit: String,
        #[arg(long)]
        json: bool,
    },
}

/// `iterative new`'s arguments.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    slug: String,
    /// development (tasks, tasks.md) or knowledge (phases, plan.md).
    #[arg(long, default_value = "development", value_parser = ["development", "knowledge"])]
    mode: String,
    /// A unit id (T1, R1, …); repeat for several, in order.
    #[arg(long = "task", value_name = "ID")]
    tasks: Vec<String>,
    /// Each unit's max_iterations: its work iterations (confirmation and verification
    /// passes are not charged); at least 1.
    #[arg(long, default_value_t = 5)]
    max_iterations: u64,
    /// The task's name (state.json `task`, brief.md's title; default: the slug).
    #[arg(long)]
    name: Option<String>,
    /// What the user wants to achieve (brief.md "Outcome Needed", context.md "Goal").
    #[arg(long)]
    goal: Option<String>,
    /// A "Done When" criterion for brief.md; repeat for several.
    #[arg(long = "done-when", value_name = "CRITERION")]
    done_when: Vec<String>,
    /// A constraint for brief.md; repeat for several.
    #[arg(long = "constraint")]
    constraints: Vec<String>,
    /// The approach (brief.md "Approach / Notes", context.md "Approach").
    #[arg(long)]
    approach: Option<String>,
    /// feature, bug, refactor (development); research, writing, analysis, planning
    /// (knowledge, default research). Sets state.json `domain`.
    #[arg(long)]
    domain: Option<String>,
    /// Start guardrails.md with the guardrails of past work: the newest
    /// archive/SLUG-YYYYMMDD (or a live slug of that name).
    #[arg(long, value_name = "SLUG")]
    guardrails_from: Option<String>,
    #[arg(long)]
    json: bool,
}

impl NewArgs {
    fn into_new(self) -> NewSlug {
        NewSlug {
            knowledge: self.mode == "knowledge",
            units: self.tasks,
            max_iterations: self.max_iterations,
            name: self.name,
            goal: self.goal,
            done_when: self.done_when,
            constraints: self.constraints,
            approach: self.approach,
            domain: self.domain,
            guardrails_from: self.guardrails_from,
            slug: self.slug,
        }
    }
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let project = cx.project(None);
    match args.command {
        Cmd::New(a) => {
            let json = a.json;
            let n = a.into_new();
            let (root, state, carried) = commands::create(cx, &project, &n)?;
            if json {
                super::out_json(
                    io,
                    &json!({"path": root, "state": state, "guardrails_carried": carried}),
                )?;
            } else {
                let mut line = format!("Created {} ({} unit(s))", root.display(), n.units.len());
                if let Some(from) = &n.guardrails_from {
                    line.push_str(&format!("; carried {carried} guardrail(s) from {from}"));
                }
                super::out(io, &format!("{line}."))?;
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
                let ready = plan::ready_units(&l.state, &l.plan);
                all.push(json!({"slug": s.id, "path": s.root, "state": l.to_json(), "ready": ready, "notes": l.notes}));
                if json {
                    continue;
                }
                let paint = Paint::of(io);
                super::out(
                    io,
                    &format!(
                        "{}  phase {}  {}",
                        paint.bold(&s.id),
                        l.state.phase.as_str(),
                        paint.dim(&s.root.display().to_string())
                    ),
                )?;
                for (id, u) in l.state.units().iter() {
                    let reason = u
                        .reason
                        .as_ref()
                        .map(|r| format!("  ({r})"))
                        .unwrap_or_default();
                    let status = u.status.as_str();
                    super::out(
                        io,
                        &format!(
                            "  {id:<8} {} iterations {}/{}{reason}",
                            paint.status(status, &format!("{status:<12}")),
                            u.iterations_used.unwrap_or(0),
                            u.max_iterations.unwrap_or(0),
                        ),
                    )?;
                }
                if !ready.is_empty() {
                    super::out(io, &format!("  ready: {}", plan::name_some(&ready)))?;
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
                let status = unit_state.status.as_str();
                super::out(
                    io,
                    &format!("{unit}: {}", Paint::of(io).status(status, status)),
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
        Cmd::Archive { slug, force, json } => {
            let target = commands::archive(cx, &project, &slug, force)?;
            if json {
                super::out_json(io, &json!({"slug": slug, "path": target}))?;
            } else {
                super::out(io, &format!("Archived {slug} to {}.", target.display()))?;
            }
            Ok(0)
        }
        Cmd::Add {
            slug,
            unit,
            title,
            criteria,
            depends,
            max_iterations,
            json,
        } => {
            let u = NewUnit {
                id: unit,
                title,
                criteria,
                depends,
                max_iterations,
            };
            done(io, admin::add(cx, &project, &slug, &u)?, json)
        }
        Cmd::SetMax {
            slug,
            unit,
            max_iterations,
            json,
        } => done(
            io,
            admin::set_max(cx, &project, &slug, &unit, max_iterations)?,
            json,
        ),
        Cmd::Reset { slug, unit, json } => {
            done(io, admin::reset(cx, &project, &slug, &unit)?, json)
        }
        Cmd::Unblock { slug, unit, json } => {
            done(io, admin::unblock(cx, &project, &slug, &unit)?, json)
        }
    }
}

/// Prints what a person's command did.
fn done(io: &mut Io<'_>, d: admin::Done, json: bool) -> Result<u8> {
    if json {
        super::out_json(io, &json!({"state": d.unit, "message": d.message}))?;
    } else {
        super::out(io, &d.message)?;
    }
    Ok(0)
}
