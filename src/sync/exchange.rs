//! One sync with the remote: fetch, apply, push with a compare-and-swap and retries; a claim
//! proven on the remote, heartbeats, recovery from a killed push or a rewound ref, compaction.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Map};

use super::apply::{self, Applying, RunCommand};
use super::local::{self, State};
use super::op::{self, Op, StoreKey};
use super::record::{machine, publish, stores};
use super::remote::{self, Log, Pushed, Remote};
use super::settings::make_findable;
use crate::claims::{self, Owner};
use crate::config::SyncConfig;
use crate::context::Ctx;
use crate::engine::agent::{self, Acted, Verb};
use crate::error::{Error, Result};
use crate::project::Project;

/// How often a held claim sends a heartbeat op, at most.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5 * 60);

/// Most pushes one sync tries before it gives up on a busy remote.
pub const MAX_ATTEMPTS: u32 = 24;

/// A claim to prove on the remote.
pub struct ClaimReq<'a> {
    pub owner: &'a Owner,
    pub unit: &'a str,
    pub force: bool,
}

/// How a claim through the remote ended.
#[derive(Debug, Clone)]
pub enum Claimed {
    Won(Box<Acted>),
    /// Refused before anything was pushed (held, not ready, unknown).
    Refused(String),
    /// Pushed, but the merged log gave the unit to someone else first.
    Lost(String),
}

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// `origin (/srv/repo.git)`.
    pub remote: String,
    /// The remote's tip after the sync.
    pub tip: Option<String>,
    /// Ops this clone pushed.
    pub ops_out: usize,
    #[serde(flatten)]
    pub applying: Applying,
    /// Changes still not pushed.
    pub queued: usize,
    /// The remote ref was moved back by someone: what was found and done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewound: Option<String>,
    /// Snapshots published to keep the log short.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compacted: Vec<String>,
    /// Why the remote could not be used (the sync then changed only local files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Lines about the queue itself (lines that are not ops).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queue_problems: Vec<String>,
    #[serde(skip)]
    pub claimed: Option<Claimed>,
    /// What was named in `.claude/taskhook.json` so that stores from the log are found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<String>,
    /// The claim's store is not synced: claimed on this machine, no remote asked.
    #[serde(skip)]
    pub local_only: bool,
}

/// How one sync runs.
pub struct Options<'a> {
    pub deadline: Instant,
    pub claim: Option<ClaimReq<'a>>,
    /// Send heartbeats for held claims (the CLI's syncs).
    pub heartbeats: bool,
    pub run: RunCommand<'a>,
}

pub(crate) fn remote_of<'a>(
    cx: &'a Ctx,
    project: &'a Project,
    cfg: &'a SyncConfig,
    deadline: Instant,
) -> Remote<'a> {
    Remote {
        root: &project.root,
        name: &cfg.remote,
        deadline,
        env: &cx.env,
    }
}

/// Jittered backoff before retry `n` (1-based): 50 ms doubling to 1.6 s, times 0.5–1.5.
fn backoff(n: u32) -> Duration {
    let base = 50u64 << n.min(5);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let frac = 0.5 + f64::from(nanos % 1000) / 1000.0;
    Duration::from_millis(base).mul_f64(frac)
}

/// Heartbeat ops for the claims this clone's sessions hold and keep alive (their hook events
/// renewed the liveness mark since the last heartbeat), at most one per claim every
/// [`HEARTBEAT_EVERY`]: applied here (the claim's `renewed` moves) and queued. Returns how
/// many were made.
fn heartbeats(cx: &Ctx, project: &Project, state: &mut State) -> Result<usize> {
    let root = &project.root;
    if !cx.store.exists(&claims::path(root)) {
        return Ok(0);
    }
    let held = claims::load(cx, root)?;
    let now = cx.store.clock().now();
    let every = chrono::Duration::from_std(HEARTBEAT_EVERY).unwrap_or_default();
    let mut sent = 0;
    for c in &held.claims {
        if c.owner.contains('@') {
            continue;
        }
        let synced = state
            .stores
            .values()
            .any(|a| a.store.layout == c.layout && a.store.id == c.store);
        if !synced {
            continue;
        }
        let renewed = crate::store::clock::parse_time(&c.renewed).unwrap_or(now);
        let lease = chrono::Duration::seconds(i64::try_from(c.lease_seconds).unwrap_or(0));
        let seen = claims::lease_end(cx, c) - lease;
        let tag = format!("{} {}/{}", c.owner, c.store, c.task);
        let last = state
            .heartbeats
            .get(&tag)
            .and_then(|t| crate::store::clock::parse_time(t));
        if seen - renewed < every || last.is_some_and(|l| now - l < every) {
            continue;
        }
        let (queue, _) = local::read_queue(cx, root)?;
        let latest = queue.iter().map(Op::at).chain(state.latest()).max();
        let at = op::next_time(now, latest);
        let hcx = apply::ctx_at(cx, root, &op::stamp_us(at), false, false)?;
        let hproject = hcx.project(None);
        let owner = Owner {
            id: c.owner.clone(),
            session: false,
        };
        let name = agent::reference(&c.store, &c.task);
        // The verb records its own op (queued).
        if agent::act(&hcx, &hproject, &owner, &name, Verb::Heartbeat, false).is_ok() {
            state.heartbeats.insert(tag, op::stamp_us(now));
            sent += 1;
        }
    }
    Ok(sent)
}

/// Fetches, applies, pushes (see the module docs). The sync lock is held throughout: one
/// sync at a time in a clone.
pub fn run(cx: &Ctx, project: &Project, cfg: &SyncConfig, opts: Options<'_>) -> Result<Report> {
    let root = &project.root;
    cx.store.create_dir_all(&local::dir(root))?;
    // A lock of its own (not a store transaction: what a sync applied stays applied even
    // when a later step fails), waited for until the sync's deadline.
    let now = Instant::now();
    let wait = opts.deadline.max(now + Duration::from_secs(1));
    crate::store::lock::with_lock(&local::sync_lock_path(root), (now, wait), || {
        run_locked(cx, project, cfg, &opts)
    })
}

fn run_locked(cx: &Ctx, project: &Project, cfg: &SyncConfig, opts: &Options<'_>) -> Result<Report> {
    let root = &project.root;
    // The deadline bounds the waiting on git and the remote, not the local work of applying
    // the log (thousands of ops replayed by the layouts' rules): it moves on by that work's
    // time ([`applied`]).
    let mut remote = remote_of(cx, project, cfg, opts.deadline);
    let mut report = Report {
        remote: remote.label(),
        ..Report::default()
    };
    let mut claim_op: Option<Op> = None;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let mut state = local::load_state(cx, root)?;
        let tip = match remote.fetch() {
            Ok(t) => t,
            Err(p) => {
                report.problem = Some(p.line().to_string());
                // Still apply what this clone has (the queue over the last fetched log).
                let last = remote.tracked();
                let log = remote.read(last.as_deref()).unwrap_or_default();
                let (queue, bad) = local::read_queue(cx, root)?;
                report.queue_problems = bad;
                report.applying = apply::apply(cx, project, &log, &queue, &mut state, opts.run);
                report.queued = unpushed(&log, &queue);
                local::save_state(cx, root, &state)?;
                return Ok(report);
            }
        };
        settle_push_in_flight(cx, root, &remote, &mut state, tip.as_deref())?;
        if let Some(line) = recover_rewind(cx, root, &remote, &state, tip.as_deref())? {
            report.rewound = Some(line);
        }
        let log = remote
            .read(tip.as_deref())
            .map_err(|p| Error::BadInput(p.line().to_string()))?;
        let (queue, bad) = local::read_queue(cx, root)?;
        report.queue_problems = bad;
        // Stores the log holds are made findable here before their ops are carried out.
        let keys: Vec<&StoreKey> = log
            .index
            .stores
            .values()
            .map(|e| &e.store)
            .chain(
                queue
                    .iter()
                    .filter(|o| o.kind == "publish")
                    .map(|o| &o.store),
            )
            .collect();
        report
            .config
            .extend(make_findable(cx, project, keys.into_iter())?);
        let started = Instant::now();
        let mut applying = apply::apply(cx, project, &log, &queue, &mut state, opts.run);
        applied(&mut remote, started);
        applying.skipped.splice(0..0, log.skipped.iter().cloned());
        if opts.heartbeats && heartbeats(cx, project, &mut state)? > 0 {
            // Made and queued after the merged log was applied: applied again with it.
            let (queue, _) = local::read_queue(cx, root)?;
            let started = Instant::now();
            let more = apply::apply(cx, project, &log, &queue, &mut state, opts.run);
            applied(&mut remote, started);
            merge(&mut applying, more);
        }
        let (queue, _) = local::read_queue(cx, root)?;
        merge(&mut report.applying, applying);
        state.remote_tip = tip.clone();
        // A claim is checked against the merged log before it is pushed.
        if let Some(req) = &opts.claim {
            match check_claim(cx, project, &log, &state, req, claim_op.take())? {
                Ok(op) => claim_op = Some(op),
                Err(why) => {
                    local::save_state(cx, root, &state)?;
                    report.claimed = Some(Claimed::Refused(why));
                    return Ok(report);
                }
            }
        }
        let in_log: HashSet<&str> = log.ops.iter().map(|o| o.id.as_str()).collect();
        let mut batch: Vec<Op> = queue
            .iter()
            .filter(|o| !in_log.contains(o.id.as_str()))
            .cloned()
            .collect();
        if let Some(c) = &claim_op {
            batch.push(c.clone());
        }
        let compacted = compaction(cx, project, cfg, &log, &state, &batch)?;
        let names: Vec<String> = compacted.iter().map(|o| o.store.label()).collect();
        batch.extend(compacted);
        if batch.is_empty() {
            local::save_state(cx, root, &state)?;
            report.tip = tip;
            return Ok(report);
        }
        let who = machine();
        let (commit, _) = match remote.build(
            tip.as_deref(),
            log.ours.as_deref(),
            &log.index,
            &batch,
            &who,
        ) {
            Ok(c) => c,
            Err(p) => {
                local::save_state(cx, root, &state)?;
                report.problem = Some(p.line().to_string());
                report.queued = unpushed(&log, &queue);
                return Ok(report);
            }
        };
        state.pushing = Some(local::Pushing {
            commit: commit.clone(),
            ops: batch.iter().map(|o| o.id.clone()).collect(),
        });
        local::save_state(cx, root, &state)?;
        match remote.push(&commit) {
            Ok(Pushed::Won) => {
                let _ = remote.set_tracked(&commit);
                state.pushing = None;
                state.remote_tip = Some(commit.clone());
                let ids: HashSet<String> = batch.iter().map(|o| o.id.clone()).collect();
                local::drop_from_queue(cx, root, &|o: &Op| ids.contains(&o.id))?;
                // The pushed ops as this clone now stands on them: the claim carried out,
                // compaction snapshots as the new bases.
                let mut pushed = log;
                pushed.ops.extend(batch.iter().cloned());
                let (rest, _) = local::read_queue(cx, root)?;
                let mut after = apply::apply(cx, project, &pushed, &rest, &mut state, opts.run);
                // What this clone just pushed is not news to it.
                after.ops_in = 0;
                if let Some(c) = &claim_op {
                    report.claimed =
                        Some(match after.acted.get(&c.id) {
                            Some(a) if a.claim.as_ref().is_some_and(|v| v.owner == c.actor) => {
                                Claimed::Won(Box::new(a.clone()))
                            }
                            _ => Claimed::Lost(after.refused.get(&c.id).cloned().unwrap_or_else(
                                || "the merged log gave it to someone else".into(),
                            )),
                        });
                }
                merge(&mut report.applying, after);
                local::save_state(cx, root, &state)?;
                report.ops_out += batch.len();
                report.compacted = names;
                report.tip = Some(commit);
                report.queued = rest.len();
                return Ok(report);
            }
            Ok(Pushed::Lost(why)) => {
                state.pushing = None;
                local::save_state(cx, root, &state)?;
                if attempt >= MAX_ATTEMPTS || Instant::now() >= remote.deadline {
                    report.problem = Some(format!(
                        "{} kept moving ({why}); gave up after {attempt} attempts",
                        report.remote
                    ));
                    report.queued = unpushed(&log, &queue);
                    if claim_op.is_some() {
                        report.claimed = Some(Claimed::Refused(format!(
                            "could not win the race on {} after {attempt} attempts; nothing changed",
                            report.remote
                        )));
                    }
                    return Ok(report);
                }
                let pause =
                    backoff(attempt).min(remote.deadline.saturating_duration_since(Instant::now()));
                std::thread::sleep(pause);
            }
            Err(p) => {
                // The push may still have landed (a timeout after sending): the record of it
                // stays, and the next sync settles it.
                report.problem = Some(p.line().to_string());
                report.queued = unpushed(&log, &queue);
                return Ok(report);
            }
        }
    }
}

/// Moves the remote's deadline on by the local work done since `started`.
fn applied(remote: &mut Remote<'_>, started: Instant) {
    remote.deadline += started.elapsed();
}

fn merge(into: &mut Applying, more: Applying) {
    into.ops_in += more.ops_in;
    into.applied += more.applied;
    for (dst, src) in [
        (&mut into.rebuilt, more.rebuilt),
        (&mut into.lost, more.lost),
        (&mut into.skipped, more.skipped),
        (&mut into.takeovers, more.takeovers),
        (&mut into.failed, more.failed),
    ] {
        let mut have: HashSet<String> = dst.iter().cloned().collect();
        for l in src {
            if have.insert(l.clone()) {
                dst.push(l);
            }
        }
    }
    into.acted.extend(more.acted);
    into.refused.extend(more.refused);
}

/// How many queued ops the log does not hold yet.
fn unpushed(log: &Log, queue: &[Op]) -> usize {
    let in_log: HashSet<&str> = log.ops.iter().map(|o| o.id.as_str()).collect();
    queue
        .iter()
        .filter(|o| !in_log.contains(o.id.as_str()))
        .count()
}

/// A push that was in flight when a sync was killed: if the remote holds its commit, its ops
/// are pushed (dropped from the queue); otherwise they are still queued.
fn settle_push_in_flight(
    cx: &Ctx,
    root: &Path,
    remote: &Remote<'_>,
    state: &mut State,
    tip: Option<&str>,
) -> Result<()> {
    let Some(p) = state.pushing.take() else {
        return Ok(());
    };
    if let Some(t) = tip {
        if remote.has_commit(&p.commit) && remote.is_ancestor(&p.commit, t) {
            let ids: HashSet<String> = p.ops.into_iter().collect();
            local::drop_from_queue(cx, root, &|o: &Op| ids.contains(&o.id))?;
        }
    }
    local::save_state(cx, root, state)
}

/// The remote ref moved to a commit that does not descend from the one this clone last read:
/// someone rewound it. The ops it lost are queued again (all but snapshots made to compact),
/// so the next push puts them back; said in one line.
fn recover_rewind(
    cx: &Ctx,
    root: &Path,
    remote: &Remote<'_>,
    state: &State,
    tip: Option<&str>,
) -> Result<Option<String>> {
    let Some(old) = state.remote_tip.as_deref() else {
        return Ok(None);
    };
    if tip == Some(old) || !remote.has_commit(old) {
        return Ok(None);
    }
    if let Some(t) = tip {
        if remote.is_ancestor(old, t) {
            return Ok(None);
        }
    }
    let lost = remote
        .lost_between(tip, old)
        .map_err(|p| Error::BadInput(p.line().to_string()))?;
    let now_log = remote
        .read(tip)
        .map_err(|p| Error::BadInput(p.line().to_string()))?;
    let have: HashSet<&str> = now_log.ops.iter().map(|o| o.id.as_str()).collect();
    let (queue, _) = local::read_queue(cx, root)?;
    let queued: HashSet<&str> = queue.iter().map(|o| o.id.as_str()).collect();
    let again: Vec<Op> = lost
        .into_iter()
        .filter(|o| !have.contains(o.id.as_str()) && !queued.contains(o.id.as_str()))
        .filter(|o| o.kind != "publish" || !o.fields.contains_key("covers"))
        .filter(|o| o.kind != "publish" || o.fields.contains_key("files"))
        .collect();
    let n = again.len();
    local::append(cx, root, &again)?;
    Ok(Some(format!(
        "{} was moved back from {} to {} (a force-push?): {n} op(s) it lost are pushed again",
        remote::REF,
        old.get(..8).unwrap_or(old),
        tip.map_or("nothing", |t| t.get(..8).unwrap_or(t))
    )))
}

/// Checks a claim against the merged log (nothing written) and makes (or re-times) its op:
/// after every op in the log, so no earlier claim can sort after it.
fn check_claim(
    cx: &Ctx,
    project: &Project,
    log: &Log,
    state: &State,
    req: &ClaimReq<'_>,
    previous: Option<Op>,
) -> Result<std::result::Result<Op, String>> {
    let root = &project.root;
    let (queue, _) = local::read_queue(cx, root)?;
    let latest = log
        .ops
        .iter()
        .chain(&queue)
        .map(Op::at)
        .chain(state.latest())
        .max();
    let at = op::next_time(cx.store.clock().now(), latest);
    let dcx = apply::ctx_at(cx, root, &op::stamp_us(at), false, true)?;
    let dproject = dcx.project(None);
    let acted = match agent::act(&dcx, &dproject, req.owner, req.unit, Verb::Claim, req.force) {
        Ok(a) => a,
        Err(e) => return Ok(Err(e.one_line())),
    };
    let Some((_, Some(key))) = stores(cx, project)
        .into_iter()
        .find(|(s, _)| s.layout == acted.layout && s.id == acted.store)
    else {
        return Ok(Err(format!(
            "{} is not in a synced store (claim it with --offline)",
            acted.unit
        )));
    };
    let mut fields = Map::new();
    if req.force {
        fields.insert("force".into(), json!(true));
    }
    let op = match previous {
        Some(mut p) => {
            p.time = op::stamp_us(at);
            p
        }
        None => Op::new(
            "claim",
            key,
            &acted.task,
            fields,
            &req.owner.id,
            &machine(),
            at,
        ),
    };
    Ok(Ok(op))
}

/// Snapshots to publish in this push: a store whose snapshot lies `compact_every` ops or more
/// behind the log's end gets a new one (its files and claims as this clone has them, which
/// the merged log just made), holding the ops it folds in. A store this push also claims in
/// is left for the next one.
fn compaction(
    cx: &Ctx,
    project: &Project,
    cfg: &SyncConfig,
    log: &Log,
    state: &State,
    batch: &[Op],
) -> Result<Vec<Op>> {
    let every = cfg.compact_every.max(2);
    let end = log.index.seq + batch.len() as u64;
    let mut out = Vec::new();
    let found = stores(cx, project);
    for entry in log.index.stores.values() {
        if end.saturating_sub(entry.at) < every {
            continue;
        }
        let name = entry.store.name();
        let Some(applied) = state.stores.get(&name) else {
            continue;
        };
        if applied.base.as_deref() != Some(entry.snapshot.as_str()) {
            continue;
        }
        if batch
            .iter()
            .any(|o| o.store.name() == name && (o.kind == "claim" || o.kind == "publish"))
        {
            continue;
        }
        let Some((store, _)) = found.iter().find(|(_, k)| k.as_ref() == Some(&entry.store)) else {
            continue;
        };
        let mut covers = applied.applied.clone();
        covers.extend(
            batch
                .iter()
                .filter(|o| o.store.name() == name)
                .map(|o| o.id.clone()),
        );
        let latest = log
            .ops
            .iter()
            .chain(batch)
            .map(Op::at)
            .chain(state.latest())
            .max();
        let at = op::next_time(cx.store.clock().now(), latest);
        out.push(publish(
            cx,
            project,
            store,
            &entry.store,
            &machine(),
            &covers,
            at,
        )?);
    }
    Ok(out)
}

pub(super) fn run_sync(
    cx: &Ctx,
    project: &Project,
    cfg: &SyncConfig,
    deadline: Instant,
    run: RunCommand<'_>,
) -> Result<Report> {
    self::run(
        cx,
        project,
        cfg,
        Options {
            deadline,
            claim: None,
            heartbeats: true,
            run,
        },
    )
}
