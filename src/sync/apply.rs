//! Applying the merged log: every store made what its ops say, the same on every clone.
//!
//! For each store, the merged log (the remote's window, then this clone's queued ops not yet
//! in it) gives one sequence: the store's latest snapshot (its last `publish` in push order),
//! then every op pushed after it, ordered by (time, op id). The store's files are that
//! snapshot with those ops carried out one by one by the layout's own rules (the same engine
//! functions the verbs and the hooks use), each with the clock fixed at the op's time and no
//! clone-local liveness marks, so every clone computes the same state.
//!
//! When the sequence only adds ops after what this clone already applied, they are applied in
//! place (logs appended to, as always). When it reorders them (a remote op sorts before one
//! applied here), the store is rebuilt: its files made the snapshot's again, then every op
//! replayed. An op the layout refuses (a claim of a unit another op claimed first, a done by
//! someone who does not hold the unit) is reported as lost, with who won, never dropped in
//! silence; an op that cannot be read, names a store never published, or lies in the future
//! is skipped with one line.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::local::{Applied, State};
use super::op::Op;
use super::remote::Log;
use super::snapshot;
use crate::claims::{self, Owner};
use crate::context::Ctx;
use crate::engine::agent::{self, Acted, Verb};
use crate::env::{self, Env};
use crate::error::{Error, Result};
use crate::layouts::{registry, Input, Layout, StoreRef, Turn};
use crate::project::Project;
use crate::signals::{FinalMessage, SignalKind};

/// Runs a layout command again (`add`, `command` ops): the CLI's own code, given the
/// environment (clock fixed at the op's time) and the arguments as recorded. Returns the exit
/// code and, when it failed, why.
pub type RunCommand<'a> = &'a dyn Fn(Env, &Path, &[String]) -> (u8, String);

/// The layout commands an op may run again (the first two words).
pub const COMMANDS: &[(&str, &[&str])] = &[
    ("projects", &["add", "start", "set", "log"]),
    (
        "iterative",
        &[
            "add",
            "signal",
            "guardrail",
            "set-max",
            "reset",
            "unblock",
            "archive",
        ],
    ),
    ("cdd", &["start", "done", "fail", "escalate", "continue"]),
    (
        "execute",
        &["start", "done", "fail", "merged", "reset-task", "reset"],
    ),
];

/// Whether `args` (`projects add web T3 …`) is a command an op may carry.
pub fn replayable(args: &[String]) -> bool {
    // The project and home are the replaying clone's own, never the log's to choose.
    if args.iter().any(|a| {
        a.starts_with("--project-dir") || a.starts_with("--home") || a.starts_with("--dry-run")
    }) {
        return false;
    }
    match args {
        [group, verb, ..] => COMMANDS
            .iter()
            .any(|(g, verbs)| g == group && verbs.contains(&verb.as_str())),
        _ => false,
    }
}

/// What applying did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applying {
    /// Ops from the remote this clone had not applied before.
    pub ops_in: usize,
    /// Ops carried out.
    pub applied: usize,
    /// Stores rebuilt from their snapshot.
    pub rebuilt: Vec<String>,
    /// Ops the layout refused, with who won.
    pub lost: Vec<String>,
    /// Ops skipped (unreadable, unknown store, in the future).
    pub skipped: Vec<String>,
    /// Expired claims taken over.
    pub takeovers: Vec<String>,
    /// Stores whose ops could not all be applied (an error other than a refusal).
    pub failed: Vec<String>,
    /// What each verb op answered, by op id (the claim's own answer).
    #[serde(skip)]
    pub acted: HashMap<String, Acted>,
    /// Why each refused op was refused, by op id.
    #[serde(skip)]
    pub refused: HashMap<String, String>,
}

enum Replayed {
    Done(Option<Box<Acted>>),
    Lost(String),
    /// The op names something this store does not have: skipped, not a conflict.
    Skipped(String),
}

/// A context at `at` for replaying: its clock fixed there, no session, and Claude Code's
/// folder somewhere empty, so no clone-local liveness mark counts (leases end by their
/// `renewed` time alone, the same on every clone).
pub fn ctx_at(cx: &Ctx, root: &Path, at: &str, replay: bool, dry: bool) -> Result<Ctx> {
    let mut e = cx.env.clone();
    e.set(env::TASKHOOK_NOW, at);
    if replay {
        e.set(env::CLAUDE_CODE_SESSION_ID, "");
        e.set(
            env::CLAUDE_CONFIG_DIR,
            super::local::dir(root).join("no-claude-config"),
        );
        e.set(super::REPLAYING, "1");
    }
    Ctx::new(
        e,
        Some(root.to_path_buf()),
        Some(cx.home.clone()),
        root.to_path_buf(),
        dry,
    )
}

fn verb_of(op: &Op) -> Option<Verb<'_>> {
    Some(match op.kind.as_str() {
        "claim" => Verb::Claim,
        "heartbeat" => Verb::Heartbeat,
        "release" => Verb::Release,
        "done" => Verb::Done(op.text("note")),
        "fail" => Verb::Fail(op.text("reason").unwrap_or("failed")),
        _ => return None,
    })
}

/// The layout and store an op names, as found in this clone.
fn find_store(
    cx: &Ctx,
    project: &Project,
    op: &Op,
) -> Result<Option<(&'static dyn Layout, StoreRef)>> {
    let Some(&layout) = registry().iter().find(|l| l.name() == op.store.layout) else {
        return Ok(None);
    };
    let root = project.root.join(&op.store.path);
    Ok(layout
        .discover(cx, project)?
        .into_iter()
        .find(|s| s.root == root)
        .map(|s| (layout, s)))
}

fn is_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::Rule(_) | Error::NotFound(_) | Error::BadInput(_) | Error::Usage(_)
    )
}

fn replay(cx: &Ctx, root: &Path, op: &Op, run: RunCommand<'_>) -> Result<Replayed> {
    let rcx = ctx_at(cx, root, &op.time, true, false)?;
    let project = rcx.project(None);
    match op.kind.as_str() {
        "add" | "command" => {
            let args: Vec<String> = op
                .fields
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            if !replayable(&args) {
                return Ok(Replayed::Lost(format!(
                    "{} is not a command taskhook runs from the log",
                    args.join(" ")
                )));
            }
            let (code, why) = run(rcx.env.clone(), root, &args);
            Ok(if code == 0 {
                Replayed::Done(None)
            } else {
                Replayed::Lost(why)
            })
        }
        "launch" | "signal" => {
            let Some((layout, store)) = find_store(&rcx, &project, op)? else {
                return Ok(Replayed::Skipped(format!(
                    "store {} is not here",
                    op.store.label()
                )));
            };
            let message = FinalMessage::parse(op.text("text").unwrap_or(""));
            let turn = Turn {
                agent_id: op.text("agent"),
                bound: op
                    .fields
                    .get("bound")
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
                stop_hook_active: false,
                message: &message,
                by_hand: false,
            };
            let input = match (op.kind.as_str(), op.text("signal")) {
                ("launch", _) => Input::Launch,
                (_, Some("DONE")) => Input::Signal(SignalKind::Done, op.text("reason")),
                (_, Some("FAILED")) => Input::Signal(SignalKind::Failed, op.text("reason")),
                (_, Some("BLOCKED")) => Input::Signal(SignalKind::Blocked, op.text("reason")),
                _ => Input::NoSignal,
            };
            if !layout.units(&rcx, &store)?.iter().any(|u| u.id == op.task) {
                return Ok(Replayed::Skipped(format!(
                    "{} has no unit {}",
                    op.store.label(),
                    op.task
                )));
            }
            let step = layout.step(&rcx, &store, &op.task, input, &turn)?;
            if let Some(no) = step.refused {
                return Ok(Replayed::Lost(no));
            }
            if op.kind == "launch" && !op.actor.contains('@') {
                let lease = claims::lease_seconds(&rcx, root);
                claims::update(&rcx, root, |held| {
                    if held
                        .of(store.layout, &store.id, &op.task)
                        .is_some_and(|c| c.owner == op.actor)
                    {
                        return Ok(());
                    }
                    let owner = Owner {
                        id: op.actor.clone(),
                        session: false,
                    };
                    held.put(claims::new_claim(
                        &rcx,
                        lease,
                        &owner,
                        (store.layout, &store.id, &op.task),
                        "launch",
                    ));
                    Ok(())
                })?;
            }
            Ok(Replayed::Done(None))
        }
        _ => {
            let Some(verb) = verb_of(op) else {
                return Ok(Replayed::Skipped(format!("{} cannot be applied", op.kind)));
            };
            match find_store(&rcx, &project, op)? {
                None => {
                    return Ok(Replayed::Skipped(format!(
                        "store {} is not here",
                        op.store.label()
                    )))
                }
                Some((layout, store)) => {
                    if !layout.work(&rcx, &store)?.iter().any(|u| u.id == op.task) {
                        return Ok(Replayed::Skipped(format!(
                            "{} has no unit {}",
                            op.store.label(),
                            op.task
                        )));
                    }
                }
            }
            let owner = Owner {
                id: op.actor.clone(),
                session: false,
            };
            let force = op.fields.get("force").and_then(Value::as_bool) == Some(true);
            let name = agent::reference(&op.store.id, &op.task);
            match agent::act(&rcx, &project, &owner, &name, verb, force) {
                Ok(a) => Ok(Replayed::Done(Some(Box::new(a)))),
                Err(e) if is_refusal(&e) => Ok(Replayed::Lost(e.one_line())),
                Err(e) => Err(e),
            }
        }
    }
}

/// Applies the merged log (`log`'s window, then `queue`'s ops not in it) to every store of
/// the project it names, and records in `state` what this clone now stands on.
pub fn apply(
    cx: &Ctx,
    project: &Project,
    log: &Log,
    queue: &[Op],
    state: &mut State,
    run: RunCommand<'_>,
) -> Applying {
    let root = project.root.as_path();
    let now = cx.store.clock().now();
    let mut out = Applying::default();
    // The merged log, in push order, grouped by store.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut by_store: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
    for op in &log.ops {
        if !seen.insert(op.id.as_str()) {
            continue;
        }
        if op.in_future(now) {
            out.skipped.push(format!(
                "op {} ({}) is dated {}, in the future: skipped until then",
                op.id,
                op.describe(),
                op.time
            ));
            continue;
        }
        by_store.entry(op.store.name()).or_default().push(op);
    }
    for op in queue {
        if seen.insert(op.id.as_str()) {
            by_store.entry(op.store.name()).or_default().push(op);
        }
    }
    for (name, ops) in by_store {
        let Some(p) = ops.iter().rposition(|o| o.kind == "publish") else {
            for op in ops {
                out.skipped.push(format!(
                    "op {} ({}): its store was never published: skipped",
                    op.id,
                    op.describe()
                ));
            }
            continue;
        };
        let base = ops[p];
        let (files, held) = match snapshot::parse(&base.fields) {
            Ok(f) => f,
            Err(e) => {
                out.skipped.push(format!(
                    "the snapshot {} of {}: {e}: the store is left as it is",
                    base.id,
                    base.store.label()
                ));
                continue;
            }
        };
        // Ops pushed before the snapshot that it does not hold were overridden by it.
        let covers: HashSet<&str> = base
            .fields
            .get("covers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let prev = ops[..p].iter().rposition(|o| o.kind == "publish");
        let after_prev = prev.map_or(0, |i| i + 1);
        for op in &ops[after_prev..p] {
            if op.kind != "publish" && !covers.contains(op.id.as_str()) && op.kind != "heartbeat" {
                out.lost.push(format!(
                    "lost: {} ({}): the store was published again by {} without it",
                    op.describe(),
                    op.id,
                    base.who()
                ));
            }
        }
        let mut tail: Vec<&Op> = ops[p + 1..]
            .iter()
            .copied()
            .filter(|o| o.kind != "publish")
            .collect();
        // The order ops apply in: time, then id (the same on every machine).
        tail.sort_by_cached_key(|o| (o.at(), o.id.clone()));
        let tail_ids: Vec<&str> = tail.iter().map(|o| o.id.as_str()).collect();
        // What this clone has applied: its state, then its queue (applied when made).
        let mut local_base = state.stores.get(&name).and_then(|a| a.base.clone());
        let mut local: Vec<String> = state
            .stores
            .get(&name)
            .map(|a| a.applied.clone())
            .unwrap_or_default();
        let mut had: HashSet<String> = local.iter().cloned().collect();
        for q in queue.iter().filter(|q| q.store.name() == name) {
            if had.contains(&q.id) || local_base.as_deref() == Some(q.id.as_str()) {
                continue;
            }
            if q.kind == "publish" {
                local_base = Some(q.id.clone());
                local.clear();
                had.clear();
            } else {
                local.push(q.id.clone());
                had.insert(q.id.clone());
            }
        }
        let queued: HashSet<&str> = queue.iter().map(|q| q.id.as_str()).collect();
        out.ops_in += std::iter::once(base.id.as_str())
            .chain(tail_ids.iter().copied())
            .filter(|id| {
                !queued.contains(id) && local_base.as_deref() != Some(*id) && !had.contains(*id)
            })
            .count();
        let in_place = local_base.as_deref() == Some(base.id.as_str())
            && local.len() <= tail_ids.len()
            && local.iter().zip(&tail_ids).all(|(a, b)| a == b);
        let start = if in_place {
            local.len()
        } else {
            match snapshot::materialise(cx, root, &base.store, &files, &held) {
                Ok(changed) => {
                    if changed {
                        out.rebuilt.push(base.store.label());
                    }
                }
                Err(e) => {
                    out.failed
                        .push(format!("{}: {}", base.store.label(), e.one_line()));
                    continue;
                }
            }
            0
        };
        let mut done: Vec<String> = tail_ids[..start].iter().map(|s| s.to_string()).collect();
        for op in &tail[start..] {
            match replay(cx, root, op, run) {
                Ok(Replayed::Done(acted)) => {
                    out.applied += 1;
                    if let Some(a) = acted {
                        out.takeovers.extend(
                            a.said
                                .iter()
                                .filter(|l| l.starts_with("took over"))
                                .map(|l| format!("{l} ({})", op.who())),
                        );
                        out.acted.insert(op.id.clone(), *a);
                    }
                }
                Ok(Replayed::Skipped(why)) => {
                    out.skipped
                        .push(format!("op {} ({}): {why}: skipped", op.id, op.describe()));
                    out.refused.insert(op.id.clone(), why);
                }
                Ok(Replayed::Lost(why)) => {
                    out.lost
                        .push(format!("lost: {} ({}): {why}", op.describe(), op.id));
                    out.refused.insert(op.id.clone(), why);
                }
                Err(e) => {
                    out.failed.push(format!(
                        "{}: {} could not be applied: {}",
                        base.store.label(),
                        op.describe(),
                        e.one_line()
                    ));
                    break;
                }
            }
            done.push(op.id.clone());
            state.saw(op.at());
        }
        state.saw(base.at());
        state.stores.insert(
            name,
            Applied {
                store: base.store.clone(),
                base: Some(base.id.clone()),
                applied: done,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_layout_commands_replay() {
        let a = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(replayable(&a("projects add web T3 --title x")));
        assert!(replayable(&a("cdd done foo.md")));
        assert!(!replayable(&a("cdd import plan.json")));
        assert!(!replayable(&a("install --user")));
        assert!(!replayable(&a("projects")));
        assert!(!replayable(&a("projects add web T3 --project-dir /etc")));
        assert!(!replayable(&a("cdd done x --home=/root")));
    }
}
