//! velocity.json (seed 000): each task's last TASK_COMPLETE in `progress/log.md`, gathered as
//! the log is read ([`LastCompleted`]), counted into totals, a ratio and a rolling window
//! ([`velocity`]), and said in one line ([`velocity_line`]).

use std::collections::HashMap;

use super::log::{label, number, Raw, TASK_COMPLETE};
use super::model::{self, Completed, TaskList, Velocity};

/// How many recent completions the velocity window holds.
pub const VELOCITY_WINDOW: usize = 10;

/// One completed leaf task, as velocity counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub task: String,
    pub estimate: Option<f64>,
    pub actual: Option<f64>,
    pub at: String,
}

/// The last TASK_COMPLETE of each task, gathered entry by entry (a log read as a stream), by
/// its place among the log's entries: one completion per task however often it was completed
/// (the last, in the order of the last), parent tasks left out (their time is their
/// subtasks'); the estimate is the entry's, else the task's.
#[derive(Debug, Default)]
pub struct LastCompleted {
    entries: usize,
    last: HashMap<String, Logged>,
}

/// What a task's last TASK_COMPLETE says.
#[derive(Debug)]
struct Logged {
    place: usize,
    at: String,
    estimate: Option<f64>,
    actual: Option<f64>,
}

impl LastCompleted {
    /// The log's next entry.
    pub fn add(&mut self, raw: &Raw<'_>) {
        let place = self.entries;
        self.entries += 1;
        if raw.event != TASK_COMPLETE {
            return;
        }
        let Some(task) = raw.transition().0 else {
            return;
        };
        let logged = Logged {
            place,
            at: raw.at.to_string(),
            estimate: raw.get(label::ESTIMATE).and_then(number),
            actual: raw.get(label::ACTUAL).and_then(number),
        };
        match self.last.get_mut(task) {
            Some(slot) => *slot = logged,
            None => {
                self.last.insert(task.to_string(), logged);
            }
        }
    }

    /// The completions, in the order of each task's last: each task of `list` looked at once
    /// (no index of the list), parent tasks left out.
    pub fn completions(mut self, list: &TaskList) -> Vec<Completion> {
        let completion = |id: String, l: Logged, task: Option<&model::Task>| {
            if task.is_some_and(model::Task::is_parent) {
                return None;
            }
            let estimate = l.estimate.or_else(|| task.and_then(model::Task::estimate));
            Some((
                l.place,
                Completion {
                    task: id,
                    estimate,
                    actual: l.actual,
                    at: l.at,
                },
            ))
        };
        let mut out: Vec<(usize, Completion)> = Vec::with_capacity(self.last.len());
        // The first task with an id is the one the log's entry is about ([`TaskList::find`]).
        for t in &list.tasks {
            if let Some((id, l)) = self.last.remove_entry(t.id.as_str()) {
                out.extend(completion(id, l, Some(t)));
            }
        }
        for (id, l) in self.last {
            out.extend(completion(id, l, None));
        }
        out.sort_unstable_by_key(|(place, _)| *place);
        out.into_iter().map(|(_, c)| c).collect()
    }
}

fn ratio(actual: f64, estimate: f64) -> Option<f64> {
    (estimate > 0.0).then(|| (actual / estimate * 1000.0).round() / 1000.0)
}

/// velocity.json, recomputed from the completions: all of them counted; totals, ratio and the
/// rolling window over those with both an estimate and an actual time.
pub fn velocity(all: &[Completion], now: &str) -> Velocity {
    let timed: Vec<(&Completion, f64, f64)> = all
        .iter()
        .filter_map(|c| Some((c, c.estimate?, c.actual?)))
        .collect();
    let sum = |xs: &[(&Completion, f64, f64)]| -> (f64, f64) {
        xs.iter().fold((0.0, 0.0), |(e, a), x| (e + x.1, a + x.2))
    };
    let (est, act) = sum(&timed);
    let window = &timed[timed.len().saturating_sub(VELOCITY_WINDOW)..];
    let (west, wact) = sum(window);
    let items: Vec<Completed> = window
        .iter()
        .map(|(c, e, a)| Completed {
            task_id: c.task.clone(),
            estimate_minutes: model::num(*e),
            actual_minutes: model::num(*a),
            completed_at: (crate::store::clock::parse_time(&c.at).is_some() && c.at.ends_with('Z'))
                .then(|| c.at.clone()),
        })
        .collect();
    Velocity {
        tasks_completed: Some(all.len() as u64),
        total_estimate_minutes: model::num(est),
        total_actual_minutes: model::num(act),
        ratio: ratio(act, est),
        window_size: Some(VELOCITY_WINDOW as u64),
        window_ratio: ratio(wact, west),
        window: Some(items),
        updated_at: Some(now.to_string()),
    }
}

/// Velocity in one line, for people and the model.
pub fn velocity_line(v: &Velocity) -> Option<String> {
    let n = v.tasks_completed.filter(|n| *n > 0)?;
    let mut s = format!("{n} task(s) completed");
    let minutes = |x: &Option<serde_json::Number>| x.as_ref().and_then(serde_json::Number::as_f64);
    if let (Some(e), Some(a)) = (
        minutes(&v.total_estimate_minutes),
        minutes(&v.total_actual_minutes),
    ) {
        if e > 0.0 {
            s.push_str(&format!("; {a} min actual vs {e} min estimated"));
        }
    }
    if let Some(r) = v.ratio {
        s.push_str(&format!(" (×{r:.2})"));
    }
    if let (Some(r), Some(w)) = (v.window_ratio, &v.window) {
        if w.len() < n as usize {
            s.push_str(&format!("; last {}: ×{r:.2}", w.len()));
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::projects::log::tests::some_log_line;
    use crate::layouts::projects::log::{parse, scan, Entry};

    /// The reference [`LastCompleted`] is held to, as velocity counted before issue 23: the completions the log records (TASK_COMPLETE entries), one per task however often it was
    /// completed (the last, in the order of the last), leaving out parent tasks (their time is
    /// their subtasks'). The estimate is the entry's, else the task's in `doc`.
    fn completions(entries: &[Entry], list: &TaskList) -> Vec<Completion> {
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            if let (TASK_COMPLETE, Some(t)) = (e.event.as_str(), e.task.as_deref()) {
                last.insert(t, i);
            }
        }
        let index = list.index();
        entries
            .iter()
            .enumerate()
            .filter(|(i, e)| e.task.as_deref().and_then(|t| last.get(t)) == Some(i))
            .map(|(_, e)| e)
            .filter(|e| e.event == TASK_COMPLETE)
            .filter_map(|e| {
                let id = e.task.clone()?;
                let task = index.find(&id);
                if task.is_some_and(model::Task::is_parent) {
                    return None;
                }
                let estimate = e
                    .estimate_minutes()
                    .or_else(|| task.and_then(model::Task::estimate));
                Some(Completion {
                    task: id,
                    estimate,
                    actual: e.actual_minutes(),
                    at: e.at.clone(),
                })
            })
            .collect()
    }

    /// What [`LastCompleted`] gathers from every entry of the log `text`.
    fn completions_in(text: &str, list: &TaskList) -> Vec<Completion> {
        let mut done = LastCompleted::default();
        for raw in scan(text) {
            done.add(&raw);
        }
        done.completions(list)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The completions gathered without entries are those found from them (issue 23).
        #[test]
        fn gathered_completions_match_the_entries(
            lines in proptest::collection::vec(some_log_line(), 0..40),
            tasks in proptest::collection::vec((0..4u8, proptest::bool::ANY, proptest::option::of(0..90u32)), 0..6),
        ) {
            let text = lines.join("\n");
            let tasks: Vec<serde_json::Value> = tasks
                .iter()
                .map(|(n, parent, est)| {
                    let mut t = serde_json::json!({"id": format!("T{n}"), "status": "COMPLETE"});
                    if *parent {
                        t["subtasks"] = serde_json::json!(["T3"]);
                    }
                    if let Some(e) = est {
                        t["estimate_minutes"] = serde_json::json!(e);
                    }
                    t
                })
                .collect();
            let list: TaskList =
                crate::layouts::json::typed(&serde_json::json!({"tasks": tasks})).unwrap();
            proptest::prop_assert_eq!(completions_in(&text, &list), completions(&parse(&text), &list));
        }
    }

    #[test]
    fn velocity_counts_and_windows() {
        let mk = |i: usize, e: Option<f64>, a: Option<f64>| Completion {
            task: format!("T{i}"),
            estimate: e,
            actual: a,
            at: "2026-03-01T12:00:00Z".into(),
        };
        let mut all: Vec<Completion> = (0..12).map(|i| mk(i, Some(10.0), Some(20.0))).collect();
        all.push(mk(99, None, Some(5.0)));
        let v = velocity(&all, "2026-03-01T12:00:00Z");
        assert_eq!(v.tasks_completed, Some(13));
        // A task completed twice (reopened, or redone) counts once: its last completion.
        let done = |t: &str, a: &str| {
            Entry::task(
                "2026-03-01T12:00:00Z",
                TASK_COMPLETE,
                t,
                "IN_PROGRESS",
                "COMPLETE",
            )
            .detail("actual_minutes", a)
        };
        let twice = [done("T1", "5"), done("T2", "7"), done("T1", "9")];
        let text: String = twice.iter().map(Entry::render).collect();
        let c = completions_in(&text, &TaskList::default());
        let got: Vec<(&str, Option<f64>)> = c.iter().map(|c| (c.task.as_str(), c.actual)).collect();
        assert_eq!(got, [("T2", Some(7.0)), ("T1", Some(9.0))]);
        let doc = serde_json::to_value(&v).unwrap();
        assert_eq!(doc["total_estimate_minutes"], 120.0);
        assert_eq!(doc["ratio"], 2.0);
        assert_eq!(doc["window"].as_array().unwrap().len(), VELOCITY_WINDOW);
        assert_eq!(doc["window"][0]["task_id"], "T2");
        let line = velocity_line(&v).unwrap();
        assert!(
            line.starts_with("13 task(s) completed; 240 min actual"),
            "{line}"
        );
    }
}
