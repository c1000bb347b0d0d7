//! Seed 001's task lifecycle as one pure step over the state, driven alike by hooks (a launch,
//! a subagent's signal or its stop without one, a commit, a merge) and by `taskhook execute`
//! commands:
//!
//! ```text
//! pending ─► in_progress ─► verifying ─► verified ─► (merging) ─► completed
//!               │  ▲            │
//!               ▼  │            ▼
//!             failed ◄──────────┘   retry below 5 attempts, abandoned at 5
//! ```
//!
//! Every `decision: block` is paid for: a retry by an attempt (at most 5), a verification pass
//! by the attempt it checks, a reminder to signal by the subagent's own count. Claude Code
//! follows at most 8 blocks in a row for one subagent (FINDINGS.md), so each task keeps the
//! count for the subagent working on it (`subagent: {agent_id, blocks}`); the 9th block is never
//! sent: that subagent is let go with the state exact, and the main agent is told to launch a
//! new one, which continues the same attempt count.

use serde_json::{json, Map, Value};

use super::derive::{derive, next_priority};
use super::policy::{may_launch, Hold};
use super::state::{attempts, layer_of, layer_tasks, status, task_mut, MAX_ATTEMPTS};

/// Most blocks Claude Code follows in a row for one subagent.
pub const MAX_BLOCKS: u64 = 8;

/// A failure report: the signal's message, and the final message's `<details>` and
/// `<feedback>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure<'a> {
    pub message: &'a str,
    pub details: Option<&'a str>,
    pub feedback: Option<&'a str>,
}

/// What drives one step of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A subagent bound to the task is launched; its worktree and branch when git has them,
    /// and the agents already bound to the task (remembered earlier), which a launch for a
    /// verification pass does not make verifiers.
    Launch {
        worktree: Option<&'a str>,
        branch: Option<&'a str>,
        bound_before: &'a [String],
    },
    Done,
    Failed(Failure<'a>),
    Blocked(Option<&'a str>),
    /// A bound subagent stopped without a signal for the task.
    NoSignal,
    /// Its branch was merged.
    Merged,
}

/// Who the step came from: whether it can be sent back (`decision: block`), which subagent
/// (for the count of blocks in a row, and who was asked to verify), or a person
/// (`taskhook execute …`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Who<'a> {
    pub bound: bool,
    pub agent: Option<&'a str>,
    pub by_hand: bool,
}

/// What a step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing to do for a task in this status.
    Unchanged,
    /// A launch started attempt `attempt` (or, `resumed`, continues the one running).
    Started { attempt: u64, resumed: bool },
    /// A launch refused ([`super::policy::may_launch`]).
    Denied(Hold),
    /// DONE while in progress: verification asked for (blocked) or waiting for a subagent.
    Verify { attempt: u64 },
    /// DONE while verifying: verified and queued for merge.
    Verified { priority: i64 },
    /// DONE while verifying from a subagent that was not asked for the verification pass:
    /// nothing changes.
    NotVerification { from: Option<String>, why: NotAsked },
    /// FAILED below 5 attempts: the next attempt runs now in the same subagent (blocked), or
    /// the task waits `failed` for a relaunch.
    Retry {
        failed_attempt: u64,
        feedback: String,
        now: bool,
    },
    /// FAILED at the 5th attempt.
    Abandoned { message: String },
    /// A bound subagent stopped without a signal: asked to finish (blocked) or let go.
    Nudge,
    /// A BLOCKED signal: nothing changes; the main agent hears the reason.
    Reported(String),
    /// The task's branch was merged: completed.
    Merged {
        was: String,
        /// A ready task ahead of it in the queue, when it was merged out of order.
        ahead: Option<String>,
    },
}

/// Why a DONE while verifying is not the verification pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAsked {
    /// The pass was asked of another subagent (by the block that asked for it).
    AskedOf(String),
    /// The main agent was asked to launch a verifier, and has not yet.
    NoneLaunched,
    /// The subagent was bound to the task before verification was asked.
    Earlier,
    /// The subagent is not bound to the task.
    Unbound,
}

/// Whether a DONE while verifying is the verification pass that was asked for: from a person
/// (`taskhook execute done`), from the subagent the verification block went to, or from a
/// subagent bound to the task that was launched after the pass was asked for (and not one
/// already working on it then). A task verifying with no record of the request (a state the
/// seed's own skill wrote) takes any DONE, as the seed says.
fn verification_pass(task: &Value, who: Who<'_>) -> Result<(), NotAsked> {
    let v = &task["verification"];
    if who.by_hand || !v.is_object() {
        return Ok(());
    }
    let asked = v["asked"].as_str();
    if asked.is_some() && asked == who.agent {
        return Ok(());
    }
    if !who.bound {
        return Err(NotAsked::Unbound);
    }
    let earlier = v["earlier"]
        .as_array()
        .is_some_and(|e| who.agent.is_some_and(|a| e.iter().any(|x| x == a)));
    match (v["launched"].as_bool().unwrap_or(false), asked) {
        (true, _) if earlier => Err(NotAsked::Earlier),
        (true, _) => Ok(()),
        (false, Some(a)) => Err(NotAsked::AskedOf(a.to_string())),
        (false, None) => Err(NotAsked::NoneLaunched),
    }
}

/// A step's effect and whether it sent the subagent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub effect: Effect,
    /// `decision: block` (counted in `subagent.blocks`).
    pub block: bool,
    /// The subagent would have been sent back but has had its 8 blocks.
    pub limit: bool,
}

impl Outcome {
    fn of(effect: Effect) -> Self {
        Outcome {
            effect,
            block: false,
            limit: false,
        }
    }
}

/// The blocks `agent` has had for this task.
fn blocks_used(task: &Value, agent: Option<&str>) -> u64 {
    let s = &task["subagent"];
    if s.get("agent_id").and_then(Value::as_str) != agent {
        return 0;
    }
    s.get("blocks").and_then(Value::as_u64).unwrap_or(0)
}

/// Records one block for `agent`.
fn count_block(state: &mut Value, id: &str, agent: Option<&str>) {
    let used = super::state::task(state, id).map_or(0, |t| blocks_used(t, agent));
    if let Some(t) = task_mut(state, id) {
        t.insert(
            "subagent".into(),
            json!({"agent_id": agent, "blocks": used + 1}),
        );
    }
}

/// The batch a launch joins: the running batch of its layer when a task of the layer is
/// running, else the next one.
fn batch_for(state: &Value, id: &str) -> Option<u64> {
    let layer = layer_of(state, id)?;
    let others: Vec<String> = layer_tasks(state, &layer)
        .into_iter()
        .filter(|t| t != id)
        .collect();
    let current = (state["current_layer"] == layer.as_str())
        .then(|| state["current_batch"].as_u64())
        .flatten();
    let batch = |t: &String| state["tasks"][t]["batch"].as_u64();
    let running: Vec<&String> = others
        .iter()
        .filter(|t| is_running(status(&state["tasks"][t.as_str()])))
        .collect();
    if !running.is_empty() {
        return running
            .iter()
            .filter_map(|t| batch(t))
            .max()
            .or(current)
            .or(Some(1));
    }
    let last = others.iter().filter_map(batch).max().unwrap_or(0);
    Some(last.max(current.unwrap_or(0)) + 1)
}

/// Moves a pending or failed task into its next attempt; returns the attempt.
fn start(state: &mut Value, id: &str) -> u64 {
    let batch = batch_for(state, id);
    let attempt = super::state::task(state, id).map_or(0, attempts) + 1;
    if let Some(t) = task_mut(state, id) {
        t.insert("attempts".into(), json!(attempt));
        t.insert("status".into(), json!("in_progress"));
        if let Some(b) = batch {
            t.insert("batch".into(), json!(b));
        }
    }
    attempt
}

/// A task no subagent will be sent back on again keeps no block count.
fn forget_subagent(state: &mut Value, id: &str) {
    if let Some(t) = task_mut(state, id) {
        t.shift_remove("subagent");
    }
}

/// A task no longer verifying keeps no record of the verification asked for.
fn forget_verification(state: &mut Value, id: &str) {
    if let Some(t) = task_mut(state, id) {
        t.shift_remove("verification");
    }
}

fn set(state: &mut Value, id: &str, key: &str, v: Value) {
    if let Some(t) = task_mut(state, id) {
        t.insert(key.into(), v);
    }
}

fn record_git(t: &mut Map<String, Value>, worktree: Option<&str>, branch: Option<&str>) {
    for (key, v) in [("worktree_path", worktree), ("branch", branch)] {
        if let Some(v) = v {
            if t.get(key).and_then(Value::as_str) != Some(v) {
                t.insert(key.into(), json!(v));
            }
        }
    }
}

/// Applies one event to task `id`. `now` stamps errors and merges.
pub fn step(state: &mut Value, id: &str, ev: Event<'_>, who: Who<'_>, now: &str) -> Outcome {
    let Some(task) = super::state::task(state, id) else {
        return Outcome::of(Effect::Unchanged);
    };
    let st = status(task).to_string();
    let can_block = who.bound && blocks_used(task, who.agent) < MAX_BLOCKS;
    let limit = who.bound && !can_block;
    let sent_back = |state: &mut Value, effect: Effect| {
        if can_block {
            count_block(state, id, who.agent);
        }
        Outcome {
            effect,
            block: can_block,
            limit,
        }
    };
    match ev {
        Event::Launch {
            worktree,
            branch,
            bound_before,
        } => {
            let mut view = state.clone();
            derive(state, &mut view, now);
            if let Err(hold) = may_launch(&view, id) {
                return Outcome::of(Effect::Denied(hold));
            }
            match st.as_str() {
                "pending" | "failed" | "in_progress" | "verifying" => {
                    let resumed = is_running(&st);
                    let attempt = if resumed {
                        super::state::task(state, id).map_or(0, attempts).max(1)
                    } else {
                        start(state, id)
                    };
                    set(state, id, "attempts", json!(attempt));
                    if let Some(t) = task_mut(state, id) {
                        record_git(t, worktree, branch);
                        if let Some(v) = t.get_mut("verification").and_then(Value::as_object_mut) {
                            // A launch while verifying is the verifier asked for.
                            v.insert("launched".into(), json!(true));
                            v.insert("earlier".into(), json!(bound_before));
                        }
                    }
                    Outcome::of(Effect::Started { attempt, resumed })
                }
                _ => Outcome::of(Effect::Unchanged),
            }
        }
        Event::Done => {
            let st = if matches!(st.as_str(), "pending" | "failed") {
                start(state, id);
                "in_progress".to_string()
            } else {
                st
            };
            let attempt = super::state::task(state, id).map_or(0, attempts).max(1);
            match st.as_str() {
                "in_progress" => {
                    set(state, id, "status", json!("verifying"));
                    let asked = if can_block { who.agent } else { None };
                    set(
                        state,
                        id,
                        "verification",
                        json!({"attempt": attempt, "requested_at": now, "asked": asked, "launched": false}),
                    );
                    sent_back(state, Effect::Verify { attempt })
                }
                "verifying" => {
                    let t = super::state::task(state, id).cloned().unwrap_or_default();
                    if let Err(why) = verification_pass(&t, who) {
                        return Outcome::of(Effect::NotVerification {
                            from: who.agent.map(str::to_string),
                            why,
                        });
                    }
                    set(state, id, "status", json!("verified"));
                    forget_subagent(state, id);
                    forget_verification(state, id);
                    let priority = queue_entry(state, id, "ready");
                    Outcome::of(Effect::Verified { priority })
                }
                _ => Outcome::of(Effect::Unchanged),
            }
        }
        Event::Failed(f) => {
            if matches!(st.as_str(), "pending" | "failed") {
                start(state, id);
            } else if !is_running(&st) {
                return Outcome::of(Effect::Unchanged);
            }
            let n = super::state::task(state, id).map_or(0, attempts).max(1);
            let mut err = json!({"attempt": n, "message": f.message});
            if let Some(d) = f.details {
                err["details"] = json!(d);
            }
            err["timestamp"] = json!(now);
            forget_verification(state, id);
            let Some(t) = task_mut(state, id) else {
                return Outcome::of(Effect::Unchanged);
            };
            crate::layouts::json::array_at(t, "errors").push(err);
            if n >= MAX_ATTEMPTS {
                t.insert("status".into(), json!("abandoned"));
                t.shift_remove("subagent");
                return Outcome::of(Effect::Abandoned {
                    message: f.message.to_string(),
                });
            }
            let feedback = match (f.feedback, f.details) {
                (Some(fb), _) => fb.to_string(),
                (None, Some(d)) => format!("Fix what failed: {} ({d})", f.message),
                (None, None) => format!("Fix what failed: {}", f.message),
            };
            crate::layouts::json::array_at(t, "retry_feedback")
                .push(json!({"attempt": n + 1, "feedback": feedback}));
            if can_block {
                t.insert("attempts".into(), json!(n + 1));
                t.insert("status".into(), json!("in_progress"));
            } else {
                t.insert("status".into(), json!("failed"));
            }
            sent_back(
                state,
                Effect::Retry {
                    failed_attempt: n,
                    feedback,
                    now: can_block,
                },
            )
        }
        Event::Blocked(reason) if is_running(&st) => Outcome::of(Effect::Reported(
            reason.unwrap_or("no reason given").to_string(),
        )),
        Event::NoSignal if is_running(&st) => sent_back(state, Effect::Nudge),
        Event::Blocked(_) | Event::NoSignal => Outcome::of(Effect::Unchanged),
        Event::Merged => {
            if st == "completed" {
                return Outcome::of(Effect::Unchanged);
            }
            set(state, id, "status", json!("completed"));
            set(state, id, "merged_at", json!(now));
            set(state, id, "worktree_path", Value::Null);
            set(state, id, "branch", Value::Null);
            forget_subagent(state, id);
            forget_verification(state, id);
            let mine = queue_entry(state, id, "merged");
            let ahead = state["merge_queue"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["status"] == "ready" && e["task_id"] != id)
                .filter(|e| e["priority"].as_i64().is_some_and(|p| p < mine))
                .min_by_key(|e| e["priority"].as_i64())
                .and_then(|e| e["task_id"].as_str().map(str::to_string));
            Outcome::of(Effect::Merged { was: st, ahead })
        }
    }
}

fn is_running(st: &str) -> bool {
    matches!(st, "in_progress" | "verifying")
}

/// Sets the task's merge-queue entry to `status` (a new entry takes the next priority);
/// returns its priority.
fn queue_entry(state: &mut Value, id: &str, status: &str) -> i64 {
    let root = crate::layouts::json::ensure_object(state);
    let queue = crate::layouts::json::array_at(root, "merge_queue");
    if let Some(e) = queue.iter_mut().find(|e| e["task_id"] == id) {
        e["status"] = json!(status);
        return e["priority"].as_i64().unwrap_or(0);
    }
    let p = next_priority(queue);
    queue.push(json!({"task_id": id, "priority": p, "status": status}));
    p
}

/// Records a commit against task `id` unless a task already has it (hashes compared by
/// prefix): `{hash, type: implementation on attempt 1 else fix, attempt, created_at}`.
/// `attempt` is the attempt it was made in (default: the task's current one).
pub fn record_commit(
    state: &mut Value,
    id: &str,
    hash: &str,
    attempt: Option<u64>,
    created_at: &str,
) -> bool {
    if has_commit(state, hash) {
        return false;
    }
    let Some(current) = super::state::task(state, id).map(attempts) else {
        return false;
    };
    let attempt = attempt.unwrap_or(current.max(1));
    let Some(t) = task_mut(state, id) else {
        return false;
    };
    let kind = if attempt <= 1 {
        "implementation"
    } else {
        "fix"
    };
    crate::layouts::json::array_at(t, "commits").push(json!({
        "hash": hash, "type": kind, "attempt": attempt, "created_at": created_at,
    }));
    true
}

/// Whether any task already records this commit (short and full hashes match by prefix).
pub fn has_commit(state: &Value, hash: &str) -> bool {
    let same = |a: &str| !a.is_empty() && (a.starts_with(hash) || hash.starts_with(a));
    state["tasks"].as_object().is_some_and(|tasks| {
        tasks.values().any(|t| {
            t["commits"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["hash"].as_str().is_some_and(same)))
        })
    })
}

/// Records the worktree and branch a task works in (a commit on `worktree-ID`, recovery).
pub fn record_worktree(state: &mut Value, id: &str, worktree: Option<&str>, branch: Option<&str>) {
    if let Some(t) = task_mut(state, id) {
        record_git(t, worktree, branch);
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
