//! `list [STATUS]` and `stats`: read-only views of a workspace.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::{CResult, Code, Failure};
use super::log::{self, bad_lines_warning, StopState};
use super::model::{Folders, Status, Workspace};
use super::order::{level_of, Item, LADDER};
use super::outcome::{Data, Elapsed, Escalations, List, Stats, StopLine, Stops, TaskLine};
use super::{Folder, Paths, FOLDERS};
use crate::context::Ctx;

/// Every status `list` accepts: the four folders, then what is not in exactly one.
pub const STATUSES: [&str; 7] = [
    "pending",
    "in_progress",
    "completed",
    "failed",
    "not_imported",
    "missing",
    "conflict",
];

/// `list [STATUS]`: the order's tasks with their status, in order; without STATUS, the stops too.
pub fn list(cx: &Ctx, paths: &Paths, status: Option<&str>) -> CResult<Data<List>> {
    if let Some(s) = status.filter(|s| !STATUSES.contains(s)) {
        return Err(Failure::new(
            Code::InvalidStatus,
            format!("unknown status {s:?}; use one of {}", STATUSES.join(", ")),
        ));
    }
    let ws = Workspace::load(cx, paths)?;
    let order = ws.order()?;
    let tasks: Vec<TaskLine> = order
        .tasks()
        .map(|t| (t, ws.status_of(t)))
        .filter(|(_, st)| status.is_none_or(|s| st.name() == s))
        .map(|(t, st)| TaskLine::of(t, st.name()))
        .collect();
    let stops = status.is_none().then(|| {
        order
            .stops()
            .map(|s| StopLine {
                stop: s.id.clone(),
                message: s.message.clone(),
                status: ws.history.stop_state(&s.id).as_str().to_string(),
            })
            .collect()
    });
    Ok(ws.warned(List {
        count: tasks.len(),
        tasks,
        stops,
    }))
}

/// `stats`: counts per status, elapsed totals, escalations per level, stops passed and waiting.
pub fn stats(cx: &Ctx, paths: &Paths) -> CResult<Data<Box<Stats>>> {
    let ws = Workspace::load(cx, paths)?;
    let order = ws.order()?;
    let mut counts: Map<String, Value> = FOLDERS
        .iter()
        .map(|f| (f.as_str().to_string(), json!(0)))
        .collect();
    for t in order.tasks() {
        let name = ws.status_of(t).name().to_string();
        let n = counts.get(&name).and_then(Value::as_u64).unwrap_or(0);
        counts.insert(name, json!(n + 1));
    }
    let mut per_task: BTreeMap<String, f64> = BTreeMap::new();
    let (mut completed, mut failed) = (0.0, 0.0);
    let mut by_level = [0u64; LADDER.len()];
    let mut escalations = 0;
    let mut maxed = 0;
    log::each(cx, &paths.history, |e, line| {
        // Only these read more of a line than its event: a tree of it.
        let raw = matches!(&*e.action, "done" | "fail" | "escalate").then(|| log::raw(line));
        let raw = raw.unwrap_or(Value::Null);
        if e.action == "fail"
            && raw
                .get("reason")
                .and_then(Value::as_str)
                .is_some_and(|r| r.starts_with("max escalation level reached"))
        {
            maxed += 1;
        }
        let Some(task) = e.task.as_deref() else {
            return;
        };
        match &*e.action {
            "done" | "fail" => {
                let secs = raw
                    .get("elapsed_seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                *per_task.entry(task.to_string()).or_default() += secs;
                if e.action == "done" {
                    completed += secs;
                } else {
                    failed += secs;
                }
            }
            "escalate" => {
                escalations += 1;
                let s = |k: &str| raw.get(k).and_then(Value::as_str);
                let level = level_of(s("to_model"), s("to_thinking"));
                if let Some(slot) = level.checked_sub(1).and_then(|i| by_level.get_mut(i)) {
                    *slot += 1;
                }
            }
            _ => {}
        }
    })?;
    let mut stops: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in order.stops() {
        let key = match ws.history.stop_state(&s.id) {
            StopState::Passed => "passed",
            StopState::Reached => "waiting",
            StopState::NotReached => "ahead",
        };
        stops.entry(key).or_default().push(&s.id);
    }
    let mut stops_at = |k: &str| -> Vec<String> {
        stops
            .remove(k)
            .unwrap_or_default()
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let stops = Stops {
        total: order.stops().count(),
        passed: stops_at("passed"),
        waiting: stops_at("waiting"),
        ahead: stops_at("ahead"),
    };
    Ok(ws.warned(Box::new(Stats {
        tasks: order.tasks().count(),
        counts,
        in_progress: ws
            .in_folder(Folder::InProgress)
            .iter()
            .map(|t| t.name.clone())
            .collect(),
        elapsed_seconds: Elapsed {
            total: seconds(completed + failed),
            completed: seconds(completed),
            failed: seconds(failed),
            per_task: per_task.into_iter().map(|(k, v)| (k, seconds(v))).collect(),
        },
        escalations: Escalations {
            total: escalations,
            by_level: (1..).zip(by_level).collect(),
            failed_at_max_level: maxed,
        },
        stops,
        problems: problems(&ws),
    })))
}

/// Seconds as a whole number when they are one (the seed's `elapsed_seconds` are).
fn seconds(s: f64) -> Value {
    if s.fract() == 0.0 && s.abs() < 9.0e15 {
        json!(s as i64)
    } else {
        json!(s)
    }
}

/// What is wrong with a workspace that SessionStart could not (or did not yet) repair.
pub fn problems(ws: &Workspace) -> Vec<String> {
    let mut out = Vec::new();
    let Some(order) = &ws.order else {
        return out;
    };
    out.extend(order.items.iter().filter_map(Item::id_problem));
    for t in order.tasks() {
        match ws.status_of(t) {
            Status::Several(fs) => out.push(format!(
                "{} is in several folders ({})",
                t.name,
                fs.iter()
                    .map(|f| format!("{}/", f.as_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Status::Missing => out.push(match ws.history.folder_of(&t.name) {
                Some(f) => format!(
                    "{}: the history puts it in {}/, but its file is in no folder",
                    t.name,
                    f.as_str()
                ),
                None => format!("{}: its file is missing", t.name),
            }),
            _ => {}
        }
    }
    let running = ws.in_folder(Folder::InProgress);
    if running.len() > 1 {
        out.push(format!(
            "{} tasks are in in_progress/ ({}); one runs at a time",
            running.len(),
            running
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut orphans: Vec<(&str, &Folders)> = ws
        .files
        .iter()
        .filter(|(name, _)| order.task(name).is_none())
        .collect();
    // Each name once: by name is the order a sort of the pairs gave.
    orphans.sort_by_key(|(name, _)| *name);
    let orphans: Vec<String> = orphans
        .into_iter()
        .map(|(name, fs)| format!("{}/{name}", fs[0].as_str()))
        .collect();
    if !orphans.is_empty() {
        out.push(format!("not in order.json: {}", orphans.join(", ")));
    }
    out.extend(bad_lines_warning(&ws.history, &ws.paths.tasks));
    out
}
