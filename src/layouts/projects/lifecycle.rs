//! Seed 000's task transitions as one pure step: `apply(doc, task, action, now)` changes the
//! master list in memory and says which log entries record it, what it completed (parents
//! whose subtasks are all COMPLETE, phases whose tasks are), what it made ready, or why it was
//! refused. Hooks (a launch, a subagent's signal, a research file written) and commands
//! (`projects start`, `projects set`) drive the same step, so both always agree.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::log::{self, Entry};
use super::model::{self, *};
use crate::store::clock::parse_time;

/// What happens to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// Work starts (a bound subagent's launch, `projects start`): refused for a parent, a
    /// BLOCKED, COMPLETE or CANCELLED task, and one whose dependencies are not COMPLETE.
    Start,
    /// `<signal>ID_DONE</signal>` or `projects set ID COMPLETE`.
    Done,
    /// `_BLOCKED: reason`.
    Blocked(Option<&'a str>),
    /// `_FAILED: reason`: back to PENDING with an ERROR entry.
    Failed(Option<&'a str>),
    /// A bound subagent stopped without a signal (LOOP_ITERATION).
    NoSignal,
    /// `research/{id}.md` was written.
    Researched,
    /// A person sets a status (`projects set`): no refusal but a parent's early COMPLETE.
    Set(&'a str, Option<&'a str>),
}

/// What one step did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The task's status before and after.
    pub from: String,
    pub to: String,
    /// Entries for progress/log.md, in order.
    pub entries: Vec<Entry>,
    /// Whether the master list changed.
    pub changed: bool,
    /// Tasks completed by this step (the task, then parents completed by it).
    pub completed: Vec<String>,
    /// Phases this step completed.
    pub phases: Vec<String>,
    /// Tasks ready now that were not before.
    pub ready_now: Vec<String>,
    /// Why the action was refused (nothing changed).
    pub refused: Option<String>,
    /// The task's `actual_minutes` when it completed.
    pub actual_minutes: Option<i64>,
}

fn refuse(from: &str, why: String) -> Outcome {
    Outcome {
        from: from.to_string(),
        to: from.to_string(),
        refused: Some(why),
        ..Default::default()
    }
}

fn set(doc: &mut Value, i: usize, key: &str, v: Value) {
    if let Some(m) = doc["tasks"][i].as_object_mut() {
        m.insert(key.to_string(), v);
    }
}

/// Applies `action` to task `id` of project `project` at `now` (`YYYY-MM-DDTHH:MM:SSZ`).
pub fn apply(doc: &mut Value, project: &str, id: &str, action: Action<'_>, now: &str) -> Outcome {
    let Some(i) = index(doc, id) else {
        return refuse("", format!("there is no task {id}"));
    };
    let from = status(&doc["tasks"][i]).to_string();
    let ready_before: HashSet<String> = ready(doc).into_iter().collect();
    let task = doc["tasks"][i].clone();
    let subs = subtasks(&task);
    let mut out = Outcome {
        from: from.clone(),
        to: from.clone(),
        ..Default::default()
    };
    let to: &str = match action {
        Action::Start => {
            if let Some(why) = start_refusal(doc, project, &task) {
                return refuse(&from, why);
            }
            IN_PROGRESS
        }
        Action::Done | Action::Set(COMPLETE, _) => {
            if from == COMPLETE {
                return out;
            }
            if !subs.is_empty() && !model::all_done(subs.iter().map(|s| status_of(doc, s))) {
                return refuse(&from, parent_refusal(doc, id, &subs));
            }
            COMPLETE
        }
        Action::Blocked(_) => BLOCKED,
        Action::Failed(_) => {
            if is_finished(&from) {
                return out;
            }
            PENDING
        }
        Action::NoSignal => {
            if is_finished(&from) {
                return out;
            }
            out.entries.push(
                Entry::task(now, log::LOOP_ITERATION, id, &from, &from).detail(
                    "Detail",
                    "the bound subagent stopped without a signal; the task is not finished",
                ),
            );
            return out;
        }
        Action::Researched => {
            if from != PENDING && from != IN_RESEARCH {
                return out;
            }
            RESEARCHED
        }
        Action::Set(s, _) => s,
    };
    let reason = match action {
        Action::Blocked(r) | Action::Set(_, r) => r.map(str::to_string),
        _ => None,
    };
    if to == from && !matches!(action, Action::Failed(_) | Action::Blocked(_)) {
        return out;
    }
    if to == from && task["blocked_reason"].as_str() == reason.as_deref() {
        if let Action::Failed(r) = action {
            let msg = r.unwrap_or("the subagent reported a failure");
            out.entries
                .push(Entry::error(now, Some((id, &from, to)), msg));
        }
        return out;
    }
    out.to = to.to_string();
    out.changed = true;
    set(doc, i, "status", json!(to));
    if from == BLOCKED && to != BLOCKED {
        set(doc, i, "blocked_reason", Value::Null);
        if task.get("stale_count").is_some() {
            set(doc, i, "stale_count", json!(0));
        }
    }
    if from == COMPLETE {
        set(doc, i, "completed_at", Value::Null);
        set(doc, i, "actual_minutes", Value::Null);
    }
    let entry = |event: &str| Entry::task(now, event, id, &from, to);
    match to {
        IN_PROGRESS => {
            set(doc, i, "started_at", json!(now));
            out.entries.push(entry(log::TASK_STARTED));
        }
        COMPLETE => {
            complete(doc, i, now, &mut out, entry(log::TASK_COMPLETE));
        }
        BLOCKED => {
            let r = reason.unwrap_or_else(|| "blocked (no reason given)".to_string());
            set(doc, i, "blocked_reason", json!(r));
            out.entries
                .push(entry(log::TASK_BLOCKED).detail("Reason", &r));
        }
        RESEARCHED => {
            let e = entry(log::TASK_RESEARCHED).detail("Research", format!("research/{id}.md"));
            out.entries.push(e);
        }
        _ => match action {
            Action::Failed(r) => {
                let msg = r.unwrap_or("the subagent reported a failure");
                out.entries
                    .push(Entry::error(now, Some((id, &from, to)), msg));
            }
            _ => {
                let mut e = entry(log::STATUS_CHANGED).detail("Detail", "set by hand");
                if let Some(r) = &reason {
                    e = e.detail("Reason", r);
                }
                out.entries.push(e);
            }
        },
    }
    let after = ready(doc);
    out.ready_now = after
        .into_iter()
        .filter(|r| !ready_before.contains(r))
        .collect();
    out
}

/// Why a task of project `project` may not start now, if it may not.
pub fn start_refusal(doc: &Value, project: &str, task: &Value) -> Option<String> {
    let id = model::id(task);
    let st = status(task);
    let subs = subtasks(task);
    if !subs.is_empty() {
        return Some(parent_refusal(doc, id, &subs));
    }
    match st {
        BLOCKED => {
            let why = task["blocked_reason"].as_str().unwrap_or("no reason given");
            return Some(format!(
                "{id} is BLOCKED ({why}) and waits for a person: after acting, they run `taskhook projects set {project} {id} PENDING`"
            ));
        }
        COMPLETE | CANCELLED => {
            return Some(format!(
                "{id} is already {st}; `taskhook projects set {project} {id} PENDING` reopens it"
            ))
        }
        IN_PROGRESS => return None,
        _ => {}
    }
    let index = model::Index::new(doc);
    let unmet = index.unmet_deps(id);
    if unmet.is_empty() {
        return None;
    }
    let list: Vec<String> = unmet.iter().map(|(d, s)| format!("{d} ({s})")).collect();
    Some(format!(
        "{id} waits for {} to be COMPLETE{}",
        list.join(", "),
        ready_hint(&index)
    ))
}

fn ready_hint(index: &model::Index<'_>) -> String {
    let r = index.ready();
    if r.is_empty() {
        String::new()
    } else {
        format!("; ready now: {}", r.join(", "))
    }
}

/// The refusal for a parent task: never executed directly, it completes with its subtasks.
fn parent_refusal(doc: &Value, id: &str, subs: &[String]) -> String {
    let named: Vec<String> = subs
        .iter()
        .map(|s| format!("{s} ({})", status_of(doc, s)))
        .collect();
    let ready: Vec<String> = ready(doc)
        .into_iter()
        .filter(|r| subs.contains(r))
        .collect();
    let hint = if ready.is_empty() {
        String::new()
    } else {
        format!(
            "; launch a subagent for a ready subtask instead: {}",
            ready.join(", ")
        )
    };
    format!(
        "{id} is a parent task with subtasks {}; a parent is never executed directly: it completes when all its subtasks are COMPLETE{hint}",
        named.join(", ")
    )
}

/// Marks task `i` COMPLETE, then every parent whose subtasks are now all COMPLETE, then logs
/// the phases this completed.
fn complete(doc: &mut Value, i: usize, now: &str, out: &mut Outcome, entry: Entry) {
    let task = doc["tasks"][i].clone();
    let id = model::id(&task).to_string();
    let actual = if is_parent(&task) {
        children_minutes(doc, &task)
    } else {
        task["started_at"]
            .as_str()
            .and_then(parse_time)
            .zip(parse_time(now))
            .map(|(s, n)| minutes_between(s, n))
    };
    set(doc, i, "completed_at", json!(now));
    set(
        doc,
        i,
        "actual_minutes",
        actual.map_or(Value::Null, |a| json!(a)),
    );
    let mut e = entry.detail(
        "actual_minutes",
        actual.map_or("unknown (no started_at)".to_string(), |a| a.to_string()),
    );
    if let Some(est) = task["estimate_minutes"].as_f64() {
        e = e.detail("estimate_minutes", fmt_num(est));
    }
    if is_parent(&task) {
        e = e.detail("Detail", "all subtasks are COMPLETE");
    }
    if out.completed.is_empty() {
        out.actual_minutes = actual;
    }
    out.entries.push(e);
    out.completed.push(id.clone());
    if let Some(p) = phase(&task).map(str::to_string) {
        if phase_complete(doc, &p) && !out.phases.contains(&p) {
            let n = tasks(doc).iter().filter(|t| phase(t) == Some(&p)).count();
            out.entries.push(
                Entry::new(now, log::PHASE_COMPLETE)
                    .detail("Phase", &p)
                    .detail("Tasks", n.to_string()),
            );
            out.phases.push(p);
        }
    }
    let Some(parent) = parent_of(doc, &id) else {
        return;
    };
    let Some(pi) = index(doc, &parent) else {
        return;
    };
    let ptask = &doc["tasks"][pi];
    let pstatus = status(ptask).to_string();
    let subs = subtasks(ptask);
    if is_finished(&pstatus) || !model::all_done(subs.iter().map(|s| status_of(doc, s))) {
        return;
    }
    if out.completed.contains(&parent) {
        return;
    }
    set(doc, pi, "status", json!(COMPLETE));
    let pe = Entry::task(now, log::TASK_COMPLETE, &parent, &pstatus, COMPLETE);
    complete(doc, pi, now, out, pe);
}

/// A parent's actual time: the sum of its subtasks' `actual_minutes`.
fn children_minutes(doc: &Value, parent: &Value) -> Option<i64> {
    let mins: Vec<f64> = subtasks(parent)
        .iter()
        .filter_map(|s| find(doc, s)?["actual_minutes"].as_f64())
        .collect();
    (!mins.is_empty()).then(|| mins.iter().sum::<f64>().round() as i64)
}

/// A number as a person writes it (`30`, `7.5`).
pub fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-03-01T12:00:00Z";

    fn doc() -> Value {
        json!({"tasks": [
            {"id": "P", "status": "IN_PROGRESS", "subtasks": ["A", "B"], "phase": "build"},
            {"id": "A", "status": "IN_PROGRESS", "parent_id": "P", "phase": "build",
             "estimate_minutes": 30, "started_at": "2026-03-01T11:18:00Z"},
            {"id": "B", "status": "PENDING", "parent_id": "P", "phase": "build", "dependencies": ["A"]},
            {"id": "C", "status": "PENDING", "dependencies": ["P"]},
        ]})
    }

    #[test]
    fn done_completes_and_readies() {
        let mut d = doc();
        let o = apply(&mut d, "web", "A", Action::Done, NOW);
        assert_eq!(
            (o.from.as_str(), o.to.as_str()),
            ("IN_PROGRESS", "COMPLETE")
        );
        assert_eq!(o.actual_minutes, Some(42));
        assert_eq!(o.ready_now, ["B"]);
        assert_eq!(d["tasks"][1]["actual_minutes"], 42);
        assert_eq!(o.entries[0].get("actual_minutes"), Some("42"));
        assert_eq!(o.entries[0].get("estimate_minutes"), Some("30"));
    }

    #[test]
    fn last_subtask_completes_parent_and_phase() {
        let mut d = doc();
        apply(&mut d, "web", "A", Action::Done, NOW);
        assert!(apply(&mut d, "web", "B", Action::Start, NOW)
            .refused
            .is_none());
        let o = apply(&mut d, "web", "B", Action::Done, NOW);
        assert_eq!(o.completed, ["B", "P"]);
        assert_eq!(o.phases, ["build"]);
        assert_eq!(d["tasks"][0]["status"], "COMPLETE");
        assert_eq!(d["tasks"][0]["actual_minutes"], 42);
        assert_eq!(o.ready_now, ["C"]);
        let events: Vec<&str> = o.entries.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(events, ["TASK_COMPLETE", "TASK_COMPLETE", "PHASE_COMPLETE"]);
    }

    #[test]
    fn refusals() {
        let mut d = doc();
        let r = apply(&mut d, "web", "P", Action::Start, NOW)
            .refused
            .unwrap();
        assert!(
            r.contains("parent task with subtasks A (IN_PROGRESS), B (PENDING)"),
            "{r}"
        );
        let r = apply(&mut d, "web", "B", Action::Start, NOW)
            .refused
            .unwrap();
        assert!(r.contains("B waits for A (IN_PROGRESS)"), "{r}");
        assert!(apply(&mut d, "web", "P", Action::Done, NOW)
            .refused
            .is_some());
        assert!(apply(&mut d, "web", "Z", Action::Done, NOW)
            .refused
            .is_some());
        assert_eq!(d, doc(), "refusals change nothing");
    }

    #[test]
    fn failed_blocked_nosignal_researched() {
        let mut d = doc();
        let o = apply(&mut d, "web", "A", Action::Failed(Some("tests red")), NOW);
        assert_eq!(o.to, "PENDING");
        assert_eq!(o.entries[0].event, "ERROR");
        assert_eq!(o.entries[0].get("Error"), Some("tests red"));
        let o = apply(&mut d, "web", "A", Action::Researched, NOW);
        assert_eq!(
            (o.to.as_str(), o.entries[0].event.as_str()),
            ("RESEARCHED", "TASK_RESEARCHED")
        );
        let o = apply(&mut d, "web", "A", Action::NoSignal, NOW);
        assert!(!o.changed);
        assert_eq!(o.entries[0].event, "LOOP_ITERATION");
        let o = apply(
            &mut d,
            "web",
            "A",
            Action::Blocked(Some("needs a key")),
            NOW,
        );
        assert_eq!(d["tasks"][1]["blocked_reason"], "needs a key");
        assert_eq!(o.entries[0].get("Reason"), Some("needs a key"));
        let o = apply(&mut d, "web", "A", Action::Set("PENDING", None), NOW);
        assert_eq!(o.entries[0].event, "STATUS_CHANGED");
        assert_eq!(d["tasks"][1]["blocked_reason"], Value::Null);
    }
}
