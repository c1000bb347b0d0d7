//! One project as `taskhook status` and the SessionStart context show it: the tasks being
//! worked on, the ready ones (leaf tasks whose dependencies are COMPLETE, by priority then
//! creation order), the BLOCKED ones waiting for a person, stale ones, research younger than 24
//! hours that the next execution can reuse, velocity in one line, and how to drive the tasks.

use std::time::UNIX_EPOCH;

use chrono::Duration;

use super::files::{self, Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};
use super::index::Index;
use super::lifecycle::fmt_num;
use super::model::{Priority, ProjectRecord, Status, Task, TaskList, Velocity};
use super::pending;
use super::velocity;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::json::typed;
use crate::layouts::{Item, StoreRef, Summary};
use crate::store::{fs, Loaded};

/// How long a research file stays reusable (the seed's 24-hour TTL).
pub const RESEARCH_TTL_HOURS: i64 = 24;

fn estimate(t: &Task) -> Option<String> {
    t.estimate().map(|e| format!("estimate {} min", fmt_num(e)))
}

fn priority(t: &Task) -> Option<String> {
    match t.priority.as_ref()? {
        Priority::Label(s) if s.is_empty() => None,
        p => Some(format!("priority {p}")),
    }
}

fn joined(parts: Vec<Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Research files (`research/{id}.md`) of unfinished tasks written in the last 24 hours, with
/// their age.
pub fn reusable_research(cx: &Ctx, p: &Paths, index: &Index<'_>) -> Result<Vec<Item>> {
    let now = cx.store.clock().now();
    let mut out = Vec::new();
    for e in cx.store.list_dir(&p.research)? {
        let Some(id) = e.name.strip_suffix(".md") else {
            continue;
        };
        let Some(t) = index.find(id) else {
            continue;
        };
        if e.is_dir || t.status.is_finished() {
            continue;
        }
        let Some(mtime) = fs::modified(&p.research.join(&e.name)) else {
            continue;
        };
        let Ok(secs) = mtime.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64) else {
            continue;
        };
        let age = now.timestamp() - secs;
        if age < 0 || Duration::seconds(age) > Duration::hours(RESEARCH_TTL_HOURS) {
            continue;
        }
        let age = if age < 3600 {
            format!("{} min old", age / 60)
        } else {
            format!("{} h old", age / 3600)
        };
        out.push(Item::with(id, format!("research/{}, {age}", e.name)));
    }
    Ok(out)
}

/// The summary of a project whose list is `list`.
pub fn summarize(cx: &Ctx, store: &StoreRef, list: &TaskList) -> Result<Summary> {
    let p = Paths::of(&store.root);
    let tasks = &list.tasks;
    let mut s = Summary {
        layout: super::NAME,
        id: store.id.clone(),
        path: store.root.clone(),
        current_label: "In progress",
        ..Default::default()
    };
    let mut counts = [0usize; Status::ALL.len()];
    for t in tasks {
        counts[t.status as usize] += 1;
    }
    for (st, n) in Status::ALL.iter().zip(counts) {
        if n > 0 {
            s.counts.insert(st.to_string(), n);
        }
    }
    let project = match super::files::load_small(cx, &p.project, SCHEMA_PROJECT)? {
        Loaded::Valid(v) => typed::<ProjectRecord>(&v).ok(),
        Loaded::Invalid(why) => {
            s.problems.push(format!("project.json {why}"));
            None
        }
        Loaded::Missing => None,
    };
    let project = project.as_ref();
    let about = joined(vec![
        project.and_then(|r| r.name.clone()),
        project
            .and_then(|r| r.phase.as_ref())
            .map(|ph| format!("phase {ph}")),
    ])
    .map(|a| format!(" ({a})"))
    .unwrap_or_default();
    let counts: Vec<String> = Status::ALL
        .iter()
        .filter_map(|st| s.counts.get(st.as_str()).map(|n| format!("{n} {st}")))
        .collect();
    s.headline = format!(
        "taskhook · projects \"{}\"{about}, .claude/projects/{}/: {} task(s){}",
        store.id,
        store.id,
        tasks.len(),
        if counts.is_empty() {
            String::new()
        } else {
            format!(" ({})", counts.join(", "))
        }
    );
    let now = cx.store.clock().now();
    for t in tasks {
        let st = t.status;
        let id = t.id.as_str();
        if st.is_transitional() && !t.is_parent() {
            let since = t.started_at().map(|a| format!("since {a}"));
            s.current.push(Item {
                title: t.title(),
                detail: joined(vec![Some(st.to_string()), since, estimate(t)]),
                ..Item::id(id)
            });
        }
        if st == Status::Blocked {
            s.blocked.push(Item {
                title: t.title(),
                ..Item::with(id, t.blocked_reason().unwrap_or("no reason given"))
            });
        }
        if let Some((minutes, est)) = t.overdue(now) {
            s.stale.push(Item {
                title: t.title(),
                ..Item::with(id, format!(
                    "IN_PROGRESS {minutes} min, over 4 × {} min estimate: reset at the next session start",
                    fmt_num(est)
                ))
            });
        }
    }
    {
        // One index for the ready tasks, the research and the graph checks.
        let index = list.index();
        for i in index.ready_at() {
            let t = &tasks[i];
            s.ready.push(Item {
                title: t.title(),
                detail: joined(vec![priority(t), estimate(t)]),
                ..Item::id(t.id.as_str())
            });
        }
        let research = reusable_research(cx, &p, &index)?;
        s.more
            .push(("Research to reuse (under 24 h)", research, false));
        s.problems.extend(list.problems(&index));
    }
    if let Loaded::Valid(v) = super::files::load_small(cx, &p.velocity, SCHEMA_VELOCITY)? {
        let v = typed::<Velocity>(&v).unwrap_or_default();
        if let Some(line) = velocity::velocity_line(&v) {
            s.context_extra.push(format!("Velocity: {line}."));
        }
    }
    s.context_extra.push(format!(
        "Run a task with a subagent whose prompt holds <task>{id}/TASK</task>; it ends with <signal>TASK_DONE</signal>, <signal>TASK_BLOCKED: why</signal> or <signal>TASK_FAILED: why</signal>. Parent tasks are never launched: their subtasks are. `taskhook projects next {next}` names the next task.",
        id = store.id,
        next = crate::shell::quote(&store.id)
    ));
    s.quiet = s.problems.is_empty() && tasks.iter().all(|t| t.status.is_finished());
    Ok(s)
}

/// The summary of a project's store as `taskhook status` shows it: its list (restored in
/// memory when tasks.json is unusable), with a change a kill interrupted and a restoration
/// still to write named first among its problems.
pub fn of_store(cx: &Ctx, store: &StoreRef) -> Result<Summary> {
    let p = Paths::of(&store.root);
    let (list, restored) = files::read(cx, &p)?;
    let mut s = summarize(cx, store, &list)?;
    if pending::waiting(cx, &p) {
        s.problems.insert(
            0,
            format!(
                "a change was interrupted (temp/{}): the next write to the store, or the next session start, finishes it or drops it",
                pending::NAME
            ),
        );
    }
    if let Some(r) = &restored {
        s.problems.insert(
            0,
            format!(
                "{}; the next session start (or `taskhook recover {}`) writes this",
                r.describe(None),
                store.root.display()
            ),
        );
    }
    Ok(s)
}
