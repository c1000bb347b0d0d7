//! Team sync over git (CONTRACT §8): the stores of several clones of one repository kept as
//! one, through an op log on `refs/taskhook/ops` of the project's git remote.
//!
//! - Every change a verb, a hook or a layout command makes to a synced store is also an op
//!   ([`op`]), recorded where it happens, once, into this clone's queue ([`local`]): one
//!   append. Hooks never touch the network.
//! - `taskhook sync` fetches the remote's log ([`remote`]), applies the merged log to every
//!   store ([`apply`]), then pushes the queued ops in one commit built on the tip it fetched:
//!   a compare-and-swap; a lost race fetches, applies and retries with jittered backoff, a
//!   bounded number of times, within a deadline.
//! - `taskhook claim` proves its claim on the remote before it says yes; the other verbs
//!   apply at once and try one bounded push, queueing when the remote cannot be reached.
//! - A snapshot of a store is published every `compact_every` ops, so a reader needs only
//!   the tip's snapshots and the ops since.

pub mod apply;
pub mod local;
pub mod op;
pub mod remote;
pub mod snapshot;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::claims::{self, Owner};
use crate::config::SyncConfig;
use crate::context::Ctx;
use crate::engine::agent::{self, Acted, Verb};
use crate::error::{Error, Result};
use crate::layouts::{registry, StoreRef};
use crate::project::Project;
use crate::store::to_pretty;
pub use apply::{Applying, RunCommand};
use local::State;
use op::{Op, StoreKey};
use remote::{Log, Pushed, Remote};

/// Set (in a replay's own environment only, never read from the process) while the log is
/// being applied: a layout command run again then records no op of its own.
pub const REPLAYING: &str = "TASKHOOK_SYNC_REPLAYING";
/// How often a held claim sends a heartbeat op, at most.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5 * 60);
/// Most pushes one sync tries before it gives up on a busy remote.
pub const MAX_ATTEMPTS: u32 = 24;

/// This project's sync settings, when sync is on.
pub fn config(cx: &Ctx, project: &Project) -> Option<SyncConfig> {
    project.config(&cx.store).ok().and_then(|c| c.sync.clone())
}

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
fn known(state: &State, queue: &[Op], key: &StoreKey) -> bool {
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

/// Turns sync on in `.claude/taskhook.json` (other keys kept) with `remote`.
pub fn enable(cx: &Ctx, root: &Path, remote: &str) -> Result<()> {
    edit_config(cx, root, |m| {
        let mut s = match m.remove("sync") {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        s.insert("remote".into(), json!(remote));
        m.insert("sync".into(), Value::Object(s));
    })
}

/// Edits `.claude/taskhook.json` as JSON (other keys kept; written 2-space pretty).
pub fn edit_config(cx: &Ctx, root: &Path, f: impl FnOnce(&mut Map<String, Value>)) -> Result<()> {
    let path = crate::config::path(root);
    let mut m = match cx.store.read(&path)? {
        Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(Error::BadInput(format!(
                    "`{}` is not a JSON object; fix it first (taskhook doctor)",
                    path.display()
                )))
            }
        },
        None => Map::new(),
    };
    let before = m.clone();
    f(&mut m);
    if m == before {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        cx.store.create_dir_all(dir)?;
    }
    cx.store
        .replace(&path, &to_pretty(&Value::Object(m)))
        .map(|_| ())
}

/// Makes the stores the log holds findable here: a cdd workspace or an execute run that
/// discovery would not find by convention is named in `.claude/taskhook.json`.
pub fn make_findable<'a>(
    cx: &Ctx,
    project: &Project,
    keys: impl Iterator<Item = &'a StoreKey>,
) -> Result<Vec<String>> {
    let cfg = crate::config::load(&cx.store, &project.root)?;
    let mut said = Vec::new();
    let mut cdd_dir = None;
    let mut execute = Vec::new();
    for k in keys {
        match k.layout.as_str() {
            "cdd" => {
                let ws = k.path.strip_suffix("/tasks").unwrap_or(&k.path).to_string();
                if cfg.cdd_dir.is_none()
                    && cdd_dir.is_none()
                    && cx.env.get_os(crate::env::CDD_DIR).is_none()
                {
                    said.push(format!("cdd workspace {ws} named in .claude/taskhook.json"));
                    cdd_dir = Some(ws);
                }
            }
            "execute" => {
                let file = format!("{}/execute-state.json", k.path);
                let conventional =
                    k.path.starts_with("docs/tasks/") && k.path.matches('/').count() == 2;
                if !conventional && !cfg.execute.contains(&file) && !execute.contains(&file) {
                    said.push(format!("execute run {file} named in .claude/taskhook.json"));
                    execute.push(file);
                }
            }
            _ => {}
        }
    }
    if cdd_dir.is_some() || !execute.is_empty() {
        edit_config(cx, &project.root, |m| {
            if let Some(ws) = cdd_dir {
                m.insert("cdd_dir".into(), json!(ws));
            }
            if !execute.is_empty() {
                let list = m.entry("execute").or_insert_with(|| json!([]));
                if let Value::Array(a) = list {
                    a.extend(execute.into_iter().map(Value::String));
                }
            }
        })?;
    }
    Ok(said)
}

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

/// The stores git tracks in the work tree (two sources of truth: left out of sync).
fn tracked_stores(remote: &Remote<'_>, keys: &[StoreKey]) -> HashSet<StoreKey> {
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

fn run_sync(
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

/// Changes this clone has not pushed yet, and the remote they wait for (for `status`).
pub fn pending(cx: &Ctx, project: &Project) -> Option<(usize, String)> {
    let cfg = config(cx, project)?;
    let (queue, _) = local::read_queue(cx, &project.root).ok()?;
    Some((queue.len(), cfg.remote))
}
