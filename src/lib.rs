//! taskhook: a task-state engine for coding agents, run by Claude Code as a hook.
//!
//! - [`hook`]: the Claude Code protocol only (typed input, decision JSON and which event accepts
//!   what, exit codes); it knows no engine and no layout.
//! - [`engine`]: payload → facts → the one reply policy: subagent binding and lifecycle steps,
//!   notices and halts for the main agent, the edit check, store-wide operations.
//! - [`layouts`]: one folder per seed format behind the [`layouts::Layout`] trait.
//! - [`store`]: every byte of I/O (locks, atomic replace, appends, checkpoints, schemas,
//!   bounded reads, the read → decide → lock → write transaction).
//! - [`project`], [`config`], [`context`]: the project a payload is about, its
//!   `.claude/taskhook.json`, and what one invocation knows.
//! - [`signals`], [`shell`], [`graph`]: pure parsers (signals and task tags, shell words) and
//!   dependency graphs shared by the layouts; [`display`]: text from a repository made safe to
//!   show (no control or bidi character raw).
//! - [`install`]: merging taskhook's registrations into Claude Code's `settings.json`.
//! - [`board`]: seeing the work: the board (terminal, text, HTML) and the dependency graph
//!   (DOT, Mermaid, JSON), over one model built from the stores and the claims.
//! - [`sync`]: team sync: an op log on a git ref of the project's remote.
//! - [`cli`]: the clap commands, thin.

pub mod agents;
pub mod board;
pub mod claims;
pub mod cli;
pub mod config;
pub mod context;
pub mod display;
pub mod doctor;
pub mod engine;
pub mod env;
pub mod error;
pub mod fnv;
pub mod graph;
pub mod hook;
pub mod install;
pub mod layouts;
pub mod project;
pub mod shell;
pub mod signals;
pub mod store;
pub mod sync;

pub use error::{Error, Result};
