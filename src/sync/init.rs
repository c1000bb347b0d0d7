//! `taskhook sync init`: sync turned on, the project's stores published or taken from the
//! remote.

use std::time::Instant;

use serde::Serialize;

use super::apply::RunCommand;
use super::exchange::{remote_of, run_sync, Report};
use super::local;
use super::op::{self, Op, StoreKey};
use super::record::{known, publish, stores, tracked_stores};
use super::settings::{config, enable};
use crate::claims::Owner;
use crate::config::SyncConfig;
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::project::Project;

/// What `sync init` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InitDone {
    pub remote: String,
    /// Stores published by this init.
    pub published: Vec<String>,
    /// Stores the remote already held (this clone takes them from it).
    pub from_remote: Vec<String>,
    /// Stores not synced, and why, one line each.
    pub left_out: Vec<String>,
    pub report: Option<Report>,
}

/// `taskhook sync init`: turns sync on with `cfg.remote`, publishes every store of the
/// project the remote does not hold yet (those it holds are taken from it), then syncs.
pub fn init(
    cx: &Ctx,
    project: &Project,
    cfg: &SyncConfig,
    deadline: Instant,
    run: RunCommand<'_>,
) -> Result<InitDone> {
    let root = &project.root;
    let remote = remote_of(cx, project, cfg, deadline);
    if remote.toplevel().is_none() {
        return Err(Error::Usage(format!(
            "{} is not in a git repository: sync keeps its log on a git remote",
            root.display()
        )));
    }
    if !remote.exists() {
        return Err(Error::Usage(format!(
            "this repository has no git remote `{}` (git remote add {} URL, or --remote NAME)",
            cfg.remote, cfg.remote
        )));
    }
    let mut done = InitDone {
        remote: remote.label(),
        ..InitDone::default()
    };
    let tip = remote
        .fetch()
        .map_err(|p| Error::BadInput(format!("sync init: {}", p.line())))?;
    let log = remote
        .read(tip.as_deref())
        .map_err(|p| Error::BadInput(p.line().to_string()))?;
    enable(cx, root, &cfg.remote)?;
    let all = stores(cx, project);
    let keys: Vec<StoreKey> = all.iter().filter_map(|(_, k)| k.clone()).collect();
    let tracked = tracked_stores(&remote, &keys);
    let state = local::load_state(cx, root)?;
    let (queue, _) = local::read_queue(cx, root)?;
    let actor = Owner::of_command(cx)?.id;
    let mut ops = Vec::new();
    let mut latest = queue.iter().map(Op::at).chain(state.latest()).max();
    for (store, key) in &all {
        let Some(key) = key else {
            done.left_out.push(format!(
                "{} {}: not synced: it lies outside the project ({})",
                store.layout,
                store.id,
                store.root.display()
            ));
            continue;
        };
        if tracked.contains(key) {
            done.left_out.push(format!(
                "{}: left out: git tracks its files in the work tree, which would make two sources of truth (`git rm -r --cached {}`, commit, then `taskhook sync init` again)",
                key.label(),
                key.path
            ));
            continue;
        }
        if log.index.stores.contains_key(&key.name()) {
            done.from_remote.push(key.label());
            continue;
        }
        if known(&state, &queue, key) {
            continue;
        }
        let at = op::next_time(cx.store.clock().now(), latest);
        latest = Some(at);
        ops.push(publish(cx, project, store, key, &actor, &[], at)?);
        done.published.push(key.label());
    }
    local::append(cx, root, &ops)?;
    let cfg = config(cx, &cx.project(None)).unwrap_or_else(|| cfg.clone());
    done.report = Some(run_sync(cx, project, &cfg, deadline, run)?);
    Ok(done)
}
