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

use super::derive::{derive, next_priority};
use super::model::{
    CommitRecord, ErrorRecord, Feedback, Loose, QueueEntry, QueueStatus, Slot, State, Subagent,
    Task, TaskStatus, Verification,
};
use super::policy::{may_launch, Hold};
use super::state::{layer_of, layer_tasks, MAX_ATTEMPTS};

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
fn verification_pass(task: &Task, who: Who<'_>) -> Result<(), NotAsked> {
    let Some(record) = task.verification.get().filter(|v| v.is_object()) else {
        return Ok(());
    };
    if who.by_hand {
        return Ok(());
    }
    let blank = Verification::default();
    let v = record.typed().unwrap_or(&blank);
    let asked = v.asked.as_deref();
    if asked.is_some() && asked == who.agent {
        return Ok(());
    }
    if !who.bound {
        return Err(NotAsked::Unbound);
    }
    let earlier = v
        .earlier
        .as_ref()
        .is_some_and(|e| who.agent.is_some_and(|a| e.iter().any(|x| x == a)));
    match (v.launched.unwrap_or(false), asked) {
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
fn blocks_used(task: &Task, agent: Option<&str>) -> u64 {
    match &task.subagent {
        Some(s) if s.agent_id.as_deref() == agent => s.blocks,
        _ => 0,
    }
}

/// Records one block for `agent`.
fn count_block(state: &mut State, id: &str, agent: Option<&str>) {
    if let Some(t) = state.task_mut(id) {
        let used = blocks_used(t, agent);
        let mut agent_id = Slot::Absent;
        agent_id.set(agent.map(str::to_string));
        t.subagent = Some(Box::new(Subagent {
            agent_id,
            blocks: used + 1,
            rest: Default::default(),
        }));
    }
}

/// The batch a launch joins: the running batch of its layer when a task of the layer is
/// running, else the next one.
fn batch_for(state: &State, id: &str) -> Option<u64> {
    let layer = layer_of(state, id)?;
    let others: Vec<&Task> = layer_tasks(state, &layer)
        .iter()
        .filter(|t| t.as_str() != id)
        .filter_map(|t| state.task(t))
        .collect();
    let current = (state.current_layer.as_deref() == Some(layer.as_str()))
        .then(|| state.current_batch.get().copied())
        .flatten();
    let running: Vec<&&Task> = others.iter().filter(|t| t.status().is_running()).collect();
    if !running.is_empty() {
        return running
            .iter()
            .filter_map(|t| t.batch)
            .max()
            .or(current)
            .or(Some(1));
    }
    let last = others.iter().filter_map(|t| t.batch).max().unwrap_or(0);
    Some(last.max(current.unwrap_or(0)) + 1)
}

/// Moves a pending or failed task into its next attempt; returns the attempt.
fn start(state: &mut State, id: &str) -> u64 {
    let batch = batch_for(state, id);
    let Some(t) = state.task_mut(id) else {
        return 1;
    };
    let attempt = t.attempts() + 1;
    t.attempts = Some(attempt);
    t.status = Some(TaskStatus::InProgress);
    if let Some(b) = batch {
        t.batch = Some(b);
    }
    attempt
}

fn record_git(t: &mut Task, worktree: Option<&str>, branch: Option<&str>) {
    for (slot, v) in [(&mut t.worktree_path, worktree), (&mut t.branch, branch)] {
        if let Some(v) = v {
            if slot.as_deref() != Some(v) {
                *slot = Slot::Is(v.to_string());
            }
        }
    }
}

/// Applies one event to task `id`. `now` stamps errors and merges.
pub fn step(state: &mut State, id: &str, ev: Event<'_>, who: Who<'_>, now: &str) -> Outcome {
    let Some(task) = state.task(id) else {
        return Outcome::of(Effect::Unchanged);
    };
    let st = task.status();
    let can_block = who.bound && blocks_used(task, who.agent) < MAX_BLOCKS;
    let limit = who.bound && !can_block;
    let sent_back = |state: &mut State, effect: Effect| {
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
            if !(st.starts() || st.is_running()) {
                return Outcome::of(Effect::Unchanged);
            }
            let resumed = st.is_running();
            let attempt = if resumed {
                state.task(id).map_or(0, Task::attempts).max(1)
            } else {
                start(state, id)
            };
            if let Some(t) = state.task_mut(id) {
                t.attempts = Some(attempt);
                record_git(t, worktree, branch);
                if let Slot::Is(v) = &mut t.verification {
                    if let Loose::Typed(v) = &mut **v {
                        // A launch while verifying is the verifier asked for.
                        v.launched = Some(true);
                        v.earlier = Some(bound_before.to_vec());
                    }
                }
            }
            Outcome::of(Effect::Started { attempt, resumed })
        }
        Event::Done => {
            let st = if st.starts() {
                start(state, id);
                TaskStatus::InProgress
            } else {
                st
            };
            let Some(t) = state.task_mut(id) else {
                return Outcome::of(Effect::Unchanged);
            };
            let attempt = t.attempts().max(1);
            match st {
                TaskStatus::InProgress => {
                    t.status = Some(TaskStatus::Verifying);
                    let mut asked = Slot::Absent;
                    asked.set(who.agent.filter(|_| can_block).map(str::to_string));
                    t.verification = Slot::Is(Box::new(Loose::Typed(Verification {
                        attempt: Some(attempt),
                        requested_at: Some(now.to_string()),
                        asked,
                        launched: Some(false),
                        earlier: None,
                        rest: Default::default(),
                    })));
                    sent_back(state, Effect::Verify { attempt })
                }
                TaskStatus::Verifying => {
                    if let Err(why) = verification_pass(t, who) {
                        return Outcome::of(Effect::NotVerification {
                            from: who.agent.map(str::to_string),
                            why,
                        });
                    }
                    t.status = Some(TaskStatus::Verified);
                    t.subagent = None;
                    t.verification = Slot::Absent;
                    let priority = queue_entry(state, id, QueueStatus::Ready);
                    Outcome::of(Effect::Verified { priority })
                }
                _ => Outcome::of(Effect::Unchanged),
            }
        }
        Event::Failed(f) => {
            if st.starts() {
                start(state, id);
            } else if !st.is_running() {
                return Outcome::of(Effect::Unchanged);
            }
            let Some(t) = state.task_mut(id) else {
                return Outcome::of(Effect::Unchanged);
            };
            let n = t.attempts().max(1);
            t.verification = Slot::Absent;
            t.errors.get_or_insert_with(Vec::new).push(ErrorRecord {
                attempt: n,
                message: f.message.to_string(),
                details: f.details.map(str::to_string),
                timestamp: Some(now.to_string()),
                rest: Default::default(),
            });
            if n >= MAX_ATTEMPTS {
                t.status = Some(TaskStatus::Abandoned);
                t.subagent = None;
                return Outcome::of(Effect::Abandoned {
                    message: f.message.to_string(),
                });
            }
            let feedback = match (f.feedback, f.details) {
                (Some(fb), _) => fb.to_string(),
                (None, Some(d)) => format!("Fix what failed: {} ({d})", f.message),
                (None, None) => format!("Fix what failed: {}", f.message),
            };
            t.retry_feedback
                .get_or_insert_with(Vec::new)
                .push(Feedback {
                    attempt: n + 1,
                    feedback: feedback.clone(),
                    rest: Default::default(),
                });
            if can_block {
                t.attempts = Some(n + 1);
                t.status = Some(TaskStatus::InProgress);
            } else {
                t.status = Some(TaskStatus::Failed);
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
        Event::Blocked(reason) if st.is_running() => Outcome::of(Effect::Reported(
            reason.unwrap_or("no reason given").to_string(),
        )),
        Event::NoSignal if st.is_running() => sent_back(state, Effect::Nudge),
        Event::Blocked(_) | Event::NoSignal => Outcome::of(Effect::Unchanged),
        Event::Merged => {
            if st == TaskStatus::Completed {
                return Outcome::of(Effect::Unchanged);
            }
            if let Some(t) = state.task_mut(id) {
                t.status = Some(TaskStatus::Completed);
                t.merged_at = Slot::Is(now.to_string());
                t.worktree_path = Slot::Null;
                t.branch = Slot::Null;
                t.subagent = None;
                t.verification = Slot::Absent;
            }
            let mine = queue_entry(state, id, QueueStatus::Merged);
            let ahead = state
                .queue()
                .iter()
                .filter(|e| e.status == QueueStatus::Ready && e.task_id != id)
                .filter(|e| e.priority < mine)
                .min_by_key(|e| e.priority)
                .map(|e| e.task_id.clone());
            Outcome::of(Effect::Merged {
                was: st.as_str().to_string(),
                ahead,
            })
        }
    }
}

/// Sets the task's merge-queue entry to `status` (a new entry takes the next priority);
/// returns its priority.
fn queue_entry(state: &mut State, id: &str, status: QueueStatus) -> i64 {
    let queue = state.merge_queue.get_or_insert_with(Default::default);
    if let Some(e) = queue.iter_mut().find(|e| e.task_id == id) {
        e.status = status;
        return e.priority;
    }
    let p = next_priority(queue);
    queue.push(QueueEntry {
        task_id: id.to_string(),
        priority: p,
        status,
        rest: Default::default(),
    });
    p
}

/// Records a commit against task `id` unless a task already has it (hashes compared by
/// prefix): `{hash, type: implementation on attempt 1 else fix, attempt, created_at}`.
/// `attempt` is the attempt it was made in (default: the task's current one).
pub fn record_commit(
    state: &mut State,
    id: &str,
    hash: &str,
    attempt: Option<u64>,
    created_at: &str,
) -> bool {
    !has_commit(state, hash) && add_commit(state, id, hash, attempt, created_at)
}

/// [`record_commit`] for a caller that knows no task has the commit yet (git recovery, which
/// asks its index of the recorded hashes): `false` only when there is no task `id`.
pub fn add_commit(
    state: &mut State,
    id: &str,
    hash: &str,
    attempt: Option<u64>,
    created_at: &str,
) -> bool {
    let Some(t) = state.task_mut(id) else {
        return false;
    };
    let attempt = attempt.unwrap_or(t.attempts().max(1));
    let kind = if attempt <= 1 {
        "implementation"
    } else {
        "fix"
    };
    t.commits.get_or_insert_with(Vec::new).push(CommitRecord {
        hash: hash.to_string(),
        kind: Some(kind.to_string()),
        attempt: Some(attempt),
        created_at: Some(created_at.to_string()),
        rest: Default::default(),
    });
    true
}

/// Whether any task already records this commit (short and full hashes match by prefix).
pub fn has_commit(state: &State, hash: &str) -> bool {
    let same = |a: &str| !a.is_empty() && (a.starts_with(hash) || hash.starts_with(a));
    state
        .tasks
        .values()
        .any(|t| t.commits().iter().any(|c| same(&c.hash)))
}

/// Records the worktree and branch a task works in (a commit on `worktree-ID`, recovery).
pub fn record_worktree(state: &mut State, id: &str, worktree: Option<&str>, branch: Option<&str>) {
    if let Some(t) = state.task_mut(id) {
        record_git(t, worktree, branch);
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
