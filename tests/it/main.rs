//! The one integration test binary: every test drives the real `taskhook` binary (or, for the
//! store's process-level proofs, re-executes this test binary as a child).
#![allow(
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod agents;
mod claude_tasks;
mod claude_tasks_rules;
mod claude_tasks_scale;
mod claude_tasks_sessions;
mod common;
mod engine;
mod install;
mod iterative;
mod protocol;
mod replay;
mod schemas;
mod store;
