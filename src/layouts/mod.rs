//! The layouts: one per seed format, each behind the [`Layout`] trait and registered in
//! [`registry`]. A layout owns its types, transitions and reconciliation, and reaches the disk
//! only through [`crate::store::Store`].

pub mod claude_tasks;
pub mod iterative;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::hook::input::Payload;
use crate::signals::Signal;

/// One store a layout found: which layout, its id (project id, slug, list id, …) and its root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreRef {
    pub layout: &'static str,
    pub id: String,
    pub root: PathBuf,
}

/// A state file and how to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    pub path: PathBuf,
    pub schema: &'static str,
    /// One JSON value per line (history logs) rather than one document.
    pub json_lines: bool,
}

/// What handling an event in one store produced; the engine merges these into one reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reaction {
    /// Lines for `additionalContext` (never sent on SubagentStop).
    pub context: Vec<String>,
    /// Lines for `systemMessage` (shown to the user).
    pub system: Vec<String>,
    /// Reasons for `decision: block`.
    pub block: Vec<String>,
    /// `continue: false` with this `stopReason`.
    pub halt: Option<String>,
    /// Refuse the event with exit 2 and this stderr line (TaskCompleted only).
    pub refuse: Option<String>,
    /// Extra `hookSpecificOutput` fields (seed 002's `tasks_to_update`).
    pub extra: Map<String, Value>,
}

impl Reaction {
    /// Whether the reaction says nothing.
    pub fn is_empty(&self) -> bool {
        *self == Reaction::default()
    }

    /// Folds another reaction into this one.
    pub fn merge(&mut self, other: Reaction) {
        self.context.extend(other.context);
        self.system.extend(other.system);
        self.block.extend(other.block);
        if self.halt.is_none() {
            self.halt = other.halt;
        }
        if self.refuse.is_none() {
            self.refuse = other.refuse;
        }
        for (k, v) in other.extra {
            match (self.extra.get_mut(&k), v) {
                (Some(Value::Array(a)), Value::Array(b)) => a.extend(b),
                (_, v) => {
                    self.extra.insert(k, v);
                }
            }
        }
    }
}

/// What `taskhook status` shows for one store.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StoreStatus {
    pub layout: &'static str,
    pub id: String,
    pub path: PathBuf,
    /// Units per status.
    pub counts: BTreeMap<String, usize>,
    pub current: Option<String>,
    pub ready: Vec<String>,
    pub stale: Vec<String>,
    pub blocked: Vec<String>,
    pub stops_waiting: Vec<String>,
    /// Problems found (corrupt files, …), one line each.
    pub problems: Vec<String>,
    /// Other facts worth showing (Claude Code's own task files, read-only), one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A unit (task, phase, …) that a `<task>` or `<signal>` name can resolve to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub id: String,
    /// Not done, completed, cancelled, abandoned or archived.
    pub active: bool,
}

/// The subagent turn a signal or an unsignalled stop came from.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    pub agent_id: Option<&'a str>,
    /// Whether the subagent's prompt named this unit.
    pub bound: bool,
    /// SubagentStop's `stop_hook_active` (informational: loops are bounded by the state).
    pub stop_hook_active: bool,
    /// The subagent's final message.
    pub final_text: &'a str,
}

/// A task-state format.
pub trait Layout: Sync {
    /// The layout's name (`claude-tasks`, `iterative`, …).
    fn name(&self) -> &'static str;

    /// Whether `payload` can concern this layout. Pure: no I/O, so events no layout wants cost
    /// nothing beyond parsing.
    fn wants(&self, payload: &Payload) -> bool;

    /// Finds this layout's stores for the project. Cheap: a few stats and folder listings.
    fn discover(&self, cx: &Ctx, project: &Path) -> Result<Vec<StoreRef>>;

    /// Finds the stores an event should reach: by default those [`Layout::discover`] finds. A
    /// layout whose events may create its store (claude-tasks' first TodoWrite) also returns a
    /// store that does not exist yet.
    fn discover_for_event(
        &self,
        cx: &Ctx,
        project: &Path,
        payload: &Payload,
    ) -> Result<Vec<StoreRef>> {
        let _ = payload;
        self.discover(cx, project)
    }

    /// The state files of a store, with their schemas, for `validate`.
    fn state_files(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<StateFile>>;

    /// Summarizes a store for `status`.
    fn status(&self, cx: &Ctx, store: &StoreRef) -> Result<StoreStatus>;

    /// SessionStart work for one store (reconcile, stale detection, clean-up, recovery), and
    /// its summary for the model.
    fn session_start(&self, cx: &Ctx, store: &StoreRef) -> Result<Reaction>;

    /// Handles any other event for one store.
    fn on_event(&self, cx: &Ctx, store: &StoreRef, payload: &Payload) -> Result<Reaction>;

    /// The units of a store, for resolving `<task>` and `<signal>` names (CONTRACT §4).
    fn units(&self, cx: &Ctx, store: &StoreRef) -> Result<Vec<Unit>> {
        let _ = (cx, store);
        Ok(Vec::new())
    }

    /// Applies a signal that resolved to `unit`. Context lines in the reaction are for the
    /// main agent: the engine delivers them at its next PostToolUse, never on SubagentStop.
    fn apply_signal(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        signal: &Signal,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let _ = (cx, store, unit, signal, turn);
        Ok(Reaction::default())
    }

    /// A subagent bound to `unit` stopped without a signal for it.
    fn unsignalled_stop(
        &self,
        cx: &Ctx,
        store: &StoreRef,
        unit: &str,
        turn: &Turn<'_>,
    ) -> Result<Reaction> {
        let _ = (cx, store, unit, turn);
        Ok(Reaction::default())
    }

    /// Restores the store from its newest valid checkpoint; returns what was done.
    fn recover(&self, cx: &Ctx, store: &StoreRef) -> Result<String> {
        let _ = cx;
        Err(Error::Usage(format!(
            "layout {} keeps no checkpoints for {}",
            self.name(),
            store.root.display()
        )))
    }
}

/// Every layout, in a stable order.
pub fn registry() -> &'static [&'static dyn Layout] {
    static REGISTRY: &[&dyn Layout] = &[&iterative::LAYOUT, &claude_tasks::LAYOUT];
    REGISTRY
}
