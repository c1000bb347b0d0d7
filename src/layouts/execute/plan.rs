//! The seed's resume tree as a plan, computed from the state alone (read-only):
//!
//! ```text
//! find the current layer; completed → skip; abandoned → skip and stop the layer;
//! failed → retry if attempts < 5; in_progress → resume; pending → execute;
//! rebuild the ready queue (merge in priority order)
//! ```
//!
//! The same plan is the SessionStart context, `taskhook execute resume --dry-run` and part of
//! `taskhook execute status`, in the seed's own words ("Continue with remaining 2 tasks",
//! "Retry L2-003 (attempt 4)", "Skip L2-003, stop layer 2-backend").
//!
//! Every task the plan would launch (retry, resume, execute) first passes the launch decision
//! the hook takes ([`super::policy::may_launch`]); a task it holds is listed as held, with why,
//! never as something to launch.

use serde::Serialize;

use super::model::{QueueStatus, RunStatus, State, Task, TaskStatus};
use super::policy::Policy;
use super::state::{layer_of, layer_order, MAX_ATTEMPTS};

/// A task to retry: its next attempt and the feedback for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Retry {
    pub task: String,
    pub attempt: u64,
    pub feedback: Option<String>,
}

/// A task to resume where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resume {
    pub task: String,
    pub status: String,
    pub attempt: u64,
}

/// A task the plan would launch but the launch decision holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    pub task: String,
    /// What launching it would do (`retry, attempt 3 of 5`, `in_progress, attempt 1 of 5`);
    /// `None` for a first start.
    pub next: Option<String>,
    /// Why it is held ([`super::policy::Hold::why`]).
    pub why: String,
}

/// A merge-queue entry waiting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Merge {
    pub task: String,
    pub priority: i64,
    pub status: String,
}

/// A queue entry git has no branch for: nothing to merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmergeable {
    pub task: String,
    pub priority: i64,
    /// The branch it would be merged from.
    pub branch: String,
}

/// What resuming the run means now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The global status.
    pub status: String,
    pub layer: Option<String>,
    /// The current layer's completed and total tasks.
    pub layer_completed: u64,
    pub layer_total: u64,
    /// Completed tasks of the current layer.
    pub skip: Vec<String>,
    /// Abandoned tasks: skipped, and their layer stops.
    pub abandoned: Vec<String>,
    pub retry: Vec<Retry>,
    pub resume: Vec<Resume>,
    pub execute: Vec<String>,
    /// Tasks to retry, resume or execute that may not be launched now.
    pub held: Vec<Held>,
    /// The ready queue, in merge (priority) order.
    pub merge: Vec<Merge>,
    /// Queue entries whose branch git does not have ([`Plan::check_branches`]).
    pub unmergeable: Vec<Unmergeable>,
}

/// The plan for a state (already derived).
pub fn plan(state: &State) -> Plan {
    let order = layer_order(state);
    let layer = state
        .current_layer
        .as_deref()
        .filter(|l| order.iter().any(|o| o == l))
        .map(str::to_string);
    let mut p = Plan {
        status: state.status().as_str().to_string(),
        layer: layer.clone(),
        ..Default::default()
    };
    if let Some(info) = layer.as_deref().and_then(|l| state.layer(l)) {
        p.layer_completed = info.tasks_completed.unwrap_or(0);
        p.layer_total = info.tasks_total.unwrap_or(0);
    }
    let policy = Policy::new(state);
    for (id, t) in state.tasks.iter() {
        let st = t.status();
        let tl = layer_of(state, id);
        // The current layer's tasks, tasks in no layer, and others only when under way.
        let include = tl.is_none()
            || tl == layer
            || !matches!(st, TaskStatus::Pending | TaskStatus::Completed);
        if !include {
            continue;
        }
        let n = t.attempts();
        let next = match st {
            TaskStatus::Completed => {
                p.skip.push(id.to_string());
                continue;
            }
            TaskStatus::Abandoned => {
                p.abandoned.push(id.to_string());
                continue;
            }
            TaskStatus::Failed if n >= MAX_ATTEMPTS => {
                p.abandoned.push(id.to_string());
                continue;
            }
            TaskStatus::Failed => Some(format!("retry, attempt {} of {MAX_ATTEMPTS}", n + 1)),
            TaskStatus::InProgress | TaskStatus::Verifying => {
                Some(format!("{st}, attempt {} of {MAX_ATTEMPTS}", n.max(1)))
            }
            TaskStatus::Pending => None,
            _ => continue,
        };
        if let Err(hold) = policy.may_launch(id) {
            p.held.push(Held {
                task: id.to_string(),
                next,
                why: hold.why(),
            });
            continue;
        }
        match st {
            TaskStatus::Failed => p.retry.push(Retry {
                feedback: t.feedback_for(n + 1).map(str::to_string),
                task: id.to_string(),
                attempt: n + 1,
            }),
            TaskStatus::Pending => p.execute.push(id.to_string()),
            _ => p.resume.push(Resume {
                task: id.to_string(),
                status: st.to_string(),
                attempt: n.max(1),
            }),
        }
    }
    let mut merge: Vec<Merge> = state
        .queue()
        .iter()
        .filter(|e| matches!(e.status, QueueStatus::Ready | QueueStatus::Merging))
        .map(|e| Merge {
            task: e.task_id.clone(),
            priority: e.priority,
            status: e.status.as_str().to_string(),
        })
        .collect();
    merge.sort_by_key(|m| m.priority);
    p.merge = merge;
    p
}

impl Plan {
    /// Takes the queue entries whose branch is not among the branches git has (`names`) out of
    /// the merge order: the plan never says to merge what git cannot.
    pub fn check_branches(&mut self, state: &State, names: &[String]) {
        let names: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
        let blank = Task::default();
        let branch_of = |id: &str| state.task(id).unwrap_or(&blank).branch_of(id);
        let (keep, gone): (Vec<Merge>, Vec<Merge>) = std::mem::take(&mut self.merge)
            .into_iter()
            .partition(|m| names.contains(branch_of(&m.task).as_str()));
        self.merge = keep;
        self.unmergeable = gone
            .into_iter()
            .map(|m| Unmergeable {
                branch: branch_of(&m.task),
                task: m.task,
                priority: m.priority,
            })
            .collect();
    }

    /// The plan for the SessionStart context: [`Plan::lines`] without the tasks to continue,
    /// execute or hold, which the summary already lists (held ones as blocked, with why).
    pub fn context_lines(&self) -> Vec<String> {
        let lists = Plan {
            resume: Vec::new(),
            execute: Vec::new(),
            held: Vec::new(),
            ..self.clone()
        };
        lists.lines()
    }

    /// The held tasks, one line per reason: `Held: L2-005 (retry, attempt 3 of 5), L2-006: why.`
    pub fn held_lines(&self) -> Vec<String> {
        let mut reasons: Vec<&str> = Vec::new();
        for h in &self.held {
            if !reasons.contains(&h.why.as_str()) {
                reasons.push(&h.why);
            }
        }
        reasons
            .into_iter()
            .map(|why| {
                let items: Vec<String> = self
                    .held
                    .iter()
                    .filter(|h| h.why == why)
                    .map(|h| match &h.next {
                        Some(n) => format!("{} ({n})", h.task),
                        None => h.task.clone(),
                    })
                    .collect();
                format!("Held: {}: {why}.", items.join(", "))
            })
            .collect()
    }

    /// The plan in the seed's words, one line each.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.status == RunStatus::Completed.as_str() {
            out.push("The run is completed: every layer is merged.".to_string());
            return out;
        }
        if let Some(l) = &self.layer {
            let left = self.layer_total.saturating_sub(self.layer_completed);
            out.push(format!(
                "Layer {l}: {}/{} completed.",
                self.layer_completed, self.layer_total
            ));
            if self.abandoned.is_empty() && self.status != RunStatus::Stopped.as_str() && left > 0 {
                out.push(format!("Resume: Continue with remaining {left} tasks."));
            }
        }
        if !self.skip.is_empty() {
            out.push(format!("Skip (completed): {}.", self.skip.join(", ")));
        }
        for a in &self.abandoned {
            out.push(match &self.layer {
                Some(l) => format!("Resume: Skip {a}, stop layer {l} ({a} is abandoned after {MAX_ATTEMPTS} attempts; `taskhook execute reset-task {}` gives it fresh attempts).", crate::shell::quote(a)),
                None => format!("Resume: Skip {a} (abandoned after {MAX_ATTEMPTS} attempts)."),
            });
        }
        if self.status == RunStatus::Stopped.as_str() {
            out.push(
                "The run was stopped by the user: `taskhook execute resume` continues it.".into(),
            );
        }
        for r in &self.retry {
            let fb = r
                .feedback
                .as_ref()
                .map(|f| format!("; feedback: {f}"))
                .unwrap_or_default();
            out.push(format!(
                "Resume: Retry {} (attempt {} of {MAX_ATTEMPTS}{fb}).",
                r.task, r.attempt
            ));
        }
        for r in &self.resume {
            out.push(format!(
                "Resume: {} is {} (attempt {} of {MAX_ATTEMPTS}): continue it.",
                r.task, r.status, r.attempt
            ));
        }
        if !self.execute.is_empty() {
            out.push(format!("Execute: {}.", self.execute.join(", ")));
        }
        out.extend(self.held_lines());
        if !self.merge.is_empty() {
            let list: Vec<String> = self
                .merge
                .iter()
                .map(|m| format!("{} (priority {}, {})", m.task, m.priority, m.status))
                .collect();
            out.push(format!("Merge in priority order: {}.", list.join(", ")));
        }
        for u in &self.unmergeable {
            out.push(format!(
                "Cannot merge {t} (priority {}): it is verified, but git has no branch {}. If its work was merged another way (a squash merge, say): `taskhook execute merged {t}`; if the work is lost: `taskhook execute reset-task {t}`.",
                u.priority,
                u.branch,
                t = u.task
            ));
        }
        out
    }
}
