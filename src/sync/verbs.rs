//! The agent verbs with sync on: carried out here then pushed, or (`claim`) proven on the
//! remote first.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::apply::{self, RunCommand};
use super::exchange::{run, run_sync, ClaimReq, Claimed, Options, Report};
use super::local;
use super::op;
use super::record::{known, new_time, stores};
use crate::claims::{self, Owner};
use crate::config::SyncConfig;
use crate::context::Ctx;
use crate::engine::agent::{self, Acted, Verb};
use crate::error::{Error, Result};
use crate::project::Project;

/// A verb to carry out with sync on.
pub struct VerbReq<'a> {
    pub owner: &'a Owner,
    pub unit: &'a str,
    pub verb: Verb<'a>,
    pub force: bool,
    /// Try one bounded push after it (all but an offline claim).
    pub push: bool,
}

/// A verb with sync on (`done`, `fail`, `release`, `heartbeat`, an offline `claim`): carried
/// out here at once (its op queued by the verb itself), then one bounded push. The push's
/// report says whether it reached the remote.
pub fn verb(
    cx: &Ctx,
    project: &Project,
    cfg: &SyncConfig,
    req: VerbReq<'_>,
    run: RunCommand<'_>,
) -> Result<(Acted, Option<Report>)> {
    let VerbReq {
        owner,
        unit,
        verb,
        force,
        push,
    } = req;
    let root = &project.root;
    let at = new_time(cx, root)?;
    let vcx = apply::ctx_at(cx, root, &op::stamp_us(at), false, false)?;
    let vproject = vcx.project(None);
    let (before, _) = local::read_queue(cx, root)?;
    let acted = agent::act(&vcx, &vproject, owner, unit, verb, force)?;
    if !push {
        return Ok((acted, None));
    }
    let (after, _) = local::read_queue(cx, root)?;
    let had: HashSet<&str> = before.iter().map(|o| o.id.as_str()).collect();
    let mine: Vec<String> = after
        .iter()
        .filter(|o| !had.contains(o.id.as_str()))
        .map(|o| o.id.clone())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(cfg.timeout_seconds.max(1));
    let report = run_sync(cx, project, cfg, deadline, run)?;
    // The merged log may give the unit to an op made elsewhere first: then this verb lost.
    if let Some(why) = mine.iter().find_map(|id| report.applying.refused.get(id)) {
        return Err(Error::Rule(format!(
            "{} was done here but lost once merged with {}: {why}",
            acted.unit, report.remote
        )));
    }
    Ok((acted, Some(report)))
}

/// `taskhook claim` with sync on: fetch, check the unit is free under the merged log, push
/// the claim; it holds only once the push won.
pub fn claim(
    cx: &Ctx,
    project: &Project,
    cfg: &SyncConfig,
    owner: &Owner,
    unit: &str,
    force: bool,
    run: RunCommand<'_>,
) -> Result<Report> {
    // A unit of a store sync does not hold (claude-tasks, a store left out) is claimed here.
    if let Some(false) = unit_is_synced(cx, project, owner, unit, force) {
        let acted = agent::act(cx, project, owner, unit, Verb::Claim, force)?;
        return Ok(Report {
            claimed: Some(Claimed::Won(Box::new(acted))),
            local_only: true,
            ..Report::default()
        });
    }
    let deadline = Instant::now() + Duration::from_secs(cfg.timeout_seconds.max(1));
    let mut report = self::run(
        cx,
        project,
        cfg,
        Options {
            deadline,
            claim: Some(ClaimReq { owner, unit, force }),
            heartbeats: true,
            run,
        },
    )?;
    if owner.session {
        if let Some(Claimed::Won(_)) = &report.claimed {
            // The session's hook events renew the lease from now on.
            claims::keep_alive(cx, owner)?;
        }
    }
    if report.claimed.is_none() && report.problem.is_some() {
        report.claimed = Some(Claimed::Refused(format!(
            "cannot prove the claim on the remote: {}; nothing changed (`--offline` claims it on this machine only)",
            report.problem.clone().unwrap_or_default()
        )));
    }
    Ok(report)
}

/// Whether the unit a claim names lies in a store sync holds (`None`: it cannot be told
/// here; the sync will say).
fn unit_is_synced(
    cx: &Ctx,
    project: &Project,
    owner: &Owner,
    unit: &str,
    force: bool,
) -> Option<bool> {
    let root = &project.root;
    let at = op::stamp_us(cx.store.clock().now());
    let dcx = apply::ctx_at(cx, root, &at, false, true).ok()?;
    let dproject = dcx.project(None);
    let acted = agent::act(&dcx, &dproject, owner, unit, Verb::Claim, force).ok()?;
    let state = local::load_state(cx, root).ok()?;
    let (queue, _) = local::read_queue(cx, root).ok()?;
    let key = stores(cx, project)
        .into_iter()
        .find(|(s, _)| s.layout == acted.layout && s.id == acted.store)
        .and_then(|(_, k)| k);
    Some(key.is_some_and(|k| known(&state, &queue, &k)))
}
