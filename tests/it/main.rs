//! The one integration test binary: every test drives the real `taskhook` binary (or, for the
//! store's process-level proofs, re-executes this test binary as a child).
#![allow(clippy::disallowed_methods, clippy::print_stderr)]

mod agents;
mod claude_tasks;
mod common;
mod crash;
mod durability;
mod fuzz;
mod hardening;
mod hostile;
mod install;
mod iterative;
mod protocol;
mod replay;
mod schemas;
mod special_files;
mod store;
