//! taskhook: a task-state engine for coding agents, run by Claude Code as a hook.
//!
//! - [`hook`]: the Claude Code protocol (typed input, decision JSON, exit codes).
//! - [`graph`]: dependency graphs (unknown ids, cycles, ready and blocked tasks).
//! - [`engine`]: which layouts an event concerns, and merging their reactions into one reply.
//! - [`layouts`]: one module per seed format behind the [`layouts::Layout`] trait.
//! - [`store`]: durable primitives (lock, atomic replace, append-only logs, checkpoints,
//!   schemas, clock, safe ids); the only way to the disk.
//! - [`install`]: merging taskhook's registrations into Claude Code's `settings.json`.
//! - [`cli`]: the clap commands, thin.

pub mod agents;
pub mod cli;
pub mod context;
pub mod engine;
pub mod env;
pub mod error;
pub mod graph;
pub mod hook;
pub mod install;
pub mod layouts;
pub mod signals;
pub mod store;

pub use error::{Error, Result};
