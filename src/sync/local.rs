//! This clone's side of sync, in `.claude/taskhook/sync/`:
//!
//! - `queue.jsonl`: the ops made here and not yet pushed, one line each, appended (one
//!   fsynced write under `.queue.jsonl.lock`) by the verb or hook that made the change. A push
//!   that won rewrites it without the ops the remote now holds (atomic replace, same lock).
//! - `state.json`: what this clone has applied: the remote tip it last read, and per store
//!   the snapshot it stands on and the ops applied after it, in order (so a sync knows whether
//!   the merged log only adds ops at the end, applied in place, or reorders them, which
//!   rebuilds the store); the push in flight (to tell, after a kill, whether it reached the
//!   remote); when each held claim last sent a heartbeat.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::op::{Op, StoreKey, MAX_OP_BYTES};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::store::{lock_path_for, parse_json, to_pretty};

/// `.claude/taskhook/sync/`.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".claude").join("taskhook").join("sync")
}

/// The queue of ops not yet pushed.
pub fn queue_path(root: &Path) -> PathBuf {
    dir(root).join("queue.jsonl")
}

/// What this clone has applied.
pub fn state_path(root: &Path) -> PathBuf {
    dir(root).join("state.json")
}

/// The lock a whole sync holds (one sync at a time per clone).
pub fn sync_lock_path(root: &Path) -> PathBuf {
    dir(root).join(".sync.lock")
}

/// A push in flight: the commit, and the ops it carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pushing {
    pub commit: String,
    pub ops: Vec<String>,
}

/// One store as this clone has applied it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    pub store: StoreKey,
    /// The snapshot (`publish` op id) the files were last made from.
    #[serde(default)]
    pub base: Option<String>,
    /// The ops applied after it, in the order applied.
    #[serde(default)]
    pub applied: Vec<String>,
}

/// `state.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The remote's `refs/taskhook/ops` when last read.
    #[serde(default)]
    pub remote_tip: Option<String>,
    #[serde(default)]
    pub pushing: Option<Pushing>,
    /// By [`StoreKey::name`].
    #[serde(default)]
    pub stores: BTreeMap<String, Applied>,
    /// The latest op time applied here (new ops sort after it).
    #[serde(default)]
    pub last_time: Option<String>,
    /// Per held claim (`owner store/task`), when its last heartbeat op was made.
    #[serde(default)]
    pub heartbeats: BTreeMap<String, String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl State {
    /// The latest op time applied here.
    pub fn latest(&self) -> Option<DateTime<Utc>> {
        self.last_time
            .as_deref()
            .and_then(crate::store::clock::parse_time)
    }

    /// Notes that an op of time `t` was applied.
    pub fn saw(&mut self, t: DateTime<Utc>) {
        if self.latest().is_none_or(|l| t > l) {
            self.last_time = Some(super::op::stamp_us(t));
        }
    }
}

/// Reads `state.json`; missing is empty. A file that does not parse is an error naming it.
pub fn load_state(cx: &Ctx, root: &Path) -> Result<State> {
    let path = state_path(root);
    let Some(bytes) = cx.store.read(&path)? else {
        return Ok(State::default());
    };
    let corrupt = |details: String| Error::Corrupt {
        path: path.clone(),
        store: "sync".into(),
        details,
    };
    let v = parse_json(&bytes).map_err(corrupt)?;
    serde_json::from_value(v).map_err(|e| corrupt(e.to_string()))
}

/// Replaces `state.json` (atomic, durable).
pub fn save_state(cx: &Ctx, root: &Path, state: &State) -> Result<()> {
    let v = serde_json::to_value(state).map_err(|e| Error::BadInput(format!("sync state: {e}")))?;
    cx.store.create_dir_all(&dir(root))?;
    cx.store.replace(&state_path(root), &to_pretty(&v))?;
    Ok(())
}

/// The queue: its ops in order, and a line for each line that is not an op.
pub fn read_queue(cx: &Ctx, root: &Path) -> Result<(Vec<Op>, Vec<String>)> {
    let path = queue_path(root);
    let Some(bytes) = cx
        .store
        .read_capped(&path, MAX_OP_BYTES.saturating_mul(4))?
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut ops = Vec::new();
    let mut bad = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match Op::parse(line) {
            Ok(op) if seen.insert(op.id.clone()) => ops.push(op),
            Ok(_) => {}
            Err(e) => bad.push(format!("{} line {}: {e}", path.display(), n + 1)),
        }
    }
    Ok((ops, bad))
}

/// Appends ops to the queue: one fsynced write, under the queue's lock.
pub fn append(cx: &Ctx, root: &Path, ops: &[Op]) -> Result<()> {
    if ops.is_empty() {
        return Ok(());
    }
    let path = queue_path(root);
    cx.store.create_dir_all(&dir(root))?;
    let text: String = ops.iter().map(|o| format!("{}\n", o.line())).collect();
    cx.store.with_lock(&lock_path_for(&path), || {
        cx.store.append(&path, text.as_bytes())
    })
}

/// Rewrites the queue without the ops `gone` names (they reached the remote), under its lock:
/// ops appended meanwhile stay.
pub fn drop_from_queue(cx: &Ctx, root: &Path, gone: &dyn Fn(&Op) -> bool) -> Result<()> {
    let path = queue_path(root);
    if !cx.store.exists(&path) {
        return Ok(());
    }
    cx.store.with_lock(&lock_path_for(&path), || {
        let Some(bytes) = cx
            .store
            .read_capped(&path, MAX_OP_BYTES.saturating_mul(4))?
        else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut keep = String::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            // A line that is not an op stays where it is (reported by every sync).
            if Op::parse(line).is_ok_and(|op| gone(&op)) {
                continue;
            }
            keep.push_str(line);
            keep.push('\n');
        }
        if keep.len() != text.len() {
            cx.store.replace(&path, keep.as_bytes())?;
        }
        Ok(())
    })
}
