//! `taskhook sync status` and the pending line of `taskhook status`: what is synced and
//! queued, no network.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::exchange::remote_of;
use super::local;
use super::op::StoreKey;
use super::record::{known, stores, tracked_stores};
use super::settings::config;
use crate::context::Ctx;
use crate::error::Result;
use crate::project::Project;

/// One store as `sync status` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct StoreLine {
    pub layout: String,
    pub id: String,
    pub path: String,
    pub state: String,
}

/// `taskhook sync status`: no network.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncStatus {
    /// `origin (/srv/repo.git)`; `None` when sync is off.
    pub remote: Option<String>,
    /// The remote's tip as last read.
    pub tip: Option<String>,
    /// Changes not yet pushed.
    pub queued: usize,
    pub stores: Vec<StoreLine>,
}

/// What is synced, what is queued (no network).
pub fn status(cx: &Ctx, project: &Project) -> Result<SyncStatus> {
    let root = &project.root;
    let Some(cfg) = config(cx, project) else {
        return Ok(SyncStatus::default());
    };
    let remote = remote_of(cx, project, &cfg, Instant::now() + Duration::from_secs(10));
    let state = local::load_state(cx, root)?;
    let (queue, _) = local::read_queue(cx, root)?;
    let all = stores(cx, project);
    let keys: Vec<StoreKey> = all.iter().filter_map(|(_, k)| k.clone()).collect();
    let tracked = tracked_stores(&remote, &keys);
    let mut lines = Vec::new();
    for (store, key) in &all {
        let (path, st) = match key {
            None => (
                store.root.display().to_string(),
                "not synced: it lies outside the project".to_string(),
            ),
            Some(k) if tracked.contains(k) => (
                k.path.clone(),
                "left out: git tracks its files in the work tree".into(),
            ),
            Some(k) if state.stores.contains_key(&k.name()) => (k.path.clone(), "synced".into()),
            Some(k) if known(&state, &queue, k) => {
                (k.path.clone(), "published here, not yet pushed".into())
            }
            Some(k) => (
                k.path.clone(),
                "not synced yet (`taskhook sync init` publishes it)".into(),
            ),
        };
        lines.push(StoreLine {
            layout: store.layout.to_string(),
            id: store.id.clone(),
            path,
            state: st,
        });
    }
    Ok(SyncStatus {
        remote: Some(remote.label()),
        tip: state.remote_tip.clone(),
        queued: queue.len(),
        stores: lines,
    })
}

/// Changes this clone has not pushed yet, and the remote they wait for (for `status`).
pub fn pending(cx: &Ctx, project: &Project) -> Option<(usize, String)> {
    let cfg = config(cx, project)?;
    let (queue, _) = local::read_queue(cx, &project.root).ok()?;
    Some((queue.len(), cfg.remote))
}
