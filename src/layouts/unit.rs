//! The unit lifecycle every layout follows, in one vocabulary: a subagent stop (with a signal
//! or without) or a launch is an [`Input`]; the layout's pure step turns a unit's state and an
//! input into a new state and a [`Reaction`]: the status reached, the budget left, another pass to
//! ask for, what the main agent and the user should learn. The same step drives live events and
//! rebuilds from a layout's log (`iterative/lifecycle.rs` is the model).
//!
//! A [`Reaction`] is also what a layout answers any other fact with (a commit, a task tool, a
//! Bash call, an edit). Who hears what is decided once, in `engine::reaction` (CONTRACT
//! §4–§5): an `instruction` for another pass becomes `decision: block` only for a subagent
//! bound to the unit; an unbound subagent is never blocked, and the main agent is told
//! instead.

use serde::Serialize;

use crate::signals::{FinalMessage, SignalKind};

/// What drives one step of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input<'a> {
    /// A signal in the subagent's final message, with its reason.
    Signal(SignalKind, Option<&'a str>),
    /// A bound subagent stopped without a signal for the unit.
    NoSignal,
    /// A subagent bound to the unit is about to run (PreToolUse of `Agent`).
    Launch,
}

/// A loop budget: how much of it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub used: u64,
    pub max: u64,
}

/// A halt of the main agent that lasts until a person lifts it (a cdd stop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halt {
    /// What identifies it, to lift it later (`cdd:<workspace>:<stop id>`).
    pub key: String,
    /// The `stopReason` the main agent is halted with.
    pub message: String,
}

/// A task whose status Claude Code's own list should take (seed 002's `tasks_to_update`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskUpdate {
    pub task_id: String,
    pub status: String,
}

/// What a layout answers a fact or a step of a unit with, in its own words: never the wire
/// format. The engine turns it into the event's reply in one place (`engine::reaction`), by
/// who is listening: another pass becomes `decision: block` only for a bound subagent, a
/// refusal becomes what the event honours.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reaction {
    /// The unit's status after the step.
    pub status: Option<String>,
    /// The loop's budget after the step, where the layout counts one.
    pub budget: Option<Budget>,
    /// Another pass the subagent must run now (bounded by the budget): `decision: block` for a
    /// subagent bound to the unit; anyone else is told the main agent must relaunch it.
    pub instruction: Option<String>,
    /// Units the step made ready.
    pub ready: Vec<String>,
    /// Context for the agent whose event this is (`additionalContext`, where the event takes
    /// it).
    pub context: Vec<String>,
    /// Blocks the event with these reasons (`decision: block`: an edit that left a state file
    /// unusable).
    pub block: Vec<String>,
    /// For the main agent, delivered at its next PostToolUse (never on SubagentStop).
    pub tell_main: Vec<String>,
    /// For the user (`systemMessage`).
    pub tell_user: Vec<String>,
    /// The layout refused the input and changed nothing: why. The engine answers it as the
    /// event allows: a launch or a Bash call is denied (PreToolUse), a completion refused
    /// (TaskCompleted's exit 2), an agent's verb fails with it as its one line; a subagent's
    /// signal is answered only by the messages above.
    pub refused: Option<String>,
    /// Halt the main agent until a person lifts it.
    pub halt: Option<Halt>,
    /// Tasks whose status Claude Code's own list should take.
    pub tasks_to_update: Vec<TaskUpdate>,
}

impl Reaction {
    /// A reaction that only refuses, with `why`.
    pub fn refused(why: impl Into<String>) -> Self {
        Reaction {
            refused: Some(why.into()),
            ..Default::default()
        }
    }

    /// A reaction that only says the unit's status after the step.
    pub fn status(status: impl Into<String>) -> Self {
        Reaction {
            status: Some(status.into()),
            ..Default::default()
        }
    }

    /// A reaction that only gives context.
    pub fn context(lines: Vec<String>) -> Self {
        Reaction {
            context: lines,
            ..Default::default()
        }
    }
}

/// The subagent turn a step came from.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    pub agent_id: Option<&'a str>,
    /// Whether the subagent's prompt named this unit.
    pub bound: bool,
    /// SubagentStop's `stop_hook_active` (informational: loops are bounded by the state).
    pub stop_hook_active: bool,
    /// The subagent's final message, parsed once (empty for a launch).
    pub message: &'a FinalMessage,
    /// A person or the unit's owner acting through a command (`taskhook done`), not a
    /// subagent: the step it asks for is the one the layout would take by hand.
    pub by_hand: bool,
}
