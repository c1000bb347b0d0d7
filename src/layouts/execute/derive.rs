//! Everything in execute-state.json that follows from the tasks, recomputed on every write so
//! it never drifts: each layer's counters, status and times, `current_layer`, `current_batch`,
//! the global `status`, `started_at` / `completed_at`, the merge queue's statuses, `metrics`
//! and `updated_at`.
//!
//! The seed's own example lists 3 of layer `2-backend`'s 6 tasks (and counts 15 tasks in all):
//! a state written by the `/execute` skill may count tasks it does not list. What the file
//! counted beyond the tasks it lists is kept as a fixed baseline (taken from the file before
//! the change, clamped so it can never exceed what is possible); everything else is a recount.
//! A state taskhook created lists every task, so its baseline is zero and every counter is
//! exactly a recount. A task that becomes listed (git recovery) leaves the baseline.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::state::{attempts, id_layer_number, layer_order, leading_number, status};
use crate::layouts::json::object_at;
use crate::store::clock::parse_time;

/// Task counters of a layer (or of the whole run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: u64,
    pub completed: u64,
    pub failed: u64,
}

impl Counts {
    fn add(self, o: Counts) -> Counts {
        Counts {
            total: self.total + o.total,
            completed: self.completed + o.completed,
            failed: self.failed + o.failed,
        }
    }

    fn count(&mut self, status: &str) {
        self.total += 1;
        match status {
            "completed" => self.completed += 1,
            "failed" | "abandoned" => self.failed += 1,
            _ => {}
        }
    }

    /// What `written` counts beyond `listed`, made possible (completed + failed ≤ total).
    fn beyond(written: Counts, listed: Counts) -> Counts {
        let total = written.total.saturating_sub(listed.total);
        let completed = written
            .completed
            .saturating_sub(listed.completed)
            .min(total);
        let failed = written
            .failed
            .saturating_sub(listed.failed)
            .min(total - completed);
        Counts {
            total,
            completed,
            failed,
        }
    }

    /// The baseline after a task it counted became listed with `status`.
    fn without(mut self, status: &str) -> Counts {
        self.total = self.total.saturating_sub(1);
        match status {
            "completed" => self.completed = self.completed.saturating_sub(1),
            "failed" | "abandoned" => self.failed = self.failed.saturating_sub(1),
            _ => {}
        }
        self.completed = self.completed.min(self.total);
        self.failed = self.failed.min(self.total - self.completed);
        self
    }
}

/// The run-wide counters `metrics` holds (elapsed time aside).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    tasks: Counts,
    attempts: u64,
    commits: u64,
}

fn n(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn written_counts(layer: &Value) -> Option<Counts> {
    Some(Counts {
        total: n(layer, "tasks_total")?,
        completed: n(layer, "tasks_completed").unwrap_or(0),
        failed: n(layer, "tasks_failed").unwrap_or(0),
    })
}

/// A task the state lists, as the counts see it.
struct Listed {
    id: String,
    status: String,
    /// Its layer, as [`super::state::layer_of`] finds it.
    layer: Option<String>,
}

/// The tasks a state lists, in the file's order, each with its status and layer: worked out
/// once per state, each layer found in a table of the layer keys by number (not by a scan of
/// the keys per task).
fn listing(state: &Value) -> Vec<Listed> {
    let layers = state.get("layers").and_then(Value::as_object);
    let mut by_number: HashMap<u64, &str> = HashMap::new();
    for k in layers.into_iter().flat_map(|m| m.keys()) {
        if let Some(n) = leading_number(k) {
            by_number.entry(n).or_insert(k);
        }
    }
    let layer_of = |id: &str, t: &Value| -> Option<String> {
        let layers = layers?;
        if let Some(l) = t
            .get("layer")
            .and_then(Value::as_str)
            .filter(|l| layers.contains_key(*l))
        {
            return Some(l.to_string());
        }
        by_number.get(&id_layer_number(id)?).map(|k| k.to_string())
    };
    state
        .get("tasks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(id, t)| Listed {
            id: id.clone(),
            status: status(t).to_string(),
            layer: layer_of(id, t),
        })
        .collect()
}

/// The listed tasks counted per layer, and those in no layer.
fn listed(list: &[Listed]) -> (BTreeMap<String, Counts>, Counts) {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let mut free = Counts::default();
    for t in list {
        match &t.layer {
            Some(l) => per.entry(l.clone()).or_default().count(&t.status),
            None => free.count(&t.status),
        }
    }
    (per, free)
}

fn listed_work(state: &Value) -> (u64, u64) {
    let mut a = 0;
    let mut c = 0;
    if let Some(tasks) = state.get("tasks").and_then(Value::as_object) {
        for t in tasks.values() {
            a += attempts(t);
            c += t
                .get("commits")
                .and_then(Value::as_array)
                .map_or(0, |x| x.len() as u64);
        }
    }
    (a, c)
}

/// Per layer: what the file counts beyond the tasks it lists.
fn layer_baselines(state: &Value, list: &[Listed]) -> BTreeMap<String, Counts> {
    let (per, _) = listed(list);
    layer_order(state)
        .into_iter()
        .map(|l| {
            let b = written_counts(&state["layers"][&l])
                .map(|w| Counts::beyond(w, per.get(&l).copied().unwrap_or_default()))
                .unwrap_or_default();
            (l, b)
        })
        .collect()
}

/// The run's totals counted from the layers (with their baselines) and the listed tasks.
fn totals(state: &Value, list: &[Listed], baselines: &BTreeMap<String, Counts>) -> Totals {
    let (per, free) = listed(list);
    let mut tasks = free;
    for l in layer_order(state) {
        let c = per.get(&l).copied().unwrap_or_default();
        tasks = tasks.add(c.add(baselines.get(&l).copied().unwrap_or_default()));
    }
    let (attempts, commits) = listed_work(state);
    Totals {
        tasks,
        attempts,
        commits,
    }
}

/// What the file's `metrics` count beyond `recount`.
fn metrics_baseline(state: &Value, recount: Totals) -> Totals {
    let m = &state["metrics"];
    let tasks = match n(m, "total_tasks") {
        Some(total) => Counts::beyond(
            Counts {
                total,
                completed: n(m, "completed_tasks").unwrap_or(0),
                failed: n(m, "failed_tasks").unwrap_or(0),
            },
            recount.tasks,
        ),
        None => Counts::default(),
    };
    let more = |key: &str, have: u64| n(m, key).map_or(0, |w| w.saturating_sub(have));
    Totals {
        tasks,
        attempts: more("total_attempts", recount.attempts),
        commits: more("total_commits", recount.commits),
    }
}

fn set_if_changed(m: &mut Map<String, Value>, key: &str, v: Value) {
    if m.get(key) != Some(&v) {
        m.insert(key.to_string(), v);
    }
}

/// Recomputes everything derived in `state`; `before` is the file as it was before this
/// change (for the baselines and the transitions that stamp times).
pub fn derive(before: &Value, state: &mut Value, now: &str) {
    let before_list = listing(before);
    let mut baselines = layer_baselines(before, &before_list);
    let before_totals = totals(before, &before_list, &baselines);
    let mut extra = metrics_baseline(before, before_totals);
    // Tasks the file now lists that it did not: they leave the baselines.
    let known: HashSet<&str> = before_list.iter().map(|t| t.id.as_str()).collect();
    // Deriving changes no task and no layer key, so each task's layer stays as listed here.
    let list = listing(state);
    for t in list.iter().filter(|t| !known.contains(t.id.as_str())) {
        match &t.layer {
            Some(l) => {
                let b = baselines.entry(l.clone()).or_default();
                *b = b.without(&t.status);
            }
            None => extra.tasks = extra.tasks.without(&t.status),
        }
    }
    let order = layer_order(state);
    let (per, _) = listed(&list);
    let moving: HashSet<&str> = list
        .iter()
        .filter(|t| t.status != "pending")
        .filter_map(|t| t.layer.as_deref())
        .collect();
    let mut layer_status: Vec<(String, String, Counts)> = Vec::new();
    for l in &order {
        let c = per
            .get(l)
            .copied()
            .unwrap_or_default()
            .add(baselines.get(l).copied().unwrap_or_default());
        let started = moving.contains(l.as_str()) || c.completed + c.failed > 0;
        let old = before["layers"][l]["status"]
            .as_str()
            .unwrap_or("pending")
            .to_string();
        let written = state["layers"][l]["status"]
            .as_str()
            .unwrap_or("pending")
            .to_string();
        let st = if c.total == 0 {
            written
        } else if c.completed == c.total {
            "completed".to_string()
        } else if started || old != "pending" {
            "in_progress".to_string()
        } else {
            "pending".to_string()
        };
        let layers = object_at(crate::layouts::json::ensure_object(state), "layers");
        let m = crate::layouts::json::ensure_object(layers.entry(l.clone()).or_insert(json!({})));
        set_if_changed(m, "status", json!(st));
        set_if_changed(m, "tasks_total", json!(c.total));
        set_if_changed(m, "tasks_completed", json!(c.completed));
        set_if_changed(m, "tasks_failed", json!(c.failed));
        if old == "pending" && st != "pending" && !m.get("started_at").is_some_and(Value::is_string)
        {
            m.insert("started_at".into(), json!(now));
        }
        if st == "completed" && old != "completed" {
            m.insert("completed_at".into(), json!(now));
        } else if st != "completed" && m.get("completed_at").is_some_and(|v| !v.is_null()) {
            m.insert("completed_at".into(), Value::Null);
        }
        layer_status.push((l.clone(), st, c));
    }
    derive_run(before, state, &layer_status, now, &list);
    derive_queue(state, &list);
    let after = totals(state, &list, &baselines);
    let tasks = after.tasks.add(extra.tasks);
    let elapsed = elapsed(state, now);
    let root = crate::layouts::json::ensure_object(state);
    let m = object_at(root, "metrics");
    set_if_changed(m, "total_tasks", json!(tasks.total));
    set_if_changed(m, "completed_tasks", json!(tasks.completed));
    set_if_changed(m, "failed_tasks", json!(tasks.failed));
    set_if_changed(m, "total_attempts", json!(after.attempts + extra.attempts));
    set_if_changed(m, "total_commits", json!(after.commits + extra.commits));
    set_if_changed(m, "elapsed_time_seconds", json!(elapsed));
    root.insert("updated_at".into(), json!(now));
}

/// Seconds from `started_at` to `completed_at` (a finished run) or now.
fn elapsed(state: &Value, now: &str) -> u64 {
    let Some(start) = state["started_at"].as_str().and_then(parse_time) else {
        return 0;
    };
    let end = state["completed_at"]
        .as_str()
        .filter(|_| state["status"] == "completed")
        .unwrap_or(now);
    parse_time(end)
        .map(|e| (e - start).num_seconds().max(0) as u64)
        .unwrap_or(0)
}

/// Global status, start and completion times, current layer and batch.
fn derive_run(
    before: &Value,
    state: &mut Value,
    layers: &[(String, String, Counts)],
    now: &str,
    list: &[Listed],
) {
    let free_done = list
        .iter()
        .filter(|t| t.layer.is_none())
        .all(|t| t.status == "completed");
    let all_done = (!layers.is_empty() || !list.is_empty())
        && layers.iter().all(|(_, s, _)| s == "completed")
        && free_done;
    let started =
        list.iter().any(|t| t.status != "pending") || layers.iter().any(|(_, s, _)| s != "pending");
    let written = super::state::global(state).to_string();
    let st = if list.iter().any(|t| t.status == "abandoned") {
        "abandoned"
    } else if written == "stopped" || state.get("stop").is_some_and(Value::is_object) {
        "stopped"
    } else if all_done {
        "completed"
    } else if started {
        "in_progress"
    } else {
        "pending"
    };
    let current = layers
        .iter()
        .find(|(_, s, _)| s != "completed")
        .map(|(l, _, _)| l.clone());
    let batch = current.as_ref().and_then(|l| {
        list.iter()
            .filter(|t| t.layer.as_ref() == Some(l))
            .filter_map(|t| state["tasks"][&t.id]["batch"].as_u64())
            .max()
    });
    let same_layer = before.get("current_layer") == Some(&json!(current));
    let root = crate::layouts::json::ensure_object(state);
    set_if_changed(root, "status", json!(st));
    if st != "pending" && !root.get("started_at").is_some_and(Value::is_string) {
        root.insert("started_at".into(), json!(now));
    }
    if st == "completed" {
        if !root.get("completed_at").is_some_and(Value::is_string) {
            root.insert("completed_at".into(), json!(now));
        }
    } else if root.get("completed_at").is_some_and(|v| !v.is_null()) {
        root.insert("completed_at".into(), Value::Null);
    }
    if !layers.is_empty() {
        set_if_changed(root, "current_layer", json!(current));
        match batch {
            Some(b) => set_if_changed(root, "current_batch", json!(b)),
            None if same_layer => {}
            None => set_if_changed(root, "current_batch", Value::Null),
        }
    }
}

/// The queue's statuses follow the tasks (completed → merged, merging → merging, verified →
/// ready, anything else → pending); a verified or merging task missing from the queue joins it
/// at the next priority. Entries of tasks the state does not list are left as they are.
fn derive_queue(state: &mut Value, list: &[Listed]) {
    let task_status: BTreeMap<&str, &str> = list
        .iter()
        .map(|t| (t.id.as_str(), t.status.as_str()))
        .collect();
    let root = crate::layouts::json::ensure_object(state);
    let queue = crate::layouts::json::array_at(root, "merge_queue");
    for e in queue.iter_mut() {
        let Some(id) = e["task_id"].as_str() else {
            continue;
        };
        let Some(ts) = task_status.get(id) else {
            continue;
        };
        let want = match *ts {
            "completed" => "merged",
            "merging" => "merging",
            "verified" => "ready",
            _ => "pending",
        };
        if e["status"] != want {
            e["status"] = json!(want);
        }
    }
    let mut queued: HashSet<String> = queue
        .iter()
        .filter_map(|e| e["task_id"].as_str().map(str::to_string))
        .collect();
    let mut next = None;
    for (id, ts) in task_status {
        let want = match ts {
            "verified" => "ready",
            "merging" => "merging",
            _ => continue,
        };
        if queued.insert(id.to_string()) {
            let p = *next.get_or_insert_with(|| next_priority(queue));
            next = Some(p + 1);
            queue.push(json!({"task_id": id, "priority": p, "status": want}));
        }
    }
}

/// The priority after the highest in the queue (1 for an empty queue).
pub fn next_priority(queue: &[Value]) -> i64 {
    queue
        .iter()
        .filter_map(|e| e["priority"].as_i64())
        .max()
        .unwrap_or(0)
        + 1
}

#[cfg(test)]
#[path = "derive_tests.rs"]
pub(crate) mod tests;
