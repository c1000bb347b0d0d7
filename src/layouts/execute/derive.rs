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
use std::rc::Rc;

use serde_json::Number;

use super::model::{
    Keyed, Layer, LayerStatus, QueueEntry, QueueStatus, RunStatus, Slot, State, Task, TaskStatus,
};
use super::state::{id_layer_number, layer_order, leading_number};
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

    fn count(&mut self, status: TaskStatus) {
        self.total += 1;
        match status {
            TaskStatus::Completed => self.completed += 1,
            TaskStatus::Failed | TaskStatus::Abandoned => self.failed += 1,
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
    fn without(mut self, status: TaskStatus) -> Counts {
        self.total = self.total.saturating_sub(1);
        match status {
            TaskStatus::Completed => self.completed = self.completed.saturating_sub(1),
            TaskStatus::Failed | TaskStatus::Abandoned => {
                self.failed = self.failed.saturating_sub(1)
            }
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

fn written_counts(layer: &Layer) -> Option<Counts> {
    Some(Counts {
        total: layer.tasks_total?,
        completed: layer.tasks_completed.unwrap_or(0),
        failed: layer.tasks_failed.unwrap_or(0),
    })
}

/// A task the state lists, as the counts see it: 16 bytes (one listing is made per state and
/// change, 100,000 of these at scale).
struct Listed {
    /// Its batch; [`NONE`] for none (a count is at most 9e15).
    batch: u64,
    /// Its layer, as [`super::state::layer_of`] finds it: a place in [`Listing::names`];
    /// [`NO_LAYER`] for none.
    layer: u32,
    status: TaskStatus,
}

const NONE: u64 = u64::MAX;
const NO_LAYER: u32 = u32::MAX;

impl Listed {
    fn batch(&self) -> Option<u64> {
        (self.batch != NONE).then_some(self.batch)
    }

    fn has_layer(&self) -> bool {
        self.layer != NO_LAYER
    }
}

/// The tasks a state lists, and the names of their layers (one copy each).
struct Listing {
    names: Vec<Rc<str>>,
    items: Vec<Listed>,
}

impl Listing {
    /// The layer of a listed task.
    fn layer(&self, t: &Listed) -> Option<&str> {
        self.names.get(t.layer as usize).map(|n| &**n)
    }
}

impl std::ops::Deref for Listing {
    type Target = [Listed];

    fn deref(&self) -> &[Listed] {
        &self.items
    }
}

/// The tasks a state lists, in the file's order, each with its status and layer: worked out
/// once per state, each layer found in a table of the layer keys by number (not by a scan of
/// the keys per task).
fn listing(state: &State) -> Listing {
    let layers = state.layers.as_ref();
    let keys: Vec<&str> = layers.into_iter().flat_map(|m| m.keys()).collect();
    let places: HashMap<&str, u32> = keys.iter().zip(0..).map(|(k, i)| (*k, i)).collect();
    let mut by_number: HashMap<u64, u32> = HashMap::new();
    for (k, i) in keys.iter().zip(0..) {
        if let Some(n) = leading_number(k) {
            by_number.entry(n).or_insert(i);
        }
    }
    let layer_of = |id: &str, t: &Task| -> Option<u32> {
        if let Some(l) = t.layer.as_deref().and_then(|l| places.get(l)) {
            return Some(*l);
        }
        by_number.get(&id_layer_number(id)?).copied()
    };
    let items = state
        .tasks
        .iter()
        .map(|(id, t)| Listed {
            status: t.status(),
            layer: layer_of(id, t).unwrap_or(NO_LAYER),
            batch: t.batch.unwrap_or(NONE),
        })
        .collect();
    Listing {
        names: keys.into_iter().map(Rc::from).collect(),
        items,
    }
}

/// The listed tasks counted per layer, and those in no layer.
fn listed(list: &Listing) -> (BTreeMap<String, Counts>, Counts) {
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let mut free = Counts::default();
    for t in list.iter() {
        match list.layer(t) {
            // Looked up first: a layer's name is copied once, when it is first counted.
            Some(l) => match per.get_mut(l) {
                Some(c) => c.count(t.status),
                None => per.entry(l.to_string()).or_default().count(t.status),
            },
            None => free.count(t.status),
        }
    }
    (per, free)
}

fn listed_work(state: &State) -> (u64, u64) {
    let mut a = 0;
    let mut c = 0;
    for t in state.tasks.values() {
        a += t.attempts();
        c += t.commits().len() as u64;
    }
    (a, c)
}

/// Per layer: what the file counts beyond the tasks it lists.
fn layer_baselines(state: &State, list: &Listing) -> BTreeMap<String, Counts> {
    let (per, _) = listed(list);
    layer_order(state)
        .into_iter()
        .map(|l| {
            let b = state
                .layer(&l)
                .and_then(written_counts)
                .map(|w| Counts::beyond(w, per.get(&l).copied().unwrap_or_default()))
                .unwrap_or_default();
            (l, b)
        })
        .collect()
}

/// The run's totals counted from the layers (with their baselines) and the listed tasks.
fn totals(state: &State, list: &Listing, baselines: &BTreeMap<String, Counts>) -> Totals {
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
fn metrics_baseline(state: &State, recount: Totals) -> Totals {
    let m = state.metrics();
    let tasks = match m.total_tasks {
        Some(total) => Counts::beyond(
            Counts {
                total,
                completed: m.completed_tasks.unwrap_or(0),
                failed: m.failed_tasks.unwrap_or(0),
            },
            recount.tasks,
        ),
        None => Counts::default(),
    };
    let more = |written: Option<u64>, have: u64| written.map_or(0, |w| w.saturating_sub(have));
    Totals {
        tasks,
        attempts: more(m.total_attempts, recount.attempts),
        commits: more(m.total_commits, recount.commits),
    }
}

/// Recomputes everything derived in `state`; `before` is the file as it was before this
/// change (for the baselines and the transitions that stamp times).
pub fn derive(before: &State, state: &mut State, now: &str) {
    // The listing of the state before is let go of before the new one is made (one listing
    // of the store held at a time).
    let (mut baselines, mut extra) = {
        let before_list = listing(before);
        let baselines = layer_baselines(before, &before_list);
        let before_totals = totals(before, &before_list, &baselines);
        (baselines, metrics_baseline(before, before_totals))
    };
    // Deriving changes no task and no layer key, so each task's layer stays as listed here.
    let list = listing(state);
    // Tasks the file now lists that it did not: they leave the baselines. (None, when the two
    // share their keys: a change to tasks, not to which tasks there are.)
    let same = Keyed::same_keys(&before.tasks, &state.tasks);
    let new = state
        .tasks
        .keys()
        .zip(list.iter())
        .filter(|(id, _)| !same && !before.tasks.contains_key(id))
        .map(|(_, t)| t);
    for t in new {
        match list.layer(t) {
            Some(l) => {
                let b = baselines.entry(l.to_string()).or_default();
                *b = b.without(t.status);
            }
            None => extra.tasks = extra.tasks.without(t.status),
        }
    }
    let order = layer_order(state);
    let (per, _) = listed(&list);
    let moving: HashSet<&str> = list
        .iter()
        .filter(|t| t.status != TaskStatus::Pending)
        .filter_map(|t| list.layer(t))
        .collect();
    let mut layer_status: Vec<(String, LayerStatus, Counts)> = Vec::new();
    for l in &order {
        let c = per
            .get(l)
            .copied()
            .unwrap_or_default()
            .add(baselines.get(l).copied().unwrap_or_default());
        let started = moving.contains(l.as_str()) || c.completed + c.failed > 0;
        let old = before.layer(l).map_or(LayerStatus::Pending, Layer::status);
        let written = state.layer(l).map_or(LayerStatus::Pending, Layer::status);
        let st = if c.total == 0 {
            written
        } else if c.completed == c.total {
            LayerStatus::Completed
        } else if started || old != LayerStatus::Pending {
            LayerStatus::InProgress
        } else {
            LayerStatus::Pending
        };
        let layers = state.layers.get_or_insert_with(Default::default);
        if !layers.contains_key(l) {
            layers.insert(l.clone(), Layer::default());
        }
        let Some(m) = layers.get_mut(l) else { continue };
        m.status = Some(st);
        m.tasks_total = Some(c.total);
        m.tasks_completed = Some(c.completed);
        m.tasks_failed = Some(c.failed);
        if old == LayerStatus::Pending && st != LayerStatus::Pending && m.started_at.get().is_none()
        {
            m.started_at = Slot::Is(now.to_string());
        }
        if st == LayerStatus::Completed && old != LayerStatus::Completed {
            m.completed_at = Slot::Is(now.to_string());
        } else if st != LayerStatus::Completed {
            m.completed_at.clear();
        }
        layer_status.push((l.clone(), st, c));
    }
    derive_run(before, state, &layer_status, now, &list);
    derive_queue(state, &list);
    let after = totals(state, &list, &baselines);
    let tasks = after.tasks.add(extra.tasks);
    let elapsed = elapsed(state, now);
    let m = state.metrics.get_or_insert_with(Default::default);
    m.total_tasks = Some(tasks.total);
    m.completed_tasks = Some(tasks.completed);
    m.failed_tasks = Some(tasks.failed);
    m.total_attempts = Some(after.attempts + extra.attempts);
    m.total_commits = Some(after.commits + extra.commits);
    m.elapsed_time_seconds = Some(Number::from(elapsed));
    state.updated_at = Slot::Is(now.to_string());
}

/// Seconds from `started_at` to `completed_at` (a finished run) or now.
fn elapsed(state: &State, now: &str) -> u64 {
    let Some(start) = state.started_at.as_deref().and_then(parse_time) else {
        return 0;
    };
    let end = state
        .completed_at
        .as_deref()
        .filter(|_| state.status == Some(RunStatus::Completed))
        .unwrap_or(now);
    parse_time(end)
        .map(|e| (e - start).num_seconds().max(0) as u64)
        .unwrap_or(0)
}

/// Global status, start and completion times, current layer and batch.
fn derive_run(
    before: &State,
    state: &mut State,
    layers: &[(String, LayerStatus, Counts)],
    now: &str,
    list: &Listing,
) {
    let free_done = list
        .iter()
        .filter(|t| !t.has_layer())
        .all(|t| t.status == TaskStatus::Completed);
    let all_done = (!layers.is_empty() || !list.is_empty())
        && layers.iter().all(|(_, s, _)| *s == LayerStatus::Completed)
        && free_done;
    let started = list.iter().any(|t| t.status != TaskStatus::Pending)
        || layers.iter().any(|(_, s, _)| *s != LayerStatus::Pending);
    let st = if list.iter().any(|t| t.status == TaskStatus::Abandoned) {
        RunStatus::Abandoned
    } else if state.status() == RunStatus::Stopped
        || state.stop.get().is_some_and(|s| s.is_object())
    {
        RunStatus::Stopped
    } else if all_done {
        RunStatus::Completed
    } else if started {
        RunStatus::InProgress
    } else {
        RunStatus::Pending
    };
    let current = layers
        .iter()
        .find(|(_, s, _)| *s != LayerStatus::Completed)
        .map(|(l, _, _)| l.clone());
    let batch = current.as_ref().and_then(|l| {
        list.iter()
            .filter(|t| list.layer(t) == Some(l.as_str()))
            .filter_map(Listed::batch)
            .max()
    });
    let same_layer = match (&before.current_layer, &current) {
        (Slot::Null, None) => true,
        (Slot::Is(a), Some(b)) => a == b,
        _ => false,
    };
    state.status = Some(st);
    if st != RunStatus::Pending && state.started_at.get().is_none() {
        state.started_at = Slot::Is(now.to_string());
    }
    if st == RunStatus::Completed {
        if state.completed_at.get().is_none() {
            state.completed_at = Slot::Is(now.to_string());
        }
    } else {
        state.completed_at.clear();
    }
    if !layers.is_empty() {
        state.current_layer.set(current);
        match batch {
            Some(b) => state.current_batch = Slot::Is(b),
            None if same_layer => {}
            None => state.current_batch = Slot::Null,
        }
    }
}

/// The queue's statuses follow the tasks (completed → merged, merging → merging, verified →
/// ready, anything else → pending); a verified or merging task missing from the queue joins it
/// at the next priority. Entries of tasks the state does not list are left as they are.
fn derive_queue(state: &mut State, list: &Listing) {
    let tasks = &state.tasks;
    let queue = state.merge_queue.get_or_insert_with(Default::default);
    // The statuses that change, found first: a queue that stays as it is is not copied from
    // the state it is shared with.
    let moved: Vec<(usize, QueueStatus)> = queue
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let want = match tasks.get(&e.task_id)?.status() {
                TaskStatus::Completed => QueueStatus::Merged,
                TaskStatus::Merging => QueueStatus::Merging,
                TaskStatus::Verified => QueueStatus::Ready,
                _ => QueueStatus::Pending,
            };
            (e.status != want).then_some((i, want))
        })
        .collect();
    if !moved.is_empty() {
        let q: &mut Vec<QueueEntry> = queue;
        for (i, want) in moved {
            q[i].status = want;
        }
    }
    // The tasks that belong in the queue, in id order (the order they join it in).
    let mut waiting: Vec<(&str, QueueStatus)> = tasks
        .keys()
        .zip(list.iter())
        .filter_map(|(id, t)| match t.status {
            TaskStatus::Verified => Some((id, QueueStatus::Ready)),
            TaskStatus::Merging => Some((id, QueueStatus::Merging)),
            _ => None,
        })
        .collect();
    if waiting.is_empty() {
        return;
    }
    waiting.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut queued: HashSet<String> = queue.iter().map(|e| e.task_id.clone()).collect();
    let mut next = None;
    for (id, want) in waiting {
        if queued.insert(id.to_string()) {
            let p = *next.get_or_insert_with(|| next_priority(queue));
            next = Some(p + 1);
            queue.push(QueueEntry {
                task_id: id.to_string(),
                priority: p,
                status: want,
                rest: Default::default(),
            });
        }
    }
}

/// The priority after the highest in the queue (1 for an empty queue).
pub fn next_priority(queue: &[QueueEntry]) -> i64 {
    queue.iter().map(|e| e.priority).max().unwrap_or(0) + 1
}

#[cfg(test)]
#[path = "derive_tests.rs"]
pub(crate) mod tests;
