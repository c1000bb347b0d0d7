//! `taskhook iterative …`: seed 003's store by hand: new, status, signal, guardrail, archive.

use serde_json::{json, Map, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::iterative::{self, kind_from_str, markdown, Paths, LAYOUT, SCHEMA};
use crate::layouts::{Layout, StoreRef, Turn};
use crate::signals::Signal;
use crate::store::{check_id, folder_lock_path};

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
    /// Append a lesson to guardrails.md in the seed's format.
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
    },
    /// Mark the slug complete and move it to .claude/iterative/archive/SLUG-YYYYMMDD.
    Archive { slug: String },
}

fn store_ref(cx: &Ctx, slug: &str) -> Result<StoreRef> {
    check_id("slug", slug)?;
    let root = iterative::base(cx.project_dir(None)).join(slug);
    if !cx.store.is_dir(&root) {
        return Err(Error::NotFound(format!(
            "no iterative store `{}` (create it with `taskhook iterative new {slug}`)",
            root.display()
        )));
    }
    Ok(StoreRef {
        layout: "iterative",
        id: slug.to_string(),
        root,
    })
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    match args.command {
        Cmd::New {
            slug,
            mode,
            tasks,
            max_iterations,
            name,
            json,
        } => {
            check_id("slug", &slug)?;
            for t in &tasks {
                check_id("unit id", t)?;
            }
            let root = iterative::base(cx.project_dir(None)).join(&slug);
            let p = Paths::of(&root);
            if cx.store.exists(&p.state) || cx.store.exists(&p.progress) {
                return Err(Error::Rule(format!("`{}` already exists", root.display())));
            }
            let now = cx.store.clock().stamp();
            let knowledge = mode == "knowledge";
            let mut units = Map::new();
            for t in &tasks {
                units.insert(
                    t.clone(),
                    json!({"status": "pending", "max_iterations": max_iterations}),
                );
            }
            let (ukey, ckey) = if knowledge {
                ("phases", "current_phase")
            } else {
                ("tasks", "current_task")
            };
            let mut state = json!({
                "task": name.clone().unwrap_or_else(|| slug.clone()),
                "slug": slug,
                "mode": mode,
                "created": now,
                "updated": now,
                "phase": if tasks.is_empty() { "plan" } else { "execute" },
                ckey: tasks.first(),
                "current_iteration": 0,
                ukey: Value::Object(units),
            });
            if !knowledge {
                state["commits"] = json!([]);
            }
            let plan = plan_text(&slug, knowledge, &tasks, max_iterations, &now);
            cx.store.create_dir_all(&root)?;
            cx.store.with_lock(&folder_lock_path(&root), || {
                cx.store.replace_json(&p.state, SCHEMA, &state)?;
                cx.store.append(&p.progress, b"# Progress Log\n\n")?;
                cx.store.append(
                    &p.guardrails,
                    b"# Guardrails\n\nRead before starting any iteration. Append when issues discovered.\n\n",
                )?;
                let plan_path = if knowledge { &p.plan_md } else { &p.tasks_md };
                cx.store.replace(plan_path, plan.as_bytes())?;
                if knowledge {
                    cx.store.create_dir_all(&root.join("sources"))?;
                    cx.store.create_dir_all(&root.join("outputs"))?;
                }
                Ok(())
            })?;
            if json {
                super::out_json(io, &json!({"path": root, "state": state}))?;
            } else {
                super::out(
                    io,
                    &format!("Created {} ({} unit(s)).", root.display(), tasks.len()),
                )?;
            }
            Ok(0)
        }
        Cmd::Status { slug, json } => {
            let stores = match slug {
                Some(s) => vec![store_ref(cx, &s)?],
                None => LAYOUT.discover(cx, cx.project_dir(None))?,
            };
            let mut all = Vec::new();
            for s in &stores {
                let l = LAYOUT.load(cx, s, false)?;
                let st = LAYOUT.status(cx, s)?;
                all.push(json!({"slug": s.id, "path": s.root, "state": l.state, "ready": st.ready, "notes": l.notes}));
                if !json {
                    super::out(
                        io,
                        &format!(
                            "{}  phase {}  {}",
                            s.id,
                            l.state["phase"].as_str().unwrap_or("?"),
                            s.root.display()
                        ),
                    )?;
                    let key = if l.state["mode"] == "knowledge" {
                        "phases"
                    } else {
                        "tasks"
                    };
                    if let Some(units) = l.state[key].as_object() {
                        for (id, u) in units {
                            super::out(
                                io,
                                &format!(
                                    "  {id:<8} {:<12} iterations {}/{}{}",
                                    u["status"].as_str().unwrap_or("?"),
                                    u["iterations_used"].as_u64().unwrap_or(0),
                                    u["max_iterations"].as_u64().unwrap_or(0),
                                    u["reason"]
                                        .as_str()
                                        .map(|r| format!("  ({r})"))
                                        .unwrap_or_default()
                                ),
                            )?;
                        }
                    }
                    if !st.ready.is_empty() {
                        super::out(io, &format!("  ready: {}", st.ready.join(", ")))?;
                    }
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
            let store = store_ref(cx, &slug)?;
            check_id("unit id", &unit)?;
            let kind = kind_from_str(&kind).ok_or_else(|| {
                Error::Usage(format!(
                    "signal kind must be DONE, FAILED or BLOCKED, got {kind:?}"
                ))
            })?;
            let l = LAYOUT.load(cx, &store, false)?;
            let key = if l.state["mode"] == "knowledge" {
                "phases"
            } else {
                "tasks"
            };
            if l.state[key].get(&unit).is_none() {
                return Err(Error::NotFound(format!("{slug} has no unit {unit:?}")));
            }
            let signal = Signal {
                name: unit.clone(),
                kind,
                reason,
            };
            let text = format!(
                "(signalled by hand: taskhook iterative signal {slug} {unit} {})",
                kind.word()
            );
            let turn = Turn {
                agent_id: None,
                bound: true,
                stop_hook_active: false,
                final_text: &text,
            };
            let r = LAYOUT.stop(cx, &store, &unit, Some(&signal), &turn)?;
            let after = LAYOUT.load(cx, &store, false)?;
            let unit_state = after.state[key][&unit].clone();
            if json {
                super::out_json(
                    io,
                    &json!({"unit": unit, "state": unit_state, "instruction": r.block.first(), "messages": r.context}),
                )?;
            } else {
                super::out(
                    io,
                    &format!("{unit}: {}", unit_state["status"].as_str().unwrap_or("?")),
                )?;
                for line in r.block.iter().chain(&r.context) {
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
        } => {
            let store = store_ref(cx, &slug)?;
            let p = Paths::of(&store.root);
            let learned = match learned {
                Some(l) => l,
                None => {
                    let l = LAYOUT.load(cx, &store, false)?;
                    let ck = if l.state["mode"] == "knowledge" {
                        "current_phase"
                    } else {
                        "current_task"
                    };
                    match l.state[ck].as_str() {
                        Some(cur) => format!(
                            "{cur} iteration {}",
                            l.state["current_iteration"].as_u64().unwrap_or(0)
                        ),
                        None => "by hand".to_string(),
                    }
                }
            };
            let name = name.unwrap_or_else(|| {
                problem
                    .split_whitespace()
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            let text = markdown::render_guardrail(&name, &when, &problem, &solution, &learned);
            cx.store.with_lock(&folder_lock_path(&store.root), || {
                if !cx.store.exists(&p.guardrails) {
                    cx.store.append(
                        &p.guardrails,
                        b"# Guardrails\n\nRead before starting any iteration. Append when issues discovered.\n\n",
                    )?;
                }
                cx.store.append(&p.guardrails, text.as_bytes())
            })?;
            super::out(
                io,
                &format!("Added guardrail \"{name}\" to {}.", p.guardrails.display()),
            )?;
            Ok(0)
        }
        Cmd::Archive { slug } => {
            let store = store_ref(cx, &slug)?;
            let p = Paths::of(&store.root);
            let day = cx.store.clock().now().format("%Y%m%d").to_string();
            let archive = iterative::base(cx.project_dir(None)).join("archive");
            let mut target = archive.join(format!("{slug}-{day}"));
            let mut n = 1;
            while cx.store.exists(&target) {
                n += 1;
                target = archive.join(format!("{slug}-{day}-{n}"));
            }
            // Checked before anything is written: a refused move must leave the slug as it was.
            cx.store.check_move(&store.root, &target)?;
            cx.store.with_lock(&folder_lock_path(&store.root), || {
                let mut l = LAYOUT.load(cx, &store, true)?;
                l.state["phase"] = json!("complete");
                l.state["updated"] = json!(cx.store.clock().stamp());
                cx.store.replace_json(&p.state, SCHEMA, &l.state)?;
                Ok(())
            })?;
            cx.store.rename(&store.root, &target)?;
            super::out(io, &format!("Archived {slug} to {}.", target.display()))?;
            Ok(0)
        }
    }
}

/// A starting tasks.md / plan.md in the seed's template.
fn plan_text(slug: &str, knowledge: bool, units: &[String], max: u64, now: &str) -> String {
    let mut s = if knowledge {
        format!(
            "# {slug} - Phases\n\n**Created:** {now}\n**Total:** {} phases\n\n## Phases\n\n",
            units.len()
        )
    } else {
        format!(
            "# {slug} - Tasks\n\n**Created:** {now}\n**Total:** {} tasks\n**Status:** 0 done, 0 in progress, {} pending\n\n## Tasks\n\n",
            units.len(),
            units.len()
        )
    };
    for u in units {
        s.push_str(&format!(
            "- [ ] **{u}**: {u}\n  - Completion: `<signal>{u}_DONE</signal>`\n  - Max iterations: {max}\n  - Depends: none\n\n"
        ));
    }
    s
}
