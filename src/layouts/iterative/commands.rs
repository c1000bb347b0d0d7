//! What `taskhook iterative …` does to a slug, so the CLI only parses and prints: create a
//! store from the seed's templates (optionally seeded with the guardrails of past work), apply
//! a signal by hand (the same step a subagent's signal takes), append a guardrail, archive a
//! finished slug.
//!
//! A person's commands on units (`add | set-max | reset | unblock`) are the only way a held
//! unit (timed out, or blocked by the failed-confirmation cap) moves again, seed 003's "ask
//! user: increase max, simplify criteria, or intervene". Each runs under the slug's lock,
//! writes the unit's new counters to state.json and a `set` note to progress.md (so a replay of
//! the log gives the same state), and brings dependency blocks and the current pointer up to
//! date.

use std::path::PathBuf;

use serde_json::Value;

use super::lifecycle::{Counters, DEFAULT_MAX_ITERATIONS};
use super::log::render_note;
use super::model::{Mode, Reason, Stage, State, Status, Unit, Units};
use super::plan::*;
use super::state::{self, is_knowledge, load, Slug};
use super::{base, hooks, markdown, templates, Paths, NAME};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::graph::{self, Node};
use crate::layouts::{unused_path, Reaction, StoreRef, Turn};
use crate::project::Project;
use crate::signals::{FinalMessage, Signal, SignalKind};
use crate::store::{check_id, check_unit_id, folder_lock_path};

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
    Ok(StoreRef::new(NAME, slug, root, &project.root))
}

/// What `iterative new` creates.
#[derive(Debug, Clone, Default)]
pub struct NewSlug {
    pub slug: String,
    /// `development` (tasks, tasks.md) or `knowledge` (phases, plan.md).
    pub knowledge: bool,
    pub units: Vec<String>,
    pub max_iterations: u64,
    /// state.json's `task` (default: the slug).
    pub name: Option<String>,
    /// brief.md's "Outcome Needed" and context.md's "Goal".
    pub goal: Option<String>,
    /// brief.md's "Done When" criteria.
    pub done_when: Vec<String>,
    /// brief.md's "Constraints".
    pub constraints: Vec<String>,
    /// brief.md's "Approach / Notes" and context.md's "Approach".
    pub approach: Option<String>,
    /// brief.md's "Domain" and state.json's `domain` (knowledge mode: `research` by default).
    pub domain: Option<String>,
    /// A slug (archived or live) whose guardrails.md seeds the new one.
    pub guardrails_from: Option<String>,
}

const DEVELOPMENT_DOMAINS: &[&str] = &["feature", "bug", "refactor"];
const KNOWLEDGE_DOMAINS: &[&str] = &["research", "writing", "analysis", "planning"];

/// A budget every unit can finish within: at least one work iteration (confirmation and
/// verification passes are not charged against it).
pub(crate) fn check_budget(max: u64) -> Result<u64> {
    if max == 0 {
        return Err(Error::Usage(
            "max_iterations must be at least 1: a unit needs one work iteration (its confirmation and verification passes are not charged against it)".into(),
        ));
    }
    Ok(max)
}

/// Creates `.claude/iterative/SLUG/` with state.json, progress.md, guardrails.md, brief.md,
/// context.md and a plan (seed 003's templates); returns its folder, the state written and how
/// many guardrails were carried over.
pub fn create(cx: &Ctx, project: &Project, n: &NewSlug) -> Result<(PathBuf, Value, usize)> {
    check_unit_id("slug", &n.slug)?;
    for t in &n.units {
        check_unit_id("unit id", t)?;
    }
    check_budget(n.max_iterations)?;
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = n.units.iter().find(|u| !seen.insert(u.as_str())) {
        return Err(Error::Usage(format!("unit {dup} is given twice")));
    }
    let domains = if n.knowledge {
        KNOWLEDGE_DOMAINS
    } else {
        DEVELOPMENT_DOMAINS
    };
    let domain = match &n.domain {
        Some(d) if !domains.contains(&d.as_str()) => {
            return Err(Error::Usage(format!(
                "domain {d:?} is not one of {} for {} mode",
                domains.join(", "),
                if n.knowledge {
                    "knowledge"
                } else {
                    "development"
                }
            )))
        }
        Some(d) => Some(d.clone()),
        None if n.knowledge => Some("research".to_string()),
        None => None,
    };
    let root = base(&project.root).join(&n.slug);
    let p = Paths::of(&root);
    if cx.store.exists(&p.state) || cx.store.exists(&p.progress) {
        return Err(Error::Rule(format!("`{}` already exists", root.display())));
    }
    let carried = match &n.guardrails_from {
        Some(from) => Some(guardrails_of(cx, project, from)?),
        None => None,
    };
    let now = cx.store.clock().stamp();
    let name = n.name.clone().unwrap_or_else(|| n.slug.clone());
    let units: Units = n
        .units
        .iter()
        .map(|t| {
            let u = Unit {
                max_iterations: Some(n.max_iterations),
                ..Default::default()
            };
            (t.clone(), u)
        })
        .collect();
    let mode = if n.knowledge {
        Mode::Knowledge
    } else {
        Mode::Development
    };
    let mut state = State::new(&n.slug, mode, units);
    state.task = Some(name.clone());
    state.created = Some(now.clone());
    state.updated = Some(now.clone());
    state.phase = if n.units.is_empty() {
        Stage::Plan
    } else {
        Stage::Execute
    };
    state.set_current(n.units.first().cloned());
    state.current_iteration = Some(0);
    state.domain = domain.clone();
    if !n.knowledge {
        state.commits = Some(Vec::new());
    }
    let filled = NewSlug {
        domain: domain.clone(),
        ..n.clone()
    };
    let plan = templates::plan(&filled, &name, &now);
    let mut guardrails = String::from_utf8_lossy(GUARDRAILS_HEADER).into_owned();
    let mut count = 0;
    if let Some((from, text)) = &carried {
        count = text.lines().filter(|l| l.starts_with("## ")).count();
        guardrails.push_str(&format!(
            "<!-- taskhook: carried over from {from} (guardrails.md) -->\n\n{text}"
        ));
    }
    cx.store.create_dir_all(&root)?;
    let written = cx.store.with_lock(&folder_lock_path(&root), || {
        let mut l = Slug::new(
            crate::layouts::json::Source::Value(Value::Null),
            state,
            Default::default(),
            0,
            true,
        );
        state::append_progress(cx, &p, &mut l, "")?;
        state::write_state(cx, &p, &mut l)?;
        cx.store.append(&p.guardrails, guardrails.as_bytes())?;
        let plan_path = if n.knowledge { &p.plan_md } else { &p.tasks_md };
        for (path, text) in [
            (plan_path, plan),
            (&p.brief, templates::brief(&filled, &name, &now)),
            (&p.context, templates::context(&filled, &name)),
        ] {
            if !cx.store.exists(path) {
                cx.store.replace(path, text.as_bytes())?;
            }
        }
        if n.knowledge {
            cx.store.create_dir_all(&root.join("sources"))?;
            cx.store.create_dir_all(&root.join("outputs"))?;
        }
        l.source.to_value().map_err(Error::BadInput)
    })?;
    Ok((root, written, count))
}

/// The guardrails of past work named `from`: every `archive/FROM-YYYYMMDD[-N]` (oldest first)
/// or an archive folder named exactly `from`, else the live slug `from`; without guardrails.md's
/// header, each lesson once. Returns where they came from and the text.
fn guardrails_of(cx: &Ctx, project: &Project, from: &str) -> Result<(String, String)> {
    check_id("slug", from)?;
    let base = base(&project.root);
    let archive = base.join("archive");
    let mut found: Vec<((String, u64), String)> = Vec::new();
    for e in cx.store.list_dir(&archive)? {
        if !e.is_dir {
            continue;
        }
        let rank = if e.name == from {
            Some((String::new(), 0))
        } else {
            e.name
                .strip_prefix(from)
                .and_then(|r| r.strip_prefix('-'))
                .and_then(|r| {
                    let (day, n) = r.split_once('-').unwrap_or((r, "1"));
                    let ok = day.len() == 8 && day.bytes().all(|b| b.is_ascii_digit());
                    ok.then(|| (day.to_string(), n.parse().unwrap_or(1)))
                })
        };
        if let Some(rank) = rank {
            found.push((rank, e.name));
        }
    }
    found.sort();
    let (dirs, shown): (Vec<_>, String) = if found.is_empty() {
        (vec![base.join(from)], from.to_string())
    } else {
        let names: Vec<String> = found.iter().map(|(_, n)| format!("archive/{n}")).collect();
        (
            found.into_iter().map(|(_, n)| archive.join(n)).collect(),
            names.join(", "),
        )
    };
    let mut lessons: Vec<String> = Vec::new();
    let mut any = false;
    for dir in dirs {
        let Some(bytes) = cx
            .store
            .read_capped(&dir.join("guardrails.md"), 4 * 1024 * 1024)?
        else {
            continue;
        };
        any = true;
        let text = String::from_utf8_lossy(&bytes);
        let body = match text.find("\n## ") {
            Some(i) => &text[i + 1..],
            None if text.starts_with("## ") => &text[..],
            None => "",
        };
        for lesson in body.split("\n## ").filter(|l| !l.trim().is_empty()) {
            let lesson = format!("## {}\n\n", lesson.trim_start_matches("## ").trim_end());
            if !lessons.contains(&lesson) {
                lessons.push(lesson);
            }
        }
    }
    if !any {
        return Err(Error::NotFound(format!(
            "no guardrails to carry over: neither .claude/iterative/archive/{from}-YYYYMMDD nor .claude/iterative/{from} has a guardrails.md"
        )));
    }
    Ok((shown, lessons.concat()))
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
) -> Result<(Unit, Reaction)> {
    let store = store_ref(cx, project, slug)?;
    check_id("unit id", unit)?;
    let l = load(cx, &store, false)?;
    if l.state.unit(unit).is_none() {
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
        message: &FinalMessage::parse(&text),
        by_hand: true,
    };
    let step = hooks::stop(cx, &store, unit, Some(&signal), &turn)?;
    let after = load(cx, &store, false)?;
    Ok((after.state.unit(unit).cloned().unwrap_or_default(), step))
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
            match l.state.current() {
                Some(cur) => format!("{cur} iteration {}", l.state.current_iteration.unwrap_or(0)),
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
/// for a second archive the same day), under the slug's lock; returns the new folder. Unfinished
/// units (anything not `done`) refuse unless `force`.
pub fn archive(cx: &Ctx, project: &Project, slug: &str, force: bool) -> Result<PathBuf> {
    let store = store_ref(cx, project, slug)?;
    let p = Paths::of(&store.root);
    let day = cx.store.clock().now().format("%Y%m%d").to_string();
    let archive = base(&project.root).join("archive");
    let target = unused_path(cx, |n| archive.join(format!("{slug}-{day}{n}")));
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, &store, true)?;
        let open: Vec<String> = l
            .state
            .units()
            .iter()
            .filter(|(_, u)| u.status != Status::Done)
            .map(|(id, u)| format!("{id} ({})", u.status))
            .collect();
        if !open.is_empty() && !force {
            return Err(Error::Rule(format!(
                "{slug} has unfinished work: {}; finish it, or archive anyway with `taskhook iterative archive {slug} --force`",
                name_some(&open)
            )));
        }
        let shown = target
            .strip_prefix(base(&project.root))
            .unwrap_or(&target)
            .display()
            .to_string();
        let mut why = format!("phase complete; moved to {shown}");
        if !open.is_empty() {
            why.push_str(&format!(" with unfinished work (--force): {}", name_some(&open)));
        }
        let note = render_note(&cx.store.clock().stamp(), "archived", None, &why);
        state::append_progress(cx, &p, &mut l, &note)?;
        l.state.phase = Stage::Complete;
        l.state.updated = Some(cx.store.clock().stamp());
        state::write_state(cx, &p, &mut l)?;
        cx.store.rename(&store.root, &target)
    })?;
    Ok(target)
}

/// What a command did: the unit after it, and one line for the person.
#[derive(Debug, Clone)]
pub struct Done {
    pub unit: Unit,
    pub message: String,
}

/// Runs `change` on a unit under the lock; logs a `set` note with `why` and writes state.json
/// (a person's commands, and the agent's `release`).
pub(crate) fn in_store<F>(
    cx: &Ctx,
    store: &StoreRef,
    unit: &str,
    why: &str,
    change: F,
) -> Result<Done>
where
    F: FnOnce(&mut Slug, &mut Counters, &mut Unit) -> Result<String>,
{
    check_id("unit id", unit)?;
    let slug = store.id.as_str();
    cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, store, true)?;
        let Some(mut u) = l.state.unit(unit).cloned() else {
            return Err(Error::NotFound(format!("{slug} has no unit {unit:?}")));
        };
        let mut c = counters_of(&u, l.plan.max_of(unit));
        let message = change(&mut l, &mut c, &mut u)?;
        write_counters(&mut u, &c);
        l.state.units_mut().insert(unit.into(), u);
        l.sets
            .push((unit.to_string(), counters_json(&c), why.to_string()));
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
        l.dirty = true;
        state::save(cx, store, &mut l)?;
        Ok(Done {
            unit: l.state.unit(unit).cloned().unwrap_or_default(),
            message,
        })
    })
}

/// `reset`: the unit starts over (pending, counters at zero, budget kept).
pub fn reset(cx: &Ctx, project: &Project, slug: &str, unit: &str) -> Result<Done> {
    let why = "reset by a person (taskhook iterative reset)";
    let store = store_ref(cx, project, slug)?;
    in_store(cx, &store, unit, why, |_, c, u| {
        let was = format!("{} after {} iteration(s)", c.status, c.iterations_used);
        *c = Counters::pending(c.max_iterations);
        u.started_at = None;
        u.completed_at = None;
        u.verification_passed = None;
        u.last_signal = None;
        u.failed_confirmations = Some(0);
        Ok(format!(
            "{unit}: reset (was {was}); it starts over with max_iterations {}.",
            c.max_iterations
        ))
    })
}

/// `unblock`: a blocked unit (the confirmation cap, or a subagent's BLOCKED) goes back to
/// work, its failed confirmations cleared.
pub fn unblock(cx: &Ctx, project: &Project, slug: &str, unit: &str) -> Result<Done> {
    let why = "unblocked by a person (taskhook iterative unblock)";
    let store = store_ref(cx, project, slug)?;
    in_store(cx, &store, unit, why, |l, c, _| {
        if c.status != Status::Blocked || matches!(c.reason, Some(Reason::Waiting(_))) {
            let waits = unfinished_deps(&l.state, &l.plan, unit);
            return Err(Error::Rule(if waits.is_empty() {
                format!("{unit} is {}, not blocked: nothing to unblock", c.status)
            } else {
                format!(
                    "{unit} waits on {}: it starts by itself when they are done",
                    waits.join(", ")
                )
            }));
        }
        let was = c.reason.take().map(String::from).unwrap_or_default();
        c.status = if c.iterations_used == 0 {
            Status::Pending
        } else {
            Status::InProgress
        };
        c.reason = None;
        c.failed_confirmations = 0;
        let mut msg = format!("{unit}: unblocked (was: {was}); it is {} again.", c.status);
        if c.iterations_used >= c.max_iterations {
            msg.push_str(&format!(
                " Its budget is used up ({} of {}): raise it with `taskhook iterative set-max {slug} {unit} N` or its next work pass times out.",
                c.iterations_used, c.max_iterations
            ));
        }
        Ok(msg)
    })
}

/// `set-max`: a new `max_iterations`. A timed-out unit given room goes back to work.
pub fn set_max(cx: &Ctx, project: &Project, slug: &str, unit: &str, max: u64) -> Result<Done> {
    check_budget(max)?;
    let why = format!("max_iterations {max} by a person (taskhook iterative set-max)");
    let store = store_ref(cx, project, slug)?;
    in_store(cx, &store, unit, &why, |_, c, _| {
        let old = c.max_iterations;
        if c.status == Status::Timeout {
            if max <= c.iterations_used {
                return Err(Error::Rule(format!(
                    "{unit} timed out after {} iterations: a max_iterations of {max} gives none back; use at least {}",
                    c.iterations_used,
                    c.iterations_used + 1
                )));
            }
            c.max_iterations = max;
            c.status = Status::InProgress;
            c.reason = None;
            return Ok(format!(
                "{unit}: max_iterations {old} → {max}; it was timed out and is in progress again ({} iteration(s) left).",
                max - c.iterations_used
            ));
        }
        c.max_iterations = max;
        let mut msg = format!("{unit}: max_iterations {old} → {max}.");
        if max <= c.iterations_used && c.status != Status::Done {
            msg.push_str(&format!(
                " It has used {} already: its next work pass times out.",
                c.iterations_used
            ));
        }
        Ok(msg)
    })
}

/// What `add` is told about the new unit.
#[derive(Debug, Clone, Default)]
pub struct NewUnit {
    pub id: String,
    pub title: Option<String>,
    pub criteria: Option<String>,
    pub depends: Vec<String>,
    pub max_iterations: Option<u64>,
}

/// `add`: a new unit in state.json and in tasks.md / plan.md (after its last unit), pending or
/// waiting on its dependencies. Unknown dependencies and cycles are refused.
pub fn add(cx: &Ctx, project: &Project, slug: &str, u: &NewUnit) -> Result<Done> {
    let store = store_ref(cx, project, slug)?;
    check_unit_id("unit id", &u.id)?;
    for d in &u.depends {
        check_id("dependency", d)?;
    }
    let max = check_budget(u.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS))?;
    let p = Paths::of(&store.root);
    let knowledge = is_knowledge(cx, &store);
    let why = "added by a person (taskhook iterative add)";
    let done = cx.store.with_lock(&folder_lock_path(&store.root), || {
        let mut l = load(cx, &store, true)?;
        if l.state.units().contains(&u.id) {
            return Err(Error::Rule(format!("{slug} already has a unit {}", u.id)));
        }
        if let Some(d) = u.depends.iter().find(|d| !l.state.units().contains(d)) {
            return Err(Error::Rule(format!(
                "{} cannot depend on {d}: {slug} has no unit {d}",
                u.id
            )));
        }
        let mut ids: Vec<String> = l.state.units().keys().map(str::to_string).collect();
        ids.push(u.id.clone());
        let deps: Vec<Vec<String>> = ids
            .iter()
            .map(|i| {
                if *i == u.id {
                    u.depends.clone()
                } else {
                    deps_of(&l.state, &l.plan, i)
                }
            })
            .collect();
        let nodes: Vec<Node<'_>> = ids
            .iter()
            .zip(&deps)
            .map(|(i, d)| Node::new(i, d.iter().map(String::as_str)))
            .collect();
        if let Some(cycle) = graph::find_cycle(&nodes) {
            return Err(Error::Rule(format!(
                "adding {} would make a dependency cycle: {}",
                u.id,
                graph::describe_cycle(&cycle)
            )));
        }
        let plan_path = if knowledge { &p.plan_md } else { &p.tasks_md };
        let text = cx.store.read_text(plan_path)?.unwrap_or_default();
        let block = templates::unit_block(
            &u.id,
            u.title.as_deref().unwrap_or(&u.id),
            u.criteria.as_deref(),
            max,
            &u.depends,
            knowledge,
        );
        cx.store
            .replace(plan_path, templates::insert_unit(&text, &block).as_bytes())?;
        l.plan = state::read_plan(cx, &p)?;
        let c = Counters::pending(max);
        l.state.units_mut().insert(u.id.clone(), unit_with(&c));
        l.sets
            .push((u.id.clone(), counters_json(&c), why.to_string()));
        if matches!(l.state.phase, Stage::Plan | Stage::Discover) {
            l.state.phase = Stage::Execute;
        }
        advance(&mut l.state, &l.plan);
        l.state.updated = Some(cx.store.clock().stamp());
        l.dirty = true;
        state::save(cx, &store, &mut l)?;
        let unit = l.state.unit(&u.id).cloned().unwrap_or_default();
        let file = if knowledge { "plan.md" } else { "tasks.md" };
        let mut message = format!(
            "Added {} to {slug} (state.json and {file}), max_iterations {max}",
            u.id
        );
        match &unit.reason {
            Some(r) => message.push_str(&format!("; blocked: {r}.")),
            None => message.push('.'),
        }
        Ok(Done { unit, message })
    })?;
    Ok(done)
}
