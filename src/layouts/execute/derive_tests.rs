//! Tests of the derived counts (`derive.rs`), with the scans they replaced kept as the
//! reference the property test holds them to.

use super::*;
use crate::layouts::json::{typed, write_back};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// [`super::derive`] over a state given as JSON: typed, derived, written back.
fn derive(before: &Value, state: &mut Value, now: &str) {
    let b: State = typed(before).unwrap();
    let mut s: State = typed(state).unwrap();
    super::derive(&b, &mut s, now);
    write_back(state, &s).unwrap();
}

/// [`crate::layouts::execute::state::differs`] of two states given as JSON.
fn differs(a: &Value, b: &Value) -> bool {
    crate::layouts::execute::state::differs(&typed(a).unwrap(), &typed(b).unwrap())
}

/// `derive` as it was before the listing (issue 23): each task's layer looked up by a scan
/// of the layer keys, the tasks seen before by a list. The reference the new one must match.
mod reference {
    use super::super::{Counts, Totals};
    use crate::layouts::execute::model::TaskStatus;
    use crate::layouts::execute::state::{id_layer_number, leading_number};
    use crate::layouts::json::object_at;
    use crate::store::clock::parse_time;
    use serde_json::{json, Map, Value};
    use std::collections::BTreeMap;

    // The JSON helpers the scans used, as they were.

    fn status(task: &Value) -> &str {
        task.get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending")
    }

    fn ts(status: &str) -> TaskStatus {
        serde_json::from_value(json!(status)).unwrap()
    }

    fn attempts(task: &Value) -> u64 {
        task.get("attempts").and_then(Value::as_u64).unwrap_or(0)
    }

    fn task_ids(state: &Value) -> Vec<String> {
        state
            .get("tasks")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn global(state: &Value) -> &str {
        state
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending")
    }

    fn layer_order(state: &Value) -> Vec<String> {
        let mut keys: Vec<String> = state
            .get("layers")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if keys.iter().all(|k| leading_number(k).is_some()) {
            keys.sort_by_key(|k| leading_number(k).unwrap_or(0));
        }
        keys
    }

    fn layer_of(state: &Value, id: &str) -> Option<String> {
        let layers = state.get("layers").and_then(Value::as_object)?;
        if let Some(l) = state["tasks"][id]
            .get("layer")
            .and_then(Value::as_str)
            .filter(|l| layers.contains_key(*l))
        {
            return Some(l.to_string());
        }
        let n = id_layer_number(id)?;
        layers
            .keys()
            .find(|k| leading_number(k) == Some(n))
            .cloned()
    }

    fn layer_tasks(state: &Value, layer: &str) -> Vec<String> {
        task_ids(state)
            .into_iter()
            .filter(|id| layer_of(state, id).as_deref() == Some(layer))
            .collect()
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

    fn next_priority(queue: &[Value]) -> i64 {
        queue
            .iter()
            .filter_map(|e| e["priority"].as_i64())
            .max()
            .unwrap_or(0)
            + 1
    }

    /// The listed tasks counted per layer, and those in no layer.
    fn listed(state: &Value) -> (BTreeMap<String, Counts>, Counts) {
        let mut per: BTreeMap<String, Counts> = BTreeMap::new();
        let mut free = Counts::default();
        for id in task_ids(state) {
            let st = state["tasks"][&id].clone();
            match layer_of(state, &id) {
                Some(l) => per.entry(l).or_default().count(ts(status(&st))),
                None => free.count(ts(status(&st))),
            }
        }
        (per, free)
    }

    /// Per layer: what the file counts beyond the tasks it lists.
    fn layer_baselines(state: &Value) -> BTreeMap<String, Counts> {
        let (per, _) = listed(state);
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
    fn totals(state: &Value, baselines: &BTreeMap<String, Counts>) -> Totals {
        let (per, free) = listed(state);
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

    /// Recomputes everything derived in `state`; `before` is the file as it was before this
    /// change (for the baselines and the transitions that stamp times).
    pub fn derive(before: &Value, state: &mut Value, now: &str) {
        let mut baselines = layer_baselines(before);
        let before_totals = totals(before, &baselines);
        let mut extra = metrics_baseline(before, before_totals);
        // Tasks the file now lists that it did not: they leave the baselines.
        let known: Vec<String> = task_ids(before);
        for id in task_ids(state) {
            if known.contains(&id) {
                continue;
            }
            let st = status(&state["tasks"][&id]).to_string();
            match layer_of(state, &id) {
                Some(l) => {
                    let b = baselines.entry(l).or_default();
                    *b = b.without(ts(&st));
                }
                None => extra.tasks = extra.tasks.without(ts(&st)),
            }
        }
        let order = layer_order(state);
        let (per, _) = listed(state);
        let mut layer_status: Vec<(String, String, Counts)> = Vec::new();
        for l in &order {
            let c = per
                .get(l)
                .copied()
                .unwrap_or_default()
                .add(baselines.get(l).copied().unwrap_or_default());
            let started = layer_tasks(state, l)
                .iter()
                .any(|id| status(&state["tasks"][id]) != "pending")
                || c.completed + c.failed > 0;
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
            let m =
                crate::layouts::json::ensure_object(layers.entry(l.clone()).or_insert(json!({})));
            set_if_changed(m, "status", json!(st));
            set_if_changed(m, "tasks_total", json!(c.total));
            set_if_changed(m, "tasks_completed", json!(c.completed));
            set_if_changed(m, "tasks_failed", json!(c.failed));
            if old == "pending"
                && st != "pending"
                && !m.get("started_at").is_some_and(Value::is_string)
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
        derive_run(before, state, &layer_status, now);
        derive_queue(state);
        let after = totals(state, &baselines);
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

    /// Global status, start and completion times, current layer and batch.
    fn derive_run(
        before: &Value,
        state: &mut Value,
        layers: &[(String, String, Counts)],
        now: &str,
    ) {
        let ids = task_ids(state);
        let statuses: Vec<String> = ids
            .iter()
            .map(|id| status(&state["tasks"][id]).to_string())
            .collect();
        let free_done = ids
            .iter()
            .zip(&statuses)
            .filter(|(id, _)| layer_of(state, id).is_none())
            .all(|(_, s)| s == "completed");
        let all_done = (!layers.is_empty() || !ids.is_empty())
            && layers.iter().all(|(_, s, _)| s == "completed")
            && free_done;
        let started = statuses.iter().any(|s| s != "pending")
            || layers.iter().any(|(_, s, _)| s != "pending");
        let written = global(state).to_string();
        let st = if statuses.iter().any(|s| s == "abandoned") {
            "abandoned"
        } else if written == "stopped" {
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
            layer_tasks(state, l)
                .iter()
                .filter_map(|id| state["tasks"][id]["batch"].as_u64())
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
    fn derive_queue(state: &mut Value) {
        let ids = task_ids(state);
        let task_status: BTreeMap<String, String> = ids
            .iter()
            .map(|id| (id.clone(), status(&state["tasks"][id]).to_string()))
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
            let want = match ts.as_str() {
                "completed" => "merged",
                "merging" => "merging",
                "verified" => "ready",
                _ => "pending",
            };
            if e["status"] != want {
                e["status"] = json!(want);
            }
        }
        for (id, ts) in &task_status {
            let want = match ts.as_str() {
                "verified" => "ready",
                "merging" => "merging",
                _ => continue,
            };
            if !queue.iter().any(|e| e["task_id"] == id.as_str()) {
                let p = next_priority(queue);
                queue.push(json!({"task_id": id, "priority": p, "status": want}));
            }
        }
    }

    /// `differs` as it was: both states copied, the clock fields removed, compared.
    pub fn differs(a: &Value, b: &Value) -> bool {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.shift_remove("updated_at");
                if let Some(metrics) = m.get_mut("metrics").and_then(Value::as_object_mut) {
                    metrics.shift_remove("elapsed_time_seconds");
                }
            }
            v
        };
        strip(a) != strip(b)
    }
}

const STATUSES: [&str; 8] = [
    "pending",
    "in_progress",
    "verifying",
    "verified",
    "merging",
    "completed",
    "failed",
    "abandoned",
];
const IDS: [&str; 7] = ["L0-001", "L1-001", "L1-002", "L2-1", "L20-1", "X", "Y"];

/// A random state: layers numbered or not (with counts that may exceed what is listed),
/// tasks by seed-style id or with a `layer` field, statuses, attempts, commits, batches,
/// queue entries (some for tasks not listed), metrics.
pub(crate) fn some_state() -> impl Strategy<Value = Value> {
    let layer_keys = prop::sample::select(vec![
        vec!["0-setup", "1-core", "2-api"],
        vec!["1-core", "0-setup"],
        vec!["b", "a"],
        vec!["2-api", "2-more", "x"],
    ]);
    let task = (
        prop::option::of(prop::sample::select(STATUSES.to_vec())),
        0..4u64,
        0..3usize,
        prop::option::of(1..4u64),
        prop::option::of(prop::sample::select(vec!["0-setup", "b", "x", "nope"])),
    );
    (
        layer_keys,
        prop::collection::vec(prop::option::of(task), IDS.len()),
        prop::collection::vec((prop::sample::select(IDS.to_vec()), 1..5i64, 0..3u8), 0..4),
        prop::collection::vec(prop::option::of((0..6u64, 0..3u64, 0..2u64)), 4),
        prop::option::of((0..12u64, 0..6u64, 0..9u64)),
        prop::sample::select(vec!["pending", "in_progress", "stopped", "completed"]),
    )
        .prop_map(|(keys, tasks, queue, counts, metrics, global)| {
            let mut layers = Map::new();
            for (k, c) in keys.iter().zip(counts) {
                let mut l = json!({"status": "pending"});
                if let Some((t, d, f)) = c {
                    l = json!({"status": "in_progress", "tasks_total": t, "tasks_completed": d, "tasks_failed": f});
                }
                layers.insert(k.to_string(), l);
            }
            let mut ts = Map::new();
            for (id, t) in IDS.iter().zip(tasks) {
                let Some((st, attempts, commits, batch, layer)) = t else { continue };
                let mut v = json!({"attempts": attempts, "commits": vec![json!({"hash": "abc1234"}); commits]});
                if let Some(st) = st {
                    v["status"] = json!(st);
                }
                if let Some(b) = batch {
                    v["batch"] = json!(b);
                }
                if let Some(l) = layer {
                    v["layer"] = json!(l);
                }
                ts.insert(id.to_string(), v);
            }
            let queue: Vec<Value> = queue
                .iter()
                .map(|(id, p, s)| {
                    let st = ["pending", "ready", "merged"][*s as usize];
                    json!({"task_id": id, "priority": p, "status": st})
                })
                .collect();
            let mut state = json!({"schema_version": "2.0", "status": global,
                "started_at": "2026-01-01T00:00:00Z", "layers": layers, "tasks": ts,
                "merge_queue": queue});
            if let Some((t, c, a)) = metrics {
                state["metrics"] = json!({"total_tasks": t, "completed_tasks": c, "total_attempts": a, "elapsed_time_seconds": 5});
            }
            state
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `derive` and `differs` give what the scans gave, for a state and for the same state
    /// after tasks changed status or were added (git recovery lists new ones).
    #[test]
    fn listing_matches_the_scans(
        before in some_state(),
        after in some_state(),
        mix in prop::collection::vec(any::<bool>(), IDS.len()),
    ) {
        // `after`: some tasks of `before` changed as `after` has them, `before`'s layers.
        let mut changed = before.clone();
        for (id, take) in IDS.iter().zip(mix) {
            if let (true, Some(t)) = (take, after["tasks"].get(*id)) {
                changed["tasks"][*id] = t.clone();
            }
        }
        for (b, s) in [(&before, &before), (&before, &changed), (&after, &after)] {
            let mut want = s.clone();
            reference::derive(b, &mut want, "2026-01-02T00:00:00Z");
            let mut got = s.clone();
            derive(b, &mut got, "2026-01-02T00:00:00Z");
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(differs(b, &got), reference::differs(b, &want));
        }
    }
}

fn seed() -> Value {
    let text =
        include_str!("../../../tests/fixtures/schemas/execute-state/valid/seed-full-example.json");
    serde_json::from_str(text).unwrap()
}

#[test]
fn the_seed_example_keeps_what_it_counts() {
    let before = seed();
    let mut s = before.clone();
    derive(&before, &mut s, "2025-01-11T10:15:00Z");
    assert!(!differs(&before, &s), "{s:#}");
    assert_eq!(s["metrics"]["elapsed_time_seconds"], 900);
}

#[test]
fn a_fresh_state_is_an_exact_recount() {
    let before = json!({"schema_version": "2.0", "status": "pending",
        "layers": {"1-a": {"status": "pending", "tasks_total": 2, "tasks_completed": 0, "tasks_failed": 0}},
        "tasks": {"L1-001": {"status": "pending", "attempts": 0}, "L1-002": {"status": "pending", "attempts": 0}},
        "merge_queue": [], "metrics": {}});
    let mut s = before.clone();
    s["tasks"]["L1-001"] = json!({"status": "completed", "attempts": 2, "commits": [{"hash": "abc1234", "type": "implementation", "attempt": 1}]});
    s["tasks"]["L1-002"] = json!({"status": "verified", "attempts": 1});
    derive(&before, &mut s, "2026-01-01T00:00:00Z");
    assert_eq!(s["layers"]["1-a"]["tasks_completed"], 1);
    assert_eq!(s["layers"]["1-a"]["status"], "in_progress");
    assert_eq!(s["status"], "in_progress");
    assert_eq!(s["metrics"]["total_attempts"], 3);
    assert_eq!(s["metrics"]["total_commits"], 1);
    assert_eq!(
        s["merge_queue"],
        json!([{"task_id": "L1-002", "priority": 1, "status": "ready"}])
    );
    let again = s.clone();
    s["tasks"]["L1-002"]["status"] = json!("completed");
    derive(&again, &mut s, "2026-01-01T00:10:00Z");
    assert_eq!(s["layers"]["1-a"]["status"], "completed");
    assert_eq!(s["status"], "completed");
    assert_eq!(s["completed_at"], "2026-01-01T00:10:00Z");
    assert_eq!(s["current_layer"], Value::Null);
    assert_eq!(s["merge_queue"][0]["status"], "merged");
}

/// A copy of the state that deriving leaves as it was shares its task list and merge queue
/// with the state it was copied from (a session start's look copies neither); a change to a
/// task parts the task list, a queue entry that moves parts the queue.
#[test]
fn a_copy_deriving_nothing_new_shares_its_tasks_and_queue() {
    use crate::layouts::execute::model::{State, TaskStatus};
    use crate::layouts::shared::Shared;
    let v = json!({"schema_version": "2.0", "status": "in_progress", "current_layer": "1-core",
        "tasks": {"L1-001": {"status": "completed", "attempts": 1}, "L1-002": {"status": "pending", "attempts": 0}},
        "merge_queue": [{"task_id": "L1-001", "priority": 1, "status": "merged"}]});
    let mut first: State = typed(&v).unwrap();
    super::derive(&first.clone(), &mut first, "2026-03-01T12:00:00Z");
    let before = first.clone();
    let mut s = before.clone();
    super::derive(&before, &mut s, "2026-03-01T12:00:00Z");
    let queue = |s: &State| s.merge_queue.clone().unwrap();
    assert!(Shared::same(&queue(&before), &queue(&s)));
    assert!(crate::layouts::keyed::Keyed::shares_entries(
        &before.tasks,
        &s.tasks
    ));
    s.task_mut("L1-001").unwrap().status = Some(TaskStatus::InProgress);
    super::derive(&before, &mut s, "2026-03-01T12:00:00Z");
    assert!(!crate::layouts::keyed::Keyed::shares_entries(
        &before.tasks,
        &s.tasks
    ));
    assert!(!Shared::same(&queue(&before), &queue(&s)));
    assert_eq!(
        s.queue()[0].status,
        crate::layouts::execute::model::QueueStatus::Pending
    );
    assert_eq!(
        before.queue()[0].status,
        crate::layouts::execute::model::QueueStatus::Merged
    );
}
