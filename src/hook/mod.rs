//! The Claude Code hook protocol, and nothing else: typed input ([`input`]), the decision JSON
//! and which event accepts which part of it ([`output`]), and the exit-code policy
//! ([`Outcome::exit_code`], [`EXIT_ERROR`]). It knows no layout and no engine: the engine
//! (`crate::engine`) turns payloads into facts and facts into a [`output::Reply`].
//!
//! Exit codes (CONTRACT §2): 0 for every handled event, decisions included; 2 only to refuse a
//! TaskCompleted (the one event where Claude Code honours nothing else); 1 with one
//! `taskhook: …` line on stderr for malformed input or an internal failure.

pub mod input;
pub mod output;

use std::path::PathBuf;

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
