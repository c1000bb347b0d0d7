//! The Claude Code hook protocol, and nothing else: typed input ([`input`]), the decision JSON
//! ([`output`]), and the exit-code policy ([`Outcome::exit_code`], [`EXIT_ERROR`]).
//!
//! Exit codes (CONTRACT §2): 0 for every handled event, decisions included; 2 only to refuse a
//! TaskCompleted (the one event where Claude Code honours nothing else); 1 with one
//! `taskhook: …` line on stderr for malformed input or an internal failure.

pub mod input;
pub mod output;

use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::Result;
use input::Payload;
use output::HookOutput;

/// Exit code of a handled event.
pub const EXIT_OK: u8 = 0;
/// Exit code of malformed input or an internal failure.
pub const EXIT_ERROR: u8 = 1;
/// Exit code that refuses a TaskCompleted.
pub const EXIT_REFUSE: u8 = 2;

/// What handling one payload produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The decision JSON, when there is something to say.
    pub output: Option<HookOutput>,
    /// A TaskCompleted refusal: exit 2 with this line on stderr.
    pub refusal: Option<String>,
    /// Files created, changed or removed (or that would be, in a dry run).
    pub changed: Vec<PathBuf>,
}

impl Outcome {
    /// The exit code this outcome maps to.
    pub fn exit_code(&self) -> u8 {
        if self.refusal.is_some() {
            EXIT_REFUSE
        } else {
            EXIT_OK
        }
    }
}

/// Parses and handles one payload: the single code path behind both `hook` and `replay`.
/// Returns the event name (when the payload had one) and the outcome.
pub fn run(cx: &Ctx, bytes: &[u8]) -> (Option<String>, Result<Outcome>) {
    match Payload::parse(bytes) {
        Err(e) => (None, Err(e)),
        Ok(p) => run_payload(cx, p),
    }
}

/// Handles an already parsed payload: one invocation, with its own lock deadline.
pub fn run_payload(cx: &Ctx, payload: Payload) -> (Option<String>, Result<Outcome>) {
    let name = payload.name.clone();
    cx.store.begin_invocation();
    let result = crate::engine::handle(cx, &payload)
        .and_then(|out| match cx.store.clock_error() {
            // The handler read a clock TASKHOOK_NOW could not set (it wrote nothing: every
            // write checks the environment first).
            Some(e) => Err(e),
            None => Ok(out),
        })
        .map(|mut out| {
            out.changed = cx.store.take_changed();
            out
        });
    if result.is_err() {
        // Whatever was recorded belongs to the failed payload; do not leak it into the next.
        let _ = cx.store.take_changed();
    }
    (Some(name), result)
}
