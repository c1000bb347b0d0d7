//! Seed 000's task transitions as one pure step: `apply(doc, task, action, now)` changes the
//! master list in memory and says which log entries record it, what it completed (parents
//! whose subtasks are all COMPLETE, phases whose tasks are), what it made ready, or why it was
//! refused. Hooks (a launch, a subagent's signal, a research file written) and commands
//! (`projects start`, `projects set`) drive the same step, so both always agree.

use super::index::{Index, Links};
use super::log::{self, Entry};
use super::model::{self, minutes_between, Status, TaskList};
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
    Set(Status, Option<&'a str>),
}

/// What one step did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The task's status before and after (`None`: there is no such task).
    pub from: Option<Status>,
    pub to: Option<Status>,
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

fn refuse(from: Option<Status>, why: String) -> Outcome {
    Outcome {
        from,
        to: from,
        refused: Some(why),
        ..Default::default()
    }
}

/// Applies `action` to task `id` of project `project` at `now` (`YYYY-MM-DDTHH:MM:SSZ`).
pub fn apply(
    list: &mut TaskList,
    project: &str,
    id: &str,
    action: Action<'_>,
    now: &str,
) -> Outcome {
    let Some(i) = list.position(id) else {
        return refuse(None, format!("there is no task {id}"));
    };
    let from = list.tasks[i].status;
    // One look at the links for the whole step: a transition changes statuses, not links.
    let links = list.index().into_links();
    let ready_before = links.ready(&list.tasks);
    let subs: Vec<String> = list.tasks[i].subtasks().map(str::to_string).collect();
    let mut out = Outcome {
        from: Some(from),
        to: Some(from),
        ..Default::default()
    };
    let to = match action {
        Action::Start => {
            if let Some(why) = start_refusal(list, project, id) {
                return refuse(Some(from), why);
            }
            Status::InProgress
        }
        Action::Done | Action::Set(Status::Complete, _) => {
            if from == Status::Complete {
                return out;
            }
            if !subs.is_empty() {
                let index = list.index();
                if !model::all_done(subs.iter().map(|s| index.status_of(s))) {
                    return refuse(Some(from), parent_refusal(&index, id, &subs));
                }
            }
            Status::Complete
        }
        Action::Blocked(_) => Status::Blocked,
        Action::Failed(_) => {
            if from.is_finished() {
                return out;
            }
            Status::Pending
        }
        Action::NoSignal => {
            if from.is_finished() {
                return out;
            }
            out.entries.push(
                Entry::task(now, log::LOOP_ITERATION, id, from.as_str(), from.as_str()).detail(
                    "Detail",
                    "the bound subagent stopped without a signal; the task is not finished",
                ),
            );
            return out;
        }
        Action::Researched => {
            if from != Status::Pending && from != Status::InResearch {
                return out;
            }
            Status::Researched
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
    if to == from && list.tasks[i].blocked_reason() == reason.as_deref() {
        if let Action::Failed(r) = action {
            let msg = r.unwrap_or("the subagent reported a failure");
            out.entries.push(Entry::error(
                now,
                Some((id, from.as_str(), to.as_str())),
                msg,
            ));
        }
        return out;
    }
    out.to = Some(to);
    out.changed = true;
    let t = &mut list.tasks[i];
    t.status = to;
    if from == Status::Blocked && to != Status::Blocked {
        t.blocked_reason = Some(None);
        if t.stale_count.is_some() {
            t.stale_count = Some(0.into());
        }
    }
    if from == Status::Complete {
        t.completed_at = Some(None);
        t.actual_minutes = Some(None);
    }
    let entry = |event: &str| Entry::task(now, event, id, from.as_str(), to.as_str());
    match to {
        Status::InProgress => {
            t.started_at = Some(Some(now.to_string()));
            out.entries.push(entry(log::TASK_STARTED));
        }
        Status::Complete => {
            complete(list, &links, i, now, &mut out, entry(log::TASK_COMPLETE));
        }
        Status::Blocked => {
            let r = reason.unwrap_or_else(|| "blocked (no reason given)".to_string());
            t.blocked_reason = Some(Some(r.clone()));
            out.entries
                .push(entry(log::TASK_BLOCKED).detail(log::label::REASON, &r));
        }
        Status::Researched => {
            let e = entry(log::TASK_RESEARCHED).detail("Research", format!("research/{id}.md"));
            out.entries.push(e);
        }
        _ => match action {
            Action::Failed(r) => {
                let msg = r.unwrap_or("the subagent reported a failure");
                out.entries.push(Entry::error(
                    now,
                    Some((id, from.as_str(), to.as_str())),
                    msg,
                ));
            }
            _ => {
                let mut e = entry(log::STATUS_CHANGED).detail("Detail", "set by hand");
                if let Some(r) = &reason {
                    e = e.detail(log::label::REASON, r);
                }
                out.entries.push(e);
            }
        },
    }
    let after = links.ready(&list.tasks);
    out.ready_now = links
        .newly_ready(&ready_before, after)
        .into_iter()
        .map(|r| list.tasks[r].id.clone())
        .collect();
    out
}

/// Why task `id` of project `project` may not start now, if it may not.
pub fn start_refusal(list: &TaskList, project: &str, id: &str) -> Option<String> {
    let index = list.index();
    let task = index.find(id)?;
    let st = task.status;
    let subs: Vec<String> = task.subtasks().map(str::to_string).collect();
    if !subs.is_empty() {
        return Some(parent_refusal(&index, id, &subs));
    }
    match st {
        Status::Blocked => {
            let why = task.blocked_reason().unwrap_or("no reason given");
            return Some(format!(
                "{id} is BLOCKED ({why}) and waits for a person: after acting, they run `taskhook projects set {project} {id} PENDING`"
            ));
        }
        Status::Complete | Status::Cancelled => {
            return Some(format!(
                "{id} is already {st}; `taskhook projects set {project} {id} PENDING` reopens it"
            ))
        }
        Status::InProgress => return None,
        _ => {}
    }
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

fn ready_hint(index: &Index<'_>) -> String {
    let r = index.ready();
    if r.is_empty() {
        String::new()
    } else {
        format!("; ready now: {}", r.join(", "))
    }
}

/// The refusal for a parent task: never executed directly, it completes with its subtasks.
fn parent_refusal(index: &Index<'_>, id: &str, subs: &[String]) -> String {
    let named: Vec<String> = subs
        .iter()
        .map(|s| format!("{s} ({})", model::name(index.status_of(s))))
        .collect();
    let ready: Vec<String> = index
        .ready()
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
fn complete(
    list: &mut TaskList,
    links: &Links,
    i: usize,
    now: &str,
    out: &mut Outcome,
    entry: Entry,
) {
    let task = &list.tasks[i];
    let id = task.id.clone();
    let parent = task.is_parent();
    let actual = if parent {
        children_minutes(list, links, i)
    } else {
        task.started_at()
            .and_then(parse_time)
            .zip(parse_time(now))
            .map(|(s, n)| minutes_between(s, n))
    };
    let estimate = task.estimate();
    let phase = task.phase().map(str::to_string);
    let task = &mut list.tasks[i];
    task.completed_at = Some(Some(now.to_string()));
    task.actual_minutes = Some(actual.map(Into::into));
    let mut e = entry.detail(
        log::label::ACTUAL,
        actual.map_or("unknown (no started_at)".to_string(), |a| a.to_string()),
    );
    if let Some(est) = estimate {
        e = e.detail(log::label::ESTIMATE, fmt_num(est));
    }
    if parent {
        e = e.detail("Detail", "all subtasks are COMPLETE");
    }
    if out.completed.is_empty() {
        out.actual_minutes = actual;
    }
    out.entries.push(e);
    out.completed.push(id.clone());
    if let Some(p) = phase {
        if list.phase_complete(&p) && !out.phases.contains(&p) {
            let n = list.tasks.iter().filter(|t| t.phase() == Some(&p)).count();
            out.entries.push(
                Entry::new(now, log::PHASE_COMPLETE)
                    .detail("Phase", &p)
                    .detail("Tasks", n.to_string()),
            );
            out.phases.push(p);
        }
    }
    // The parent, and whether this completion finishes it.
    let Some(pi) = links.parent_at(i) else {
        return;
    };
    let status = |s: Option<usize>| s.map(|s| list.tasks[s].status);
    let pstatus = list.tasks[pi].status;
    if pstatus.is_finished() || !model::all_done(links.subtasks_at(pi).map(status)) {
        return;
    }
    let parent = list.tasks[pi].id.clone();
    if out.completed.contains(&parent) {
        return;
    }
    list.tasks[pi].status = Status::Complete;
    let pe = Entry::task(
        now,
        log::TASK_COMPLETE,
        &parent,
        pstatus.as_str(),
        Status::Complete.as_str(),
    );
    complete(list, links, pi, now, out, pe);
}

/// A parent's actual time: the sum of its subtasks' `actual_minutes`.
fn children_minutes(list: &TaskList, links: &Links, i: usize) -> Option<i64> {
    let mins: Vec<f64> = links
        .subtasks_at(i)
        .filter_map(|s| list.tasks[s?].actual())
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
    use crate::layouts::json::typed;
    use serde_json::{json, Value};

    const NOW: &str = "2026-03-01T12:00:00Z";

    fn doc() -> TaskList {
        typed(&json!({"tasks": [
            {"id": "P", "status": "IN_PROGRESS", "subtasks": ["A", "B"], "phase": "build"},
            {"id": "A", "status": "IN_PROGRESS", "parent_id": "P", "phase": "build",
             "estimate_minutes": 30, "started_at": "2026-03-01T11:18:00Z"},
            {"id": "B", "status": "PENDING", "parent_id": "P", "phase": "build", "dependencies": ["A"]},
            {"id": "C", "status": "PENDING", "dependencies": ["P"]},
        ]}))
        .unwrap()
    }

    fn field(d: &TaskList, i: usize, key: &str) -> Value {
        serde_json::to_value(&d.tasks[i]).unwrap()[key].clone()
    }

    fn pair(o: &Outcome) -> (&str, &str) {
        (model::name(o.from), model::name(o.to))
    }

    #[test]
    fn done_completes_and_readies() {
        let mut d = doc();
        let o = apply(&mut d, "web", "A", Action::Done, NOW);
        assert_eq!(pair(&o), ("IN_PROGRESS", "COMPLETE"));
        assert_eq!(o.actual_minutes, Some(42));
        assert_eq!(o.ready_now, ["B"]);
        assert_eq!(field(&d, 1, "actual_minutes"), 42);
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
        assert_eq!(field(&d, 0, "status"), "COMPLETE");
        assert_eq!(field(&d, 0, "actual_minutes"), 42);
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
        assert_eq!(pair(&o).1, "PENDING");
        assert_eq!(o.entries[0].event, "ERROR");
        assert_eq!(o.entries[0].get("Error"), Some("tests red"));
        let o = apply(&mut d, "web", "A", Action::Researched, NOW);
        assert_eq!(
            (pair(&o).1, o.entries[0].event.as_str()),
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
        assert_eq!(field(&d, 1, "blocked_reason"), "needs a key");
        assert_eq!(o.entries[0].get("Reason"), Some("needs a key"));
        let o = apply(&mut d, "web", "A", Action::Set(Status::Pending, None), NOW);
        assert_eq!(o.entries[0].event, "STATUS_CHANGED");
        assert_eq!(field(&d, 1, "blocked_reason"), Value::Null);
    }

    /// A random valid list: ids from a small pool (duplicates, parents, cycles happen), any
    /// status, optional estimates, start times, reasons and phases.
    fn some_list() -> impl proptest::strategy::Strategy<Value = TaskList> {
        use proptest::prelude::*;
        let id = (0..6u8).prop_map(|n| format!("T{n}"));
        let task = (
            id.clone(),
            prop::sample::select(Status::ALL.to_vec()),
            prop::collection::vec(id.clone(), 0..3),
            prop::collection::vec(id, 0..2),
            prop::option::of(0..90u32),
            prop::option::of(prop::sample::select(vec!["p1", "p2"])),
            any::<bool>(),
        )
            .prop_map(|(id, st, subs, deps, est, phase, started)| {
                let mut t = json!({"id": id, "status": st, "dependencies": deps});
                if subs.len() == 2 {
                    t["subtasks"] = json!(subs);
                }
                if let Some(e) = est {
                    t["estimate_minutes"] = json!(e);
                }
                if let Some(ph) = phase {
                    t["phase"] = json!(ph);
                }
                if started {
                    t["started_at"] = json!("2026-03-01T11:00:00Z");
                    t["blocked_reason"] = json!(null);
                }
                t
            });
        prop::collection::vec(task, 1..10)
            .prop_map(|tasks| typed(&json!({"tasks": tasks})).unwrap())
    }

    fn some_action() -> impl proptest::strategy::Strategy<Value = Action<'static>> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Action::Start),
            Just(Action::Done),
            Just(Action::Blocked(Some("needs a key"))),
            Just(Action::Failed(None)),
            Just(Action::NoSignal),
            Just(Action::Researched),
            prop::sample::select(Status::ALL.to_vec()).prop_map(|s| Action::Set(s, None)),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The step's promises, on random lists and actions: a refusal changes nothing and logs
        /// nothing; a change is always logged (SessionStart relies on it), and what it leaves
        /// is still a list the schema accepts.
        #[test]
        fn a_step_logs_every_change_and_refuses_without_a_trace(
            list in some_list(),
            action in some_action(),
            n in 0..7u8,
        ) {
            let id = format!("T{n}");
            let mut after = list.clone();
            let o = apply(&mut after, "web", &id, action, NOW);
            if o.refused.is_some() {
                proptest::prop_assert_eq!(&after, &list);
                proptest::prop_assert!(o.entries.is_empty());
            }
            proptest::prop_assert_eq!(o.changed, after != list);
            if o.changed {
                proptest::prop_assert!(!o.entries.is_empty());
                let mut doc = serde_json::to_value(&list).unwrap();
                crate::layouts::json::write_back(&mut doc, &after).unwrap();
                let checked = crate::store::schema::check(crate::layouts::projects::SCHEMA_TASKS, &doc);
                proptest::prop_assert!(matches!(checked, Ok(Ok(()))), "{:?}", checked);
            }
        }

        /// A change written in place (only the changed tasks' bytes replaced) gives the very
        /// bytes the whole document written back would: for a file taskhook wrote, byte for
        /// byte; for one formatted otherwise, the same document.
        #[test]
        fn a_change_written_in_place_is_the_whole_write(
            list in some_list(),
            action in some_action(),
            n in 0..7u8,
        ) {
            let id = format!("T{n}");
            let mut after = list.clone();
            apply(&mut after, "web", &id, action, NOW);
            let doc = serde_json::to_value(&list).unwrap();
            let mut whole = doc.clone();
            crate::layouts::json::write_back(&mut whole, &after).unwrap();
            let pretty = crate::store::to_pretty(&doc);
            let in_place = super::super::save::spliced(&pretty, &list, &after).unwrap();
            // Every change of this step keeps the tasks in their places.
            proptest::prop_assert!(in_place.is_some());
            proptest::prop_assert_eq!(
                String::from_utf8(in_place.unwrap()).unwrap(),
                String::from_utf8(crate::store::to_pretty(&whole)).unwrap()
            );
            // A splice knows when it is its base unchanged (the write is then skipped).
            let splice = super::super::save::splice(&pretty, &list, &after).unwrap().unwrap();
            proptest::prop_assert_eq!(splice.is_base(&pretty), whole == doc);
            proptest::prop_assert_eq!(splice.len(), crate::store::to_pretty(&whole).len());
            let compact = serde_json::to_vec(&doc).unwrap();
            let in_place = super::super::save::spliced(&compact, &list, &after).unwrap().unwrap();
            let read: serde_json::Value = serde_json::from_slice(&in_place).unwrap();
            proptest::prop_assert_eq!(read, whole);
        }
    }
}
