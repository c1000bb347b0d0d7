//! Recording ops where changes happen: a verb's or a hook's change, a layout command by
//! hand, a store's snapshot (`publish`); and which of the project's stores sync holds.

use std::collections::HashSet;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::local::{self, State};
use super::op::{self, Op, StoreKey};
use super::remote::Remote;
use super::settings::config;
use super::{apply, snapshot, REPLAYING};
use crate::claims::Owner;
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{registry, StoreRef};
use crate::project::Project;

/// Whether this invocation is a replay of the log (records nothing).
pub fn replaying(cx: &Ctx) -> bool {
    cx.env.get(REPLAYING).is_some()
}

/// The name ops give this machine.
pub fn machine() -> String {
    crate::env::hostname().unwrap_or_else(|| "localhost".into())
}

/// The time for an op made now in this clone: after every op it has applied or queued.
pub fn new_time(cx: &Ctx, root: &Path) -> Result<DateTime<Utc>> {
    let state = local::load_state(cx, root)?;
    let (queue, _) = local::read_queue(cx, root)?;
    let latest = queue.iter().map(Op::at).chain(state.latest()).max();
    Ok(op::next_time(cx.store.clock().now(), latest))
}

/// Records a change to `store` made here (a verb in `engine::agent`, a hook's lifecycle step)
/// as an op, when sync is on and the store is synced: one append to the queue. `actor`:
/// who made it (else the hook's session, else the person at the terminal). Nothing in a
/// replay of the log or a dry run.
pub fn record(
    cx: &Ctx,
    project: &Project,
    store: &StoreRef,
    task: &str,
    kind: &str,
    fields: Map<String, Value>,
    actor: Option<&str>,
) -> Result<()> {
    if replaying(cx) || cx.store.is_dry_run() || config(cx, project).is_none() {
        return Ok(());
    }
    let Some(key) = StoreKey::of(store, &project.root) else {
        return Ok(());
    };
    let root = &project.root;
    let state = local::load_state(cx, root)?;
    let (queue, _) = local::read_queue(cx, root)?;
    if !known(&state, &queue, &key) {
        return Ok(());
    }
    let actor = match actor {
        Some(a) => a.to_string(),
        None => cx
            .session
            .clone()
            .or_else(|| Owner::of_command(cx).ok().map(|o| o.id))
            .unwrap_or_else(|| "someone".into()),
    };
    let latest = queue.iter().map(Op::at).chain(state.latest()).max();
    let at = op::next_time(cx.store.clock().now(), latest);
    let op = Op::new(kind, key, task, fields, &actor, &machine(), at);
    local::append(cx, root, &[op])
}

/// The stores of the project, each with its key (`None`: outside the project).
pub fn stores(cx: &Ctx, project: &Project) -> Vec<(StoreRef, Option<StoreKey>)> {
    let mut out = Vec::new();
    for &layout in registry() {
        if let Ok(found) = layout.discover(cx, project) {
            for s in found {
                if s.root.as_os_str().is_empty() {
                    continue;
                }
                // claude-tasks lists are never synced: their key is refused (StoreKey::check).
                let key = StoreKey::of(&s, &project.root);
                out.push((s, key));
            }
        }
    }
    out
}

/// A `publish` op of `store` as it is now.
pub fn publish(
    cx: &Ctx,
    project: &Project,
    store: &StoreRef,
    key: &StoreKey,
    actor: &str,
    covers: &[String],
    at: DateTime<Utc>,
) -> Result<Op> {
    let files = snapshot::capture(cx, store)?;
    let held = snapshot::claims_of(cx, &project.root, key)?;
    let fields = snapshot::fields(&files, &held, covers);
    Ok(Op::new(
        "publish",
        key.clone(),
        "",
        fields,
        actor,
        &machine(),
        at,
    ))
}

/// Whether this clone knows `key` as synced: applied, or published in its queue.
pub(super) fn known(state: &State, queue: &[Op], key: &StoreKey) -> bool {
    state.stores.contains_key(&key.name())
        || queue.iter().any(|o| o.kind == "publish" && o.store == *key)
}

/// After a layout command by hand (`projects add …`, `cdd import …`) changed files: an op for
/// each synced store it touched: the command itself when it can run again from the log, else
/// a snapshot; a store it created is published. How many ops it queued.
pub fn record_command(
    cx: &Ctx,
    project: &Project,
    args: &[String],
    changed: &[std::path::PathBuf],
) -> Result<usize> {
    if changed.is_empty() || replaying(cx) || config(cx, project).is_none() {
        return Ok(0);
    }
    let root = &project.root;
    let state = local::load_state(cx, root)?;
    let (queue, _) = local::read_queue(cx, root)?;
    let actor = Owner::of_command(cx)?.id;
    let mut ops = Vec::new();
    let mut latest = queue.iter().map(Op::at).chain(state.latest()).max();
    let creates = matches!(
        (
            args.first().map(String::as_str),
            args.get(1).map(String::as_str)
        ),
        (Some("projects" | "iterative"), Some("new")) | (Some("cdd" | "execute"), Some("init"))
    );
    for (store, key) in stores(cx, project) {
        let Some(key) = key else { continue };
        if !changed.iter().any(|p| p.starts_with(&store.root)) {
            continue;
        }
        let at = op::next_time(cx.store.clock().now(), latest);
        latest = Some(at);
        let is_known = known(&state, &queue, &key);
        if !is_known && !creates {
            // A store sync does not hold (left out, or never published): nothing to record.
            continue;
        }
        let op = if is_known && apply::replayable(args) {
            let mut f = Map::new();
            f.insert("args".into(), json!(args));
            let kind = if args.get(1).map(String::as_str) == Some("add") {
                "add"
            } else {
                "command"
            };
            Op::new(kind, key, "", f, &actor, &machine(), at)
        } else {
            let covers: Vec<String> = state
                .stores
                .get(&key.name())
                .map(|a| a.applied.clone())
                .unwrap_or_default();
            publish(cx, project, &store, &key, &actor, &covers, at)?
        };
        ops.push(op);
    }
    local::append(cx, root, &ops)?;
    Ok(ops.len())
}

/// The stores git tracks in the work tree (two sources of truth: left out of sync).
pub(super) fn tracked_stores(remote: &Remote<'_>, keys: &[StoreKey]) -> HashSet<StoreKey> {
    let paths: Vec<String> = keys.iter().map(|k| k.path.clone()).collect();
    let tracked = remote.tracked_paths(&paths);
    keys.iter()
        .filter(|k| {
            tracked
                .iter()
                .any(|t| t == &k.path || t.starts_with(&format!("{}/", k.path)))
        })
        .cloned()
        .collect()
}
