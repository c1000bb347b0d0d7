//! What `taskhook iterative …` does to a slug, so the CLI only parses and prints: create a
//! store from the seed's templates, apply a signal by hand (the same step a subagent's signal
//! takes), append a guardrail, archive a finished slug.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::state::{current_key, load, units_key};
use super::{base, markdown, stop, Paths, NAME};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{Step, StoreRef, Turn};
use crate::project::Project;
use crate::signals::{Signal, SignalKind};
use crate::store::{check_id, folder_lock_path};

/// The header every guardrails.md starts with (seed 003).
const GUARDRAILS_HEADER: &[u8] =
    b"# Guardrails\n\nRead before starting any iteration. Append when issues discovered.\n\n";

/// The slug's store, which must exist.
pub fn store_ref(cx: &Ctx, project: &Project, slug: &str) -> Result<StoreRef> {
    check_id("slug", slug)?;
    let root = base(&project.root).join(slug);
    if !cx.store.is_dir(&root) {
        return Err(Error::NotFound(format!(
            "no iterative store `{}` (create it with `taskhook iterative new {slug}`)",
            root.display()
        )));
    }
    Ok(StoreRef {
        layout: NAME,
        id: slug.to_string(),
        root,
    })
}

/// What `iterative new` creates.
#[derive(Debug, Clone)]
pub struct NewSlug {
    pub slug: String,
    /// `development` (tasks, tasks.md) or `knowledge` (phases, plan.md).
    pub knowledge: bool,
    pub units: Vec<String>,
    pub max_iterations: u64,
    /// state.json's `task` (default: the slug).
    pub name: Option<String>,
}

/// Creates `.claude/iterative/SLUG/` with state.json, progress.md, guardrails.md and a plan;
/// returns its folder and the state written.
pub fn create(cx: &Ctx, project: &Project, n: &NewSlug) -> Result<(PathBuf, Value)> {
    check_id("slug", &n.slug)?;
    for t in &n.units {
        check_id("unit id", t)?;
    }
    let root = base(&project.root).join(&n.slug);
    let p = Paths::of(&root);
    if cx.store.exists(&p.state) || cx.store.exists(&p.progress) {
        return Err(Error::Rule(format!("`{}` already exists", root.display())));
    }
    let now = cx.store.clock().stamp();
    let mut units = Map::new();
    for t in &n.units {
        units.insert(
            t.clone(),
            json!({"status": "pending", "max_iterations": n.max_iterations}),
        );
    }
    let (ukey, ckey, mode) = if n.knowledge {
        ("phases", "current_phase", "knowledge")
    } else {
        ("tasks", "current_task", "development")
    };
    let mut state = json!({
        "task": n.name.clone().unwrap_or_else(|| n.slug.clone()),
        "slug": n.slug,
        "mode": mode,
        "created": now,
        "updated": now,
        "phase": if n.units.is_empty() { "plan" } else { "execute" },
        ckey: n.units.first(),
        "current_iteration": 0,
        ukey: Value::Object(units),
    });
    if !n.knowledge {
        state["commits"] = json!([]);
    }
    let plan = plan_text(n, &now);
    cx.store.create_dir_all(&root)?;
    cx.store.with_lock(&folder_lock_path(&root), || {
        stop::write_state(cx, &p, &state)?;
        cx.store.append(&p.progress, b"# Progress Log\n\n")?;
        cx.store.append(&p.guardrails, GUARDRAILS_HEADER)?;
        let plan_path = if n.knowledge { &p.plan_md } else { &p.tasks_md };
        cx.store.replace(plan_path, plan.as_bytes())?;
        if n.knowledge {
            cx.store.create_dir_all(&root.join("sources"))?;
            cx.store.create_dir_all(&root.join("outputs"))?;
        }
        Ok(())
    })?;
    Ok((root, state))
}

/// A starting tasks.md / plan.md in the seed's template.
fn plan_text(n: &NewSlug, now: &str) -> String {
    let (slug, count) = (&n.slug, n.units.len());
    let mut s = if n.knowledge {
        format!(
            "# {slug} - Phases\n\n**Created:** {now}\n**Total:** {count} phases\n\n## Phases\n\n"
        )
    } else {
        format!(
            "# {slug} - Tasks\n\n**Created:** {now}\n**Total:** {count} tasks\n**Status:** 0 done, 0 in progress, {count} pending\n\n## Tasks\n\n"
        )
    };
    for u in &n.units {
        s.push_str(&format!(
            "- [ ] **{u}**: {u}\n  - Completion: `<signal>{u}_DONE</signal>`\n  - Max iterations: {}\n  - Depends: none\n\n",
            n.max_iterations
        ));
    }
    s
}

/// Applies a signal by hand: the same step a subagent's signal takes. Returns the unit's state
/// after it and the step.
pub fn signal(
    cx: &Ctx,
    project: &Project,
    slug: &str,
    unit: &str,
    kind: SignalKind,
    reason: Option<String>,
) -> Result<(Value, Step)> {
    let store = store_ref(cx, project, slug)?;
    check_id("unit id", unit)?;
    let l = load(cx, &store, false)?;
    if l.state[units_key(&l.state)].get(unit).is_none() {
        return Err(Error::NotFound(format!("{slug} has no unit {unit:?}")));
    }
    let signal = Signal {
        name: unit.to_string(),
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
    let step = stop::stop(cx, &store, unit, Some(&signal), &turn)?;
    let after = load(cx, &store, false)?;
    Ok((after.state[units_key(&after.state)][unit].clone(), step))
}

/// A lesson for guardrails.md.
#[derive(Debug, Clone)]
pub struct Guardrail {
    pub when: String,
    pub problem: String,
    pub solution: String,
    /// The pattern's name (default: the problem's first words).
    pub name: Option<String>,
    /// Where it was learned (default: the current unit and iteration).
    pub learned: Option<String>,
}

/// Appends a lesson to the slug's guardrails.md in the seed's format; returns its name and the
/// file.
pub fn add_guardrail(
    cx: &Ctx,
    project: &Project,
    slug: &str,
    g: Guardrail,
) -> Result<(String, PathBuf)> {
    let store = store_ref(cx, project, slug)?;
    let p = Paths::of(&store.root);
    let learned = match g.learned {
        Some(l) => l,
        None => {
            let l = load(cx, &store, false)?;
            match l.state[current_key(&l.state)].as_str() {
                Some(cur) => format!(
                    "{cur} iteration {}",
                    l.state["current_iteration"].as_u64().unwrap_or(0)
                ),
                None => "by hand".to_string(),
            }
        }
    };
    let name = g.name.unwrap_or_else(|| {
        g.problem
            .split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ")
    });
    let text = markdown::render_guardrail(&name, &g.when, &g.problem, &g.solution, &learned);
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        if !cx.store.exists(&p.guardrails) {
            cx.store.append(&p.guardrails, GUARDRAILS_HEADER)?;
        }
        cx.store.append(&p.guardrails, text.as_bytes())
    })?;
    Ok((name, p.guardrails))
}

/// Marks the slug complete and moves it to `.claude/iterative/archive/SLUG-YYYYMMDD` (`-2`, `-3`
/// for a second archive the same day), under the slug's lock; returns the new folder.
pub fn archive(cx: &Ctx, project: &Project, slug: &str) -> Result<PathBuf> {
    let store = store_ref(cx, project, slug)?;
    let p = Paths::of(&store.root);
    let day = cx.store.clock().now().format("%Y%m%d").to_string();
    let archive = base(&project.root).join("archive");
    let mut target = archive.join(format!("{slug}-{day}"));
    let mut n = 1;
    while cx.store.exists(&target) {
        n += 1;
        target = archive.join(format!("{slug}-{day}-{n}"));
    }
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, &store, true)?;
        l.state["phase"] = json!("complete");
        l.state["updated"] = json!(cx.store.clock().stamp());
        stop::write_state(cx, &p, &l.state)?;
        cx.store.rename(&store.root, &target)
    })?;
    Ok(target)
}
