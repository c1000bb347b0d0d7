//! One project as `taskhook status` and the SessionStart context show it: the tasks being
//! worked on, the ready ones (leaf tasks whose dependencies are COMPLETE, by priority then
//! creation order), the BLOCKED ones waiting for a person, stale ones, research younger than 24
//! hours that the next execution can reuse, velocity in one line, and how to drive the tasks.

use std::time::UNIX_EPOCH;

use chrono::Duration;
use serde_json::Value;

use super::files::{Paths, SCHEMA_PROJECT, SCHEMA_VELOCITY};
use super::lifecycle::fmt_num;
use super::log;
use super::model;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Item, StoreRef, Summary};
use crate::store::{fs, Loaded};

/// How long a research file stays reusable (the seed's 24-hour TTL).
pub const RESEARCH_TTL_HOURS: i64 = 24;

fn estimate(t: &Value) -> Option<String> {
    t["estimate_minutes"]
        .as_f64()
        .map(|e| format!("estimate {} min", fmt_num(e)))
}

fn priority(t: &Value) -> Option<String> {
    match &t["priority"] {
        Value::String(s) if !s.is_empty() => Some(format!("priority {s}")),
        Value::Number(n) => Some(format!("priority {n}")),
        _ => None,
    }
}

fn joined(parts: Vec<Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Research files (`research/{id}.md`) of unfinished tasks written in the last 24 hours, with
/// their age.
pub fn reusable_research(cx: &Ctx, p: &Paths, doc: &Value) -> Result<Vec<Item>> {
    let now = cx.store.clock().now();
    let mut out = Vec::new();
    for e in cx.store.list_dir(&p.research)? {
        let Some(id) = e.name.strip_suffix(".md") else {
            continue;
        };
        let Some(t) = model::find(doc, id) else {
            continue;
        };
        if e.is_dir || model::is_finished(model::status(t)) {
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
        out.push(Item {
            detail: Some(format!("research/{}, {age}", e.name)),
            ..Item::id(id)
        });
    }
    Ok(out)
}

/// The summary of a project whose list is `doc`.
pub fn summarize(cx: &Ctx, store: &StoreRef, doc: &Value) -> Result<Summary> {
    let p = Paths::of(&store.root);
    let tasks = model::tasks(doc);
    let mut s = Summary {
        layout: super::NAME,
        id: store.id.clone(),
        path: store.root.clone(),
        current_label: "In progress",
        ..Default::default()
    };
    for t in tasks {
        *s.counts.entry(model::status(t).to_string()).or_default() += 1;
    }
    let project = match super::files::load_small(cx, &p.project, SCHEMA_PROJECT)? {
        Loaded::Valid(v) => v,
        Loaded::Invalid(why) => {
            s.problems.push(format!("project.json {why}"));
            Value::Null
        }
        Loaded::Missing => Value::Null,
    };
    let about = joined(vec![
        project["name"].as_str().map(str::to_string),
        project["phase"].as_str().map(|ph| format!("phase {ph}")),
    ])
    .map(|a| format!(" ({a})"))
    .unwrap_or_default();
    let counts: Vec<String> = model::STATUSES
        .iter()
        .filter_map(|st| s.counts.get(*st).map(|n| format!("{n} {st}")))
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
        let st = model::status(t);
        let id = model::id(t);
        if model::is_transitional(st) && !model::is_parent(t) {
            let since = t["started_at"].as_str().map(|a| format!("since {a}"));
            s.current.push(Item {
                title: model::title(t),
                detail: joined(vec![Some(st.to_string()), since, estimate(t)]),
                ..Item::id(id)
            });
        }
        if st == model::BLOCKED {
            s.blocked.push(Item {
                title: model::title(t),
                detail: Some(
                    t["blocked_reason"]
                        .as_str()
                        .unwrap_or("no reason given")
                        .to_string(),
                ),
                ..Item::id(id)
            });
        }
        if let Some((minutes, est)) = model::overdue(t, now) {
            s.stale.push(Item {
                title: model::title(t),
                detail: Some(format!(
                    "IN_PROGRESS {minutes} min, over 4 × {} min estimate: reset at the next session start",
                    fmt_num(est)
                )),
                ..Item::id(id)
            });
        }
    }
    let index = model::Index::new(doc);
    for id in index.ready() {
        if let Some(t) = index.find(&id) {
            s.ready.push(Item {
                title: model::title(t),
                detail: joined(vec![priority(t), estimate(t)]),
                ..Item::id(id)
            });
        }
    }
    let research = reusable_research(cx, &p, doc)?;
    s.more
        .push(("Research to reuse (under 24 h)", research, false));
    s.problems.extend(model::problems(doc));
    if let Loaded::Valid(v) = super::files::load_small(cx, &p.velocity, SCHEMA_VELOCITY)? {
        if let Some(line) = log::velocity_line(&v) {
            s.context_extra.push(format!("Velocity: {line}."));
        }
    }
    s.context_extra.push(format!(
        "Run a task with a subagent whose prompt holds <task>{id}/TASK</task>; it ends with <signal>TASK_DONE</signal>, <signal>TASK_BLOCKED: why</signal> or <signal>TASK_FAILED: why</signal>. Parent tasks are never launched: their subtasks are. `taskhook projects next {next}` names the next task.",
        id = store.id,
        next = crate::shell::quote(&store.id)
    ));
    s.quiet = s.problems.is_empty() && tasks.iter().all(|t| model::is_finished(model::status(t)));
    Ok(s)
}
